//! AUTH-7, SUM-1, PPL-3, PPL-6 as a property: on random worlds — owners,
//! members (some replaced, so some users are removed members, some removed
//! with their directory entry), escalation grants whose time has come or
//! not — for every principal that may list:
//! - the bundles collected by paging `list_pending` to the end are exactly
//!   the active, answerable bundles that `authorize` allows for
//!   `get_bundle`, and `summary.pending_bundles` counts them;
//! - resolve is allowed for exactly the same bundles as get, and
//!   `get_bundle` succeeds for exactly those;
//! - `authorize` agrees with a model of the rule written here from AUTH-3
//!   (as amended by PPL-3), AUTH-4, AUTH-6 and PPL-6 alone;
//! - paging `list_settled` (LIST-12) yields what `system`'s history holds,
//!   narrowed to what the principal may see;
//! - `authorize` on a task follows the workspace rule alone: a grant never
//!   reaches the task (PPL-6, PA-1).
//!
//! Each world is checked at the clock it was written at and again later, so
//! the grants of the future come into effect between the two checks.

use std::collections::BTreeSet;

use clarion::test_hooks::schema::{bundles, tasks, workspaces};
use clarion::{
    BundleStatus, Clock, Grant, ListRequest, Operation, Principal, SessionState, SessionUpsert,
    SettledRequest, Target, TaskUpsert, Timestamp, WorkspaceUpsert,
};
use diesel::prelude::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::support;
use crate::support::rows::{self, Row};
use crate::support::{alice, bob, TestDb, EPOCH};

/// The users members and grants name: the scoped principals' users and one
/// nobody acts as.
const USERS: [&str; 4] = ["alice", "bob", "carol", "dave"];

/// When a grant takes effect, relative to the clock the world is written
/// at: an hour before, exactly then, a microsecond after, an hour after.
const GRANT_OFFSETS: [i64; 4] = [-3_600_000_000, 0, 1, 3_600_000_000];

/// Where the clock stands at the second check: a microsecond later (only
/// the grants of the next microsecond join), or two hours later (every
/// grant has come).
const LATER: [i64; 2] = [1, 7_200_000_000];

#[derive(Debug, Clone)]
struct BundleSpec {
    session: usize,
    turn: usize,
    permission: bool,
    /// 0: empty (use the session's), 1: the session's task, 2: another task, 3: a missing task.
    task_choice: u8,
    rows: Vec<(Option<&'static str>, bool)>,
    /// PPL-6: (index into `USERS`, index into `GRANT_OFFSETS`); one grant
    /// per user, the first wins.
    grants: Vec<(usize, usize)>,
    /// A resolution time is written, so history (LIST-12) may hold it.
    responded: bool,
}

#[derive(Debug, Clone)]
struct World {
    owners: Vec<&'static str>,
    /// PPL-2, per workspace w0..w2 (set when it exists): the members first
    /// set (a bit per `USERS` entry) and, maybe, the set that replaces them
    /// once the bundles exist — who is left out is a removed member.
    members: Vec<(u8, Option<u8>)>,
    /// PPL-1: this user (index into `USERS`) is deleted at the end, which
    /// removes them from every member set.
    deleted_user: Option<usize>,
    task_workspaces: Vec<u8>,
    sessions: Vec<(usize, usize, bool)>,
    turns: Vec<usize>,
    bundles: Vec<BundleSpec>,
    /// Index into `LATER`.
    later: usize,
}

const STATUSES: [Option<&str>; 6] = [
    None,
    Some(""),
    Some("pending"),
    Some("answered"),
    Some("expired"),
    Some("bogus"),
];

fn bundle_spec() -> impl Strategy<Value = BundleSpec> {
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
        prop::collection::vec((0usize..USERS.len(), 0usize..GRANT_OFFSETS.len()), 0..3),
        prop::bool::weighted(0.4),
    )
        .prop_map(
            |(session, turn, permission, task_choice, rows, grants, responded)| BundleSpec {
                session,
                turn,
                permission,
                task_choice,
                rows,
                grants,
                responded,
            },
        )
}

fn world() -> impl Strategy<Value = World> {
    (
        prop::collection::vec(prop::sample::select(vec!["", "alice", "bob"]), 0..4),
        prop::collection::vec((0u8..16, prop::option::weighted(0.5, 0u8..16)), 3),
        prop::option::weighted(0.2, 0usize..USERS.len()),
        prop::collection::vec(0u8..5, 1..4),
        prop::collection::vec((0usize..4, 0usize..8, any::<bool>()), 1..4),
        prop::collection::vec(1usize..3, 4),
        prop::collection::vec(bundle_spec(), 0..8),
        0usize..LATER.len(),
    )
        .prop_map(
            |(owners, members, deleted_user, task_workspaces, sessions, turns, bundles, later)| {
                World {
                    // At most three workspaces, w0..w2.
                    owners: owners.into_iter().take(3).collect(),
                    members,
                    deleted_user,
                    task_workspaces,
                    sessions,
                    turns,
                    bundles,
                    later,
                }
            },
        )
}

fn users_of(mask: u8) -> BTreeSet<String> {
    USERS
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, u)| (*u).to_owned())
        .collect()
}

/// Who sees what lies in a workspace (AUTH-3 as amended by PPL-3).
#[derive(Debug, Clone)]
enum Access {
    /// No workspace, a dangling one or an unowned one: every user.
    Everyone,
    /// An owned workspace: its owner and its members.
    Owned {
        owner: String,
        members: BTreeSet<String>,
    },
}

impl Access {
    fn admits(&self, user: &str) -> bool {
        match self {
            Access::Everyone => true,
            Access::Owned { owner, members } => owner == user || members.contains(user),
        }
    }
}

/// The model's view of one bundle.
#[derive(Debug)]
struct ModelBundle {
    id: String,
    /// No row has an empty question id (LIST-9).
    answerable: bool,
    /// Its task (AUTH-4) exists.
    resolvable: bool,
    permission: bool,
    /// Who sees its task's workspace; meaningless when not resolvable.
    access: Access,
    /// PPL-6: (user, visible_from in microseconds).
    grants: Vec<(String, i64)>,
}

#[derive(Debug)]
struct Model {
    /// Every task the world writes, with who sees its workspace.
    tasks: Vec<(String, Access)>,
    bundles: Vec<ModelBundle>,
}

impl ModelBundle {
    /// AUTH-3/4/6, PPL-3, PPL-6 for a scoped principal of `user` (`human`:
    /// a user rather than an agent) at `now`.
    fn visible(&self, user: &str, human: bool, now: i64) -> bool {
        if self.permission && !human {
            // AUTH-6.
            return false;
        }
        let granted = self
            .grants
            .iter()
            .any(|(grantee, from)| grantee == user && *from <= now);
        if !self.resolvable {
            // AUTH-4: not-found for every scoped principal, grants or not.
            return false;
        }
        self.access.admits(user) || granted
    }
}

/// The scoped principal's user and whether it is a human; `None` for
/// `system`.
fn scope_of(principal: &Principal) -> Option<(&str, bool)> {
    match principal {
        Principal::User { user_id } => Some((user_id, true)),
        Principal::Agent { user_id, .. } => Some((user_id, false)),
        _ => None,
    }
}

/// Empties the database and writes the world at the clock's `now`.
/// Returns the model of it.
fn build(db: &TestDb, world: &World, now: i64) -> Model {
    db.raw(|conn| {
        diesel::delete(tasks::table).execute(conn).unwrap();
        // Members go with their workspace.
        diesel::delete(workspaces::table).execute(conn).unwrap();
    });
    for (i, owner) in world.owners.iter().enumerate() {
        db.upsert_workspace(WorkspaceUpsert::new(&format!("w{i}")).owner(owner))
            .unwrap();
    }
    // The members first set; their replacements come once the bundles
    // exist (PPL-2 touches no bundle row).
    let mut members: Vec<BTreeSet<String>> = Vec::new();
    for (i, (first, _)) in world.members.iter().enumerate().take(world.owners.len()) {
        let first = users_of(*first);
        let list: Vec<String> = first.iter().cloned().collect();
        db.set_members(&format!("w{i}"), &list).unwrap();
        members.push(first);
    }
    let mut task_access = Vec::new();
    for (i, choice) in world.task_workspaces.iter().enumerate() {
        // 0: no workspace, 1..=3: w0..w2 (which may not exist: dangling), 4: wX
        let workspace = match choice {
            0 => String::new(),
            4 => "wX".to_owned(),
            n => format!("w{}", n - 1),
        };
        db.upsert_task(TaskUpsert::new(&format!("t{i}")).workspace(&workspace))
            .unwrap();
        // The workspace index whose owner and members decide, if owned.
        let owned = match choice {
            1..=3 => {
                let w = usize::from(choice - 1);
                (w < world.owners.len() && !world.owners[w].is_empty()).then_some(w)
            }
            _ => None,
        };
        task_access.push(owned);
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
    // (id, answerable, task index if resolvable, permission, grants)
    let mut written = Vec::new();
    for (b, spec) in world.bundles.iter().enumerate() {
        let s = spec.session % world.sessions.len();
        let session = format!("s{s}");
        let turns = &session_turns[s];
        let turn = &turns[spec.turn % turns.len()];
        let own_task = world.sessions[s].0 % tasks;
        let (task_id, task) = match spec.task_choice {
            0 => (String::new(), Some(own_task)),
            1 => (format!("t{own_task}"), Some(own_task)),
            2 => {
                let other = (world.sessions[s].0 + 1) % tasks;
                (format!("t{other}"), Some(other))
            }
            _ => ("t-missing".to_owned(), None),
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
        if spec.responded {
            // Some resolution times tie, so history's order falls back on
            // the pending id (LIST-12).
            let at = EPOCH.as_micros() + (b % 3) as i64;
            db.raw(|conn| {
                diesel::update(bundles::table.find(&id))
                    .set(bundles::responded_at.eq(Some(at)))
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
        let mut grants: Vec<(String, i64)> = Vec::new();
        for (user, offset) in &spec.grants {
            let user = USERS[*user];
            if grants.iter().any(|(u, _)| u == user) {
                continue;
            }
            let from = now + GRANT_OFFSETS[*offset];
            clarion::test_hooks::grant_escalation(db, &id, user, Timestamp::from_micros(from))
                .unwrap();
            grants.push((user.to_owned(), from));
        }
        written.push((id, answerable, task, spec.permission, grants));
    }
    // Members replaced (removed members), then a user deleted (PPL-1: gone
    // from every member set).
    for (i, (_, then)) in world.members.iter().enumerate().take(world.owners.len()) {
        if let Some(then) = then {
            let then = users_of(*then);
            let list: Vec<String> = then.iter().cloned().collect();
            db.set_members(&format!("w{i}"), &list).unwrap();
            members[i] = then;
        }
    }
    if let Some(user) = world.deleted_user {
        db.delete_user(USERS[user]).unwrap();
        for set in &mut members {
            set.remove(USERS[user]);
        }
    }
    // Session states last, through the raw row so that no expiry hides a
    // terminal session's bundles from the check.
    for (i, (_, state, _)) in world.sessions.iter().enumerate() {
        rows::force_state(db, &format!("s{i}"), SessionState::ALL[*state].as_str());
    }
    let access_of = |task: usize| match task_access[task] {
        None => Access::Everyone,
        Some(w) => Access::Owned {
            owner: world.owners[w].to_owned(),
            members: members[w].clone(),
        },
    };
    Model {
        tasks: (0..tasks)
            .map(|t| (format!("t{t}"), access_of(t)))
            .collect(),
        bundles: written
            .into_iter()
            .map(|(id, answerable, task, permission, grants)| ModelBundle {
                id,
                answerable,
                resolvable: task.is_some(),
                permission,
                access: task.map_or(Access::Everyone, access_of),
                grants,
            })
            .collect(),
    }
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
        Principal::agent("carol", "worker", Grant::ALL),
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

/// LIST-12: history paged to the end, in its order.
fn collect_settled(db: &TestDb, principal: &Principal) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = None;
    loop {
        let page = db
            .list_settled(
                principal,
                &SettledRequest {
                    cursor: cursor.clone(),
                    limit: Some(2),
                    ..SettledRequest::default()
                },
            )
            .unwrap();
        ids.extend(page.bundles.into_iter().map(|b| b.bundle.pending_id));
        if page.next_cursor.is_none() {
            return ids;
        }
        cursor = page.next_cursor;
    }
}

/// Checks every principal against the library and the model at the
/// handle's clock `now`.
fn check(db: &TestDb, model: &Model, now: i64) -> Result<(), TestCaseError> {
    let settled_by_system = collect_settled(db, &Principal::System);
    for principal in principals() {
        let scope = scope_of(&principal);
        let listed = collect_all_pages(db, &principal);
        let listed_set: BTreeSet<String> = listed.iter().cloned().collect();
        prop_assert_eq!(
            listed.len(),
            listed_set.len(),
            "duplicates for {:?}",
            principal
        );
        let may_get = clarion::has_capability(&principal, Operation::GetBundle);
        let mut expected = BTreeSet::new();
        let mut gettable = BTreeSet::new();
        for bundle in &model.bundles {
            let id = &bundle.id;
            let get = db
                .authorize(&principal, Operation::GetBundle, Target::Bundle(id))
                .unwrap();
            let resolve = db
                .authorize(&principal, Operation::ResolveBundle, Target::Bundle(id))
                .unwrap();
            if clarion::has_capability(&principal, Operation::ResolveBundle) {
                prop_assert_eq!(get, resolve, "get vs resolve for {:?} on {}", principal, id);
            }
            if may_get {
                let modelled = scope.is_none_or(|(user, human)| bundle.visible(user, human, now));
                prop_assert_eq!(
                    get.is_allowed(),
                    modelled,
                    "authorize vs model for {:?} on {:?} at {}",
                    principal,
                    bundle,
                    now
                );
                prop_assert_eq!(
                    db.get_bundle(&principal, id).is_ok(),
                    get.is_allowed(),
                    "get_bundle vs authorize for {:?} on {}",
                    principal,
                    id
                );
            }
            if get.is_allowed() {
                gettable.insert(id.clone());
            }
            let active =
                db.get_bundle(&Principal::System, id).unwrap().status == BundleStatus::Pending;
            if get.is_allowed() && active && bundle.answerable && bundle.resolvable {
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
        // LIST-12: history is system's, narrowed by the same rule, in the
        // same order.
        let settled = collect_settled(db, &principal);
        let settled_expected: Vec<String> = settled_by_system
            .iter()
            .filter(|id| gettable.contains(*id))
            .cloned()
            .collect();
        prop_assert_eq!(&settled, &settled_expected, "history for {:?}", principal);
        // PA-1, PPL-6: a task by the workspace rule alone; a grant on one
        // of its bundles never reaches it. A task that does not exist is
        // not found, also for system.
        if clarion::has_capability(&principal, Operation::ListPending) {
            for (task, access) in &model.tasks {
                let allowed = db
                    .authorize(&principal, Operation::ListPending, Target::Task(task))
                    .unwrap()
                    .is_allowed();
                let modelled = scope.is_none_or(|(user, _)| access.admits(user));
                prop_assert_eq!(
                    allowed,
                    modelled,
                    "task {} for {:?} ({:?})",
                    task,
                    principal,
                    access
                );
            }
            let missing = db
                .authorize(
                    &principal,
                    Operation::ListPending,
                    Target::Task("t-missing"),
                )
                .unwrap();
            prop_assert!(!missing.is_allowed(), "t-missing for {:?}", principal);
        }
    }
    Ok(())
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
    runner
        .run(&world(), |world| {
            db.clock.set(EPOCH);
            let now = db.clock.now().as_micros();
            let model = build(db, &world, now);
            check(db, &model, now)?;
            // PPL-6: later, the grants whose time has come since count.
            db.clock.advance_micros(LATER[world.later]);
            check(db, &model, db.clock.now().as_micros())
        })
        .unwrap();
}

#[test]
fn auth_7_listing_and_authorize_agree_sqlite() {
    run(&support::sqlite(), 48);
}

#[cfg(feature = "postgres")]
#[test]
fn auth_7_listing_and_authorize_agree_postgres() {
    if let Some(db) = support::postgres() {
        run(&db, 32);
    }
}
