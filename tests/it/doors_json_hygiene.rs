//! REL-6 through the JSON layer and the Rust API: a NUL in any string
//! argument is a 400 naming the field, never a 500, and `pending_actions`
//! takes at most 1,000 task ids.

use clarion::{BundleStatus, ListRequest, Principal, ResolveRequest, TaskUpsert};
use serde_json::{json, Value};

use crate::doors_json_support::*;
use crate::support::*;

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
    assert_invalid(db.upsert_task(TaskUpsert::new(nul)), "id");
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
