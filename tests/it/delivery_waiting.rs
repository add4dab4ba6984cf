//! Waiting and delivery: the agent-side `wait` (WAIT-1..4), the external
//! `wait_bundle` (WIRE-3, WIRE-1's 504), the transactional outbox (DEL-1..5,
//! LIFE-8) and detachment (LIFE-5).
//!
//! Timing discipline: no sleep decides an outcome or orders two threads. A
//! wake-up that must come from a notification is proven with handles whose
//! poll interval (60 s) and wait timeout (30 s) are far longer than the few
//! seconds the test allows for the waiter to return. "The waiter is already
//! waiting" is established by holding it at the `wait.before_sleep`
//! failpoint, which it reaches only after a read of the bundle, before the
//! event happens. Events before the wait are the "settled" cases; events
//! during a waiter's read are the "overlapping" cases, which use many
//! waiters re-reading every millisecond and must hold whatever the
//! interleaving.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clarion::envelope;
use clarion::test_hooks::schema::bundles;
use clarion::test_hooks::{points, FailAction, Gate};
use clarion::{
    BundleStatus, Clarion, Clock, Delivery, DeliveryReport, Entity, Error, Grant, Principal,
    ResolveRequest, Resolved, Response, ResumeDispatcher, SessionState, WaitOutcome,
};
use diesel::prelude::*;
use serde_json::json;

use crate::support::rows;
use crate::support::*;

/// A poll interval no test outlives: a wake-up seen with it came from a
/// notification of the same handle.
const NO_POLL: Duration = Duration::from_secs(60);
/// WAIT-3's bounded poll for changes made through other handles.
const FAST_POLL: Duration = Duration::from_millis(50);
/// A wait timeout far beyond what any passing case needs.
const LONG_WAIT: Duration = Duration::from_secs(30);
/// How long a waiter may take to return after its event ("at once").
const PROMPT: Duration = Duration::from_secs(5);

const TIMED_OUT_BODY: &str = r#"{"error":"timed out waiting for a response"}"#;
const NOT_FOUND_BODY: &str = r#"{"error":"clarification request not found"}"#;

// ---- handles ---------------------------------------------------------------

/// Another handle with a resume dispatcher (DEL-3).
fn with_dispatcher(db: &TestDb, dispatcher: Arc<Recorder>, timeout: Duration) -> Clarion {
    db.builder()
        .poll_interval(NO_POLL)
        .dispatcher(dispatcher)
        .dispatch_timeout(timeout)
        .open()
        .expect("open a dispatching handle")
}

// ---- waiters on threads ----------------------------------------------------

/// A wait running on its own thread; its result arrives on a channel so the
/// test can bound how long it takes.
struct Waiting<T> {
    result: Receiver<T>,
    thread: JoinHandle<()>,
}

impl<T: std::fmt::Debug> Waiting<T> {
    fn spawn(body: impl FnOnce() -> T + Send + 'static) -> Self
    where
        T: Send + 'static,
    {
        let (send, result) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let _ = send.send(body());
        });
        Waiting { result, thread }
    }

    /// Still blocked (it has neither returned nor failed).
    fn is_waiting(&self) -> bool {
        !self.thread.is_finished()
    }

    /// The result, which must arrive within `limit`.
    fn within(self, limit: Duration) -> T {
        let result = self
            .result
            .recv_timeout(limit)
            .unwrap_or_else(|_| panic!("the waiter did not return within {limit:?}"));
        self.thread.join().expect("waiter thread");
        result
    }
}

fn spawn_wait(
    handle: &Clarion,
    pending_id: &str,
    timeout: Duration,
) -> Waiting<clarion::Result<WaitOutcome>> {
    let (handle, pending_id) = (handle.clone(), pending_id.to_owned());
    Waiting::spawn(move || handle.wait(&pending_id, timeout))
}

fn spawn_wait_bundle(
    handle: &Clarion,
    principal: Principal,
    pending_id: &str,
    timeout: Duration,
) -> Waiting<clarion::Result<Resolved>> {
    let (handle, pending_id) = (handle.clone(), pending_id.to_owned());
    Waiting::spawn(move || handle.wait_bundle(&principal, &pending_id, timeout))
}

/// Starts a waiter through `spawn` and returns once it has read the bundle
/// at least once and is about to sleep: it stopped at the handle's
/// `wait.before_sleep` failpoint. Nothing else may wait on `handle` while
/// this runs.
fn already_waiting<T: std::fmt::Debug + Send + 'static>(
    handle: &Clarion,
    spawn: impl FnOnce() -> Waiting<T>,
) -> Waiting<T> {
    let gate = Gate::new();
    handle.arm_failpoint(points::WAIT_BEFORE_SLEEP, FailAction::Block(gate.clone()));
    let waiter = spawn();
    assert!(
        gate.wait_arrival(PROMPT),
        "the waiter never finished its first read"
    );
    handle.disarm_failpoint(points::WAIT_BEFORE_SLEEP);
    gate.open();
    waiter
}

/// Waits until `settled` holds, at most [`PROMPT`]: the handle's dispatch
/// worker takes a winner's entry after the winner replied.
fn eventually(what: &str, settled: impl Fn() -> bool) {
    let deadline = Instant::now() + PROMPT;
    while !settled() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

// ---- requests --------------------------------------------------------------

/// Answers a two-question bundle, in the other order than its questions.
fn two_answers() -> ResolveRequest {
    answering(vec![
        answer("q2", &["q2_opt2"], ""),
        answer("q1", &["q1_opt1"], "first"),
    ])
}

// ---- reads -------------------------------------------------------------------

/// The response `get_bundle` reports for the bundle (WIRE-3).
fn stored(db: &Clarion, pending_id: &str) -> Option<Response> {
    db.get_bundle(&Principal::System, pending_id)
        .unwrap()
        .response
}

fn status(db: &Clarion, pending_id: &str) -> BundleStatus {
    db.get_bundle(&Principal::System, pending_id)
        .unwrap()
        .status
}

/// `bundles.response_delivery_pending` (DEL-1).
fn undelivered(db: &TestDb, pending_id: &str) -> bool {
    db.raw(|conn| {
        bundles::table
            .find(pending_id)
            .select(bundles::response_delivery_pending)
            .first(conn)
            .unwrap()
    })
}

/// `bundles.delivery_lease_until` (DEL-4).
fn lease(db: &TestDb, pending_id: &str) -> Option<i64> {
    db.raw(|conn| {
        bundles::table
            .find(pending_id)
            .select(bundles::delivery_lease_until)
            .first(conn)
            .unwrap()
    })
}

/// The outbox entry DEL-3 promises for a resolved bundle, built from
/// `get_bundle`: its LIST-6 questions and its WIRE-2 response.
fn expected_delivery(db: &Clarion, pending_id: &str) -> Delivery {
    let detail = db.get_bundle(&Principal::System, pending_id).unwrap();
    Delivery {
        pending_id: pending_id.to_owned(),
        task_id: detail.bundle.task_id,
        session_id: detail.bundle.session_id,
        status: detail.status,
        questions: detail.bundle.questions,
        response: detail.response.expect("a resolved bundle"),
    }
}

fn outcome_for(resolved: &Resolved) -> WaitOutcome {
    let response = resolved.response.clone();
    match resolved.status {
        BundleStatus::Answered => WaitOutcome::Answered(response),
        BundleStatus::Rejected => WaitOutcome::Rejected(response),
        BundleStatus::Cancelled => WaitOutcome::Cancelled(response),
        other => panic!("not a resolution: {other:?}"),
    }
}

// ---- a resume dispatcher that records what it is given -----------------------

/// A latch a dispatcher blocks on until the test opens it.
#[derive(Default)]
struct Latch {
    open: Mutex<bool>,
    changed: Condvar,
}

impl Latch {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.changed.notify_all();
    }

    fn pass(&self) {
        let open = self.open.lock().unwrap();
        let _open = self.changed.wait_while(open, |open| !*open).unwrap();
    }
}

/// Records every delivery; fails the first `failures` calls; blocks on
/// `latch` (a slow agent) when there is one.
#[derive(Default)]
struct Recorder {
    calls: Mutex<Vec<Delivery>>,
    failures: AtomicUsize,
    latch: Option<Arc<Latch>>,
}

impl Recorder {
    fn failing(failures: usize) -> Arc<Recorder> {
        Arc::new(Recorder {
            failures: AtomicUsize::new(failures),
            ..Recorder::default()
        })
    }

    fn blocking(latch: Arc<Latch>) -> Arc<Recorder> {
        Arc::new(Recorder {
            latch: Some(latch),
            ..Recorder::default()
        })
    }

    fn calls(&self) -> Vec<Delivery> {
        self.calls.lock().unwrap().clone()
    }

    fn called_for(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .map(|delivery| delivery.pending_id)
            .collect()
    }
}

impl ResumeDispatcher for Recorder {
    fn resume(&self, delivery: &Delivery) -> Result<(), clarion::DispatchError> {
        self.calls.lock().unwrap().push(delivery.clone());
        if let Some(latch) = &self.latch {
            latch.pass();
        }
        let failed = self
            .failures
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok();
        if failed {
            return Err(clarion::DispatchError::new(
                "the agent could not be resumed",
            ));
        }
        Ok(())
    }
}

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

// ---- WAIT-1: a timed-out agent is detached -------------------------------------

dual_backend!(
    wait_1_timed_out_detaches_and_the_answer_goes_to_the_outbox,
    wait_1_timed_out_keeps_the_bundle_attached_while_another_waiter_remains,
    wait_1_an_external_wait_bundle_does_not_keep_a_timed_out_agent_attached
);

/// WAIT-1, LIFE-5, DEL-3: when the last waiter of the handle times out,
/// the bundle is detached; it stays answerable and its later answer is
/// in the outbox.
fn wait_1_timed_out_detaches_and_the_answer_goes_to_the_outbox(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    assert!(!rows::detached(db, &id));
    assert_eq!(
        h.wait(&id, Duration::from_millis(100)).unwrap(),
        WaitOutcome::TimedOut
    );
    assert!(rows::detached(db, &id));
    assert_eq!(status(db, &id), BundleStatus::Pending);
    assert!(outbox(db).is_empty(), "nothing is resolved yet");
    let resolved = db
        .resolve_bundle(&alice(), &id, &one_answer("late"))
        .unwrap();
    assert!(resolved.claimed);
    let entries = db.pending_deliveries(None).unwrap();
    assert_eq!(entries, [expected_delivery(db, &id)]);
    assert_eq!(entries[0].response, resolved.response);
}

/// WAIT-1, WAIT-4: a timed-out waiter does not detach the bundle while
/// another agent waiter of this process still waits — on the same
/// handle or on another one (see also
/// `wait_1_agent_waiters_are_counted_per_process`); once none remains,
/// the timeout detaches it.
fn wait_1_timed_out_keeps_the_bundle_attached_while_another_waiter_remains(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let elsewhere = db.reopen_polling(FAST_POLL);
    let id = ask(&h, &session, 1);
    let patient = already_waiting(&h, || spawn_wait(&h, &id, LONG_WAIT));
    assert_eq!(
        promptly(PROMPT, || h.wait(&id, Duration::ZERO)).unwrap(),
        WaitOutcome::TimedOut
    );
    assert!(
        !rows::detached(db, &id),
        "another waiter of this handle remains"
    );
    let resolved = h.resolve_bundle(&alice(), &id, &one_answer("")).unwrap();
    assert_eq!(patient.within(PROMPT).unwrap(), outcome_for(&resolved));
    assert!(outbox(db).is_empty());

    let other = ask(&h, &session, 1);
    let far = already_waiting(&elsewhere, || spawn_wait(&elsewhere, &other, LONG_WAIT));
    assert_eq!(
        h.wait(&other, Duration::ZERO).unwrap(),
        WaitOutcome::TimedOut
    );
    assert!(
        !rows::detached(db, &other),
        "an agent of this process still waits, on another handle"
    );
    let resolved = h.resolve_bundle(&alice(), &other, &one_answer("")).unwrap();
    assert_eq!(far.within(PROMPT).unwrap(), outcome_for(&resolved));

    let last = ask(&h, &session, 1);
    assert_eq!(
        h.wait(&last, Duration::ZERO).unwrap(),
        WaitOutcome::TimedOut
    );
    assert!(rows::detached(db, &last), "no other agent waiter remains");
}

/// WAIT-1 names the *agent's* waiters: an external `wait_bundle` on the
/// same handle (a human's long poll) is not the agent, so it must not
/// keep a timed-out agent's bundle attached; otherwise the answer given
/// later is never an outbox entry (DEL-3) although no agent waits for it.
fn wait_1_an_external_wait_bundle_does_not_keep_a_timed_out_agent_attached(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let human = already_waiting(&h, || spawn_wait_bundle(&h, alice(), &id, LONG_WAIT));
    assert_eq!(h.wait(&id, Duration::ZERO).unwrap(), WaitOutcome::TimedOut);
    let detached = rows::detached(db, &id);
    let resolved = h
        .resolve_bundle(&Principal::System, &id, &one_answer(""))
        .unwrap();
    assert_eq!(human.within(PROMPT).unwrap().response, resolved.response);
    assert!(detached, "the agent timed out and no agent waiter remains");
    assert_eq!(outbox(db), [id]);
}

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

// ---- DEL-3/4: the resume dispatcher ----------------------------------------------

dual_backend!(
    del_3_the_dispatcher_resumes_a_detached_bundle,
    del_4_a_failing_dispatcher_never_unanswers_and_deliver_pending_retries,
    del_4_a_slow_dispatch_times_out_and_its_lease_expires
);

/// DEL-3: a registered dispatcher is called once, right after the claim
/// commits (by the handle's dispatch worker), for a detached bundle, and
/// success acknowledges the entry; an attached bundle is left to its
/// waiter until a detach hands it over.
fn del_3_the_dispatcher_resumes_a_detached_bundle(db: &TestDb) {
    let recorder = Arc::new(Recorder::default());
    let h = with_dispatcher(db, recorder.clone(), Duration::from_secs(5));
    let session = mirror(db, "x", "alice");
    let detached = ask(&h, &session, 2);
    h.detach_session(&session).unwrap();
    let attached = ask(&h, &session, 1);
    assert!(recorder.calls().is_empty(), "nothing resolved yet");

    let resolved = h
        .resolve_bundle(&alice(), &detached, &two_answers())
        .unwrap();
    assert!(resolved.claimed);
    eventually("the detached bundle is dispatched and acknowledged", || {
        !recorder.calls().is_empty() && outbox(db).is_empty()
    });
    assert_eq!(recorder.calls(), [expected_delivery(db, &detached)]);
    assert_eq!(recorder.calls()[0].response, resolved.response);
    assert!(!undelivered(db, &detached));
    // A loser dispatches nothing.
    let replay = h
        .resolve_bundle(&alice(), &detached, &two_answers())
        .unwrap();
    assert!(!replay.claimed);
    assert_eq!(recorder.calls().len(), 1);

    h.resolve_bundle(&alice(), &attached, &one_answer(""))
        .unwrap();
    assert_eq!(
        recorder.calls().len(),
        1,
        "an attached bundle is not dispatched"
    );
    assert!(undelivered(db, &attached));
    h.detach_session(&session).unwrap();
    eventually("the detach hands the answer over", || {
        recorder.calls().len() == 2 && outbox(db).is_empty()
    });
    assert_eq!(recorder.called_for(), [detached.clone(), attached.clone()]);
    assert!(!undelivered(db, &attached));
}

/// DEL-4: a failing dispatcher leaves the resolution committed and the
/// entry in the outbox; `deliver_pending` retries and reports counts.
fn del_4_a_failing_dispatcher_never_unanswers_and_deliver_pending_retries(db: &TestDb) {
    let recorder = Recorder::failing(2);
    let h = with_dispatcher(db, recorder.clone(), Duration::from_secs(5));
    let session = mirror(db, "x", "alice");
    let id = ask(&h, &session, 1);
    h.detach_session(&session).unwrap();
    let resolved = h
        .resolve_bundle(&alice(), &id, &one_answer("kept"))
        .unwrap();
    assert!(
        resolved.claimed,
        "a failed dispatch does not fail the resolve"
    );
    eventually("the failed attempt released its lease", || {
        recorder.calls().len() == 1 && lease(db, &id).is_none()
    });
    assert_eq!(status(db, &id), BundleStatus::Answered);
    assert_eq!(stored(db, &id), Some(resolved.response.clone()));
    assert_eq!(outbox(db), vec![id.clone()]);
    assert_eq!(lease(db, &id), None, "a failed attempt releases its lease");

    // A handle without a dispatcher offers nothing and changes nothing.
    assert_eq!(db.deliver_pending().unwrap(), DeliveryReport::default());
    assert_eq!(outbox(db), vec![id.clone()]);

    assert_eq!(
        h.deliver_pending().unwrap(),
        DeliveryReport {
            delivered: 0,
            failed: 1,
            skipped: 0
        }
    );
    assert_eq!(outbox(db), vec![id.clone()]);
    assert_eq!(
        h.deliver_pending().unwrap(),
        DeliveryReport {
            delivered: 1,
            failed: 0,
            skipped: 0
        }
    );
    assert_eq!(recorder.called_for(), [id.clone(), id.clone(), id.clone()]);
    assert!(outbox(db).is_empty());
    assert_eq!(status(db, &id), BundleStatus::Answered);
    assert_eq!(h.deliver_pending().unwrap(), DeliveryReport::default());
    assert_eq!(recorder.calls().len(), 3);
}

/// DEL-3/4: a dispatcher that never answers does not hold the winner's
/// reply up at all (the entry is queued for the dispatch worker); its
/// entry stays, leased, so another handle skips it until the lease
/// (2 × timeout) expires.
fn del_4_a_slow_dispatch_times_out_and_its_lease_expires(db: &TestDb) {
    let latch = Arc::new(Latch::default());
    let slow = Recorder::blocking(latch.clone());
    // Long enough that a resolve waiting for the dispatcher would fail.
    let timeout = Duration::from_secs(60);
    let first = with_dispatcher(db, slow.clone(), timeout);
    let quick = Arc::new(Recorder::default());
    let second = with_dispatcher(db, quick.clone(), Duration::from_secs(5));
    let session = mirror(db, "x", "alice");
    let id = ask(&first, &session, 1);
    first.detach_session(&session).unwrap();

    let started = Instant::now();
    let resolved = first
        .resolve_bundle(&alice(), &id, &one_answer("slowly"))
        .unwrap();
    let took = started.elapsed();
    assert!(resolved.claimed);
    assert!(
        took < PROMPT,
        "the resolve waited for the dispatcher: {took:?}"
    );
    eventually("the worker called the slow dispatcher", || {
        !slow.calls().is_empty()
    });
    assert_eq!(slow.called_for(), vec![id.clone()]);
    assert_eq!(status(db, &id), BundleStatus::Answered);
    assert_eq!(outbox(db), vec![id.clone()]);
    let lease_length = 2 * timeout.as_micros() as i64;
    assert_eq!(
        lease(db, &id),
        Some(db.clock.now().as_micros() + lease_length)
    );

    // Leased: neither handle dispatches it again.
    let skipped = DeliveryReport {
        delivered: 0,
        failed: 0,
        skipped: 1,
    };
    assert_eq!(second.deliver_pending().unwrap(), skipped);
    assert_eq!(first.deliver_pending().unwrap(), skipped);
    assert!(quick.calls().is_empty());
    assert_eq!(slow.calls().len(), 1);

    // The lease expires (the first dispatcher may have crashed).
    db.clock.advance_micros(lease_length + 1_000_000);
    assert_eq!(
        second.deliver_pending().unwrap(),
        DeliveryReport {
            delivered: 1,
            failed: 0,
            skipped: 0
        }
    );
    assert_eq!(quick.calls(), [expected_delivery(db, &id)]);
    assert!(outbox(db).is_empty());
    assert_eq!(lease(db, &id), None);
    latch.open();
}

// ---- WIRE-3 wait_bundle --------------------------------------------------------

dual_backend!(
    wire_3_wait_bundle_returns_the_resolution_unclaimed,
    wire_3_wait_bundle_no_longer_active,
    wire_3_wait_bundle_times_out_with_504,
    wire_3_wait_bundle_not_found_is_identical_for_foreign_and_fabricated,
    wire_3_wait_bundle_needs_questions_read,
    wire_3_wait_bundle_does_not_acknowledge
);

/// WIRE-3: an external waiter gets someone else's resolution, unclaimed,
/// as the WIRE-1 resolved envelope; an agent with `questions:read` may
/// wait too.
fn wire_3_wait_bundle_returns_the_resolution_unclaimed(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let human = already_waiting(&h, || spawn_wait_bundle(&h, alice(), &id, LONG_WAIT));
    let reader = alice_bot_with([Grant::QuestionsRead]);
    let bot = already_waiting(&h, || spawn_wait_bundle(&h, reader.clone(), &id, LONG_WAIT));
    let resolved = h
        .resolve_bundle(&Principal::System, &id, &one_answer("decided"))
        .unwrap();
    assert!(resolved.claimed);
    let expected = Resolved {
        claimed: false,
        ..resolved.clone()
    };
    assert_eq!(human.within(PROMPT).unwrap(), expected);
    assert_eq!(bot.within(PROMPT).unwrap(), expected);
    let reply = envelope::resolved(&expected);
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.body,
        json!({
            "success": true,
            "claimed": false,
            "status": "answered",
            "response": envelope::response(&resolved.response),
        })
    );
    // A wait that starts after the resolution returns it at once.
    assert_eq!(
        promptly(PROMPT, || h.wait_bundle(&reader, &id, LONG_WAIT)).unwrap(),
        expected
    );
}

/// WIRE-3: `409` when the bundle stops being active without a
/// resolution, while or before the caller waits.
fn wire_3_wait_bundle_no_longer_active(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let turned = mirror(db, "a", "alice");
    let ended = mirror(db, "b", "alice");
    let superseded = ask(&h, &turned, 1);
    let expired = ask(&h, &ended, 1);
    let waiters = [&superseded, &expired]
        .map(|id| already_waiting(&h, || spawn_wait_bundle(&h, alice(), id, LONG_WAIT)));
    h.begin_turn(&turned).unwrap();
    h.set_session_state(&ended, SessionState::Completed)
        .unwrap();
    for waiter in waiters {
        let error = waiter.within(PROMPT).unwrap_err();
        assert!(matches!(error, Error::NoLongerActive), "{error:?}");
        let reply = envelope::error(&error);
        assert_eq!(reply.status, 409);
        assert_eq!(reply.body_text(), NO_LONGER_ACTIVE_BODY);
    }
    for id in [&superseded, &expired] {
        let error = promptly(PROMPT, || h.wait_bundle(&alice(), id, LONG_WAIT)).unwrap_err();
        assert!(matches!(error, Error::NoLongerActive), "{error:?}");
    }
}

/// WIRE-3, WIRE-1: `504 {"error":"timed out waiting for a response"}`
/// when the timeout passes first. An external waiter is not the agent:
/// timing out detaches nothing.
fn wire_3_wait_bundle_times_out_with_504(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let error = promptly(PROMPT, || h.wait_bundle(&alice(), &id, Duration::ZERO)).unwrap_err();
    assert!(matches!(error, Error::TimedOut), "{error:?}");
    let reply = envelope::error(&error);
    assert_eq!(reply.status, 504);
    assert_eq!(reply.body_text(), TIMED_OUT_BODY);
    let timeout = Duration::from_millis(200);
    let started = Instant::now();
    assert!(matches!(
        h.wait_bundle(&alice(), &id, timeout),
        Err(Error::TimedOut)
    ));
    assert!(started.elapsed() >= timeout);
    assert!(!rows::detached(db, &id));
    assert_eq!(status(db, &id), BundleStatus::Pending);
}

/// WIRE-3, AUTH-5, REL-4: a foreign bundle and a fabricated id are the
/// same not-found, at once (no waiting on a bundle the caller may not
/// see); AUTH-6: a permission bundle is not-found for an agent.
fn wire_3_wait_bundle_not_found_is_identical_for_foreign_and_fabricated(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    mirror(db, "a", "alice");
    let bobs = mirror(db, "b", "bob");
    let foreign = ask(&h, &bobs, 1);
    let foreign_error =
        promptly(PROMPT, || h.wait_bundle(&alice(), &foreign, LONG_WAIT)).unwrap_err();
    let fabricated_error = promptly(PROMPT, || {
        h.wait_bundle(&alice(), "pending-999999", LONG_WAIT)
    })
    .unwrap_err();
    assert!(
        matches!(foreign_error, Error::NotFound(Entity::Bundle)),
        "{foreign_error:?}"
    );
    assert_eq!(
        format!("{foreign_error:?}"),
        format!("{fabricated_error:?}")
    );
    assert_eq!(
        envelope::error(&foreign_error),
        envelope::error(&fabricated_error)
    );
    assert_eq!(envelope::error(&foreign_error).body_text(), NOT_FOUND_BODY);

    let alices = mirror(db, "c", "alice");
    let permission = ask_permission(&h, &alices, 1);
    let bot = alice_bot();
    let hidden = promptly(PROMPT, || h.wait_bundle(&bot, &permission, LONG_WAIT)).unwrap_err();
    assert_eq!(format!("{hidden:?}"), format!("{fabricated_error:?}"));
    // The human owner may wait on it.
    assert!(matches!(
        h.wait_bundle(&alice(), &permission, Duration::ZERO),
        Err(Error::TimedOut)
    ));
}

/// WIRE-3, AUTH-2: an agent without `questions:read` (and an
/// unclassified caller) is denied before anything is looked up.
fn wire_3_wait_bundle_needs_questions_read(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let denied = [
        alice_bot_with([Grant::QuestionsAnswer]),
        alice_bot_with([]),
        Principal::Unclassified,
    ];
    for principal in denied {
        for target in [id.as_str(), "pending-999999"] {
            let error =
                promptly(PROMPT, || h.wait_bundle(&principal, target, LONG_WAIT)).unwrap_err();
            assert!(
                matches!(error, Error::CapabilityDenied),
                "{principal:?}: {error:?}"
            );
            assert_eq!(envelope::error(&error).status, 403);
        }
    }
}

/// WIRE-3, DEL-3: `wait_bundle` acknowledges nothing: a detached
/// bundle's resolution stays in the outbox after an external waiter
/// received it.
fn wire_3_wait_bundle_does_not_acknowledge(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    h.detach_session(&session).unwrap();
    let human = already_waiting(&h, || spawn_wait_bundle(&h, alice(), &id, LONG_WAIT));
    let resolved = h
        .resolve_bundle(&Principal::System, &id, &one_answer(""))
        .unwrap();
    let seen = human.within(PROMPT).unwrap();
    assert!(!seen.claimed);
    assert_eq!(seen.response, resolved.response);
    assert!(undelivered(db, &id));
    assert_eq!(outbox(db), vec![id.clone()]);
    promptly(PROMPT, || h.wait_bundle(&alice(), &id, LONG_WAIT)).unwrap();
    assert_eq!(outbox(db), [id]);
}

dual_backend!(del_4_deliver_pending_offers_every_entry);

/// LIFE-9, DEL-4: `deliver_pending` offers every outbox entry, not a
/// first page: 205 entries, all delivered in one call.
fn del_4_deliver_pending_offers_every_entry(db: &TestDb) {
    let session = mirror(db, "many", "alice");
    let ids: Vec<String> = (0..205).map(|_| ask(db, &session, 1)).collect();
    db.detach_session(&session).unwrap();
    for id in &ids {
        db.resolve_bundle(&alice(), id, &one_answer("")).unwrap();
    }
    assert_eq!(
        db.pending_deliveries(Some(500)).unwrap().len(),
        200,
        "one page is clamped"
    );
    let recorder = Arc::new(Recorder::default());
    let host = with_dispatcher(db, recorder.clone(), Duration::from_secs(5));
    let report = host.deliver_pending().unwrap();
    assert_eq!(
        (report.delivered, report.failed, report.skipped),
        (205, 0, 0)
    );
    assert_eq!(recorder.called_for().len(), 205);
    assert!(outbox(db).is_empty());
}

/// Records the thread each dispatch ran on, taking `pause` per call.
struct ThreadRecorder {
    threads: Mutex<Vec<std::thread::ThreadId>>,
    pause: Duration,
}

impl ResumeDispatcher for ThreadRecorder {
    fn resume(&self, _: &Delivery) -> Result<(), clarion::DispatchError> {
        self.threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
        std::thread::sleep(self.pause);
        Ok(())
    }
}

dual_backend!(
    del_4_dispatches_share_one_thread_per_handle,
    del_4_lease_arithmetic_saturates
);

/// DEL-4: dispatches run on the handle's one dispatch thread, never a
/// thread each: a dispatcher slower than the timeout for every entry is
/// still called on one thread, and every entry is delivered in the end.
fn del_4_dispatches_share_one_thread_per_handle(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let ids: Vec<String> = (0..5).map(|_| ask(db, &session, 1)).collect();
    db.detach_session(&session).unwrap();
    for id in &ids {
        db.resolve_bundle(&alice(), id, &one_answer("")).unwrap();
    }
    let recorder = Arc::new(ThreadRecorder {
        threads: Mutex::new(Vec::new()),
        pause: Duration::from_millis(30),
    });
    let host = db
        .builder()
        .dispatcher(recorder.clone())
        .dispatch_timeout(Duration::from_millis(5))
        .open()
        .unwrap();
    let report = host.deliver_pending().unwrap();
    assert_eq!(report.delivered + report.failed, 5, "{report:?}");
    eventually(
        "every entry reached the dispatcher and was acknowledged",
        || recorder.threads.lock().unwrap().len() == 5 && outbox(db).is_empty(),
    );
    let threads = recorder.threads.lock().unwrap().clone();
    assert!(
        threads.iter().all(|thread| *thread == threads[0]),
        "{threads:?}"
    );
}

/// DEL-4: the lease is twice the dispatch timeout, saturating: a huge
/// timeout makes a lease that never runs out, not an overflow.
fn del_4_lease_arithmetic_saturates(db: &TestDb) {
    let recorder = Arc::new(Recorder::default());
    let huge = Duration::from_micros(i64::MAX as u64);
    let h = with_dispatcher(db, recorder.clone(), huge);
    let session = mirror(db, "x", "alice");
    let id = ask(&h, &session, 1);
    h.detach_session(&session).unwrap();
    assert!(
        h.resolve_bundle(&alice(), &id, &one_answer(""))
            .unwrap()
            .claimed
    );
    eventually("the entry is delivered", || outbox(db).is_empty());
    assert_eq!(recorder.called_for(), [id]);
}

/// Holds a database lock the detach of `pending_id` needs, on its own
/// handle and thread, until the returned sender is dropped: SQLite's write
/// lock (`BEGIN IMMEDIATE`), or PostgreSQL's lock on the bundle's row.
fn hold_lock_for_detach(db: &TestDb, pending_id: &str) -> mpsc::Sender<()> {
    use diesel::connection::SimpleConnection;
    let holder = db.reopen();
    let backend = holder.backend();
    let lock = match backend {
        clarion::Backend::Sqlite => "BEGIN IMMEDIATE".to_owned(),
        clarion::Backend::Postgres => {
            format!("BEGIN; SELECT 1 FROM bundles WHERE pending_id = '{pending_id}' FOR UPDATE")
        }
    };
    let (held_tx, held) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        holder
            .with_raw_connection(|conn| {
                conn.batch_execute(&lock).unwrap();
                held_tx.send(()).unwrap();
                let _ = released.recv();
                conn.batch_execute("ROLLBACK").unwrap();
            })
            .unwrap();
    });
    held.recv().unwrap();
    release
}

dual_backend!(
    wait_1_agent_waiters_are_counted_per_process,
    wait_1_a_detach_waiting_for_the_database_stalls_no_other_waiter
);

/// WAIT-1: agent waiters are counted per process, not per handle: with
/// two handles on one database and an agent waiting on each for the
/// same bundle, the first one's timeout does not detach the bundle; the
/// other keeps waiting and receives the answer.
fn wait_1_agent_waiters_are_counted_per_process(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let first = db.reopen_polling(Duration::from_millis(20));
    let second = db.reopen_polling(Duration::from_millis(20));
    let id = ask(db, &session, 1);
    let patient = already_waiting(&second, || spawn_wait(&second, &id, LONG_WAIT));
    let hasty = first.wait(&id, Duration::from_millis(50)).unwrap();
    assert_eq!(hasty, WaitOutcome::TimedOut);
    assert!(
        !rows::detached(db, &id),
        "another agent of this process still waits"
    );
    assert!(patient.is_waiting());
    db.resolve_bundle(&alice(), &id, &one_answer("for the patient one"))
        .unwrap();
    let outcome = patient.within(PROMPT).unwrap();
    assert!(matches!(outcome, WaitOutcome::Answered(_)), "{outcome:?}");
}

/// No lock of the waiter registry is held across database work: while
/// a timed-out agent's detach waits for the database, other waits on
/// the same handle start and return at once.
fn wait_1_a_detach_waiting_for_the_database_stalls_no_other_waiter(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let handle = db.reopen_polling(NO_POLL);
    let detached_id = ask(db, &session, 1);
    let other_id = ask(db, &session, 1);
    // The agent waits (its first read and re-attach done), then the lock
    // is taken, so its detach at the timeout blocks on it.
    let timing_out = already_waiting(&handle, || {
        spawn_wait(&handle, &detached_id, Duration::from_millis(300))
    });
    let release = hold_lock_for_detach(db, &detached_id);
    std::thread::sleep(Duration::from_millis(600));
    assert!(timing_out.is_waiting(), "the detach waits for the database");
    let other = spawn_wait_bundle(&handle, alice(), &other_id, Duration::ZERO);
    let other = other.within(Duration::from_secs(3));
    assert!(matches!(other, Err(Error::TimedOut)), "{other:?}");
    drop(release);
    assert_eq!(timing_out.within(PROMPT).unwrap(), WaitOutcome::TimedOut);
    assert!(rows::detached(db, &detached_id));
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
    let human = spawn_wait_bundle(&handle, alice(), &id, LONG_WAIT);
    std::thread::sleep(Duration::from_millis(100));
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

dual_backend!(del_4_concurrent_deliver_pending_dispatches_each_entry_once);

/// DEL-4 under concurrency: two handles calling `deliver_pending` at
/// once, released together, never dispatch one entry twice; together
/// they deliver every entry once.
fn del_4_concurrent_deliver_pending_dispatches_each_entry_once(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let ids: Vec<String> = (0..20).map(|_| ask(db, &session, 1)).collect();
    db.detach_session(&session).unwrap();
    for id in &ids {
        db.resolve_bundle(&alice(), id, &one_answer("")).unwrap();
    }
    let recorders = [Arc::new(Recorder::default()), Arc::new(Recorder::default())];
    let hosts: Vec<Clarion> = recorders
        .iter()
        .map(|recorder| with_dispatcher(db, recorder.clone(), Duration::from_secs(5)))
        .collect();
    let start = Arc::new(std::sync::Barrier::new(2));
    let reports: Vec<DeliveryReport> = hosts
        .iter()
        .map(|host| {
            let (host, start) = (host.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                host.deliver_pending().unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect();
    let mut dispatched: Vec<String> = recorders.iter().flat_map(|r| r.called_for()).collect();
    dispatched.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(dispatched, expected, "each entry dispatched exactly once");
    assert_eq!(
        reports.iter().map(|r| r.delivered).sum::<usize>(),
        20,
        "{reports:?}"
    );
    assert!(outbox(db).is_empty());
}
