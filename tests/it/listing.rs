//! LIST-1..10, SUM-1, PA-1 and the listing envelopes of WIRE-3: the inbox,
//! its count and which tasks are blocked, on both backends.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use clarion::envelope;
use clarion::{
    Clarion, Error, Grant, ListPage, ListRequest, OptionSpec, PendingAction, Principal,
    QuestionSpec, SessionState, SessionUpsert, Summary, TaskPendingActions, Timestamp,
};

use crate::support::rows::{self, Row};
use crate::support::*;

const SECOND: i64 = 1_000_000;

/// Another session `s-<name>` on an existing task.
fn session_on(db: &Clarion, name: &str, task_id: &str, is_primary: bool) -> String {
    let session = format!("s-{name}");
    db.upsert_session(SessionUpsert::new(&session, task_id).primary(is_primary))
        .unwrap();
    session
}

fn with_limit(limit: i64) -> ListRequest {
    ListRequest {
        limit: Some(limit),
        ..ListRequest::default()
    }
}

fn since(created_since: &str) -> ListRequest {
    ListRequest {
        // The wire's parser (the Rust API takes a typed time).
        created_since: Timestamp::parse_rfc3339_ceil(created_since),
        ..ListRequest::default()
    }
}

fn in_workspace(workspace_id: &str) -> ListRequest {
    ListRequest {
        workspace_id: Some(workspace_id.to_owned()),
        ..ListRequest::default()
    }
}

fn ids(page: &ListPage) -> Vec<String> {
    page.bundles.iter().map(|b| b.pending_id.clone()).collect()
}

fn list_ids(db: &Clarion, principal: &Principal, request: &ListRequest) -> Vec<String> {
    ids(&db.list_pending(principal, request).unwrap())
}

/// Pages `list_pending` to the end, following `next_cursor`; one entry of
/// pending ids per page.
fn pages(db: &Clarion, principal: &Principal, request: &ListRequest) -> Vec<Vec<String>> {
    let mut request = request.clone();
    let mut pages = Vec::new();
    for _ in 0..10_000 {
        let page = db.list_pending(principal, &request).unwrap();
        pages.push(ids(&page));
        if page.next_cursor.is_none() {
            return pages;
        }
        request.cursor = page.next_cursor;
    }
    panic!("paging never ended");
}

fn collect_all(db: &Clarion, principal: &Principal, limit: i64) -> Vec<String> {
    pages(db, principal, &with_limit(limit)).concat()
}

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

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn assert_denied<T: std::fmt::Debug>(result: clarion::Result<T>) {
    assert!(
        matches!(result, Err(Error::CapabilityDenied)),
        "expected capability_denied, got {result:?}"
    );
}

fn b64(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(text)
}

fn micros(offset: i64) -> i64 {
    EPOCH.as_micros() + offset
}

fn rfc3339(offset: i64) -> String {
    Timestamp::from_micros(micros(offset)).to_rfc3339()
}

fn summary_of(db: &Clarion, principal: &Principal) -> Summary {
    db.summary(principal).unwrap()
}

fn actions(
    db: &Clarion,
    principal: &Principal,
    task_ids: &[&str],
) -> Vec<(String, Option<PendingAction>, Option<PendingAction>)> {
    db.pending_actions(principal, &strings(task_ids))
        .unwrap()
        .into_iter()
        .map(|t: TaskPendingActions| {
            (
                t.task_id,
                t.task_pending_action,
                t.primary_session_pending_action,
            )
        })
        .collect()
}

fn entry(
    task_id: &str,
    task: Option<PendingAction>,
    primary: Option<PendingAction>,
) -> (String, Option<PendingAction>, Option<PendingAction>) {
    (task_id.to_owned(), task, primary)
}

const CLARIFICATION: Option<PendingAction> = Some(PendingAction::Clarification);
const PERMISSION: Option<PendingAction> = Some(PendingAction::Permission);

/// Expected SUM-1 results in a world with visible, invisible, inactive,
/// permission, mixed and unanswerable bundles.
struct Expected {
    principal: Principal,
    bundles: Vec<String>,
    pending_questions: i64,
}

fn summary_world(db: &TestDb) -> Vec<Expected> {
    db.upsert_workspace("w-alice", Some("alice")).unwrap();
    db.upsert_workspace("w-bob", Some("bob")).unwrap();
    db.upsert_workspace("w-open", Some("")).unwrap();
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
    db.upsert_workspace("w-alice", Some("alice")).unwrap();
    db.upsert_workspace("w-bob", Some("bob")).unwrap();
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
    db.upsert_workspace("w", Some("alice")).unwrap();
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

// ---- LIST-4 --------------------------------------------------------------

dual_backend!(
    list_4_workspace_id_narrows_within_visibility,
    list_4_created_since_keeps_bundles_at_or_after_it,
    list_4_created_since_and_cursor_intersect,
    list_4_limit_default_floor_and_clamp,
    list_4_malformed_cursor_is_a_validation_error,
    list_4_created_since_with_sub_microsecond_digits_keeps_only_later_bundles,
    list_4_malformed_created_since_is_a_validation_error
);

/// LIST-4: `workspace_id` narrows to bundles whose task (AUTH-4) is in
/// that workspace, and never widens visibility.
fn list_4_workspace_id_narrows_within_visibility(db: &TestDb) {
    let [own, foreign, unowned, none, dangling] = visibility_world(db, Some(true));
    // A bundle without its own task id belongs to its session's task.
    let turn = rows::turn_of(db, &unowned);
    rows::insert_bundle(db, "via-session", "s-open", &turn, "");
    Row::new("via-session", "s-open", &turn).insert(db);

    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-alice")),
        [own.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-open")),
        strings(&[&unowned, "via-session"])
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-gone")),
        [dangling.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-bob")),
        Vec::<String>::new(),
        "no widening"
    );
    assert_eq!(
        list_ids(db, &alice_bot(), &in_workspace("w-bob")),
        Vec::<String>::new(),
        "no widening"
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-missing")),
        Vec::<String>::new()
    );
    assert_eq!(
        list_ids(db, &bob(), &in_workspace("w-bob")),
        [foreign.as_str()]
    );
    assert_eq!(
        list_ids(db, &bob(), &in_workspace("w-alice")),
        Vec::<String>::new()
    );
    assert_eq!(
        list_ids(db, &Principal::System, &in_workspace("w-bob")),
        [foreign.as_str()]
    );
    assert_eq!(
        list_ids(db, &Principal::System, &in_workspace("w-alice")),
        [own.as_str()]
    );

    // The empty string means "not given".
    let everything = list_ids(db, &alice(), &ListRequest::default());
    assert_eq!(
        everything,
        strings(&[&own, &unowned, &none, &dangling, "via-session"])
    );
    assert_eq!(list_ids(db, &alice(), &in_workspace("")), everything);
}

/// LIST-4: `created_since` keeps `created_at >= created_since`; the
/// boundary itself is included; any offset is accepted; "" is not given.
fn list_4_created_since_keeps_bundles_at_or_after_it(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let b0 = ask(db, &session, 1);
    db.clock.advance_micros(SECOND);
    let b1 = ask(db, &session, 1);
    db.clock.advance_micros(1);
    let b2 = ask(db, &session, 1);
    db.clock.advance_micros(SECOND - 1);
    let b3 = ask(db, &session, 1);

    let listed = |created_since: &str| list_ids(db, &alice(), &since(created_since));
    assert_eq!(
        listed("2026-11-29T20:00:01Z"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T20:00:01.000000Z"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T20:00:00.999999Z"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T20:00:01.000001Z"),
        [b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T21:00:01+01:00"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(listed("2026-11-29T20:00:02Z"), [b3.as_str()]);
    assert_eq!(listed("2026-11-29T20:00:02.000001Z"), Vec::<String>::new());
    assert_eq!(
        listed("2026-11-29T20:00:00Z"),
        [b0.clone(), b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(listed(""), [b0, b1, b2, b3]);
    let empty = db
        .list_pending(&alice(), &since("2027-01-01T00:00:00Z"))
        .unwrap();
    assert_eq!((empty.bundles.len(), empty.next_cursor), (0, None));
}

/// LIST-4: `cursor` and `created_since` combine as an intersection:
/// whichever is later bounds the page.
fn list_4_created_since_and_cursor_intersect(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let b: Vec<String> = (0..6)
        .map(|_| {
            let id = ask(db, &session, 1);
            db.clock.advance_micros(SECOND);
            id
        })
        .collect();
    let cursor_after = |n: i64| {
        db.list_pending(&alice(), &with_limit(n))
            .unwrap()
            .next_cursor
    };
    let after_b1 = cursor_after(2);
    let after_b3 = cursor_after(4);
    assert!(after_b1.is_some() && after_b3.is_some());

    let both = |cursor: &Option<clarion::Cursor>, created_since: i64| ListRequest {
        cursor: cursor.clone(),
        created_since: Timestamp::parse_rfc3339(&rfc3339(created_since)),
        ..ListRequest::default()
    };
    // created_since later than the cursor.
    assert_eq!(
        list_ids(db, &alice(), &both(&after_b1, 3 * SECOND)),
        b[3..].to_vec()
    );
    // The cursor later than created_since.
    assert_eq!(
        list_ids(db, &alice(), &both(&after_b3, SECOND)),
        b[4..].to_vec()
    );
    // Equal: created_since at the cursor's own bundle; strictly after it.
    assert_eq!(
        list_ids(db, &alice(), &both(&after_b3, 3 * SECOND)),
        b[4..].to_vec()
    );
    // Paging under a created_since keeps it.
    let request = ListRequest {
        limit: Some(2),
        ..since(&rfc3339(2 * SECOND))
    };
    assert_eq!(
        pages(db, &alice(), &request),
        [b[2..4].to_vec(), b[4..6].to_vec()]
    );
}

/// LIST-4: `limit` defaults to 50; below 1 means 50; above 200 is
/// clamped to 200.
fn list_4_limit_default_floor_and_clamp(db: &TestDb) {
    let sessions: Vec<String> = (0..3)
        .map(|n| mirror(db, &format!("s{n}"), "alice"))
        .collect();
    for n in 0..205 {
        ask(db, &sessions[n % 3], 1);
    }
    let size = |limit: Option<i64>| {
        let page = db
            .list_pending(
                &alice(),
                &ListRequest {
                    limit,
                    ..ListRequest::default()
                },
            )
            .unwrap();
        assert!(page.next_cursor.is_some(), "limit {limit:?} leaves more");
        page.bundles.len()
    };
    assert_eq!(size(None), 50);
    assert_eq!(size(Some(0)), 50);
    assert_eq!(size(Some(-1)), 50);
    assert_eq!(size(Some(i64::MIN)), 50);
    assert_eq!(size(Some(1)), 1);
    assert_eq!(size(Some(199)), 199);
    assert_eq!(size(Some(200)), 200);
    assert_eq!(size(Some(201)), 200);
    assert_eq!(size(Some(500)), 200);
    assert_eq!(size(Some(i64::MAX)), 200);
    let pages = pages(db, &alice(), &with_limit(500));
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [200, 5]);
    let default_pages = pages_len(db);
    assert_eq!(default_pages, [50, 50, 50, 50, 5]);
}

/// LIST-4: a malformed cursor is a validation error naming `cursor`,
/// never ignored.
fn list_4_malformed_cursor_is_a_validation_error(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for _ in 0..3 {
        ask(db, &session, 1);
    }
    let real = db
        .list_pending(&alice(), &with_limit(1))
        .unwrap()
        .next_cursor
        .unwrap()
        .encode();
    let decoded = String::from_utf8(URL_SAFE_NO_PAD.decode(&real).unwrap()).unwrap();
    let (version, rest) = decoded.split_once(':').unwrap();
    assert_eq!(
        version, "v1",
        "this test forges other versions of {decoded:?}"
    );
    let wrong_version = [
        b64(&format!("v2:{rest}")),
        b64(&format!("v0:{rest}")),
        b64(rest),
    ];
    let garbage = [
        "garbage!".to_owned(),
        "%%%".to_owned(),
        "not a cursor".to_owned(),
        b64("garbage"),
        b64("v1:"),
        b64("v1:not-a-number:pending-000001"),
        b64("v1:123:"),
        b64("v1:123"),
        URL_SAFE_NO_PAD.encode([0xff_u8, 0xfe, 0x00]),
        format!("{real}!"),
    ];
    // The wire form is read at the door: through WIRE-5 on both principals.
    let listed = |principal: &Principal, cursor: &str| {
        db.call_value(&serde_json::json!({
            "op": "list_pending",
            "principal": principal.to_wire(),
            "args": {"cursor": cursor},
        }))
    };
    for cursor in wrong_version.iter().chain(&garbage) {
        assert_invalid(
            clarion::Cursor::parse(cursor).map_err(Error::from),
            "cursor",
        );
        for principal in [alice(), Principal::System] {
            let reply = listed(&principal, cursor);
            assert_eq!(reply.status, 400, "{cursor:?}");
            assert_eq!(reply.body["error"], "cursor: malformed cursor");
        }
    }
    // The real cursor works; "" means not given.
    assert_eq!(listed(&alice(), &real).body["count"], 2);
    assert_eq!(listed(&alice(), "").body["count"], 3);
}

/// LIST-4: `created_at >= created_since` holds exactly even when
/// `created_since` carries sub-microsecond digits: a bundle created
/// before that instant is not kept.
fn list_4_created_since_with_sub_microsecond_digits_keeps_only_later_bundles(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(SECOND);
    let at_one = ask(db, &session, 1);
    db.clock.advance_micros(1);
    let just_after = ask(db, &session, 1);
    assert_eq!(
        list_ids(db, &alice(), &since("2026-11-29T20:00:00.9999995Z")),
        [at_one.clone(), just_after.clone()]
    );
    assert_eq!(
        list_ids(db, &alice(), &since("2026-11-29T20:00:01.0000005Z")),
        [just_after.as_str()],
        "a bundle created at 20:00:01.000000 is before 20:00:01.0000005"
    );
}

/// LIST-4: a malformed `created_since` is a validation error naming it.
fn list_4_malformed_created_since_is_a_validation_error(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    // The time is read at the door (the Rust API takes a typed time).
    for text in [
        "yesterday",
        "2026-11-29",
        "2026-11-29T20:00:00",
        "2026-13-01T00:00:00Z",
        "1795982400",
    ] {
        let reply = db.call_value(&serde_json::json!({
            "op": "list_pending",
            "principal": alice().to_wire(),
            "args": {"created_since": text},
        }));
        assert_eq!(reply.status, 400, "{text}");
        assert!(
            reply.body["error"]
                .as_str()
                .unwrap()
                .starts_with("created_since: "),
            "{text}"
        );
    }
}

/// The page sizes of a full walk with the default limit.
fn pages_len(db: &Clarion) -> Vec<usize> {
    pages(db, &alice(), &ListRequest::default())
        .iter()
        .map(Vec::len)
        .collect()
}

// ---- LIST-5..7 -----------------------------------------------------------

dual_backend!(
    list_5_count_and_next_cursor,
    list_6_envelope_text_and_key_order,
    list_6_kind_and_age_floored_at_zero,
    list_7_degraded_rows_are_never_null,
    list_7_unrecognized_status_shown_as_stored
);

/// LIST-5: `count` is the page length; `next_cursor` is "" exactly when
/// no more bundles exist, including when the last page is exactly full.
fn list_5_count_and_next_cursor(db: &TestDb) {
    let empty = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(
        envelope::list_page(&empty).body_text(),
        r#"{"bundles":[],"count":0,"next_cursor":""}"#
    );

    let session = mirror(db, "a", "alice");
    for _ in 0..4 {
        ask(db, &session, 1);
    }
    let first = db.list_pending(&alice(), &with_limit(2)).unwrap();
    assert_eq!(first.bundles.len(), 2);
    assert!(first.next_cursor.is_some());
    let second_request = ListRequest {
        cursor: first.next_cursor.clone(),
        ..with_limit(2)
    };
    let second = db.list_pending(&alice(), &second_request).unwrap();
    assert_eq!(ids(&second), ["pending-000003", "pending-000004"]);
    assert_eq!(
        second.next_cursor, None,
        "an exactly full last page ends the listing"
    );
    for limit in [3, 4, 5] {
        let page = db.list_pending(&alice(), &with_limit(limit)).unwrap();
        assert_eq!(page.next_cursor.is_none(), limit >= 4, "limit {limit}");
    }

    for page in [&first, &second] {
        let body = envelope::list_page(page).body;
        let object = body.as_object().unwrap();
        assert_eq!(
            object.keys().collect::<Vec<_>>(),
            ["bundles", "count", "next_cursor"],
            "no grand total"
        );
        assert_eq!(
            object["count"],
            serde_json::json!(object["bundles"].as_array().unwrap().len())
        );
        assert_eq!(object["count"], 2);
        assert_eq!(
            object["next_cursor"],
            serde_json::json!(page
                .next_cursor
                .as_ref()
                .map(clarion::Cursor::encode)
                .unwrap_or_default())
        );
    }
}

/// LIST-6: the exact envelope text: key order of the envelope, the bundle
/// element, the question and the option; RFC 3339 with six digits; age
/// in whole seconds.
fn list_6_envelope_text_and_key_order(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(5 * SECOND + 123);
    let request = clarion::AskRequest {
        session_id: session.clone(),
        questions: vec![
            QuestionSpec {
                question_id: Some("color".to_owned()),
                title: "Colour".to_owned(),
                prompt: "Which colour?".to_owned(),
                options: vec![
                    OptionSpec {
                        option_id: Some("red".to_owned()),
                        label: "Red".to_owned(),
                        description: "Warm".to_owned(),
                    },
                    OptionSpec {
                        option_id: None,
                        label: "Blue".to_owned(),
                        description: "Cool".to_owned(),
                    },
                ],
            },
            question("ship it?"),
        ],
        context: "pick one".to_owned(),
        ..clarion::AskRequest::default()
    };
    db.ask(&request).unwrap();
    db.clock.advance_micros(7_900_000);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    let text = envelope::list_page(&page).body_text();
    let expected = concat!(
        r#"{"bundles":[{"pending_id":"pending-000001","task_id":"t-a","session_id":"s-a","kind":"question","#,
        r#""created_at":"2026-11-29T20:00:05.000123Z","age_seconds":7,"context":"pick one","questions":["#,
        r#"{"question_id":"color","title":"Colour","prompt":"Which colour?","status":"pending","options":["#,
        r#"{"option_id":"red","label":"Red","description":"Warm"},"#,
        r#"{"option_id":"color_opt2","label":"Blue","description":"Cool"}]},"#,
        r#"{"question_id":"q2","title":"About ship it?","prompt":"ship it?","status":"pending","options":["#,
        r#"{"option_id":"q2_opt1","label":"Yes","description":"Yes, described"},"#,
        r#"{"option_id":"q2_opt2","label":"No","description":"No, described"}]}]}],"#,
        r#""count":1,"next_cursor":""}"#,
    );
    assert_eq!(text, expected);
    assert!(!text.contains("null"));
}

/// LIST-6: a permission bundle shows its kind; age is floored at 0 when
/// the server clock is behind the bundle.
fn list_6_kind_and_age_floored_at_zero(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(10 * SECOND);
    let permission = ask_permission(db, &session, 1);
    db.clock.set(EPOCH);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), [permission]);
    let text = envelope::list_page(&page).body_text();
    assert!(
        text.contains(
            r#""kind":"permission","created_at":"2026-11-29T20:00:10.000000Z","age_seconds":0,"#
        ),
        "{text}"
    );
}

/// LIST-7: degraded rows: a NULL or empty status shows "pending", an
/// unrecognized status is shown as stored, an unparseable or mistyped
/// payload shows "" and []; nothing is null or missing.
fn list_7_degraded_rows_are_never_null(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "degraded", &session, &turn, "");
    Row::new("degraded", &session, &turn)
        .question_id("q-absent")
        .index(Some(0))
        .status(None)
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("q-empty")
        .index(Some(1))
        .status(Some(""))
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("q-weird")
        .index(Some(2))
        .status(Some("on_hold"))
        .insert(db);
    let mut broken = Row::new("degraded", &session, &turn)
        .question_id("q-broken")
        .index(Some(3));
    broken.payload = "{not json";
    broken.insert(db);
    let mut mistyped = Row::new("degraded", &session, &turn)
        .question_id("q-mistyped")
        .index(Some(4));
    mistyped.payload =
        r#"{"title":null,"prompt":42,"options":[{"option_id":null,"label":"L"}],"extra":null}"#;
    mistyped.insert(db);
    let mut not_array = Row::new("degraded", &session, &turn)
        .question_id("q-not-array")
        .index(Some(5));
    not_array.payload = r#"{"title":"T2","prompt":"P2","options":"nope"}"#;
    not_array.insert(db);
    let mut json_null = Row::new("degraded", &session, &turn)
        .question_id("q-json-literal")
        .index(Some(6));
    json_null.payload = "null";
    json_null.insert(db);
    db.clock.advance_micros(3 * SECOND);

    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    let text = envelope::list_page(&page).body_text();
    let options = concat!(
        r#"[{"option_id":"a","label":"A","description":"a"},"#,
        r#"{"option_id":"b","label":"B","description":"b"}]"#,
    );
    let expected = concat!(
        r#"{"bundles":[{"pending_id":"degraded","task_id":"t-a","session_id":"s-a","kind":"question","#,
        r#""created_at":"2026-11-29T20:00:00.000000Z","age_seconds":3,"context":"","questions":["#,
        r#"{"question_id":"q-absent","title":"T","prompt":"P?","status":"pending","options":OPTIONS},"#,
        r#"{"question_id":"q-empty","title":"T","prompt":"P?","status":"pending","options":OPTIONS},"#,
        r#"{"question_id":"q-weird","title":"T","prompt":"P?","status":"on_hold","options":OPTIONS},"#,
        r#"{"question_id":"q-broken","title":"","prompt":"","status":"pending","options":[]},"#,
        r#"{"question_id":"q-mistyped","title":"","prompt":"","status":"pending","options":[{"option_id":"","label":"L","description":""}]},"#,
        r#"{"question_id":"q-not-array","title":"T2","prompt":"P2","status":"pending","options":[]},"#,
        r#"{"question_id":"q-json-literal","title":"","prompt":"","status":"pending","options":[]}]}],"#,
        r#""count":1,"next_cursor":""}"#,
    )
    .replace("OPTIONS", options);
    assert_eq!(text, expected);
    assert!(!text.contains("null"), "{text}");
}

/// LIST-7: an unrecognized status in an otherwise pending (mixed, active)
/// bundle is shown as stored, and the bundle stays listed.
fn list_7_unrecognized_status_shown_as_stored(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 2);
    rows::set_status(db, &pending_id, "q2", Some("Needs-Review"));
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), [pending_id.as_str()]);
    let statuses: Vec<&str> = page.bundles[0]
        .questions
        .iter()
        .map(|q| q.status.as_str())
        .collect();
    assert_eq!(statuses, ["pending", "Needs-Review"]);
    // With no pending row left, the unrecognized status does not count.
    rows::set_status(db, &pending_id, "q1", Some("Needs-Review"));
    assert_eq!(
        list_ids(db, &alice(), &ListRequest::default()),
        Vec::<String>::new()
    );
}

// ---- LIST-8..10, AUTH-6 --------------------------------------------------

dual_backend!(
    list_8_pages_have_no_gap_or_duplicate_while_bundles_resolve,
    list_9_bundle_with_an_empty_question_id_is_excluded,
    list_9_bundle_with_unresolvable_task_is_excluded_for_everyone,
    list_9_bundle_with_empty_task_id_resolves_via_its_session,
    list_9_bundle_with_unparseable_payload_is_listed,
    list_10_mixed_bundle_is_listed_with_per_question_status,
    auth_6_permission_bundles_absent_from_agent_listings
);

/// LIST-8: bundles that become inactive between pages disappear without
/// shifting the others: nothing skipped, nothing duplicated, over four
/// pages.
fn list_8_pages_have_no_gap_or_duplicate_while_bundles_resolve(db: &TestDb) {
    let sessions: Vec<String> = (1..=4)
        .map(|n| mirror(db, &n.to_string(), "alice"))
        .collect();
    // b[4r + k] is round r on session k + 1.
    let mut b = Vec::new();
    for _round in 0..4 {
        for session in &sessions {
            db.clock.advance_micros(SECOND);
            b.push(ask(db, session, 1));
        }
    }
    let limit = 3;
    let mut request = with_limit(limit);
    let next = |db: &TestDb, request: &mut ListRequest| {
        let page = db.list_pending(&alice(), request).unwrap();
        request.cursor = page.next_cursor.clone();
        page
    };

    let page1 = next(db, &mut request);
    assert_eq!(ids(&page1), [b[0].clone(), b[1].clone(), b[2].clone()]);
    // Session 2 ends (b1 seen; b5, b9, b13 not yet); the cursor's own
    // bundle b2 is answered.
    db.set_session_state(&sessions[1], SessionState::Completed)
        .unwrap();
    rows::answer_all(db, &b[2]);

    let page2 = next(db, &mut request);
    assert_eq!(ids(&page2), [b[3].clone(), b[4].clone(), b[6].clone()]);
    // Session 3 moves on to a new turn (b6 seen; b10, b14 not yet).
    db.begin_turn(&sessions[2]).unwrap();

    let page3 = next(db, &mut request);
    assert_eq!(ids(&page3), [b[7].clone(), b[8].clone(), b[11].clone()]);
    assert!(page3.next_cursor.is_some());
    // b12 (not yet seen) is answered through its row.
    rows::set_status(db, &b[12], "q1", Some("answered"));

    let page4 = next(db, &mut request);
    assert_eq!(ids(&page4), [b[15].clone()]);
    assert_eq!(page4.next_cursor, None);

    let collected: Vec<String> = [page1, page2, page3, page4].iter().flat_map(ids).collect();
    let expected: Vec<String> = [0, 1, 2, 3, 4, 6, 7, 8, 11, 15]
        .iter()
        .map(|&i| b[i].clone())
        .collect();
    assert_eq!(collected, expected);
    let unique: std::collections::BTreeSet<&String> = collected.iter().collect();
    assert_eq!(unique.len(), collected.len(), "no duplicates");
}

/// LIST-9 [seed L16]: a bundle with any empty `question_id` row is not
/// listed, for anyone.
fn list_9_bundle_with_an_empty_question_id_is_excluded(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "broken", &session, &turn, "");
    Row::new("broken", &session, &turn)
        .question_id("q1")
        .insert(db);
    Row::new("broken", &session, &turn)
        .question_id("")
        .index(Some(1))
        .insert(db);
    // The empty id row is already terminal; the bundle is still unanswerable.
    rows::insert_bundle(db, "broken-mixed", &session, &turn, "");
    Row::new("broken-mixed", &session, &turn)
        .question_id("q1")
        .insert(db);
    Row::new("broken-mixed", &session, &turn)
        .question_id("")
        .index(Some(1))
        .status(Some("answered"))
        .insert(db);
    rows::insert_bundle(db, "fine", &session, &turn, "");
    Row::new("fine", &session, &turn)
        .question_id("q1")
        .insert(db);
    Row::new("fine", &session, &turn)
        .question_id("q2")
        .index(Some(1))
        .insert(db);
    for principal in [alice(), alice_bot(), Principal::System] {
        assert_eq!(
            list_ids(db, &principal, &ListRequest::default()),
            ["fine"],
            "{principal:?}"
        );
    }
}

/// LIST-9 [seed M5a]: a bundle whose task cannot be resolved is not
/// listed, not even for `system`.
fn list_9_bundle_with_unresolvable_task_is_excluded_for_everyone(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "orphan", &session, &turn, "t-does-not-exist");
    Row::new("orphan", &session, &turn).insert(db);
    for principal in [alice(), alice_bot(), bob(), Principal::System] {
        assert_eq!(
            list_ids(db, &principal, &ListRequest::default()),
            Vec::<String>::new(),
            "{principal:?}"
        );
    }
    assert_eq!(
        list_ids(db, &Principal::System, &in_workspace("w-a")),
        Vec::<String>::new()
    );
}

/// LIST-9, AUTH-4 [seed M5]: a bundle with an empty task id belongs to
/// its session's task and is listed with that task id.
fn list_9_bundle_with_empty_task_id_resolves_via_its_session(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    mirror(db, "b", "bob");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "no-task", &session, &turn, "");
    Row::new("no-task", &session, &turn).insert(db);
    for principal in [alice(), alice_bot(), Principal::System] {
        let page = db
            .list_pending(&principal, &ListRequest::default())
            .unwrap();
        assert_eq!(ids(&page), ["no-task"], "{principal:?}");
        assert_eq!(page.bundles[0].task_id, "t-a");
    }
    assert_eq!(
        list_ids(db, &bob(), &ListRequest::default()),
        Vec::<String>::new()
    );
}

/// LIST-9 [seed L15]: an unparseable payload does not hide the bundle.
fn list_9_bundle_with_unparseable_payload_is_listed(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "garbled", &session, &turn, "");
    let mut row = Row::new("garbled", &session, &turn);
    row.payload = "<<not json>>";
    row.insert(db);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), ["garbled"]);
    let q = &page.bundles[0].questions[0];
    assert_eq!(
        (
            q.question_id.as_str(),
            q.title.as_str(),
            q.prompt.as_str(),
            q.options.len()
        ),
        ("q1", "", "", 0)
    );
}

/// LIST-10: a mixed bundle (some rows terminal, some pending) is listed;
/// each question shows its own status.
fn list_10_mixed_bundle_is_listed_with_per_question_status(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mixed = ask(db, &session, 3);
    rows::set_status(db, &mixed, "q1", Some("answered"));
    rows::set_status(db, &mixed, "q3", Some("cancelled"));
    let done = ask(db, &session, 2);
    rows::answer_all(db, &done);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), [mixed]);
    let statuses: Vec<(&str, &str)> = page.bundles[0]
        .questions
        .iter()
        .map(|q| (q.question_id.as_str(), q.status.as_str()))
        .collect();
    assert_eq!(
        statuses,
        [("q1", "answered"), ("q2", "pending"), ("q3", "cancelled")]
    );
}

/// AUTH-6: permission bundles are absent from agents' listings and
/// present for the user and `system`.
fn auth_6_permission_bundles_absent_from_agent_listings(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let question = ask(db, &session, 1);
    let permission = ask_permission(db, &session, 1);
    let reader = Principal::agent("alice", "reader", [Grant::QuestionsRead]);
    assert_eq!(
        list_ids(db, &alice_bot(), &ListRequest::default()),
        [question.as_str()]
    );
    assert_eq!(
        list_ids(db, &reader, &ListRequest::default()),
        [question.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice_bot(), &in_workspace("w-a")),
        [question.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice(), &ListRequest::default()),
        [question.clone(), permission.clone()]
    );
    assert_eq!(
        list_ids(db, &Principal::System, &ListRequest::default()),
        [question, permission]
    );
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
    db.upsert_workspace("w-alice", Some("alice")).unwrap();
    db.upsert_workspace("w-bob", Some("bob")).unwrap();
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
    db.upsert_workspace("w", Some("alice")).unwrap();
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
