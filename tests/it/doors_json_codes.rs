//! WIRE-5's reply words: every reply of the JSON door (and so of the C
//! ABI) is `{"status", "body", "code", "field"}`, `code` the error's
//! WIRE-4 word (`""` on a success) and `field` a 400's field path (`""`
//! otherwise), one code per error a caller can meet through the door;
//! and `wait {detach_on_timeout: false}` leaves a timed-out bundle
//! attached. Assertions read the raw reply text.

use clarion::{ErrorCode, QuorumRequest, WaitOutcome};
use serde_json::{json, Value};

use crate::doors_json_support::{request, ALICE, SYSTEM};
use crate::quorum::{ask_quorum, team};
use crate::support::*;

dual_backend!(
    wire_5_every_reply_carries_code_and_field,
    wire_5_each_error_says_its_code,
    wire_5_a_validation_error_says_its_field_path,
    wire_5_a_closed_handle_says_handle_closed,
    wire_5_wait_detach_on_timeout_false_leaves_the_bundle_attached
);

/// The raw reply, parsed: its keys in order and the value.
fn reply(db: &TestDb, op: &str, principal: &str, args: Value) -> Value {
    let text = db.call(&request(op, principal, args)).to_reply();
    let value: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["status", "body", "code", "field"], "{text}");
    value
}

/// `(status, code, field)` of a reply.
fn words(reply: &Value) -> (u64, &str, &str) {
    (
        reply["status"].as_u64().unwrap(),
        reply["code"].as_str().unwrap(),
        reply["field"].as_str().unwrap(),
    )
}

fn user(id: &str) -> String {
    json!({"kind": "user", "user_id": id}).to_string()
}

/// WIRE-5: a success says `""` twice; so does every 2xx kind (a lost
/// race is a success too).
fn wire_5_every_reply_carries_code_and_field(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let ok = reply(db, "summary", SYSTEM, json!({}));
    assert_eq!(words(&ok), (200, "", ""));
    let won = reply(
        db,
        "cancel_bundle",
        SYSTEM,
        json!({"pending_id": pending_id}),
    );
    assert_eq!(words(&won), (200, "", ""));
    assert_eq!(won["body"]["claimed"], json!(true));
    let lost = reply(
        db,
        "cancel_bundle",
        SYSTEM,
        json!({"pending_id": pending_id}),
    );
    assert_eq!(words(&lost), (200, "", ""));
    assert_eq!(lost["body"]["claimed"], json!(false));
}

/// WIRE-5, WIRE-4: one code for each error a caller meets through the
/// JSON door, with its status; bodies unchanged.
fn wire_5_each_error_says_its_code(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);

    let missing = reply(db, "get_bundle", ALICE, json!({"pending_id": "nope"}));
    assert_eq!(words(&missing), (404, "not_found", ""));
    assert_eq!(
        missing["body"],
        json!({"error": "clarification request not found"})
    );

    let denied = reply(db, "prune", ALICE, json!({}));
    assert_eq!(words(&denied), (403, "capability_denied", ""));

    let timed_out = reply(
        db,
        "wait_bundle",
        ALICE,
        json!({"pending_id": pending_id, "timeout_ms": 0}),
    );
    assert_eq!(words(&timed_out), (504, "timed_out", ""));
    assert_eq!(
        timed_out["body"],
        json!({"error": "timed out waiting for a response"})
    );

    // The session ends: asking on it is `session_ended`, answering its
    // bundle `no_longer_active`.
    reply(
        db,
        "set_session_state",
        SYSTEM,
        json!({"session_id": session, "state": "completed"}),
    );
    let ended = reply(
        db,
        "ask",
        SYSTEM,
        json!({"session_id": session, "questions": [{"title": "T", "prompt": "P?", "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}]}),
    );
    assert_eq!(words(&ended), (409, "session_ended", ""));
    let inactive = reply(
        db,
        "resolve_bundle",
        ALICE,
        json!({"pending_id": pending_id, "rejected": true}),
    );
    assert_eq!(words(&inactive), (409, "no_longer_active", ""));

    // QUO-3: the requester may not vote; a second, different vote is
    // refused.
    let quorum_session = team(db);
    let quorum = ask_quorum(
        db,
        &quorum_session,
        QuorumRequest {
            approvals: 2,
            requested_by: "olga".to_owned(),
            ..QuorumRequest::default()
        },
    );
    let answer = |option: &str| json!({"pending_id": quorum, "answers": [{"question_id": "q1", "selected_options": [option]}]});
    let requester = reply(db, "resolve_bundle", &user("olga"), answer("q1_opt1"));
    assert_eq!(words(&requester), (403, "not_eligible", ""));
    let first = reply(db, "resolve_bundle", &user("bob"), answer("q1_opt1"));
    assert_eq!(words(&first), (200, "", ""));
    let changed = reply(db, "resolve_bundle", &user("bob"), answer("q1_opt2"));
    assert_eq!(words(&changed), (409, "already_voted", ""));

    // Every word the door can say is a word of the one list.
    let all: Vec<&str> = ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
    for seen in [
        "not_found",
        "capability_denied",
        "timed_out",
        "session_ended",
    ] {
        assert!(all.contains(&seen), "{seen}");
    }
    assert!(all.contains(&"handle_closed") && all.contains(&"link_used"));
}

/// WIRE-5: a 400 says `validation` and the field's path, the same path
/// its message starts with; an envelope's problem names its part.
fn wire_5_a_validation_error_says_its_field_path(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let cases = [
        (
            "ask",
            json!({"session_id": session, "questions": [{"title": "T", "prompt": "P?", "options": [{"label": "A"}]}]}),
            "questions[0].options",
        ),
        (
            "wait",
            json!({"pending_id": pending_id, "timeout_ms": -1}),
            "timeout_ms",
        ),
        (
            "wait",
            json!({"pending_id": pending_id, "detach_on_timeout": "no"}),
            "detach_on_timeout",
        ),
        (
            "resolve_bundle",
            json!({"pending_id": pending_id, "answers": [{"question_id": "q1", "selected_options": ["nope"]}]}),
            "answers[0].selected_options",
        ),
    ];
    for (op, args, field) in cases {
        let principal = if op == "resolve_bundle" {
            ALICE
        } else {
            SYSTEM
        };
        let refused = reply(db, op, principal, args);
        assert_eq!(words(&refused), (400, "validation", field), "{refused}");
        let message = refused["body"]["error"].as_str().unwrap();
        assert!(message.starts_with(&format!("{field}: ")), "{message}");
    }
    for (text, field) in [
        ("not json", "request"),
        (r#"{"principal":{"kind":"system"}}"#, "op"),
        (
            r#"{"op":"summary","principal":{"kind":"user"}}"#,
            "principal.user_id",
        ),
    ] {
        let value: Value = serde_json::from_str(&db.call(text).to_reply()).unwrap();
        assert_eq!(words(&value), (400, "validation", field), "{value}");
    }
    let envelope = db.call(&request("prune", ALICE, json!({})));
    assert_eq!(envelope.code, Some(ErrorCode::CapabilityDenied));
    assert_eq!(envelope.field, "");
}

/// WIRE-5, REL-7: a call on a closed handle says `handle_closed`.
fn wire_5_a_closed_handle_says_handle_closed(db: &TestDb) {
    let other = clarion::Clarion::open(&db.url).unwrap();
    other.close();
    let value: Value = serde_json::from_str(
        &other
            .call(&request("summary", SYSTEM, json!({})))
            .to_reply(),
    )
    .unwrap();
    assert_eq!(words(&value), (503, "handle_closed", ""));
    assert_eq!(value["body"], json!({"error": "handle closed"}));
}

/// WIRE-5, WAIT-1b: `detach_on_timeout: false` ends the wait `timed_out`
/// with the bundle attached; the default detaches it (WAIT-1).
fn wire_5_wait_detach_on_timeout_false_leaves_the_bundle_attached(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let kept = reply(
        db,
        "wait",
        SYSTEM,
        json!({"pending_id": pending_id, "timeout_ms": 0, "detach_on_timeout": false}),
    );
    assert_eq!(kept["body"]["outcome"], json!("timed_out"));
    assert!(
        !rows::detached(db, &pending_id),
        "a slice detached the bundle"
    );
    let last = reply(
        db,
        "wait",
        SYSTEM,
        json!({"pending_id": pending_id, "timeout_ms": 0}),
    );
    assert_eq!(last["body"]["outcome"], json!("timed_out"));
    assert!(
        rows::detached(db, &pending_id),
        "the caller's own timeout detaches"
    );
    // The Rust API's slice says the same.
    let other = ask(db, &session, 1);
    let outcome = db.wait_attached(&other, std::time::Duration::ZERO).unwrap();
    assert!(matches!(outcome, WaitOutcome::TimedOut), "{outcome:?}");
    assert!(!rows::detached(db, &other));
}
