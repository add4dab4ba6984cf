//! WIRE-5 from outside Rust, on both backends: the Python ctypes suite
//! (`tests/ffi/test_ctypes.py`) and a C program compiled against the
//! committed header (`tests/ffi/smoke.c`), both loading the cdylib that
//! this same cargo invocation built (`support::library`).

use std::process::Command;

use crate::support::*;

dual_backend!(
    wire_5_python_ctypes_suite,
    wire_5_c_program_against_the_header,
    rel_7_close_under_load_in_valgrind
);

/// WIRE-5, REL-1, REL-3: every operation and error class, hostile
/// input, and 32 Python threads racing one bundle through the ABI.
fn wire_5_python_ctypes_suite(db: &TestDb) {
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
fn wire_5_c_program_against_the_header(db: &TestDb) {
    let build = tempfile::tempdir().unwrap();
    let program = compile_c(&build, "smoke.c");
    let output = run_c(&program).arg(&db.url).output().unwrap();
    succeeded(output, "the C program");
}

/// REL-7: `clarion_close` while four C threads are inside
/// `clarion_call` (two blocked in a 30 s wait): every wait returns 503
/// at once, later calls get 503, and valgrind finds no use of freed
/// memory. Under CI a missing valgrind is a failure.
fn rel_7_close_under_load_in_valgrind(db: &TestDb) {
    let Some(valgrind) = valgrind() else {
        return;
    };
    let build = tempfile::tempdir().unwrap();
    let program = compile_c(&build, "close_under_load.c");
    let mut command = run_c(&valgrind);
    command
        .args(["--error-exitcode=99", "--leak-check=no", "--quiet"])
        .arg(&program)
        .arg(&db.url);
    succeeded(command.output().unwrap(), "close under load, in valgrind");
}

/// Compiles `tests/ffi/<source>` against the committed header and links it
/// to the library this cargo invocation built.
fn compile_c(build: &tempfile::TempDir, source: &str) -> std::path::PathBuf {
    let library = library();
    let dir = library.parent().unwrap();
    let program = build.path().join(source.trim_end_matches(".c"));
    let compiled = Command::new("cc")
        .args([
            "-std=c11",
            "-D_POSIX_C_SOURCE=200809L",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
            "-o",
        ])
        .arg(&program)
        .arg(root().join("tests/ffi").join(source))
        .arg("-I")
        .arg(root().join("include"))
        .arg("-L")
        .arg(dir)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-lclarion")
        .output()
        .expect("cc runs");
    succeeded(compiled, &format!("compiling {source}"));
    program
}

/// A command for a compiled C program (or a tool running one). cargo's
/// LD_LIBRARY_PATH also lists target/<profile>, whose copy of the library
/// may come from another build; it outranks the rpath, so it is narrowed.
fn run_c(program: &std::path::Path) -> Command {
    let mut command = Command::new(program);
    command.env("LD_LIBRARY_PATH", library().parent().unwrap());
    command
}

/// valgrind, or `None` (skip) outside CI when it is not installed.
fn valgrind() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("valgrind"))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        assert!(
            !under_ci(),
            "valgrind is missing under CI (.ci/run installs it)"
        );
        eprintln!("skipping the valgrind run: valgrind is not installed");
    }
    found
}
