//! The host mirror (LIFE-1..10): what the host tells clarion of its
//! workspaces, tasks, sessions and turns. Host operations: no principal.

use crate::domain::lifecycle::{SessionUpsert, TaskUpsert, WorkspaceUpsert};

use crate::error::Result;

use crate::rules::vocabulary::SessionState;

use crate::handle::clarion::Clarion;

impl Clarion {
    /// LIFE-1, LIFE-12: creates the workspace, or changes the owner and
    /// name it is given. An empty owner means every user may see it
    /// (AUTH-3); an omitted or empty name keeps the stored one.
    pub fn upsert_workspace(&self, workspace: WorkspaceUpsert<'_>) -> Result<()> {
        self.engine.upsert_workspace(workspace)
    }

    /// LIFE-1: deletes the workspace; its tasks' workspace ids then dangle,
    /// and a dangling workspace is visible to every user (AUTH-3).
    pub fn delete_workspace(&self, id: &str) -> Result<()> {
        self.engine.delete_workspace(id)
    }

    /// LIFE-1, LIFE-12: creates the task, or moves it to the workspace and
    /// retitles it as given (an omitted or empty title keeps the stored one).
    pub fn upsert_task(&self, task: TaskUpsert<'_>) -> Result<()> {
        self.engine.upsert_task(task)
    }

    /// LIFE-1: deletes the task with its sessions, turns and bundles.
    pub fn delete_task(&self, id: &str) -> Result<()> {
        self.engine.delete_task(id)
    }

    /// LIFE-1, LIFE-3: creates or updates a session; a terminal state
    /// expires the current turn's pending questions.
    pub fn upsert_session(&self, session: SessionUpsert<'_>) -> Result<()> {
        self.engine.upsert_session(session)
    }

    /// LIFE-1: deletes the session with its turns and bundles.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        self.engine.delete_session(id)
    }

    /// LIFE-3, LIFE-10: sets a session's state, in any direction.
    pub fn set_session_state(&self, session_id: &str, state: SessionState) -> Result<()> {
        self.engine.set_session_state(session_id, state)
    }

    /// LIFE-2: starts a new turn, superseding every bundle of older turns.
    /// Returns the new turn's id.
    pub fn begin_turn(&self, session_id: &str) -> Result<String> {
        self.engine.begin_turn(session_id)
    }

    /// LIFE-5: detaches the session's current-turn bundles; their
    /// resolutions go to the outbox.
    pub fn detach_session(&self, session_id: &str) -> Result<()> {
        self.engine.detach_session(session_id)
    }

    /// LIFE-7: true iff the session has an active bundle (ACT-1).
    pub fn has_pending_clarification(&self, session_id: &str) -> Result<bool> {
        self.engine.has_pending_clarification(session_id)
    }
}
