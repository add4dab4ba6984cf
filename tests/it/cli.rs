//! OPS-1: the operator command line, every command and its errors, on both
//! backends. JSON output is the WIRE-5 reply; exit codes are distinct per
//! outcome class.

use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::support::*;

fn clarion(db: &TestDb, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(args)
        .args(["--database-url", &db.url])
        .output()
        .unwrap()
}

/// Exit code and the JSON reply on stdout.
fn reply(output: &Output) -> (i32, Value) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap(), value)
}

fn cli(db: &TestDb, args: &[&str]) -> (i32, Value) {
    reply(&clarion(db, args))
}

const QUESTIONS: &str = r#"[{"title":"Go?","prompt":"Ship it?","options":[{"label":"Yes","description":"ship"},{"label":"No","description":"wait"}]}]"#;
const ANSWER: &str =
    r#"[{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"ship it"}]"#;

fn ask_by_cli(db: &TestDb, session: &str) -> String {
    let (code, body) = cli(
        db,
        &[
            "ask",
            session,
            "--questions",
            QUESTIONS,
            "--context",
            "release",
        ],
    );
    assert_eq!((code, body["status"].clone()), (0, json!(200)), "{body}");
    body["body"]["pending_id"].as_str().unwrap().to_owned()
}

dual_backend!(
    ops_1_every_command,
    ops_1_errors_and_exit_codes,
    ops_1b_ask_with_a_deadline,
    aud_3_attempts_on_the_command_line
);

/// AUD-3: `clarion attempts <id>` lists the ledger (here two answers
/// through the command line: `cli` won, then lost); another user gets
/// the not-found exit code.
fn aud_3_attempts_on_the_command_line(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_by_cli(db, &session);
    for _ in 0..2 {
        let (code, _) = cli(
            db,
            &["answer", &id, "--answers", ANSWER, "--as", "user:alice"],
        );
        assert_eq!(code, 0);
    }
    let (code, body) = cli(db, &["attempts", &id, "--as", "user:alice"]);
    assert_eq!(code, 0, "{body}");
    let entries = body["body"]["attempts"].as_array().unwrap();
    let seen: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["channel"].as_str().unwrap(),
                e["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [("cli", "won"), ("cli", "lost")]);
    let (code, _) = cli(db, &["attempts", &id, "--as", "user:bob"]);
    assert_eq!(code, 3);
}

/// OPS-1, EXP-1: `clarion ask --expires-in AGE --on-expire JSON` asks with
/// a relative deadline (the process's own clock: `expires_at` is
/// `created_at` plus the age, exactly) and a default; `--expires-at`
/// takes an instant, and a refused one is the 400's exit code.
fn ops_1b_ask_with_a_deadline(db: &TestDb) {
    let session = mirror(db, "cli", "alice");
    let (code, body) = cli(
        db,
        &[
            "ask",
            &session,
            "--questions",
            QUESTIONS,
            "--expires-in",
            "90s",
            "--on-expire",
            r#"{"action":"reject","reject_reason":" too late "}"#,
        ],
    );
    assert_eq!((code, body["status"].clone()), (0, json!(200)), "{body}");
    let id = body["body"]["pending_id"].as_str().unwrap();
    let detail = db.get_bundle(&clarion::Principal::System, id).unwrap();
    let created = detail.bundle.created_at.as_micros();
    assert_eq!(
        detail.bundle.expires_at.map(|at| at.as_micros() - created),
        Some(90_000_000)
    );
    assert_eq!(detail.bundle.on_expire, clarion::ExpiryAction::Reject);
    assert_eq!(detail.default_response.unwrap().reject_reason, "too late");

    let (code, refused) = cli(
        db,
        &[
            "ask",
            &session,
            "--questions",
            QUESTIONS,
            "--expires-at",
            "2000-01-01T00:00:00Z",
        ],
    );
    assert_eq!(refused["status"], json!(400), "{refused}");
    assert_ne!(code, 0);
    assert!(
        refused["body"]["error"]
            .as_str()
            .is_some_and(|m| m.starts_with("expires_at:")),
        "{refused}"
    );
}

/// ask, list, get, answer (won and lost), reject, cancel, summary and
/// deliveries (list and acknowledge), in JSON and in text.
fn ops_1_every_command(db: &TestDb) {
    let session = mirror(db, "cli", "alice");
    let pending_id = ask_by_cli(db, &session);
    let (_, again) = cli(
        db,
        &[
            "ask",
            &session,
            "--questions",
            QUESTIONS,
            "--idempotency-key",
            "k",
        ],
    );
    assert_eq!(again["body"]["created"], json!(true));

    let (code, page) = cli(db, &["list", "--as", "user:alice", "--limit", "1"]);
    assert_eq!(code, 0);
    assert_eq!(page["body"]["count"], json!(1));
    assert!(!page["body"]["next_cursor"].as_str().unwrap().is_empty());
    let cursor = page["body"]["next_cursor"].as_str().unwrap().to_owned();
    let (_, next) = cli(db, &["list", "--as", "user:alice", "--cursor", &cursor]);
    assert_eq!(next["body"]["count"], json!(1));
    let text = clarion(db, &["list", "--as", "user:alice", "--text"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with("2 bundles waiting, oldest first\n")
            && text.contains(&format!(
                "Bundle {pending_id} (question): waiting for an answer"
            ))
            && text.contains("    - Yes: ship (option id q1_opt1)"),
        "{text}"
    );

    let (code, detail) = cli(db, &["get", &pending_id, "--as", "user:alice"]);
    assert_eq!(
        (code, detail["body"]["status"].clone()),
        (0, json!("pending"))
    );

    let (code, won) = cli(
        db,
        &[
            "answer",
            &pending_id,
            "--as",
            "user:alice",
            "--answers",
            ANSWER,
        ],
    );
    assert_eq!(
        (code, won["body"]["claimed"].clone()),
        (0, json!(true)),
        "{won}"
    );
    let (code, lost) = cli(
        db,
        &[
            "reject",
            &pending_id,
            "--as",
            "agent:alice/bot:questions:answer",
            "--reason",
            "late",
        ],
    );
    assert_eq!((code, lost["body"]["claimed"].clone()), (0, json!(false)));
    assert_eq!(lost["body"]["response"], won["body"]["response"]);
    let text = clarion(db, &["get", &pending_id, "--as", "user:alice", "--text"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("(question): answered\n")
            && text.contains("Answered by you at ")
            && text.contains("  Go?: Yes (\"ship it\")"),
        "{text}"
    );

    let second = ask_by_cli(db, &session);
    let (code, rejected) = cli(
        db,
        &[
            "reject",
            &second,
            "--as",
            "user:alice",
            "--reason",
            "not now",
        ],
    );
    assert_eq!(
        (code, rejected["body"]["status"].clone()),
        (0, json!("rejected"))
    );
    assert_eq!(
        rejected["body"]["response"]["reject_reason"],
        json!("not now")
    );

    let third = ask_by_cli(db, &session);
    let (code, cancelled) = cli(db, &["cancel", &third]);
    assert_eq!(
        (code, cancelled["body"]["status"].clone()),
        (0, json!("cancelled"))
    );

    let (code, summary) = cli(db, &["summary", "--as", "user:alice"]);
    assert_eq!(
        (code, summary["body"]["pending_bundles"].clone()),
        (0, json!(1))
    );
    let text = clarion(db, &["summary", "--as", "user:alice", "--text"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with("1 bundle waiting, 1 question; the oldest asked "),
        "{text}"
    );

    // The outbox: a detached agent's answer waits there until acknowledged.
    db.detach_session(&session).unwrap();
    let (_, keyed) = cli(
        db,
        &[
            "ask",
            &session,
            "--questions",
            QUESTIONS,
            "--idempotency-key",
            "k",
        ],
    );
    let waiting = keyed["body"]["pending_id"].as_str().unwrap().to_owned();
    cli(db, &["answer", &waiting, "--answers", ANSWER]);
    let (code, outbox) = cli(db, &["deliveries"]);
    assert_eq!(code, 0);
    let ids: Vec<&str> = outbox["body"]["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["pending_id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&waiting.as_str()), "{outbox}");
    let (code, acked) = cli(db, &["ack", &waiting]);
    assert_eq!((code, acked["body"].clone()), (0, json!({"ok": true})));
    let (_, outbox) = cli(db, &["deliveries", "--limit", "200"]);
    assert!(!outbox.to_string().contains(&waiting));
}

/// Errors: distinct exit codes for not-found (3), conflict (4),
/// validation (5) and denial (6); a database that cannot be opened (1);
/// a malformed principal is a usage error (2).
fn ops_1_errors_and_exit_codes(db: &TestDb) {
    let session = mirror(db, "cli", "alice");
    let pending_id = ask_by_cli(db, &session);
    let (code, body) = cli(db, &["get", &pending_id, "--as", "user:mallory"]);
    assert_eq!(
        (code, body),
        (
            3,
            json!({"status": 404, "body": {"error": "clarification request not found"}, "code": "not_found", "field": ""})
        )
    );
    let (code, body) = cli(
        db,
        &[
            "answer",
            &pending_id,
            "--as",
            "user:alice",
            "--answers",
            "[]",
        ],
    );
    assert_eq!((code, body["status"].clone()), (5, json!(400)));
    let (code, body) = cli(
        db,
        &[
            "cancel",
            &pending_id,
            "--as",
            "agent:alice/bot:questions:read,questions:answer",
        ],
    );
    assert_eq!(
        (code, body["body"]["code"].clone()),
        (6, json!("capability_denied"))
    );
    let (code, _) = cli(
        db,
        &[
            "ask",
            &session,
            "--as",
            "user:alice",
            "--questions",
            QUESTIONS,
        ],
    );
    assert_eq!(code, 6, "ask is a host operation");
    let (code, body) = cli(db, &["list", "--as", "user:alice", "--since", "last week"]);
    assert_eq!(
        (
            code,
            body["body"]["error"]
                .as_str()
                .unwrap()
                .starts_with("created_since:")
        ),
        (5, true)
    );
    db.begin_turn(&session).unwrap();
    let (code, body) = cli(db, &["answer", &pending_id, "--answers", ANSWER]);
    assert_eq!(
        (code, body["body"].clone()),
        (
            4,
            json!({"error": "clarification request is no longer active"})
        )
    );

    let bad_json = clarion(db, &["answer", &pending_id, "--answers", "not json"]);
    assert_eq!(bad_json.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&bad_json.stderr).contains("--answers is not valid JSON"));
    let text = clarion(db, &["get", "pending-none", "--as", "user:alice", "--text"]);
    assert_eq!(text.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&text.stderr).contains("clarification request not found (404)"));
    let usage = clarion(db, &["list", "--as", "root"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("unknown principal"));
}

dual_backend!(ops_1_text_escapes_control_characters);

/// `--text` never prints agent-written control characters raw: an
/// escape sequence or a forged line in a prompt shows escaped.
fn ops_1_text_escapes_control_characters(db: &TestDb) {
    let session = mirror(db, "t", "alice");
    let mut request = ask_request(&session, 1);
    request.questions[0].prompt = "red \u{1b}[31malert\nforged line\u{7}".to_owned();
    request.context = "tab\there".to_owned();
    let pending_id = db.ask(&request).unwrap().pending_id;
    for args in [
        vec!["list", "--as", "user:alice", "--text"],
        vec!["get", pending_id.as_str(), "--as", "user:alice", "--text"],
    ] {
        let output = clarion(db, &args);
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\t'),
            "{text:?}"
        );
        assert!(
            text.contains(r"red \u{1b}[31malert\nforged line\u{7}"),
            "{text}"
        );
        assert!(text.contains(r"Context: tab\there"), "{text}");
        assert!(
            !text.lines().any(|line| line.starts_with("forged line")),
            "{text}"
        );
    }
}

dual_backend!(rel_8_prune_from_the_command_line);

/// REL-8 from the shell: `clarion prune --older-than 30d` answers
/// `{"pruned": n}`; an age without a unit is a usage error (exit 2).
fn rel_8_prune_from_the_command_line(db: &TestDb) {
    let session = mirror(db, "p", "alice");
    ask(db, &session, 1);
    db.begin_turn(&session).unwrap();
    let (code, kept) = cli(db, &["prune", "--older-than", "30d"]);
    assert_eq!((code, kept["body"].clone()), (0, json!({"pruned": 0})));
    let (code, pruned) = cli(db, &["prune", "--older-than", "0ms"]);
    assert_eq!(
        (code, pruned["body"].clone()),
        (0, json!({"pruned": 1})),
        "superseded at the test clock's epoch, long ago"
    );
    let usage = clarion(db, &["prune", "--older-than", "30"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("needs a unit"));
}

#[test]
fn ops_1_unopenable_database_is_exit_1_with_the_cause() {
    let output = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["summary", "--database-url", "mysql://db/x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("invalid database URL"), "{stderr}");
}
