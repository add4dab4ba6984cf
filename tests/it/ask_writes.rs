//! What an ask writes (ASK-1, ASK-3, ASK-5): one bundle and a row per
//! question, in one transaction, on the current turn or a new one; ids
//! defaulted by position; nothing on a terminal session.

use clarion::test_hooks::schema::{sessions, turns};
use clarion::test_hooks::{points, FailAction};
use clarion::{AskRequest, BundleKind, Error, SessionState, SessionUpsert, TaskUpsert};
use diesel::prelude::*;

use crate::ask_support::*;
use crate::support::rows;
use crate::support::*;

fn turn_ids(db: &TestDb, session_id: &str) -> Vec<String> {
    db.raw(|conn| {
        turns::table
            .filter(turns::session_id.eq(session_id))
            .order_by(turns::seq)
            .select(turns::id)
            .load(conn)
            .unwrap()
    })
}

fn session_state(db: &TestDb, session_id: &str) -> String {
    db.raw(|conn| {
        sessions::table
            .find(session_id)
            .select(sessions::state)
            .first(conn)
            .unwrap()
    })
}

// ---- ASK-1 ------------------------------------------------------------

dual_backend!(
    ask_1_writes_one_bundle_and_a_row_per_question_in_a_new_turn,
    ask_1_uses_the_current_turn_when_one_exists,
    ask_1_bundle_task_is_the_sessions_task,
    ask_1_failure_after_bundle_row_leaves_nothing,
    ask_1_failure_after_first_question_leaves_nothing,
    ask_1_failure_rolls_back_the_started_turn
);

/// ASK-1: one bundle row and one pending question row per question, all
/// in the current turn, which `ask` starts when the session has none.
fn ask_1_writes_one_bundle_and_a_row_per_question_in_a_new_turn(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    assert!(turn_ids(db, &session).is_empty());
    let mut request = ask_request(&session, 3);
    request.kind = BundleKind::Permission;
    let asked = db.ask(&request).unwrap();
    assert!(asked.created);
    assert!(!asked.pending_id.is_empty());

    let turns = turn_ids(db, &session);
    assert_eq!(turns.len(), 1, "ask starts exactly one turn");
    let turn = &turns[0];
    assert_eq!(counts(db), (1, 1, 3));
    assert_eq!(
        bundle_row(db, &asked.pending_id),
        (
            session.clone(),
            "t-a".to_owned(),
            turn.clone(),
            "permission".to_owned(),
            "the agent needs a decision".to_owned(),
            None
        )
    );
    let expected: Vec<_> = (0..3)
        .map(|i| {
            (
                format!("q{}", i + 1),
                Some(i),
                session.clone(),
                turn.clone(),
                Some("pending".to_owned()),
            )
        })
        .collect();
    assert_eq!(question_rows(db, &asked.pending_id), expected);
    assert!(db.has_pending_clarification(&session).unwrap());
}

/// ASK-1: a session that has a turn gets the bundle in its current turn;
/// `ask` starts no further turn.
fn ask_1_uses_the_current_turn_when_one_exists(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.begin_turn(&session).unwrap();
    let current = db.begin_turn(&session).unwrap();
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 2);
    assert_eq!(turn_ids(db, &session).len(), 2);
    assert_eq!(rows::turn_of(db, &first), current);
    assert_eq!(rows::turn_of(db, &second), current);
    for (_, _, _, turn, _) in question_rows(db, &second) {
        assert_eq!(turn, current);
    }
    assert_eq!(counts(db), (2, 2, 3));
}

/// ASK-1: the bundle's task is the session's task, whatever the ids are
/// called.
fn ask_1_bundle_task_is_the_sessions_task(db: &TestDb) {
    db.upsert_task(TaskUpsert::new("some-task").workspace("w-x"))
        .unwrap();
    db.upsert_session(SessionUpsert::new("some-session", "some-task"))
        .unwrap();
    let pending_id = ask(db, "some-session", 1);
    assert_eq!(bundle_row(db, &pending_id).1, "some-task");
}

/// ASK-1: a failure after the bundle row leaves nothing behind — no
/// bundle, no question row, not even the turn the ask started — and a
/// later ask works.
fn ask_1_failure_after_bundle_row_leaves_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.arm_failpoint(points::ASK_AFTER_BUNDLE_ROW, FailAction::Error);
    let result = db.ask(&ask_request(&session, 3));
    assert!(
        matches!(result, Err(Error::Injected(point)) if point == points::ASK_AFTER_BUNDLE_ROW),
        "{result:?}"
    );
    assert_eq!(counts(db), (0, 0, 0));
    assert!(!db.has_pending_clarification(&session).unwrap());

    db.disarm_failpoint(points::ASK_AFTER_BUNDLE_ROW);
    let asked = db.ask(&ask_request(&session, 3)).unwrap();
    assert!(asked.created);
    assert_eq!(counts(db), (1, 1, 3));
    assert_eq!(question_rows(db, &asked.pending_id).len(), 3);
}

/// ASK-1: a failure after the first question row rolls back that row and
/// the bundle row too; an existing turn is untouched.
fn ask_1_failure_after_first_question_leaves_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let earlier = ask(db, &session, 1);
    let before = rows::dump(db);
    db.arm_failpoint(points::ASK_AFTER_FIRST_QUESTION, FailAction::Error);
    let result = db.ask(&ask_request(&session, 4));
    assert!(
        matches!(result, Err(Error::Injected(point)) if point == points::ASK_AFTER_FIRST_QUESTION),
        "{result:?}"
    );
    assert_eq!(rows::dump(db), before);
    assert_eq!(counts(db), (1, 1, 1));

    db.disarm_failpoint(points::ASK_AFTER_FIRST_QUESTION);
    let asked = db.ask(&ask_request(&session, 4)).unwrap();
    assert!(asked.created);
    assert_ne!(asked.pending_id, earlier);
    assert_eq!(question_rows(db, &asked.pending_id).len(), 4);
    assert_eq!(counts(db), (1, 2, 5));
}

/// ASK-1: a failure on a session without a turn also rolls back the turn
/// `ask` started, even when the failure comes after a question row.
fn ask_1_failure_rolls_back_the_started_turn(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.arm_failpoint(points::ASK_AFTER_FIRST_QUESTION, FailAction::Error);
    assert!(matches!(
        db.ask(&ask_request(&session, 2)),
        Err(Error::Injected(_))
    ));
    assert!(turn_ids(db, &session).is_empty());
    assert_eq!(counts(db), (0, 0, 0));
    db.disarm_failpoint(points::ASK_AFTER_FIRST_QUESTION);
    ask(db, &session, 2);
    assert_eq!(counts(db), (1, 1, 2));
}

// ---- ASK-3 ----------------------------------------------------------------

dual_backend!(
    ask_3_missing_ids_get_positional_defaults,
    ask_3_empty_ids_are_defaulted_by_position
);

/// ASK-3: missing question ids become q1, q2, … by position, and missing
/// option ids `<question_id>_opt1`, … by position.
fn ask_3_missing_ids_get_positional_defaults(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 3);
    request.questions[2].options = vec![option("a"), option("b"), option("c")];
    let asked = db.ask(&request).unwrap();
    let ids: Vec<String> = question_rows(db, &asked.pending_id)
        .into_iter()
        .map(|row| row.0)
        .collect();
    assert_eq!(ids, ["q1", "q2", "q3"]);
    assert_eq!(
        option_ids(db, &asked.pending_id),
        vec![
            vec!["q1_opt1", "q1_opt2"],
            vec!["q2_opt1", "q2_opt2"],
            vec!["q3_opt1", "q3_opt2", "q3_opt3"],
        ]
    );
}

/// ASK-3: empty-string ids are defaulted like missing ones; defaults are
/// by position even next to explicit ids, and option defaults use the
/// question's (explicit or default) id.
fn ask_3_empty_ids_are_defaulted_by_position(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = AskRequest {
        questions: vec![
            q(Some("first"), "one?"),
            q(Some(""), "two?"),
            q(None, "three?"),
        ],
        ..ask_request(&session, 0)
    };
    request.questions[0].options = vec![opt(Some(""), "A"), opt(Some("keep"), "B"), opt(None, "C")];
    request.questions[1].options = vec![opt(Some("x"), "A"), opt(Some(""), "B")];
    let asked = db.ask(&request).unwrap();
    let ids: Vec<String> = question_rows(db, &asked.pending_id)
        .into_iter()
        .map(|row| row.0)
        .collect();
    assert_eq!(ids, ["first", "q2", "q3"]);
    assert_eq!(
        option_ids(db, &asked.pending_id),
        vec![
            vec!["first_opt1", "keep", "first_opt3"],
            vec!["x", "q2_opt2"],
            vec!["q3_opt1", "q3_opt2"],
        ]
    );
}

// ---- ASK-5 ----------------------------------------------------------------

dual_backend!(
    ask_5_terminal_session_refuses_and_writes_nothing,
    ask_5_live_states_accept_and_keep_their_state
);

/// ASK-5: asking on a session in each terminal state is `SessionEnded`
/// and writes nothing; the session's state is left as it is.
fn ask_5_terminal_session_refuses_and_writes_nothing(db: &TestDb) {
    for (n, state) in [
        SessionState::Completed,
        SessionState::Failed,
        SessionState::Cancelled,
    ]
    .into_iter()
    .enumerate()
    {
        // One session that already has a bundle, one that has no turn yet.
        let used = mirror(db, &format!("used{n}"), "alice");
        ask(db, &used, 1);
        db.set_session_state(&used, state).unwrap();
        let fresh = mirror(db, &format!("fresh{n}"), "alice");
        db.set_session_state(&fresh, state).unwrap();
        let before = rows::dump(db);
        for session in [&used, &fresh] {
            let result = db.ask(&ask_request(session, 2));
            assert!(
                matches!(result, Err(Error::SessionEnded)),
                "{state:?}: {result:?}"
            );
            assert_eq!(session_state(db, session), state.as_str());
        }
        assert_eq!(rows::dump(db), before, "{state:?}");
        assert!(turn_ids(db, &fresh).is_empty());
    }
}

/// ASK-5: every non-terminal state accepts an ask, and asking never
/// changes the session's state.
fn ask_5_live_states_accept_and_keep_their_state(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for state in SessionState::ALL.into_iter().filter(|s| !s.is_terminal()) {
        db.set_session_state(&session, state).unwrap();
        let asked = db.ask(&ask_request(&session, 1)).unwrap();
        assert!(asked.created, "{state:?}");
        assert_eq!(session_state(db, &session), state.as_str());
    }
}
