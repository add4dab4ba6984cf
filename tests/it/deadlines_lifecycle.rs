//! Everyone settles first (LIFE-11, WAIT-5): a lifecycle operation that
//! changes a session settles its due bundles before anything else, so a
//! bundle whose deadline passed gets its deadline's outcome, never the
//! operation's; a wait wakes at the deadline and settles it.

use std::time::{Duration, Instant};

use clarion::{AnswerInput, DecidedBy, OnExpire, SessionState, SessionUpsert};

use crate::deadlines_settling::{ask_due, settling_events};
use crate::support::*;

dual_backend!(
    life_11_each_lifecycle_operation_settles_due_first,
    life_11_a_detached_agents_default_reaches_the_outbox,
    wait_5_a_wait_wakes_at_the_deadline_and_settles,
    wait_5_next_check_is_the_deadline
);

/// A one-question bundle on `session` whose default answers `q1_opt2`,
/// due `seconds` after the test clock.
fn ask_answering_by_default(db: &TestDb, session: &str, seconds: u64) -> String {
    let default = OnExpire::Answer(vec![AnswerInput {
        question_id: "q1".to_owned(),
        selected_options: vec!["q1_opt2".to_owned()],
        custom_text: String::new(),
    }]);
    ask_due(db, session, Duration::from_secs(seconds), default)
}

/// LIFE-11: `begin_turn`, `set_session_state`, `upsert_session` (with a
/// state), `detach_session`, `delete_session` and `delete_task` each
/// settle a due bundle first: its one event is the deadline's
/// `bundle.resolved`, not `bundle.closed` superseded, expired or deleted.
fn life_11_each_lifecycle_operation_settles_due_first(db: &TestDb) {
    type Operation = fn(&TestDb, &str, &str);
    let operations: [(&str, Operation); 6] = [
        ("begin_turn", |db, session, _| {
            db.begin_turn(session).unwrap();
        }),
        ("set_session_state", |db, session, _| {
            db.set_session_state(session, SessionState::Completed)
                .unwrap();
        }),
        ("upsert_session", |db, session, task| {
            db.upsert_session(SessionUpsert::new(session, task).state(SessionState::Failed))
                .unwrap();
        }),
        ("detach_session", |db, session, _| {
            db.detach_session(session).unwrap();
        }),
        ("delete_session", |db, session, _| {
            db.delete_session(session).unwrap();
        }),
        ("delete_task", |db, _, task| {
            db.delete_task(task).unwrap();
        }),
    ];
    for (name, operation) in operations {
        let session = mirror(db, name, "alice");
        let deadline = clarion::Timestamp::from_micros(
            clarion::Clock::now(&*db.clock).as_micros() + 60_000_000,
        );
        let id = ask_answering_by_default(db, &session, 60);
        db.clock.advance_micros(60_000_000);
        operation(db, &session, &format!("t-{name}"));
        let events = settling_events(db, &id);
        assert_eq!(events.len(), 1, "{name}: {events:?}");
        assert_eq!(events[0].0, "bundle.resolved", "{name}: {events:?}");
        assert_eq!(events[0].1["response"]["decided_by"], "deadline", "{name}");
        assert_eq!(
            events[0].1["response"]["responded_at"],
            deadline.to_rfc3339(),
            "{name}: responded_at is the deadline, whoever settles"
        );
    }
}

/// LIFE-11: detaching a session whose bundle's deadline passed settles the
/// `answer` default first, so the default reaches the outbox.
fn life_11_a_detached_agents_default_reaches_the_outbox(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_answering_by_default(db, &session, 60);
    db.clock.advance_micros(61_000_000);
    db.detach_session(&session).unwrap();
    let outbox = db.pending_deliveries(None).unwrap();
    assert_eq!(outbox.len(), 1);
    assert_eq!(outbox[0].pending_id, id);
    assert_eq!(outbox[0].response.decided_by, DecidedBy::Deadline);
    assert_eq!(outbox[0].response.answers[0].selected_options, ["q1_opt2"]);
}

/// WAIT-5: a wait blocked on a bundle wakes at its deadline by itself —
/// nothing else happens in the database — settles it and returns the
/// default, long before its own timeout.
fn wait_5_a_wait_wakes_at_the_deadline_and_settles(db: &TestDb) {
    use crate::delivery_waiting_support::{already_waiting, spawn_wait, LONG_WAIT, PROMPT};
    let session = mirror(db, "a", "alice");
    let id = ask_answering_by_default(db, &session, 1);
    let agent = db.reopen();
    // The waiter has read the bundle (not yet due) and is about to sleep.
    let waiting = already_waiting(&agent, || spawn_wait(&agent, &id, LONG_WAIT));
    // The test clock reaches the deadline; the waiter, asleep until then
    // (about a second of real time), reads again and settles it.
    db.clock.advance_micros(1_000_000);
    match waiting.within(PROMPT * 2).unwrap() {
        clarion::WaitOutcome::Answered(response) => {
            assert_eq!(response.decided_by, DecidedBy::Deadline);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(settling_events(db, &id).len(), 1);
}

/// WAIT-5: a wait that holds no thread says to check again at the
/// bundle's deadline; a bundle without one asks for no such check.
fn wait_5_next_check_is_the_deadline(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_answering_by_default(db, &session, 10);
    let pending = match db.begin_wait(&id, || {}).unwrap().check().unwrap() {
        clarion::Checked::Waiting(pending) => pending,
        other => panic!("{other:?}"),
    };
    let at = pending.next_check().expect("a deadline ahead");
    let left = at.saturating_duration_since(Instant::now());
    assert!(
        left > Duration::from_secs(9) && left <= Duration::from_secs(10),
        "{left:?}"
    );
    let plain = ask(db, &session, 1);
    let pending = match db.begin_wait(&plain, || {}).unwrap().check().unwrap() {
        clarion::Checked::Waiting(pending) => pending,
        other => panic!("{other:?}"),
    };
    assert_eq!(pending.next_check(), None);
}
