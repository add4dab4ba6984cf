//! OPS-3a as a property: visibility is read from keys stored on the bundle
//! row, so every change to the mirror must keep them exact. Random sequences
//! of workspace creations, owner changes and deletions, member sets
//! replaced (PPL-2) and users deleted (PPL-1), task creations, moves (also
//! to dangling workspaces) and deletions, session moves and deletions,
//! asks, bundles naming another task, escalation grants (PPL-6) and the
//! clock moving on run against the library; after every step:
//! - the stored keys equal what the library derives from the mirror
//!   (`test_hooks::drift`) — members and grants are read at read time and
//!   rewrite no key (PPL-5), so they must leave none drifted either — and
//! - for every scoped principal, which bundles `get_bundle` shows and which
//!   `list_pending` and `summary` count equal an oracle written here from
//!   AUTH-3/4/6, PPL-3 and PPL-6 alone, independent of the library's SQL.

use std::collections::{BTreeMap, BTreeSet};

use clarion::{
    Clock, Grant, ListRequest, Principal, SessionUpsert, TaskUpsert, Timestamp, WorkspaceUpsert,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::support::rows::{self, Row};
use crate::support::world::ask;
use crate::support::{self, TestDb};

const WORKSPACES: [&str; 3] = ["w0", "w1", "w2"];
const TASKS: [&str; 4] = ["t0", "t1", "t2", "t3"];
const SESSIONS: [&str; 3] = ["s0", "s1", "s2"];
const OWNERS: [&str; 3] = ["", "alice", "bob"];
/// Who members and grants name: the scoped principals' users and one
/// nobody acts as.
const USERS: [&str; 4] = ["alice", "bob", "carol", "dave"];
/// When a grant takes effect, from the clock at the step: before, exactly
/// then, or in half an hour (so a `Tick` or two brings it).
const GRANT_OFFSETS: [i64; 3] = [-1, 0, 1_800_000_000];

#[derive(Debug, Clone)]
enum Step {
    /// Creates the workspace or gives it an owner.
    OwnWorkspace(usize, usize),
    DeleteWorkspace(usize),
    /// Creates the task or moves it: to no workspace (None), or to a
    /// workspace that may not exist.
    PlaceTask(usize, Option<usize>),
    DeleteTask(usize),
    /// Creates the session or moves it to another task.
    PlaceSession(usize, usize),
    DeleteSession(usize),
    Ask(usize, bool),
    /// A bundle in the session's current turn naming a task of its own
    /// (AUTH-4), which may not exist; index 4 leaves `task_id` empty, so the
    /// bundle follows its session's task.
    BundleOfTask(usize, usize),
    /// PPL-2: replaces the workspace's members (a bit per `USERS` entry);
    /// an unknown workspace is not found and changes nothing.
    SetMembers(usize, u8),
    /// PPL-1: deletes the user, which leaves every member set.
    DeleteUser(usize),
    /// PPL-6: a grant on the n-th bundle (modulo their number) to a user,
    /// from an offset of `GRANT_OFFSETS`; a user's second grant on the
    /// same bundle is skipped.
    GrantEscalation(usize, usize, usize),
    /// The clock moves on by 20 minutes.
    Tick,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => (0..3usize, 0..3usize).prop_map(|(w, o)| Step::OwnWorkspace(w, o)),
        1 => (0..3usize).prop_map(Step::DeleteWorkspace),
        1 => (0..4usize, prop::option::of(0..4usize)).prop_map(|(t, w)| Step::PlaceTask(t, w)),
        1 => (0..4usize).prop_map(Step::DeleteTask),
        1 => (0..3usize, 0..4usize).prop_map(|(s, t)| Step::PlaceSession(s, t)),
        1 => (0..3usize).prop_map(Step::DeleteSession),
        1 => (0..3usize, any::<bool>()).prop_map(|(s, p)| Step::Ask(s, p)),
        1 => (0..3usize, 0..6usize).prop_map(|(s, t)| Step::BundleOfTask(s, t)),
        2 => (0..3usize, 0..16u8).prop_map(|(w, m)| Step::SetMembers(w, m)),
        1 => (0..USERS.len()).prop_map(Step::DeleteUser),
        1 => (0..8usize, 0..USERS.len(), 0..GRANT_OFFSETS.len())
            .prop_map(|(b, u, o)| Step::GrantEscalation(b, u, o)),
        1 => Just(Step::Tick),
    ]
}

/// The oracle's copy of the mirror and the bundles.
#[derive(Default)]
struct Model {
    workspaces: BTreeMap<String, String>,
    /// PPL-2: workspace → its members (they go with their workspace).
    members: BTreeMap<String, BTreeSet<String>>,
    tasks: BTreeMap<String, String>,
    sessions: BTreeMap<String, String>,
    /// pending id → (session, own task id, permission)
    bundles: BTreeMap<String, (String, String, bool)>,
    /// PPL-6: pending id → (user, visible_from); they go with their bundle.
    grants: BTreeMap<String, Vec<(String, i64)>>,
    /// The handle's clock, in microseconds.
    now: i64,
}

impl Model {
    /// AUTH-3/4/6, PPL-3, PPL-6 for a user (or an agent of that user).
    fn visible(&self, pending_id: &str, user: &str, human: bool) -> bool {
        let (session, own_task, permission) = &self.bundles[pending_id];
        if *permission && !human {
            return false;
        }
        let task = if own_task.is_empty() {
            &self.sessions[session]
        } else {
            own_task
        };
        // PPL-6: a grant whose time has come.
        let granted = self.grants.get(pending_id).is_some_and(|grants| {
            grants
                .iter()
                .any(|(grantee, from)| grantee == user && *from <= self.now)
        });
        let Some(workspace) = self.tasks.get(task) else {
            // AUTH-4: a bundle without a task is not found, grants or not.
            return false;
        };
        let by_workspace = match self.workspaces.get(workspace) {
            _ if workspace.is_empty() => true,
            None => true,
            Some(owner) => {
                owner.is_empty()
                    || owner == user
                    || self
                        .members
                        .get(workspace)
                        .is_some_and(|members| members.contains(user))
            }
        };
        by_workspace || granted
    }

    /// Deleting a session deletes its bundles (and their grants); deleting
    /// a task, its sessions.
    fn drop_session(&mut self, session: &str) {
        self.sessions.remove(session);
        self.bundles.retain(|_, (s, _, _)| s != session);
        let bundles = &self.bundles;
        self.grants.retain(|id, _| bundles.contains_key(id));
    }
}

fn apply(db: &TestDb, model: &mut Model, step: &Step, counter: &mut usize) {
    match *step {
        Step::OwnWorkspace(w, o) => {
            db.upsert_workspace(WorkspaceUpsert::new(WORKSPACES[w]).owner(OWNERS[o]))
                .unwrap();
            model
                .workspaces
                .insert(WORKSPACES[w].into(), OWNERS[o].into());
        }
        Step::DeleteWorkspace(w) => {
            db.delete_workspace(WORKSPACES[w]).unwrap();
            model.workspaces.remove(WORKSPACES[w]);
            model.members.remove(WORKSPACES[w]);
        }
        Step::PlaceTask(t, w) => {
            // Index 3 names a workspace that never exists (dangling).
            let workspace = w.map_or("", |w| WORKSPACES.get(w).copied().unwrap_or("w-none"));
            db.upsert_task(TaskUpsert::new(TASKS[t]).workspace(workspace))
                .unwrap();
            model.tasks.insert(TASKS[t].into(), workspace.into());
        }
        Step::DeleteTask(t) => {
            db.delete_task(TASKS[t]).unwrap();
            model.tasks.remove(TASKS[t]);
            let gone: Vec<String> = model
                .sessions
                .iter()
                .filter(|(_, task)| *task == TASKS[t])
                .map(|(s, _)| s.clone())
                .collect();
            for session in gone {
                model.drop_session(&session);
            }
        }
        Step::PlaceSession(s, t) => {
            if !model.tasks.contains_key(TASKS[t]) {
                return;
            }
            db.upsert_session(SessionUpsert::new(SESSIONS[s], TASKS[t]))
                .unwrap();
            model.sessions.insert(SESSIONS[s].into(), TASKS[t].into());
        }
        Step::DeleteSession(s) => {
            db.delete_session(SESSIONS[s]).unwrap();
            model.drop_session(SESSIONS[s]);
        }
        Step::Ask(s, permission) => {
            if !model.sessions.contains_key(SESSIONS[s]) {
                return;
            }
            let pending_id = if permission {
                crate::support::world::ask_permission(db, SESSIONS[s], 1)
            } else {
                ask(db, SESSIONS[s], 1)
            };
            // `ask` stores the session's task on the bundle (AUTH-4).
            let task = model.sessions[SESSIONS[s]].clone();
            let entry = (SESSIONS[s].to_owned(), task, permission);
            model.bundles.insert(pending_id, entry);
        }
        Step::BundleOfTask(s, t) => {
            let Some(turn) = model
                .bundles
                .iter()
                .find(|(_, (session, _, _))| session == SESSIONS[s])
                .map(|(id, _)| rows::turn_of(db, id))
            else {
                return;
            };
            *counter += 1;
            let pending_id = format!("own-{counter:03}");
            let task = match t {
                4 => "",
                t => TASKS.get(t).copied().unwrap_or("t-none"),
            };
            rows::insert_bundle(db, &pending_id, SESSIONS[s], &turn, task);
            Row::new(&pending_id, SESSIONS[s], &turn).insert(db);
            let entry = (SESSIONS[s].to_owned(), task.to_owned(), false);
            model.bundles.insert(pending_id, entry);
        }
        Step::SetMembers(w, mask) => {
            let members: BTreeSet<String> = USERS
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, u)| (*u).to_owned())
                .collect();
            let list: Vec<String> = members.iter().cloned().collect();
            let result = db.set_members(WORKSPACES[w], &list);
            if model.workspaces.contains_key(WORKSPACES[w]) {
                result.unwrap();
                model.members.insert(WORKSPACES[w].into(), members);
            } else {
                // PPL-2: an unknown workspace is not found.
                assert!(
                    matches!(result, Err(clarion::Error::NotFound(_))),
                    "set_members of a missing workspace: {result:?}"
                );
            }
        }
        Step::DeleteUser(u) => {
            db.delete_user(USERS[u]).unwrap();
            for members in model.members.values_mut() {
                members.remove(USERS[u]);
            }
        }
        Step::GrantEscalation(b, u, offset) => {
            if model.bundles.is_empty() {
                return;
            }
            let pending_id = model.bundles.keys().nth(b % model.bundles.len()).unwrap();
            let grants = model.grants.entry(pending_id.clone()).or_default();
            if grants.iter().any(|(user, _)| user == USERS[u]) {
                return;
            }
            let from = model.now + GRANT_OFFSETS[offset];
            clarion::test_hooks::grant_escalation(
                db,
                pending_id,
                USERS[u],
                Timestamp::from_micros(from),
            )
            .unwrap();
            grants.push((USERS[u].to_owned(), from));
        }
        Step::Tick => {
            db.clock.advance_micros(1_200_000_000);
            model.now = db.clock.now().as_micros();
        }
    }
}

fn scoped_principals() -> Vec<(Principal, &'static str, bool)> {
    vec![
        (Principal::user("alice"), "alice", true),
        (Principal::user("bob"), "bob", true),
        (Principal::user("carol"), "carol", true),
        (
            Principal::agent("alice", "worker", Grant::ALL),
            "alice",
            false,
        ),
    ]
}

fn listed(db: &TestDb, principal: &Principal) -> BTreeSet<String> {
    let request = ListRequest {
        limit: Some(200),
        ..ListRequest::default()
    };
    let page = db.list_pending(principal, &request).unwrap();
    page.bundles.into_iter().map(|b| b.pending_id).collect()
}

fn check(db: &TestDb, model: &Model, after: &Step) -> Result<(), TestCaseError> {
    let drift = clarion::test_hooks::drift(db).unwrap();
    let keys: Vec<_> = drift
        .iter()
        .filter(|d| d.task_key.is_some() || d.keys.is_some())
        .collect();
    prop_assert!(
        keys.is_empty(),
        "keys drifted after {:?}: {:?}",
        after,
        keys
    );
    // Everything system lists is active and answerable; a scoped principal
    // lists exactly the part of it the oracle lets them see.
    let active = listed(db, &Principal::System);
    for (principal, user, human) in scoped_principals() {
        let seen: BTreeSet<String> = model
            .bundles
            .keys()
            .filter(|id| db.get_bundle(&principal, id).is_ok())
            .cloned()
            .collect();
        let expected: BTreeSet<String> = model
            .bundles
            .keys()
            .filter(|id| model.visible(id, user, human))
            .cloned()
            .collect();
        prop_assert_eq!(
            &seen,
            &expected,
            "get_bundle for {:?} after {:?}",
            principal,
            after
        );
        let expected_listed: BTreeSet<String> = active.intersection(&expected).cloned().collect();
        prop_assert_eq!(
            listed(db, &principal),
            expected_listed.clone(),
            "list for {:?}",
            principal
        );
        let summary = db.summary(&principal).unwrap();
        prop_assert_eq!(summary.pending_bundles, expected_listed.len() as i64);
    }
    Ok(())
}

fn reset(db: &TestDb) {
    db.clock.set(crate::support::EPOCH);
    for task in TASKS {
        db.delete_task(task).unwrap();
    }
    for workspace in WORKSPACES {
        db.delete_workspace(workspace).unwrap();
    }
}

fn run(db: &TestDb, cases: u32) {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let steps = prop::collection::vec(step(), 1..30);
    runner
        .run(&steps, |steps| {
            reset(db);
            let mut model = Model {
                now: db.clock.now().as_micros(),
                ..Model::default()
            };
            let mut counter = 0;
            // A starting mirror, so early steps have something to change.
            for (step, _) in [
                (Step::OwnWorkspace(0, 1), ()),
                (Step::PlaceTask(0, Some(0)), ()),
                (Step::PlaceTask(1, Some(3)), ()),
                (Step::PlaceSession(0, 0), ()),
                (Step::PlaceSession(1, 1), ()),
                (Step::Ask(0, false), ()),
                (Step::Ask(1, true), ()),
                (Step::BundleOfTask(0, 4), ()),
                (Step::BundleOfTask(1, 4), ()),
                (Step::SetMembers(0, 0b0100), ()),
            ] {
                apply(db, &mut model, &step, &mut counter);
            }
            for step in &steps {
                apply(db, &mut model, step, &mut counter);
                check(db, &model, step)?;
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn ops_3a_visibility_keys_stay_exact_sqlite() {
    run(&support::sqlite(), 32);
}

#[cfg(feature = "postgres")]
#[test]
fn ops_3a_visibility_keys_stay_exact_postgres() {
    if let Some(db) = support::postgres() {
        run(&db, 12);
    }
}

dual_backend!(ops_3a_keys_stay_exact_under_concurrent_changes);

/// OPS-3a, CLAIM-4 under contention: asks in two sessions race owner
/// changes, deletions and re-creations of their workspace, moves of
/// their task between it and a dangling workspace, and a session moving
/// between tasks — real threads released together. Afterwards every
/// stored key equals what the mirror implies: no change computed a key
/// from a mirror another change was rewriting.
fn ops_3a_keys_stay_exact_under_concurrent_changes(db: &TestDb) {
    use std::sync::Barrier;
    db.upsert_workspace(WorkspaceUpsert::new("w0").owner("alice"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t0").workspace("w0"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t1").workspace("w1"))
        .unwrap();
    db.upsert_session(SessionUpsert::new("s0", "t0")).unwrap();
    db.upsert_session(SessionUpsert::new("s1", "t0")).unwrap();
    let rounds = 60;
    let start = Barrier::new(4);
    std::thread::scope(|scope| {
        for session in ["s0", "s1"] {
            let start = &start;
            scope.spawn(move || {
                start.wait();
                for _ in 0..rounds {
                    ask(db, session, 1);
                }
            });
        }
        scope.spawn(|| {
            start.wait();
            for round in 0..rounds {
                match round % 4 {
                    3 => db.delete_workspace("w0").unwrap(),
                    n => db
                        .upsert_workspace(WorkspaceUpsert::new("w0").owner(OWNERS[n]))
                        .unwrap(),
                }
            }
        });
        scope.spawn(|| {
            start.wait();
            for round in 0..rounds {
                let workspace = if round % 2 == 0 { "w1" } else { "w0" };
                db.upsert_task(TaskUpsert::new("t0").workspace(workspace))
                    .unwrap();
                let task = if round % 3 == 0 { "t1" } else { "t0" };
                db.upsert_session(SessionUpsert::new("s1", task)).unwrap();
            }
        });
    });
    let drift = clarion::test_hooks::drift(db).unwrap();
    let keys: Vec<_> = drift
        .iter()
        .filter(|d| d.task_key.is_some() || d.keys.is_some())
        .collect();
    assert!(keys.is_empty(), "keys drifted: {keys:?}");
    assert_eq!(clarion::test_hooks::drift(db).unwrap().len(), 0);
}

dual_backend!(ops_3a_owner_change_waits_for_a_task_moving_in);

/// OPS-3a: a task moving into a workspace and that workspace changing
/// owner cannot interleave. The move is paused after it wrote its
/// bundles' keys from the workspace's old owner, before its commit; the
/// owner change must wait for it (otherwise it would rewrite the keys of
/// the workspace's tasks without seeing the moving one, and the moved
/// bundles would keep the old owner).
fn ops_3a_owner_change_waits_for_a_task_moving_in(db: &TestDb) {
    use clarion::test_hooks::{points, FailAction, Gate};
    use std::time::Duration;
    db.upsert_workspace(WorkspaceUpsert::new("w0").owner("alice"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t0").workspace("w-none"))
        .unwrap();
    db.upsert_session(SessionUpsert::new("s0", "t0")).unwrap();
    let pending_id = ask(db, "s0", 1);
    let gate = Gate::new();
    db.arm_failpoint(
        points::TASK_MOVED_BEFORE_COMMIT,
        FailAction::Block(gate.clone()),
    );
    std::thread::scope(|scope| {
        let mover = scope.spawn(|| db.upsert_task(TaskUpsert::new("t0").workspace("w0")));
        assert!(
            gate.wait_arrival(Duration::from_secs(10)),
            "the move never paused"
        );
        let owner_change =
            scope.spawn(|| db.upsert_workspace(WorkspaceUpsert::new("w0").owner("bob")));
        // Time to get past the paused move if it did not wait for it; a
        // slow start only leaves it waiting too, so no false failure.
        std::thread::sleep(Duration::from_millis(300));
        let waited = !owner_change.is_finished();
        gate.open();
        mover.join().unwrap().unwrap();
        owner_change.join().unwrap().unwrap();
        assert!(waited, "the owner change did not wait for the move");
    });
    db.disarm_failpoint(points::TASK_MOVED_BEFORE_COMMIT);
    assert!(db.get_bundle(&Principal::user("bob"), &pending_id).is_ok());
    assert!(db
        .get_bundle(&Principal::user("alice"), &pending_id)
        .is_err());
    assert!(clarion::test_hooks::drift(db).unwrap().is_empty());
}
