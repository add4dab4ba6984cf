//! The asking server (`--ask-in`, MCPA-1): one session's host, serving
//! `ask_human`, `wait_for_answer` and `cancel_question` (MCPA-3). A waiting
//! call waits here (MCPA-4), or becomes a task (MCPA-6, `tasks.rs`).

use std::time::Duration;

use clarion::drive::Driver;
use clarion::mcp::{self, AskStep, AskTool};
use clarion::{Clarion, Error, LeaseHold};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, GetTaskParams,
    GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ServerCapabilities, ServerConfig, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::tasks::Tasks;
use super::{internal, tool_list, unknown_tool, Blocking};
use crate::mirroring::MirrorArgs;

/// How often a waiting call reports progress when asked to (MCPA-4).
pub(super) const PROGRESS_EVERY: Duration = Duration::from_secs(15);

/// The asking server (MCPA-1): one session's host. Its lease is renewed
/// while it runs, so an answer given between the agent's calls is received
/// by its next wait, never sent to the outbox.
pub(super) struct AskServer {
    clarion: Clarion,
    session_id: String,
    _lease: LeaseHold,
    tasks: Tasks,
}

impl AskServer {
    /// MCPA-1: mirrors what was given (or finds the session), then serves.
    pub(super) fn new(
        clarion: Clarion,
        session_id: String,
        mirror: &MirrorArgs,
    ) -> Result<AskServer, Error> {
        mirror.mirror(&clarion, &session_id)?;
        let lease = clarion.keep_lease();
        let tasks = Tasks::new(clarion.clone(), session_id.clone());
        Ok(AskServer {
            clarion,
            session_id,
            _lease: lease,
            tasks,
        })
    }
}

impl ServerHandler for AskServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("clarion", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Ask a human. ask_human asks one to four questions and waits for the answer; \
                 when it returns status pending, call wait_for_answer with its pending_id. \
                 cancel_question withdraws a question nobody answered yet.",
            )
    }

    /// Exactly the asking tools (MCPA-3).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        tool_list(mcp::ask_tool_definitions())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = AskTool::parse(&request.name) else {
            return Err(unknown_tool(&request.name));
        };
        // MCPA-6: a waiting call becomes a task when the client declared
        // the extension; `cancel_question` never does.
        let tasked = tool != AskTool::CancelQuestion
            && context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
        let arguments = request.arguments.map_or(Value::Null, Value::Object);
        let (clarion, session_id) = (self.clarion.clone(), self.session_id.clone());
        let step = tokio::task::spawn_blocking(move || {
            clarion.start_ask_tool(&session_id, tool, &arguments)
        })
        .await
        .map_err(internal)?;
        let result = match step {
            AskStep::Done(result) => result,
            AskStep::Wait { pending_id, .. } if tasked => {
                return self.tasks.create(pending_id, context.peer.clone()).await;
            }
            AskStep::Wait { pending_id, wait } => {
                wait_for(&self.clarion, pending_id, wait, &context).await?
            }
        };
        serde_json::from_value::<CallToolResult>(result)
            .map(CallToolResponse::from)
            .map_err(internal)
    }

    /// MCPA-6 `tasks/get`: the bundle read from the database, so a task
    /// outlives the server that made it.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks.get(request.task_id, context.peer.clone()).await
    }

    /// MCPA-6 `tasks/cancel`: the bundle stays pending and answerable.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(request.task_id).await
    }

    /// MCPA-6: a task never asks the client for input.
    async fn update_task(
        &self,
        _request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(ErrorData::invalid_params(
            "these tasks never ask for input",
            None,
        ))
    }
}

/// MCPA-4: waits on `pending_id` as the HTTP door does (HTTP-5), holding
/// no thread (`clarion::drive`); cut at `wait` (never a detach, WAIT-1b);
/// ended at once by the request's `notifications/cancelled`, leaving the
/// bundle pending. With a progress token it reports progress every 15 s.
async fn wait_for(
    clarion: &Clarion,
    pending_id: String,
    wait: Duration,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let driver = Driver::new(&Blocking);
    let (waiting, id, wake) = (clarion.clone(), pending_id.clone(), driver.waker());
    let begun = tokio::task::spawn_blocking(move || waiting.begin_wait(&id, wake))
        .await
        .map_err(internal)?;
    let pending = match begun {
        Ok(pending) => pending,
        Err(error) => return Ok(mcp::wait_result(&pending_id, Err(error))),
    };
    let cancelled = &context.ct;
    let mut driver = driver
        .cap_at(tokio::time::Instant::now() + wait)
        // The client gave up: rmcp sends nothing for a cancelled request,
        // and the bundle stays pending.
        .stop_when(async move {
            cancelled.cancelled().await;
            ErrorData::internal_error("request cancelled", None)
        });
    if let Some(token) = context.meta.get_progress_token() {
        let (peer, mut waited) = (&context.peer, Duration::ZERO);
        driver = driver.tick_every(PROGRESS_EVERY, move || {
            waited += PROGRESS_EVERY;
            let note = progress(token.clone(), waited);
            async move {
                let _ = peer.notify_progress(note).await;
            }
        });
    }
    let ended = driver.run(pending).await?;
    Ok(mcp::wait_result(&pending_id, ended))
}

/// MCPA-4's progress notification: the seconds waited so far.
fn progress(token: ProgressToken, waited: Duration) -> ProgressNotificationParam {
    let mut note = ProgressNotificationParam::new(token, waited.as_secs_f64());
    note.message = Some("waiting for a human".to_owned());
    note
}
