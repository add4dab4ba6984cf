//! The C ABI's C and Python examples (`docs/c-abi.md`, linked from the
//! README) are complete programs: this test extracts them, builds the C
//! one against the committed header, and runs both against the library on
//! each backend; and the README's Python block, through the package.

use std::process::Command;

use crate::support::*;

/// Where the examples live.
const EXAMPLES: &str = "docs/c-abi.md";

/// The fenced block of `language` in [`EXAMPLES`] that contains `marker`.
fn example(language: &str, marker: &str) -> String {
    let readme = std::fs::read_to_string(root().join(EXAMPLES)).unwrap();
    let fence = format!("```{language}\n");
    readme
        .split(&fence)
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap().to_owned())
        .find(|block| block.contains(marker))
        .unwrap_or_else(|| panic!("no {language} example containing {marker:?} in {EXAMPLES}"))
}

dual_backend!(
    readme_c_example_compiles_and_runs,
    readme_python_example_runs,
    py_5_the_readme_python_quickstart_runs
);

fn readme_c_example_compiles_and_runs(db: &TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("example.c");
    std::fs::write(&source, example("c", "int main")).unwrap();
    let program = dir.path().join("example");
    let libs = library_dir();
    succeeded(
        Command::new("cc")
            .args(["-std=c11", "-Wall", "-Werror", "-o"])
            .arg(&program)
            .arg(&source)
            .arg("-I")
            .arg(root().join("include"))
            .arg("-L")
            .arg(&libs)
            .arg("-lclarion")
            .output()
            .unwrap(),
        "compiling the C example of docs/c-abi.md",
    );
    let stdout = succeeded(
        Command::new(&program)
            .arg(&db.url)
            .env("LD_LIBRARY_PATH", &libs)
            .output()
            .unwrap(),
        "the C example of docs/c-abi.md",
    );
    assert!(
        stdout.contains(r#"-> {"status":200,"body":{"bundles":[{"pending_id""#),
        "{stdout}"
    );
}

fn readme_python_example_runs(db: &TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("example.py");
    std::fs::write(&script, example("python", "ctypes.CDLL")).unwrap();
    let stdout = succeeded(
        Command::new("python3")
            .arg(&script)
            .env("CLARION_LIB", library_dir().join("libclarion.so"))
            .env("CLARION_DATABASE_URL", &db.url)
            .output()
            .unwrap(),
        "the Python example of docs/c-abi.md",
    );
    assert!(stdout.starts_with("200 True [{'question_id': 'q1', 'selected_options': ['q1_opt2'], 'custom_text': 'navy, please'}]"), "{stdout}");
}

/// PY-5: the README's "Using it from Python" block, run as written with
/// the package from `python/` on the library this suite built; the one
/// change is its database URL, the test's.
fn py_5_the_readme_python_quickstart_runs(db: &TestDb) {
    let readme = crate::readme_run::readme();
    let block = crate::readme_run::fenced(&readme, "python-quickstart", "python");
    let written = "\"sqlite://clarion.db\"";
    assert!(block.contains(written), "{block}");
    let block = block.replace(written, &format!("{:?}", db.url));
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("quickstart.py");
    std::fs::write(&script, block).unwrap();
    let stdout = succeeded(
        Command::new("python3")
            .arg(&script)
            .current_dir(dir.path())
            .env("PYTHONPATH", root().join("python"))
            .env("CLARION_LIB", library_dir().join("libclarion.so"))
            .output()
            .unwrap(),
        "the README's Python block",
    );
    assert_eq!(stdout.trim(), "answered ['q1_opt1']", "{stdout}");
}
