//! MCPA-6: the asking server's MCP tasks. A waiting call from a client
//! that declared the extension answers at once with a task (`taskId` the
//! `pending_id`); a follower per working task waits on the bundle and
//! sends `notifications/tasks` once it settles; `tasks/get` reads the
//! bundle from the database, so a task outlives the server that made it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use clarion::drive::Driver;
use clarion::mcp::TaskState;
use clarion::{Clarion, Error, Principal};
use rmcp::model::{
    CallToolResponse, CreateTaskResult, DetailedTask, GetTaskResult, Notification,
    ServerNotification, Task, TaskPayload, TaskStatus, TaskStatusNotificationParams,
};
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};

use super::asking::PROGRESS_EVERY;
use super::{internal, Blocking};

/// How often a client should poll `tasks/get`.
const TASK_POLL_MS: u64 = 1_000;

/// The tasks one asking server drives, and those the client cancelled
/// (remembered while it runs).
#[derive(Clone)]
pub(super) struct Tasks {
    clarion: Clarion,
    session_id: String,
    slots: Arc<Mutex<HashMap<String, TaskSlot>>>,
}

/// One task this server knows of.
#[derive(Default)]
struct TaskSlot {
    /// `tasks/cancel` came: the task reads `cancelled`, its bundle stays
    /// pending.
    cancelled: bool,
    /// The wait that sends `notifications/tasks` when the bundle settles.
    follower: Option<tokio::task::JoinHandle<()>>,
}

impl Tasks {
    pub(super) fn new(clarion: Clarion, session_id: String) -> Tasks {
        Tasks {
            clarion,
            session_id,
            slots: Arc::default(),
        }
    }

    /// The call's task, at once: `working` while the bundle is pending
    /// (followed until it settles), else `completed` with the call's
    /// result.
    pub(super) async fn create(
        &self,
        pending_id: String,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let state = self.state(&pending_id).await?;
        self.slots()
            .entry(pending_id.clone())
            .or_default()
            .cancelled = false;
        if matches!(state, TaskState::Working { .. }) {
            self.follow(&pending_id, peer);
        }
        let task = detailed(&pending_id, &state, false).task;
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// `tasks/get`: a working task no follower follows (after a restart)
    /// gets one.
    pub(super) async fn get(
        &self,
        id: String,
        peer: Peer<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let state = self.state(&id).await?;
        let cancelled = self.is_cancelled(&id);
        if matches!(state, TaskState::Working { .. }) && !cancelled {
            self.follow(&id, peer);
        }
        Ok(GetTaskResult::new(detailed(&id, &state, cancelled)))
    }

    /// `tasks/cancel`: the task reads `cancelled` from now on; the bundle
    /// stays pending and answerable (`cancel_question` withdraws it). A
    /// settled task stays `completed`.
    pub(super) async fn cancel(&self, id: String) -> Result<(), ErrorData> {
        if let TaskState::Settled { .. } = self.state(&id).await? {
            return Ok(());
        }
        let mut slots = self.slots();
        let slot = slots.entry(id).or_default();
        slot.cancelled = true;
        if let Some(follower) = slot.follower.take() {
            follower.abort();
        }
        Ok(())
    }

    /// The task's bundle, checked on the blocking pool; an id that is no
    /// bundle of this session is JSON-RPC's invalid params (-32602).
    async fn state(&self, pending_id: &str) -> Result<TaskState, ErrorData> {
        let (clarion, session_id, id) = (
            self.clarion.clone(),
            self.session_id.clone(),
            pending_id.to_owned(),
        );
        let state = tokio::task::spawn_blocking(move || clarion.ask_task(&session_id, &id))
            .await
            .map_err(internal)?;
        state.map_err(|error| match error {
            Error::NotFound(_) | Error::Validation(_) => {
                ErrorData::invalid_params(format!("no task {pending_id:?} of this session"), None)
            }
            error => internal(error),
        })
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<String, TaskSlot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_cancelled(&self, pending_id: &str) -> bool {
        self.slots()
            .get(pending_id)
            .is_some_and(|slot| slot.cancelled)
    }

    /// Starts the task's follower unless one runs.
    fn follow(&self, pending_id: &str, peer: Peer<RoleServer>) {
        let mut slots = self.slots();
        let slot = slots.entry(pending_id.to_owned()).or_default();
        if slot
            .follower
            .as_ref()
            .is_some_and(|follower| !follower.is_finished())
        {
            return;
        }
        let (tasks, id) = (self.clone(), pending_id.to_owned());
        slot.follower = Some(tokio::spawn(async move {
            tasks.follow_task(id, peer).await;
        }));
    }

    /// A task's follower. The external wait (`begin_wait_bundle`: no
    /// re-attachment, never a detach), driven like a waiting call's but
    /// with no cap; once the bundle settles, the task's state is read
    /// (acknowledging a received resolution) and announced, unless the
    /// client cancelled it.
    async fn follow_task(self, pending_id: String, peer: Peer<RoleServer>) {
        self.wait_until_settled(&pending_id).await;
        let (reading, session_id, id) = (
            self.clarion.clone(),
            self.session_id.clone(),
            pending_id.clone(),
        );
        let state = tokio::task::spawn_blocking(move || reading.ask_task(&session_id, &id)).await;
        let Ok(Ok(state @ TaskState::Settled { .. })) = state else {
            return;
        };
        if self.is_cancelled(&pending_id) {
            return;
        }
        let params = TaskStatusNotificationParams::new(detailed(&pending_id, &state, false));
        let note = ServerNotification::TaskStatusNotification(Notification::new(params));
        if let Err(error) = peer.send_notification(note).await {
            tracing::warn!(%error, pending_id, "notifications/tasks not sent");
        }
    }

    /// Waits without a thread until the bundle's wait ends, however it
    /// ends; what the task reads then is `ask_task`'s to say.
    async fn wait_until_settled(&self, pending_id: &str) {
        let driver = Driver::new(&Blocking);
        let (waiting, id, wake) = (self.clarion.clone(), pending_id.to_owned(), driver.waker());
        let begun = tokio::task::spawn_blocking(move || {
            waiting.begin_wait_bundle(&Principal::System, &id, wake)
        })
        .await;
        if let Ok(Ok(pending)) = begun {
            // A check every 15 s besides the callbacks, as a safety net.
            let _ = driver.recheck_every(PROGRESS_EVERY).run(pending).await;
        }
    }
}

/// The task of `pending_id` in `state`, `cancelled` after `tasks/cancel`.
fn detailed(pending_id: &str, state: &TaskState, cancelled: bool) -> DetailedTask {
    let (created, updated, payload) = match state {
        TaskState::Working { created_at } => (*created_at, *created_at, TaskPayload::Working),
        TaskState::Settled {
            created_at,
            updated_at,
            result,
        } => (
            *created_at,
            *updated_at,
            TaskPayload::Completed {
                result: result.as_object().cloned().unwrap_or_default(),
            },
        ),
    };
    let payload = if cancelled {
        TaskPayload::Cancelled
    } else {
        payload
    };
    let task = Task::new(
        pending_id,
        TaskStatus::Working,
        created.to_rfc3339(),
        updated.to_rfc3339(),
    )
    .with_poll_interval_ms(TASK_POLL_MS);
    DetailedTask::new(task, payload)
}
