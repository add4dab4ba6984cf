//! LIFE-1..5, LIFE-7, LIFE-10: the host mirror, turns, expiry of ended
//! sessions, detaching, the workflow guard and unknown entities.

use clarion::test_hooks::schema::{bundle_questions, bundles, sessions, tasks, turns, workspaces};
use clarion::{Entity, Error, SessionState, SessionUpsert, TaskUpsert, WorkspaceUpsert};
use diesel::prelude::*;

use crate::support::rows::{self, Row};
use crate::support::*;

const TERMINAL: [SessionState; 3] = [
    SessionState::Completed,
    SessionState::Failed,
    SessionState::Cancelled,
];

fn assert_not_found<T: std::fmt::Debug>(result: clarion::Result<T>, entity: Entity) {
    match result {
        Err(Error::NotFound(found)) => assert_eq!(found, entity),
        other => panic!("expected {entity} not found, got {other:?}"),
    }
}

fn session_upsert<'a>(
    id: &'a str,
    task_id: &'a str,
    state: Option<SessionState>,
    is_primary: Option<bool>,
) -> SessionUpsert<'a> {
    let mut upsert = SessionUpsert::new(id, task_id);
    if let Some(state) = state {
        upsert = upsert.state(state);
    }
    if let Some(is_primary) = is_primary {
        upsert = upsert.primary(is_primary);
    }
    upsert
}

fn owner_of(db: &TestDb, id: &str) -> Option<String> {
    db.raw(|conn| {
        workspaces::table
            .find(id)
            .select(workspaces::owner_id)
            .first(conn)
            .optional()
            .unwrap()
    })
}

fn workspace_of(db: &TestDb, id: &str) -> Option<String> {
    db.raw(|conn| {
        tasks::table
            .find(id)
            .select(tasks::workspace_id)
            .first(conn)
            .optional()
            .unwrap()
    })
}

/// (task_id, state, is_primary) of a session, if it exists.
fn session_row(db: &TestDb, id: &str) -> Option<(String, String, bool)> {
    db.raw(|conn| {
        sessions::table
            .find(id)
            .select((sessions::task_id, sessions::state, sessions::is_primary))
            .first(conn)
            .optional()
            .unwrap()
    })
}

fn count_rows(db: &TestDb) -> [i64; 6] {
    db.raw(|conn| {
        [
            workspaces::table.count().get_result(conn).unwrap(),
            tasks::table.count().get_result(conn).unwrap(),
            sessions::table.count().get_result(conn).unwrap(),
            turns::table.count().get_result(conn).unwrap(),
            bundles::table.count().get_result(conn).unwrap(),
            bundle_questions::table.count().get_result(conn).unwrap(),
        ]
    })
}

/// Rows belonging to one session: (turns, bundles, question rows).
fn rows_of_session(db: &TestDb, session_id: &str) -> (i64, i64, i64) {
    db.raw(|conn| {
        (
            turns::table
                .filter(turns::session_id.eq(session_id))
                .count()
                .get_result(conn)
                .unwrap(),
            bundles::table
                .filter(bundles::session_id.eq(session_id))
                .count()
                .get_result(conn)
                .unwrap(),
            bundle_questions::table
                .filter(bundle_questions::session_id.eq(session_id))
                .count()
                .get_result(conn)
                .unwrap(),
        )
    })
}

/// Sets the status of the `index`-th row (row-id order) of a bundle.
fn set_status_of_row(db: &TestDb, pending_id: &str, index: usize, status: &str) {
    db.raw(|conn| {
        let ids: Vec<i64> = bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .order_by(bundle_questions::id)
            .select(bundle_questions::id)
            .load(conn)
            .unwrap();
        diesel::update(bundle_questions::table.find(ids[index]))
            .set(bundle_questions::status.eq(status))
            .execute(conn)
            .unwrap()
    });
}

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

// ---- LIFE-1 -----------------------------------------------------------

dual_backend!(
    life_1_new_rows_get_defaults,
    life_1_upserts_are_idempotent,
    life_1_upsert_workspace_changes_only_given_owner,
    life_1_upsert_task_changes_only_given_workspace,
    life_1_upsert_session_changes_only_given_fields,
    life_1_upsert_session_with_unknown_task_is_not_found,
    life_1_delete_task_cascades,
    life_1_delete_session_cascades,
    life_1_deleting_what_is_gone_is_ok,
    life_1_empty_ids_are_named
);

/// LIFE-1: new rows get the defaults — owner "", workspace "", state
/// running, is_primary false.
fn life_1_new_rows_get_defaults(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w")).unwrap();
    db.upsert_task(TaskUpsert::new("t")).unwrap();
    db.upsert_session(session_upsert("s", "t", None, None))
        .unwrap();
    assert_eq!(owner_of(db, "w"), s(""));
    assert_eq!(workspace_of(db, "t"), s(""));
    assert_eq!(
        session_row(db, "s"),
        Some(("t".into(), "running".into(), false))
    );
    // Given values are used on creation.
    db.upsert_workspace(WorkspaceUpsert::new("w2").owner("alice"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t2").workspace("w2"))
        .unwrap();
    db.upsert_session(session_upsert(
        "s2",
        "t2",
        Some(SessionState::Idle),
        Some(true),
    ))
    .unwrap();
    assert_eq!(owner_of(db, "w2"), s("alice"));
    assert_eq!(workspace_of(db, "t2"), s("w2"));
    assert_eq!(
        session_row(db, "s2"),
        Some(("t2".into(), "idle".into(), true))
    );
}

/// LIFE-1: repeating an upsert changes nothing.
fn life_1_upserts_are_idempotent(db: &TestDb) {
    mirror(db, "a", "alice");
    ask(db, "s-a", 2);
    let before = rows::dump(db);
    mirror(db, "a", "alice");
    db.upsert_workspace(WorkspaceUpsert::new("w-a")).unwrap();
    db.upsert_task(TaskUpsert::new("t-a")).unwrap();
    db.upsert_session(session_upsert("s-a", "t-a", None, None))
        .unwrap();
    db.upsert_session(session_upsert(
        "s-a",
        "t-a",
        Some(SessionState::Running),
        Some(true),
    ))
    .unwrap();
    assert_eq!(rows::dump(db), before);
    assert_eq!(count_rows(db), [1, 1, 1, 1, 1, 2]);
}

/// LIFE-1: upsert_workspace of an existing row with no owner keeps the
/// owner; with an owner, changes it.
fn life_1_upsert_workspace_changes_only_given_owner(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w")).unwrap();
    assert_eq!(owner_of(db, "w"), s("alice"));
    db.upsert_workspace(WorkspaceUpsert::new("w").owner("bob"))
        .unwrap();
    assert_eq!(owner_of(db, "w"), s("bob"));
    assert_eq!(count_rows(db)[0], 1);
}

/// LIFE-1: upsert_task of an existing row with no workspace keeps it;
/// with one, moves the task. The workspace need not exist.
fn life_1_upsert_task_changes_only_given_workspace(db: &TestDb) {
    db.upsert_task(TaskUpsert::new("t").workspace("w1"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t")).unwrap();
    assert_eq!(workspace_of(db, "t"), s("w1"));
    db.upsert_task(TaskUpsert::new("t").workspace("w-dangling"))
        .unwrap();
    assert_eq!(workspace_of(db, "t"), s("w-dangling"));
    assert_eq!(count_rows(db), [0, 1, 0, 0, 0, 0]);
}

/// LIFE-1: upsert_session of an existing row keeps the state when none is
/// given and is_primary when none is given; each given field changes
/// alone.
fn life_1_upsert_session_changes_only_given_fields(db: &TestDb) {
    db.upsert_task(TaskUpsert::new("t")).unwrap();
    db.upsert_task(TaskUpsert::new("t2")).unwrap();
    db.upsert_session(session_upsert(
        "s",
        "t",
        Some(SessionState::Idle),
        Some(true),
    ))
    .unwrap();
    db.upsert_session(session_upsert("s", "t", None, None))
        .unwrap();
    assert_eq!(
        session_row(db, "s"),
        Some(("t".into(), "idle".into(), true))
    );
    db.upsert_session(session_upsert("s", "t", Some(SessionState::Starting), None))
        .unwrap();
    assert_eq!(
        session_row(db, "s"),
        Some(("t".into(), "starting".into(), true))
    );
    db.upsert_session(session_upsert("s", "t", None, Some(false)))
        .unwrap();
    assert_eq!(
        session_row(db, "s"),
        Some(("t".into(), "starting".into(), false))
    );
    // task_id is always named, so it moves the session.
    db.upsert_session(session_upsert("s", "t2", None, None))
        .unwrap();
    assert_eq!(
        session_row(db, "s"),
        Some(("t2".into(), "starting".into(), false))
    );
}

/// LIFE-1, LIFE-10: upsert_session naming an unknown task is not-found
/// naming the task, for a new session and for an existing one, and
/// writes nothing. Tasks may name workspaces that do not exist.
fn life_1_upsert_session_with_unknown_task_is_not_found(db: &TestDb) {
    assert_not_found(
        db.upsert_session(session_upsert("s", "t-missing", None, None)),
        Entity::Task,
    );
    assert_eq!(session_row(db, "s"), None);
    db.upsert_task(TaskUpsert::new("t").workspace("w-never-created"))
        .unwrap();
    db.upsert_session(session_upsert(
        "s",
        "t",
        Some(SessionState::Idle),
        Some(true),
    ))
    .unwrap();
    let before = rows::dump(db);
    assert_not_found(
        db.upsert_session(session_upsert(
            "s",
            "t-missing",
            Some(SessionState::Running),
            Some(false),
        )),
        Entity::Task,
    );
    assert_eq!(rows::dump(db), before);
}

/// LIFE-1: delete_task cascades to its sessions, their turns, bundles
/// and question rows; other tasks are untouched.
fn life_1_delete_task_cascades(db: &TestDb) {
    let a = mirror(db, "a", "alice");
    db.upsert_session(session_upsert("s-a2", "t-a", None, None))
        .unwrap();
    let b = mirror(db, "b", "alice");
    ask(db, &a, 2);
    db.begin_turn(&a).unwrap();
    ask(db, &a, 3);
    ask(db, "s-a2", 1);
    let kept = ask(db, &b, 4);
    assert_eq!(count_rows(db), [2, 2, 3, 4, 4, 10]);
    db.delete_task("t-a").unwrap();
    assert_eq!(workspace_of(db, "t-a"), None);
    assert_eq!(session_row(db, &a), None);
    assert_eq!(session_row(db, "s-a2"), None);
    assert_eq!(rows_of_session(db, &a), (0, 0, 0));
    assert_eq!(rows_of_session(db, "s-a2"), (0, 0, 0));
    // The workspace is not the task's to delete; task b is untouched.
    assert_eq!(count_rows(db), [2, 1, 1, 1, 1, 4]);
    assert_eq!(rows::statuses(db, &kept).len(), 4);
    assert!(db.has_pending_clarification(&b).unwrap());
    assert_not_found(db.has_pending_clarification(&a), Entity::Session);
}

/// LIFE-1: delete_session cascades to its turns, bundles and question
/// rows, keeps its task and the task's other sessions.
fn life_1_delete_session_cascades(db: &TestDb) {
    let a = mirror(db, "a", "alice");
    db.upsert_session(session_upsert("s-a2", "t-a", None, None))
        .unwrap();
    ask(db, &a, 2);
    db.begin_turn(&a).unwrap();
    ask(db, &a, 1);
    let kept = ask(db, "s-a2", 3);
    db.delete_session(&a).unwrap();
    assert_eq!(session_row(db, &a), None);
    assert_eq!(rows_of_session(db, &a), (0, 0, 0));
    assert_eq!(workspace_of(db, "t-a"), s("w-a"));
    assert_eq!(rows_of_session(db, "s-a2"), (1, 1, 3));
    assert_eq!(rows::statuses(db, &kept).len(), 3);
    assert_eq!(count_rows(db), [1, 1, 1, 1, 1, 3]);
}

/// LIFE-1: deleting something already gone (or never there) is Ok.
fn life_1_deleting_what_is_gone_is_ok(db: &TestDb) {
    mirror(db, "a", "alice");
    db.delete_session("s-a").unwrap();
    db.delete_session("s-a").unwrap();
    db.delete_task("t-a").unwrap();
    db.delete_task("t-a").unwrap();
    db.delete_session("never").unwrap();
    db.delete_task("never").unwrap();
    assert_eq!(count_rows(db), [1, 0, 0, 0, 0, 0]);
}

/// LIFE-1, WIRE-5: a required id given as "" is a validation error naming
/// it, and writes nothing.
fn life_1_empty_ids_are_named(db: &TestDb) {
    mirror(db, "a", "alice");
    let before = rows::dump(db);
    assert_invalid(
        db.upsert_workspace(WorkspaceUpsert::new("").owner("alice")),
        "id",
    );
    assert_invalid(db.upsert_task(TaskUpsert::new("")), "id");
    assert_invalid(
        db.upsert_session(session_upsert("", "t-a", None, None)),
        "id",
    );
    assert_invalid(
        db.upsert_session(session_upsert("s-a", "", None, None)),
        "task_id",
    );
    assert_invalid(
        db.upsert_session(session_upsert("s-new", "", None, None)),
        "task_id",
    );
    assert_invalid(db.delete_task(""), "id");
    assert_invalid(db.delete_session(""), "id");
    assert_invalid(db.begin_turn(""), "session_id");
    assert_invalid(
        db.set_session_state("", SessionState::Completed),
        "session_id",
    );
    assert_invalid(db.detach_session(""), "session_id");
    assert_invalid(db.has_pending_clarification(""), "session_id");
    assert_eq!(rows::dump(db), before);
}

// ---- LIFE-2 -----------------------------------------------------------

dual_backend!(
    life_2_begin_turn_returns_a_new_current_turn,
    life_2_begin_turn_supersedes_older_bundles_without_changing_rows,
    life_2_begin_turn_unknown_session_is_not_found
);

/// LIFE-2: begin_turn returns a new turn id each time, and the new turn
/// becomes the one `ask` uses.
fn life_2_begin_turn_returns_a_new_current_turn(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.begin_turn(&session).unwrap();
    let second = db.begin_turn(&session).unwrap();
    assert!(!first.is_empty());
    assert_ne!(first, second);
    assert_eq!(rows_of_session(db, &session).0, 2);
    let pending_id = ask(db, &session, 1);
    assert_eq!(rows::turn_of(db, &pending_id), second);
}

/// LIFE-2, ACT-4: a new turn supersedes every bundle of older turns —
/// they are no longer active — without changing their rows.
fn life_2_begin_turn_supersedes_older_bundles_without_changing_rows(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let other = mirror(db, "b", "alice");
    let first = ask(db, &session, 2);
    let second = ask(db, &session, 1);
    let elsewhere = ask(db, &other, 1);
    rows::mark_undelivered(db, &second);
    assert!(db.has_pending_clarification(&session).unwrap());
    let before = rows::dump(db);
    let turn = db.begin_turn(&session).unwrap();
    assert!(!db.has_pending_clarification(&session).unwrap());
    assert_eq!(rows::active_ids(db), [elsewhere]);
    let after: Vec<String> = rows::dump(db)
        .into_iter()
        .filter(|line| !line.contains(&format!("{turn:?}")))
        .collect();
    assert_eq!(after, before, "supersession changes no row");
    assert_eq!(rows::statuses(db, &first), [s("pending"), s("pending")]);
    assert!(db.has_pending_clarification(&other).unwrap());
}

/// LIFE-2, LIFE-10: begin_turn on an unknown session is not-found and
/// writes nothing.
fn life_2_begin_turn_unknown_session_is_not_found(db: &TestDb) {
    mirror(db, "a", "alice");
    assert_not_found(db.begin_turn("s-nobody"), Entity::Session);
    assert_eq!(count_rows(db)[3], 0);
}

// ---- LIFE-3 / LIFE-4 --------------------------------------------------

dual_backend!(
    life_3_terminal_state_expires_current_turn_pending_rows,
    life_3_terminal_state_leaves_older_turns_and_resolved_rows,
    life_3_upsert_session_with_terminal_state_expires,
    life_4_repeating_expiry_changes_nothing
);

/// LIFE-3: set_session_state to each terminal state expires the current
/// turn's pending rows in the same call.
fn life_3_terminal_state_expires_current_turn_pending_rows(db: &TestDb) {
    for (n, state) in TERMINAL.into_iter().enumerate() {
        let session = mirror(db, &format!("s{n}"), "alice");
        let one = ask(db, &session, 2);
        let two = ask(db, &session, 1);
        db.set_session_state(&session, state).unwrap();
        assert_eq!(
            rows::statuses(db, &one),
            [s("expired"), s("expired")],
            "{state:?}"
        );
        assert_eq!(rows::statuses(db, &two), [s("expired")], "{state:?}");
        assert_eq!(session_row(db, &session).unwrap().1, state.as_str());
        assert!(!db.has_pending_clarification(&session).unwrap());
    }
}

/// LIFE-3, LIFE-4: rows of older turns and rows already answered (or
/// otherwise resolved) are left as they are; NULL and empty statuses
/// count as pending (ACT-1.1) and expire.
fn life_3_terminal_state_leaves_older_turns_and_resolved_rows(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let other = mirror(db, "b", "alice");
    let old = ask(db, &session, 2);
    db.begin_turn(&session).unwrap();
    let mixed = ask(db, &session, 3);
    set_status_of_row(db, &mixed, 0, "answered");
    let turn = rows::turn_of(db, &mixed);
    rows::insert_bundle(db, "degraded", &session, &turn, "t-a");
    for (i, status) in [
        None,
        Some(""),
        Some("pending"),
        Some("rejected"),
        Some("bogus"),
    ]
    .into_iter()
    .enumerate()
    {
        Row::new("degraded", &session, &turn)
            .question_id(&format!("q{i}"))
            .index(Some(i as i32))
            .status(status)
            .insert(db);
    }
    let elsewhere = ask(db, &other, 1);
    db.set_session_state(&session, SessionState::Completed)
        .unwrap();
    assert_eq!(rows::statuses(db, &old), [s("pending"), s("pending")]);
    assert_eq!(
        rows::statuses(db, &mixed),
        [s("answered"), s("expired"), s("expired")]
    );
    assert_eq!(
        rows::statuses(db, "degraded"),
        [
            s("expired"),
            s("expired"),
            s("expired"),
            s("rejected"),
            s("bogus")
        ]
    );
    assert_eq!(rows::statuses(db, &elsewhere), [s("pending")]);
    assert!(db.has_pending_clarification(&other).unwrap());
}

/// LIFE-3: upsert_session with a terminal state expires the same rows as
/// set_session_state does; without a state it expires nothing.
fn life_3_upsert_session_with_terminal_state_expires(db: &TestDb) {
    for (n, state) in TERMINAL.into_iter().enumerate() {
        let session = mirror(db, &format!("s{n}"), "alice");
        let task = format!("t-s{n}");
        let old = ask(db, &session, 1);
        db.begin_turn(&session).unwrap();
        let current = ask(db, &session, 2);
        db.upsert_session(session_upsert(&session, &task, None, Some(false)))
            .unwrap();
        assert_eq!(rows::statuses(db, &current), [s("pending"), s("pending")]);
        db.upsert_session(session_upsert(&session, &task, Some(state), None))
            .unwrap();
        assert_eq!(
            rows::statuses(db, &current),
            [s("expired"), s("expired")],
            "{state:?}"
        );
        assert_eq!(rows::statuses(db, &old), [s("pending")], "{state:?}");
        assert_eq!(
            session_row(db, &session),
            Some((task.clone(), state.as_str().to_owned(), false))
        );
        assert!(!db.has_pending_clarification(&session).unwrap());
    }
}

/// LIFE-4: repeating the terminal transition — the same state or another
/// terminal one, through either call — changes nothing.
fn life_4_repeating_expiry_changes_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 2);
    set_status_of_row(db, &pending_id, 1, "answered");
    db.set_session_state(&session, SessionState::Failed)
        .unwrap();
    assert_eq!(
        rows::statuses(db, &pending_id),
        [s("expired"), s("answered")]
    );
    let before = rows::dump(db);
    db.set_session_state(&session, SessionState::Failed)
        .unwrap();
    assert_eq!(rows::dump(db), before);
    db.upsert_session(session_upsert(
        &session,
        "t-a",
        Some(SessionState::Failed),
        None,
    ))
    .unwrap();
    assert_eq!(rows::dump(db), before);
    db.set_session_state(&session, SessionState::Cancelled)
        .unwrap();
    assert_eq!(
        rows::statuses(db, &pending_id),
        [s("expired"), s("answered")]
    );
    assert_eq!(session_row(db, &session).unwrap().1, "cancelled");
}

// ---- LIFE-5 -----------------------------------------------------------

dual_backend!(
    life_5_detach_marks_current_turn_active_bundles,
    life_5_detach_marks_resolved_undelivered_bundles,
    life_5_detach_leaves_older_turns_alone,
    life_5_bundle_asked_later_is_not_detached,
    life_5_repeating_detach_changes_nothing
);

/// LIFE-5: detach marks every active bundle of the current turn; they
/// stay active (has_pending_clarification) and their rows pending.
fn life_5_detach_marks_current_turn_active_bundles(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let one = ask(db, &session, 1);
    let two = ask(db, &session, 3);
    db.detach_session(&session).unwrap();
    assert!(rows::detached(db, &one));
    assert!(rows::detached(db, &two));
    assert!(db.has_pending_clarification(&session).unwrap());
    assert_eq!(
        rows::statuses(db, &two),
        [s("pending"), s("pending"), s("pending")]
    );
    let mut active = vec![one, two];
    active.sort();
    assert_eq!(rows::active_ids(db), active);
}

/// LIFE-5: a current-turn bundle that is resolved but undelivered is
/// marked too; one resolved and delivered is not.
fn life_5_detach_marks_resolved_undelivered_bundles(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let undelivered = ask(db, &session, 2);
    rows::answer_all(db, &undelivered);
    rows::mark_undelivered(db, &undelivered);
    let delivered = ask(db, &session, 1);
    rows::answer_all(db, &delivered);
    assert!(!db.has_pending_clarification(&session).unwrap());
    db.detach_session(&session).unwrap();
    assert!(rows::detached(db, &undelivered));
    assert!(!rows::detached(db, &delivered));
    assert_eq!(
        rows::statuses(db, &undelivered),
        [s("answered"), s("answered")]
    );
}

/// LIFE-5: bundles of older turns — pending or undelivered — are not
/// marked, nor are other sessions' bundles.
fn life_5_detach_leaves_older_turns_alone(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let other = mirror(db, "b", "alice");
    let old_pending = ask(db, &session, 1);
    let old_undelivered = ask(db, &session, 1);
    rows::answer_all(db, &old_undelivered);
    rows::mark_undelivered(db, &old_undelivered);
    db.begin_turn(&session).unwrap();
    let current = ask(db, &session, 1);
    let elsewhere = ask(db, &other, 1);
    db.detach_session(&session).unwrap();
    assert!(rows::detached(db, &current));
    assert!(!rows::detached(db, &old_pending));
    assert!(!rows::detached(db, &old_undelivered));
    assert!(!rows::detached(db, &elsewhere));
}

/// LIFE-5: a bundle asked after the detach is not detached, and it stays
/// active next to the detached one.
fn life_5_bundle_asked_later_is_not_detached(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let before = ask(db, &session, 1);
    db.detach_session(&session).unwrap();
    let later = ask(db, &session, 1);
    assert!(rows::detached(db, &before));
    assert!(!rows::detached(db, &later));
    assert_eq!(rows::turn_of(db, &later), rows::turn_of(db, &before));
    assert_eq!(rows::active_ids(db).len(), 2);
}

/// LIFE-5: repeating detach changes nothing; detaching a session with no
/// turn or no bundle is Ok and changes nothing.
fn life_5_repeating_detach_changes_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let empty = mirror(db, "b", "alice");
    db.detach_session(&empty).unwrap();
    ask(db, &session, 2);
    let undelivered = ask(db, &session, 1);
    rows::answer_all(db, &undelivered);
    rows::mark_undelivered(db, &undelivered);
    db.detach_session(&session).unwrap();
    let once = rows::dump(db);
    db.detach_session(&session).unwrap();
    db.detach_session(&empty).unwrap();
    assert_eq!(rows::dump(db), once);
}

// ---- LIFE-7 -----------------------------------------------------------

dual_backend!(life_7_has_pending_iff_an_active_bundle_exists);

/// LIFE-7: has_pending_clarification is true iff the session has an
/// active bundle (ACT-1), and only its own bundles count.
fn life_7_has_pending_iff_an_active_bundle_exists(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let other = mirror(db, "b", "alice");
    assert!(!db.has_pending_clarification(&session).unwrap(), "no turn");
    db.begin_turn(&session).unwrap();
    assert!(
        !db.has_pending_clarification(&session).unwrap(),
        "no bundle"
    );
    let pending_id = ask(db, &session, 2);
    assert!(db.has_pending_clarification(&session).unwrap());
    assert!(
        !db.has_pending_clarification(&other).unwrap(),
        "other session"
    );
    set_status_of_row(db, &pending_id, 0, "answered");
    assert!(
        db.has_pending_clarification(&session).unwrap(),
        "one row still pending"
    );
    set_status_of_row(db, &pending_id, 1, "rejected");
    assert!(
        !db.has_pending_clarification(&session).unwrap(),
        "no row pending"
    );
    let second = ask(db, &session, 1);
    assert!(db.has_pending_clarification(&session).unwrap());
    // ACT-1.3 alone (forced, so LIFE-3 expiry does not interfere).
    rows::force_state(db, &session, "completed");
    assert!(!db.has_pending_clarification(&session).unwrap(), "terminal");
    rows::force_state(db, &session, "waiting_for_input");
    assert!(db.has_pending_clarification(&session).unwrap());
    // ACT-1.2: superseded.
    db.begin_turn(&session).unwrap();
    assert!(
        !db.has_pending_clarification(&session).unwrap(),
        "superseded"
    );
    assert_eq!(rows::statuses(db, &second), [s("pending")]);
}

// ---- LIFE-10 ----------------------------------------------------------

dual_backend!(
    life_10_state_changes_in_any_direction_are_accepted,
    life_10_expired_rows_never_return_to_pending,
    life_10_unknown_session_is_not_found
);

/// LIFE-10: state changes in any direction are accepted, including from
/// a terminal state back to a live one.
fn life_10_state_changes_in_any_direction_are_accepted(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for from in SessionState::ALL {
        for to in SessionState::ALL {
            db.set_session_state(&session, from).unwrap();
            db.set_session_state(&session, to).unwrap();
            assert_eq!(
                session_row(db, &session).unwrap().1,
                to.as_str(),
                "{from:?} -> {to:?}"
            );
        }
    }
}

/// LIFE-10: expired rows never return to pending when the session comes
/// back to life; the revived session can ask again.
fn life_10_expired_rows_never_return_to_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 2);
    db.set_session_state(&session, SessionState::Cancelled)
        .unwrap();
    db.set_session_state(&session, SessionState::Running)
        .unwrap();
    assert_eq!(session_row(db, &session).unwrap().1, "running");
    assert_eq!(
        rows::statuses(db, &pending_id),
        [s("expired"), s("expired")]
    );
    assert!(!db.has_pending_clarification(&session).unwrap());
    db.upsert_session(session_upsert(
        &session,
        "t-a",
        Some(SessionState::Completed),
        None,
    ))
    .unwrap();
    db.upsert_session(session_upsert(
        &session,
        "t-a",
        Some(SessionState::Idle),
        None,
    ))
    .unwrap();
    assert_eq!(
        rows::statuses(db, &pending_id),
        [s("expired"), s("expired")]
    );
    assert!(!db.has_pending_clarification(&session).unwrap());
    let fresh = ask(db, &session, 1);
    assert!(db.has_pending_clarification(&session).unwrap());
    assert_eq!(rows::active_ids(db), [fresh]);
}

/// LIFE-10: operations on an unknown session are not-found naming the
/// session, and write nothing.
fn life_10_unknown_session_is_not_found(db: &TestDb) {
    mirror(db, "a", "alice");
    ask(db, "s-a", 1);
    let before = rows::dump(db);
    assert_not_found(
        db.set_session_state("s-nobody", SessionState::Completed),
        Entity::Session,
    );
    assert_not_found(
        db.set_session_state("s-nobody", SessionState::Running),
        Entity::Session,
    );
    assert_not_found(db.detach_session("s-nobody"), Entity::Session);
    assert_not_found(db.has_pending_clarification("s-nobody"), Entity::Session);
    assert_not_found(db.begin_turn("s-nobody"), Entity::Session);
    assert_eq!(rows::dump(db), before);
    // A deleted session is unknown too.
    db.delete_session("s-a").unwrap();
    assert_not_found(db.has_pending_clarification("s-a"), Entity::Session);
    assert_not_found(db.detach_session("s-a"), Entity::Session);
}
