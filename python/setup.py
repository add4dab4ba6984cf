"""PY-1: builds the clarion library with cargo and bundles it in the package.

The library is a plain C ABI (no Python C API), loaded by ctypes by its
platform's ordinary name, so it is copied in as `clarion/libclarion.so`
(`libclarion.dylib`, `clarion.dll`) rather than as an extension module,
and one wheel per platform serves every CPython 3 (`py3-none-<platform>`).
The rest of the metadata is in pyproject.toml.

`SETUPTOOLS_RUST_CARGO_PROFILE` builds with another cargo profile than
release (CI uses it to save time); users get release.
"""

import glob
import os
import shutil
import sys

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools_rust import Binding, RustExtension
from setuptools_rust.build import build_rust


def library_file() -> str:
    if sys.platform == "darwin":
        return "libclarion.dylib"
    if sys.platform == "win32":
        return "clarion.dll"
    return "libclarion.so"


class BuildLibrary(build_rust):  # type: ignore[misc]
    # Where build_ext would put an extension module, under the name ctypes
    # looks for instead of the interpreter-specific suffix.
    def get_dylib_ext_path(self, ext: RustExtension, target_fname: str) -> str:
        path: str = super().get_dylib_ext_path(ext, target_fname)
        return os.path.join(os.path.dirname(path), library_file())


class PlatformWheel(bdist_wheel):
    # Nothing in the wheel depends on the interpreter's ABI, only on the
    # platform the library was compiled for.
    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


# setuptools' scratch directories go beside cargo's, out of the checkout;
# its copies of the package are made afresh, so that a module deleted from
# the sources is not shipped from an earlier build.
SCRATCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "py-build")
for stale in glob.glob(os.path.join(SCRATCH, "lib*")):
    shutil.rmtree(stale)
os.makedirs(SCRATCH, exist_ok=True)

setup(
    rust_extensions=[
        RustExtension(
            "clarion.libclarion",
            path="../Cargo.toml",
            binding=Binding.NoBinding,
            # The library alone: no command-line program, no HTTP door;
            # PostgreSQL support, which links the system's libpq.
            args=["--no-default-features"],
            features=["postgres"],
        )
    ],
    cmdclass={"build_rust": BuildLibrary, "bdist_wheel": PlatformWheel},
    options={"build": {"build_base": SCRATCH}, "egg_info": {"egg_base": SCRATCH}},
)
