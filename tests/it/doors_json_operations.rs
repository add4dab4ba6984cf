//! WIRE-5's operations through `Clarion::call`: every operation with the
//! bodies of WIRE-1..3, defaults only on create, a claim failure as a
//! 500 by reference (WIRE-1), and byte-identical replies for a foreign
//! bundle and a fabricated id (REL-4). Assertions read the raw reply
//! text.

use clarion::test_hooks::{points, FailAction};
use serde_json::{json, Value};

use crate::doors_json_support::*;
use crate::support::*;

const BOB: &str = r#"{"kind":"user","user_id":"bob"}"#;

dual_backend!(
    wire_5_every_operation_through_call,
    wire_5_defaults_apply_only_on_create,
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
