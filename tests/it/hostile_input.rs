//! REL-3: generated hostile input never panics and always produces a typed
//! reply: raw bytes through the C entry point `clarion_call`, structured
//! requests for every operation, cursors, answers and ask payloads. Each
//! generator prints how many inputs it ran.

use std::cell::Cell;
use std::ffi::{CStr, CString};

use clarion::ffi::{clarion_call, clarion_close, clarion_open, clarion_string_free};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};

use crate::support::*;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// Fewer cases on PostgreSQL, whose round trips cost more.
fn cases(db: &TestDb, sqlite_cases: u32) -> u32 {
    if db.url.starts_with("postgres") {
        sqlite_cases / 4
    } else {
        sqlite_cases
    }
}

/// Any JSON value, a few levels deep, with strings that mean something to
/// SQL, JSON and base64.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[ -~]{0,12}".prop_map(Value::from),
        prop_oneof![
            Just("'; DROP TABLE bundles; --"),
            Just("q1"),
            Just("q1_opt1"),
            Just("\u{0}"),
            Just("%_\\"),
            Just("djE6MTox"),
            Just("2026-11-29T20:00:00Z"),
            Just("system"),
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map(arg_name(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arg_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "id",
            "owner_id",
            "workspace_id",
            "task_id",
            "session_id",
            "state",
            "is_primary",
            "questions",
            "context",
            "kind",
            "idempotency_key",
            "pending_id",
            "timeout_ms",
            "cursor",
            "limit",
            "created_since",
            "answers",
            "rejected",
            "reject_reason",
            "task_ids",
            "operation",
            "question_id",
            "selected_options",
            "custom_text",
            "title",
            "prompt",
            "options",
            "label",
            "description",
            "option_id",
        ])
        .prop_map(str::to_owned),
        "[a-z_]{1,8}",
    ]
}

fn principal() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"kind": "system"})),
        Just(json!({"kind": "user", "user_id": "alice"})),
        Just(
            json!({"kind": "agent", "user_id": "alice", "agent_id": "b", "grants": ["questions:read", "questions:answer"]})
        ),
        Just(json!({"kind": "unclassified"})),
        any_json(),
    ]
}

/// A status a request may legitimately get; 500 would mean an input
/// reached an internal error.
fn typed(status: u16) -> bool {
    matches!(status, 200 | 400 | 403 | 404 | 409 | 504)
}

/// Waits are capped to zero so that a generated timeout cannot stall the run.
fn without_long_waits(mut args: Value) -> Value {
    if let Some(map) = args.as_object_mut() {
        if map.contains_key("timeout_ms") {
            map.insert("timeout_ms".into(), json!(0));
        }
    }
    args
}

/// Answers shaped like real ones (known ids, hostile text), often valid.
fn well_formed_answers() -> impl Strategy<Value = Vec<Value>> {
    let one = |id: &'static str| {
        (
            prop::collection::vec(prop::sample::select(vec![format!("{id}_opt1"), format!("{id}_opt2"), "zz".into()]), 0..3),
            "\\PC{0,8}",
        )
            .prop_map(move |(selected, text)| json!({"question_id": id, "selected_options": selected, "custom_text": text}))
    };
    prop_oneof![
        (one("q1"), one("q2")).prop_map(|(a, b)| vec![a, b]),
        (one("q2"), one("q1")).prop_map(|(a, b)| vec![a, b]),
        one("q1").prop_map(|a| vec![a]),
    ]
}

/// Ask payloads shaped like real ones with hostile text, often valid.
fn well_formed_questions() -> impl Strategy<Value = Value> {
    let option = ("\\PC{0,6}", "\\PC{0,6}", prop::option::of("[a-z]{0,3}"))
        .prop_map(|(label, description, id)| json!({"option_id": id, "label": label, "description": description}));
    let question = (prop::option::of("[a-z0-9]{0,3}"), "\\PC{0,8}", "\\PC{0,8}", prop::collection::vec(option, 1..8))
        .prop_map(|(id, title, prompt, options)| json!({"question_id": id, "title": title, "prompt": prompt, "options": options}));
    prop::collection::vec(question, 0..6).prop_map(Value::from)
}

dual_backend!(
    rel_3_random_bytes_through_clarion_call,
    rel_3_generated_requests_for_every_operation,
    rel_3_generated_cursors,
    rel_3_generated_answers_and_ask_payloads
);

/// Raw bytes through the real C entry point: never a crash, always a
/// `{"status", "body", "code", "field"}` reply, and 400 for anything that is not a
/// well-formed request.
fn rel_3_random_bytes_through_clarion_call(db: &TestDb) {
    let config = CString::new(json!({"database_url": db.url}).to_string()).unwrap();
    let handle = unsafe { clarion_open(config.as_ptr()) };
    assert!(!handle.is_null());
    let mut runner = runner(cases(db, 2000));
    let count = Cell::new(0);
    runner
        .run(&prop::collection::vec(1u8..=255, 0..256), |bytes| {
            count.set(count.get() + 1);
            let request = CString::new(bytes).unwrap();
            let reply = unsafe { clarion_call(handle, request.as_ptr()) };
            prop_assert!(!reply.is_null());
            let text = unsafe { CStr::from_ptr(reply) }
                .to_str()
                .unwrap()
                .to_owned();
            unsafe { clarion_string_free(reply) };
            let value: Value =
                serde_json::from_str(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(value["status"].as_u64(), Some(400), "{}", text);
            // WIRE-5: the words beside the body.
            prop_assert_eq!(value["code"].as_str(), Some("validation"), "{}", text);
            prop_assert!(value["field"].is_string(), "{}", text);
            Ok(())
        })
        .unwrap();
    clarion_close(handle);
    println!(
        "REL-3: {} random byte strings through clarion_call, none crashed",
        count.get()
    );
}

/// Structured requests for every operation with generated principals
/// and arguments: always a typed status, never a 500.
fn rel_3_generated_requests_for_every_operation(db: &TestDb) {
    let session = mirror(db, "fuzz", "alice");
    let pending_id = ask(db, &session, 2);
    let ops: Vec<&str> = clarion::Operation::all().map(|op| op.as_str()).collect();
    let strategy = (
        prop::sample::select(ops),
        principal(),
        any_json(),
        any::<bool>(),
    );
    let count = Cell::new(0);
    runner(cases(db, 1500))
        .run(&strategy, |(op, principal, args, aim)| {
            count.set(count.get() + 1);
            let mut args = without_long_waits(args);
            if aim {
                if let Some(map) = args.as_object_mut() {
                    map.insert("pending_id".into(), json!(pending_id));
                    map.insert("session_id".into(), json!(session));
                }
            }
            let request = json!({"op": op, "principal": principal, "args": args});
            let reply = db.call(&request.to_string());
            prop_assert!(
                typed(reply.status),
                "{} -> {} {}",
                request,
                reply.status,
                reply.body_text()
            );
            prop_assert!(reply.body.is_object());
            Ok(())
        })
        .unwrap();
    println!(
        "REL-3: {} generated requests, every reply typed",
        count.get()
    );
}

/// Cursors: any text is a 400 naming `cursor` or a page, never more.
fn rel_3_generated_cursors(db: &TestDb) {
    let session = mirror(db, "cursor", "alice");
    for _ in 0..3 {
        ask(db, &session, 1);
    }
    let forged = prop_oneof![
        "[ -~]{0,40}",
        ("[a-z0-9]{0,4}", any::<i64>(), "[ -~]{0,12}").prop_map(|(v, n, id)| {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{v}:{n}:{id}"))
        }),
    ];
    let count = Cell::new(0);
    runner(cases(db, 1000)).run(&forged, |cursor| {
        count.set(count.get() + 1);
        let reply = db.call(&json!({"op": "list_pending", "principal": {"kind": "user", "user_id": "alice"}, "args": {"cursor": cursor, "limit": 2}}).to_string());
        match reply.status {
            200 => prop_assert!(reply.body["bundles"].is_array()),
            400 => prop_assert!(reply.body["error"].as_str().unwrap().starts_with("cursor: "), "{}", reply.body_text()),
            other => prop_assert!(false, "{cursor:?} -> {other}"),
        }
        Ok(())
    }).unwrap();
    println!("REL-3: {} generated cursors", count.get());
}

/// Answers and ask payloads: validation errors, never internal ones;
/// nothing is stored for a refused request.
fn rel_3_generated_answers_and_ask_payloads(db: &TestDb) {
    let session = mirror(db, "payload", "alice");
    let answer = prop_oneof![
        well_formed_answers(),
        prop::collection::vec(any_json(), 0..4),
    ];
    let answered = Cell::new(0);
    let count = Cell::new(0);
    runner(cases(db, 600)).run(&answer, |answers| {
        count.set(count.get() + 1);
        let pending_id = ask(db, &session, 2);
        let reply = db.call(&json!({"op": "resolve_bundle", "principal": {"kind": "system"}, "args": {"pending_id": pending_id, "answers": answers}}).to_string());
        prop_assert!(matches!(reply.status, 200 | 400), "{}", reply.body_text());
        let status = db.get_bundle(&clarion::Principal::System, &pending_id).unwrap().status;
        if reply.status == 200 {
            answered.set(answered.get() + 1);
            prop_assert_eq!(status.as_str(), "answered");
        } else {
            prop_assert_eq!(status.as_str(), "pending");
        }
        Ok(())
    }).unwrap();
    println!(
        "REL-3: {} generated answers ({} accepted)",
        count.get(),
        answered.get()
    );

    let asked = Cell::new(0);
    count.set(0);
    runner(cases(db, 600)).run(&prop_oneof![well_formed_questions(), any_json()], |questions| {
        count.set(count.get() + 1);
        let reply = db.call(&json!({"op": "ask", "principal": {"kind": "system"}, "args": {"session_id": session, "questions": questions}}).to_string());
        prop_assert!(matches!(reply.status, 200 | 400), "{}", reply.body_text());
        asked.set(asked.get() + usize::from(reply.status == 200));
        Ok(())
    }).unwrap();
    println!(
        "REL-3: {} generated ask payloads ({} accepted)",
        count.get(),
        asked.get()
    );
}
