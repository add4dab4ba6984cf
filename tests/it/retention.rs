//! REL-8: `prune` deletes, in batches, bundles that stopped being active
//! before the cutoff — resolved and acknowledged, expired, superseded —
//! with their rows; never an active bundle or an undelivered resolution.

use std::time::Duration;

use clarion::test_hooks::schema::{bundle_questions, bundles};
use clarion::{Clarion, Entity, Error, Principal, SessionState};
use diesel::prelude::*;
use serde_json::json;

use crate::support::*;

const DAY_MICROS: i64 = 86_400_000_000;

/// One bundle in each state, on a session of its own: returns its id.
struct World {
    active: String,
    acknowledged: String,
    undelivered: String,
    expired: String,
    superseded: String,
}

fn world(db: &TestDb, tag: &str) -> World {
    let session = |name: &str| mirror(db, &format!("{tag}-{name}"), "alice");
    let active = ask(db, &session("active"), 1);
    let acknowledged = {
        let s = session("ack");
        let id = ask(db, &s, 1);
        db.resolve_bundle(&alice(), &id, &one_answer("done"))
            .unwrap();
        db.ack_delivery(&id).unwrap();
        id
    };
    let undelivered = {
        let s = session("undelivered");
        let id = ask(db, &s, 1);
        db.detach_session(&s).unwrap();
        db.resolve_bundle(&alice(), &id, &one_answer("waiting for its agent"))
            .unwrap();
        id
    };
    let expired = {
        let s = session("expired");
        let id = ask(db, &s, 2);
        db.set_session_state(&s, SessionState::Completed).unwrap();
        id
    };
    let superseded = {
        let s = session("superseded");
        let id = ask(db, &s, 1);
        db.begin_turn(&s).unwrap();
        id
    };
    World {
        active,
        acknowledged,
        undelivered,
        expired,
        superseded,
    }
}

fn exists(db: &Clarion, pending_id: &str) -> bool {
    !matches!(
        db.get_bundle(&Principal::System, pending_id),
        Err(Error::NotFound(Entity::Bundle))
    )
}

fn rows_of(db: &TestDb, pending_id: &str) -> i64 {
    db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .count()
            .get_result(conn)
            .unwrap()
    })
}

dual_backend!(
    rel_8_prune_deletes_only_what_stopped_being_active_before_the_cutoff,
    rel_8_prune_works_in_batches,
    rel_8_prune_through_the_json_door,
    rel_8_prune_never_touches_a_due_bundle
);

/// REL-8, EXP-2: a bundle whose deadline passed long ago but that nothing
/// settled is due, not inactive: prune keeps it, however old.
fn rel_8_prune_never_touches_a_due_bundle(db: &TestDb) {
    let session = mirror(db, "due", "alice");
    let due = ask(db, &session, 1);
    let asked_at = clarion::Clock::now(&*db.clock).as_micros();
    crate::support::rows::set_deadline(db, &due, Some(asked_at + 1_000_000));
    db.clock.advance_micros(1000 * DAY_MICROS);
    assert_eq!(crate::support::rows::due_ids(db), [due.as_str()]);
    assert_eq!(db.prune(Duration::ZERO).unwrap(), 0);
    assert!(exists(db, &due), "a due bundle stays until it is settled");
}

/// REL-8: a world mixing every state, half of it older than the cutoff:
/// exactly the old acknowledged, expired and superseded bundles go,
/// with their rows; the active one, the undelivered one and everything
/// newer stay. A second prune deletes nothing.
fn rel_8_prune_deletes_only_what_stopped_being_active_before_the_cutoff(db: &TestDb) {
    let old = world(db, "old");
    db.clock.advance_micros(10 * DAY_MICROS);
    let new = world(db, "new");
    db.clock.advance_micros(DAY_MICROS / 2);

    let pruned = db.prune(Duration::from_secs(86_400)).unwrap();
    assert_eq!(pruned, 3);
    for gone in [&old.acknowledged, &old.expired, &old.superseded] {
        assert!(!exists(db, gone), "{gone} should be pruned");
        assert_eq!(rows_of(db, gone), 0, "its rows go with it");
    }
    for kept in [
        &old.active,
        &old.undelivered,
        &new.active,
        &new.acknowledged,
        &new.undelivered,
        &new.expired,
        &new.superseded,
    ] {
        assert!(exists(db, kept), "{kept} must stay");
    }
    assert_eq!(
        db.list_pending(&alice(), &Default::default())
            .unwrap()
            .bundles
            .len(),
        2,
        "both active bundles stay listed"
    );
    assert_eq!(
        db.pending_deliveries(None).unwrap().len(),
        2,
        "undelivered answers stay in the outbox"
    );
    assert_eq!(db.prune(Duration::from_secs(86_400)).unwrap(), 0);

    // A much older active bundle is never pruned, however old.
    db.clock.advance_micros(1000 * DAY_MICROS);
    assert_eq!(
        db.prune(Duration::ZERO).unwrap(),
        3,
        "the new acknowledged, expired and superseded ones, nothing else"
    );
    assert!(exists(db, &old.active) && exists(db, &new.active));
    assert!(exists(db, &old.undelivered) && exists(db, &new.undelivered));
}

/// REL-8: more than one batch (500) is pruned in one call.
fn rel_8_prune_works_in_batches(db: &TestDb) {
    let session = mirror(db, "many", "alice");
    let ids: Vec<String> = (0..520).map(|_| ask(db, &session, 1)).collect();
    db.begin_turn(&session).unwrap();
    db.clock.advance_micros(2 * DAY_MICROS);
    assert_eq!(db.prune(Duration::from_secs(86_400)).unwrap(), 520);
    let left: i64 = db.raw(|conn| bundles::table.count().get_result(conn).unwrap());
    assert_eq!(left, 0);
    assert!(!exists(db, &ids[0]));
}

/// REL-8 through WIRE-5: `prune {older_than_ms}` is a host operation
/// answering `{"pruned": n}`; a missing or negative age is a 400.
fn rel_8_prune_through_the_json_door(db: &TestDb) {
    let session = mirror(db, "p", "alice");
    ask(db, &session, 1);
    db.begin_turn(&session).unwrap();
    db.clock.advance_micros(2 * DAY_MICROS);
    let call = |principal: serde_json::Value, args: serde_json::Value| {
        db.call_value(&json!({"op": "prune", "principal": principal, "args": args}))
    };
    let denied = call(
        json!({"kind": "user", "user_id": "alice"}),
        json!({"older_than_ms": 0}),
    );
    assert_eq!(denied.status, 403);
    assert_eq!(
        call(json!({"kind": "system"}), json!({})).body_text(),
        r#"{"error":"older_than_ms: required"}"#
    );
    assert_eq!(
        call(json!({"kind": "system"}), json!({"older_than_ms": -1})).status,
        400
    );
    let pruned = call(
        json!({"kind": "system"}),
        json!({"older_than_ms": 86_400_000}),
    );
    assert_eq!(pruned.body_text(), r#"{"pruned":1}"#);
}
