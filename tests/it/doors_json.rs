//! WIRE-5 requests through `Clarion::call`, the JSON layer under the C ABI:
//! every operation, the order of checks, argument rules, and REL-4 through
//! the envelopes. Assertions read the raw reply text.

use clarion::test_hooks::{points, FailAction};
use clarion::{BundleStatus, ListRequest, Principal, ResolveRequest};
use serde_json::{json, Value};

use crate::support::*;

const SYSTEM: &str = r#"{"kind":"system"}"#;
const ALICE: &str = r#"{"kind":"user","user_id":"alice"}"#;
const BOB: &str = r#"{"kind":"user","user_id":"bob"}"#;

/// The reply as `(status, body text)`.
fn call(db: &TestDb, request: &str) -> (u16, String) {
    let envelope = db.call(request);
    (envelope.status, envelope.body_text())
}

/// `{"op": op, "principal": principal, "args": args}` as text.
fn request(op: &str, principal: &str, args: Value) -> String {
    format!(r#"{{"op":"{op}","principal":{principal},"args":{args}}}"#)
}

fn ok(db: &TestDb, op: &str, principal: &str, args: Value) -> Value {
    let (status, body) = call(db, &request(op, principal, args));
    assert_eq!(status, 200, "{op}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn refused(db: &TestDb, op: &str, principal: &str, args: Value) -> (u16, String) {
    call(db, &request(op, principal, args))
}

/// Mirrors `w-a`/`t-a`/`s-a` for alice through the JSON layer.
fn mirror_by_call(db: &TestDb) {
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

fn two_questions() -> Value {
    json!([
        {"title": "Colour", "prompt": "Which colour?", "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
        {"question_id": "size", "title": "Size", "prompt": "Which size?",
         "options": [{"option_id": "s", "label": "Small", "description": "small"}, {"option_id": "l", "label": "Large", "description": "big"}]},
    ])
}

fn ask_by_call(db: &TestDb) -> String {
    let asked = ok(
        db,
        "ask",
        SYSTEM,
        json!({"session_id": "s-a", "questions": two_questions(), "context": "ctx"}),
    );
    assert_eq!(asked["created"], json!(true));
    asked["pending_id"].as_str().unwrap().to_owned()
}

fn answers() -> Value {
    json!([
        {"question_id": "q1", "selected_options": ["q1_opt2"], "custom_text": "navy"},
        {"question_id": "size", "selected_options": ["l"]},
    ])
}

dual_backend!(
    wire_5_every_operation_through_call,
    wire_5_malformed_envelopes_are_400_naming_the_problem,
    wire_5_capability_is_checked_before_arguments,
    wire_5_argument_rules,
    wire_5_defaults_apply_only_on_create,
    wire_5_order_of_checks,
    wire_1_claim_failure_is_500,
    rel_4_foreign_and_fabricated_replies_are_identical
);

/// WIRE-5: every listed operation works through the JSON layer with the
/// bodies of WIRE-1..3.
fn wire_5_every_operation_through_call(db: &TestDb) {
    mirror_by_call(db);
    let turn = ok(db, "begin_turn", SYSTEM, json!({"session_id": "s-a"}));
    assert!(
        turn["turn_id"].as_str().is_some_and(|id| !id.is_empty()),
        "{turn}"
    );
    let pending_id = ask_by_call(db);
    assert_eq!(
        ok(
            db,
            "has_pending_clarification",
            SYSTEM,
            json!({"session_id": "s-a"})
        ),
        json!({"has_pending": true})
    );

    let page = ok(db, "list_pending", ALICE, json!({"limit": 10}));
    assert_eq!(page["count"], json!(1));
    assert_eq!(page["bundles"][0]["pending_id"], json!(pending_id));
    assert_eq!(
        page["bundles"][0]["questions"][1]["options"][1]["description"],
        json!("big")
    );
    let detail = ok(db, "get_bundle", ALICE, json!({"pending_id": pending_id}));
    assert_eq!(detail["status"], json!("pending"));
    assert_eq!(detail["response"], Value::Null);
    assert_eq!(
        ok(db, "summary", ALICE, json!({}))["pending_bundles"],
        json!(1)
    );
    let actions = ok(db, "pending_actions", ALICE, json!({"task_ids": ["t-a"]}));
    assert_eq!(
        actions["tasks"][0]["task_pending_action"],
        json!("clarification")
    );
    let allowed = ok(
        db,
        "authorize",
        ALICE,
        json!({"operation": "resolve_bundle", "pending_id": pending_id}),
    );
    assert_eq!(allowed, json!({"allowed": true, "reason": ""}));
    let task = ok(
        db,
        "authorize",
        BOB,
        json!({"operation": "get_bundle", "task_id": "t-a"}),
    );
    assert_eq!(task, json!({"allowed": false, "reason": "not_found"}));

    // The agent detaches; the answer goes to the outbox.
    ok(db, "detach_session", SYSTEM, json!({"session_id": "s-a"}));
    let won = ok(
        db,
        "resolve_bundle",
        ALICE,
        json!({"pending_id": pending_id, "answers": answers()}),
    );
    assert_eq!(won["success"], json!(true));
    assert_eq!(won["claimed"], json!(true));
    assert_eq!(won["status"], json!("answered"));
    let replay = ok(
        db,
        "wait_bundle",
        ALICE,
        json!({"pending_id": pending_id, "timeout_ms": 0}),
    );
    assert_eq!(replay["claimed"], json!(false));
    assert_eq!(replay["response"], won["response"]);
    let outbox = ok(db, "pending_deliveries", SYSTEM, json!({"limit": 10}));
    assert_eq!(outbox["deliveries"][0]["pending_id"], json!(pending_id));
    assert_eq!(outbox["deliveries"][0]["response"], won["response"]);
    let waited = ok(
        db,
        "wait",
        SYSTEM,
        json!({"pending_id": pending_id, "timeout_ms": 1000}),
    );
    assert_eq!(waited["outcome"], json!("answered"));
    assert_eq!(waited["response"], won["response"]);
    assert_eq!(
        ok(
            db,
            "ack_delivery",
            SYSTEM,
            json!({"pending_id": pending_id})
        ),
        json!({"ok": true})
    );
    assert_eq!(
        ok(db, "pending_deliveries", SYSTEM, json!({})),
        json!({"deliveries": []})
    );

    // Cancel, state changes and deletes.
    let second = ask_by_call(db);
    let cancelled = ok(db, "cancel_bundle", ALICE, json!({"pending_id": second}));
    assert_eq!(cancelled["status"], json!("cancelled"));
    let third = ask_by_call(db);
    ok(
        db,
        "set_session_state",
        SYSTEM,
        json!({"session_id": "s-a", "state": "completed"}),
    );
    let expired = ok(
        db,
        "wait",
        SYSTEM,
        json!({"pending_id": third, "timeout_ms": 0}),
    );
    assert_eq!(expired, json!({"outcome": "expired", "response": null}));
    assert_eq!(
        ok(
            db,
            "has_pending_clarification",
            SYSTEM,
            json!({"session_id": "s-a"})
        ),
        json!({"has_pending": false})
    );
    ok(db, "delete_session", SYSTEM, json!({"id": "s-a"}));
    assert_eq!(
        refused(db, "get_bundle", ALICE, json!({"pending_id": pending_id})).0,
        404
    );
    ok(db, "delete_task", SYSTEM, json!({"id": "t-a"}));
    assert_eq!(
        ok(db, "delete_task", SYSTEM, json!({"id": "t-a"})),
        json!({"ok": true})
    );
}

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

/// LIFE-1 through WIRE-5: defaults apply when a row is created, never to
/// the omitted fields of an existing row.
fn wire_5_defaults_apply_only_on_create(db: &TestDb) {
    mirror_by_call(db);
    ok(
        db,
        "set_session_state",
        SYSTEM,
        json!({"session_id": "s-a", "state": "waiting_for_input"}),
    );
    ok(
        db,
        "upsert_session",
        SYSTEM,
        json!({"id": "s-a", "task_id": "t-a"}),
    );
    let state: String = db.raw(|conn| {
        use clarion::test_hooks::schema::sessions;
        use diesel::prelude::*;
        sessions::table
            .find("s-a")
            .select(sessions::state)
            .first(conn)
            .unwrap()
    });
    assert_eq!(state, "waiting_for_input");
    ok(db, "upsert_workspace", SYSTEM, json!({"id": "w-a"}));
    assert_eq!(
        refused(
            db,
            "get_bundle",
            BOB,
            json!({"pending_id": ask_by_call(db)})
        )
        .0,
        404,
        "owner kept"
    );
    // wait_bundle with timeout 0 on an open bundle times out at once.
    let pending_id = ask_by_call(db);
    let (status, body) = refused(
        db,
        "wait_bundle",
        ALICE,
        json!({"pending_id": pending_id, "timeout_ms": 0}),
    );
    assert_eq!(
        (status, body.as_str()),
        (504, r#"{"error":"timed out waiting for a response"}"#)
    );
    let waited = ok(
        db,
        "wait",
        SYSTEM,
        json!({"pending_id": pending_id, "timeout_ms": 0}),
    );
    assert_eq!(waited, json!({"outcome": "timed_out", "response": null}));
    // WAIT-1: timeout_ms is an integer without fraction or exponent; a
    // huge one is capped, not refused.
    for timeout in ["1000.0", "1e3", "-1", "\"5\""] {
        let request = format!(
            r#"{{"op":"wait","principal":{SYSTEM},"args":{{"pending_id":"{pending_id}","timeout_ms":{timeout}}}}}"#
        );
        let (status, body) = call(db, &request);
        assert_eq!(status, 400, "{timeout}: {body}");
        assert!(body.contains("timeout_ms: "), "{body}");
    }
    for huge in ["18446744073709551615", "100000000000000000000"] {
        let page = call(
            db,
            &format!(r#"{{"op":"list_pending","principal":{ALICE},"args":{{"limit":{huge}}}}}"#),
        );
        assert_eq!(page.0, 200, "a huge limit is clamped: {}", page.1);
        // Arguments are checked before the lookup, so a 404 here means
        // the huge timeout was accepted (and capped).
        let waited = call(
            db,
            &format!(
                r#"{{"op":"wait_bundle","principal":{ALICE},"args":{{"pending_id":"pending-none","timeout_ms":{huge}}}}}"#
            ),
        );
        assert_eq!(waited.0, 404, "{}", waited.1);
    }
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

/// WIRE-1 500 through the JSON layer: a claim failure is reported by a
/// reference only (REL-6: the cause goes to the log), and nothing is
/// stored.
fn wire_1_claim_failure_is_500(db: &TestDb) {
    mirror_by_call(db);
    let pending_id = ask_by_call(db);
    db.arm_failpoint(points::CLAIM_AFTER_ROWS, FailAction::Error);
    let (status, body) = refused(
        db,
        "resolve_bundle",
        ALICE,
        json!({"pending_id": pending_id, "answers": answers()}),
    );
    db.disarm_failpoint(points::CLAIM_AFTER_ROWS);
    assert_eq!(status, 500, "{body}");
    assert!(
        body.starts_with(r#"{"error":"internal error (ref "#),
        "{body}"
    );
    assert!(
        !body.contains("injected") && !body.contains("claim of"),
        "the cause leaked: {body}"
    );
    assert_eq!(
        ok(db, "get_bundle", ALICE, json!({"pending_id": pending_id}))["status"],
        json!("pending")
    );
}

/// REL-4, AUTH-5 through the envelopes: for get, wait_bundle, resolve,
/// cancel and authorize, a foreign bundle and a fabricated id give
/// byte-identical replies.
fn rel_4_foreign_and_fabricated_replies_are_identical(db: &TestDb) {
    mirror_by_call(db);
    let foreign = ask_by_call(db);
    let requests = |pending_id: &str| {
        vec![
            ("get_bundle", json!({"pending_id": pending_id})),
            (
                "wait_bundle",
                json!({"pending_id": pending_id, "timeout_ms": 0}),
            ),
            (
                "resolve_bundle",
                json!({"pending_id": pending_id, "answers": answers()}),
            ),
            (
                "resolve_bundle",
                json!({"pending_id": pending_id, "rejected": true}),
            ),
            ("cancel_bundle", json!({"pending_id": pending_id})),
            (
                "authorize",
                json!({"operation": "get_bundle", "pending_id": pending_id}),
            ),
            (
                "authorize",
                json!({"operation": "resolve_bundle", "pending_id": pending_id}),
            ),
            (
                "authorize",
                json!({"operation": "cancel_bundle", "pending_id": pending_id}),
            ),
        ]
    };
    let fabricated = "pending-999999";
    for ((op, foreign_args), (_, fabricated_args)) in
        requests(&foreign).into_iter().zip(requests(fabricated))
    {
        let seen_foreign = call(db, &request(op, BOB, foreign_args));
        let seen_fabricated = call(db, &request(op, BOB, fabricated_args));
        assert_eq!(seen_foreign, seen_fabricated, "{op}");
        assert!(
            seen_foreign.0 == 404 || op == "authorize",
            "{op}: {seen_foreign:?}"
        );
    }
    // The foreign bundle is untouched.
    assert_eq!(
        ok(db, "get_bundle", ALICE, json!({"pending_id": foreign}))["status"],
        json!("pending")
    );
}

dual_backend!(
    rel_6_nul_in_a_string_is_a_400_naming_the_field,
    rel_6_nul_through_the_rust_api_is_a_validation_error,
    rel_6_pending_actions_takes_at_most_a_thousand_task_ids
);

/// REL-6: a NUL character in any string argument — ids, a cursor, a
/// reason, free text, a workspace id, a principal's user id — is a 400
/// naming the field on both backends, never a 500, and nothing changes.
fn rel_6_nul_in_a_string_is_a_400_naming_the_field(db: &TestDb) {
    mirror_by_call(db);
    let pending_id = ask_by_call(db);
    let nul = "a\u{0}b";
    let nul_user = json!({"kind": "user", "user_id": nul}).to_string();
    let nul_agent =
        json!({"kind": "agent", "user_id": "alice", "agent_id": nul, "grants": ["questions:read"]})
            .to_string();
    let mut answers_with_nul = answers();
    answers_with_nul[0]["custom_text"] = json!(nul);
    let mut questions_with_nul = two_questions();
    questions_with_nul[0]["prompt"] = json!(nul);
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        (
            "get_bundle",
            ALICE,
            json!({"pending_id": nul}),
            "pending_id",
        ),
        (
            "wait_bundle",
            ALICE,
            json!({"pending_id": nul, "timeout_ms": 0}),
            "pending_id",
        ),
        (
            "cancel_bundle",
            ALICE,
            json!({"pending_id": nul}),
            "pending_id",
        ),
        (
            "resolve_bundle",
            ALICE,
            json!({"pending_id": nul, "rejected": true}),
            "pending_id",
        ),
        (
            "resolve_bundle",
            ALICE,
            json!({"pending_id": pending_id, "rejected": true, "reject_reason": nul}),
            "reject_reason",
        ),
        (
            "resolve_bundle",
            ALICE,
            json!({"pending_id": pending_id, "answers": answers_with_nul}),
            "answers[0].custom_text",
        ),
        (
            "authorize",
            ALICE,
            json!({"operation": "get_bundle", "pending_id": nul}),
            "pending_id",
        ),
        ("list_pending", ALICE, json!({"cursor": nul}), "cursor"),
        (
            "list_pending",
            ALICE,
            json!({"workspace_id": nul}),
            "workspace_id",
        ),
        (
            "pending_actions",
            ALICE,
            json!({"task_ids": ["t-a", nul]}),
            "task_ids[1]",
        ),
        ("summary", &nul_user, json!({}), "principal.user_id"),
        ("summary", &nul_agent, json!({}), "principal.agent_id"),
        ("upsert_workspace", SYSTEM, json!({"id": nul}), "id"),
        (
            "upsert_workspace",
            SYSTEM,
            json!({"id": "w-n", "owner_id": nul}),
            "owner_id",
        ),
        (
            "upsert_task",
            SYSTEM,
            json!({"id": "t-n", "workspace_id": nul}),
            "workspace_id",
        ),
        (
            "upsert_session",
            SYSTEM,
            json!({"id": nul, "task_id": "t-a"}),
            "id",
        ),
        (
            "begin_turn",
            SYSTEM,
            json!({"session_id": nul}),
            "session_id",
        ),
        (
            "ask",
            SYSTEM,
            json!({"session_id": "s-a", "questions": questions_with_nul}),
            "questions[0].prompt",
        ),
        (
            "ask",
            SYSTEM,
            json!({"session_id": "s-a", "questions": two_questions(), "idempotency_key": nul}),
            "idempotency_key",
        ),
        (
            "wait",
            SYSTEM,
            json!({"pending_id": nul, "timeout_ms": 0}),
            "pending_id",
        ),
        (
            "ack_delivery",
            SYSTEM,
            json!({"pending_id": nul}),
            "pending_id",
        ),
    ];
    for (op, principal, args, field) in cases {
        let (status, body) = refused(db, op, principal, args);
        assert_eq!(status, 400, "{op} {field}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        let message = error["error"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("{field}: ")),
            "{op}: {message}"
        );
    }
    assert_eq!(
        ok(db, "get_bundle", ALICE, json!({"pending_id": pending_id}))["status"],
        json!("pending")
    );
    assert_eq!(
        ok(db, "summary", ALICE, json!({}))["pending_bundles"],
        json!(1)
    );
}

/// REL-6: the same hygiene through the Rust API, which a host calls
/// without the JSON door.
fn rel_6_nul_through_the_rust_api_is_a_validation_error(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let nul = "a\u{0}b";
    assert_invalid(db.get_bundle(&alice(), nul), "pending_id");
    assert_invalid(
        db.get_bundle(&Principal::user(nul), &pending_id),
        "principal.user_id",
    );
    assert_invalid(db.upsert_task(nul, None), "id");
    let rejecting_with_nul = ResolveRequest {
        rejected: true,
        reject_reason: nul.to_owned(),
        ..ResolveRequest::default()
    };
    assert_invalid(
        db.resolve_bundle(&alice(), &pending_id, &rejecting_with_nul),
        "reject_reason",
    );
    let listing = ListRequest {
        workspace_id: Some(nul.to_owned()),
        ..ListRequest::default()
    };
    assert_invalid(db.list_pending(&alice(), &listing), "workspace_id");
    assert_eq!(
        db.get_bundle(&alice(), &pending_id).unwrap().status,
        BundleStatus::Pending
    );
}

/// REL-6: `pending_actions` takes at most 1,000 task ids; more is a 400
/// naming `task_ids`, and 1,000 still work.
fn rel_6_pending_actions_takes_at_most_a_thousand_task_ids(db: &TestDb) {
    mirror_by_call(db);
    let ids = |n: usize| (0..n).map(|i| format!("t-{i}")).collect::<Vec<_>>();
    let (status, body) = refused(db, "pending_actions", ALICE, json!({"task_ids": ids(1001)}));
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("task_ids: at most 1000 task ids, got 1001"),
        "{body}"
    );
    let mut thousand = ids(999);
    thousand.push("t-a".to_owned());
    assert_eq!(
        ok(db, "pending_actions", ALICE, json!({"task_ids": thousand}))["tasks"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
