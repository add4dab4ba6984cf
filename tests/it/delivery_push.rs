//! WAIT-3a, OPS-4: push across handles and processes. A waiter's handle
//! hears other processes' commits (PostgreSQL: `NOTIFY` and one listening
//! connection; SQLite: `PRAGMA data_version` on one connection) and makes
//! one check per tick for all of its waiters together. The poll intervals
//! here are long, so an outcome that arrives well before one was pushed.
//! No bound here measures speed: each only separates push from poll.

use std::time::{Duration, Instant};

use clarion::{Clarion, Error, Synchronous, WaitOutcome};

use crate::support::*;

/// Far longer than any push takes; a waiter that needed the poll would
/// miss every bound below.
const LONG_POLL: Duration = Duration::from_secs(30);

/// A waiter on its own thread: its outcome and when it returned.
pub(crate) fn waiting(
    clarion: &Clarion,
    pending_id: &str,
) -> std::thread::JoinHandle<(clarion::Result<WaitOutcome>, Instant)> {
    let (clarion, pending_id) = (clarion.clone(), pending_id.to_owned());
    std::thread::spawn(move || {
        let outcome = clarion.wait(&pending_id, Duration::from_secs(120));
        (outcome, Instant::now())
    })
}

/// Until `clarion`'s waiters have made at least `reads` reads between them
/// (each reads its bundle once before it sleeps) and then no more for a
/// while: all of them sleep.
fn until_read(clarion: &Clarion, reads: u64) {
    let mut last = (0, Instant::now());
    eventually(Duration::from_secs(120), "the waiters settled", || {
        let now = clarion.watch_counts().reads;
        if now != last.0 {
            last = (now, Instant::now());
            return false;
        }
        now >= reads && last.1.elapsed() > Duration::from_millis(300)
    });
}

fn answered_with(outcome: clarion::Result<WaitOutcome>, text: &str) {
    match outcome.unwrap() {
        WaitOutcome::Answered(response) => assert_eq!(response.answers[0].custom_text, text),
        other => panic!("expected the answer {text:?}, got {other:?}"),
    }
}

dual_backend!(
    wait_3a_an_answer_from_another_process_arrives_before_any_poll,
    wait_3a_other_handles_supersede_detach_and_delete_within_the_bound,
    wait_3a_another_connections_commit_is_detected,
    ops_4_a_thousand_waiters_cost_one_check_per_tick,
    rel_7_closing_and_dropping_a_watching_handle_does_not_hang
);

/// WAIT-3a, OPS-4: an answer committed by another OS process reaches a
/// waiter whose poll interval is 30 s within a second of that process
/// exiting.
fn wait_3a_an_answer_from_another_process_arrives_before_any_poll(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let pending_id = ask(db, &session, 1);
    let waiter_handle = db.reopen_polling(LONG_POLL);
    let waiter = waiting(&waiter_handle, &pending_id);
    until_read(&waiter_handle, 1);
    let exited = answer_from_another_process(&db.url, &pending_id, "pushed");
    let (outcome, woke) = waiter.join().unwrap();
    answered_with(outcome, "pushed");
    let late = woke.saturating_duration_since(exited);
    assert!(
        late < Duration::from_secs(1),
        "woke {late:?} after the answering process exited"
    );
}

/// WAIT-3a, WAIT-3: the same holds for every event a waiter wakes on,
/// committed by another handle: supersession, detachment, deletion.
fn wait_3a_other_handles_supersede_detach_and_delete_within_the_bound(db: &TestDb) {
    let waiter_handle = db.reopen_polling(LONG_POLL);
    let superseded = ask(db, &mirror(db, "a", "alice"), 1);
    let detached = ask(db, &mirror(db, "b", "alice"), 1);
    let deleted = ask(db, &mirror(db, "c", "alice"), 1);
    let waiters = [
        waiting(&waiter_handle, &superseded),
        waiting(&waiter_handle, &detached),
        waiting(&waiter_handle, &deleted),
    ];
    until_read(&waiter_handle, 3);
    let started = Instant::now();
    db.begin_turn("s-a").unwrap();
    db.detach_session("s-b").unwrap();
    db.delete_session("s-c").unwrap();
    let [superseded, detached, deleted] = waiters.map(|w| w.join().unwrap());
    assert_eq!(superseded.0.as_ref().unwrap(), &WaitOutcome::Superseded);
    assert_eq!(detached.0.as_ref().unwrap(), &WaitOutcome::Detached);
    assert!(
        matches!(deleted.0, Err(Error::NotFound(_))),
        "{:?}",
        deleted.0
    );
    for (_, woke) in [superseded, detached, deleted] {
        let took = woke.duration_since(started);
        assert!(
            took < Duration::from_secs(5),
            "took {took:?} with a 30 s poll"
        );
    }
}

/// WAIT-3a: a commit made through another connection (another handle;
/// on SQLite seen through `data_version`, on PostgreSQL heard) wakes
/// the waiter, and the handle re-read the waited-on bundles in one
/// statement only once something had changed.
fn wait_3a_another_connections_commit_is_detected(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let pending_id = ask(db, &session, 1);
    let waiter_handle = db.reopen_polling(LONG_POLL);
    let waiter = waiting(&waiter_handle, &pending_id);
    until_read(&waiter_handle, 1);
    let before = waiter_handle.watch_counts();
    let answered = Instant::now();
    db.resolve_bundle(&alice(), &pending_id, &one_answer("through data_version"))
        .unwrap();
    let (outcome, woke) = waiter.join().unwrap();
    answered_with(outcome, "through data_version");
    assert!(woke.duration_since(answered) < Duration::from_secs(1));
    let after = waiter_handle.watch_counts();
    if db.backend() == clarion::Backend::Sqlite {
        assert!(after.checks > before.checks, "data_version was checked");
        assert!(
            after.rechecks > before.rechecks,
            "the change was seen and re-read"
        );
    }
    assert!(
        after.reads - before.reads <= 2,
        "only the woken waiter read: {before:?} {after:?}"
    );
}

/// OPS-4, WAIT-3a: a thousand agents waiting on one handle cost one
/// check per tick between them — no waiter reads while nothing
/// changes — and an answer wakes its waiter alone, not a thousand
/// reads. Closing the handle then ends every wait (REL-7) and its
/// watcher.
fn ops_4_a_thousand_waiters_cost_one_check_per_tick(db: &TestDb) {
    const WAITERS: usize = 1_000;
    let waiter_handle = db
        .builder()
        .poll_interval(Duration::from_millis(100))
        .watch_interval(Duration::from_millis(10))
        .synchronous(Synchronous::Normal)
        .pool_size(4)
        .open()
        .unwrap();
    let session = mirror(db, "x", "alice");
    let ids: Vec<String> = (0..WAITERS)
        .map(|_| ask(&waiter_handle, &session, 1))
        .collect();
    let waiters: Vec<_> = ids.iter().map(|id| waiting(&waiter_handle, id)).collect();
    until_read(&waiter_handle, WAITERS as u64);

    let before = waiter_handle.watch_counts();
    // The idle second measured: the behaviour under test, not a wait.
    std::thread::sleep(Duration::from_secs(1));
    let idle = waiter_handle.watch_counts();
    let ticks = idle.checks - before.checks;
    let statements = ticks + (idle.rechecks - before.rechecks) + (idle.reads - before.reads);
    println!("{WAITERS} waiters, 1 s idle: {ticks} ticks, {statements} statements ({before:?} -> {idle:?})");
    assert!(ticks >= 3, "the watcher ticks: {ticks}");
    assert_eq!(
        idle.reads, before.reads,
        "no waiter reads while nothing changes"
    );
    // One statement per tick; at most one re-read besides, should the
    // handle's own heartbeat renewal commit meanwhile (SQLite sees it).
    assert!(
        statements <= ticks + 1,
        "one check per tick and nothing else"
    );

    let answered = &ids[WAITERS / 2];
    db.resolve_bundle(&alice(), answered, &one_answer("one of a thousand"))
        .unwrap();
    eventually(Duration::from_secs(30), "the answered waiter woke", || {
        waiters[WAITERS / 2].is_finished()
    });
    // A window for any extra reads the answer caused to show up in the
    // count (a lower bound: a longer one only counts more).
    std::thread::sleep(Duration::from_millis(200));
    let woken = waiter_handle.watch_counts();
    let reads = woken.reads - idle.reads;
    println!("one answer: {reads} reads ({idle:?} -> {woken:?})");
    assert!(reads <= 5, "one answer made {reads} reads, not one");

    let closed = Instant::now();
    waiter_handle.close();
    for (n, waiter) in waiters.into_iter().enumerate() {
        let (outcome, _) = waiter.join().unwrap();
        if n == WAITERS / 2 {
            answered_with(outcome, "one of a thousand");
        } else {
            assert!(matches!(outcome, Err(Error::HandleClosed)), "{outcome:?}");
        }
    }
    assert!(closed.elapsed() < Duration::from_secs(30));
}

/// REL-7 with a watcher running: dropping the last clone of a handle
/// ends its watcher at once (no hang, no leaked connection), and
/// closing it while a waiter waits ends that wait.
fn rel_7_closing_and_dropping_a_watching_handle_does_not_hang(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let pending_id = ask(db, &session, 1);
    let waiter_handle = db.reopen_polling(LONG_POLL);
    let waiter = waiting(&waiter_handle, &pending_id);
    until_read(&waiter_handle, 1);
    let started = Instant::now();
    waiter_handle.close();
    let (outcome, _) = waiter.join().unwrap();
    assert!(matches!(outcome, Err(Error::HandleClosed)), "{outcome:?}");
    drop(waiter_handle);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A handle dropped without close, with its watcher running.
    let other = db.reopen_polling(LONG_POLL);
    assert_eq!(
        other.wait(&pending_id, Duration::from_millis(30)).unwrap(),
        WaitOutcome::TimedOut
    );
    let dropped = Instant::now();
    drop(other);
    assert!(dropped.elapsed() < Duration::from_secs(5));
}

/// WAIT-3a: when the listening connection is killed (`pg_terminate_backend`)
/// and cannot come back, waiters still get their answers through the poll;
/// once it may, the handle listens again by itself and answers from other
/// processes are pushed again.
#[cfg(feature = "postgres")]
#[test]
fn wait_3a_a_killed_listener_falls_back_to_the_poll_and_listens_again() {
    use diesel::prelude::*;
    let Some(db) = crate::support::postgres() else {
        return;
    };
    let poll = Duration::from_secs(4);
    let waiter_handle = db.reopen_polling(poll);
    let session = mirror(&db, "x", "alice");
    let first = ask(&db, &session, 1);
    let waiter = waiting(&waiter_handle, &first);
    until_read(&waiter_handle, 1);
    let killed = waiter_handle.listener_pid().expect("the handle listens");

    // The listener is killed and may not come back yet.
    waiter_handle.block_listening(true);
    let terminated: Vec<bool> = db.raw(|conn| {
        diesel::sql_query(format!("SELECT pg_terminate_backend({killed}) AS t"))
            .load::<Terminated>(conn)
            .unwrap()
            .into_iter()
            .map(|row| row.t)
            .collect()
    });
    assert_eq!(terminated, vec![true]);
    eventually(
        Duration::from_secs(30),
        "the watcher noticed its listener died",
        || waiter_handle.listener_pid().is_none(),
    );
    let exited = answer_from_another_process(&db.url, &first, "polled");
    let (outcome, woke) = waiter.join().unwrap();
    answered_with(outcome, "polled");
    let late = woke.saturating_duration_since(exited);
    assert!(
        late < poll + Duration::from_secs(4),
        "the poll carried it: {late:?}"
    );

    // It may listen again: it does so by itself, on a new connection.
    waiter_handle.block_listening(false);
    // It listens again at its next poll: ten of them is the bound.
    let mut relistened = None;
    eventually(poll * 10, "the handle listened again", || {
        relistened = waiter_handle.listener_pid();
        relistened.is_some()
    });
    let relistened = relistened.unwrap();
    assert_ne!(relistened, killed);
    let second = ask(&db, &session, 1);
    let waiter = waiting(&waiter_handle, &second);
    until_read(&waiter_handle, 3);
    let exited = answer_from_another_process(&db.url, &second, "pushed again");
    let (outcome, woke) = waiter.join().unwrap();
    answered_with(outcome, "pushed again");
    let late = woke.saturating_duration_since(exited);
    assert!(
        late < Duration::from_secs(1),
        "pushed, not polled ({poll:?}): {late:?}"
    );
    // The listening connection is the handle's one: it shows as such.
    let listeners: i64 = db.raw(|conn| {
        diesel::sql_query(format!(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE pid = {relistened} AND application_name = 'clarion-listener'"
        ))
        .get_result::<Count>(conn)
        .unwrap()
        .n
    });
    assert_eq!(listeners, 1);
}

#[cfg(feature = "postgres")]
#[derive(diesel::QueryableByName)]
struct Terminated {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    t: bool,
}

#[cfg(feature = "postgres")]
#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}
