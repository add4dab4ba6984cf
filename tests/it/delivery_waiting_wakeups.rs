//! How a waiter learns of an event (WAIT-3): through the same handle a
//! notification wakes it at once, through another handle its poll sees the
//! commit. Waiters on one bundle share its outcome and keep their own
//! timeouts (WAIT-4); closing a handle wakes its blocked waits (REL-7).
//!
//! Timing discipline: see [`crate::delivery_waiting_support`].

use std::time::{Duration, Instant};

use clarion::envelope;
use clarion::{BundleStatus, Entity, Error, SessionState, WaitOutcome};

use crate::delivery_waiting_support::*;
use crate::support::rows;
use crate::support::*;

// ---- WAIT-3 --------------------------------------------------------------------

dual_backend!(
    wait_3_a_resolution_through_another_handle_is_seen_by_polling,
    wait_3_a_resolution_through_the_same_handle_wakes_at_once,
    wait_3_other_events_through_another_handle_are_seen_by_polling
);

/// WAIT-3: a resolution committed through another handle is seen within
/// the waiter's poll interval.
fn wait_3_a_resolution_through_another_handle_is_seen_by_polling(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let waiting = db.reopen_polling(FAST_POLL);
    let other = db.reopen();
    let id = ask(&other, &session, 1);
    let waiter = already_waiting(&waiting, || spawn_wait(&waiting, &id, LONG_WAIT));
    let resolved = other
        .resolve_bundle(&alice(), &id, &one_answer("elsewhere"))
        .unwrap();
    assert_eq!(waiter.within(PROMPT).unwrap(), outcome_for(&resolved));
    assert!(!undelivered(db, &id));
}

/// WAIT-3: a resolution committed through the same handle wakes the
/// waiter at once even though the handle polls only every 60 s.
fn wait_3_a_resolution_through_the_same_handle_wakes_at_once(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let waiter = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
    let resolved = h
        .resolve_bundle(&alice(), &id, &one_answer("here"))
        .unwrap();
    assert_eq!(waiter.within(PROMPT).unwrap(), outcome_for(&resolved));
}

/// WAIT-3: supersession, expiry and deletion through another handle are
/// seen within the poll interval too.
fn wait_3_other_events_through_another_handle_are_seen_by_polling(db: &TestDb) {
    let waiting = db.reopen_polling(FAST_POLL);
    let other = db.reopen();
    let superseded = mirror(db, "a", "alice");
    let expired = mirror(db, "b", "alice");
    let deleted = mirror(db, "c", "alice");
    let ids = [&superseded, &expired, &deleted].map(|session| ask(&other, session, 1));
    let waiters = ids
        .each_ref()
        .map(|id| already_waiting(&waiting, || spawn_wait(&waiting, id, LONG_WAIT)));
    other.begin_turn(&superseded).unwrap();
    other
        .set_session_state(&expired, SessionState::Cancelled)
        .unwrap();
    other.delete_session(&deleted).unwrap();
    let [first, second, third] = waiters;
    assert_eq!(first.within(PROMPT).unwrap(), WaitOutcome::Superseded);
    assert_eq!(second.within(PROMPT).unwrap(), WaitOutcome::Expired);
    let error = third.within(PROMPT).unwrap_err();
    assert!(
        matches!(error, Error::NotFound(Entity::Bundle)),
        "{error:?}"
    );
}

// ---- WAIT-4 --------------------------------------------------------------------

dual_backend!(
    wait_4_waiters_share_the_outcome_and_keep_their_own_timeouts,
    wait_4_waiters_share_a_supersession
);

/// WAIT-4: five waiters on one bundle all get the same answer; others
/// with their own short timeouts return `timed_out` meanwhile without
/// disturbing them (nor detaching the bundle under them).
fn wait_4_waiters_share_the_outcome_and_keep_their_own_timeouts(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let waiters: Vec<_> = (0..5)
        .map(|_| already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT)))
        .collect();
    assert_eq!(h.wait(&id, Duration::ZERO).unwrap(), WaitOutcome::TimedOut);
    let started = Instant::now();
    assert_eq!(
        h.wait(&id, Duration::from_millis(200)).unwrap(),
        WaitOutcome::TimedOut
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(
        waiters.iter().all(Waiting::is_waiting),
        "the others keep waiting"
    );
    assert!(!rows::detached(db, &id));
    let resolved = h
        .resolve_bundle(&alice(), &id, &one_answer("for all"))
        .unwrap();
    for waiter in waiters {
        assert_eq!(waiter.within(PROMPT).unwrap(), outcome_for(&resolved));
    }
}

/// WAIT-4: the same holds for an event other than a resolution.
fn wait_4_waiters_share_a_supersession(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let waiters: Vec<_> = (0..5)
        .map(|_| already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT)))
        .collect();
    h.begin_turn(&session).unwrap();
    for waiter in waiters {
        assert_eq!(waiter.within(PROMPT).unwrap(), WaitOutcome::Superseded);
    }
}

dual_backend!(rel_7_close_wakes_blocked_waits);

/// REL-7 through the Rust API: closing a handle wakes its blocked waits
/// at once with `HandleClosed` (503 on the wire), detaches nothing
/// (WAIT-1b), and every later call on any clone fails the same way.
fn rel_7_close_wakes_blocked_waits(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let handle = db.reopen_polling(NO_POLL);
    let id = ask(db, &session, 1);
    let agent = already_waiting(&handle, || spawn_wait(&handle, &id, LONG_WAIT));
    let human = already_waiting(&handle, || {
        spawn_wait_bundle(&handle, alice(), &id, LONG_WAIT)
    });
    handle.clone().close();
    assert!(matches!(agent.within(PROMPT), Err(Error::HandleClosed)));
    let human = human.within(PROMPT);
    assert!(matches!(human, Err(Error::HandleClosed)), "{human:?}");
    assert_eq!(
        envelope::error(&Error::HandleClosed).body_text(),
        r#"{"error":"handle closed"}"#
    );
    assert_eq!(envelope::error(&Error::HandleClosed).status, 503);
    assert!(matches!(handle.summary(&alice()), Err(Error::HandleClosed)));
    assert!(
        !rows::detached(db, &id),
        "a closed handle's wait detaches nothing"
    );
    assert_eq!(
        db.get_bundle(&alice(), &id).unwrap().status,
        BundleStatus::Pending
    );
}
