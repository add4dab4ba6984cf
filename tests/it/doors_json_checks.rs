//! What `Clarion::call` refuses, and in which order (WIRE-5): malformed
//! envelopes, the capability before the arguments (AUTH-2), the argument
//! rules, and 400, 404, 409, then the stored-data rules. Assertions read
//! the raw reply text.

use serde_json::{json, Value};

use crate::doors_json_support::*;
use crate::support::*;

dual_backend!(
    wire_5_malformed_envelopes_are_400_naming_the_problem,
    wire_5_capability_is_checked_before_arguments,
    wire_5_argument_rules,
    wire_5_order_of_checks
);

/// WIRE-5: the request envelope is checked first; each problem is a 400
/// that names it.
fn wire_5_malformed_envelopes_are_400_naming_the_problem(db: &TestDb) {
    let cases: [(&str, &str); 12] = [
        ("not json", "request: not valid JSON"),
        ("[1,2]", "request: expected an object, got an array"),
        (r#"{"principal":{"kind":"system"}}"#, "op: required"),
        (
            r#"{"op":7,"principal":{"kind":"system"}}"#,
            "op: expected a string, got a number",
        ),
        (
            r#"{"op":"launch","principal":{"kind":"system"}}"#,
            "op: unknown operation \"launch\"",
        ),
        (r#"{"op":"summary"}"#, "principal: required"),
        (
            r#"{"op":"summary","principal":{"kind":"root"}}"#,
            "principal.kind: unknown kind \"root\"",
        ),
        (
            r#"{"op":"summary","principal":{"kind":"user"}}"#,
            "principal.user_id: required",
        ),
        (
            r#"{"op":"summary","principal":{"kind":"agent","user_id":"","agent_id":"b"}}"#,
            "principal.user_id: must not be empty",
        ),
        (
            r#"{"op":"summary","principal":{"kind":"agent","user_id":"u","grants":["questions:write"]}}"#,
            "principal.grants[0]: unknown grant",
        ),
        (
            r#"{"op":"summary","principal":{"kind":"system"},"extra":1}"#,
            "extra: unknown argument",
        ),
        (
            r#"{"op":"summary","principal":{"kind":"system"},"args":[]}"#,
            "args: expected an object, got an array",
        ),
    ];
    for (text, expected) in cases {
        let (status, body) = call(db, text);
        assert_eq!(status, 400, "{text}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert!(
            error["error"].as_str().unwrap().starts_with(expected),
            "{text}: {body}"
        );
        assert_eq!(error.as_object().unwrap().len(), 1, "{body}");
    }
    // Every principal may carry all four keys; those its kind does not
    // use are unused, and null means not given.
    for principal in [
        r#"{"kind":"user","user_id":"alice","agent_id":null,"grants":[]}"#,
        r#"{"kind":"system","user_id":"","agent_id":null,"grants":null}"#,
        r#"{"kind":"agent","user_id":"alice","agent_id":null,"grants":["questions:read"]}"#,
    ] {
        let (status, body) = call(
            db,
            &format!(r#"{{"op":"summary","principal":{principal}}}"#),
        );
        assert_eq!(status, 200, "{principal}: {body}");
    }
    let (status, body) = call(
        db,
        r#"{"op":"summary","principal":{"kind":"user","user_id":"u","role":"admin"}}"#,
    );
    assert_eq!(
        (status, body.as_str()),
        (400, r#"{"error":"principal.role: unknown argument"}"#)
    );
    let invalid_utf8 = db.call_bytes(b"{\"op\":\"summary\xff\"}");
    assert_eq!(
        (invalid_utf8.status, invalid_utf8.body_text()),
        (400, r#"{"error":"request: not valid UTF-8"}"#.to_owned())
    );
    let huge = format!(
        r#"{{"op":"summary","principal":{SYSTEM},"args":{{"pad":"{}"}}}}"#,
        "x".repeat(clarion::limits::MAX_REQUEST_BYTES)
    );
    assert_eq!(call(db, &huge).0, 400);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, body) = call(db, &deep);
    assert_eq!(status, 400);
    assert!(body.contains("recursion limit"), "{body}");
    let nested_ok = format!(
        r#"{{"op":"summary","principal":{SYSTEM},"args":{{"x":{}1{}}}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    assert_eq!(call(db, &nested_ok).1, r#"{"error":"x: unknown argument"}"#);
}

/// AUTH-2, WIRE-5: the capability check comes before `args` is read, so
/// a denied caller learns nothing about its arguments.
fn wire_5_capability_is_checked_before_arguments(db: &TestDb) {
    let denied = r#"{"error":"capability not authorized","code":"capability_denied"}"#.to_owned();
    assert_eq!(
        refused(db, "upsert_workspace", ALICE, json!({"bogus": 1})),
        (403, denied.clone())
    );
    assert_eq!(
        call(
            db,
            &format!(r#"{{"op":"ask","principal":{ALICE},"args":"nonsense"}}"#)
        ),
        (403, denied.clone())
    );
    let reader =
        r#"{"kind":"agent","user_id":"alice","agent_id":"bot","grants":["questions:read"]}"#;
    assert_eq!(
        refused(db, "resolve_bundle", reader, json!({"answers": 5})),
        (403, denied.clone())
    );
    assert_eq!(
        refused(db, "cancel_bundle", reader, json!({})),
        (403, denied.clone())
    );
    let no_grants = r#"{"kind":"agent","user_id":"alice","agent_id":"bot"}"#;
    assert_eq!(
        refused(db, "list_pending", no_grants, json!({"limit": "x"})),
        (403, denied.clone())
    );
    assert_eq!(
        refused(db, "summary", r#"{"kind":"unclassified"}"#, json!({})),
        (403, denied)
    );
    // `authorize` reports denials as its result.
    let answer = ok(
        db,
        "authorize",
        r#"{"kind":"unclassified"}"#,
        json!({"operation": "get_bundle", "pending_id": "x"}),
    );
    assert_eq!(
        answer,
        json!({"allowed": false, "reason": "capability_denied"})
    );
}

/// WIRE-5: types, required fields, enum values and unknown arguments are
/// 400s naming the argument; `null` and `""` mean "not given" for
/// optional arguments, while a required id given as `""` is a 400.
fn wire_5_argument_rules(db: &TestDb) {
    mirror_by_call(db);
    let cases = [
        ("get_bundle", json!({}), "pending_id: required"),
        (
            "get_bundle",
            json!({"pending_id": ""}),
            "pending_id: must not be empty",
        ),
        (
            "get_bundle",
            json!({"pending_id": 3}),
            "pending_id: expected a string, got a number",
        ),
        (
            "get_bundle",
            json!({"pending_id": "p", "verbose": true}),
            "verbose: unknown argument",
        ),
        (
            "list_pending",
            json!({"limit": "10"}),
            "limit: expected an integer, got a string",
        ),
        (
            "list_pending",
            json!({"limit": 1.5}),
            "limit: expected an integer, got a number",
        ),
        (
            "list_pending",
            json!({"cursor": "%%%"}),
            "cursor: malformed cursor",
        ),
        (
            "list_pending",
            json!({"created_since": "yesterday"}),
            "created_since: not an RFC 3339 timestamp",
        ),
        ("pending_actions", json!({}), "task_ids: required"),
        (
            "pending_actions",
            json!({"task_ids": ["t", 1]}),
            "task_ids[1]: expected a string, got a number",
        ),
        (
            "resolve_bundle",
            json!({"pending_id": "p", "answers": {}}),
            "answers: expected an array, got an object",
        ),
        (
            "resolve_bundle",
            json!({"pending_id": "p", "answers": [{"question_id": "q1", "selected_options": "a"}]}),
            "answers[0].selected_options: expected an array",
        ),
        (
            "resolve_bundle",
            json!({"pending_id": "p", "answers": [{"selected_options": []}]}),
            "answers[0].question_id: required",
        ),
        (
            "resolve_bundle",
            json!({"pending_id": "p", "answers": [{"question_id": "q1", "note": "x"}]}),
            "answers[0].note: unknown argument",
        ),
        (
            "resolve_bundle",
            json!({"pending_id": "p", "rejected": "yes"}),
            "rejected: expected a boolean, got a string",
        ),
        (
            "wait_bundle",
            json!({"pending_id": "p", "timeout_ms": -1}),
            "timeout_ms: must not be negative",
        ),
        (
            "authorize",
            json!({"operation": "fly", "pending_id": "p"}),
            "operation: unknown operation \"fly\"",
        ),
        (
            "authorize",
            json!({"operation": "get_bundle"}),
            "pending_id: give exactly one of pending_id and task_id",
        ),
        (
            "authorize",
            json!({"operation": "get_bundle", "pending_id": "p", "task_id": "t"}),
            "pending_id: give exactly one",
        ),
    ];
    for (op, args, expected) in cases {
        let (status, body) = refused(db, op, ALICE, args.clone());
        assert_eq!(status, 400, "{op} {args}: {body}");
        let message = serde_json::from_str::<Value>(&body).unwrap()["error"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.starts_with(expected), "{op} {args}: {message}");
    }
    let host_cases = [
        ("ask", json!({"session_id": "s-a"}), "questions: required"),
        (
            "ask",
            json!({"session_id": "s-a", "questions": two_questions(), "kind": "survey"}),
            "kind: unknown kind",
        ),
        (
            "ask",
            json!({"session_id": "s-a", "questions": [{"title": "t", "prompt": "p", "options": [{"label": 1}]}]}),
            "questions[0].options[0].label: expected a string",
        ),
        (
            "set_session_state",
            json!({"session_id": "s-a"}),
            "state: required",
        ),
        (
            "set_session_state",
            json!({"session_id": "s-a", "state": "paused"}),
            "state: ",
        ),
        ("upsert_session", json!({"id": "s-b"}), "task_id: required"),
        (
            "upsert_session",
            json!({"id": "s-b", "task_id": "t-a", "is_primary": "no"}),
            "is_primary: expected a boolean",
        ),
        (
            "upsert_workspace",
            json!({"id": ""}),
            "id: must not be empty",
        ),
        (
            "pending_deliveries",
            json!({"limit": "many"}),
            "limit: expected an integer",
        ),
    ];
    for (op, args, expected) in host_cases {
        let (status, body) = refused(db, op, SYSTEM, args.clone());
        assert_eq!(status, 400, "{op} {args}: {body}");
        let message = serde_json::from_str::<Value>(&body).unwrap()["error"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.starts_with(expected), "{op} {args}: {message}");
    }
    // `null` and `""` are "not given": the defaults apply.
    let page = ok(
        db,
        "list_pending",
        ALICE,
        json!({"workspace_id": "", "cursor": null, "limit": null, "created_since": ""}),
    );
    assert_eq!(page, json!({"bundles": [], "count": 0, "next_cursor": ""}));
    let pending_id = ok(db, "ask", SYSTEM, json!({"session_id": "s-a", "questions": two_questions(), "kind": null, "idempotency_key": "", "context": null}))["pending_id"].clone();
    let detail = ok(db, "get_bundle", ALICE, json!({"pending_id": pending_id}));
    assert_eq!(
        (detail["kind"].clone(), detail["context"].clone()),
        (json!("question"), json!(""))
    );
}

/// WIRE-5 order: 400 for what needs no database, then 404, then 409,
/// then the stored-data rules (VAL-1) as 400.
fn wire_5_order_of_checks(db: &TestDb) {
    mirror_by_call(db);
    // Shape errors come before the lookup: a fabricated id still gets 400.
    let shape = refused(
        db,
        "resolve_bundle",
        ALICE,
        json!({"pending_id": "nope", "rejected": true, "answers": answers()}),
    );
    assert_eq!(shape.0, 400, "{}", shape.1);
    let long = refused(
        db,
        "resolve_bundle",
        ALICE,
        json!({"pending_id": "nope", "rejected": true, "reject_reason": "x".repeat(2001)}),
    );
    assert_eq!(long.0, 400, "{}", long.1);
    // A stored-data rule on a fabricated id: not found first.
    let unknown = refused(
        db,
        "resolve_bundle",
        ALICE,
        json!({"pending_id": "nope", "answers": [{"question_id": "zz"}]}),
    );
    assert_eq!(
        unknown,
        (
            404,
            r#"{"error":"clarification request not found"}"#.to_owned()
        )
    );
    // On a real bundle the same request is the VAL-1 400.
    let pending_id = ask_by_call(db);
    let counted = refused(
        db,
        "resolve_bundle",
        ALICE,
        json!({"pending_id": pending_id, "answers": [{"question_id": "zz"}]}),
    );
    assert_eq!(counted.0, 400, "{}", counted.1);
    // State: asking on an ended session is 409, on an unknown one 404.
    ok(
        db,
        "set_session_state",
        SYSTEM,
        json!({"session_id": "s-a", "state": "failed"}),
    );
    assert_eq!(
        refused(
            db,
            "ask",
            SYSTEM,
            json!({"session_id": "s-a", "questions": two_questions()})
        ),
        (409, r#"{"error":"session has ended"}"#.to_owned())
    );
    assert_eq!(
        refused(
            db,
            "ask",
            SYSTEM,
            json!({"session_id": "s-zz", "questions": two_questions()})
        ),
        (404, r#"{"error":"session not found"}"#.to_owned())
    );
    // The expired bundle is no longer active: 409.
    assert_eq!(
        refused(
            db,
            "resolve_bundle",
            ALICE,
            json!({"pending_id": pending_id, "answers": answers()})
        ),
        (
            409,
            r#"{"error":"clarification request is no longer active"}"#.to_owned()
        )
    );
    assert_eq!(
        refused(
            db,
            "upsert_session",
            SYSTEM,
            json!({"id": "s-b", "task_id": "t-zz"})
        ),
        (404, r#"{"error":"task not found"}"#.to_owned())
    );
}
