//! PY-5: the Python package (`python/`) tested like the rest. Its own
//! pytest suite runs on both backends against the source tree, loading the
//! cdylib this same cargo invocation built (`support::library`), so the
//! PostgreSQL pass has PostgreSQL support; and, once each, `mypy --strict`
//! over the package, its generator, its tests and the examples (PY-2), and the
//! generator's drift check (the checked-in types are what the operations'
//! declarations say). `.ci/run` also installs the package from the
//! checkout and from its wheel and runs the same suite against those.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::*;

dual_backend!(py_5_the_package_suite_passes);

/// The interpreter with pytest and mypy, or `None` (skip) outside CI.
pub fn package_python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    python::PY_PACKAGE.python(&PYTHON)
}

/// `python` in the repository root with the source tree's package and
/// this build's library; no bytecode left beside the sources.
pub fn python_in_the_tree(python: &Path) -> Command {
    let mut command = Command::new(python);
    command
        .current_dir(root())
        .env("PYTHONPATH", root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("CLARION_LIB", library())
        .env_remove("CLARION_DATABASE_URL");
    command
}

/// PY-1..4: every operation, error code, wait and the testing helpers,
/// through the package, on `db`.
fn py_5_the_package_suite_passes(db: &TestDb) {
    let Some(python) = package_python() else {
        return;
    };
    let output = python_in_the_tree(&python)
        .args([
            "-m",
            "pytest",
            "python/tests",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .env("CLARION_DATABASE_URL", &db.url)
        .output()
        .expect("python runs");
    succeeded(output, "the package's pytest suite");
}

/// PY-2: the package, its generator, its tests, its benchmark and the
/// examples pass `mypy --strict` (python/mypy.ini).
#[test]
fn py_2_mypy_strict_passes() {
    let Some(python) = package_python() else {
        return;
    };
    let output = python_in_the_tree(&python)
        .args(["-m", "mypy", "--config-file", "python/mypy.ini"])
        // Its cache with the build's, out of the working tree.
        .arg("--cache-dir")
        .arg(root().join("target/py-mypy-cache"))
        .args([
            "python/clarion",
            "python/tools",
            "python/tests",
            "python/bench",
            "examples/python",
        ])
        .output()
        .expect("mypy runs");
    succeeded(output, "mypy --strict");
}

/// PY-2: the checked-in types are what the generator makes from the
/// operations' declarations now.
#[test]
fn py_2_generated_types_have_not_drifted() {
    let Some(python) = package_python() else {
        return;
    };
    let output = python_in_the_tree(&python)
        .args(["python/tools/generate.py", "--check"])
        .output()
        .expect("the generator runs");
    succeeded(output, "the generator's --check");
}
