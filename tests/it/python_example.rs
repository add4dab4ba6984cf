//! PY-5: the example program, `examples/python/ask_and_wait.py`, asks
//! through the Python package (the source tree's, with the cdylib this
//! cargo invocation built) and is answered by a person in `clarion
//! serve`'s page, in headless Chromium, on both backends: it prints the
//! pending id, the page lists that bundle, an option is chosen and sent,
//! and the program prints the outcome and the option's label and exits 0.
//! Under CI=true a missing browser or Python venv fails.

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::python_package::{package_python, python_in_the_tree};
use crate::support::browser::browser;
use crate::support::server::serve;
use crate::support::*;
use crate::web_inbox_support::{backend, open, option_box, stored};

dual_backend!(py_5_the_example_is_answered_in_the_browser);

/// Only a net for a test that dies without waiting for the example (whose
/// own wait gives up after two minutes).
const EXAMPLE_NET: Duration = Duration::from_secs(300);

fn py_5_the_example_is_answered_in_the_browser(db: &TestDb) {
    let Some(python) = package_python() else {
        return;
    };
    let Some(browser) = browser() else { return };
    let served = serve(&db.url, &["--open-as", "user:alice"]);
    let errors = tempfile::NamedTempFile::new().unwrap();
    let mut example = python_in_the_tree(&python)
        .arg("examples/python/ask_and_wait.py")
        .arg(&db.url)
        .stdout(Stdio::piped())
        .stderr(errors.reopen().unwrap())
        .spawn()
        .expect("start the example");
    kill_after(example.id(), EXAMPLE_NET);
    let said = |what: &str| {
        let stderr = std::fs::read_to_string(errors.path()).unwrap_or_default();
        format!("{what}; the example's stderr:\n{stderr}")
    };
    let mut stdout = BufReader::new(example.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let pending = line
        .trim_end()
        .strip_prefix("pending ")
        .unwrap_or_else(|| panic!("{}", said(&format!("not a pending line: {line:?}"))))
        .to_owned();

    // alice, the workspace's owner, answers in the page: the second option.
    browser.goto(&served.url("/"));
    browser.wait_visible("#inbox");
    open(&browser, &pending);
    browser.click(&option_box(1, 2));
    browser.screenshot(&format!("python-example-{}", backend(db)));
    browser.click("#submit");
    browser.wait_visible("#settled");

    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let status = example.wait().unwrap();
    assert!(status.success(), "{}", said(&format!("{status}: {rest}")));
    assert_eq!(
        rest,
        "outcome answered\nchose Wait until Monday\n",
        "{}",
        said("the output")
    );
    let stored = stored(db, &pending);
    assert_eq!(stored["status"], "answered");
    assert_eq!(
        stored["response"]["answers"],
        json!([{"question_id": "ship", "selected_options": ["monday"], "custom_text": ""}])
    );
}
