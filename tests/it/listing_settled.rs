//! LIST-12..14, WIRE-6: what was decided. The settled bundles a principal
//! may see, newest resolution first, paged live, each element byte for
//! byte its `get_bundle` body, `decided_by_caller` telling callers about
//! themselves; through the Rust API, the JSON call, `GET /api/v1/history`,
//! `/rpc` and the command line (the MCP tool in `doors_mcp.rs`, the C ABI
//! in `tests/ffi/test_ctypes.py`).

use std::time::Duration;

use clarion::envelope;
use clarion::{
    Cursor, Error, ListRequest, OnExpire, Principal, SettledCursor, SettledPage, SettledRequest,
    TaskUpsert, WorkspaceUpsert,
};
use serde_json::{json, Value};

use crate::deadlines_settling::ask_due;
use crate::doors_json_support::call;
use crate::support::rows;
use crate::support::server::*;
use crate::support::*;

const SECOND: i64 = 1_000_000;

fn page(db: &TestDb, principal: &Principal, request: &SettledRequest) -> SettledPage {
    db.list_settled(principal, request).unwrap()
}

fn ids_of(page: &SettledPage) -> Vec<String> {
    page.bundles
        .iter()
        .map(|detail| detail.bundle.pending_id.clone())
        .collect()
}

/// Every settled id the principal sees, paging `limit` at a time.
fn all_settled(db: &TestDb, principal: &Principal, request: SettledRequest) -> Vec<String> {
    let mut request = request;
    let mut seen = Vec::new();
    loop {
        let page = page(db, principal, &request);
        seen.extend(ids_of(&page));
        match page.next_cursor {
            Some(cursor) => request.cursor = Some(cursor),
            None => return seen,
        }
    }
}

fn settled(db: &TestDb, principal: &Principal) -> Vec<String> {
    all_settled(db, principal, SettledRequest::default())
}

dual_backend!(
    list_12_newest_resolution_first,
    list_13_pages_to_the_end_while_bundles_resolve,
    list_13_each_listings_cursor_refused_by_the_other,
    list_13_limit_and_arguments,
    list_12_foreign_bundles_and_permissions_for_agents_absent,
    list_12_workspace_filter,
    list_12_deadline_default_listed_decided_by_deadline,
    list_12_expired_superseded_and_due_unsettled_absent,
    list_12_resolved_then_superseded_listed,
    list_12_pruned_gone,
    list_12_degraded_resolutions_absent,
    list_13_elements_byte_equal_to_get_bundle,
    wire_6_decided_by_caller_winner_other_user_agent_system_deadline,
    list_13_through_the_doors
);

/// LIST-12: newest resolution first; at one resolution time, `pending_id`
/// descending. Answers, rejections and cancellations alike.
fn list_12_newest_resolution_first(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let ids: Vec<String> = (0..5).map(|_| ask(db, &session, 1)).collect();
    db.clock.advance_micros(SECOND);
    db.resolve_bundle(&alice(), &ids[3], &one_answer("x"))
        .unwrap();
    db.clock.advance_micros(SECOND);
    db.resolve_bundle(&alice(), &ids[0], &rejecting("no"))
        .unwrap();
    db.cancel_bundle(&alice(), &ids[4]).unwrap();
    db.clock.advance_micros(SECOND);
    db.cancel_bundle(&Principal::System, &ids[1]).unwrap();
    // ids[2] stays pending.
    let expected = [&ids[1], &ids[4], &ids[0], &ids[3]].map(String::clone);
    assert_eq!(settled(db, &alice()), expected);
    let page = page(db, &alice(), &SettledRequest::default());
    let statuses: Vec<&str> = page.bundles.iter().map(|d| d.status.as_str()).collect();
    assert_eq!(statuses, ["cancelled", "cancelled", "rejected", "answered"]);
}

/// LIST-13, LIST-8: paging to the end while bundles resolve between pages:
/// every bundle settled before the first page shows exactly once, in
/// order; those settled meanwhile sort before the cursor and show on no
/// later page.
fn list_13_pages_to_the_end_while_bundles_resolve(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let ids: Vec<String> = (0..12).map(|_| ask(db, &session, 1)).collect();
    for id in &ids[..8] {
        db.clock.advance_micros(SECOND);
        db.resolve_bundle(&alice(), id, &one_answer("x")).unwrap();
    }
    let before = settled(db, &alice());
    assert_eq!(before.len(), 8);
    let mut request = SettledRequest {
        limit: Some(3),
        ..SettledRequest::default()
    };
    let mut seen = Vec::new();
    let mut late = ids[8..].iter();
    let mut resolved_late = 0;
    loop {
        let page = page(db, &alice(), &request);
        seen.extend(ids_of(&page));
        if let Some(id) = late.next() {
            db.clock.advance_micros(SECOND);
            db.resolve_bundle(&alice(), id, &one_answer("late"))
                .unwrap();
            resolved_late += 1;
        }
        match page.next_cursor {
            Some(cursor) => request.cursor = Some(cursor),
            None => break,
        }
    }
    assert_eq!(seen, before, "each once, in order, none of the late ones");
    assert_eq!(resolved_late, 3, "three pages, one resolved after each");
    let now: Vec<String> = settled(db, &alice());
    assert_eq!(now.len(), 8 + resolved_late);
    assert_eq!(
        &now[resolved_late..],
        &before[..],
        "the late ones come first"
    );
}

/// LIST-13: each listing's cursor is versioned apart; the other's is the
/// malformed-cursor `400` naming `cursor`, through Rust and the JSON call.
fn list_13_each_listings_cursor_refused_by_the_other(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let ids: Vec<String> = (0..4).map(|_| ask(db, &session, 1)).collect();
    db.cancel_bundle(&alice(), &ids[0]).unwrap();
    db.cancel_bundle(&alice(), &ids[1]).unwrap();
    let one = |limit| Some(limit);
    let pending_cursor = db
        .list_pending(
            &alice(),
            &ListRequest {
                limit: one(1),
                ..ListRequest::default()
            },
        )
        .unwrap()
        .next_cursor
        .expect("two wait: a next page")
        .encode();
    let settled_cursor = page(
        db,
        &alice(),
        &SettledRequest {
            limit: one(1),
            ..SettledRequest::default()
        },
    )
    .next_cursor
    .expect("two settled: a next page")
    .encode();
    assert_eq!(
        SettledCursor::parse(&settled_cursor).unwrap().encode(),
        settled_cursor
    );
    assert_eq!(
        SettledCursor::parse(&pending_cursor).unwrap_err().field,
        "cursor"
    );
    assert_eq!(Cursor::parse(&settled_cursor).unwrap_err().field, "cursor");
    let refused = json!({"error": "cursor: malformed cursor"}).to_string();
    for (op, cursor) in [
        ("list_settled", &pending_cursor),
        ("list_pending", &settled_cursor),
    ] {
        let request = json!({"op": op, "principal": {"kind": "user", "user_id": "alice"},
            "args": {"cursor": cursor}});
        assert_eq!(
            call(db, &request.to_string()),
            (400, refused.clone()),
            "{op}"
        );
    }
}

/// LIST-13: `limit` as LIST-4 (below 1 is 50, above 200 is 200); an
/// unknown argument or a wrong type is a `400` naming it.
fn list_13_limit_and_arguments(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for _ in 0..205 {
        let id = ask(db, &session, 1);
        db.cancel_bundle(&alice(), &id).unwrap();
    }
    let count = |limit: Option<i64>| {
        page(
            db,
            &alice(),
            &SettledRequest {
                limit,
                ..SettledRequest::default()
            },
        )
        .bundles
        .len()
    };
    assert_eq!(count(None), 50);
    assert_eq!(count(Some(0)), 50);
    assert_eq!(count(Some(-3)), 50);
    assert_eq!(count(Some(7)), 7);
    assert_eq!(count(Some(500)), 200);
    for (args, field) in [
        (json!({"since": "x"}), "since"),
        (json!({"limit": "ten"}), "limit"),
        (json!({"workspace_id": 3}), "workspace_id"),
        (json!({"workspace_id": "w\u{0}"}), "workspace_id"),
    ] {
        let request = json!({"op": "list_settled", "principal": {"kind": "system"}, "args": args});
        let (status, body) = call(db, &request.to_string());
        assert_eq!(status, 400, "{body}");
        assert!(
            body.starts_with(&format!(r#"{{"error":"{field}: "#)),
            "{body}"
        );
    }
}

/// LIST-12, AUTH-3/4/6: a user sees the history of the bundles it may
/// see, never a foreign one; an agent never sees a permission bundle; a
/// principal without the read capability is refused (AUTH-2).
fn list_12_foreign_bundles_and_permissions_for_agents_absent(db: &TestDb) {
    let [alice_id, bob_id, open_id, none_id, dangling_id] = visibility_world(db, None);
    let permission = ask_permission(db, "s-alice", 1);
    for id in [
        &alice_id,
        &bob_id,
        &open_id,
        &none_id,
        &dangling_id,
        &permission,
    ] {
        db.clock.advance_micros(SECOND);
        db.cancel_bundle(&Principal::System, id).unwrap();
    }
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    let mut alice_sees = vec![
        alice_id.clone(),
        open_id.clone(),
        none_id.clone(),
        dangling_id.clone(),
    ];
    alice_sees.push(permission.clone());
    assert_eq!(sorted(settled(db, &alice())), sorted(alice_sees.clone()));
    alice_sees.retain(|id| id != &permission);
    assert_eq!(sorted(settled(db, &alice_bot())), sorted(alice_sees));
    let bob_sees = settled(db, &bob());
    assert!(bob_sees.contains(&bob_id));
    assert!(!bob_sees.contains(&alice_id) && !bob_sees.contains(&permission));
    assert_eq!(settled(db, &Principal::System).len(), 6);
    assert!(matches!(
        db.list_settled(
            &alice_bot_with([clarion::Grant::QuestionsAnswer]),
            &SettledRequest::default()
        ),
        Err(Error::CapabilityDenied)
    ));
    assert!(matches!(
        db.list_settled(&Principal::Unclassified, &SettledRequest::default()),
        Err(Error::CapabilityDenied)
    ));
}

/// LIST-12, LIST-4: the workspace filter narrows to bundles whose task is
/// in that workspace, and only narrows.
fn list_12_workspace_filter(db: &TestDb) {
    let [alice_id, bob_id, open_id, ..] = visibility_world(db, None);
    for id in [&alice_id, &bob_id, &open_id] {
        db.cancel_bundle(&Principal::System, id).unwrap();
    }
    let narrowed = |principal: &Principal, workspace: &str| {
        all_settled(
            db,
            principal,
            SettledRequest {
                workspace_id: Some(workspace.to_owned()),
                ..SettledRequest::default()
            },
        )
    };
    assert_eq!(narrowed(&alice(), "w-alice"), [alice_id]);
    assert_eq!(narrowed(&alice(), "w-open"), [open_id]);
    assert!(narrowed(&alice(), "w-bob").is_empty());
    assert_eq!(narrowed(&Principal::System, "w-bob"), [bob_id]);
    assert_eq!(
        all_settled(
            db,
            &alice(),
            SettledRequest {
                workspace_id: Some(String::new()),
                ..SettledRequest::default()
            }
        )
        .len(),
        2
    );
}

/// LIST-12, EXP-3: a deadline's default (answer or reject) is listed once
/// settled, `decided_by: deadline` and its deadline as resolution time;
/// before anyone settles it the due bundle is in neither listing (EXP-2:
/// listings never write); a deadline's `expire` is never listed.
fn list_12_deadline_default_listed_decided_by_deadline(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let rejected = ask_due(
        db,
        &session,
        Duration::from_secs(60),
        OnExpire::Reject {
            reject_reason: "too late".into(),
        },
    );
    let expired = ask_due(db, &session, Duration::from_secs(60), OnExpire::Expire);
    db.clock.advance_micros(61 * SECOND);
    assert!(
        settled(db, &alice()).is_empty(),
        "due, not settled: not listed"
    );
    assert!(db
        .list_pending(&alice(), &ListRequest::default())
        .unwrap()
        .bundles
        .is_empty());
    assert_eq!(db.expire_due(None).unwrap().settled, 2);
    let page = page(db, &alice(), &SettledRequest::default());
    assert_eq!(ids_of(&page), std::slice::from_ref(&rejected));
    let detail = &page.bundles[0];
    let response = detail.response.as_ref().unwrap();
    assert_eq!(response.decided_by.as_str(), "deadline");
    assert_eq!(response.reject_reason, "too late");
    assert_eq!(
        Some(response.responded_at.unwrap()),
        detail.bundle.expires_at
    );
    assert!(!detail.decided_by_caller);
    assert!(!settled(db, &Principal::System).contains(&expired));
}

/// LIST-12: bundles that ended without a resolution are not listed: a
/// session's end, a new turn, a due bundle nobody settled.
fn list_12_expired_superseded_and_due_unsettled_absent(db: &TestDb) {
    let ended = mirror(db, "ended", "alice");
    let expired = ask(db, &ended, 1);
    db.set_session_state(&ended, clarion::SessionState::Completed)
        .unwrap();
    let turned = mirror(db, "turned", "alice");
    let superseded = ask(db, &turned, 1);
    db.begin_turn(&turned).unwrap();
    let waiting = mirror(db, "waiting", "alice");
    let due = ask_due(
        db,
        &waiting,
        Duration::from_secs(5),
        OnExpire::Answer(vec![answer("q1", &["q1_opt1"], "")]),
    );
    db.clock.advance_micros(10 * SECOND);
    for id in [&expired, &superseded, &due] {
        assert!(db.get_bundle(&Principal::System, id).is_ok());
    }
    assert!(settled(db, &Principal::System).is_empty());
    assert!(settled(db, &alice()).is_empty());
}

/// LIST-12: whether the turn is still current plays no part: a bundle
/// resolved, then superseded by a new turn, stays in the history as
/// resolved.
fn list_12_resolved_then_superseded_listed(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &id, &one_answer("done"))
        .unwrap();
    db.begin_turn(&session).unwrap();
    let page = page(db, &alice(), &SettledRequest::default());
    assert_eq!(ids_of(&page), std::slice::from_ref(&id));
    assert_eq!(page.bundles[0].status.as_str(), "answered");
    assert_eq!(page.bundles[0], db.get_bundle(&alice(), &id).unwrap());
}

/// LIST-12, REL-8: what `prune` deletes leaves the history too.
fn list_12_pruned_gone(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let old = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &old, &one_answer("old"))
        .unwrap();
    db.ack_delivery(&old).unwrap();
    db.clock.advance_micros(3_600 * SECOND);
    let recent = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &recent, &one_answer("new"))
        .unwrap();
    db.ack_delivery(&recent).unwrap();
    assert_eq!(settled(db, &alice()), [recent.clone(), old.clone()]);
    assert_eq!(db.prune(Duration::from_secs(60)).unwrap(), 1);
    assert_eq!(settled(db, &alice()), [recent]);
}

/// LIST-12, DM-1: rows that carry a resolution status without a
/// resolution time (written outside clarion) are not listed, nor is a
/// bundle whose task cannot be resolved (LIST-9).
fn list_12_degraded_resolutions_absent(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let imported = ask(db, &session, 1);
    rows::answer_all(db, &imported);
    assert_eq!(
        db.get_bundle(&Principal::System, &imported)
            .unwrap()
            .status
            .as_str(),
        "answered"
    );
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "orphan", &session, &turn, "t-does-not-exist");
    rows::Row::new("orphan", &session, &turn).insert(db);
    // `system` may still cancel it by id (AUTH-4), which resolves it.
    assert!(
        db.cancel_bundle(&Principal::System, "orphan")
            .unwrap()
            .claimed
    );
    assert!(settled(db, &Principal::System).is_empty());
    assert!(settled(db, &alice()).is_empty());
}

/// LIST-13: every element is byte for byte the `get_bundle` body the same
/// principal gets — a user, an agent and `system` — answered, rejected,
/// cancelled, a deadline's default, with names and a deadline.
fn list_13_elements_byte_equal_to_get_bundle(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.upsert_workspace(WorkspaceUpsert::new("w-a").name("Alpha"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").title("Add login"))
        .unwrap();
    let answered = ask(db, &session, 2);
    let rejected = ask(db, &session, 1);
    let cancelled = ask(db, &session, 1);
    let defaulted = ask_due(
        db,
        &session,
        Duration::from_secs(5),
        OnExpire::Answer(vec![answer("q1", &["q1_opt2"], " default ")]),
    );
    db.clock.advance_micros(2 * SECOND);
    db.resolve_bundle(
        &alice_bot(),
        &answered,
        &answering(vec![answer("q1", &["q1_opt1"], "a"), answer("q2", &[], "")]),
    )
    .unwrap();
    db.resolve_bundle(&alice(), &rejected, &rejecting("no"))
        .unwrap();
    db.cancel_bundle(&Principal::System, &cancelled).unwrap();
    db.clock.advance_micros(10 * SECOND);
    db.expire_due(None).unwrap();
    for principal in [alice(), alice_bot(), Principal::System] {
        let page = page(db, &principal, &SettledRequest::default());
        assert_eq!(page.bundles.len(), 4, "{principal:?}");
        for element in &page.bundles {
            let alone = db
                .get_bundle(&principal, &element.bundle.pending_id)
                .unwrap();
            assert_eq!(
                envelope::bundle_detail(element).body_text(),
                envelope::bundle_detail(&alone).body_text(),
                "{principal:?}"
            );
        }
        let raw: Value = envelope::settled_page(&page).body;
        let keys: Vec<&str> = raw["bundles"][0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            &keys[keys.len() - 5..],
            [
                "status",
                "response",
                "default_response",
                "decided_by_caller",
                "may_vote"
            ]
        );
        assert_eq!(raw["bundles"][0]["workspace_name"], json!("Alpha"));
    }
    let _ = defaulted;
}

/// WIRE-6: `decided_by_caller` is true for the winner only — the same
/// user, the same agent of the same user, `system` for its own — and false
/// for another user, another agent, the owner of a deciding agent and a
/// deadline's default; false while unresolved.
fn wire_6_decided_by_caller_winner_other_user_agent_system_deadline(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w-open").owner(""))
        .unwrap();
    let session = session_in(db, "open", "w-open", None);
    let by_alice = ask(db, &session, 1);
    let by_bot = ask(db, &session, 1);
    let by_system = ask(db, &session, 1);
    let by_deadline = ask_due(
        db,
        &session,
        Duration::from_secs(5),
        OnExpire::Reject {
            reject_reason: String::new(),
        },
    );
    let unresolved = ask(db, &session, 1);
    assert!(
        !db.get_bundle(&alice(), &unresolved)
            .unwrap()
            .decided_by_caller
    );
    db.cancel_bundle(&alice(), &by_alice).unwrap();
    db.resolve_bundle(&alice_bot(), &by_bot, &one_answer("bot"))
        .unwrap();
    db.cancel_bundle(&Principal::System, &by_system).unwrap();
    db.clock.advance_micros(10 * SECOND);
    let mine =
        |principal: &Principal, id: &str| db.get_bundle(principal, id).unwrap().decided_by_caller;
    assert!(mine(&alice(), &by_alice));
    assert!(!mine(&bob(), &by_alice));
    assert!(!mine(&alice_bot(), &by_alice));
    assert!(!mine(&Principal::System, &by_alice));
    assert!(mine(&alice_bot(), &by_bot));
    assert!(mine(
        &Principal::agent("alice", "bot", [clarion::Grant::QuestionsRead]),
        &by_bot
    ));
    assert!(!mine(&alice(), &by_bot));
    assert!(!mine(
        &Principal::agent("alice", "other", clarion::Grant::ALL),
        &by_bot
    ));
    assert!(!mine(
        &Principal::agent("bob", "bot", clarion::Grant::ALL),
        &by_bot
    ));
    assert!(mine(&Principal::System, &by_system));
    assert!(!mine(&alice(), &by_system));
    assert!(!mine(&Principal::System, &by_deadline));
    assert!(!mine(&alice(), &by_deadline));
    // The history says the same, once the deadline's default is settled.
    db.expire_due(None).unwrap();
    let listed: Vec<(String, bool)> = page(db, &alice(), &SettledRequest::default())
        .bundles
        .into_iter()
        .map(|d| (d.bundle.pending_id, d.decided_by_caller))
        .collect();
    assert!(listed.contains(&(by_alice, true)));
    assert!(listed.contains(&(by_bot, false)));
    assert!(listed.contains(&(by_deadline, false)));
}

/// LIST-13 through the doors: `GET /api/v1/history` and `/rpc/list_settled`
/// answer the library's envelope byte for byte; an unknown or repeated
/// query parameter is a `400` naming it; `clarion history` prints the same.
fn list_13_through_the_doors(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let ids: Vec<String> = (0..3).map(|_| ask(db, &session, 1)).collect();
    for id in &ids {
        db.clock.advance_micros(SECOND);
        db.resolve_bundle(&alice(), id, &one_answer("x")).unwrap();
    }
    let expected = envelope::settled_page(&page(
        db,
        &alice(),
        &SettledRequest {
            limit: Some(2),
            workspace_id: Some("w-a".into()),
            ..SettledRequest::default()
        },
    ))
    .body_text();
    let server = start(db);
    let t = tokens(db);
    let got = get(
        &server,
        &t.alice,
        "/api/v1/history?limit=2&workspace_id=w-a",
    );
    assert_eq!((got.status, got.body.clone()), (200, expected.clone()));
    assert_eq!(got.header("cache-control"), Some("no-store"));
    let rpc = post(
        &server,
        &t.alice,
        "/api/v1/rpc/list_settled",
        r#"{"limit": 2, "workspace_id": "w-a"}"#,
    );
    assert_eq!((rpc.status, rpc.body.clone()), (200, expected));
    let next: Value = got.json();
    let cursor = next["next_cursor"].as_str().unwrap();
    let rest = get(
        &server,
        &t.alice,
        &format!("/api/v1/history?cursor={cursor}"),
    );
    assert_eq!(rest.json()["bundles"][0]["pending_id"], json!(ids[0]));
    let unknown = get(&server, &t.alice, "/api/v1/history?since=1");
    assert_eq!(unknown.status, 400);
    assert!(unknown.text().contains("since"), "{}", unknown.text());
    let repeated = get(&server, &t.alice, "/api/v1/history?limit=1&limit=2");
    assert_eq!(repeated.status, 400);
    let denied = get(&server, &t.alice_bot_none, "/api/v1/history");
    assert_eq!(denied.status, 403);
    let bob = get(&server, &t.bob, "/api/v1/history");
    assert_eq!(bob.json()["count"], json!(0));
    server.stop();

    let output = clarion(&[
        "history",
        "--database-url",
        &db.url,
        "--as",
        "user:alice",
        "--limit",
        "1",
    ]);
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["status"], json!(200));
    assert_eq!(printed["body"]["bundles"][0]["pending_id"], json!(ids[2]));
}
