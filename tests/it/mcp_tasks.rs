//! MCP Tasks (MCPA-6), on both backends, with the official Rust SDK's
//! client (the Python SDK cannot drive the tasks extension) against real
//! `clarion mcp --ask-in` processes over their stdio: a task-augmented
//! `ask_human` is `working`, then `completed` with the answer;
//! `tasks/cancel` leaves the bundle answerable; `tasks/get` after a
//! restart of the server returns the answer given meanwhile; the server
//! announces a settled task with `notifications/tasks`.

use std::process::Stdio;
use std::time::Duration;

use clarion::Principal;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    DetailedTask, GetTaskParams, Implementation, TaskPayload, TaskStatus,
    TaskStatusNotificationParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{json, Value};

use crate::support::*;

dual_backend!(
    mcpa_6_a_task_works_then_completes_with_the_answer,
    mcpa_6_tasks_cancel_leaves_the_bundle_answerable,
    mcpa_6_tasks_get_after_a_restart_returns_the_answer_given_meanwhile,
    mcpa_6_only_a_declaring_client_gets_tasks
);

type Client = RunningService<RoleClient, Watching>;

/// The test's client: its configuration, and the `notifications/tasks` it
/// hears.
struct Watching {
    config: ClientConfig,
    heard: tokio::sync::mpsc::UnboundedSender<TaskStatusNotificationParams>,
}

impl ClientHandler for Watching {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.heard.send(params);
    }
}

/// `clarion mcp --ask-in session` and a client declaring the tasks
/// extension, or not.
struct Asking {
    _server: tokio::process::Child,
    client: Client,
    heard: tokio::sync::mpsc::UnboundedReceiver<TaskStatusNotificationParams>,
}

async fn connect(db: &TestDb, session: &str, tasks: bool) -> Asking {
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["mcp", "--database-url", &db.url, "--ask-in", session])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (stdout, stdin) = (server.stdout.take().unwrap(), server.stdin.take().unwrap());
    let capabilities = if tasks {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        ClientCapabilities::default()
    };
    let (heard, hearing) = tokio::sync::mpsc::unbounded_channel();
    let config = ClientConfig::new(capabilities, Implementation::new("clarion-tests", "1"));
    let client = Watching { config, heard }
        .serve((stdout, stdin))
        .await
        .unwrap();
    Asking {
        _server: server,
        client,
        heard: hearing,
    }
}

fn run<T>(body: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(body)
}

fn ask_human(wait_ms: u64) -> CallToolRequestParams {
    let arguments = json!({"questions": [{"title": "Ship it?", "prompt": "Tests pass. Ship it?",
        "options": [{"label": "Yes", "description": "ship"}, {"label": "No", "description": "wait"}]}],
        "wait_ms": wait_ms});
    CallToolRequestParams::new("ask_human")
        .with_arguments(serde_json::from_value(arguments).unwrap())
}

/// The task a call created; the call must have become one.
async fn created_task(client: &Client, call: CallToolRequestParams) -> rmcp::model::Task {
    match client.call_tool_once(call).await.unwrap() {
        CallToolResponse::Task(created) => created.task,
        other => panic!("expected a task, got {other:?}"),
    }
}

async fn get(client: &Client, task_id: &str) -> DetailedTask {
    client
        .peer()
        .get_task(GetTaskParams::new(task_id.to_owned()))
        .await
        .unwrap()
        .task
}

/// The `structuredContent` of a completed task's result.
fn completed(task: &DetailedTask) -> Value {
    match &task.payload {
        TaskPayload::Completed { result } => result["structuredContent"].clone(),
        other => panic!("expected completed, got {other:?}"),
    }
}

/// MCPA-6: a task-augmented `ask_human` answers at once with a task whose
/// id is the `pending_id`, `working`, `ttlMs` null, `createdAt` the
/// bundle's; once a human answers, `tasks/get` says `completed` with the
/// call's result (never `input_required`).
fn mcpa_6_a_task_works_then_completes_with_the_answer(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    run(async {
        let mut asking = connect(db, &session, true).await;
        let task = created_task(&asking.client, ask_human(0)).await;
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.ttl_ms, None);
        let detail = db.get_bundle(&Principal::System, &task.task_id).unwrap();
        assert_eq!(
            detail.bundle.session_id, session,
            "taskId is the pending_id"
        );
        assert_eq!(task.created_at, detail.bundle.created_at.to_rfc3339());
        assert_eq!(
            get(&asking.client, &task.task_id).await.task.status,
            TaskStatus::Working
        );
        db.resolve_bundle(&alice(), &task.task_id, &one_answer("by task"))
            .unwrap();
        // The server announces the settlement (`notifications/tasks`).
        let heard = tokio::time::timeout(Duration::from_secs(30), asking.heard.recv())
            .await
            .expect("notifications/tasks within 30 s")
            .unwrap();
        assert_eq!(heard.task.task.task_id, task.task_id);
        assert_eq!(heard.task.task.status, TaskStatus::Completed);
        // Announced, so `tasks/get` must say the same now.
        let done = get(&asking.client, &task.task_id).await;
        assert_eq!(done.task.status, TaskStatus::Completed);
        let result = completed(&done);
        assert_eq!(result["status"], "answered", "{result}");
        assert_eq!(result["response"]["answers"][0]["custom_text"], "by task");
        assert_eq!(completed(&heard.task), result);
    });
}

/// MCPA-6: `tasks/cancel` makes the task `cancelled` but leaves the
/// bundle pending, and a human can still answer it.
fn mcpa_6_tasks_cancel_leaves_the_bundle_answerable(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    run(async {
        let asking = connect(db, &session, true).await;
        let task = created_task(&asking.client, ask_human(0)).await;
        asking
            .client
            .peer()
            .cancel_task(CancelTaskParams::new(task.task_id.clone()))
            .await
            .unwrap();
        let cancelled = get(&asking.client, &task.task_id).await;
        assert_eq!(cancelled.task.status, TaskStatus::Cancelled);
        let detail = db.get_bundle(&Principal::System, &task.task_id).unwrap();
        assert_eq!(detail.status.as_str(), "pending");
        let answered = db
            .resolve_bundle(&alice(), &task.task_id, &one_answer("still answerable"))
            .unwrap();
        assert!(answered.claimed);
    });
}

/// MCPA-6: tasks live in the database: a server started after the first
/// one ended answers `tasks/get` with the answer given in between.
fn mcpa_6_tasks_get_after_a_restart_returns_the_answer_given_meanwhile(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    run(async {
        let first = connect(db, &session, true).await;
        let task = created_task(&first.client, ask_human(0)).await;
        drop(first);
        db.resolve_bundle(&alice(), &task.task_id, &one_answer("while it was down"))
            .unwrap();
        let second = connect(db, &session, true).await;
        let done = get(&second.client, &task.task_id).await;
        assert_eq!(done.task.status, TaskStatus::Completed);
        assert_eq!(
            completed(&done)["response"]["answers"][0]["custom_text"],
            "while it was down"
        );
    });
}

/// MCPA-6: a client that did not declare the extension gets the bounded
/// call; `cancel_question` never becomes a task; a `taskId` that is no
/// bundle of the session is invalid params (-32602).
fn mcpa_6_only_a_declaring_client_gets_tasks(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    run(async {
        let plain = connect(db, &session, false).await;
        let bounded = plain.client.call_tool_once(ask_human(0)).await.unwrap();
        let CallToolResponse::Complete(result) = bounded else {
            panic!("expected a result, got {bounded:?}");
        };
        let pending = result.structured_content.unwrap();
        assert_eq!(pending["status"], "pending");
        let tasking = connect(db, &session, true).await;
        let cancel = CallToolRequestParams::new("cancel_question").with_arguments(
            serde_json::from_value(json!({"pending_id": pending["pending_id"]})).unwrap(),
        );
        let cancelled = tasking.client.call_tool_once(cancel).await.unwrap();
        assert!(
            matches!(cancelled, CallToolResponse::Complete(_)),
            "{cancelled:?}"
        );
        let unknown = tasking
            .client
            .peer()
            .get_task(GetTaskParams::new("no-such-bundle".to_owned()))
            .await;
        let message = format!("{unknown:?}");
        assert!(message.contains("-32602"), "{message}");
    });
}
