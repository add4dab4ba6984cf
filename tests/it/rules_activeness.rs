//! ACT-1..4: the one activeness rule, each conjunct alone, the current-turn
//! tie-breaks, agreement of every consumer on random worlds, and no backfill.

use crate::support::rows::{self, Row};
use crate::support::*;

dual_backend!(
    act_1_null_status_counts_as_pending,
    act_1_empty_status_counts_as_pending,
    act_1_unrecognized_status_is_not_pending,
    act_1_bundle_without_rows_is_not_active,
    act_1_mixed_bundle_active_while_a_row_is_pending,
    act_1_superseded_turn_is_not_active,
    act_1_terminal_session_states_are_not_active,
    act_1_bundle_spanning_two_turns_is_not_active,
    act_1_bundle_spanning_two_sessions_is_not_active,
    act_1_future_deadline_is_active,
    act_1_deadline_equal_to_now_is_due,
    act_1_past_deadline_is_due_not_active,
    act_1_a_bundle_that_is_not_live_is_never_due,
    exp_2_due_bundle_absent_from_every_reader,
    act_2_latest_started_at_is_current,
    act_2_equal_started_at_breaks_tie_by_creation_order,
    act_2_begin_turn_is_current_despite_a_clock_behind,
    act_4_supersession_changes_no_row
);

/// One live bundle `b1` of session `a` with a deadline `offset` µs from
/// the test clock's `now`; returns the session.
fn live_bundle_due_in(db: &TestDb, offset: i64) -> String {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    Row::new("b1", &session, &turn).insert(db);
    let now = clarion::Clock::now(&*db.clock).as_micros();
    rows::set_deadline(db, "b1", Some(now + offset));
    session
}

/// ACT-1.5: a deadline after `now` leaves a live bundle active, not due.
fn act_1_future_deadline_is_active(db: &TestDb) {
    let session = live_bundle_due_in(db, 1);
    assert_eq!(rows::active_ids(db), ["b1"]);
    assert!(rows::due_ids(db).is_empty());
    assert!(db.has_pending_clarification(&session).unwrap());
}

/// ACT-1.5: `now` equal to the deadline is no longer before it: due.
fn act_1_deadline_equal_to_now_is_due(db: &TestDb) {
    let session = live_bundle_due_in(db, 0);
    assert!(rows::active_ids(db).is_empty());
    assert_eq!(rows::due_ids(db), ["b1"]);
    assert!(!db.has_pending_clarification(&session).unwrap());
}

/// ACT-1.5: the clock moving past a deadline makes the bundle due; the
/// rule reads the handle's clock, not the database's.
fn act_1_past_deadline_is_due_not_active(db: &TestDb) {
    live_bundle_due_in(db, 5_000_000);
    assert_eq!(rows::active_ids(db), ["b1"]);
    db.clock.advance_micros(5_000_001);
    assert!(rows::active_ids(db).is_empty());
    assert_eq!(rows::due_ids(db), ["b1"]);
}

/// ACT-1: due needs live; a passed deadline on a bundle with no pending
/// row is neither active nor due.
fn act_1_a_bundle_that_is_not_live_is_never_due(db: &TestDb) {
    live_bundle_due_in(db, -1);
    rows::set_status(db, "b1", "q1", Some("answered"));
    assert!(rows::active_ids(db).is_empty());
    assert!(rows::due_ids(db).is_empty());
}

/// EXP-2: from its deadline on, an unsettled bundle is absent from the
/// listing, the summary, pending actions and the workflow guard, for
/// every reader; `get_bundle` still shows it, not as pending.
fn exp_2_due_bundle_absent_from_every_reader(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    let now = clarion::Clock::now(&*db.clock).as_micros();
    rows::set_deadline(db, &id, Some(now + 1_000_000));
    let listed = |who: &clarion::Principal| db.list_pending(who, &Default::default()).unwrap();
    assert_eq!(listed(&alice()).bundles.len(), 1, "active before");
    db.clock.advance_micros(1_000_000);
    for who in [alice(), clarion::Principal::System] {
        assert!(listed(&who).bundles.is_empty(), "{who:?}: listed while due");
        let summary = db.summary(&who).unwrap();
        assert_eq!(
            (summary.pending_bundles, summary.pending_questions),
            (0, 0),
            "{who:?}: counted while due"
        );
        let actions = db.pending_actions(&who, &["t-a".to_owned()]).unwrap();
        assert!(
            actions[0].task_pending_action.is_none(),
            "{who:?}: blocks its task"
        );
        let status = db.get_bundle(&who, &id).unwrap().status;
        assert_ne!(status, clarion::BundleStatus::Pending, "{who:?}");
    }
    assert!(!db.has_pending_clarification(&session).unwrap());
}

/// ACT-1.1: a NULL status counts as pending.
fn act_1_null_status_counts_as_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    Row::new("b1", &session, &turn).status(None).insert(db);
    assert!(db.has_pending_clarification(&session).unwrap());
    assert_eq!(rows::active_ids(db), ["b1"]);
}

/// ACT-1.1: an empty status counts as pending.
fn act_1_empty_status_counts_as_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    Row::new("b1", &session, &turn).status(Some("")).insert(db);
    assert!(db.has_pending_clarification(&session).unwrap());
}

/// ACT-1.1: an unrecognized status does not count as pending.
fn act_1_unrecognized_status_is_not_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    Row::new("b1", &session, &turn)
        .status(Some("PENDING"))
        .insert(db);
    Row::new("b1", &session, &turn)
        .question_id("q2")
        .status(Some("snoozed"))
        .insert(db);
    assert!(!db.has_pending_clarification(&session).unwrap());
    assert!(rows::active_ids(db).is_empty());
}

/// ACT-1.1: a bundle without question rows is not active.
fn act_1_bundle_without_rows_is_not_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    assert!(!db.has_pending_clarification(&session).unwrap());
}

/// ACT-1.1, LIST-10: a mixed bundle is active while one row is pending,
/// and inactive once none is.
fn act_1_mixed_bundle_active_while_a_row_is_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "mixed", &session, &turn, "t-a");
    Row::new("mixed", &session, &turn)
        .status(Some("answered"))
        .insert(db);
    Row::new("mixed", &session, &turn)
        .question_id("q2")
        .status(Some("pending"))
        .insert(db);
    rows::insert_bundle(db, "done", &session, &turn, "t-a");
    Row::new("done", &session, &turn)
        .status(Some("answered"))
        .insert(db);
    Row::new("done", &session, &turn)
        .question_id("q2")
        .status(Some("expired"))
        .insert(db);
    assert_eq!(rows::active_ids(db), ["mixed"]);
}

/// ACT-1.2, LIFE-2: a bundle of an older turn is superseded.
fn act_1_superseded_turn_is_not_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    assert!(db.has_pending_clarification(&session).unwrap());
    db.begin_turn(&session).unwrap();
    assert!(!db.has_pending_clarification(&session).unwrap());
    assert!(rows::active_ids(db).is_empty());
    assert_eq!(
        rows::statuses(db, &pending_id),
        [Some("pending".to_owned())]
    );
}

/// ACT-1.3: each terminal state alone makes a bundle inactive, each
/// other state leaves it active. The state is forced directly so expiry
/// (LIFE-3) does not hide the conjunct.
fn act_1_terminal_session_states_are_not_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    for state in clarion::SessionState::ALL {
        rows::force_state(db, &session, state.as_str());
        assert_eq!(
            db.has_pending_clarification(&session).unwrap(),
            !state.is_terminal(),
            "state {}",
            state.as_str()
        );
    }
}

/// ACT-1.4: rows spread over two turns make a malformed bundle.
fn act_1_bundle_spanning_two_turns_is_not_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let old_turn = db.begin_turn(&session).unwrap();
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    Row::new("b1", &session, &turn).insert(db);
    Row::new("b1", &session, &old_turn)
        .question_id("q2")
        .insert(db);
    assert!(!db.has_pending_clarification(&session).unwrap());
}

/// ACT-1.4: rows spread over two sessions make a malformed bundle.
fn act_1_bundle_spanning_two_sessions_is_not_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let other = mirror(db, "b", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    Row::new("b1", &session, &turn).insert(db);
    Row::new("b1", &other, &turn).question_id("q2").insert(db);
    assert!(!db.has_pending_clarification(&session).unwrap());
}

/// ACT-2: the latest `started_at` wins over creation order.
fn act_2_latest_started_at_is_current(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    rows::insert_turn(db, "late", &session, 2_000);
    rows::insert_turn(db, "early", &session, 1_000);
    rows::insert_bundle(db, "in-late", &session, "late", "t-a");
    Row::new("in-late", &session, "late").insert(db);
    rows::insert_bundle(db, "in-early", &session, "early", "t-a");
    Row::new("in-early", &session, "early").insert(db);
    assert_eq!(rows::active_ids(db), ["in-late"]);
}

/// ACT-2: with equal `started_at`, the later-created turn wins, even
/// when its id sorts first.
fn act_2_equal_started_at_breaks_tie_by_creation_order(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    rows::insert_turn(db, "zzz-first", &session, 1_000);
    rows::insert_turn(db, "aaa-second", &session, 1_000);
    rows::insert_bundle(db, "b-first", &session, "zzz-first", "t-a");
    Row::new("b-first", &session, "zzz-first").insert(db);
    rows::insert_bundle(db, "b-second", &session, "aaa-second", "t-a");
    Row::new("b-second", &session, "aaa-second").insert(db);
    assert_eq!(rows::active_ids(db), ["b-second"]);
}

/// ACT-2, LIFE-2: `begin_turn` always makes the newest turn, even when
/// the clock is behind an existing turn's `started_at`.
fn act_2_begin_turn_is_current_despite_a_clock_behind(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    rows::insert_turn(
        db,
        "from-the-future",
        &session,
        EPOCH.as_micros() + 60_000_000,
    );
    let pending_id = ask(db, &session, 1);
    assert_eq!(rows::turn_of(db, &pending_id), "from-the-future");
    db.begin_turn(&session).unwrap();
    let newer = ask(db, &session, 1);
    assert_eq!(rows::active_ids(db), [newer]);
}

/// ACT-4: supersession writes no row; the bundle stays in history as it was.
fn act_4_supersession_changes_no_row(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 2);
    let before = rows::statuses(db, &pending_id);
    db.begin_turn(&session).unwrap();
    assert_eq!(rows::statuses(db, &pending_id), before);
    assert!(!rows::detached(db, &pending_id));
}

/// ACT-3: a small deterministic generator, so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// What a bundle in a random world looks like, for the reference model.
struct ModelBundle {
    pending_id: String,
    session: usize,
    turn: usize,
    statuses: Vec<Option<&'static str>>,
    stray_turn: bool,
    /// ACT-1.5: none, or the deadline in microseconds.
    expires_at: Option<i64>,
    /// ACT-1.1–4 by the oracle, once the world is built.
    live: bool,
}

const STATUSES: [Option<&str>; 8] = [
    None,
    Some(""),
    Some("pending"),
    Some("answered"),
    Some("rejected"),
    Some("cancelled"),
    Some("expired"),
    Some("bogus"),
];

/// ACT-1 restated in Rust over the generated world: the oracle.
fn model_live(bundle: &ModelBundle, current_turn: &[usize], terminal: &[bool]) -> bool {
    bundle
        .statuses
        .iter()
        .any(|s| matches!(s, None | Some("") | Some("pending")))
        && current_turn[bundle.session] == bundle.turn
        && !terminal[bundle.session]
        && !bundle.stray_turn
}

/// ACT-1.5 in the oracle: live, and no deadline or `now` before it.
fn model_active(bundle: &ModelBundle, now: i64) -> bool {
    bundle.live && bundle.expires_at.is_none_or(|at| now < at)
}

/// A deadline as the worlds draw it: none, past, equal to `now`, future.
fn draw_deadline(rng: &mut Rng, now: i64) -> Option<i64> {
    match rng.below(4) {
        0 => None,
        1 => Some(now - 1_000_000),
        2 => Some(now),
        _ => Some(now + 3_600_000_000),
    }
}

/// A random world: its bundles, the ids ACT-1 says are active (sorted),
/// and each session's current turn.
fn build_world(db: &TestDb, seed: u64) -> (Vec<ModelBundle>, Vec<String>, Vec<usize>) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let sessions = 1 + rng.below(4) as usize;
    let mut session_ids = Vec::new();
    let mut turns: Vec<Vec<String>> = Vec::new();
    let mut terminal = Vec::new();
    let mut bundles = Vec::new();
    let now = clarion::Clock::now(&*db.clock).as_micros();
    for s in 0..sessions {
        let session = mirror(db, &format!("{seed}-{s}"), "alice");
        let turn_count = 1 + rng.below(3) as usize;
        let mut session_turns = Vec::new();
        for t in 0..turn_count {
            let id = format!("turn-{seed}-{s}-{t}");
            // Equal started_at values exercise the creation-order tie-break.
            rows::insert_turn(db, &id, &session, 1_000 + rng.below(2) as i64 * (t as i64));
            session_turns.push(id);
        }
        for b in 0..rng.below(4) {
            let turn = rng.below(turn_count as u64) as usize;
            let pending_id = format!("b-{seed}-{s}-{b}");
            rows::insert_bundle(db, &pending_id, &session, &session_turns[turn], "");
            let expires_at = draw_deadline(&mut rng, now);
            rows::set_deadline(db, &pending_id, expires_at);
            let row_count = rng.below(4) as usize;
            let stray_turn = turn_count > 1 && row_count > 0 && rng.chance(15);
            let mut statuses = Vec::new();
            for r in 0..row_count {
                let status = STATUSES[rng.below(STATUSES.len() as u64) as usize];
                let row_turn = if stray_turn && r == 0 {
                    &session_turns[(turn + 1) % turn_count]
                } else {
                    &session_turns[turn]
                };
                Row::new(&pending_id, &session, row_turn)
                    .question_id(&format!("q{r}"))
                    .status(status)
                    .insert(db);
                statuses.push(status);
            }
            bundles.push(ModelBundle {
                pending_id,
                session: s,
                turn,
                statuses,
                stray_turn,
                expires_at,
                live: false,
            });
        }
        let is_terminal = rng.chance(25);
        if is_terminal {
            rows::force_state(
                db,
                &session,
                ["completed", "failed", "cancelled"][rng.below(3) as usize],
            );
        }
        terminal.push(is_terminal);
        session_ids.push(session);
        turns.push(session_turns);
    }
    // The current turn per ACT-2: latest started_at, then the later-inserted.
    let current: Vec<usize> = (0..sessions)
        .map(|s| {
            let mut best = 0;
            let started = |t: usize| -> i64 {
                db.raw(|conn| {
                    use clarion::test_hooks::schema::turns;
                    use diesel::prelude::*;
                    turns::table
                        .filter(turns::id.eq(&turns_of(&session_ids, s, t)))
                        .select(turns::started_at)
                        .first::<i64>(conn)
                        .unwrap()
                })
            };
            for t in 1..turns[s].len() {
                if started(t) >= started(best) {
                    best = t;
                }
            }
            best
        })
        .collect();
    for bundle in &mut bundles {
        bundle.live = model_live(bundle, &current, &terminal);
    }
    let active: Vec<String> = bundles
        .iter()
        .filter(|b| model_active(b, now))
        .map(|b| b.pending_id.clone())
        .collect();
    let mut active = active;
    active.sort();
    (bundles, active, current)
}

/// The `may_be_active` index hint of a bundle, as stored.
fn hint(db: &TestDb, pending_id: &str) -> bool {
    use clarion::test_hooks::schema::bundles;
    use diesel::prelude::*;
    db.raw(|conn| {
        bundles::table
            .find(pending_id)
            .select(bundles::may_be_active)
            .first(conn)
            .unwrap()
    })
}

/// What the hint must say once operations maintained it: whether the
/// bundle may ever be active again — a row still pending, in its
/// session's current turn (ACT-4: statuses never return to pending, turns
/// only get newer).
fn may_be_active_again(statuses: &[Option<String>], turn: usize, current: usize) -> bool {
    turn == current
        && statuses
            .iter()
            .any(|s| matches!(s.as_deref(), None | Some("") | Some("pending")))
}

/// The ids `list_pending` returns for `system`, over every page, of one seed.
fn listed(db: &TestDb, seed: u64) -> Vec<String> {
    let mut ids = Vec::new();
    let mut request = clarion::ListRequest {
        limit: Some(7),
        ..Default::default()
    };
    loop {
        let page = db
            .list_pending(&clarion::Principal::System, &request)
            .unwrap();
        ids.extend(
            page.bundles
                .into_iter()
                .map(|b| b.pending_id)
                .filter(|id| id.starts_with(&format!("b-{seed}-"))),
        );
        match page.next_cursor {
            Some(cursor) => request.cursor = Some(cursor),
            None => break,
        }
    }
    ids.sort();
    ids
}

fn turns_of(session_ids: &[String], s: usize, t: usize) -> String {
    let seed_and_session = session_ids[s].trim_start_matches("s-");
    format!("turn-{seed_and_session}-{t}")
}

dual_backend!(
    act_3_every_consumer_agrees_on_random_worlds,
    act_3_the_claim_agrees_on_random_worlds
);

/// ACT-3: on random worlds whose bundles have deadlines (none, past,
/// equal to `now`, future), the SQL rule (active and due), the listing,
/// the summary, pending actions, `get_bundle`, the workflow guard
/// (LIFE-7), detach (LIFE-5, settling due bundles first: LIFE-11) and
/// expiry (LIFE-3/4) all agree with the
/// oracle; after the operations, every `may_be_active` hint equals "may
/// this bundle ever be active again" (ACT-4).
fn act_3_every_consumer_agrees_on_random_worlds(db: &TestDb) {
    let now = clarion::Clock::now(&*db.clock).as_micros();
    let clock_now = now;
    for seed in 1..=30u64 {
        let (bundles, expected, current) = build_world(db, seed);
        let of_seed = |ids: Vec<String>| -> Vec<String> {
            ids.into_iter()
                .filter(|id| id.starts_with(&format!("b-{seed}-")))
                .collect()
        };
        assert_eq!(
            of_seed(rows::active_ids(db)),
            expected,
            "seed {seed}: SQL rule vs oracle"
        );
        let mut due: Vec<String> = bundles
            .iter()
            .filter(|b| b.live && b.expires_at.is_some_and(|at| at <= now))
            .map(|b| b.pending_id.clone())
            .collect();
        due.sort();
        assert_eq!(
            of_seed(rows::due_ids(db)),
            due,
            "seed {seed}: is_due vs oracle"
        );
        // Every listed bundle here is answerable (rows have question ids).
        let answerable: Vec<String> = expected
            .iter()
            .filter(|id| {
                bundles
                    .iter()
                    .any(|b| &&b.pending_id == id && !b.statuses.is_empty())
            })
            .cloned()
            .collect();
        assert_eq!(
            listed(db, seed),
            answerable,
            "seed {seed}: list_pending vs oracle"
        );
        for bundle in &bundles {
            let status = db
                .get_bundle(&clarion::Principal::System, &bundle.pending_id)
                .unwrap()
                .status;
            assert_eq!(
                status == clarion::BundleStatus::Pending,
                expected.contains(&bundle.pending_id),
                "seed {seed}: get_bundle of {}",
                bundle.pending_id
            );
        }

        let sessions: std::collections::BTreeSet<usize> =
            bundles.iter().map(|b| b.session).collect();
        for s in sessions {
            let session = format!("s-{seed}-{s}");
            let expect_pending = expected
                .iter()
                .any(|id| id.starts_with(&format!("b-{seed}-{s}-")));
            assert_eq!(
                db.has_pending_clarification(&session).unwrap(),
                expect_pending,
                "seed {seed} session {s}: workflow guard"
            );
            let actions = db
                .pending_actions(&clarion::Principal::System, &[format!("t-{seed}-{s}")])
                .unwrap();
            assert_eq!(
                actions[0].task_pending_action.is_some(),
                expect_pending,
                "seed {seed} session {s}: pending actions"
            );
            db.detach_session(&session).unwrap();
            db.set_session_state(&session, clarion::SessionState::Completed)
                .unwrap();
        }
        for bundle in &bundles {
            let was_active = expected.contains(&bundle.pending_id);
            assert_eq!(
                rows::detached(db, &bundle.pending_id),
                was_active,
                "seed {seed}: detach of {}",
                bundle.pending_id
            );
            let now = rows::statuses(db, &bundle.pending_id);
            // LIFE-11: detaching settled a due bundle first (these raw
            // bundles name no action: they expire).
            let was_due = bundle.live && bundle.expires_at.is_some_and(|at| at <= clock_now);
            for (before, after) in bundle.statuses.iter().zip(&now) {
                let was_pending = matches!(before, None | Some("") | Some("pending"));
                let expected_after = if (was_active || was_due) && was_pending {
                    Some("expired")
                } else {
                    *before
                };
                assert_eq!(
                    after.as_deref(),
                    expected_after,
                    "seed {seed}: expiry of {}",
                    bundle.pending_id
                );
            }
            assert_eq!(
                hint(db, &bundle.pending_id),
                may_be_active_again(&now, bundle.turn, current[bundle.session]),
                "seed {seed}: the may_be_active hint of {}",
                bundle.pending_id
            );
        }
    }
}

/// ACT-3 for the claim: on random worlds, a cancel claims exactly the
/// bundles the oracle calls active; every other bundle is refused
/// (409, or a replay of an earlier resolution); a due one is settled by
/// its deadline first (EXP-3), any other is left as it was. A claimed
/// bundle's hint is cleared at once; the summary counts what the oracle
/// lists.
fn act_3_the_claim_agrees_on_random_worlds(db: &TestDb) {
    let clock_now = clarion::Clock::now(&*db.clock).as_micros();
    for seed in 101..=130u64 {
        let (bundles, expected, current) = build_world(db, seed);
        let summary = db.summary(&clarion::Principal::System).unwrap();
        let listed_now = listed(db, seed).len() as i64;
        assert!(
            summary.pending_bundles >= listed_now,
            "seed {seed}: summary counts at least this seed's bundles"
        );
        for bundle in &bundles {
            let claimed = matches!(
                db.cancel_bundle(&clarion::Principal::System, &bundle.pending_id),
                Ok(clarion::Resolved { claimed: true, .. })
            );
            assert_eq!(
                claimed,
                expected.contains(&bundle.pending_id),
                "seed {seed}: claim of {}",
                bundle.pending_id
            );
            let now = rows::statuses(db, &bundle.pending_id);
            if claimed {
                assert!(
                    !hint(db, &bundle.pending_id),
                    "seed {seed}: a claim clears the hint"
                );
            } else if bundle.live && bundle.expires_at.is_some_and(|at| at <= clock_now) {
                // EXP-3: a cancel meeting a due bundle settles it first
                // (these raw bundles name no action: they expire).
                let expected: Vec<Option<&str>> = bundle
                    .statuses
                    .iter()
                    .map(|s| match s {
                        None | Some("") | Some("pending") => Some("expired"),
                        other => *other,
                    })
                    .collect();
                assert_eq!(
                    now.iter().map(|s| s.as_deref()).collect::<Vec<_>>(),
                    expected,
                    "seed {seed}: a due bundle is settled, not claimed"
                );
            } else {
                assert_eq!(
                    now.iter().map(|s| s.as_deref()).collect::<Vec<_>>(),
                    bundle.statuses,
                    "seed {seed}: a refused claim writes nothing"
                );
            }
            let _ = current;
        }
        assert!(
            listed(db, seed).is_empty(),
            "seed {seed}: nothing of this seed is listed after the claims"
        );
    }
}
