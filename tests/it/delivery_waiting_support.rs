//! What the `delivery_waiting_*` suites share: the bounds their waits
//! keep, waiters on threads, the request they answer with and reads of
//! what a bundle stored.
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

use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::Duration;

use clarion::test_hooks::schema::bundles;
use clarion::test_hooks::{points, FailAction, Gate};
use clarion::{
    BundleStatus, Clarion, Delivery, Principal, ResolveRequest, Resolved, Response, WaitOutcome,
};
use diesel::prelude::*;

use crate::support::*;

/// A poll interval no test outlives: a wake-up seen with it came from a
/// notification of the same handle.
pub const NO_POLL: Duration = Duration::from_secs(60);
/// WAIT-3's bounded poll for changes made through other handles.
pub const FAST_POLL: Duration = Duration::from_millis(50);
/// A wait timeout far beyond what any passing case needs.
pub const LONG_WAIT: Duration = Duration::from_secs(30);
/// How long a waiter may take to return after its event ("at once").
pub const PROMPT: Duration = Duration::from_secs(5);

pub const NOT_FOUND_BODY: &str = r#"{"error":"clarification request not found"}"#;

// ---- waiters on threads ----------------------------------------------------

/// A wait running on its own thread; its result arrives on a channel so the
/// test can bound how long it takes.
pub struct Waiting<T> {
    result: Receiver<T>,
    thread: JoinHandle<()>,
}

impl<T: std::fmt::Debug> Waiting<T> {
    pub fn spawn(body: impl FnOnce() -> T + Send + 'static) -> Self
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
    pub fn is_waiting(&self) -> bool {
        !self.thread.is_finished()
    }

    /// The result, which must arrive within `limit`.
    pub fn within(self, limit: Duration) -> T {
        let result = self
            .result
            .recv_timeout(limit)
            .unwrap_or_else(|_| panic!("the waiter did not return within {limit:?}"));
        self.thread.join().expect("waiter thread");
        result
    }
}

pub fn spawn_wait(
    handle: &Clarion,
    pending_id: &str,
    timeout: Duration,
) -> Waiting<clarion::Result<WaitOutcome>> {
    let (handle, pending_id) = (handle.clone(), pending_id.to_owned());
    Waiting::spawn(move || handle.wait(&pending_id, timeout))
}

pub fn spawn_wait_bundle(
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
pub fn already_waiting<T: std::fmt::Debug + Send + 'static>(
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

// ---- requests --------------------------------------------------------------

/// Answers a two-question bundle, in the other order than its questions.
pub fn two_answers() -> ResolveRequest {
    answering(vec![
        answer("q2", &["q2_opt2"], ""),
        answer("q1", &["q1_opt1"], "first"),
    ])
}

// ---- reads -------------------------------------------------------------------

/// The response `get_bundle` reports for the bundle (WIRE-3).
pub fn stored(db: &Clarion, pending_id: &str) -> Option<Response> {
    db.get_bundle(&Principal::System, pending_id)
        .unwrap()
        .response
}

pub fn status(db: &Clarion, pending_id: &str) -> BundleStatus {
    db.get_bundle(&Principal::System, pending_id)
        .unwrap()
        .status
}

/// `bundles.response_delivery_pending` (DEL-1).
pub fn undelivered(db: &TestDb, pending_id: &str) -> bool {
    db.raw(|conn| {
        bundles::table
            .find(pending_id)
            .select(bundles::response_delivery_pending)
            .first(conn)
            .unwrap()
    })
}

/// The outbox entry DEL-3 promises for a resolved bundle, built from
/// `get_bundle`: its LIST-6 questions and its WIRE-2 response.
pub fn expected_delivery(db: &Clarion, pending_id: &str) -> Delivery {
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

pub fn outcome_for(resolved: &Resolved) -> WaitOutcome {
    let response = resolved.response.clone();
    match resolved.status {
        BundleStatus::Answered => WaitOutcome::Answered(response),
        BundleStatus::Rejected => WaitOutcome::Rejected(response),
        BundleStatus::Cancelled => WaitOutcome::Cancelled(response),
        other => panic!("not a resolution: {other:?}"),
    }
}
