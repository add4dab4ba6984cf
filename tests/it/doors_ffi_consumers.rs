//! WIRE-5 from outside Rust, on both backends: the Python ctypes suite
//! (`tests/ffi/test_ctypes.py`) and a C program compiled against the
//! committed header (`tests/ffi/smoke.c`), both loading the cdylib that
//! this same cargo invocation built.

use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(unused_imports)]
use crate::support::*;

/// The cdylib built beside this test binary (`target/<profile>/deps`), so
/// its features match the run (PostgreSQL support in the PostgreSQL pass).
fn library() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    let library = deps.join("libclarion.so");
    assert!(library.exists(), "{} was not built", library.display());
    library
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn check(output: std::process::Output, what: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}\n{stderr}"
    );
}

dual_backend! {
    /// WIRE-5, REL-1, REL-3: every operation and error class, hostile
    /// input, and 32 Python threads racing one bundle through the ABI.
    fn wire_5_python_ctypes_suite(db) {
        let output = Command::new("python3")
            .arg(root().join("tests/ffi/test_ctypes.py"))
            .env("CLARION_LIB", library())
            .env("CLARION_DATABASE_URL", &db.url)
            .output()
            .expect("python3 runs");
        check(output, "the ctypes suite");
    }

    /// WIRE-5: a C program compiled against include/clarion.h and linked
    /// to the library.
    fn wire_5_c_program_against_the_header(db) {
        let library = library();
        let dir = library.parent().unwrap();
        let build = tempfile::tempdir().unwrap();
        let program = build.path().join("smoke");
        let compiled = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&program)
            .arg(root().join("tests/ffi/smoke.c"))
            .arg("-I")
            .arg(root().join("include"))
            .arg("-L")
            .arg(dir)
            .arg(format!("-Wl,-rpath,{}", dir.display()))
            .arg("-lclarion")
            .output()
            .expect("cc runs");
        check(compiled, "compiling smoke.c");
        // cargo's LD_LIBRARY_PATH also lists target/<profile>, whose copy of
        // the library may come from another build; it outranks the rpath.
        let output = Command::new(&program)
            .arg(&db.url)
            .env("LD_LIBRARY_PATH", dir)
            .output()
            .unwrap();
        check(output, "the C program");
    }
}
