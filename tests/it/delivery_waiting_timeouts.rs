//! A timed-out agent is detached (WAIT-1, LIFE-5): when the last agent
//! waiter of the process times out, the bundle is detached and its later
//! answer goes to the outbox. Another agent waiter, on this handle or
//! another, keeps it attached; an external `wait_bundle` does not; a
//! detach waiting for the database stalls no other waiter.
//!
//! Timing discipline: see [`crate::delivery_waiting_support`].

use std::sync::mpsc;
use std::time::Duration;

use clarion::{BundleStatus, Error, Principal, WaitOutcome};

use crate::delivery_waiting_support::*;
use crate::support::rows;
use crate::support::*;

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
    // Past its 300 ms timeout, so its detach is blocked on the lock. Only
    // a lower bound: on a slow machine the detach may start later, and the
    // agent is still waiting all the same.
    std::thread::sleep(Duration::from_millis(600));
    assert!(timing_out.is_waiting(), "the detach waits for the database");
    let other = spawn_wait_bundle(&handle, alice(), &other_id, Duration::ZERO);
    let other = other.within(Duration::from_secs(3));
    assert!(matches!(other, Err(Error::TimedOut)), "{other:?}");
    drop(release);
    assert_eq!(timing_out.within(PROMPT).unwrap(), WaitOutcome::TimedOut);
    assert!(rows::detached(db, &detached_id));
}
