//! Programs outside this test binary: the repository's files, the library
//! cargo built beside it, and this binary re-run as a child process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where cargo put this test binary (`target/<profile>/deps`), beside the
/// cdylib this same cargo invocation built, so its features match the run
/// (PostgreSQL support in the PostgreSQL pass).
pub fn library_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned()
}

/// The cdylib in [`library_dir`], which must exist.
pub fn library() -> PathBuf {
    let library = library_dir().join("libclarion.so");
    assert!(library.exists(), "{} was not built", library.display());
    library
}

/// Asserts that a program succeeded, showing its output if not; prints and
/// returns its stdout.
pub fn succeeded(output: Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// The environment variable that marks a child of [`rerun`]: it holds the
/// name of the one test the child runs.
pub const CHILD_ROLE: &str = "CLARION_TEST_CHILD";

/// Whether this process is a child that [`rerun`] started for `test` (a
/// function of the module whose `module_path!()` is `module`).
pub fn is_child(module: &str, test: &str) -> bool {
    std::env::var(CHILD_ROLE).as_deref() == Ok(test_name(module, test).as_str())
}

/// This test binary as a child process that runs exactly one test, `test`
/// of the module whose `module_path!()` is `module`, with output shown and
/// [`CHILD_ROLE`] set. Callers add the child's own environment.
///
/// The child tests are ignored tests, so a run never counts them as passing
/// tests; `--ignored` is what lets the child run its one.
pub fn rerun(module: &str, test: &str) -> Command {
    let name = test_name(module, test);
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            &name,
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ROLE, &name);
    command
}

/// The libtest name of `test` in `module`: the module path without the
/// crate name, e.g. `crash::crash_child`.
fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{test}"),
        None => test.to_owned(),
    }
}

/// Whether this run is CI: any non-empty `CI` other than `false` or `0`
/// (CI services set `true`, `1`, or their own name). Under CI a missing
/// PostgreSQL, browser or tool fails a test instead of skipping it, and
/// nothing committed (rendered SQL, the header) is ever rewritten.
pub fn under_ci() -> bool {
    ci_value_means_ci(std::env::var("CI").ok().as_deref())
}

/// [`under_ci`] for a given value of `CI`.
pub fn ci_value_means_ci(value: Option<&str>) -> bool {
    value.is_some_and(|ci| !ci.is_empty() && ci != "false" && ci != "0")
}

/// Whether a bless variable (`CLARION_BLESS_SQL`, `CLARION_BLESS_HEADER`)
/// asks to rewrite committed files: never under CI, where the committed
/// copy is the contract.
pub fn bless(variable: &str) -> bool {
    std::env::var(variable).as_deref() == Ok("1") && !under_ci()
}

#[test]
fn ci_detection_takes_any_non_empty_value_but_false_and_zero() {
    for value in ["true", "1", "yes", "github-actions"] {
        assert!(ci_value_means_ci(Some(value)), "{value}");
    }
    for value in [None, Some(""), Some("false"), Some("0")] {
        assert!(!ci_value_means_ci(value), "{value:?}");
    }
}

/// Kills process `pid` (SIGKILL) after `after`, so a child that never
/// reports makes its test fail instead of hang.
pub fn kill_after(pid: u32, after: std::time::Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    });
}

/// Answers `pending_id` from another OS process (`clarion answer`) and
/// returns when that process has exited.
pub fn answer_from_another_process(url: &str, pending_id: &str, text: &str) -> Instant {
    let output = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args([
            "answer",
            pending_id,
            "--database-url",
            url,
            "--as",
            "user:alice",
            "--answers",
        ])
        .arg(format!(
            r#"[{{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"{text}"}}]"#
        ))
        .output()
        .unwrap();
    let exited = Instant::now();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    exited
}
