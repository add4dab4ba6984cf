//! AUTH-7, SUM-1 as a property: on random worlds, for every principal that
//! may list, the bundles collected by paging `list_pending` to the end are
//! exactly the active, answerable bundles that `authorize` allows for
//! `get_bundle`; resolve is allowed for exactly the same bundles as get; and
//! `summary.pending_bundles` equals the number collected.

use std::collections::BTreeSet;

use clarion::test_hooks::schema::{bundles, tasks, workspaces};
use clarion::{
    BundleStatus, Grant, ListRequest, Operation, Principal, SessionState, SessionUpsert, Target,
    TaskUpsert, WorkspaceUpsert,
};
use diesel::prelude::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::support;
use crate::support::rows::{self, Row};
use crate::support::{alice, bob, TestDb};

#[derive(Debug, Clone)]
struct BundleSpec {
    session: usize,
    turn: usize,
    permission: bool,
    /// 0: empty (use the session's), 1: the session's task, 2: another task, 3: a missing task.
    task_choice: u8,
    rows: Vec<(Option<&'static str>, bool)>,
}

#[derive(Debug, Clone)]
struct World {
    owners: Vec<&'static str>,
    task_workspaces: Vec<u8>,
    sessions: Vec<(usize, usize, bool)>,
    turns: Vec<usize>,
    bundles: Vec<BundleSpec>,
}

const STATUSES: [Option<&str>; 6] = [
    None,
    Some(""),
    Some("pending"),
    Some("answered"),
    Some("expired"),
    Some("bogus"),
];

fn world() -> impl Strategy<Value = World> {
    (
        prop::collection::vec(prop::sample::select(vec!["", "alice", "bob"]), 0..3),
        prop::collection::vec(0u8..5, 1..4),
        prop::collection::vec((0usize..4, 0usize..8, any::<bool>()), 1..4),
        prop::collection::vec(1usize..3, 4),
        prop::collection::vec(
            (
                0usize..4,
                0usize..3,
                prop::bool::weighted(0.3),
                0u8..4,
                prop::collection::vec(
                    (
                        prop::sample::select(STATUSES.to_vec()),
                        prop::bool::weighted(0.1),
                    ),
                    1..3,
                ),
            ),
            0..8,
        ),
    )
        .prop_map(
            |(owners, task_workspaces, sessions, turns, bundles)| World {
                owners,
                task_workspaces,
                sessions,
                turns,
                bundles: bundles
                    .into_iter()
                    .map(
                        |(session, turn, permission, task_choice, rows)| BundleSpec {
                            session,
                            turn,
                            permission,
                            task_choice,
                            rows,
                        },
                    )
                    .collect(),
            },
        )
}

/// Empties the database and writes the world. Returns, per bundle id,
/// whether it is answerable and has a resolvable task (the model's view).
fn build(db: &TestDb, world: &World) -> Vec<(String, bool)> {
    db.raw(|conn| {
        diesel::delete(tasks::table).execute(conn).unwrap();
        diesel::delete(workspaces::table).execute(conn).unwrap();
    });
    for (i, owner) in world.owners.iter().enumerate() {
        db.upsert_workspace(WorkspaceUpsert::new(&format!("w{i}")).owner(owner))
            .unwrap();
    }
    for (i, choice) in world.task_workspaces.iter().enumerate() {
        // 0: no workspace, 1..=3: w0..w2 (which may not exist: dangling), 4: wX
        let workspace = match choice {
            0 => String::new(),
            4 => "wX".to_owned(),
            n => format!("w{}", n - 1),
        };
        db.upsert_task(TaskUpsert::new(&format!("t{i}")).workspace(&workspace))
            .unwrap();
    }
    let tasks = world.task_workspaces.len();
    let mut session_turns = Vec::new();
    for (i, (task, _, primary)) in world.sessions.iter().enumerate() {
        let id = format!("s{i}");
        db.upsert_session(SessionUpsert::new(&id, &format!("t{}", task % tasks)).primary(*primary))
            .unwrap();
        let turns: Vec<String> = (0..world.turns[i])
            .map(|_| db.begin_turn(&id).unwrap())
            .collect();
        session_turns.push(turns);
    }
    let mut model = Vec::new();
    for (b, spec) in world.bundles.iter().enumerate() {
        let s = spec.session % world.sessions.len();
        let session = format!("s{s}");
        let turns = &session_turns[s];
        let turn = &turns[spec.turn % turns.len()];
        let own_task = format!("t{}", world.sessions[s].0 % tasks);
        let (task_id, resolvable) = match spec.task_choice {
            0 => (String::new(), true),
            1 => (own_task, true),
            2 => (format!("t{}", (world.sessions[s].0 + 1) % tasks), true),
            _ => ("t-missing".to_owned(), false),
        };
        let id = format!("b{b:02}");
        rows::insert_bundle(db, &id, &session, turn, &task_id);
        if spec.permission {
            db.raw(|conn| {
                diesel::update(bundles::table.find(&id))
                    .set(bundles::kind.eq("permission"))
                    .execute(conn)
                    .unwrap()
            });
        }
        let mut answerable = true;
        for (r, (status, empty_id)) in spec.rows.iter().enumerate() {
            let qid = if *empty_id {
                String::new()
            } else {
                format!("q{r}")
            };
            answerable &= !empty_id;
            Row::new(&id, &session, turn)
                .question_id(&qid)
                .status(*status)
                .insert(db);
        }
        model.push((id, answerable && resolvable));
    }
    // Session states last, through the raw row so that no expiry hides a
    // terminal session's bundles from the check.
    for (i, (_, state, _)) in world.sessions.iter().enumerate() {
        rows::force_state(db, &format!("s{i}"), SessionState::ALL[*state].as_str());
    }
    model
}

fn principals() -> Vec<Principal> {
    vec![
        Principal::System,
        alice(),
        bob(),
        Principal::user("carol"),
        Principal::agent("alice", "reader", [Grant::QuestionsRead]),
        Principal::agent("alice", "worker", Grant::ALL),
        Principal::agent("bob", "worker", Grant::ALL),
    ]
}

fn collect_all_pages(db: &TestDb, principal: &Principal) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = None;
    loop {
        let page = db
            .list_pending(
                principal,
                &ListRequest {
                    cursor: cursor.clone(),
                    limit: Some(2),
                    ..ListRequest::default()
                },
            )
            .unwrap();
        ids.extend(page.bundles.into_iter().map(|b| b.pending_id));
        if page.next_cursor.is_none() {
            return ids;
        }
        cursor = page.next_cursor;
    }
}

fn check(db: &TestDb, world: &World) -> Result<(), TestCaseError> {
    let model = build(db, world);
    for principal in principals() {
        let listed = collect_all_pages(db, &principal);
        let listed_set: BTreeSet<String> = listed.iter().cloned().collect();
        prop_assert_eq!(
            listed.len(),
            listed_set.len(),
            "duplicates for {:?}",
            principal
        );
        let mut expected = BTreeSet::new();
        for (id, answerable_and_resolvable) in &model {
            let get = db
                .authorize(&principal, Operation::GetBundle, Target::Bundle(id))
                .unwrap();
            let resolve = db
                .authorize(&principal, Operation::ResolveBundle, Target::Bundle(id))
                .unwrap();
            if clarion::has_capability(&principal, Operation::ResolveBundle) {
                prop_assert_eq!(get, resolve, "get vs resolve for {:?} on {}", principal, id);
            }
            let active =
                db.get_bundle(&Principal::System, id).unwrap().status == BundleStatus::Pending;
            if get.is_allowed() && active && *answerable_and_resolvable {
                expected.insert(id.clone());
            }
        }
        prop_assert_eq!(
            &listed_set,
            &expected,
            "listing vs authorize for {:?}",
            principal
        );
        let summary = db.summary(&principal).unwrap();
        prop_assert_eq!(
            summary.pending_bundles,
            listed.len() as i64,
            "summary for {:?}",
            principal
        );
    }
    Ok(())
}

fn run(db: &TestDb) {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner.run(&world(), |world| check(db, &world)).unwrap();
}

#[test]
fn auth_7_listing_and_authorize_agree_sqlite() {
    run(&support::sqlite());
}

#[cfg(feature = "postgres")]
#[test]
fn auth_7_listing_and_authorize_agree_postgres() {
    if let Some(db) = support::postgres() {
        run(&db);
    }
}
