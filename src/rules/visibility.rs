//! Who sees which task and bundle (AUTH-3, AUTH-4, AUTH-6), written once as
//! typed query fragments. The listing, the summary, pending actions,
//! `authorize` and every operation on one bundle use these and nothing else.
//!
//! A fragment has the same shape for every principal: the principal enters
//! as bound values (a `Scope`), so one rendered query covers all of them.

use diesel::dsl::{case_when, AsExprOf};
use diesel::expression::IntoSql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, IntoNullable, Nullable, Text};

use crate::rules::activeness::exists_per_row;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::BundleKind;
use crate::store::schema::{
    bundles, escalation_grants, events, sessions, tasks, workspace_members, workspaces,
};

/// The principal as the visibility fragments see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// `system` sees every task (AUTH-3).
    pub unscoped: bool,
    /// The owner whose workspaces a scoped principal sees.
    pub user_id: String,
    /// Agents never see `permission` bundles (AUTH-6), nor a quorum's,
    /// which are for people only (QUO-2).
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

/// The columns that name a workspace: a workspace id or a bundle's stored
/// key (text, or nullable text).
pub trait KeyColumn:
    diesel::Column<SqlType: IntoNullable<Nullable = Nullable<Text>>>
    + Copy
    + Default
    + diesel::expression::ValidGrouping<(), IsAggregate = diesel::expression::is_aggregate::No>
{
}

impl<C> KeyColumn for C where
    C: diesel::Column<SqlType: IntoNullable<Nullable = Nullable<Text>>>
        + Copy
        + Default
        + diesel::expression::ValidGrouping<(), IsAggregate = diesel::expression::is_aggregate::No>
{
}

/// PPL-3: the workspace named by `key` (a column of the enclosing query)
/// is owned by `user_id`.
#[diesel::dsl::auto_type]
fn owned_by<'a, K: KeyColumn>(key: K, user_id: &'a str) -> _ {
    let id: diesel::dsl::Nullable<workspaces::id> = workspaces::id.nullable();
    let key: diesel::dsl::Nullable<K> = key.nullable();
    exists_per_row(
        workspaces::table
            .filter(id.eq(key))
            .filter(workspaces::owner_id.eq(user_id))
            .select(workspaces::id),
    )
}

/// PPL-3: the workspace named by `key` (a column of the enclosing query)
/// counts `user_id` among its members.
#[diesel::dsl::auto_type]
fn has_member<'a, K: KeyColumn>(key: K, user_id: &'a str) -> _ {
    let id: diesel::dsl::Nullable<workspace_members::workspace_id> =
        workspace_members::workspace_id.nullable();
    let key: diesel::dsl::Nullable<K> = key.nullable();
    exists_per_row(
        workspace_members::table
            .filter(id.eq(key))
            .filter(workspace_members::user_id.eq(user_id))
            .select(workspace_members::workspace_id),
    )
}

/// AUTH-3, PPL-3: `user_id` sees what lies in the workspace `key` names —
/// its owner or one of its members. The one definition of who sees a
/// workspace; keys visible to everyone (`''`) are tested by the callers.
#[diesel::dsl::auto_type]
fn sees_workspace<'a, K: KeyColumn>(key: K, user_id: &'a str) -> _ {
    let owner: owned_by<'a, K> = owned_by(key, user_id);
    let member: has_member<'a, K> = has_member(key, user_id);
    owner.or(member)
}

/// AUTH-3: the workspace with the id in `workspace_id` (a column of the
/// enclosing query) is visible to every user: the id is empty, dangling,
/// or names a workspace owned by nobody.
#[diesel::dsl::auto_type]
fn open_to_everyone<W>(workspace_id: W) -> _
where
    W: KeyColumn<SqlType = Text>,
{
    let empty: &'static str = "";
    let owner = workspaces::table
        .filter(workspaces::id.eq(workspace_id))
        .select(workspaces::owner_id)
        .single_value();
    workspace_id.eq(empty).or(coalesce(owner, empty).eq(empty))
}

/// AUTH-3, PPL-3: what lies in the workspace with the id in `workspace_id`
/// is visible to `user_id`. Tasks read it through their own column; events
/// (EVT-2) through the workspace id they recorded.
#[diesel::dsl::auto_type]
fn workspace_visible_to<'a, W>(workspace_id: W, user_id: &'a str) -> _
where
    W: KeyColumn<SqlType = Text>,
{
    let everyone: open_to_everyone<W> = open_to_everyone(workspace_id);
    let sees: sees_workspace<'a, W> = sees_workspace(workspace_id, user_id);
    everyone.or(sees)
}

/// AUTH-3, PPL-3: the task in the enclosing query is visible to the scope.
#[diesel::dsl::auto_type]
pub fn task_visible<'a>(scope: &'a Scope) -> _ {
    let user_id: &'a str = &scope.user_id;
    let unscoped: bool = scope.unscoped;
    let rule: workspace_visible_to<'a, tasks::workspace_id> =
        workspace_visible_to(tasks::workspace_id, user_id);
    flag(unscoped).or(rule)
}

/// OPS-3a: the owner key of the workspace with the id in `workspace_id`:
/// `''` when every user sees what lies in it ([`open_to_everyone`]), else
/// its owner.
#[diesel::dsl::auto_type]
fn owner_key_of_workspace<W>(workspace_id: W) -> _
where
    W: KeyColumn<SqlType = Text>,
{
    let empty: &'static str = "";
    let owner = workspaces::table
        .filter(workspaces::id.eq(workspace_id))
        .select(workspaces::owner_id)
        .single_value();
    // A dangling id has no owner and an unowned workspace an empty one:
    // both `''`, as AUTH-3 reads them.
    case_when(workspace_id.eq(empty), empty.into_sql::<Text>()).otherwise(coalesce(owner, empty))
}

/// PPL-5: the workspace key of the workspace with the id in
/// `workspace_id`: `''` when every user sees what lies in it, else the id
/// itself — the range a member's walk reads.
#[diesel::dsl::auto_type]
fn workspace_key_of_workspace<W>(workspace_id: W) -> _
where
    W: KeyColumn<SqlType = Text>,
{
    let empty: &'static str = "";
    let everyone: open_to_everyone<W> = open_to_everyone(workspace_id);
    case_when(everyone, empty.into_sql::<Text>()).otherwise(workspace_id)
}

/// OPS-3a, PPL-5: the owner and workspace keys of the task with this id,
/// each NULL when no such task exists. What `ask` stores on a new bundle
/// of a task it just read.
#[diesel::dsl::auto_type]
pub fn keys_of_task<'a>(task_id: &'a str) -> _ {
    let owner: owner_key_of_workspace<tasks::workspace_id> =
        owner_key_of_workspace(tasks::workspace_id);
    let workspace: workspace_key_of_workspace<tasks::workspace_id> =
        workspace_key_of_workspace(tasks::workspace_id);
    let this_task: diesel::dsl::Eq<tasks::id, &'a str> = tasks::id.eq(task_id);
    (
        tasks::table.filter(this_task).select(owner).single_value(),
        tasks::table
            .filter(this_task)
            .select(workspace)
            .single_value(),
    )
}

/// OPS-3a: the owner key the bundle in the enclosing query must carry:
/// its task's (AUTH-4), NULL when that task does not exist.
#[diesel::dsl::auto_type]
pub fn owner_key_of_bundle() -> _ {
    let key: owner_key_of_workspace<tasks::workspace_id> =
        owner_key_of_workspace(tasks::workspace_id);
    tasks::table
        .filter(tasks::id.nullable().eq(bundle_task_id()))
        .select(key)
        .single_value()
}

/// PPL-5: the workspace key the bundle in the enclosing query must carry:
/// its task's (AUTH-4), NULL when that task does not exist.
#[diesel::dsl::auto_type]
pub fn workspace_key_of_bundle() -> _ {
    let key: workspace_key_of_workspace<tasks::workspace_id> =
        workspace_key_of_workspace(tasks::workspace_id);
    tasks::table
        .filter(tasks::id.nullable().eq(bundle_task_id()))
        .select(key)
        .single_value()
}

/// AUTH-4 through the stored key: the id of the bundle's task if that task
/// exists, else NULL.
#[diesel::dsl::auto_type]
pub fn resolved_task_id() -> _ {
    case_when(bundles::owner_key.is_not_null(), bundles::task_key)
}

/// AUTH-4, LIST-9: the bundle's task exists. A bundle without one is never
/// listed, not even for `system`. Written as `owner_key || ''` so that
/// SQLite does not take "not null" for a range of `bundles_by_owner` and
/// walk every tenant's bundles with it (measured: it preferred that range
/// to the task key's index in pending actions).
#[diesel::dsl::auto_type]
pub fn bundle_task_resolves() -> _ {
    let nothing: &'static str = "";
    bundles::owner_key.concat(nothing).is_not_null()
}

/// PPL-6: `user_id` holds an escalation grant for the bundle whose id is
/// in `pending_id` (a column of the enclosing query) whose time has come
/// by the handle's clock `now` (as ACT-1 binds it).
#[diesel::dsl::auto_type]
fn granted<'a, P>(pending_id: P, user_id: &'a str, now: i64) -> _
where
    P: KeyColumn<SqlType = Text>,
{
    exists_per_row(
        escalation_grants::table
            .filter(escalation_grants::pending_id.eq(pending_id))
            .filter(escalation_grants::user_id.eq(user_id))
            .filter(escalation_grants::visible_from.le(now))
            .select(escalation_grants::pending_id),
    )
}

/// AUTH-3/4/6, PPL-3, PPL-6: the bundle in the enclosing query is visible
/// to the scope at `now`. `system` sees every bundle, resolvable or not (it
/// may still resolve or cancel one by id, AUTH-4); a scoped principal
/// needs a resolvable task whose owner key (kept exact by
/// [`refresh_keys`]) is `''` or its user, or whose workspace key names a
/// workspace its user belongs to, or a grant whose time has come; agents
/// never see `permission` bundles, nor a quorum's (QUO-2: people only).
#[diesel::dsl::auto_type]
pub fn bundle_visible<'a>(scope: &'a Scope, now: i64) -> _ {
    let user_id: &'a str = &scope.user_id;
    let unscoped: bool = scope.unscoped;
    let sees_permission: bool = scope.sees_permission_bundles;
    let permission: &'static str = BundleKind::PERMISSION_WORD;
    let everyone: &'static str = "";
    let member: has_member<'a, bundles::workspace_key> =
        has_member(bundles::workspace_key, user_id);
    let grant: granted<'a, bundles::pending_id> = granted(bundles::pending_id, user_id, now);
    // A grant lifts AUTH-3, never AUTH-4: the bundle's task must exist (the
    // keys are NULL without one, so the other terms already require it).
    let granted_with_task = grant.and(bundle_task_resolves());
    flag(unscoped)
        .or(bundles::owner_key
            .eq(everyone)
            .or(bundles::owner_key.eq(user_id))
            .or(member)
            .or(granted_with_task))
        .and(
            flag(sees_permission).or(bundles::kind
                .ne(permission)
                .and(bundles::human_only.eq(false))),
        )
}

/// EVT-1: what an event records of the bundle in the enclosing query, at
/// append: its id, its task (AUTH-4, `''` if none), that task's workspace
/// id (`''` if none), whether the task exists, its kind and whether it is
/// for people only (QUO-2).
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
        bundles::human_only,
    )
}

/// EVT-2, PPL-3: the event in the enclosing query is visible to the scope
/// now — AUTH-3 with members applied to the workspace id it recorded and
/// its workspace's owner and members as they are now, or a grant of its
/// bundle whose time has come (PPL-6); AUTH-4 to whether its bundle had a
/// task, AUTH-6 to the kind it recorded.
#[diesel::dsl::auto_type]
pub fn event_visible<'a>(scope: &'a Scope, now: i64) -> _ {
    let user_id: &'a str = &scope.user_id;
    let unscoped: bool = scope.unscoped;
    let sees_permission: bool = scope.sees_permission_bundles;
    let permission: &'static str = BundleKind::PERMISSION_WORD;
    let rule: workspace_visible_to<'a, events::workspace_id> =
        workspace_visible_to(events::workspace_id, user_id);
    let grant: granted<'a, events::pending_id> = granted(events::pending_id, user_id, now);
    flag(unscoped)
        .or(events::task_exists.and(rule.or(grant)))
        .and(
            flag(sees_permission).or(events::kind
                .ne(permission)
                .and(events::human_only.eq(false))),
        )
}

/// OPS-3a: the owner keys whose index ranges a scoped principal's page
/// and summary walk — `''` and its user's. `None` for `system`, which walks
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

/// PPL-5: the workspaces `user_id` belongs to whose bundles its owner keys
/// do not already reach (owned by someone else): the workspace keys whose
/// index ranges its page and summary walk besides.
#[diesel::dsl::auto_type]
pub fn joined_workspaces<'a>(user_id: &'a str) -> _ {
    let nobody: &'static str = "";
    workspace_members::table
        .inner_join(workspaces::table)
        .filter(workspace_members::user_id.eq(user_id))
        .filter(workspaces::owner_id.ne(user_id))
        .filter(workspaces::owner_id.ne(nobody))
        .select(workspace_members::workspace_id)
}

/// PPL-6: the bundles granted to `user_id` whose time has come.
#[diesel::dsl::auto_type]
pub fn granted_bundles<'a>(user_id: &'a str, now: i64) -> _ {
    escalation_grants::table
        .filter(escalation_grants::user_id.eq(user_id))
        .filter(escalation_grants::visible_from.le(now))
        .select(escalation_grants::pending_id)
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
    let workspace: workspace_key_of_bundle = workspace_key_of_bundle();
    diesel::dsl::update(target).set((
        bundles::task_key.eq(task),
        bundles::owner_key.eq(owner),
        bundles::workspace_key.eq(workspace),
    ))
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
pub fn visible_bundle<'a>(scope: &'a Scope, pending_id: &'a str, now: i64) -> _ {
    let visible: bundle_visible<'a> = bundle_visible(scope, now);
    bundles::table
        .filter(bundles::pending_id.eq(pending_id))
        .filter(visible)
}

/// AUTH-8: is the bundle visible to the scope?
#[diesel::dsl::auto_type]
pub fn bundle_visibility_query<'a>(scope: &'a Scope, pending_id: &'a str, now: i64) -> _ {
    let bundle: visible_bundle<'a> = visible_bundle(scope, pending_id, now);
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
