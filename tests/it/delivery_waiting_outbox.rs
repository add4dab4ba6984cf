//! The transactional outbox (DEL-1..3, LIFE-8): the claim marks a
//! resolution undelivered; a detached bundle's resolution is an entry,
//! oldest first, until it is acknowledged or its session deleted; a later
//! `wait` receives and acknowledges it (WAIT-2).
//!
//! Timing discipline: see [`crate::delivery_waiting_support`].

use clarion::envelope;
use clarion::{BundleStatus, Principal, SessionState};

use crate::delivery_waiting_support::*;
use crate::support::rows;
use crate::support::*;

// ---- WAIT-2 --------------------------------------------------------------------

dual_backend!(
    wait_2_a_later_wait_receives_and_acknowledges_an_outbox_entry,
    wait_2_a_received_resolution_never_reaches_the_outbox
);

/// WAIT-2, DEL-3: a detached bundle's resolution sits in the outbox until
/// a later `wait` receives it, which acknowledges it.
fn wait_2_a_later_wait_receives_and_acknowledges_an_outbox_entry(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 2);
    h.detach_session(&session).unwrap();
    let resolved = h.resolve_bundle(&alice(), &id, &two_answers()).unwrap();
    assert_eq!(outbox(db), vec![id.clone()]);
    assert!(undelivered(db, &id));
    assert_eq!(
        promptly(PROMPT, || h.wait(&id, LONG_WAIT)).unwrap(),
        outcome_for(&resolved)
    );
    assert!(outbox(db).is_empty());
    assert!(!undelivered(db, &id));
}

/// WAIT-2, LIFE-5: a resolution a live waiter already received is not
/// put into the outbox by a later detach.
fn wait_2_a_received_resolution_never_reaches_the_outbox(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let waiter = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
    let resolved = h.resolve_bundle(&alice(), &id, &one_answer("")).unwrap();
    assert_eq!(waiter.within(PROMPT).unwrap(), outcome_for(&resolved));
    h.detach_session(&session).unwrap();
    assert!(outbox(db).is_empty());
}

// ---- DEL-1..3, LIFE-5, LIFE-8: the outbox ---------------------------------------

dual_backend!(
    del_1_the_claim_marks_the_resolution_undelivered,
    del_3_detached_before_the_answer_is_an_outbox_entry,
    del_3_detached_after_the_answer_is_an_outbox_entry,
    del_3_an_entry_stays_until_acknowledged_or_deleted,
    del_3_oldest_resolution_first,
    life_8_pending_deliveries_limit,
    life_8_ack_delivery
);

/// DEL-1, CLAIM-3: the claim itself marks the resolution undelivered; an
/// attached bundle's resolution is not an outbox entry (its agent may
/// still wait for it).
fn del_1_the_claim_marks_the_resolution_undelivered(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let answered = ask(db, &session, 1);
    let cancelled = ask(db, &session, 1);
    assert!(!undelivered(db, &answered));
    db.resolve_bundle(&alice(), &answered, &one_answer(""))
        .unwrap();
    db.cancel_bundle(&alice(), &cancelled).unwrap();
    assert!(undelivered(db, &answered));
    assert!(undelivered(db, &cancelled));
    assert!(outbox(db).is_empty());
}

/// DEL-3: a bundle detached before its answer is an outbox entry with
/// every field: pending_id, task_id, session_id, status, the LIST-6
/// questions and the WIRE-2 response.
fn del_3_detached_before_the_answer_is_an_outbox_entry(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let id = ask(db, &session, 2);
    db.detach_session(&session).unwrap();
    assert!(rows::detached(db, &id));
    let resolved = db.resolve_bundle(&alice(), &id, &two_answers()).unwrap();
    assert!(resolved.claimed);
    let entries = db.pending_deliveries(None).unwrap();
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry.pending_id, id);
    assert_eq!(entry.task_id, "t-x");
    assert_eq!(entry.session_id, session);
    assert_eq!(entry.status, BundleStatus::Answered);
    assert_eq!(entry.response, resolved.response);
    let questions: Vec<(&str, &str)> = entry
        .questions
        .iter()
        .map(|q| (q.question_id.as_str(), q.status.as_str()))
        .collect();
    assert_eq!(questions, [("q1", "answered"), ("q2", "answered")]);
    assert_eq!(entry.questions[0].options.len(), 2);
    assert_eq!(entry.questions[0].prompt, "question 1?");
    assert_eq!(*entry, expected_delivery(db, &id));
}

/// DEL-3, LIFE-5: a bundle detached after it was answered (resolved but
/// undelivered) is an outbox entry too; a bundle asked after the detach
/// is not detached.
fn del_3_detached_after_the_answer_is_an_outbox_entry(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let id = ask(db, &session, 1);
    let resolved = db
        .resolve_bundle(&alice(), &id, &rejecting("wrong plan"))
        .unwrap();
    assert!(outbox(db).is_empty());
    db.detach_session(&session).unwrap();
    assert!(rows::detached(db, &id));
    let entries = db.pending_deliveries(None).unwrap();
    assert_eq!(entries, [expected_delivery(db, &id)]);
    assert_eq!(entries[0].status, BundleStatus::Rejected);
    assert_eq!(entries[0].response, resolved.response);
    // Repeating the detach changes nothing.
    db.detach_session(&session).unwrap();
    assert_eq!(db.pending_deliveries(None).unwrap(), entries);
    let later = ask(db, &session, 1);
    assert!(!rows::detached(db, &later));
}

/// DEL-3, LIFE-1: an entry stays whatever happens to the turn or the
/// session afterwards, until the session is deleted (no agent is left).
fn del_3_an_entry_stays_until_acknowledged_or_deleted(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let id = ask(db, &session, 1);
    db.detach_session(&session).unwrap();
    db.resolve_bundle(&alice(), &id, &one_answer("")).unwrap();
    db.begin_turn(&session).unwrap();
    assert_eq!(outbox(db), vec![id.clone()]);
    db.set_session_state(&session, SessionState::Completed)
        .unwrap();
    assert_eq!(outbox(db), vec![id.clone()]);
    db.delete_session(&session).unwrap();
    assert!(outbox(db).is_empty());
}

/// DEL-3, DEL-5: oldest resolution first (`responded_at`, then
/// `pending_id`); rejections and cancellations travel the same way.
fn del_3_oldest_resolution_first(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let ids: Vec<String> = (0..4).map(|_| ask(db, &session, 1)).collect();
    db.detach_session(&session).unwrap();
    db.clock.advance_micros(1_000_000);
    db.resolve_bundle(&alice(), &ids[2], &one_answer("third asked"))
        .unwrap();
    db.clock.advance_micros(1_000_000);
    db.resolve_bundle(&alice(), &ids[0], &rejecting("first asked"))
        .unwrap();
    db.clock.advance_micros(1_000_000);
    // Same claim time: the pending_id decides.
    db.cancel_bundle(&alice(), &ids[3]).unwrap();
    db.cancel_bundle(&alice(), &ids[1]).unwrap();
    let entries = db.pending_deliveries(None).unwrap();
    let order: Vec<(&str, BundleStatus)> = entries
        .iter()
        .map(|entry| (entry.pending_id.as_str(), entry.status))
        .collect();
    assert_eq!(
        order,
        [
            (ids[2].as_str(), BundleStatus::Answered),
            (ids[0].as_str(), BundleStatus::Rejected),
            (ids[1].as_str(), BundleStatus::Cancelled),
            (ids[3].as_str(), BundleStatus::Cancelled),
        ]
    );
    let times: Vec<_> = entries.iter().map(|e| e.response.responded_at).collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{times:?}");
    for entry in &entries {
        assert_eq!(*entry, expected_delivery(db, &entry.pending_id));
    }
}

/// LIFE-8: `limit` defaults to 50, below 1 means 50, above 200 is
/// clamped to 200; a page is the oldest entries.
fn life_8_pending_deliveries_limit(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let ids: Vec<String> = (0..205).map(|_| ask(db, &session, 1)).collect();
    db.detach_session(&session).unwrap();
    for id in ids.iter().rev() {
        db.clock.advance_micros(1);
        db.cancel_bundle(&Principal::System, id).unwrap();
    }
    let oldest_first: Vec<String> = ids.iter().rev().cloned().collect();
    let page = |limit: Option<i64>| -> Vec<String> {
        db.pending_deliveries(limit)
            .unwrap()
            .into_iter()
            .map(|entry| entry.pending_id)
            .collect()
    };
    for (limit, expected) in [
        (None, 50),
        (Some(0), 50),
        (Some(-1), 50),
        (Some(i64::MIN), 50),
        (Some(1), 1),
        (Some(7), 7),
        (Some(200), 200),
        (Some(201), 200),
        (Some(i64::MAX), 200),
    ] {
        assert_eq!(page(limit), oldest_first[..expected], "limit {limit:?}");
    }
}

/// LIFE-8: acknowledging removes the entry; twice, an unknown id and an
/// unresolved bundle are fine and change nothing; an acknowledged
/// unresolved bundle's later resolution is still delivered.
fn life_8_ack_delivery(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 1);
    let unresolved = ask(db, &session, 1);
    db.detach_session(&session).unwrap();
    db.resolve_bundle(&alice(), &first, &one_answer(""))
        .unwrap();
    db.clock.advance_micros(10);
    db.resolve_bundle(&alice(), &second, &one_answer(""))
        .unwrap();
    assert_eq!(outbox(db), [first.clone(), second.clone()]);

    db.ack_delivery(&first).unwrap();
    assert_eq!(outbox(db), vec![second.clone()]);
    assert!(!undelivered(db, &first));
    assert_eq!(
        status(db, &first),
        BundleStatus::Answered,
        "acknowledging un-answers nothing"
    );
    db.ack_delivery(&first).unwrap();
    db.ack_delivery("pending-999999").unwrap();
    assert_eq!(outbox(db), vec![second.clone()]);

    db.ack_delivery(&unresolved).unwrap();
    assert_eq!(outbox(db), vec![second.clone()]);
    assert!(!undelivered(db, &unresolved));
    assert!(rows::detached(db, &unresolved));
    assert_eq!(status(db, &unresolved), BundleStatus::Pending);
    db.clock.advance_micros(10);
    let resolved = db
        .resolve_bundle(&alice(), &unresolved, &one_answer(""))
        .unwrap();
    assert!(resolved.claimed);
    assert_eq!(outbox(db), [second.clone(), unresolved.clone()]);
    assert_eq!(envelope::ok().body_text(), r#"{"ok":true}"#);
}
