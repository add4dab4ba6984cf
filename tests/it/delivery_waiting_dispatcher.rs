//! The resume dispatcher (DEL-3, DEL-4): called once, after the claim
//! commits, for a detached bundle, on the handle's one dispatch thread; a
//! failure leaves the entry for `deliver_pending` to retry; a dispatch
//! holds a lease of twice its timeout; `deliver_pending` offers every
//! entry (LIFE-9), each once even when two handles call it together.
//!
//! Timing discipline: see [`crate::delivery_waiting_support`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use clarion::test_hooks::schema::bundles;
use clarion::{BundleStatus, Clarion, Clock, Delivery, DeliveryReport, ResumeDispatcher};
use diesel::prelude::*;

use crate::delivery_waiting_support::*;
use crate::support::*;

// ---- a dispatching handle, its waits and reads ----------------------------

/// Another handle with a resume dispatcher (DEL-3).
fn with_dispatcher(db: &TestDb, dispatcher: Arc<Recorder>, timeout: Duration) -> Clarion {
    db.builder()
        .poll_interval(NO_POLL)
        .dispatcher(dispatcher)
        .dispatch_timeout(timeout)
        .open()
        .expect("open a dispatching handle")
}

/// How long the handle's dispatch worker may take to settle an entry
/// after the winner replied (it does so in milliseconds).
const SETTLES: Duration = Duration::from_secs(30);

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
    eventually(
        SETTLES,
        "the detached bundle is dispatched and acknowledged",
        || !recorder.calls().is_empty() && outbox(db).is_empty(),
    );
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
    eventually(SETTLES, "the detach hands the answer over", || {
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
    eventually(SETTLES, "the failed attempt released its lease", || {
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
    eventually(SETTLES, "the worker called the slow dispatcher", || {
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
        SETTLES,
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
    eventually(SETTLES, "the entry is delivered", || outbox(db).is_empty());
    assert_eq!(recorder.called_for(), [id]);
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
