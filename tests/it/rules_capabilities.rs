//! AUTH-2: the whole capability matrix, pinned as a reviewed snapshot. A
//! change to who may do what shows up as a diff of `snapshots/`.

use clarion::has_capability;
use clarion::{Grant, Operation, Principal};

use crate::support::snapshot_settings;

fn principals() -> Vec<(&'static str, Principal)> {
    vec![
        ("system", Principal::System),
        ("user", Principal::user("u")),
        ("agent", Principal::agent("u", "a", [])),
        (
            "agent+read",
            Principal::agent("u", "a", [Grant::QuestionsRead]),
        ),
        (
            "agent+answer",
            Principal::agent("u", "a", [Grant::QuestionsAnswer]),
        ),
        ("agent+both", Principal::agent("u", "a", Grant::ALL)),
        ("unclassified", Principal::Unclassified),
    ]
}

fn matrix() -> String {
    let principals = principals();
    let mut out = format!("{:<26}", "operation");
    for (name, _) in &principals {
        out.push_str(&format!(" {name:<12}"));
    }
    out = out.trim_end().to_owned();
    out.push('\n');
    for operation in Operation::all() {
        let mut line = format!("{:<26}", operation.as_str());
        for (_, principal) in &principals {
            let cell = if has_capability(principal, operation) {
                "yes"
            } else {
                "-"
            };
            line.push_str(&format!(" {cell:<12}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn auth_2_capability_matrix() {
    snapshot_settings().bind(|| insta::assert_snapshot!("capability_matrix", matrix()));
}

#[test]
fn auth_2_unclassified_may_do_nothing_but_ask_authorize() {
    for operation in Operation::all() {
        assert_eq!(
            has_capability(&Principal::Unclassified, operation),
            operation == Operation::Authorize,
            "{operation}"
        );
    }
}

#[test]
fn auth_2_operation_names_round_trip() {
    for operation in Operation::all() {
        assert_eq!(Operation::parse(operation.as_str()), Some(operation));
    }
    assert_eq!(Operation::parse("drop_tables"), None);
}
