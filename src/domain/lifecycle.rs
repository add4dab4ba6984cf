//! The host mirror (LIFE-1..5, LIFE-7, LIFE-10): workspaces, tasks,
//! sessions and turns, which the host keeps current and clarion reads.

use diesel::dsl::update;
use diesel::prelude::*;

use crate::domain::change::{Change, Changes};
use crate::domain::deadline;
use crate::domain::engine::Engine;
use crate::error::{Entity, Error, Result};
use crate::rules::activeness::{self, question_is_pending};
use crate::rules::limits::{check_id, check_runes, check_text, MAX_NAME_RUNES};
use crate::rules::outbox::detach_statement;
use crate::rules::visibility;
use crate::rules::vocabulary::{CloseReason, QuestionStatus, SessionState};
use crate::store::failpoints::points;
use crate::store::schema::{bundle_questions, bundles, sessions, tasks, turns, workspaces};
use crate::store::{
    at_most_one, hold, lock_session, lock_sessions_reached, AnyConnection, Hold, IdKind, Reach,
    Timestamp,
};

/// Arguments of `upsert_session` (LIFE-1). Fields left unset keep an
/// existing session's value; a new session gets `running` and not primary.
///
/// ```
/// use clarion::{SessionState, SessionUpsert};
///
/// let upsert = SessionUpsert::new("s-1", "t-1").state(SessionState::Running).primary(true);
/// assert_eq!(upsert.id(), "s-1");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SessionUpsert<'a> {
    id: &'a str,
    task_id: &'a str,
    state: Option<SessionState>,
    is_primary: Option<bool>,
}

impl<'a> SessionUpsert<'a> {
    /// The session `id` on task `task_id`, changing nothing else.
    pub fn new(id: &'a str, task_id: &'a str) -> Self {
        SessionUpsert {
            id,
            task_id,
            state: None,
            is_primary: None,
        }
    }

    /// Sets the state (a terminal one expires the current turn's questions, LIFE-3).
    pub fn state(mut self, state: SessionState) -> Self {
        self.state = Some(state);
        self
    }

    /// Sets whether this is its task's primary session (PA-1).
    pub fn primary(mut self, is_primary: bool) -> Self {
        self.is_primary = Some(is_primary);
        self
    }

    /// The session's id.
    pub fn id(&self) -> &'a str {
        self.id
    }
}

/// Arguments of `upsert_workspace` (LIFE-1, LIFE-12). Fields left unset
/// keep an existing workspace's value; a new one starts unowned (every
/// user may see it, AUTH-3) and unnamed.
///
/// ```
/// use clarion::WorkspaceUpsert;
///
/// let upsert = WorkspaceUpsert::new("w-1").owner("alice").name("Payments");
/// assert_eq!(upsert.id(), "w-1");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceUpsert<'a> {
    id: &'a str,
    owner_id: Option<&'a str>,
    name: Option<&'a str>,
}

impl<'a> WorkspaceUpsert<'a> {
    /// The workspace `id`, changing nothing else.
    pub fn new(id: &'a str) -> Self {
        WorkspaceUpsert {
            id,
            owner_id: None,
            name: None,
        }
    }

    /// Sets its owner; `""` makes it unowned, visible to every user (AUTH-3).
    pub fn owner(mut self, owner_id: &'a str) -> Self {
        self.owner_id = Some(owner_id);
        self
    }

    /// Sets its display name, at most 200 runes; `""` keeps the stored
    /// one (LIFE-12).
    pub fn name(mut self, name: &'a str) -> Self {
        self.name = Some(name);
        self
    }

    /// The workspace's id.
    pub fn id(&self) -> &'a str {
        self.id
    }
}

/// Arguments of `upsert_task` (LIFE-1, LIFE-12). Fields left unset keep
/// an existing task's value; a new one starts in no workspace, untitled.
///
/// ```
/// use clarion::TaskUpsert;
///
/// let upsert = TaskUpsert::new("t-1").workspace("w-1").title("Add login");
/// assert_eq!(upsert.id(), "t-1");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TaskUpsert<'a> {
    id: &'a str,
    workspace_id: Option<&'a str>,
    title: Option<&'a str>,
}

impl<'a> TaskUpsert<'a> {
    /// The task `id`, changing nothing else.
    pub fn new(id: &'a str) -> Self {
        TaskUpsert {
            id,
            workspace_id: None,
            title: None,
        }
    }

    /// Moves it to this workspace, which need not exist (AUTH-3).
    pub fn workspace(mut self, workspace_id: &'a str) -> Self {
        self.workspace_id = Some(workspace_id);
        self
    }

    /// Sets its display title, at most 200 runes; `""` keeps the stored
    /// one (LIFE-12).
    pub fn title(mut self, title: &'a str) -> Self {
        self.title = Some(title);
        self
    }

    /// The task's id.
    pub fn id(&self) -> &'a str {
        self.id
    }
}

fn require_id(field: &str, value: &str) -> Result<()> {
    Ok(check_id(field, value)?)
}

/// LIFE-12: a name as given, checked; `None` when it keeps the stored one
/// (omitted or `""`).
fn given_name(field: &str, name: Option<&str>) -> Result<Option<String>> {
    let Some(name) = name.filter(|name| !name.is_empty()) else {
        return Ok(None);
    };
    check_text(field, name)?;
    check_runes(field, name, MAX_NAME_RUNES)?;
    Ok(Some(name.to_owned()))
}

impl Engine {
    /// LIFE-1. Creates the workspace, or sets its owner when `owner_id` is
    /// given. An empty owner means every user may see it (AUTH-3). A name
    /// given renames it (LIFE-12); no rule reads names.
    pub(crate) fn upsert_workspace(&self, upsert: WorkspaceUpsert<'_>) -> Result<()> {
        let WorkspaceUpsert { id, owner_id, name } = upsert;
        require_id("id", id)?;
        check_text("owner_id", owner_id.unwrap_or_default())?;
        let name = given_name("name", name)?;
        self.change(|conn, changes| {
            // A new workspace may own tasks that named it while it dangled.
            hold_workspace_for_change(conn, id)?;
            let inserted = per_backend!(conn, c => diesel::insert_into(workspaces::table)
                .values((
                    workspaces::id.eq(id),
                    workspaces::owner_id.eq(owner_id.unwrap_or("")),
                    workspaces::name.eq(name.as_deref().unwrap_or("")),
                ))
                .on_conflict_do_nothing()
                .execute(c))?;
            if let (0, Some(name)) = (inserted, &name) {
                diesel::update(workspaces::table.find(id).filter(workspaces::name.ne(name)))
                    .set(workspaces::name.eq(name))
                    .execute(conn)?;
            }
            let changed = match (inserted, owner_id) {
                (0, Some(owner_id)) => diesel::update(
                    workspaces::table
                        .find(id)
                        .filter(workspaces::owner_id.ne(owner_id)),
                )
                .set(workspaces::owner_id.eq(owner_id))
                .execute(conn)?,
                (inserted, _) => inserted,
            };
            if changed > 0 {
                let rewritten = visibility::refresh_keys_of_workspace(id).execute(conn)?;
                visibility_changed(changes, rewritten);
            }
            Ok(())
        })
    }

    /// LIFE-1. Its tasks keep their `workspace_id`, which then dangles — and
    /// a dangling workspace id is visible to every user (AUTH-3).
    pub(crate) fn delete_workspace(&self, id: &str) -> Result<()> {
        require_id("id", id)?;
        self.change(|conn, changes| {
            hold_workspace_for_change(conn, id)?;
            if diesel::delete(workspaces::table.find(id)).execute(conn)? > 0 {
                let rewritten = visibility::refresh_keys_of_workspace(id).execute(conn)?;
                visibility_changed(changes, rewritten);
            }
            Ok(())
        })
    }

    /// LIFE-1. Creates the task, or moves it when `workspace_id` is given.
    /// The workspace need not exist (AUTH-3). A title given retitles it
    /// (LIFE-12); no rule reads titles.
    pub(crate) fn upsert_task(&self, upsert: TaskUpsert<'_>) -> Result<()> {
        let TaskUpsert {
            id,
            workspace_id,
            title,
        } = upsert;
        require_id("id", id)?;
        check_text("workspace_id", workspace_id.unwrap_or_default())?;
        let title = given_name("title", title)?;
        self.change(|conn, changes| {
            lock_sessions_reached(conn, Reach::Task(id))?;
            hold(conn, Reach::Task(id), Hold::Exclusive)?;
            let current: Option<String> =
                at_most_one(tasks::table.find(id).select(tasks::workspace_id), conn)?;
            let target = workspace_id.unwrap_or("");
            if let (Some(_), Some(title)) = (&current, &title) {
                diesel::update(tasks::table.find(id).filter(tasks::title.ne(title)))
                    .set(tasks::title.eq(title))
                    .execute(conn)?;
            }
            let moves = match &current {
                None => true,
                Some(current) => workspace_id.is_some_and(|target| target != current),
            };
            if !moves {
                return Ok(());
            }
            // The keys read both workspaces: hold them against owner changes.
            let mut read = vec![target];
            read.extend(current.as_deref());
            hold_workspaces_for_reading(conn, read)?;
            if current.is_none() {
                diesel::insert_into(tasks::table)
                    .values((
                        tasks::id.eq(id),
                        tasks::workspace_id.eq(target),
                        tasks::title.eq(title.as_deref().unwrap_or("")),
                    ))
                    .execute(conn)?;
            } else {
                diesel::update(tasks::table.find(id))
                    .set(tasks::workspace_id.eq(target))
                    .execute(conn)?;
            }
            let rewritten = visibility::refresh_keys_of_task(id).execute(conn)?;
            visibility_changed(changes, rewritten);
            self.failpoint(points::TASK_MOVED_BEFORE_COMMIT)?;
            Ok(())
        })
    }

    /// LIFE-1. Deletes the task with its sessions, turns and bundles.
    pub(crate) fn delete_task(&self, id: &str) -> Result<()> {
        require_id("id", id)?;
        self.change(|conn, changes| {
            lock_sessions_reached(conn, Reach::Task(id))?;
            hold(conn, Reach::Task(id), Hold::Exclusive)?;
            let now = self.now();
            let sessions_of_task: Vec<String> = sessions::table
                .filter(sessions::task_id.eq(id))
                .select(sessions::id)
                .load(conn)?;
            for session in &sessions_of_task {
                deadline::settle_due_of_session(self, conn, changes, session, now)?;
            }
            let active: Vec<String> = active_bundles_of_task(id, now.as_micros()).load(conn)?;
            changes.append_closed(conn, &active, CloseReason::Deleted, now)?;
            diesel::delete(tasks::table.find(id)).execute(conn)?;
            // Bundles of other sessions that named it no longer resolve.
            visibility::refresh_keys_of_task(id).execute(conn)?;
            changes.push(Change::Everything);
            Ok(())
        })
    }

    /// LIFE-1, LIFE-3. Creates or updates a session. The task must exist.
    /// A terminal state expires the current turn's pending questions in the
    /// same transaction.
    pub(crate) fn upsert_session(&self, session: SessionUpsert<'_>) -> Result<()> {
        require_id("id", session.id)?;
        require_id("task_id", session.task_id)?;
        self.change(|conn, changes| {
            let task_exists: bool =
                diesel::select(diesel::dsl::exists(tasks::table.find(session.task_id)))
                    .get_result(conn)?;
            if !task_exists {
                return Err(Error::NotFound(Entity::Task));
            }
            changes.push(Change::Session {
                session_id: session.id.to_owned(),
            });
            let inserted = per_backend!(conn, c => diesel::insert_into(sessions::table)
                .values((
                    sessions::id.eq(session.id),
                    sessions::task_id.eq(session.task_id),
                    sessions::state.eq(session.state.unwrap_or(SessionState::Running).as_str()),
                    sessions::is_primary.eq(session.is_primary.unwrap_or(false)),
                ))
                .on_conflict_do_nothing()
                .execute(c))?;
            if inserted == 1 {
                return Ok(());
            }
            lock_session(conn, session.id)?;
            hold_task_for_reading(conn, session.task_id)?;
            let now = self.now();
            deadline::settle_due_of_session(self, conn, changes, session.id, now)?;
            let moved = diesel::update(
                sessions::table
                    .find(session.id)
                    .filter(sessions::task_id.ne(session.task_id)),
            )
            .set(sessions::task_id.eq(session.task_id))
            .execute(conn)?;
            if moved > 0 {
                let rewritten = visibility::refresh_keys_of_session(session.id).execute(conn)?;
                visibility_changed(changes, rewritten);
            }
            if let Some(is_primary) = session.is_primary {
                diesel::update(sessions::table.find(session.id))
                    .set(sessions::is_primary.eq(is_primary))
                    .execute(conn)?;
            }
            if let Some(state) = session.state {
                change_state(conn, changes, session.id, state, now)?;
            }
            Ok(())
        })
    }

    /// LIFE-1. Deletes the session with its turns and bundles.
    pub(crate) fn delete_session(&self, id: &str) -> Result<()> {
        require_id("id", id)?;
        self.change(|conn, changes| {
            let now = self.now();
            deadline::settle_due_of_session(self, conn, changes, id, now)?;
            let active: Vec<String> = active_bundles_of_session(id, now.as_micros()).load(conn)?;
            changes.append_closed(conn, &active, CloseReason::Deleted, now)?;
            diesel::delete(sessions::table.find(id)).execute(conn)?;
            session_changed(changes, id);
            Ok(())
        })
    }

    /// LIFE-3, LIFE-10. Sets the state (any direction). Becoming terminal
    /// expires the pending questions of the current turn's active bundles.
    pub(crate) fn set_session_state(&self, session_id: &str, state: SessionState) -> Result<()> {
        require_id("session_id", session_id)?;
        self.change(|conn, changes| {
            require_session(conn, session_id)?;
            let now = self.now();
            deadline::settle_due_of_session(self, conn, changes, session_id, now)?;
            change_state(conn, changes, session_id, state, now)?;
            session_changed(changes, session_id);
            Ok(())
        })
    }

    /// LIFE-2. Starts a new turn, which supersedes every bundle of older
    /// turns. Returns the new turn's id.
    pub(crate) fn begin_turn(&self, session_id: &str) -> Result<String> {
        require_id("session_id", session_id)?;
        self.change(|conn, changes| {
            require_session(conn, session_id)?;
            // Every active bundle is of the current turn, which this ends.
            let now = self.now();
            deadline::settle_due_of_session(self, conn, changes, session_id, now)?;
            let active: Vec<String> =
                active_bundles_of_session(session_id, now.as_micros()).load(conn)?;
            changes.append_closed(conn, &active, CloseReason::Superseded, now)?;
            let turn_id = start_turn(self, conn, session_id)?;
            session_changed(changes, session_id);
            Ok(turn_id)
        })
    }

    /// LIFE-5. Marks every bundle of the current turn that is active or holds
    /// an undelivered resolution as detached. Detached bundles stay
    /// answerable; their resolutions go to the outbox.
    pub(crate) fn detach_session(&self, session_id: &str) -> Result<()> {
        require_id("session_id", session_id)?;
        self.change(|conn, changes| {
            require_session(conn, session_id)?;
            let now = self.now();
            deadline::settle_due_of_session(self, conn, changes, session_id, now)?;
            detach_statement(session_id, now.as_micros()).execute(conn)?;
            changes.push(Change::SessionDetached {
                session_id: session_id.to_owned(),
            });
            Ok(())
        })
    }

    /// LIFE-7. True iff the session has an active bundle (ACT-1).
    pub(crate) fn has_pending_clarification(&self, session_id: &str) -> Result<bool> {
        require_id("session_id", session_id)?;
        self.read(|conn| {
            let session_exists: bool =
                diesel::select(diesel::dsl::exists(sessions::table.find(session_id)))
                    .get_result(conn)?;
            if !session_exists {
                return Err(Error::NotFound(Entity::Session));
            }
            let now = self.now().as_micros();
            Ok(diesel::select(has_active_bundle_query(session_id, now)).get_result(conn)?)
        })
    }
}

/// OPS-3a, CLAIM-4: before a workspace's owner (or existence) changes, the
/// sessions it reaches and the workspace itself are held.
fn hold_workspace_for_change(conn: &mut AnyConnection, workspace_id: &str) -> Result<()> {
    lock_sessions_reached(conn, Reach::Workspace(workspace_id))?;
    hold(conn, Reach::Workspace(workspace_id), Hold::Exclusive)?;
    Ok(())
}

/// OPS-3a: the workspaces a key computation reads, held shared in id order.
fn hold_workspaces_for_reading(conn: &mut AnyConnection, mut ids: Vec<&str>) -> Result<()> {
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        hold(conn, Reach::Workspace(id), Hold::Shared)?;
    }
    Ok(())
}

/// OPS-3a: a session moving to `task_id` computes its bundles' keys from the
/// task and its workspace; hold both shared, the task first.
fn hold_task_for_reading(conn: &mut AnyConnection, task_id: &str) -> Result<()> {
    hold(conn, Reach::Task(task_id), Hold::Shared)?;
    let workspace: Option<String> =
        at_most_one(tasks::table.find(task_id).select(tasks::workspace_id), conn)?;
    hold_workspaces_for_reading(conn, workspace.as_deref().into_iter().collect())
}

/// Who may see which bundle changed (`rewritten` bundles got new keys):
/// waiters reading through a principal's scope must read again (WAIT-3).
fn visibility_changed(changes: &mut Changes, rewritten: usize) {
    if rewritten > 0 {
        changes.push(Change::Everything);
    }
}

fn session_changed(changes: &mut Changes, session_id: &str) {
    changes.push(Change::Session {
        session_id: session_id.to_owned(),
    });
}

/// Locks the session (PostgreSQL) and fails with "session not found" if it
/// does not exist. Returns its state.
pub(crate) fn require_session(conn: &mut AnyConnection, session_id: &str) -> Result<String> {
    lock_session(conn, session_id)?.ok_or(Error::NotFound(Entity::Session))
}

/// Writes a new state; entering a terminal state first expires what was
/// active (evaluated before the change, so ACT-1 is used unchanged).
fn change_state(
    conn: &mut AnyConnection,
    changes: &mut Changes,
    session_id: &str,
    state: SessionState,
    now: Timestamp,
) -> Result<()> {
    if state.is_terminal() {
        let active: Vec<String> =
            active_bundles_of_session(session_id, now.as_micros()).load(conn)?;
        changes.append_closed(conn, &active, CloseReason::Expired, now)?;
        expire_rows_statement(&active, now.as_micros()).execute(conn)?;
    }
    diesel::update(sessions::table.find(session_id))
        .set(sessions::state.eq(state.as_str()))
        .execute(conn)?;
    if state.is_terminal() {
        clear_hint_statement(session_id).execute(conn)?;
    }
    Ok(())
}

/// Inserts a turn that is the session's newest (ACT-2): its `started_at` is
/// never earlier than an existing turn's, so a clock behind another process's
/// cannot make the new turn older than the current one.
pub(crate) fn start_turn(
    engine: &Engine,
    conn: &mut AnyConnection,
    session_id: &str,
) -> Result<String> {
    let newest: Option<i64> = at_most_one(
        turns::table
            .filter(turns::session_id.eq(session_id))
            .select(diesel::dsl::max(turns::started_at)),
        conn,
    )?
    .flatten();
    let now: Timestamp = engine.now();
    let started_at = newest.map_or(now.as_micros(), |newest| newest.max(now.as_micros()));
    let turn_id = engine.new_id(IdKind::Turn);
    diesel::insert_into(turns::table)
        .values((
            turns::id.eq(&turn_id),
            turns::session_id.eq(session_id),
            turns::started_at.eq(started_at),
        ))
        .execute(conn)?;
    clear_hint_statement(session_id).execute(conn)?;
    Ok(turn_id)
}

/// LIFE-7: does the session have an active bundle at `now`?
#[diesel::dsl::auto_type]
pub fn has_active_bundle_query<'a>(session_id: &'a str, now: i64) -> _ {
    let active: activeness::is_active = activeness::is_active(now);
    diesel::dsl::exists(
        bundles::table
            .filter(bundles::session_id.eq(session_id))
            .filter(active),
    )
}

/// LIFE-3/4: the session's active bundles, whose pending rows expiry turns
/// into `expired`.
#[diesel::dsl::auto_type]
pub fn active_bundles_of_session<'a>(session_id: &'a str, now: i64) -> _ {
    let active: activeness::active_bundle_ids = activeness::active_bundle_ids(now);
    active.filter(bundles::session_id.eq(session_id))
}

/// EVT-1: the active bundles a task's deletion deletes (those of its
/// sessions).
#[diesel::dsl::auto_type]
pub fn active_bundles_of_task<'a>(task_id: &'a str, now: i64) -> _ {
    let sessions_of_task = sessions::table
        .filter(sessions::task_id.eq(task_id))
        .select(sessions::id);
    let active: activeness::active_bundle_ids = activeness::active_bundle_ids(now);
    active.filter(bundles::session_id.eq_any(sessions_of_task))
}

/// LIFE-3/4: the pending rows of the given bundles become `expired`, and
/// record when (REL-8: prune's clock for expired bundles).
#[diesel::dsl::auto_type]
pub fn expire_rows_statement<'a>(pending_ids: &'a [String], now: i64) -> _ {
    let expired: &'static str = QuestionStatus::EXPIRED_WORD;
    let at: Option<i64> = Some(now);
    diesel::dsl::update(
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq_any(pending_ids))
            .filter(question_is_pending()),
    )
    .set((
        bundle_questions::status.eq(expired),
        bundle_questions::expired_at.eq(at),
    ))
}

/// Clears the `may_be_active` index hint of the session's bundles that can
/// never be active again (ACT-4).
#[diesel::dsl::auto_type]
pub fn clear_hint_statement<'a>(session_id: &'a str) -> _ {
    let cleared: bool = false;
    update(
        bundles::table
            .filter(bundles::session_id.eq(session_id))
            .filter(bundles::may_be_active)
            .filter(activeness::permanently_inactive()),
    )
    .set(bundles::may_be_active.eq(cleared))
}
