//! What `clarion mcp --ask-in` and `clarion ask` mirror before asking
//! (MCPA-1, OPS-1b): the same flags, the same rules between them, the same
//! calls, written once.

use clarion::{Clarion, Error, SessionUpsert, TaskUpsert, WorkspaceUpsert};

/// `--task T [--task-title TITLE] [--workspace W [--workspace-name NAME]
/// [--owner U] [--members U,U]]`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MirrorArgs {
    /// Mirror this task first, and the session on it (created if new).
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,
    /// With --task: the task's workspace, mirrored first.
    #[arg(long, value_name = "WORKSPACE", requires = "task")]
    pub workspace: Option<String>,
    /// With --workspace: the workspace's owner, who then sees its questions.
    #[arg(long, value_name = "USER", requires = "workspace")]
    pub owner: Option<String>,
    /// With --task: the task's title, which the inbox shows instead of its id.
    #[arg(long, value_name = "TITLE", requires = "task")]
    pub task_title: Option<String>,
    /// With --workspace: the workspace's name, which the inbox shows instead of its id.
    #[arg(long, value_name = "NAME", requires = "workspace")]
    pub workspace_name: Option<String>,
    /// With --workspace: its whole member set, replacing the one it had ("" for none).
    #[arg(
        long,
        value_name = "USER,USER",
        requires = "workspace",
        value_delimiter = ','
    )]
    pub members: Option<Vec<String>>,
}

impl MirrorArgs {
    /// MCPA-1: with `--task`, mirrors what was given (the workspace with
    /// its owner, name and members, the task with its title, the session naming
    /// only its task; LIFE-12: a name or title not given is kept as it
    /// is); without it the session must exist. Never begins a turn or
    /// changes a state.
    pub fn mirror(&self, clarion: &Clarion, session_id: &str) -> Result<(), Error> {
        let Some(task) = &self.task else {
            return clarion.has_pending_clarification(session_id).map(drop);
        };
        if let Some(workspace) = &self.workspace {
            let mut upsert = WorkspaceUpsert::new(workspace);
            if let Some(owner) = &self.owner {
                upsert = upsert.owner(owner);
            }
            if let Some(name) = &self.workspace_name {
                upsert = upsert.name(name);
            }
            clarion.upsert_workspace(upsert)?;
            if let Some(members) = &self.members {
                // PPL-2: the whole set, as `members set` replaces it.
                let members: Vec<String> = members
                    .iter()
                    .map(|member| member.trim().to_owned())
                    .filter(|member| !member.is_empty())
                    .collect();
                clarion.set_members(workspace, &members)?;
            }
        }
        let mut upsert = TaskUpsert::new(task);
        if let Some(workspace) = &self.workspace {
            upsert = upsert.workspace(workspace);
        }
        if let Some(title) = &self.task_title {
            upsert = upsert.title(title);
        }
        clarion.upsert_task(upsert)?;
        clarion.upsert_session(SessionUpsert::new(session_id, task))
    }
}
