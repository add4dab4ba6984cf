//! The agent-side `wait` and its outcomes (WAIT-1): a resolution, expiry,
//! supersession, detachment, a timeout or a deletion wakes a waiting agent
//! with what `get_bundle` reports; a settled bundle returns at once, and a
//! read overlapping a commit or a deletion returns the committed state.
//!
//! Timing discipline: see [`crate::delivery_waiting_support`].

use std::time::{Duration, Instant};

use clarion::envelope;
use clarion::{
    BundleStatus, Clarion, Entity, Error, Principal, Resolved, SessionState, WaitOutcome,
};

use crate::delivery_waiting_support::*;
use crate::support::rows;
use crate::support::*;

// ---- WAIT-1: outcomes -------------------------------------------------------

dual_backend!(
    wait_1_resolutions_wake_the_waiter_with_the_stored_response,
    wait_1_expired_when_the_session_ends,
    wait_1_superseded_by_a_new_turn,
    wait_1_detached_while_waiting,
    wait_1_waiting_on_a_detached_bundle_receives_its_answer,
    wait_1_timeout_zero_checks_once,
    wait_1_timed_out_after_its_timeout,
    wait_1_unknown_bundle_is_not_found,
    wait_1_deleted_while_waited_on_is_not_found
);

/// WAIT-1, WAIT-3, DEL-2: answered, rejected (with its reason) and
/// cancelled wake a waiter that is already waiting with the WIRE-2
/// response `get_bundle` reports; the handle's poll is 60 s, so the
/// wake-up is a notification. (Resolutions before the wait: the
/// "settled" test; during a read: the "overlapping" test.)
fn wait_1_resolutions_wake_the_waiter_with_the_stored_response(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    type Settle = fn(&Clarion, &str) -> Resolved;
    let cases: [(&str, Settle); 3] = [
        ("answered", |h, id| {
            h.resolve_bundle(&alice(), id, &one_answer(" go ahead "))
                .unwrap()
        }),
        ("rejected", |h, id| {
            h.resolve_bundle(&alice(), id, &rejecting("  not now "))
                .unwrap()
        }),
        ("cancelled", |h, id| {
            h.cancel_bundle(&Principal::System, id).unwrap()
        }),
    ];
    for (name, settle) in cases {
        let id = ask(&h, &session, 1);
        let waiter = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
        let resolved = settle(&h, &id);
        assert!(resolved.claimed);
        let outcome = waiter.within(PROMPT).unwrap();
        assert_eq!(outcome.as_str(), name);
        assert_eq!(outcome, outcome_for(&resolved));
        assert_eq!(outcome.response(), stored(db, &id).as_ref(), "{name}");
        let response = outcome.response().unwrap();
        match name {
            "answered" => {
                assert_eq!(response.answers.len(), 1);
                assert_eq!(response.answers[0].custom_text, "go ahead");
                assert_eq!(response.answers[0].selected_options, ["q1_opt1"]);
                assert!(!response.rejected);
            }
            "rejected" => {
                assert!(response.rejected);
                assert_eq!(response.reject_reason, "not now");
                assert!(response.answers.is_empty());
            }
            _ => {
                assert!(!response.rejected);
                assert!(response.answers.is_empty());
            }
        }
        // WAIT-2: receiving acknowledged it.
        assert!(!undelivered(db, &id), "{name}");
    }
}

/// WAIT-1, LIFE-3: the session ending expires the bundle and wakes the
/// waiter with `expired`.
fn wait_1_expired_when_the_session_ends(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 2);
    let waiter = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
    h.set_session_state(&session, SessionState::Completed)
        .unwrap();
    assert_eq!(waiter.within(PROMPT).unwrap(), WaitOutcome::Expired);
    assert_eq!(status(db, &id), BundleStatus::Expired);
}

/// WAIT-1, LIFE-2: a new turn supersedes the bundle and wakes the waiter
/// with `superseded`.
fn wait_1_superseded_by_a_new_turn(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let waiter = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
    h.begin_turn(&session).unwrap();
    assert_eq!(waiter.within(PROMPT).unwrap(), WaitOutcome::Superseded);
    assert_eq!(status(db, &id), BundleStatus::Superseded);
}

/// WAIT-1, LIFE-5: the host detaching the session while the agent waits
/// wakes it with `detached`; the bundle stays answerable and its answer
/// goes to the outbox.
///
/// Ordering matters here: a detach that lands before the waiter's first
/// read is a wait on an already detached bundle, which the library
/// treats as the agent re-attaching (it then waits on). So the waiter is
/// first held at `wait.before_sleep`, which it reaches only after that
/// read. The handle never polls within the test, so only the detach's
/// notification can wake it.
fn wait_1_detached_while_waiting(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let waiter = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
    h.detach_session(&session).unwrap();
    assert_eq!(waiter.within(PROMPT).unwrap(), WaitOutcome::Detached);
    assert!(rows::detached(db, &id));
    assert_eq!(status(db, &id), BundleStatus::Pending, "still active");
    let resolved = h
        .resolve_bundle(&alice(), &id, &one_answer("later"))
        .unwrap();
    assert!(resolved.claimed, "a detached bundle stays answerable");
    assert_eq!(outbox(db), vec![id.clone()]);
}

/// WAIT-1: a wait on a bundle that is already detached is the agent
/// coming back: the bundle is attached again, so the answer reaches the
/// waiter directly and never the outbox or a dispatcher (WAIT-2).
fn wait_1_waiting_on_a_detached_bundle_receives_its_answer(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    h.detach_session(&session).unwrap();
    let waiter = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
    assert!(!rows::detached(db, &id), "waiting attached the agent again");
    assert!(waiter.is_waiting());
    let resolved = h
        .resolve_bundle(&alice(), &id, &one_answer("back"))
        .unwrap();
    assert_eq!(waiter.within(PROMPT).unwrap(), outcome_for(&resolved));
    assert!(outbox(db).is_empty());
}

/// WAIT-1: timeout 0 checks once and returns `timed_out`; once resolved,
/// the same zero-timeout wait returns the resolution.
fn wait_1_timeout_zero_checks_once(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    assert_eq!(
        promptly(PROMPT, || h.wait(&id, Duration::ZERO)).unwrap(),
        WaitOutcome::TimedOut
    );
    let resolved = h.resolve_bundle(&alice(), &id, &one_answer("")).unwrap();
    assert_eq!(
        promptly(PROMPT, || h.wait(&id, Duration::ZERO)).unwrap(),
        outcome_for(&resolved)
    );
}

/// WAIT-1: a non-zero timeout is honoured before `timed_out`.
fn wait_1_timed_out_after_its_timeout(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    assert_eq!(h.wait(&id, timeout).unwrap(), WaitOutcome::TimedOut);
    let took = started.elapsed();
    assert!(took >= timeout, "returned after {took:?}");
    assert!(took < timeout + PROMPT, "returned after {took:?}");
}

/// WAIT-1: an unknown bundle is not-found (404).
fn wait_1_unknown_bundle_is_not_found(db: &TestDb) {
    mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let error = promptly(PROMPT, || h.wait("pending-999999", LONG_WAIT)).unwrap_err();
    assert!(
        matches!(error, Error::NotFound(Entity::Bundle)),
        "{error:?}"
    );
    let envelope = envelope::error(&error);
    assert_eq!(envelope.status, 404);
    assert_eq!(envelope.body_text(), NOT_FOUND_BODY);
}

/// WAIT-1, LIFE-1: deleting the session or the task of a waited-on
/// bundle wakes the waiter with not-found.
fn wait_1_deleted_while_waited_on_is_not_found(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let by_session = mirror(db, "s", "alice");
    let by_task = mirror(db, "t", "alice");
    let first = ask(&h, &by_session, 1);
    let second = ask(&h, &by_task, 1);
    let first_waiter = already_waiting(&h, || spawn_wait(&h, &first, LONG_WAIT));
    let second_waiter = already_waiting(&h, || spawn_wait(&h, &second, LONG_WAIT));
    h.delete_session(&by_session).unwrap();
    h.delete_task("t-t").unwrap();
    for waiter in [first_waiter, second_waiter] {
        let error = waiter.within(PROMPT).unwrap_err();
        assert!(
            matches!(error, Error::NotFound(Entity::Bundle)),
            "{error:?}"
        );
    }
}

// ---- WAIT-1: settled bundles return at once ----------------------------------

dual_backend!(
    wait_1_settled_bundles_return_at_once_with_get_bundle_precedence,
    wait_1_a_read_overlapping_a_commit_returns_the_committed_outcome,
    wait_1_a_read_overlapping_a_deletion_is_not_found
);

/// WAIT-1: a wait on a bundle that is already resolved, expired or
/// superseded returns at once, with get_bundle's precedence: resolution
/// over expiry, expiry over supersession.
fn wait_1_settled_bundles_return_at_once_with_get_bundle_precedence(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let ended = mirror(db, "e", "alice");
    let answered = ask(&h, &ended, 1);
    let rejected = ask(&h, &ended, 1);
    let expired = ask(&h, &ended, 1);
    let answer = h
        .resolve_bundle(&alice(), &answered, &one_answer("yes"))
        .unwrap();
    let rejection = h
        .resolve_bundle(&alice(), &rejected, &rejecting("no"))
        .unwrap();
    // Resolution over expiry: the session ends after the answers.
    h.set_session_state(&ended, SessionState::Failed).unwrap();
    // ... and over supersession; expiry over supersession.
    h.begin_turn(&ended).unwrap();
    let moved_on = mirror(db, "m", "alice");
    let superseded = ask(&h, &moved_on, 1);
    h.begin_turn(&moved_on).unwrap();

    let expectations = [
        (&answered, BundleStatus::Answered, outcome_for(&answer)),
        (&rejected, BundleStatus::Rejected, outcome_for(&rejection)),
        (&expired, BundleStatus::Expired, WaitOutcome::Expired),
        (
            &superseded,
            BundleStatus::Superseded,
            WaitOutcome::Superseded,
        ),
    ];
    for (id, bundle_status, outcome) in expectations {
        assert_eq!(status(db, id), bundle_status, "{id}");
        assert_eq!(
            promptly(PROMPT, || h.wait(id, LONG_WAIT)).unwrap(),
            outcome,
            "{id}"
        );
        // Asked again: the same answer, still at once.
        assert_eq!(
            promptly(PROMPT, || h.wait(id, LONG_WAIT)).unwrap(),
            outcome,
            "{id}"
        );
    }
    // WAIT-2: the late waiter acknowledged what it received.
    assert!(!undelivered(db, &answered));
    assert!(!undelivered(db, &rejected));
}

/// WAIT-1, WIRE-2, NORM-4, WIRE-3: what a waiter returns comes from the
/// committed state even when one of its reads overlaps the claim's
/// commit: the resolution is exactly the response `get_bundle` reports
/// (claim time, reject reason included). Several waiters on a handle
/// that re-reads every millisecond make such overlaps likely; a correct
/// library passes whatever the interleaving.
fn wait_1_a_read_overlapping_a_commit_returns_the_committed_outcome(db: &TestDb) {
    let busy = db.reopen_polling(Duration::from_millis(1));
    let other = db.reopen();
    let session = mirror(db, "x", "alice");
    for round in 0..20 {
        let id = ask(&other, &session, 1);
        let agents: Vec<_> = (0..4).map(|_| spawn_wait(&busy, &id, LONG_WAIT)).collect();
        let humans: Vec<_> = (0..2)
            .map(|_| spawn_wait_bundle(&busy, alice(), &id, LONG_WAIT))
            .collect();
        db.clock.advance_micros(1_000);
        let resolved = other
            .resolve_bundle(&alice(), &id, &rejecting("because"))
            .unwrap();
        assert_eq!(stored(db, &id).as_ref(), Some(&resolved.response));
        for agent in agents {
            assert_eq!(
                agent.within(PROMPT).unwrap(),
                outcome_for(&resolved),
                "round {round}"
            );
        }
        for human in humans {
            let seen = human.within(PROMPT).unwrap();
            assert_eq!(seen.response, resolved.response, "round {round}");
        }
    }
}

/// WAIT-1, LIFE-1: a waiter whose read overlaps the deletion of its
/// bundle gets not-found, like every other waiter of a deleted bundle
/// (same set-up as the test above).
fn wait_1_a_read_overlapping_a_deletion_is_not_found(db: &TestDb) {
    let busy = db.reopen_polling(Duration::from_millis(1));
    let other = db.reopen();
    for round in 0..15 {
        let session = mirror(db, &format!("d{round}"), "alice");
        let id = ask(&other, &session, 1);
        let agents: Vec<_> = (0..4).map(|_| spawn_wait(&busy, &id, LONG_WAIT)).collect();
        let humans: Vec<_> = (0..2)
            .map(|_| spawn_wait_bundle(&busy, alice(), &id, LONG_WAIT))
            .collect();
        other.delete_session(&session).unwrap();
        for agent in agents {
            let error = agent.within(PROMPT).unwrap_err();
            assert!(
                matches!(error, Error::NotFound(Entity::Bundle)),
                "round {round}: {error:?}"
            );
        }
        for human in humans {
            let error = human.within(PROMPT).unwrap_err();
            assert!(
                matches!(error, Error::NotFound(Entity::Bundle)),
                "round {round}: {error:?}"
            );
        }
    }
}
