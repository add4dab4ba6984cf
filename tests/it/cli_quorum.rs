//! QUO-1 on the command line: `clarion ask --quorum N [--quorum-rejections
//! M] [--eligible U,U] [--requested-by U]` builds `ask`'s `quorum`, the
//! other three flags need `--quorum`, the operation's refusals come back as
//! they are, and `--text` says what a quorum needs and where a vote stands.

use std::process::{Command, Output};

use clarion::{ListRequest, Principal};
use serde_json::{json, Value};

use crate::support::*;

pub const SINGLE: &str = r#"[{"question_id":"target","title":"Target","prompt":"Where first?","multi_select":false,"options":[{"option_id":"staging","label":"Staging","description":"try it"},{"option_id":"production","label":"Production","description":"ship it"}]}]"#;
const STAGING: &str = r#"[{"question_id":"target","selected_options":["staging"]}]"#;

fn run(db: &TestDb, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(args)
        .args(["--database-url", &db.url])
        .env_remove("CLARION_DATABASE_URL")
        .output()
        .unwrap()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

/// The JSON reply on stdout.
pub fn reply(output: &Output) -> Value {
    serde_json::from_str(stdout(output).trim())
        .unwrap_or_else(|error| panic!("not JSON ({error}): {output:?}"))
}

/// `clarion ask` on `s-rel`, mirroring alice's workspace with bob, carol
/// and dave as members, with `flags` added.
fn ask(db: &TestDb, flags: &[&str]) -> Output {
    let mut args = vec![
        "ask",
        "s-rel",
        "--task",
        "t-rel",
        "--workspace",
        "w-ops",
        "--owner",
        "alice",
        "--members",
        "bob,carol,dave",
        "--questions",
        SINGLE,
    ];
    args.extend_from_slice(flags);
    run(db, &args)
}

dual_backend!(
    quo_1_cli_asks_for_a_quorum,
    quo_1_cli_quorum_flags_need_quorum,
    quo_1_cli_refusals_are_the_operations
);

/// QUO-1, QUO-3, QUO-5: the flags make `ask`'s `quorum`, which the stored
/// bundle shows; `--text` says what it needs; a vote reads as recorded
/// with how many more are needed, and the deciding one names the quorum.
fn quo_1_cli_asks_for_a_quorum(db: &TestDb) {
    let asked = ask(
        db,
        &[
            "--quorum",
            "2",
            "--quorum-rejections",
            "2",
            "--eligible",
            "alice, bob,carol,dave",
            "--requested-by",
            "dave",
        ],
    );
    assert_eq!(code(&asked), 0, "{asked:?}");
    let id = reply(&asked)["body"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let got = run(db, &["get", &id]);
    assert_eq!(code(&got), 0, "{got:?}");
    assert_eq!(
        reply(&got)["body"]["quorum"],
        json!({
            "approvals": 2,
            "rejections": 2,
            "eligible": ["alice", "bob", "carol", "dave"],
            "requested_by": "dave",
            "votes": [],
        })
    );

    // Without the quorum flags, no quorum; `--quorum` alone takes the
    // defaults.
    let plain = ask(db, &[]);
    let plain_id = reply(&plain)["body"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        reply(&run(db, &["get", &plain_id]))["body"]["quorum"],
        Value::Null
    );
    let alone = ask(db, &["--quorum", "3"]);
    let alone_id = reply(&alone)["body"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        reply(&run(db, &["get", &alone_id]))["body"]["quorum"],
        json!({"approvals": 3, "rejections": 1, "eligible": [], "requested_by": "", "votes": []})
    );

    // `--text`: what the quorum needs, beside the ids an answer names.
    let text = ask(
        db,
        &["--quorum", "2", "--eligible", "alice,bob,carol", "--text"],
    );
    assert_eq!(code(&text), 0, "{text:?}");
    let shown = stdout(&text);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[1..],
        [
            "  Needs 2 identical approvals from alice, bob and carol; one rejection decides",
            "  target: Target (choose one)",
            "      staging  Staging",
            "      production  Production",
        ],
        "{shown}"
    );
    let voted_on = lines[0].split(' ').next().unwrap().to_owned();

    // A vote: recorded, one more needed; the second identical one decides.
    let first = run(
        db,
        &[
            "answer",
            &voted_on,
            "--as",
            "user:alice",
            "--answers",
            STAGING,
            "--text",
        ],
    );
    assert_eq!(code(&first), 0, "{first:?}");
    assert_eq!(
        stdout(&first).lines().take(2).collect::<Vec<_>>(),
        [
            format!("Vote recorded on bundle {voted_on}; 1 more needed").as_str(),
            "  Your vote: Target: Staging",
        ]
    );
    let second = run(
        db,
        &[
            "answer",
            &voted_on,
            "--as",
            "user:bob",
            "--answers",
            STAGING,
        ],
    );
    assert_eq!(code(&second), 0, "{second:?}");
    let second = reply(&second)["body"].clone();
    assert_eq!(
        (
            &second["claimed"],
            &second["response"]["decided_by"],
            &second["response"]["voters"]
        ),
        (&json!(true), &json!("quorum"), &json!(["alice", "bob"]))
    );
    let late = run(
        db,
        &[
            "answer",
            &voted_on,
            "--as",
            "user:carol",
            "--answers",
            STAGING,
            "--text",
        ],
    );
    assert_eq!(code(&late), 0, "{late:?}");
    assert!(
        stdout(&late).contains("Answered by a quorum of alice and bob at"),
        "{}",
        stdout(&late)
    );
    // `get --text`: the policy, then each vote (carol's came too late to
    // be one: a replay), the deciding ones marked.
    let shown = stdout(&run(
        db,
        &["get", &voted_on, "--as", "user:carol", "--text"],
    ));
    assert!(
        shown.contains(
            "\n  Quorum of 2 identical approvals from alice, bob and carol, or one rejection\n"
        ),
        "{shown}"
    );
    let votes: Vec<&str> = shown
        .lines()
        .filter(|line| line.starts_with("    ") && line.contains(" approved "))
        .collect();
    assert_eq!(votes.len(), 2, "{shown}");
    for (vote, voter) in votes.iter().zip(["alice", "bob"]) {
        assert!(
            vote.starts_with(&format!("    {voter} approved "))
                && vote.ends_with(": Target: Staging (decided)"),
            "{shown}"
        );
    }
}

/// QUO-1: `--quorum-rejections`, `--eligible` and `--requested-by` without
/// `--quorum` are usage errors: exit 2, the reason on stderr, nothing
/// asked.
fn quo_1_cli_quorum_flags_need_quorum(db: &TestDb) {
    for flags in [
        ["--quorum-rejections", "2"],
        ["--eligible", "alice,bob"],
        ["--requested-by", "dave"],
    ] {
        let output = ask(db, &flags);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(code(&output), 2, "{flags:?}: {output:?}");
        assert!(stderr.contains("--quorum <N>"), "{flags:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{flags:?}: {output:?}");
    }
    let nothing = run(db, &["list", "--as", "user:alice"]);
    assert_eq!(reply(&nothing)["body"]["count"], json!(0));
}

/// QUO-1: the operation checks the quorum the flags build, and its refusal
/// is the reply: a duplicate eligible user is a `400` naming it (exit 5),
/// as is an unreachable number of approvals.
fn quo_1_cli_refusals_are_the_operations(db: &TestDb) {
    let duplicate = ask(db, &["--quorum", "2", "--eligible", "alice,alice"]);
    assert_eq!(code(&duplicate), 5, "{duplicate:?}");
    let body = reply(&duplicate);
    assert_eq!(body["status"], json!(400));
    assert!(
        body["body"]["error"]
            .as_str()
            .unwrap()
            .starts_with("quorum.eligible[1]:"),
        "{body}"
    );
    let unreachable = ask(
        db,
        &[
            "--quorum",
            "3",
            "--eligible",
            "alice,bob,dave",
            "--requested-by",
            "dave",
        ],
    );
    assert_eq!(code(&unreachable), 5, "{unreachable:?}");
    assert!(
        reply(&unreachable)["body"]["error"]
            .as_str()
            .unwrap()
            .starts_with("quorum.approvals:"),
        "{unreachable:?}"
    );
    assert!(db
        .list_pending(&Principal::System, &ListRequest::default())
        .unwrap()
        .bundles
        .is_empty());
}
