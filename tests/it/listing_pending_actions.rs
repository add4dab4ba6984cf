//! `pending_actions` (PA-1): one entry per visible requested task in
//! request order, permission over clarification, primary sessions only
//! for the session action, never a permission for an agent, null when
//! nothing is pending.

use clarion::envelope;
use clarion::{Clarion, ListRequest, Principal, SessionState, SessionUpsert, WorkspaceUpsert};

use crate::listing_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

/// Another session `s-<name>` on an existing task.
fn session_on(db: &Clarion, name: &str, task_id: &str, is_primary: bool) -> String {
    let session = format!("s-{name}");
    db.upsert_session(SessionUpsert::new(&session, task_id).primary(is_primary))
        .unwrap();
    session
}

// ---- PA-1 ----------------------------------------------------------------

dual_backend!(
    pa_1_request_order_first_occurrence_and_visibility,
    pa_1_permission_takes_precedence,
    pa_1_primary_session_action_counts_only_primary_sessions,
    pa_1_agent_never_sees_permission,
    pa_1_nothing_pending_is_null,
    pa_1_bundles_count_for_their_resolved_task
);

/// PA-1: request order, first occurrence of a repeated id only,
/// invisible and unknown ids omitted; `null` when nothing is pending.
fn pa_1_request_order_first_occurrence_and_visibility(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w-alice").owner("alice"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-bob").owner("bob"))
        .unwrap();
    ask(db, &session_in(db, "a", "w-alice", Some(true)), 1);
    session_in(db, "c", "w-alice", Some(true));
    ask(db, &session_in(db, "b", "w-bob", Some(true)), 1);
    let request = ["t-c", "t-b", "t-a", "t-unknown", "t-c", "t-a", "t-b"];

    assert_eq!(
        actions(db, &alice(), &request),
        [
            entry("t-c", None, None),
            entry("t-a", CLARIFICATION, CLARIFICATION)
        ]
    );
    let text =
        envelope::pending_actions(&db.pending_actions(&alice(), &strings(&request)).unwrap())
            .body_text();
    assert_eq!(
        text,
        concat!(
            r#"{"tasks":[{"task_id":"t-c","task_pending_action":null,"primary_session_pending_action":null},"#,
            r#"{"task_id":"t-a","task_pending_action":"clarification","primary_session_pending_action":"clarification"}]}"#,
        )
    );
    assert_eq!(
        actions(db, &bob(), &request),
        [entry("t-b", CLARIFICATION, CLARIFICATION)]
    );
    assert_eq!(
        actions(db, &Principal::System, &request),
        [
            entry("t-c", None, None),
            entry("t-b", CLARIFICATION, CLARIFICATION),
            entry("t-a", CLARIFICATION, CLARIFICATION)
        ]
    );
    assert!(actions(db, &alice(), &[]).is_empty());
    assert_eq!(
        envelope::pending_actions(&[]).body_text(),
        r#"{"tasks":[]}"#
    );
}

/// PA-1: `permission` takes precedence over `clarification`, whichever
/// was asked first.
fn pa_1_permission_takes_precedence(db: &TestDb) {
    let first_question = mirror(db, "q", "alice");
    ask(db, &first_question, 1);
    ask_permission(db, &first_question, 1);
    let first_permission = mirror(db, "p", "alice");
    ask_permission(db, &first_permission, 1);
    ask(db, &first_question, 2);
    ask(db, &first_permission, 1);
    for principal in [alice(), Principal::System] {
        assert_eq!(
            actions(db, &principal, &["t-q", "t-p"]),
            [
                entry("t-q", PERMISSION, PERMISSION),
                entry("t-p", PERMISSION, PERMISSION)
            ],
            "{principal:?}"
        );
    }
}

/// PA-1: `primary_session_pending_action` only counts bundles of
/// sessions with `is_primary = true`.
fn pa_1_primary_session_action_counts_only_primary_sessions(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
        .unwrap();
    // t-side: the primary session has nothing pending; a side session asks.
    session_in(db, "side", "w", Some(true));
    ask(db, &session_on(db, "side-helper", "t-side", false), 1);
    // t-mix: the primary asks a question, a side session a permission.
    ask(db, &session_in(db, "mix", "w", Some(true)), 1);
    ask_permission(db, &session_on(db, "mix-helper", "t-mix", false), 1);
    // t-flip: the same session is made primary later.
    let flip = session_in(db, "flip", "w", Some(false));
    ask_permission(db, &flip, 1);
    let tasks = ["t-side", "t-mix", "t-flip"];
    assert_eq!(
        actions(db, &alice(), &tasks),
        [
            entry("t-side", CLARIFICATION, None),
            entry("t-mix", PERMISSION, CLARIFICATION),
            entry("t-flip", PERMISSION, None)
        ]
    );
    db.upsert_session(SessionUpsert::new(&flip, "t-flip").primary(true))
        .unwrap();
    assert_eq!(
        actions(db, &alice(), &["t-flip"]),
        [entry("t-flip", PERMISSION, PERMISSION)]
    );
}

/// PA-1, AUTH-6: an agent never sees `permission`.
fn pa_1_agent_never_sees_permission(db: &TestDb) {
    let only_permission = mirror(db, "p", "alice");
    ask_permission(db, &only_permission, 1);
    let both = mirror(db, "q", "alice");
    ask(db, &both, 1);
    ask_permission(db, &both, 1);
    let tasks = ["t-p", "t-q"];
    assert_eq!(
        actions(db, &alice_bot(), &tasks),
        [
            entry("t-p", None, None),
            entry("t-q", CLARIFICATION, CLARIFICATION)
        ]
    );
    let text =
        envelope::pending_actions(&db.pending_actions(&alice_bot(), &strings(&tasks)).unwrap())
            .body_text();
    assert!(!text.contains("permission"), "{text}");
    assert_eq!(
        actions(db, &alice(), &tasks),
        [
            entry("t-p", PERMISSION, PERMISSION),
            entry("t-q", PERMISSION, PERMISSION)
        ]
    );
}

/// PA-1: only active bundles count; nothing pending is JSON `null`.
fn pa_1_nothing_pending_is_null(db: &TestDb) {
    let superseded = mirror(db, "x", "alice");
    ask_permission(db, &superseded, 1);
    db.begin_turn(&superseded).unwrap();
    let ended = mirror(db, "y", "alice");
    ask(db, &ended, 1);
    db.set_session_state(&ended, SessionState::Failed).unwrap();
    let answered = mirror(db, "z", "alice");
    let done = ask(db, &answered, 1);
    rows::answer_all(db, &done);
    mirror(db, "e", "alice");
    let tasks = ["t-x", "t-y", "t-z", "t-e"];
    for principal in [alice(), Principal::System] {
        let text =
            envelope::pending_actions(&db.pending_actions(&principal, &strings(&tasks)).unwrap())
                .body_text();
        let expected: String = tasks
            .iter()
            .map(|t| format!(r#"{{"task_id":"{t}","task_pending_action":null,"primary_session_pending_action":null}}"#))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(
            text,
            format!(r#"{{"tasks":[{expected}]}}"#),
            "{principal:?}"
        );
    }
}

/// PA-1, AUTH-4: a bundle counts for its resolved task: an empty task id
/// resolves via the session; an unresolvable task id counts nowhere.
fn pa_1_bundles_count_for_their_resolved_task(db: &TestDb) {
    let a = mirror(db, "a", "alice");
    let b = mirror(db, "b", "alice");
    let turn_a = db.begin_turn(&a).unwrap();
    rows::insert_bundle(db, "via-session", &a, &turn_a, "");
    Row::new("via-session", &a, &turn_a).insert(db);
    let turn_b = db.begin_turn(&b).unwrap();
    rows::insert_bundle(db, "orphan", &b, &turn_b, "t-gone");
    Row::new("orphan", &b, &turn_b).insert(db);
    for principal in [alice(), Principal::System] {
        assert_eq!(
            actions(db, &principal, &["t-a", "t-b", "t-gone"]),
            [
                entry("t-a", CLARIFICATION, CLARIFICATION),
                entry("t-b", None, None)
            ],
            "{principal:?}"
        );
    }
}

dual_backend!(pa_1_an_unanswerable_active_bundle_still_blocks_its_task);

/// PA-1 with LIFE-7: an active bundle that cannot be answered (an empty
/// question id) is not listed, but it still blocks its task, exactly as
/// the workflow guard says.
fn pa_1_an_unanswerable_active_bundle_still_blocks_its_task(db: &TestDb) {
    let session = mirror(db, "u", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "no-id", &session, &turn, "");
    Row::new("no-id", &session, &turn)
        .question_id("")
        .insert(db);
    assert!(db.has_pending_clarification(&session).unwrap());
    let alice = alice();
    assert!(db
        .list_pending(&alice, &ListRequest::default())
        .unwrap()
        .bundles
        .is_empty());
    let actions = db.pending_actions(&alice, &["t-u".to_owned()]).unwrap();
    assert_eq!(
        actions[0].task_pending_action,
        Some(clarion::PendingAction::Clarification)
    );
}
