//! The host mirror (LIFE-1..5, LIFE-7, LIFE-10): workspaces, tasks,
//! sessions and turns, which the host keeps current and clarion reads.

use diesel::dsl::update;
use diesel::prelude::*;

use crate::activeness::{self, question_is_pending};
use crate::clock::IdKind;
use crate::db::{self, AnyConnection};
use crate::error::{Entity, Error, Result};
use crate::schema::{bundle_questions, bundles, sessions, tasks, turns, workspaces};
use crate::Clarion;

/// The state of an agent session. The host owns it; clarion only reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionState {
    Created,
    Starting,
    Running,
    WaitingForInput,
    Idle,
    Completed,
    Failed,
    Cancelled,
}

impl SessionState {
    pub const ALL: [SessionState; 8] = [
        SessionState::Created,
        SessionState::Starting,
        SessionState::Running,
        SessionState::WaitingForInput,
        SessionState::Idle,
        SessionState::Completed,
        SessionState::Failed,
        SessionState::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Created => "created",
            SessionState::Starting => "starting",
            SessionState::Running => "running",
            SessionState::WaitingForInput => "waiting_for_input",
            SessionState::Idle => "idle",
            SessionState::Completed => "completed",
            SessionState::Failed => "failed",
            SessionState::Cancelled => "cancelled",
        }
    }

    /// Parses a state name; the error names `field`.
    pub fn parse(field: &str, text: &str) -> Result<SessionState> {
        SessionState::ALL
            .into_iter()
            .find(|state| state.as_str() == text)
            .ok_or_else(|| {
                Error::validation(
                    field,
                    format!(
                        "unknown session state {text:?} (expected one of {})",
                        SessionState::ALL.map(SessionState::as_str).join(", ")
                    ),
                )
            })
    }

    /// `completed`, `failed` and `cancelled` end a session.
    pub fn is_terminal(self) -> bool {
        activeness::TERMINAL_SESSION_STATES.contains(&self.as_str())
    }
}

/// Arguments of [`Clarion::upsert_session`]. `None` leaves an existing
/// session's field as it is; a new session gets `running` and `false`.
#[derive(Debug, Clone, Copy)]
pub struct SessionUpsert<'a> {
    pub id: &'a str,
    pub task_id: &'a str,
    pub state: Option<SessionState>,
    pub is_primary: Option<bool>,
}

pub(crate) fn require_id(field: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::validation(field, "must not be empty"));
    }
    Ok(())
}

impl Clarion {
    /// LIFE-1. Creates the workspace, or sets its owner when `owner_id` is
    /// given. An empty owner means every user may see it (AUTH-3).
    pub fn upsert_workspace(&self, id: &str, owner_id: Option<&str>) -> Result<()> {
        require_id("id", id)?;
        self.write(|conn| {
            let inserted = per_backend!(conn, c => diesel::insert_into(workspaces::table)
                .values((workspaces::id.eq(id), workspaces::owner_id.eq(owner_id.unwrap_or(""))))
                .on_conflict_do_nothing()
                .execute(c))?;
            if let (0, Some(owner_id)) = (inserted, owner_id) {
                diesel::update(workspaces::table.find(id))
                    .set(workspaces::owner_id.eq(owner_id))
                    .execute(conn)?;
            }
            Ok(())
        })
    }

    /// LIFE-1. Its tasks keep their `workspace_id`, which then dangles — and
    /// a dangling workspace id is visible to every user (AUTH-3).
    pub fn delete_workspace(&self, id: &str) -> Result<()> {
        require_id("id", id)?;
        self.write(|conn| {
            diesel::delete(workspaces::table.find(id)).execute(conn)?;
            Ok(())
        })
    }

    /// LIFE-1. Creates the task, or moves it when `workspace_id` is given.
    /// The workspace need not exist (AUTH-3).
    pub fn upsert_task(&self, id: &str, workspace_id: Option<&str>) -> Result<()> {
        require_id("id", id)?;
        self.write(|conn| {
            let inserted = per_backend!(conn, c => diesel::insert_into(tasks::table)
                .values((tasks::id.eq(id), tasks::workspace_id.eq(workspace_id.unwrap_or(""))))
                .on_conflict_do_nothing()
                .execute(c))?;
            if let (0, Some(workspace_id)) = (inserted, workspace_id) {
                diesel::update(tasks::table.find(id))
                    .set(tasks::workspace_id.eq(workspace_id))
                    .execute(conn)?;
            }
            Ok(())
        })
    }

    /// LIFE-1. Deletes the task with its sessions, turns and bundles.
    pub fn delete_task(&self, id: &str) -> Result<()> {
        require_id("id", id)?;
        self.write(|conn| {
            diesel::delete(tasks::table.find(id)).execute(conn)?;
            Ok(())
        })?;
        self.inner.waiters.notify_all();
        Ok(())
    }

    /// LIFE-1, LIFE-3. Creates or updates a session. The task must exist.
    /// A terminal state expires the current turn's pending questions in the
    /// same transaction.
    pub fn upsert_session(&self, session: SessionUpsert<'_>) -> Result<()> {
        require_id("id", session.id)?;
        require_id("task_id", session.task_id)?;
        self.write(|conn| {
            let task_exists: bool =
                diesel::select(diesel::dsl::exists(tasks::table.find(session.task_id)))
                    .get_result(conn)?;
            if !task_exists {
                return Err(Error::NotFound(Entity::Task));
            }
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
            db::lock_session(conn, session.id)?;
            diesel::update(sessions::table.find(session.id))
                .set(sessions::task_id.eq(session.task_id))
                .execute(conn)?;
            if let Some(is_primary) = session.is_primary {
                diesel::update(sessions::table.find(session.id))
                    .set(sessions::is_primary.eq(is_primary))
                    .execute(conn)?;
            }
            if let Some(state) = session.state {
                change_state(conn, session.id, state)?;
            }
            Ok(())
        })?;
        self.inner.waiters.notify_session(session.id);
        Ok(())
    }

    /// LIFE-1. Deletes the session with its turns and bundles.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        require_id("id", id)?;
        self.write(|conn| {
            diesel::delete(sessions::table.find(id)).execute(conn)?;
            Ok(())
        })?;
        self.inner.waiters.notify_session(id);
        Ok(())
    }

    /// LIFE-3, LIFE-10. Sets the state (any direction). Becoming terminal
    /// expires the pending questions of the current turn's active bundles.
    pub fn set_session_state(&self, session_id: &str, state: SessionState) -> Result<()> {
        require_id("session_id", session_id)?;
        self.write(|conn| {
            require_session(conn, session_id)?;
            change_state(conn, session_id, state)
        })?;
        self.inner.waiters.notify_session(session_id);
        Ok(())
    }

    /// LIFE-2. Starts a new turn, which supersedes every bundle of older
    /// turns. Returns the new turn's id.
    pub fn begin_turn(&self, session_id: &str) -> Result<String> {
        require_id("session_id", session_id)?;
        let turn_id = self.write(|conn| {
            require_session(conn, session_id)?;
            start_turn(self, conn, session_id)
        })?;
        self.inner.waiters.notify_session(session_id);
        Ok(turn_id)
    }

    /// LIFE-5. Marks every bundle of the current turn that is active or holds
    /// an undelivered resolution as detached. Detached bundles stay
    /// answerable; their resolutions go to the outbox.
    pub fn detach_session(&self, session_id: &str) -> Result<()> {
        require_id("session_id", session_id)?;
        self.write(|conn| {
            require_session(conn, session_id)?;
            detach_statement(session_id).execute(conn)?;
            Ok(())
        })?;
        self.inner.waiters.notify_session(session_id);
        // Resolutions that were waiting for this agent are now outbox
        // entries; offer them to the dispatcher at once.
        if self.inner.dispatcher.is_some() {
            let entries: Vec<String> = self.read_one(|conn| {
                Ok(bundles::table
                    .filter(bundles::session_id.eq(session_id))
                    .filter(crate::delivery::in_outbox())
                    .select(bundles::pending_id)
                    .load(conn)?)
            })?;
            for pending_id in entries {
                // The detach is committed; a failed dispatch leaves the
                // entry in the outbox for a later retry.
                if let Err(error) = self.dispatch_one(&pending_id) {
                    tracing::warn!(%pending_id, %error, "dispatch after detach failed");
                }
            }
        }
        Ok(())
    }

    /// LIFE-7. True iff the session has an active bundle (ACT-1).
    pub fn has_pending_clarification(&self, session_id: &str) -> Result<bool> {
        require_id("session_id", session_id)?;
        self.read(|conn| {
            let session_exists: bool =
                diesel::select(diesel::dsl::exists(sessions::table.find(session_id)))
                    .get_result(conn)?;
            if !session_exists {
                return Err(Error::NotFound(Entity::Session));
            }
            Ok(diesel::select(has_active_bundle_query(session_id)).get_result(conn)?)
        })
    }
}

/// Locks the session (PostgreSQL) and fails with "session not found" if it
/// does not exist. Returns its state.
pub(crate) fn require_session(conn: &mut AnyConnection, session_id: &str) -> Result<String> {
    db::lock_session(conn, session_id)?.ok_or(Error::NotFound(Entity::Session))
}

/// Writes a new state; entering a terminal state first expires what was
/// active (evaluated before the change, so ACT-1 is used unchanged).
fn change_state(conn: &mut AnyConnection, session_id: &str, state: SessionState) -> Result<()> {
    if state.is_terminal() {
        let active: Vec<String> = active_bundles_of_session(session_id).load(conn)?;
        expire_rows_statement(&active).execute(conn)?;
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
    clarion: &Clarion,
    conn: &mut AnyConnection,
    session_id: &str,
) -> Result<String> {
    let newest: Option<i64> = db::at_most_one(
        turns::table
            .filter(turns::session_id.eq(session_id))
            .select(diesel::dsl::max(turns::started_at)),
        conn,
    )?
    .flatten();
    let started_at = newest.map_or(clarion.now().as_micros(), |newest| {
        newest.max(clarion.now().as_micros())
    });
    let turn_id = clarion.new_id(IdKind::Turn);
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

/// The current turn of a session, if it has any.
pub(crate) fn current_turn(conn: &mut AnyConnection, session_id: &str) -> Result<Option<String>> {
    Ok(activeness::current_turn_of(session_id)
        .first::<String>(conn)
        .optional()?)
}

/// LIFE-7: does the session have an active bundle?
#[diesel::dsl::auto_type]
pub fn has_active_bundle_query<'a>(session_id: &'a str) -> _ {
    diesel::dsl::exists(
        bundles::table
            .filter(bundles::session_id.eq(session_id))
            .filter(activeness::is_active()),
    )
}

/// LIFE-3/4: the session's active bundles, whose pending rows expiry turns
/// into `expired`.
#[diesel::dsl::auto_type]
pub fn active_bundles_of_session<'a>(session_id: &'a str) -> _ {
    activeness::active_bundle_ids().filter(bundles::session_id.eq(session_id))
}

/// LIFE-3/4: the pending rows of the given bundles become `expired`.
#[diesel::dsl::auto_type]
pub fn expire_rows_statement<'a>(pending_ids: &'a [String]) -> _ {
    let expired: &'static str = "expired";
    diesel::dsl::update(
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq_any(pending_ids))
            .filter(question_is_pending()),
    )
    .set(bundle_questions::status.eq(expired))
}

/// LIFE-5: which bundles detaching marks — in their session's current turn,
/// active or holding an undelivered resolution, and not yet detached.
#[diesel::dsl::auto_type]
pub fn detachable() -> _ {
    let attached: bool = false;
    activeness::in_current_turn()
        .and(activeness::is_active().or(bundles::response_delivery_pending))
        .and(bundles::agent_disconnected.eq(attached))
}

/// LIFE-5: detach a session's detachable bundles.
#[diesel::dsl::auto_type]
pub fn detach_statement<'a>(session_id: &'a str) -> _ {
    let detached: bool = true;
    update(
        bundles::table
            .filter(bundles::session_id.eq(session_id))
            .filter(detachable()),
    )
    .set(bundles::agent_disconnected.eq(detached))
}

/// LIFE-5 for one bundle whose last waiter timed out.
#[diesel::dsl::auto_type]
pub fn detach_bundle_statement<'a>(pending_id: &'a str) -> _ {
    let detached: bool = true;
    update(
        bundles::table
            .filter(bundles::pending_id.eq(pending_id))
            .filter(detachable()),
    )
    .set(bundles::agent_disconnected.eq(detached))
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
