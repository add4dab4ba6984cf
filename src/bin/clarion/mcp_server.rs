//! `clarion mcp`: the external tools (WIRE-4) served over stdio with the
//! official Rust MCP SDK. The tool definitions, argument checks and results
//! all come from the library (`clarion::mcp`); this file only adapts them to
//! the protocol. The async runtime lives here, in the binary: each tool call
//! runs the synchronous library on a blocking thread.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clarion::mcp::{self, AskStep, AskTool, TaskState, UnknownTool};
use clarion::{Checked, Clarion, Error, LeaseHold, Principal};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult,
    DetailedTask, GetTaskParams, GetTaskResult, Implementation, ListToolsResult, Notification,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
    ServerNotification, Task, TaskPayload, TaskStatus, TaskStatusNotificationParams, Tool,
    UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, Notify};

use crate::mirroring::MirrorArgs;

/// `clarion mcp`'s arguments: the answering tools for one principal
/// (`--as`, WIRE-4), or the asking tools for one session (`--ask-in`,
/// MCPA-1).
#[derive(clap::Args)]
#[command(mut_arg("task", |task| task.requires("ask_in")))]
pub struct McpArgs {
    #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
    database_url: String,
    /// Whom the answering tools act for, e.g. user:alice or agent:alice/bot:questions:read.
    #[arg(
        long = "as",
        required_unless_present = "ask_in",
        conflicts_with = "ask_in"
    )]
    principal: Option<Principal>,
    /// Serve the asking tools (ask_human, wait_for_answer, cancel_question) for this one
    /// session, as its host (MCPA-1).
    #[arg(long)]
    ask_in: Option<String>,
    /// With --ask-in: what to mirror first (MCPA-1).
    #[command(flatten)]
    mirror: MirrorArgs,
    /// How long this server's attachments outlive it (DEL-3): `30s` by default.
    #[arg(long, value_name = "AGE", value_parser = crate::parse_age)]
    attachment_lease: Option<u64>,
}

struct Server {
    clarion: Clarion,
    principal: Principal,
}

fn internal(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

/// `tools/list`'s answer from the library's definitions.
fn tool_list(definitions: Vec<Value>) -> Result<ListToolsResult, ErrorData> {
    let tools = definitions
        .into_iter()
        .map(serde_json::from_value::<Tool>)
        .collect::<Result<Vec<_>, _>>()
        .map_err(internal)?;
    Ok(ListToolsResult::with_all_items(tools))
}

/// A call to a tool this server does not serve: a protocol error, not a
/// tool result.
fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown tool {name:?}"), None)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("clarion", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Clarification requests from coding agents. list_pending_questions shows \
                 what waits for an answer; answer_question answers or rejects one.",
            )
    }

    /// Only the tools this server's principal may call (WIRE-4).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        tool_list(mcp::tools_for(&self.principal))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let clarion = self.clarion.clone();
        let principal = self.principal.clone();
        let name = request.name.to_string();
        let arguments = request.arguments.map_or(Value::Null, Value::Object);
        let called =
            tokio::task::spawn_blocking(move || clarion.call_tool(&principal, &name, &arguments))
                .await
                .map_err(internal)?;
        match called {
            Ok(result) => serde_json::from_value::<CallToolResult>(result)
                .map(CallToolResponse::from)
                .map_err(internal),
            // An unknown tool is a protocol error, not a tool result.
            Err(UnknownTool(name)) => Err(unknown_tool(&name)),
        }
    }
}

/// The asking server (MCPA-1): one session's host. Its lease is renewed
/// while it runs, so an answer given between the agent's calls is received
/// by its next wait, never sent to the outbox.
struct AskServer {
    clarion: Clarion,
    session_id: String,
    _lease: LeaseHold,
    /// MCPA-6: the tasks this server drives, and those the client
    /// cancelled (remembered while it runs).
    tasks: Arc<Mutex<HashMap<String, TaskSlot>>>,
}

/// One task this server knows of.
#[derive(Default)]
struct TaskSlot {
    /// `tasks/cancel` came: the task reads `cancelled`, its bundle stays
    /// pending.
    cancelled: bool,
    /// The wait that sends `notifications/tasks` when the bundle settles.
    driver: Option<tokio::task::JoinHandle<()>>,
}

/// How often a client should poll `tasks/get`.
const TASK_POLL_MS: u64 = 1_000;

/// How often a waiting call reports progress when asked to (MCPA-4).
const PROGRESS_EVERY: Duration = Duration::from_secs(15);

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
                return self.create_task(pending_id, &context).await;
            }
            AskStep::Wait { pending_id, wait } => {
                drive(&self.clarion, pending_id, wait, &context).await?
            }
        };
        serde_json::from_value::<CallToolResult>(result)
            .map(CallToolResponse::from)
            .map_err(internal)
    }

    /// MCPA-6 `tasks/get`: the bundle read from the database, so a task
    /// outlives the server that made it; a task no driver follows (after a
    /// restart) gets one.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let id = request.task_id;
        let state = self.task_state(&id).await?;
        let cancelled = self.is_cancelled(&id);
        if matches!(state, TaskState::Working { .. }) && !cancelled {
            self.follow(&id, context.peer.clone());
        }
        Ok(GetTaskResult::new(detailed(&id, &state, cancelled)))
    }

    /// MCPA-6 `tasks/cancel`: the task reads `cancelled` from now on; the
    /// bundle stays pending and answerable (`cancel_question` withdraws
    /// it). A settled task stays `completed`.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let id = request.task_id;
        if let TaskState::Settled { .. } = self.task_state(&id).await? {
            return Ok(());
        }
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        let slot = tasks.entry(id).or_default();
        slot.cancelled = true;
        if let Some(driver) = slot.driver.take() {
            driver.abort();
        }
        Ok(())
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

impl AskServer {
    /// MCPA-6: the call's task, at once: `taskId` the `pending_id`,
    /// `working` while the bundle is pending (followed until it settles),
    /// else `completed` with the call's result.
    async fn create_task(
        &self,
        pending_id: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let state = self.task_state(&pending_id).await?;
        self.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(pending_id.clone())
            .or_default()
            .cancelled = false;
        if matches!(state, TaskState::Working { .. }) {
            self.follow(&pending_id, context.peer.clone());
        }
        let task = detailed(&pending_id, &state, false).task;
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// The task's bundle, checked on the blocking pool; an id that is no
    /// bundle of this session is JSON-RPC's invalid params (-32602).
    async fn task_state(&self, pending_id: &str) -> Result<TaskState, ErrorData> {
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

    fn is_cancelled(&self, pending_id: &str) -> bool {
        self.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(pending_id)
            .is_some_and(|slot| slot.cancelled)
    }

    /// Starts the task's driver unless one runs: it waits on the bundle
    /// without a thread and sends `notifications/tasks` once it settles.
    fn follow(&self, pending_id: &str, peer: Peer<RoleServer>) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        let slot = tasks.entry(pending_id.to_owned()).or_default();
        if slot
            .driver
            .as_ref()
            .is_some_and(|driver| !driver.is_finished())
        {
            return;
        }
        let (clarion, session_id) = (self.clarion.clone(), self.session_id.clone());
        let (id, known) = (pending_id.to_owned(), self.tasks.clone());
        slot.driver = Some(tokio::spawn(async move {
            follow_task(clarion, session_id, id, known, peer).await;
        }));
    }
}

/// MCPA-6: a task's driver. The external wait (`begin_wait_bundle`: no
/// re-attachment, never a detach), checked like [`drive`]'s but with no
/// cap; once the bundle settles, the task's state is read (acknowledging a
/// received resolution) and announced, unless the client cancelled it.
async fn follow_task(
    clarion: Clarion,
    session_id: String,
    pending_id: String,
    tasks: Arc<Mutex<HashMap<String, TaskSlot>>>,
    peer: Peer<RoleServer>,
) {
    let woken = Arc::new(Notify::new());
    let wake = {
        let woken = woken.clone();
        move || woken.notify_one()
    };
    let (waiting, id) = (clarion.clone(), pending_id.clone());
    let begun = tokio::task::spawn_blocking(move || {
        waiting.begin_wait_bundle(&Principal::System, &id, wake)
    })
    .await;
    if let Ok(Ok(mut pending)) = begun {
        loop {
            pending = match tokio::task::spawn_blocking(move || pending.check()).await {
                Ok(Ok(Checked::Waiting(pending))) => pending,
                _ => break,
            };
            let poll = pending.poll_interval().unwrap_or(PROGRESS_EVERY);
            let due = pending.next_check().map(tokio::time::Instant::from_std);
            tokio::select! {
                () = woken.notified() => {}
                () = tokio::time::sleep(poll) => {}
                () = sleep_until(due) => {}
            }
        }
    }
    let (reading, id) = (clarion.clone(), pending_id.clone());
    let state = tokio::task::spawn_blocking(move || reading.ask_task(&session_id, &id)).await;
    let Ok(Ok(state @ TaskState::Settled { .. })) = state else {
        return;
    };
    let cancelled = tasks
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&pending_id)
        .is_some_and(|slot| slot.cancelled);
    if cancelled {
        return;
    }
    let params = TaskStatusNotificationParams::new(detailed(&pending_id, &state, false));
    let note = ServerNotification::TaskStatusNotification(Notification::new(params));
    if let Err(error) = peer.send_notification(note).await {
        tracing::warn!(%error, pending_id, "notifications/tasks not sent");
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

/// MCPA-4: waits on `pending_id` as the HTTP door does (HTTP-5), holding
/// no thread: checked on the blocking pool at once and whenever the wait's
/// callback fires, its poll interval passes or its deadline comes (WAIT-5);
/// cut at `wait` (never a detach, WAIT-1b); ended at once by the request's
/// `notifications/cancelled`, leaving the bundle pending. With a progress
/// token it reports progress every 15 s.
async fn drive(
    clarion: &Clarion,
    pending_id: String,
    wait: Duration,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let woken = Arc::new(Notify::new());
    let wake = {
        let woken = woken.clone();
        move || woken.notify_one()
    };
    let (waiting, id) = (clarion.clone(), pending_id.clone());
    let begun = tokio::task::spawn_blocking(move || waiting.begin_wait(&id, wake))
        .await
        .map_err(internal)?;
    let mut pending = match begun {
        Ok(pending) => pending,
        Err(error) => return Ok(mcp::wait_result(&pending_id, Err(error))),
    };
    let deadline = tokio::time::Instant::now() + wait;
    let progress = context.meta.get_progress_token();
    let mut reports = tokio::time::interval_at(deadline_from_now(PROGRESS_EVERY), PROGRESS_EVERY);
    let mut reported = 0.0;
    loop {
        pending = match tokio::task::spawn_blocking(move || pending.check())
            .await
            .map_err(internal)?
        {
            Ok(Checked::Over(outcome)) => return Ok(mcp::wait_result(&pending_id, Ok(outcome))),
            Ok(Checked::Waiting(pending)) => pending,
            Err(error) => return Ok(mcp::wait_result(&pending_id, Err(error))),
        };
        let poll = pending.poll_interval().unwrap_or(wait);
        let due = pending.next_check().map(tokio::time::Instant::from_std);
        tokio::select! {
            biased;
            // The client gave up: rmcp sends nothing for a cancelled
            // request, and the bundle stays pending.
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("request cancelled", None));
            }
            () = tokio::time::sleep_until(deadline) => {
                let ended = tokio::task::spawn_blocking(move || pending.capped())
                    .await
                    .map_err(internal)?;
                return Ok(mcp::wait_result(&pending_id, ended));
            }
            () = woken.notified() => {}
            () = tokio::time::sleep(poll) => {}
            () = sleep_until(due) => {}
            _ = reports.tick(), if progress.is_some() => {
                if let Some(token) = progress.clone() {
                    reported += PROGRESS_EVERY.as_secs_f64();
                    let mut note = ProgressNotificationParam::new(token, reported);
                    note.message = Some("waiting for a human".to_owned());
                    let _ = context.peer.notify_progress(note).await;
                }
            }
        }
    }
}

fn deadline_from_now(after: Duration) -> tokio::time::Instant {
    tokio::time::Instant::now() + after
}

/// Sleeps until `at`; never wakes when there is no `at`.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// JSON-RPC's reply to a line that is not JSON at all.
const PARSE_ERROR: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: not JSON"}}"#;

/// The longest message read from stdin: a request may be up to
/// `MAX_REQUEST_BYTES`, and JSON-RPC's envelope around it is small.
const MAX_LINE_BYTES: usize = 2 * clarion::limits::MAX_REQUEST_BYTES;

/// JSON-RPC's reply to a line longer than [`MAX_LINE_BYTES`].
const TOO_LARGE: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: message larger than 2 MiB"}}"#;

/// One line of stdin into `line`, keeping at most `MAX_LINE_BYTES` of it;
/// returns false at end of input. The rest of an overlong line is read and
/// dropped, so memory stays bounded whatever arrives.
async fn read_line(
    stdin: &mut BufReader<tokio::io::Stdin>,
    line: &mut Vec<u8>,
) -> std::io::Result<(bool, bool)> {
    line.clear();
    let mut overlong = false;
    loop {
        let available = stdin.fill_buf().await?;
        if available.is_empty() {
            return Ok((!line.is_empty() || overlong, overlong));
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..=end], true),
            None => (available, false),
        };
        let used = chunk.len();
        if line.len() + used > MAX_LINE_BYTES {
            overlong = true;
            line.clear();
        } else if !overlong {
            line.extend_from_slice(chunk);
        }
        stdin.consume(used);
        if done {
            return Ok((true, overlong));
        }
    }
}

/// Feeds stdin to the server line by line. The SDK drops a line that is not
/// JSON without a word; JSON-RPC wants a parse error, so such lines (and
/// overlong ones) are answered here and never reach it. Bytes that are not
/// UTF-8 are not JSON either, so nothing on stdin can end the server but
/// end-of-file.
async fn read_requests(mut to_server: DuplexStream, replies: mpsc::UnboundedSender<Vec<u8>>) {
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        let overlong = match read_line(&mut stdin, &mut line).await {
            Ok((true, overlong)) => overlong,
            Ok((false, _)) | Err(_) => break,
        };
        let reply = if overlong {
            Some(TOO_LARGE)
        } else if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        } else if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
            None
        } else {
            Some(PARSE_ERROR)
        };
        match reply {
            Some(reply) => {
                if replies.send(reply.as_bytes().to_vec()).is_err() {
                    break;
                }
            }
            None => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_server.write_all(&line).await.is_err() {
                    break;
                }
            }
        }
    }
    // Dropping `to_server` is the server's end-of-file.
}

/// Writes the server's messages and the parse errors to stdout, whole
/// lines only, so the two never interleave within a message.
async fn write_replies(from_server: DuplexStream, mut replies: mpsc::UnboundedReceiver<Vec<u8>>) {
    let mut stdout = tokio::io::stdout();
    let mut server_lines = BufReader::new(from_server);
    let mut line = Vec::new();
    // `line` is emptied only by taking a whole line out of it: a read that
    // loses the race to a reply keeps what it had read for the next pass.
    loop {
        let message = tokio::select! {
            read = server_lines.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => std::mem::take(&mut line),
            },
            Some(reply) = replies.recv() => {
                let mut reply = reply;
                reply.push(b'\n');
                reply
            }
        };
        if stdout.write_all(&message).await.is_err() || stdout.flush().await.is_err() {
            break;
        }
    }
}

/// `clarion mcp`: opens the database, then serves until the client closes
/// stdin. Exit codes as the other commands': 3 for an unknown session.
pub fn run(args: McpArgs) -> ExitCode {
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("clarion mcp: {error}");
            match error.downcast_ref::<Error>() {
                Some(error) => crate::exit_code(clarion::envelope::error(error).status),
                None => ExitCode::FAILURE,
            }
        }
    }
}

fn serve(args: McpArgs) -> Result<(), Box<dyn std::error::Error>> {
    // AUD-4: the tools record `mcp` whatever the handle.
    let mut builder = Clarion::builder(&args.database_url);
    if let Some(lease) = args.attachment_lease {
        builder = builder.attachment_lease(Duration::from_millis(lease));
    }
    let clarion = builder.open()?;
    let closing = clarion.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = match args.ask_in {
        Some(session_id) => {
            let server = ask_server(clarion, session_id, &args.mirror)?;
            runtime.block_on(run_stdio(server))
        }
        None => {
            let principal = args.principal.ok_or("give --as or --ask-in")?;
            runtime.block_on(run_stdio(Server { clarion, principal }))
        }
    };
    // REL-7: the ledger's appender writes what it holds before the exit.
    closing.close();
    served
}

/// MCPA-1: mirrors what was given (or finds the session), then serves.
fn ask_server(
    clarion: Clarion,
    session_id: String,
    mirror: &MirrorArgs,
) -> Result<AskServer, Error> {
    mirror.mirror(&clarion, &session_id)?;
    let lease = clarion.keep_lease();
    Ok(AskServer {
        clarion,
        session_id,
        _lease: lease,
        tasks: Arc::default(),
    })
}

/// Serves `handler` over stdin and stdout until the client closes stdin.
async fn run_stdio(handler: impl ServerHandler) -> Result<(), Box<dyn std::error::Error>> {
    let (server_in, requests) = tokio::io::duplex(1 << 16);
    let (server_out, responses) = tokio::io::duplex(1 << 16);
    let (replies, parse_errors) = mpsc::unbounded_channel();
    tokio::spawn(read_requests(requests, replies));
    let writer = tokio::spawn(write_replies(responses, parse_errors));
    let running = handler.serve((server_in, server_out)).await?;
    running.waiting().await?;
    // Flush whatever the server wrote last.
    let _ = writer.await;
    Ok(())
}
