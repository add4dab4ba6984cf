//! The host mirror (LIFE-1..5, LIFE-10): workspaces, tasks, sessions and
//! turns as the host tells clarion about them. Host operations: `system`
//! only (AUTH-2).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::domain::engine::Engine;
use crate::domain::lifecycle::{SessionUpsert, TaskUpsert, WorkspaceUpsert};
use crate::doors::args::{given, optional_word, required_word, word, Id};
use crate::doors::envelope::bodies::{OkBody, TurnBody};
use crate::doors::operations::declare::{Declared, Refusal};
use crate::error::{Result, ValidationError};
use crate::rules::capability::{Access, Admitted, HOST};
use crate::rules::limits::MAX_NAME_RUNES;
use crate::rules::vocabulary::SessionState;

/// `upsert_workspace`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkspaceArgs {
    /// The workspace.
    id: Id,
    /// Its owner; `""` or omitted keeps the stored one (a new workspace
    /// starts unowned: every user may see it, AUTH-3).
    owner_id: Option<String>,
    /// Its name for people, at most 200 characters; `""` or omitted keeps
    /// the stored one (LIFE-12).
    #[schemars(length(max = MAX_NAME_RUNES))]
    name: Option<String>,
}

/// `upsert_workspace` (LIFE-1).
pub(crate) struct UpsertWorkspace;

impl Declared for UpsertWorkspace {
    const NAME: &'static str = "upsert_workspace";
    // LIFE-1, LIFE-12.
    const SUMMARY: &'static str = "Creates a workspace, or sets its owner and name where given.";
    const ACCESS: Access = HOST;
    type Args = WorkspaceArgs;
    type Reply = ();
    type Body<'a> = OkBody;

    fn perform(engine: &Engine, _: &Admitted<'_>, args: WorkspaceArgs) -> Result<()> {
        let (owner_id, name) = (given(args.owner_id), given(args.name));
        let mut upsert = WorkspaceUpsert::new(&args.id);
        if let Some(owner_id) = &owner_id {
            upsert = upsert.owner(owner_id);
        }
        if let Some(name) = &name {
            upsert = upsert.name(name);
        }
        engine.upsert_workspace(upsert)
    }
}

/// The entity an operation is about, by `id`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct IdArgs {
    /// Its id.
    id: Id,
}

/// `delete_workspace` (LIFE-1).
pub(crate) struct DeleteWorkspace;

impl Declared for DeleteWorkspace {
    const NAME: &'static str = "delete_workspace";
    // AUTH-3.
    const SUMMARY: &'static str =
        "Deletes a workspace; its tasks' workspace ids then dangle (visible to every user).";
    const ACCESS: Access = HOST;
    type Args = IdArgs;
    type Reply = ();
    type Body<'a> = OkBody;

    fn perform(engine: &Engine, _: &Admitted<'_>, args: IdArgs) -> Result<()> {
        engine.delete_workspace(&args.id)
    }
}

/// `upsert_task`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskArgs {
    /// The task.
    id: Id,
    /// Its workspace (which need not exist); `""` or omitted keeps the
    /// stored one (a new task starts in none).
    workspace_id: Option<String>,
    /// Its title for people, at most 200 characters; `""` or omitted keeps
    /// the stored one (LIFE-12).
    #[schemars(length(max = MAX_NAME_RUNES))]
    title: Option<String>,
}

/// `upsert_task` (LIFE-1).
pub(crate) struct UpsertTask;

impl Declared for UpsertTask {
    const NAME: &'static str = "upsert_task";
    // LIFE-1, LIFE-12.
    const SUMMARY: &'static str = "Creates a task, or moves and retitles it where given.";
    const ACCESS: Access = HOST;
    type Args = TaskArgs;
    type Reply = ();
    type Body<'a> = OkBody;

    fn perform(engine: &Engine, _: &Admitted<'_>, args: TaskArgs) -> Result<()> {
        let (workspace_id, title) = (given(args.workspace_id), given(args.title));
        let mut upsert = TaskUpsert::new(&args.id);
        if let Some(workspace_id) = &workspace_id {
            upsert = upsert.workspace(workspace_id);
        }
        if let Some(title) = &title {
            upsert = upsert.title(title);
        }
        engine.upsert_task(upsert)
    }
}

/// `delete_task` (LIFE-1).
pub(crate) struct DeleteTask;

impl Declared for DeleteTask {
    const NAME: &'static str = "delete_task";
    // LIFE-1.
    const SUMMARY: &'static str =
        "Deletes a task with its sessions, turns and bundles; their outbox entries go too.";
    const ACCESS: Access = HOST;
    type Args = IdArgs;
    type Reply = ();
    type Body<'a> = OkBody;

    fn perform(engine: &Engine, _: &Admitted<'_>, args: IdArgs) -> Result<()> {
        engine.delete_task(&args.id)
    }
}

/// `upsert_session`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionArgs {
    /// The session.
    id: Id,
    /// Its task, which must exist.
    task_id: Id,
    /// Its state (default `running` for a new session; a terminal one
    /// expires its current turn's questions, LIFE-3).
    #[serde(default)]
    #[schemars(schema_with = "optional_word::<SessionState>")]
    state: Option<String>,
    /// Whether it is its task's primary session (default `false`).
    is_primary: Option<bool>,
}

/// `upsert_session` (LIFE-1, LIFE-3).
pub(crate) struct UpsertSession;

impl Declared for UpsertSession {
    const NAME: &'static str = "upsert_session";
    // LIFE-1, LIFE-3.
    const SUMMARY: &'static str = "Creates or updates a session; a terminal state expires the \
        current turn's pending questions.";
    const ACCESS: Access = HOST;
    type Args = SessionArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: SessionArgs) -> Result<()> {
        let mut upsert = SessionUpsert::new(&args.id, &args.task_id);
        if let Some(state) = word("state", args.state, SessionState::parse)? {
            upsert = upsert.state(state);
        }
        if let Some(is_primary) = args.is_primary {
            upsert = upsert.primary(is_primary);
        }
        engine.upsert_session(upsert)
    }
}

/// `delete_session` (LIFE-1).
pub(crate) struct DeleteSession;

impl Declared for DeleteSession {
    const NAME: &'static str = "delete_session";
    // LIFE-1.
    const SUMMARY: &'static str = "Deletes a session with its turns and bundles.";
    const ACCESS: Access = HOST;
    type Args = IdArgs;
    type Reply = ();
    type Body<'a> = OkBody;

    fn perform(engine: &Engine, _: &Admitted<'_>, args: IdArgs) -> Result<()> {
        engine.delete_session(&args.id)
    }
}

/// The session an operation is about.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionIdArgs {
    /// The session.
    pub(crate) session_id: Id,
}

/// `begin_turn` (LIFE-2).
pub(crate) struct BeginTurn;

impl Declared for BeginTurn {
    const NAME: &'static str = "begin_turn";
    // LIFE-2.
    const SUMMARY: &'static str =
        "Starts a new turn of the session, superseding every bundle of older turns.";
    const ACCESS: Access = HOST;
    type Args = SessionIdArgs;
    type Reply = String;
    type Body<'a> = TurnBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: SessionIdArgs) -> Result<String> {
        engine.begin_turn(&args.session_id)
    }
}

/// `set_session_state`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateArgs {
    /// The session.
    session_id: Id,
    /// Its new state, in any direction (the host is the source of truth).
    #[schemars(required, schema_with = "required_word::<SessionState>")]
    state: Option<String>,
}

/// `set_session_state` (LIFE-3).
pub(crate) struct SetSessionState;

impl Declared for SetSessionState {
    const NAME: &'static str = "set_session_state";
    // LIFE-3, LIFE-10.
    const SUMMARY: &'static str = "Sets a session's state; a terminal one expires the current \
        turn's pending questions.";
    const ACCESS: Access = HOST;
    type Args = StateArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: StateArgs) -> Result<()> {
        let state = word("state", args.state, SessionState::parse)?
            .ok_or_else(|| ValidationError::new("state", "required"))?;
        engine.set_session_state(&args.session_id, state)
    }
}

/// `detach_session` (LIFE-5).
pub(crate) struct DetachSession;

impl Declared for DetachSession {
    const NAME: &'static str = "detach_session";
    // LIFE-5.
    const SUMMARY: &'static str = "Marks the session's current-turn bundles detached: their \
        resolutions go to the outbox.";
    const ACCESS: Access = HOST;
    type Args = SessionIdArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: SessionIdArgs) -> Result<()> {
        engine.detach_session(&args.session_id)
    }
}
