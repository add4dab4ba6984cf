//! `summary` (SUM-1): its counts equal what paging `list_pending` to the
//! end would give, pending questions count NULL and empty statuses, and
//! the oldest age.

use clarion::envelope;
use clarion::{Clarion, Principal, SessionState, Summary, WorkspaceUpsert};

use crate::listing_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

/// The questions showing "pending" over every page of the listing.
fn pending_rows_listed(db: &Clarion, principal: &Principal) -> i64 {
    let mut request = with_limit(3);
    let mut count = 0;
    loop {
        let page = db.list_pending(principal, &request).unwrap();
        count += page
            .bundles
            .iter()
            .flat_map(|b| &b.questions)
            .filter(|q| q.status.as_str() == "pending")
            .count() as i64;
        if page.next_cursor.is_none() {
            return count;
        }
        request.cursor = page.next_cursor;
    }
}

/// Expected SUM-1 results in a world with visible, invisible, inactive,
/// permission, mixed and unanswerable bundles.
struct Expected {
    principal: Principal,
    bundles: Vec<String>,
    pending_questions: i64,
}

fn summary_world(db: &TestDb) -> Vec<Expected> {
    db.upsert_workspace(WorkspaceUpsert::new("w-alice").owner("alice"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-bob").owner("bob"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-open").owner(""))
        .unwrap();
    let a = session_in(db, "alice", "w-alice", Some(true));
    let b = session_in(db, "bob", "w-bob", Some(true));
    let open = session_in(db, "open", "w-open", Some(true));
    let dangling = session_in(db, "dangling", "w-gone", Some(true));
    let ended = session_in(db, "ended", "", Some(true));
    let superseded = session_in(db, "superseded", "w-alice", Some(true));
    let tick = || db.clock.advance_micros(SECOND);

    tick();
    let a1 = ask(db, &a, 1);
    tick();
    let a2 = ask(db, &a, 2);
    tick();
    let a_perm = ask_permission(db, &a, 1);
    tick();
    let a_mixed = ask(db, &a, 3);
    rows::set_status(db, &a_mixed, "q2", Some("answered"));
    tick();
    let b1 = ask(db, &b, 2);
    tick();
    let b_perm = ask_permission(db, &b, 1);
    tick();
    let o1 = ask(db, &open, 1);
    tick();
    let o_done = ask(db, &open, 2);
    rows::answer_all(db, &o_done);
    tick();
    let d1 = ask(db, &dangling, 1);
    tick();
    let d_perm = ask_permission(db, &dangling, 1);
    tick();
    ask(db, &ended, 2);
    db.set_session_state(&ended, SessionState::Completed)
        .unwrap();
    tick();
    ask(db, &superseded, 2);
    db.begin_turn(&superseded).unwrap();
    let s1 = ask(db, &superseded, 1);
    // Unanswerable (LIST-9): an empty question id, and an unresolvable task.
    let open_turn = rows::turn_of(db, &o1);
    rows::insert_bundle(db, "x-empty-qid", &open, &open_turn, "");
    Row::new("x-empty-qid", &open, &open_turn).insert(db);
    Row::new("x-empty-qid", &open, &open_turn)
        .question_id("")
        .index(Some(1))
        .insert(db);
    rows::insert_bundle(db, "x-no-task", &open, &open_turn, "t-never");
    Row::new("x-no-task", &open, &open_turn).insert(db);
    tick();

    vec![
        Expected {
            principal: alice(),
            bundles: vec![
                a1.clone(),
                a2.clone(),
                a_perm.clone(),
                a_mixed.clone(),
                o1.clone(),
                d1.clone(),
                d_perm.clone(),
                s1.clone(),
            ],
            // 1 + 2 + 1 + (3 - 1 answered) + 1 + 1 + 1 + 1
            pending_questions: 10,
        },
        Expected {
            principal: alice_bot(),
            bundles: vec![
                a1.clone(),
                a2.clone(),
                a_mixed.clone(),
                o1.clone(),
                d1.clone(),
                s1.clone(),
            ],
            pending_questions: 8,
        },
        Expected {
            principal: bob(),
            bundles: vec![
                b1.clone(),
                b_perm.clone(),
                o1.clone(),
                d1.clone(),
                d_perm.clone(),
            ],
            pending_questions: 6,
        },
        Expected {
            principal: bob_bot(),
            bundles: vec![b1.clone(), o1.clone(), d1.clone()],
            pending_questions: 4,
        },
        Expected {
            principal: Principal::System,
            bundles: vec![a1, a2, a_perm, a_mixed, b1, b_perm, o1, d1, d_perm, s1],
            pending_questions: 13,
        },
    ]
}

// ---- SUM-1 ---------------------------------------------------------------

dual_backend!(
    sum_1_pending_bundles_equals_the_paged_listing,
    sum_1_pending_questions_counts_pending_rows_of_listed_bundles,
    sum_1_pending_questions_counts_null_and_empty_statuses,
    sum_1_oldest_age_seconds
);

/// SUM-1: `pending_bundles` equals what paging `list_pending` to the end
/// collects, for every kind of principal.
fn sum_1_pending_bundles_equals_the_paged_listing(db: &TestDb) {
    for expected in summary_world(db) {
        let principal = &expected.principal;
        let mut sorted = expected.bundles.clone();
        sorted.sort();
        for limit in [1, 2, 50] {
            assert_eq!(
                collect_all(db, principal, limit),
                sorted,
                "{principal:?}, limit {limit}"
            );
        }
        assert_eq!(
            summary_of(db, principal).pending_bundles,
            expected.bundles.len() as i64,
            "{principal:?}"
        );
    }
}

/// SUM-1: `pending_questions` counts only the still-pending rows of the
/// listed bundles (a mixed bundle contributes its pending rows only).
fn sum_1_pending_questions_counts_pending_rows_of_listed_bundles(db: &TestDb) {
    for expected in summary_world(db) {
        let principal = &expected.principal;
        let listed = pending_rows_listed(db, principal);
        let summary = summary_of(db, principal);
        assert_eq!(
            summary.pending_questions, expected.pending_questions,
            "{principal:?}"
        );
        assert_eq!(summary.pending_questions, listed, "{principal:?}");
    }
}

/// SUM-1: NULL and empty statuses count as pending rows; an
/// unrecognized status does not.
fn sum_1_pending_questions_counts_null_and_empty_statuses(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "degraded", &session, &turn, "");
    Row::new("degraded", &session, &turn)
        .question_id("a")
        .status(None)
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("b")
        .index(Some(1))
        .status(Some(""))
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("c")
        .index(Some(2))
        .status(Some("pending"))
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("d")
        .index(Some(3))
        .status(Some("on_hold"))
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("e")
        .index(Some(4))
        .status(Some("answered"))
        .insert(db);
    let summary = summary_of(db, &alice());
    assert_eq!((summary.pending_bundles, summary.pending_questions), (1, 3));
}

/// SUM-1: `oldest_age_seconds` is 0 with nothing pending, otherwise the
/// whole seconds since the oldest listed bundle was created.
fn sum_1_oldest_age_seconds(db: &TestDb) {
    assert_eq!(
        envelope::summary(&summary_of(db, &alice())).body_text(),
        r#"{"pending_bundles":0,"pending_questions":0,"oldest_age_seconds":0}"#
    );
    let mine = mirror(db, "a", "alice");
    let theirs = mirror(db, "b", "bob");
    ask(db, &theirs, 1);
    db.clock.advance_micros(10 * SECOND);
    let first = ask(db, &mine, 2);
    db.clock.advance_micros(20 * SECOND);
    ask(db, &mine, 1);
    db.clock.advance_micros(30 * SECOND + 500_000);

    assert_eq!(
        envelope::summary(&summary_of(db, &alice())).body_text(),
        r#"{"pending_bundles":2,"pending_questions":3,"oldest_age_seconds":50}"#
    );
    assert_eq!(
        envelope::summary(&summary_of(db, &bob())).body_text(),
        r#"{"pending_bundles":1,"pending_questions":1,"oldest_age_seconds":60}"#
    );
    assert_eq!(
        envelope::summary(&summary_of(db, &Principal::System)).body_text(),
        r#"{"pending_bundles":3,"pending_questions":4,"oldest_age_seconds":60}"#
    );

    // The oldest bundle stops being pending: the next one is the oldest.
    rows::answer_all(db, &first);
    assert_eq!(
        summary_of(db, &alice()),
        Summary {
            pending_bundles: 1,
            pending_questions: 1,
            oldest_age_seconds: 30
        }
    );
    // Nothing pending any more: all zero.
    db.set_session_state(&mine, SessionState::Completed)
        .unwrap();
    assert_eq!(
        summary_of(db, &alice()),
        Summary {
            pending_bundles: 0,
            pending_questions: 0,
            oldest_age_seconds: 0
        }
    );
}
