//! Who sees which task and bundle (AUTH-3, AUTH-4, AUTH-6), written once as
//! typed query fragments. The listing, the summary, pending actions,
//! `authorize` and every operation on one bundle use these and nothing else.
//!
//! A fragment has the same shape for every principal: the principal enters
//! as bound values (a `Scope`), so one rendered query covers all of them.

use diesel::dsl::{case_when, AsExprOf};
use diesel::expression::IntoSql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Text};

use crate::rules::activeness::exists_per_row;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::BundleKind;
use crate::store::schema::{bundles, events, sessions, tasks, workspaces};

/// The principal as the visibility fragments see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// `system` sees every task (AUTH-3).
    pub unscoped: bool,
    /// The owner whose workspaces a scoped principal sees.
    pub user_id: String,
    /// Agents never see `permission` bundles (AUTH-6).
    pub sees_permission_bundles: bool,
}

impl Scope {
    /// `None` for `unclassified`, which sees nothing and is denied earlier.
    pub fn of(principal: &Principal) -> Option<Scope> {
        match principal {
            Principal::System => Some(Scope {
                unscoped: true,
                user_id: String::new(),
                sees_permission_bundles: true,
            }),
            Principal::User { user_id } => Some(Scope {
                unscoped: false,
                user_id: user_id.clone(),
                sees_permission_bundles: true,
            }),
            Principal::Agent { user_id, .. } => Some(Scope {
                unscoped: false,
                user_id: user_id.clone(),
                sees_permission_bundles: false,
            }),
            Principal::Unclassified => None,
        }
    }
}

/// A principal-dependent switch, bound as a parameter.
#[allow(non_camel_case_types)]
type flag<T> = AsExprOf<T, Bool>;

fn flag(value: bool) -> flag<bool> {
    value.into_sql::<Bool>()
}

/// AUTH-3 for a scoped owner: the task in the enclosing query is visible iff
/// its owner key ([`task_owner_key`], the one definition of AUTH-3) is `''`
/// (no workspace, a dangling or an unowned one) or `user_id`.
#[diesel::dsl::auto_type]
pub fn task_visible_to_owner<'a>(user_id: &'a str) -> _ {
    let everyone: &'static str = "";
    let key: task_owner_key = task_owner_key();
    let again: task_owner_key = task_owner_key();
    key.eq(everyone).or(again.eq(user_id))
}

/// AUTH-3: the task in the enclosing query is visible to the scope.
#[diesel::dsl::auto_type]
pub fn task_visible<'a>(scope: &'a Scope) -> _ {
    let user_id: &'a str = &scope.user_id;
    let unscoped: bool = scope.unscoped;
    let owner_rule: task_visible_to_owner<'a> = task_visible_to_owner(user_id);
    flag(unscoped).or(owner_rule)
}

/// The task id of the bundle's session, if the session row exists.
#[diesel::dsl::auto_type]
fn session_task_id() -> _ {
    sessions::table
        .filter(sessions::id.eq(bundles::session_id))
        .select(sessions::task_id)
        .single_value()
}

/// AUTH-4: the bundle's task is its own `task_id` when non-empty, else its
/// session's. Derived from stored rows only (AUTH-9). This is what
/// `bundles.task_key` holds (OPS-3a).
#[diesel::dsl::auto_type]
pub fn bundle_task_id() -> _ {
    let empty: &'static str = "";
    case_when(bundles::task_id.ne(empty), bundles::task_id.nullable()).otherwise(session_task_id())
}

diesel::define_sql_function! {
    /// SQL `COALESCE` of a nullable text and a fallback.
    fn coalesce(value: Nullable<Text>, fallback: Text) -> Text;
}

/// AUTH-3 as a key of the task in the enclosing query: `''` when every user
/// sees it (no workspace, a dangling one, or one owned by nobody), else the
/// owner of its workspace. Task visibility and the bundles' stored keys
/// both derive from this.
#[diesel::dsl::auto_type]
fn task_owner_key() -> _ {
    owner_key_of_workspace(tasks::workspace_id)
}

/// AUTH-3 as a key of the workspace id in `workspace_id` (a column of the
/// enclosing query): `''` when it is empty, dangling or owned by nobody,
/// else its owner. Tasks read it through their own column; events
/// (EVT-2) through the workspace id they recorded.
#[diesel::dsl::auto_type]
fn owner_key_of_workspace<W>(workspace_id: W) -> _
where
    W: diesel::Column<SqlType = Text>
        + Copy
        + Default
        + diesel::expression::ValidGrouping<(), IsAggregate = diesel::expression::is_aggregate::No>,
{
    let empty: &'static str = "";
    let owner = workspaces::table
        .filter(workspaces::id.eq(workspace_id))
        .select(workspaces::owner_id)
        .single_value();
    case_when(workspace_id.eq(empty), empty.into_sql::<Text>()).otherwise(coalesce(owner, empty))
}

/// OPS-3a: the owner key of the task with this id, NULL when no such task
/// exists. What `ask` stores on a new bundle of a task it just read.
#[diesel::dsl::auto_type]
pub fn owner_key_of_task<'a>(task_id: &'a str) -> _ {
    tasks::table
        .filter(tasks::id.eq(task_id))
        .select(task_owner_key())
        .single_value()
}

/// OPS-3a: the owner key the bundle in the enclosing query must carry:
/// its task's (AUTH-4) key, NULL when that task does not exist.
#[diesel::dsl::auto_type]
pub fn owner_key_of_bundle() -> _ {
    tasks::table
        .filter(tasks::id.nullable().eq(bundle_task_id()))
        .select(task_owner_key())
        .single_value()
}

/// AUTH-4 through the stored key: the id of the bundle's task if that task
/// exists, else NULL.
#[diesel::dsl::auto_type]
pub fn resolved_task_id() -> _ {
    case_when(bundles::owner_key.is_not_null(), bundles::task_key)
}

/// AUTH-4, LIST-9: the bundle's task exists. A bundle without one is never
/// listed, not even for `system`. Written as `owner_key || ''` so that SQLite
/// does not take "not null" for a range of `bundles_by_owner` and walk every
/// tenant's bundles with it (measured: it preferred that range to the task
/// key's index in pending actions).
#[diesel::dsl::auto_type]
pub fn bundle_task_resolves() -> _ {
    let nothing: &'static str = "";
    bundles::owner_key.concat(nothing).is_not_null()
}

/// AUTH-3/4/6: the bundle in the enclosing query is visible to the scope.
/// `system` sees every bundle, resolvable or not (it may still resolve or
/// cancel one by id, AUTH-4); a scoped principal needs a resolvable task
/// visible to everyone (key `''`) or owned by them (OPS-3a: read from the
/// bundle's own row, which [`refresh_keys`] keeps exact); agents never see
/// `permission` bundles.
#[diesel::dsl::auto_type]
pub fn bundle_visible<'a>(scope: &'a Scope) -> _ {
    let user_id: &'a str = &scope.user_id;
    let unscoped: bool = scope.unscoped;
    let sees_permission: bool = scope.sees_permission_bundles;
    let permission: &'static str = BundleKind::PERMISSION_WORD;
    let everyone: &'static str = "";
    flag(unscoped)
        .or(bundles::owner_key
            .eq(everyone)
            .or(bundles::owner_key.eq(user_id)))
        .and(flag(sees_permission).or(bundles::kind.ne(permission)))
}

/// EVT-1: what an event records of the bundle in the enclosing query, at
/// append: its id, its task (AUTH-4, `''` if none), that task's workspace
/// id (`''` if none), whether the task exists, and its kind.
#[diesel::dsl::auto_type]
pub fn event_subject() -> _ {
    let empty: &'static str = "";
    let workspace = tasks::table
        .filter(tasks::id.nullable().eq(bundles::task_key))
        .select(tasks::workspace_id)
        .single_value();
    (
        bundles::pending_id,
        coalesce(bundles::task_key, empty),
        coalesce(workspace, empty),
        bundle_task_resolves(),
        bundles::kind,
    )
}

/// EVT-2: the event in the enclosing query is visible to the scope now —
/// AUTH-3 applied to the workspace id it recorded (the same key as tasks
/// and bundles, [`owner_key_of_workspace`]), AUTH-4 to whether its bundle
/// had a task, AUTH-6 to the kind it recorded.
#[diesel::dsl::auto_type]
pub fn event_visible<'a>(scope: &'a Scope) -> _ {
    let user_id: &'a str = &scope.user_id;
    let unscoped: bool = scope.unscoped;
    let sees_permission: bool = scope.sees_permission_bundles;
    let permission: &'static str = BundleKind::PERMISSION_WORD;
    let everyone: &'static str = "";
    let key: owner_key_of_workspace<events::workspace_id> =
        owner_key_of_workspace(events::workspace_id);
    let again: owner_key_of_workspace<events::workspace_id> =
        owner_key_of_workspace(events::workspace_id);
    flag(unscoped)
        .or(events::task_exists.and(key.eq(everyone).or(again.eq(user_id))))
        .and(flag(sees_permission).or(events::kind.ne(permission)))
}

/// OPS-3a: the owner keys whose bundles a scoped principal may see — the
/// index ranges its page and summary walk. `None` for `system`, which walks
/// everything.
pub fn owner_keys(scope: &Scope) -> Option<Vec<&str>> {
    if scope.unscoped {
        None
    } else if scope.user_id.is_empty() {
        Some(vec![""])
    } else {
        Some(vec!["", scope.user_id.as_str()])
    }
}

/// OPS-3a: rewrites the keys of the bundles in `target` from the mirror.
/// Every change to a workspace, task or session runs this for the bundles it
/// may reach, in the same transaction, so the keys stay exact.
#[diesel::dsl::auto_type]
pub fn refresh_keys<T>(target: T) -> _
where
    T: diesel::query_builder::IntoUpdateTarget<Table = bundles::table>,
{
    let task: bundle_task_id = bundle_task_id();
    let owner: owner_key_of_bundle = owner_key_of_bundle();
    diesel::dsl::update(target).set((bundles::task_key.eq(task), bundles::owner_key.eq(owner)))
}

/// LIST-4: the bundle's task (AUTH-4) is in `workspace_id`; an empty
/// `workspace_id` means no filter. It only ever narrows visibility.
#[diesel::dsl::auto_type]
pub fn bundle_in_workspace<'a>(workspace_id: &'a str) -> _ {
    let no_filter: bool = workspace_id.is_empty();
    flag(no_filter).or(exists_per_row(
        tasks::table
            .filter(tasks::id.nullable().eq(bundles::task_key))
            .filter(tasks::workspace_id.eq(workspace_id))
            .select(tasks::id),
    ))
}

/// PA-1: whether the bundle's session is its task's primary session.
#[diesel::dsl::auto_type]
pub fn session_is_primary() -> _ {
    sessions::table
        .filter(sessions::id.eq(bundles::session_id))
        .select(sessions::is_primary)
        .single_value()
}

/// The bundle with this id, if the scope may see it (AUTH-5: invisible and
/// absent are alike). Every read of one bundle starts here.
#[diesel::dsl::auto_type]
pub fn visible_bundle<'a>(scope: &'a Scope, pending_id: &'a str) -> _ {
    let visible: bundle_visible<'a> = bundle_visible(scope);
    bundles::table
        .filter(bundles::pending_id.eq(pending_id))
        .filter(visible)
}

/// AUTH-8: is the bundle visible to the scope?
#[diesel::dsl::auto_type]
pub fn bundle_visibility_query<'a>(scope: &'a Scope, pending_id: &'a str) -> _ {
    let bundle: visible_bundle<'a> = visible_bundle(scope, pending_id);
    diesel::dsl::select(diesel::dsl::exists(bundle.select(bundles::pending_id)))
}

/// AUTH-8: is the task visible to the scope?
#[diesel::dsl::auto_type]
pub fn task_visibility_query<'a>(scope: &'a Scope, task_id: &'a str) -> _ {
    let visible: task_visible<'a> = task_visible(scope);
    diesel::dsl::select(diesel::dsl::exists(
        tasks::table
            .filter(tasks::id.eq(task_id))
            .filter(visible)
            .select(tasks::id),
    ))
}

/// OPS-3a: the bundles whose key reads task `task_id`, after the task is
/// created, moved or deleted.
#[diesel::dsl::auto_type]
pub fn refresh_keys_of_task<'a>(task_id: &'a str) -> _ {
    refresh_keys(bundles::table.filter(bundles::task_key.eq(task_id)))
}

/// OPS-3a: the bundles whose task is in workspace `workspace_id`, after the
/// workspace is created, given an owner or deleted.
#[diesel::dsl::auto_type]
pub fn refresh_keys_of_workspace<'a>(workspace_id: &'a str) -> _ {
    let tasks_in_workspace = tasks::table
        .filter(tasks::workspace_id.eq(workspace_id))
        .select(tasks::id.nullable());
    refresh_keys(bundles::table.filter(bundles::task_key.eq_any(tasks_in_workspace)))
}

/// OPS-3a: the bundles that take their task from session `session_id`
/// (AUTH-4), after the session moves to another task.
#[diesel::dsl::auto_type]
pub fn refresh_keys_of_session<'a>(session_id: &'a str) -> _ {
    let empty: &'static str = "";
    refresh_keys(
        bundles::table
            .filter(bundles::session_id.eq(session_id))
            .filter(bundles::task_id.eq(empty)),
    )
}

/// OPS-3a: one bundle (rows written outside clarion: generated worlds and
/// degraded test rows).
#[cfg(feature = "test-hooks")]
#[diesel::dsl::auto_type]
pub fn refresh_keys_of_bundle<'a>(pending_id: &'a str) -> _ {
    refresh_keys(bundles::table.filter(bundles::pending_id.eq(pending_id)))
}
