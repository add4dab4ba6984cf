//! WAIT-3/4, issue "no lost wake-ups": every event that ends a wait is
//! injected exactly in the window between the waiter reading the bundle and
//! going to sleep — where a lost wake-up would hide. The waiter polls only
//! once a minute, so it can only return promptly if the event's
//! notification was kept for it. Deterministic: a gate, not a sleep, orders
//! the two threads.

use std::time::{Duration, Instant};

use clarion::test_hooks::{points, FailAction, Gate};
use clarion::{Clarion, SessionState, WaitOutcome};

use crate::support::*;

/// Starts a waiter (poll interval one minute), stops it right before it
/// sleeps, runs `event`, lets it go, and returns its outcome and how long it
/// took after the gate opened.
fn event_in_the_gap(
    db: &TestDb,
    event: impl FnOnce(&Clarion, &str, &str),
) -> (clarion::Result<WaitOutcome>, Duration) {
    let handle = db.reopen_polling(Duration::from_secs(60));
    let session = mirror(&handle, "g", "alice");
    let pending_id = handle.ask(&ask_request(&session, 1)).unwrap().pending_id;
    let gate = Gate::new();
    handle.arm_failpoint(points::WAIT_BEFORE_SLEEP, FailAction::Block(gate.clone()));
    let waiter = {
        let handle = handle.clone();
        let pending_id = pending_id.clone();
        std::thread::spawn(move || handle.wait(&pending_id, Duration::from_secs(45)))
    };
    assert!(
        gate.wait_arrival(Duration::from_secs(10)),
        "the waiter never reached its sleep"
    );
    handle.disarm_failpoint(points::WAIT_BEFORE_SLEEP);
    event(&handle, &session, &pending_id);
    let opened = Instant::now();
    gate.open();
    let outcome = waiter.join().unwrap();
    (outcome, opened.elapsed())
}

fn assert_prompt(took: Duration) {
    assert!(
        took < Duration::from_secs(20),
        "woken by the poll ({took:?}), not by the notification: a lost wake-up"
    );
}

dual_backend!(
    wait_3_resolve_in_the_gap_is_not_lost,
    wait_3_cancel_in_the_gap_is_not_lost,
    wait_3_detach_in_the_gap_is_not_lost,
    wait_3_expiry_in_the_gap_is_not_lost,
    wait_3_new_turn_in_the_gap_is_not_lost,
    wait_1_deletion_in_the_gap_is_not_found
);

fn wait_3_resolve_in_the_gap_is_not_lost(db: &TestDb) {
    let (outcome, took) = event_in_the_gap(db, |h, _, p| {
        h.resolve_bundle(&alice(), p, &one_answer("")).unwrap();
    });
    assert!(
        matches!(outcome, Ok(WaitOutcome::Answered(_))),
        "{outcome:?}"
    );
    assert_prompt(took);
}

fn wait_3_cancel_in_the_gap_is_not_lost(db: &TestDb) {
    let (outcome, took) = event_in_the_gap(db, |h, _, p| {
        h.cancel_bundle(&alice(), p).unwrap();
    });
    assert!(
        matches!(outcome, Ok(WaitOutcome::Cancelled(_))),
        "{outcome:?}"
    );
    assert_prompt(took);
}

fn wait_3_detach_in_the_gap_is_not_lost(db: &TestDb) {
    let (outcome, took) = event_in_the_gap(db, |h, s, _| h.detach_session(s).unwrap());
    assert!(matches!(outcome, Ok(WaitOutcome::Detached)), "{outcome:?}");
    assert_prompt(took);
}

fn wait_3_expiry_in_the_gap_is_not_lost(db: &TestDb) {
    let (outcome, took) = event_in_the_gap(db, |h, s, _| {
        h.set_session_state(s, SessionState::Failed).unwrap()
    });
    assert!(matches!(outcome, Ok(WaitOutcome::Expired)), "{outcome:?}");
    assert_prompt(took);
}

fn wait_3_new_turn_in_the_gap_is_not_lost(db: &TestDb) {
    let (outcome, took) = event_in_the_gap(db, |h, s, _| {
        h.begin_turn(s).unwrap();
    });
    assert!(
        matches!(outcome, Ok(WaitOutcome::Superseded)),
        "{outcome:?}"
    );
    assert_prompt(took);
}

fn wait_1_deletion_in_the_gap_is_not_found(db: &TestDb) {
    let (outcome, took) = event_in_the_gap(db, |h, s, _| h.delete_session(s).unwrap());
    assert!(
        matches!(
            outcome,
            Err(clarion::Error::NotFound(clarion::Entity::Bundle))
        ),
        "{outcome:?}"
    );
    assert_prompt(took);
}
