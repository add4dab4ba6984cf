//! WIRE-5 from outside Rust, on both backends: the Python ctypes suite
//! (`tests/ffi/test_ctypes.py`) and a C program compiled against the
//! committed header (`tests/ffi/smoke.c`), both loading the cdylib that
//! this same cargo invocation built (`support::library`).

use std::process::Command;

use crate::support::*;

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
        succeeded(output, "the ctypes suite");
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
        succeeded(compiled, "compiling smoke.c");
        // cargo's LD_LIBRARY_PATH also lists target/<profile>, whose copy of
        // the library may come from another build; it outranks the rpath.
        let output = Command::new(&program)
            .arg(&db.url)
            .env("LD_LIBRARY_PATH", dir)
            .output()
            .unwrap();
        succeeded(output, "the C program");
    }
}
