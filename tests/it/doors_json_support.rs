//! What the `doors_json_*` suites share: requests through `Clarion::call`
//! (WIRE-5, the JSON layer under the C ABI) as text, their replies as
//! text, and a world mirrored and asked through the same door.

use serde_json::{json, Value};

use crate::support::*;

pub const SYSTEM: &str = r#"{"kind":"system"}"#;
pub const ALICE: &str = r#"{"kind":"user","user_id":"alice"}"#;

/// The reply as `(status, body text)`.
pub fn call(db: &TestDb, request: &str) -> (u16, String) {
    let envelope = db.call(request);
    (envelope.status, envelope.body_text())
}

/// `{"op": op, "principal": principal, "args": args}` as text.
pub fn request(op: &str, principal: &str, args: Value) -> String {
    format!(r#"{{"op":"{op}","principal":{principal},"args":{args}}}"#)
}

pub fn ok(db: &TestDb, op: &str, principal: &str, args: Value) -> Value {
    let (status, body) = call(db, &request(op, principal, args));
    assert_eq!(status, 200, "{op}: {body}");
    serde_json::from_str(&body).unwrap()
}

pub fn refused(db: &TestDb, op: &str, principal: &str, args: Value) -> (u16, String) {
    call(db, &request(op, principal, args))
}

/// Mirrors `w-a`/`t-a`/`s-a` for alice through the JSON layer.
pub fn mirror_by_call(db: &TestDb) {
    assert_eq!(
        ok(
            db,
            "upsert_workspace",
            SYSTEM,
            json!({"id": "w-a", "owner_id": "alice"})
        ),
        json!({"ok": true})
    );
    ok(
        db,
        "upsert_task",
        SYSTEM,
        json!({"id": "t-a", "workspace_id": "w-a"}),
    );
    ok(
        db,
        "upsert_session",
        SYSTEM,
        json!({"id": "s-a", "task_id": "t-a", "is_primary": true}),
    );
}

pub fn two_questions() -> Value {
    json!([
        {"title": "Colour", "prompt": "Which colour?", "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
        {"question_id": "size", "title": "Size", "prompt": "Which size?",
         "options": [{"option_id": "s", "label": "Small", "description": "small"}, {"option_id": "l", "label": "Large", "description": "big"}]},
    ])
}

pub fn ask_by_call(db: &TestDb) -> String {
    let asked = ok(
        db,
        "ask",
        SYSTEM,
        json!({"session_id": "s-a", "questions": two_questions(), "context": "ctx"}),
    );
    assert_eq!(asked["created"], json!(true));
    asked["pending_id"].as_str().unwrap().to_owned()
}

pub fn answers() -> Value {
    json!([
        {"question_id": "q1", "selected_options": ["q1_opt2"], "custom_text": "navy"},
        {"question_id": "size", "selected_options": ["l"]},
    ])
}
