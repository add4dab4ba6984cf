//! What `list_pending` returns and in which order: every active bundle
//! the principal can see, after a restart too (LIST-1); visibility inside
//! the query, so pages are full (LIST-2); `created_at`, then `pending_id`
//! (LIST-3); and no listing operation without `questions:read` (AUTH-2).

use clarion::{Error, Grant, ListRequest, Principal, SessionState, Timestamp, WorkspaceUpsert};

use crate::listing_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

fn assert_denied<T: std::fmt::Debug>(result: clarion::Result<T>) {
    assert!(
        matches!(result, Err(Error::CapabilityDenied)),
        "expected capability_denied, got {result:?}"
    );
}

// ---- LIST-1..3 ---------------------------------------------------------

dual_backend!(
    list_1_lists_active_bundles_visible_to_the_principal,
    list_1_listing_survives_a_restart,
    list_2_pages_are_full_despite_unlisted_bundles_in_between,
    list_3_orders_by_created_at,
    list_3_pending_id_tiebreak_is_byte_order,
    list_3_equal_created_at_ordered_by_pending_id
);

/// LIST-1: exactly the active bundles visible to the principal.
fn list_1_lists_active_bundles_visible_to_the_principal(db: &TestDb) {
    let [own, foreign, unowned, none, dangling] = visibility_world(db, Some(true));
    // Inactive bundles on tasks alice can see.
    let superseded = ask(db, "s-alice", 1);
    db.begin_turn("s-alice").unwrap();
    let current = ask(db, "s-alice", 1);
    let expired = ask(db, "s-none", 1);
    db.set_session_state("s-none", SessionState::Completed)
        .unwrap();
    let ended = session_in(db, "ended", "w-alice", Some(false));
    let forced = ask(db, &ended, 1);
    rows::force_state(db, &ended, "failed");
    let answered = ask(db, "s-open", 1);
    rows::answer_all(db, &answered);

    let alice_sees = list_ids(db, &alice(), &ListRequest::default());
    for inactive in [&superseded, &expired, &forced, &answered, &own, &none] {
        assert!(!alice_sees.contains(inactive), "{inactive} is not listed");
    }
    assert_eq!(
        alice_sees,
        [unowned.clone(), dangling.clone(), current.clone()]
    );
    assert_eq!(
        list_ids(db, &alice_bot(), &ListRequest::default()),
        alice_sees
    );
    assert_eq!(
        list_ids(db, &bob(), &ListRequest::default()),
        [foreign.clone(), unowned.clone(), dangling.clone()]
    );
    assert_eq!(
        list_ids(db, &Principal::System, &ListRequest::default()),
        [foreign, unowned, dangling, current]
    );
}

/// LIST-1: the listing is read from the database, so a fresh handle (a
/// restart) lists the same page.
fn list_1_listing_survives_a_restart(db: &TestDb) {
    visibility_world(db, Some(true));
    let before = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(before.bundles.len(), 4);
    let restarted = db.reopen();
    assert_eq!(
        restarted
            .list_pending(&alice(), &ListRequest::default())
            .unwrap(),
        before
    );
}

/// LIST-2: `limit` counts returned bundles: with many unlisted bundles
/// interleaved, every page but the last is full and the last one ends
/// the listing.
fn list_2_pages_are_full_despite_unlisted_bundles_in_between(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w-alice").owner("alice"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-bob").owner("bob"))
        .unwrap();
    let mine = session_in(db, "mine", "w-alice", Some(true));
    let foreign = session_in(db, "foreign", "w-bob", Some(true));
    let ending = session_in(db, "ending", "w-alice", Some(false));
    let old = session_in(db, "old", "w-alice", Some(false));
    let mut questions = Vec::new();
    let mut permissions = Vec::new();
    for _ in 0..6 {
        db.clock.advance_micros(SECOND);
        questions.push(ask(db, &mine, 1));
        db.clock.advance_micros(SECOND);
        ask(db, &foreign, 1);
        db.clock.advance_micros(SECOND);
        ask(db, &ending, 1);
        db.clock.advance_micros(SECOND);
        ask(db, &old, 1);
        db.clock.advance_micros(SECOND);
        permissions.push(ask_permission(db, &mine, 1));
        db.clock.advance_micros(SECOND);
        let answered = ask(db, &mine, 1);
        rows::answer_all(db, &answered);
    }
    db.set_session_state(&ending, SessionState::Cancelled)
        .unwrap();
    db.begin_turn(&old).unwrap();

    let mut human: Vec<String> = questions.iter().chain(&permissions).cloned().collect();
    human.sort();
    for (principal, expected) in [(alice_bot(), &questions), (alice(), &human)] {
        for limit in 1..=13_i64 {
            let pages = pages(db, &principal, &with_limit(limit));
            let limit = limit as usize;
            assert_eq!(&pages.concat(), expected, "{principal:?}, limit {limit}");
            assert_eq!(
                pages.len(),
                expected.len().div_ceil(limit),
                "{principal:?}, limit {limit}: no short page before the end"
            );
            for page in &pages[..pages.len() - 1] {
                assert_eq!(
                    page.len(),
                    limit,
                    "{principal:?}, limit {limit}: a page before the last is full"
                );
            }
        }
    }
}

/// LIST-3: `created_at` ascending, whatever the creation order.
fn list_3_orders_by_created_at(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
        .unwrap();
    let sessions: Vec<String> = (1..=4)
        .map(|n| session_in(db, &n.to_string(), "w", Some(true)))
        .collect();
    db.clock.set(Timestamp::from_micros(micros(10 * SECOND)));
    let at_10 = ask(db, &sessions[0], 1);
    db.clock.set(Timestamp::from_micros(micros(5 * SECOND)));
    let at_5 = ask(db, &sessions[1], 1);
    db.clock.set(Timestamp::from_micros(micros(SECOND)));
    let at_1 = ask(db, &sessions[2], 1);
    db.clock.set(Timestamp::from_micros(micros(7 * SECOND)));
    let at_7 = ask(db, &sessions[3], 1);
    let expected = [at_1, at_5, at_7, at_10];
    assert_eq!(list_ids(db, &alice(), &ListRequest::default()), expected);
    assert_eq!(collect_all(db, &alice(), 1), expected);
    assert_eq!(collect_all(db, &Principal::System, 3), expected);
}

/// LIST-3: the `pending_id` tiebreak is the same on both backends:
/// plain byte order, whatever the database collation would say about
/// case and punctuation.
fn list_3_pending_id_tiebreak_is_byte_order(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    for id in [
        "ab",
        "a-c",
        "b",
        "B",
        "a_b",
        "A",
        "a b",
        "a.c",
        "\u{e9}t\u{e9}",
        "e",
    ] {
        rows::insert_bundle(db, id, &session, &turn, "");
        Row::new(id, &session, &turn).insert(db);
    }
    let mut expected = strings(&[
        "ab",
        "a-c",
        "b",
        "B",
        "a_b",
        "A",
        "a b",
        "a.c",
        "\u{e9}t\u{e9}",
        "e",
    ]);
    expected.sort();
    assert_eq!(list_ids(db, &alice(), &ListRequest::default()), expected);
    assert_eq!(collect_all(db, &alice(), 3), expected);
}

/// LIST-3: bundles with equal `created_at` are ordered by `pending_id`,
/// on one page and across pages (the cursor breaks the tie too).
fn list_3_equal_created_at_ordered_by_pending_id(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    // Inserted out of order, all at EPOCH.
    for id in ["zeta", "alpha", "mid", "beta", "omega"] {
        rows::insert_bundle(db, id, &session, &turn, "");
        Row::new(id, &session, &turn).insert(db);
    }
    // Asked bundles at EPOCH too (the clock has not moved) and later.
    let same_time = ask(db, &session, 1);
    db.clock.advance_micros(1);
    let later = ask(db, &session, 1);
    assert_eq!(same_time, "pending-000001");
    let expected = strings(&[
        "alpha",
        "beta",
        "mid",
        "omega",
        same_time.as_str(),
        "zeta",
        later.as_str(),
    ]);
    assert_eq!(list_ids(db, &alice(), &ListRequest::default()), expected);
    for limit in 1..=4 {
        assert_eq!(collect_all(db, &alice(), limit), expected, "limit {limit}");
    }
}

// ---- AUTH-2 for the listing operations -----------------------------------

dual_backend!(auth_2_listing_operations_need_questions_read);

/// AUTH-2, AUTH-10: list_pending, summary and pending_actions need
/// `questions:read` from an agent and are denied to `unclassified`,
/// before any argument is validated.
fn auth_2_listing_operations_need_questions_read(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    // Malformed arguments are read at the door, after the capability.
    let garbage = |principal: &Principal| {
        db.call_value(&serde_json::json!({
            "op": "list_pending",
            "principal": principal.to_wire(),
            "args": {"cursor": "garbage!", "created_since": "yesterday"},
        }))
    };
    for principal in [
        alice_bot_with([]),
        alice_bot_with([Grant::QuestionsAnswer]),
        Principal::Unclassified,
    ] {
        assert_denied(db.list_pending(&principal, &ListRequest::default()));
        assert_eq!(garbage(&principal).status, 403);
        assert_denied(db.summary(&principal));
        assert_denied(db.pending_actions(&principal, &strings(&["t-a"])));
    }
    let reader = alice_bot_with([Grant::QuestionsRead]);
    assert_eq!(
        db.list_pending(&reader, &ListRequest::default())
            .unwrap()
            .bundles
            .len(),
        1
    );
    assert_eq!(summary_of(db, &reader).pending_bundles, 1);
    assert_eq!(
        actions(db, &reader, &["t-a"]),
        [entry("t-a", CLARIFICATION, CLARIFICATION)]
    );
}
