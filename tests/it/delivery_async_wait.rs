//! HTTP-5, the library side: waits that hold no thread. `begin_wait` and
//! `begin_wait_bundle` start the same waits as `wait` and `wait_bundle`
//! (WAIT-1..4, WIRE-3) and hand them to the caller, which checks each one
//! when its callback fires. Here the "async server" is one test thread
//! driving every wait over an mpsc channel that the callbacks send to.
//!
//! Timing discipline as in the `delivery_waiting_*` suites (see
//! `delivery_waiting_support`): handles poll every 60 s, so a wait that
//! ends within seconds was woken by a callback; a callback that never
//! comes fails a bound of seconds, never a sleep that decides.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use clarion::test_hooks::{points, FailAction, Gate};
use clarion::{
    envelope, BundleStatus, Checked, Clarion, Entity, Error, PendingWait, Principal, Resolved,
    Synchronous, WaitOutcome,
};

use crate::support::*;

/// A poll interval no test outlives: a wake-up seen with it came from a
/// callback, never from a poll.
const NO_POLL: Duration = Duration::from_secs(60);
/// How long a callback may take to come after its event ("at once").
const PROMPT: Duration = Duration::from_secs(10);

/// One wait of either kind, as the driver holds it.
enum Held {
    Agent(PendingWait<WaitOutcome>),
    Human(PendingWait<Resolved>),
}

/// How one wait ended.
#[derive(Debug)]
enum Ended {
    Agent(clarion::Result<WaitOutcome>),
    Human(clarion::Result<Resolved>),
}

/// The caller that holds no thread per wait: a map of pending waits and
/// the channel their callbacks send their key to. Everything runs on the
/// thread that owns it.
struct Driver {
    wakes: Sender<usize>,
    woken: Receiver<usize>,
    waiting: HashMap<usize, Held>,
    ended: HashMap<usize, Ended>,
    next: usize,
}

impl Driver {
    fn new() -> Driver {
        let (wakes, woken) = mpsc::channel();
        Driver {
            wakes,
            woken,
            waiting: HashMap::new(),
            ended: HashMap::new(),
            next: 0,
        }
    }

    /// A key and the callback that sends it.
    fn callback(&mut self) -> (usize, impl Fn() + Send + Sync + 'static) {
        let key = self.next;
        self.next += 1;
        let wakes = self.wakes.clone();
        (key, move || {
            let _ = wakes.send(key);
        })
    }

    /// Begins an agent-side wait and checks it once.
    fn agent(&mut self, handle: &Clarion, pending_id: &str) -> usize {
        let (key, wake) = self.callback();
        let pending = handle.begin_wait(pending_id, wake).expect("begin_wait");
        self.check(key, Held::Agent(pending));
        key
    }

    /// Begins an external wait and checks it once.
    fn human(&mut self, handle: &Clarion, principal: &Principal, pending_id: &str) -> usize {
        let (key, wake) = self.callback();
        let pending = handle
            .begin_wait_bundle(principal, pending_id, wake)
            .expect("begin_wait_bundle");
        self.check(key, Held::Human(pending));
        key
    }

    fn check(&mut self, key: usize, held: Held) {
        match held {
            Held::Agent(pending) => match pending.check() {
                Ok(Checked::Waiting(pending)) => {
                    self.waiting.insert(key, Held::Agent(pending));
                }
                Ok(Checked::Over(outcome)) => {
                    self.ended.insert(key, Ended::Agent(Ok(outcome)));
                }
                Err(error) => {
                    self.ended.insert(key, Ended::Agent(Err(error)));
                }
            },
            Held::Human(pending) => match pending.check() {
                Ok(Checked::Waiting(pending)) => {
                    self.waiting.insert(key, Held::Human(pending));
                }
                Ok(Checked::Over(resolved)) => {
                    self.ended.insert(key, Ended::Human(Ok(resolved)));
                }
                Err(error) => {
                    self.ended.insert(key, Ended::Human(Err(error)));
                }
            },
        }
    }

    /// Checks whichever waits their callbacks name until every wait is
    /// over; each callback must come within [`PROMPT`] of the last one.
    fn run(&mut self) {
        while !self.waiting.is_empty() {
            let key = self.woken.recv_timeout(PROMPT).unwrap_or_else(|_| {
                panic!(
                    "{} waits still wait and no callback came",
                    self.waiting.len()
                )
            });
            // A callback may be spurious, or come after its wait ended.
            if let Some(held) = self.waiting.remove(&key) {
                self.check(key, held);
            }
        }
    }

    fn agent_ended(&mut self, key: usize) -> clarion::Result<WaitOutcome> {
        match self.ended.remove(&key) {
            Some(Ended::Agent(outcome)) => outcome,
            other => panic!("wait {key}: {other:?}"),
        }
    }

    fn human_ended(&mut self, key: usize) -> clarion::Result<Resolved> {
        match self.ended.remove(&key) {
            Some(Ended::Human(resolved)) => resolved,
            other => panic!("wait {key}: {other:?}"),
        }
    }
}

/// The number of threads of this process (`Threads:` in /proc/self/status).
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .expect("/proc/self/status")
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|count| count.trim().parse().ok())
        .expect("a Threads: line")
}

/// A handle that commits without waiting for the disk (REL-5), for the
/// thousands of commits of the big test; its poll never fires.
fn fast_handle(db: &TestDb) -> Clarion {
    db.builder()
        .poll_interval(NO_POLL)
        .synchronous(Synchronous::Normal)
        .open()
        .expect("open a fast handle")
}

fn expect_waiting<T: std::fmt::Debug>(checked: clarion::Result<Checked<T>>) -> PendingWait<T> {
    match checked.expect("check") {
        Checked::Waiting(pending) => pending,
        Checked::Over(outcome) => panic!("expected the wait to go on, it ended: {outcome:?}"),
    }
}

/// Begins an agent-side wait (poll interval one minute), runs its first
/// check on a thread of its own (an async caller's blocking pool) and
/// stops that check right after its read found the bundle open, runs
/// `event`, lets the check return, and then expects the callback: the
/// event landed after the read, so it must call back (WAIT-3). Returns the
/// outcome of the check the callback asked for. Deterministic: a gate, not
/// a sleep, orders the two threads.
fn async_event_in_the_gap(
    db: &TestDb,
    name: &str,
    event: impl FnOnce(&Clarion, &str, &str),
) -> clarion::Result<WaitOutcome> {
    let handle = quiet_handle(db);
    let session = mirror(&handle, name, "alice");
    let pending_id = ask(&handle, &session, 1);
    let (wakes, woken) = mpsc::channel();
    let pending = handle
        .begin_wait(&pending_id, move || {
            let _ = wakes.send(());
        })
        .unwrap();
    let gate = Gate::new();
    handle.arm_failpoint(points::WAIT_BEFORE_SLEEP, FailAction::Block(gate.clone()));
    let checking = std::thread::spawn(move || pending.check());
    assert!(
        gate.wait_arrival(PROMPT),
        "the check never finished its read"
    );
    handle.disarm_failpoint(points::WAIT_BEFORE_SLEEP);
    event(&handle, &session, &pending_id);
    gate.open();
    let pending = expect_waiting(checking.join().unwrap());
    woken
        .recv_timeout(PROMPT)
        .expect("an event after the read calls back: no lost wake-up");
    match pending.check()? {
        Checked::Over(outcome) => Ok(outcome),
        Checked::Waiting(_) => panic!("the callback came, yet the wait goes on"),
    }
}

/// A handle that neither polls nor, on SQLite, watches `data_version`
/// within any test's time: only its own commits' bumps can wake its
/// waiters, so a wake-up lost in the slot shows (on PostgreSQL the
/// watcher skips a handle's own announcements anyway).
fn quiet_handle(db: &TestDb) -> Clarion {
    db.builder()
        .poll_interval(NO_POLL)
        .watch_interval(NO_POLL)
        .open()
        .expect("open a quiet handle")
}

/// A pending wait moves to the thread that checks it (an async caller's
/// blocking pool).
#[test]
fn http_5_a_pending_wait_is_send() {
    fn send<T: Send + 'static>() {}
    send::<PendingWait<WaitOutcome>>();
    send::<PendingWait<Resolved>>();
    send::<Checked<Resolved>>();
}

dual_backend!(
    http_5_two_thousand_waits_on_one_thread,
    wait_3_async_no_lost_wakeup,
    wait_3_async_events_in_the_gap_call_back,
    wait_4_blocking_and_pending_waits_share_the_outcome,
    wait_3a_async_an_answer_from_another_process_calls_back,
    wait_1b_async_only_the_callers_timeout_detaches,
    wait_1_async_outcomes_are_the_blocking_outcomes,
    rel_7_close_ends_pending_waits
);

/// HTTP-5, WAIT-3a, WAIT-4, WAIT-2: 2000 waits on one handle — agents
/// and external principals, four per bundle — driven by one thread,
/// add no thread each and hold no pooled connection; the answers,
/// committed by another handle on another thread, reach every one of
/// them through the callbacks, each with the committed response; the
/// agents acknowledge theirs, so the outbox stays empty.
fn http_5_two_thousand_waits_on_one_thread(db: &TestDb) {
    const BUNDLES: usize = 500;
    let h = fast_handle(db);
    let other = fast_handle(db);
    let sessions: Vec<String> = (0..10)
        .map(|n| mirror(&other, &format!("x{n}"), "alice"))
        .collect();
    let ids: Vec<String> = (0..BUNDLES)
        .map(|n| ask(&other, &sessions[n % sessions.len()], 1))
        .collect();
    // The handle's own threads (watcher, heartbeat) start with its
    // first wait; they are not per wait, so start them before counting.
    let mut driver = Driver::new();
    let first = driver.agent(&h, &ids[0]);
    let before = threads();
    let started = Instant::now();
    let mut keys = vec![(first, true, 0)];
    for (n, id) in ids.iter().enumerate() {
        if n > 0 {
            keys.push((driver.agent(&h, id), true, n));
        }
        keys.push((driver.agent(&h, id), true, n));
        keys.push((driver.human(&h, &alice(), id), false, n));
        keys.push((driver.human(&h, &Principal::System, id), false, n));
    }
    let begun = started.elapsed();
    assert_eq!(driver.waiting.len(), 4 * BUNDLES, "every wait goes on");
    let during = threads();
    eprintln!(
        "http_5: {} waits begun in {begun:?}; threads {before} before, {during} with them all waiting",
        driver.waiting.len()
    );
    // Other tests of this binary run meanwhile, on threads of their
    // own: the bound is far below a thread per wait, not exact.
    assert!(
        during < before + 200,
        "{} waits took {} threads",
        driver.waiting.len(),
        during.saturating_sub(before)
    );
    // No pooled connection is held by a waiting wait: the handle still
    // serves reads at once.
    let summary = promptly(PROMPT, || h.summary(&alice()).unwrap());
    assert_eq!(summary, other.summary(&alice()).unwrap());

    let answerer = {
        let (other, ids) = (other.clone(), ids.clone());
        std::thread::spawn(move || -> Vec<Resolved> {
            ids.iter()
                .enumerate()
                .map(|(n, id)| {
                    other
                        .resolve_bundle(&alice(), id, &one_answer(&format!("answer {n}")))
                        .unwrap()
                })
                .collect()
        })
    };
    let started = Instant::now();
    driver.run();
    let drained = started.elapsed();
    let resolved = answerer.join().unwrap();
    eprintln!("http_5: every wait ended {drained:?} after the answers began");
    for (key, agent, n) in keys {
        let won = &resolved[n];
        if agent {
            assert_eq!(
                driver.agent_ended(key).unwrap(),
                WaitOutcome::Answered(won.response.clone()),
                "bundle {n}"
            );
        } else {
            let seen = driver.human_ended(key).unwrap();
            assert_eq!((seen.claimed, seen.status), (false, BundleStatus::Answered));
            assert_eq!(seen.response, won.response, "bundle {n}");
        }
    }
    assert!(outbox(db).is_empty(), "the agents received every answer");
    assert!(ids.iter().all(|id| !rows::detached(db, id)));
}

/// WAIT-3, HTTP-5: no lost wake-up. A resolve released by a barrier
/// races each wait's first check: whatever the interleaving, a check
/// that still finds the bundle open is followed by a callback, and the
/// next check returns the committed outcome. Resolved through the same
/// handle, which nothing but its commit's bump can wake, and through
/// another one (the waiting handle's watcher bumps).
fn wait_3_async_no_lost_wakeup(db: &TestDb) {
    let quiet = quiet_handle(db);
    let watching = db.reopen_polling(NO_POLL);
    let other = db.reopen_polling(NO_POLL);
    let session = mirror(db, "x", "alice");
    for round in 0..60 {
        let (h, resolver) = if round % 2 == 0 {
            (quiet.clone(), quiet.clone())
        } else {
            (watching.clone(), other.clone())
        };
        let id = ask(&h, &session, 1);
        let mut driver = Driver::new();
        let (agent_key, agent_wake) = driver.callback();
        let (human_key, human_wake) = driver.callback();
        let agent = h.begin_wait(&id, agent_wake).unwrap();
        let human = h.begin_wait_bundle(&alice(), &id, human_wake).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let answering = {
            let (barrier, id) = (barrier.clone(), id.clone());
            std::thread::spawn(move || {
                barrier.wait();
                resolver
                    .resolve_bundle(&alice(), &id, &one_answer("raced"))
                    .unwrap()
            })
        };
        barrier.wait();
        driver.check(agent_key, Held::Agent(agent));
        driver.check(human_key, Held::Human(human));
        driver.run();
        let won = answering.join().unwrap();
        assert_eq!(
            driver.agent_ended(agent_key).unwrap(),
            WaitOutcome::Answered(won.response.clone()),
            "round {round}"
        );
        assert_eq!(
            driver.human_ended(human_key).unwrap().response,
            won.response,
            "round {round}"
        );
    }
    assert!(outbox(db).is_empty());
}

/// WAIT-3, HTTP-5: every event that ends a wait, injected between a
/// check's read and its return, calls back, and the next check returns
/// its outcome (see `delivery_interleavings` for the blocking wait).
fn wait_3_async_events_in_the_gap_call_back(db: &TestDb) {
    let outcome = async_event_in_the_gap(db, "resolve", |h, _, p| {
        h.resolve_bundle(&alice(), p, &one_answer("")).unwrap();
    });
    assert!(
        matches!(outcome, Ok(WaitOutcome::Answered(_))),
        "{outcome:?}"
    );
    let outcome = async_event_in_the_gap(db, "cancel", |h, _, p| {
        h.cancel_bundle(&alice(), p).unwrap();
    });
    assert!(
        matches!(outcome, Ok(WaitOutcome::Cancelled(_))),
        "{outcome:?}"
    );
    let outcome = async_event_in_the_gap(db, "detach", |h, s, _| h.detach_session(s).unwrap());
    assert!(matches!(outcome, Ok(WaitOutcome::Detached)), "{outcome:?}");
    let outcome = async_event_in_the_gap(db, "expire", |h, s, _| {
        h.set_session_state(s, clarion::SessionState::Failed)
            .unwrap()
    });
    assert!(matches!(outcome, Ok(WaitOutcome::Expired)), "{outcome:?}");
    let outcome = async_event_in_the_gap(db, "turn", |h, s, _| {
        h.begin_turn(s).unwrap();
    });
    assert!(
        matches!(outcome, Ok(WaitOutcome::Superseded)),
        "{outcome:?}"
    );
    let outcome = async_event_in_the_gap(db, "delete", |h, s, _| h.delete_session(s).unwrap());
    assert!(
        matches!(outcome, Err(Error::NotFound(Entity::Bundle))),
        "{outcome:?}"
    );
}

/// WAIT-4, WAIT-1: a blocking waiter and pending waits on one bundle
/// share the outcome; a pending wait's timeout does not detach while
/// the blocking agent still waits.
fn wait_4_blocking_and_pending_waits_share_the_outcome(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let session = mirror(db, "x", "alice");
    let id = ask(&h, &session, 1);
    let gate = Gate::new();
    h.arm_failpoint(points::WAIT_BEFORE_SLEEP, FailAction::Block(gate.clone()));
    let blocking = {
        let (h, id) = (h.clone(), id.clone());
        std::thread::spawn(move || h.wait(&id, Duration::from_secs(30)))
    };
    assert!(gate.wait_arrival(PROMPT), "the blocking waiter never read");
    h.disarm_failpoint(points::WAIT_BEFORE_SLEEP);
    gate.open();
    let early = expect_waiting(h.begin_wait(&id, || {}).unwrap().check());
    assert_eq!(early.timed_out().unwrap(), WaitOutcome::TimedOut);
    assert!(!rows::detached(db, &id), "the blocking agent still waits");
    let mut driver = Driver::new();
    let agent = driver.agent(&h, &id);
    let human = driver.human(&h, &alice(), &id);
    let resolved = h.resolve_bundle(&alice(), &id, &rejecting("no")).unwrap();
    driver.run();
    let outcome = blocking.join().unwrap().unwrap();
    assert_eq!(outcome, WaitOutcome::Rejected(resolved.response.clone()));
    assert_eq!(driver.agent_ended(agent).unwrap(), outcome);
    assert_eq!(
        driver.human_ended(human).unwrap().response,
        resolved.response
    );
    assert!(outbox(db).is_empty());
}

/// WAIT-3a, HTTP-5: an answer committed by another OS process reaches
/// a pending wait through its callback, long before any poll.
fn wait_3a_async_an_answer_from_another_process_calls_back(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let session = mirror(db, "x", "alice");
    let id = ask(db, &session, 1);
    let mut driver = Driver::new();
    let agent = driver.agent(&h, &id);
    let human = driver.human(&h, &alice(), &id);
    assert_eq!(driver.waiting.len(), 2);
    answer_from_another_process(&db.url, &id, "pushed");
    driver.run();
    match driver.agent_ended(agent).unwrap() {
        WaitOutcome::Answered(response) => {
            assert_eq!(response.answers[0].custom_text, "pushed")
        }
        other => panic!("expected the answer, got {other:?}"),
    }
    assert_eq!(
        driver.human_ended(human).unwrap().response.answers[0].custom_text,
        "pushed"
    );
}

/// WAIT-1b, HTTP-5: a pending wait dropped (the client went away) or
/// cut by a door's cap leaves the bundle attached; the caller's own
/// timeout on the last agent waiter detaches it (WAIT-1), while
/// another agent waiter of the process keeps it attached.
fn wait_1b_async_only_the_callers_timeout_detaches(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let elsewhere = db.reopen_polling(NO_POLL);
    let session = mirror(db, "x", "alice");
    let id = ask(&h, &session, 1);

    let gone = expect_waiting(h.begin_wait(&id, || {}).unwrap().check());
    drop(gone);
    assert!(!rows::detached(db, &id), "a disconnect detaches nothing");

    let capped = expect_waiting(h.begin_wait(&id, || {}).unwrap().check());
    assert_eq!(capped.capped().unwrap(), WaitOutcome::TimedOut);
    assert!(!rows::detached(db, &id), "a door's cap detaches nothing");

    let first = expect_waiting(h.begin_wait(&id, || {}).unwrap().check());
    let second = expect_waiting(elsewhere.begin_wait(&id, || {}).unwrap().check());
    assert_eq!(first.timed_out().unwrap(), WaitOutcome::TimedOut);
    assert!(
        !rows::detached(db, &id),
        "another agent waiter of this process remains"
    );
    assert_eq!(second.timed_out().unwrap(), WaitOutcome::TimedOut);
    assert!(rows::detached(db, &id), "the last agent waiter timed out");

    // DEL-3: the later answer is an outbox entry.
    let resolved = db
        .resolve_bundle(&alice(), &id, &one_answer("late"))
        .unwrap();
    assert!(resolved.claimed);
    assert_eq!(outbox(db), std::slice::from_ref(&id));

    // WAIT-1: waiting again attaches again and receives it (WAIT-2).
    let again = match h.begin_wait(&id, || {}).unwrap().check().unwrap() {
        Checked::Over(outcome) => outcome,
        Checked::Waiting(_) => panic!("a settled bundle ends the wait at once"),
    };
    assert_eq!(again, WaitOutcome::Answered(resolved.response));
    assert!(outbox(db).is_empty());

    // An external waiter's timeout is WIRE-3's 504, and never detaches.
    let open = ask(&h, &session, 1);
    let human = expect_waiting(h.begin_wait_bundle(&alice(), &open, || {}).unwrap().check());
    let error = human.timed_out().unwrap_err();
    assert!(matches!(error, Error::TimedOut), "{error:?}");
    assert_eq!(envelope::error(&error).status, 504);
    assert!(!rows::detached(db, &open));
}

/// WAIT-1, WIRE-3, AUTH-5: a pending wait ends with exactly what the
/// blocking wait returns, so a door makes the same envelopes: settled
/// bundles at once, not-found for an unknown or invisible bundle,
/// `NoLongerActive` for an external waiter of an expired one.
fn wait_1_async_outcomes_are_the_blocking_outcomes(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let session = mirror(db, "x", "alice");
    let rejected = ask(&h, &session, 1);
    h.resolve_bundle(&alice(), &rejected, &rejecting("no"))
        .unwrap();
    let over = |checked: clarion::Result<Checked<WaitOutcome>>| match checked.unwrap() {
        Checked::Over(outcome) => outcome,
        Checked::Waiting(_) => panic!("settled bundles end at once"),
    };
    let outcome = over(h.begin_wait(&rejected, || {}).unwrap().check());
    assert_eq!(
        envelope::waited(&outcome),
        envelope::waited(&h.wait(&rejected, Duration::ZERO).unwrap())
    );
    let seen = match h
        .begin_wait_bundle(&alice(), &rejected, || {})
        .unwrap()
        .check()
        .unwrap()
    {
        Checked::Over(seen) => seen,
        Checked::Waiting(_) => panic!("settled bundles end at once"),
    };
    assert_eq!(
        envelope::resolved(&seen),
        envelope::resolved(&h.wait_bundle(&alice(), &rejected, Duration::ZERO).unwrap())
    );

    let unknown = h.begin_wait("no-such-bundle", || {}).unwrap_err();
    assert!(
        matches!(unknown, Error::NotFound(Entity::Bundle)),
        "{unknown:?}"
    );
    let invisible = h.begin_wait_bundle(&bob(), &rejected, || {}).unwrap_err();
    assert_eq!(envelope::error(&invisible), envelope::error(&unknown));

    // Expired while waited on: the agent's `expired`, the external 409.
    let open = ask(&h, &session, 1);
    let mut driver = Driver::new();
    let agent = driver.agent(&h, &open);
    let human = driver.human(&h, &alice(), &open);
    h.set_session_state(&session, clarion::SessionState::Completed)
        .unwrap();
    driver.run();
    assert_eq!(driver.agent_ended(agent).unwrap(), WaitOutcome::Expired);
    let error = driver.human_ended(human).unwrap_err();
    assert!(matches!(error, Error::NoLongerActive), "{error:?}");
}

/// REL-7, HTTP-5: closing the handle calls back every pending wait,
/// whose next check is `HandleClosed`; nothing is detached (it is not
/// the caller's timeout), and no wait begins on a closed handle.
fn rel_7_close_ends_pending_waits(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let session = mirror(db, "x", "alice");
    let ids: Vec<String> = (0..3).map(|_| ask(&h, &session, 1)).collect();
    let mut driver = Driver::new();
    let keys: Vec<(usize, usize)> = ids
        .iter()
        .map(|id| (driver.agent(&h, id), driver.human(&h, &alice(), id)))
        .collect();
    assert_eq!(driver.waiting.len(), 6);
    h.close();
    driver.run();
    for (agent, human) in keys {
        assert!(matches!(
            driver.agent_ended(agent),
            Err(Error::HandleClosed)
        ));
        assert!(matches!(
            driver.human_ended(human),
            Err(Error::HandleClosed)
        ));
    }
    assert!(ids.iter().all(|id| !rows::detached(db, id)));
    assert!(matches!(
        h.begin_wait(&ids[0], || {}),
        Err(Error::HandleClosed)
    ));
    assert!(matches!(
        h.begin_wait_bundle(&alice(), &ids[0], || {}),
        Err(Error::HandleClosed)
    ));
}
