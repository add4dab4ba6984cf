//! Who sees which task and bundle (AUTH-3, AUTH-4, AUTH-6), written once as
//! typed query fragments. The listing, the summary, pending actions,
//! `authorize` and every operation on one bundle use these and nothing else.
//!
//! A fragment has the same shape for every principal: the principal enters
//! as bound values (a `Scope`), so one rendered query covers all of them.

use diesel::dsl::{case_when, not, AsExprOf};
use diesel::expression::IntoSql;
use diesel::prelude::*;
use diesel::sql_types::Bool;

use crate::rules::activeness::exists_per_row;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::BundleKind;
use crate::store::schema::{bundles, sessions, tasks, workspaces};

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
/// its workspace id is empty, names no workspace (dangling), or names a
/// workspace owned by nobody or by `user_id`.
#[diesel::dsl::auto_type]
pub fn task_visible_to_owner<'a>(user_id: &'a str) -> _ {
    let empty: &'static str = "";
    tasks::workspace_id.eq(empty).or(not(exists_per_row(
        workspaces::table
            .filter(workspaces::id.eq(tasks::workspace_id))
            .filter(workspaces::owner_id.ne(empty))
            .filter(workspaces::owner_id.ne(user_id))
            .select(workspaces::id),
    )))
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
/// session's. Derived from stored rows only (AUTH-9).
#[diesel::dsl::auto_type]
pub fn bundle_task_id() -> _ {
    let empty: &'static str = "";
    case_when(bundles::task_id.ne(empty), bundles::task_id.nullable()).otherwise(session_task_id())
}

/// The tasks table narrowed to the enclosing bundle's task (AUTH-4).
#[diesel::dsl::auto_type]
fn task_of_bundle() -> _ {
    tasks::table.filter(tasks::id.nullable().eq(bundle_task_id()))
}

/// AUTH-4: the id of the bundle's task if that task exists, else NULL.
#[diesel::dsl::auto_type]
pub fn resolved_task_id() -> _ {
    task_of_bundle().select(tasks::id).single_value()
}

/// AUTH-4, LIST-9: the bundle's task exists. A bundle without one is never
/// listed, not even for `system`.
#[diesel::dsl::auto_type]
pub fn bundle_task_resolves() -> _ {
    exists_per_row(task_of_bundle().select(tasks::id))
}

/// AUTH-3/4/6: the bundle in the enclosing query is visible to the scope.
/// `system` sees every bundle, resolvable or not (it may still resolve or
/// cancel one by id, AUTH-4); a scoped principal needs a resolvable, visible
/// task; agents never see `permission` bundles.
#[diesel::dsl::auto_type]
pub fn bundle_visible<'a>(scope: &'a Scope) -> _ {
    let user_id: &'a str = &scope.user_id;
    let unscoped: bool = scope.unscoped;
    let sees_permission: bool = scope.sees_permission_bundles;
    let permission: &'static str = BundleKind::PERMISSION_WORD;
    let owner_rule: task_visible_to_owner<'a> = task_visible_to_owner(user_id);
    flag(unscoped)
        .or(exists_per_row(
            task_of_bundle().filter(owner_rule).select(tasks::id),
        ))
        .and(flag(sees_permission).or(bundles::kind.ne(permission)))
}

/// LIST-4: the bundle's task (AUTH-4) is in `workspace_id`; an empty
/// `workspace_id` means no filter. It only ever narrows visibility.
#[diesel::dsl::auto_type]
pub fn bundle_in_workspace<'a>(workspace_id: &'a str) -> _ {
    let no_filter: bool = workspace_id.is_empty();
    flag(no_filter).or(exists_per_row(
        task_of_bundle()
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
