//! OPS-1b: `clarion ask` mirrors what it is told exactly as `clarion mcp
//! --ask-in` does, prints the ids an answer names, waits as the asking
//! agent with distinct exit codes; every command takes `--json` or
//! `--text`, never both; `clarion history` lists what was decided;
//! `clarion serve` listens where `CLARION_LISTEN` says.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use clarion::{ListRequest, Principal, SessionState};
use serde_json::{json, Value};

use crate::support::*;

const SINGLE: &str = r#"[{"question_id":"ship","title":"Ship it?","prompt":"Ship now?","multi_select":false,"options":[{"option_id":"yes","label":"Yes, ship","description":"go"},{"option_id":"no","label":"Not yet","description":"wait"}]}]"#;

fn run(db: &TestDb, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(args)
        .args(["--database-url", &db.url])
        .env_remove("CLARION_DATABASE_URL")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

/// Starts `clarion ask … --wait AGE` in the background; its stdout lines
/// are read as they come.
struct Asking {
    child: std::process::Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Asking {
    fn start(db: &TestDb, args: &[&str]) -> Asking {
        let mut child = Command::new(env!("CARGO_BIN_EXE_clarion"))
            .args(args)
            .args(["--database-url", &db.url])
            .env_remove("CLARION_DATABASE_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        kill_after(child.id(), Duration::from_secs(120));
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Asking { child, lines }
    }

    fn line(&mut self) -> String {
        self.lines.next().expect("a line").expect("readable")
    }

    /// The rest of the output and the exit code.
    fn finish(mut self) -> (Vec<String>, i32) {
        let rest = self.lines.by_ref().map(Result::unwrap).collect();
        (rest, self.child.wait().unwrap().code().unwrap_or(-1))
    }
}

dual_backend!(
    ops_1b_ask_mirrors_task_workspace_owner,
    ops_1b_ask_text_prints_ids,
    ops_1b_ask_wait_exit_codes_0_4_7,
    ops_1b_ask_wait_prints_the_outcome_as_json,
    ops_1b_json_and_text_together_exit_2,
    ops_1b_history_in_json_and_text,
    ops_1b_clarion_listen,
    ops_1b_ask_and_mcp_name_the_task_and_workspace
);

/// OPS-1b, LIFE-12: `--task-title` and `--workspace-name` (on `clarion
/// ask` and on `clarion mcp --ask-in`, one set of flags) name what they
/// mirror, so the inbox shows names; a later ask without them keeps them.
fn ops_1b_ask_and_mcp_name_the_task_and_workspace(db: &TestDb) {
    let asked = run(
        db,
        &[
            "ask",
            "s-rel",
            "--task",
            "t-rel",
            "--task-title",
            "Release 4.2",
            "--workspace",
            "w-me",
            "--workspace-name",
            "My projects",
            "--owner",
            "me",
            "--questions",
            SINGLE,
        ],
    );
    assert_eq!(code(&asked), 0, "{asked:?}");
    let names = |db: &TestDb| {
        let page = db
            .list_pending(&Principal::user("me"), &ListRequest::default())
            .unwrap();
        page.bundles
            .iter()
            .map(|bundle| (bundle.task_title.clone(), bundle.workspace_name.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(db),
        [("Release 4.2".to_owned(), "My projects".to_owned())]
    );
    let again = run(
        db,
        &["ask", "s-rel", "--task", "t-rel", "--questions", SINGLE],
    );
    assert_eq!(code(&again), 0, "{again:?}");
    assert!(names(db)
        .iter()
        .all(|names| names == &("Release 4.2".to_owned(), "My projects".to_owned())));

    // The MCP asking server mirrors before it serves: its client may leave
    // at once.
    let mcp = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args([
            "mcp",
            "--ask-in",
            "s-other",
            "--task",
            "t-other",
            "--task-title",
            "Docs",
            "--workspace",
            "w-me",
            "--workspace-name",
            "Renamed",
            "--database-url",
            &db.url,
        ])
        .env_remove("CLARION_DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(mcp.status.code(), Some(2), "{mcp:?}");
    db.ask(&ask_request("s-other", 1)).unwrap();
    let mut names = names(db);
    names.sort();
    assert_eq!(
        names,
        [
            ("Docs".to_owned(), "Renamed".to_owned()),
            ("Release 4.2".to_owned(), "Renamed".to_owned()),
            ("Release 4.2".to_owned(), "Renamed".to_owned()),
        ]
    );
}

/// OPS-1b, MCPA-1: `--task` mirrors the task and the session on it,
/// `--workspace` and `--owner` the workspace first, so its owner sees the
/// question; `--owner` needs `--workspace` and `--workspace` needs `--task`
/// (usage errors, exit 2); without `--task` an unknown session is the
/// `404` (exit 3).
fn ops_1b_ask_mirrors_task_workspace_owner(db: &TestDb) {
    let asked = run(
        db,
        &[
            "ask",
            "s-new",
            "--task",
            "t-new",
            "--workspace",
            "w-new",
            "--owner",
            "me",
            "--questions",
            SINGLE,
        ],
    );
    assert_eq!(code(&asked), 0, "{asked:?}");
    let reply: Value = serde_json::from_str(stdout(&asked).trim()).unwrap();
    let id = reply["body"]["pending_id"].as_str().unwrap().to_owned();
    let page = db
        .list_pending(&Principal::user("me"), &ListRequest::default())
        .unwrap();
    assert_eq!(page.bundles.len(), 1);
    assert_eq!(page.bundles[0].pending_id, id);
    assert_eq!(
        (
            page.bundles[0].task_id.as_str(),
            page.bundles[0].workspace_id.as_str()
        ),
        ("t-new", "w-new")
    );
    assert!(db
        .list_pending(&Principal::user("you"), &ListRequest::default())
        .unwrap()
        .bundles
        .is_empty());
    // Asking again on the same task keeps what is there (no new turn).
    let again = run(
        db,
        &["ask", "s-new", "--task", "t-new", "--questions", SINGLE],
    );
    assert_eq!(code(&again), 0, "{again:?}");
    assert_eq!(
        db.list_pending(&Principal::user("me"), &ListRequest::default())
            .unwrap()
            .bundles
            .len(),
        2
    );
    for usage in [
        vec!["ask", "s-x", "--owner", "me", "--questions", SINGLE],
        vec!["ask", "s-x", "--workspace", "w", "--questions", SINGLE],
        vec![
            "ask",
            "s-x",
            "--task",
            "t",
            "--owner",
            "me",
            "--questions",
            SINGLE,
        ],
    ] {
        let refused = run(db, &usage);
        assert_eq!(code(&refused), 2, "{usage:?}: {refused:?}");
    }
    let unknown = run(db, &["ask", "s-unknown", "--questions", SINGLE]);
    assert_eq!(code(&unknown), 3, "{unknown:?}");
    let reply: Value = serde_json::from_str(stdout(&unknown).trim()).unwrap();
    assert_eq!(
        reply,
        json!({"status": 404, "body": {"error": "session not found"}, "code": "not_found", "field": ""})
    );
}

/// OPS-1b: `clarion ask --text` prints the `pending_id`, then each
/// question's id with its option ids and labels, one per line.
fn ops_1b_ask_text_prints_ids(db: &TestDb) {
    let output = run(
        db,
        &[
            "ask",
            "s-1",
            "--task",
            "t-1",
            "--questions",
            SINGLE,
            "--text",
        ],
    );
    assert_eq!(code(&output), 0, "{output:?}");
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    let id = db
        .list_pending(&Principal::System, &ListRequest::default())
        .unwrap()
        .bundles[0]
        .pending_id
        .clone();
    assert_eq!(
        lines,
        [
            format!("{id} (asked)").as_str(),
            "  ship: Ship it? (choose one)",
            "      yes  Yes, ship",
            "      no  Not yet",
        ]
    );
}

/// OPS-1b, WAIT-1: `--wait AGE` waits as the asking agent: exit 0 once
/// answered (the answer in words, with the options' labels), 4 when the
/// session ends (expired), 7 when the caller's own timeout passes — which
/// detaches the bundle, so a later answer reaches the outbox.
fn ops_1b_ask_wait_exit_codes_0_4_7(db: &TestDb) {
    let mut asking = Asking::start(
        db,
        &[
            "ask",
            "s-1",
            "--task",
            "t-1",
            "--workspace",
            "w-1",
            "--owner",
            "me",
            "--questions",
            SINGLE,
            "--text",
            "--wait",
            "2m",
        ],
    );
    let id = asking.line().split(' ').next().unwrap().to_owned();
    assert_eq!(asking.line(), "  ship: Ship it? (choose one)");
    asking.line();
    asking.line();
    assert_eq!(asking.line(), "waiting up to 2 min for the answer…");
    let late_lunch = answering(vec![answer("ship", &["no"], "after lunch")]);
    db.resolve_bundle(&Principal::user("me"), &id, &late_lunch)
        .unwrap();
    let (rest, status) = asking.finish();
    assert_eq!(status, 0);
    assert_eq!(
        rest,
        [r#"answered by a person: Ship it?: Not yet ("after lunch")"#]
    );

    let mut asking = Asking::start(
        db,
        &[
            "ask",
            "s-1",
            "--questions",
            SINGLE,
            "--text",
            "--wait",
            "2m",
        ],
    );
    asking.line();
    for _ in 0..4 {
        asking.line();
    }
    db.set_session_state("s-1", SessionState::Completed)
        .unwrap();
    let (rest, status) = asking.finish();
    assert_eq!(status, 4, "{rest:?}");
    assert!(rest[0].starts_with("expired"), "{rest:?}");

    db.set_session_state("s-1", SessionState::Running).unwrap();
    let timed_out = run(
        db,
        &["ask", "s-1", "--questions", SINGLE, "--wait", "300ms"],
    );
    assert_eq!(code(&timed_out), 7, "{timed_out:?}");
    let text = stdout(&timed_out);
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let id = lines[0]["body"]["pending_id"].as_str().unwrap().to_owned();
    assert_eq!(
        lines[1],
        json!({"status": 200, "body": {"outcome": "timed_out", "response": null}, "code": "", "field": ""})
    );
    // The caller's own timeout detached it: a later answer is delivered
    // through the outbox.
    db.resolve_bundle(
        &Principal::user("me"),
        &id,
        &answering(vec![answer("ship", &["yes"], "")]),
    )
    .unwrap();
    assert!(outbox(db).contains(&id));
}

/// OPS-1b: as JSON, `--wait` prints a second reply line, the `wait`
/// reply (WIRE-5), after the ask's.
fn ops_1b_ask_wait_prints_the_outcome_as_json(db: &TestDb) {
    let mut asking = Asking::start(
        db,
        &[
            "ask",
            "s-1",
            "--task",
            "t-1",
            "--questions",
            SINGLE,
            "--wait",
            "2m",
        ],
    );
    let asked: Value = serde_json::from_str(&asking.line()).unwrap();
    assert_eq!(asked["status"], json!(200));
    let id = asked["body"]["pending_id"].as_str().unwrap();
    db.resolve_bundle(&Principal::System, id, &rejecting(" not now "))
        .unwrap();
    let (rest, status) = asking.finish();
    assert_eq!(status, 0);
    let waited: Value = serde_json::from_str(&rest[0]).unwrap();
    assert_eq!(waited["status"], json!(200));
    assert_eq!(waited["body"]["outcome"], json!("rejected"));
    assert_eq!(
        waited["body"]["response"]["reject_reason"],
        json!("not now")
    );
    assert_eq!(waited["body"]["response"]["decided_by"], json!("system"));
}

/// OPS-1b: `--json` and `--text` on every command; both at once is a
/// usage error (exit 2) and does nothing.
fn ops_1b_json_and_text_together_exit_2(db: &TestDb) {
    for command in [
        vec!["list"],
        vec!["history"],
        vec!["summary"],
        vec!["ask", "s-1", "--task", "t-1", "--questions", SINGLE],
    ] {
        let mut both = command.clone();
        both.extend(["--json", "--text"]);
        let refused = run(db, &both);
        assert_eq!(code(&refused), 2, "{both:?}: {refused:?}");
        assert!(stdout(&refused).is_empty());
        let mut json = command.clone();
        json.push("--json");
        let reply = run(db, &json);
        assert_eq!(code(&reply), 0, "{json:?}: {reply:?}");
        assert!(serde_json::from_str::<Value>(stdout(&reply).lines().next().unwrap()).is_ok());
    }
    assert_eq!(
        db.list_pending(&Principal::System, &ListRequest::default())
            .unwrap()
            .bundles
            .len(),
        1,
        "the refused ask asked nothing"
    );
}

/// OPS-1b, LIST-12: `clarion history` as JSON (the WIRE-5 reply) and as
/// text (outcome, who — "you" for the caller's own — when, labels).
fn ops_1b_history_in_json_and_text(db: &TestDb) {
    let session = mirror(db, "h", "alice");
    let id = ask(db, &session, 1);
    db.resolve_bundle(
        &alice(),
        &id,
        &answering(vec![answer("q1", &["q1_opt2"], "no")]),
    )
    .unwrap();
    let json_out = run(db, &["history", "--as", "user:alice", "--json"]);
    let reply: Value = serde_json::from_str(stdout(&json_out).trim()).unwrap();
    assert_eq!(reply["body"]["bundles"][0]["pending_id"], json!(id));
    let text = stdout(&run(db, &["history", "--as", "user:alice", "--text"]));
    assert!(
        text.starts_with("1 settled bundle, newest first\n"),
        "{text}"
    );
    assert!(text.contains("Answered by you at "), "{text}");
    assert!(text.contains("  About question 1?: No (\"no\")"), "{text}");
    let bob = stdout(&run(db, &["history", "--as", "user:bob", "--text"]));
    assert_eq!(bob, "0 settled bundles, newest first\n");
}

/// OPS-1b, HTTP-8: without `--listen`, `clarion serve` listens where
/// `CLARION_LISTEN` says.
fn ops_1b_clarion_listen(db: &TestDb) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["serve", "--database-url", &db.url, "--open-as", "user:me"])
        .env("CLARION_LISTEN", "127.0.0.1:0")
        .env_remove("CLARION_DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    kill_after(child.id(), Duration::from_secs(60));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let base = line
        .trim_end()
        .strip_prefix("listening on http://127.0.0.1:");
    assert!(
        base.is_some_and(|port| port.parse::<u16>().is_ok_and(|port| port != 0)),
        "{line:?}"
    );
}
