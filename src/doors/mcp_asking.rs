//! MCPA-3..5: the asking tools of `clarion mcp --ask-in <session>`, a set
//! of their own beside WIRE-4's answering tools. An agent asks
//! (`ask_human`), waits again (`wait_for_answer`) or withdraws its own
//! question (`cancel_question`), always as the host (`system`) of its one
//! session and recording channel `mcp`.
//!
//! The library stays synchronous: `Clarion::start_ask_tool` does the call's
//! database part and says whether the door must now wait; the door drives
//! that wait without a thread (the library's [`crate::PendingWait`], as the
//! HTTP door does, HTTP-5) for at most the call's `wait_ms`, and turns its
//! outcome into the result with [`wait_result`].

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::domain::delivery::wait::{Checked, PendingWait};
use crate::domain::engine::Engine;
use crate::domain::views::WaitOutcome;
use crate::doors::args::schema::{self, Side};
use crate::doors::args::{self, Id, Millis};
use crate::doors::envelope;
use crate::doors::envelope::bodies::{AskResultBody, CancelQuestionBody};
use crate::doors::operations::{self, Operation};
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::capability::{admit, HOST};
use crate::rules::limits::MCP_WAIT;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;
use crate::store::Timestamp;

/// The asking tools (MCPA-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskTool {
    /// `ask_human`: asks on the server's session, then waits.
    AskHuman,
    /// `wait_for_answer`: waits again on one of the session's bundles.
    WaitForAnswer,
    /// `cancel_question`: withdraws one of the session's pending bundles.
    CancelQuestion,
}

/// `wait_for_answer`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForAnswerArgs {
    /// The bundle `ask_human` returned.
    pending_id: Id,
    /// How long to wait, in milliseconds: default 45000; longer waits are
    /// cut at 50000, so a call ends before common 60 s client timeouts.
    wait_ms: Option<Millis>,
}

/// `cancel_question`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CancelQuestionArgs {
    /// The bundle to withdraw.
    pending_id: Id,
}

/// `ask_human`'s own argument beside `ask`'s (MCPA-3).
#[derive(Deserialize, JsonSchema)]
pub(crate) struct WaitMs {
    /// How long to wait for the answer, in milliseconds: default 45000;
    /// longer waits are cut at 50000.
    wait_ms: Option<Millis>,
}

/// MCPA-6: where a task (an asking call's bundle) stands, read from the
/// database by [`crate::Clarion::ask_task`].
#[derive(Debug, Clone, PartialEq)]
pub enum TaskState {
    /// The bundle is still pending.
    Working {
        /// When it was asked.
        created_at: Timestamp,
    },
    /// It is settled: the call's result (MCPA-5).
    Settled {
        /// When it was asked.
        created_at: Timestamp,
        /// When it was settled, or when this check found it ended.
        updated_at: Timestamp,
        /// The MCP `CallToolResult` the call would have returned.
        result: Value,
    },
}

/// What the door does after [`crate::Clarion::start_ask_tool`].
#[derive(Debug)]
pub enum AskStep {
    /// The call's result (success or error), an MCP `CallToolResult`.
    Done(Value),
    /// Wait on this bundle (the agent-side wait, [`crate::Clarion::begin_wait`])
    /// for at most `wait`, then pass the outcome to [`wait_result`].
    Wait {
        /// The bundle to wait on.
        pending_id: String,
        /// How long, already clamped (MCPA-4).
        wait: Duration,
    },
}

impl AskTool {
    /// Every asking tool.
    pub const ALL: [AskTool; 3] = [
        AskTool::AskHuman,
        AskTool::WaitForAnswer,
        AskTool::CancelQuestion,
    ];

    /// The tool's name.
    pub fn name(self) -> &'static str {
        match self {
            AskTool::AskHuman => "ask_human",
            AskTool::WaitForAnswer => "wait_for_answer",
            AskTool::CancelQuestion => "cancel_question",
        }
    }

    /// The tool with this name.
    pub fn parse(name: &str) -> Option<AskTool> {
        AskTool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    fn description(self) -> &'static str {
        match self {
            AskTool::AskHuman => {
                "Ask a human one to four questions and wait for the answer (at most wait_ms). \
                 Returns the answer, or status pending with the pending_id: then call \
                 wait_for_answer. A deadline (expires_in_ms or expires_at) with on_expire \
                 decides what you are told if nobody answers in time."
            }
            AskTool::WaitForAnswer => {
                "Wait again for the answer to a question asked with ask_human (at most wait_ms)."
            }
            AskTool::CancelQuestion => {
                "Withdraw a question you asked that nobody has answered yet."
            }
        }
    }

    /// `{"name", "description", "inputSchema", "outputSchema"}`, the
    /// schemas self-contained (JSON Schema 2020-12).
    pub fn definition(self) -> Value {
        let (input, output) = match self {
            AskTool::AskHuman => (
                ask_human_schema(),
                schema::inline::<AskResultBody>(Side::Bodies),
            ),
            AskTool::WaitForAnswer => (
                schema::inline::<WaitForAnswerArgs>(Side::Arguments),
                schema::inline::<AskResultBody>(Side::Bodies),
            ),
            AskTool::CancelQuestion => (
                schema::inline::<CancelQuestionArgs>(Side::Arguments),
                schema::inline::<CancelQuestionBody>(Side::Bodies),
            ),
        };
        json!({
            "name": self.name(),
            "description": self.description(),
            "inputSchema": input,
            "outputSchema": output,
        })
    }
}

/// Every asking tool's definition.
pub fn ask_tool_definitions() -> Vec<Value> {
    AskTool::ALL.into_iter().map(AskTool::definition).collect()
}

/// `ask_human`'s input: `ask`'s arguments, declared once with the
/// operation, without `session_id` (the server's) and with `wait_ms`.
fn ask_human_schema() -> Value {
    let mut ask = Operation::Ask
        .args_schema()
        .unwrap_or_else(|| json!({"type": "object"}));
    let wait = schema::inline::<WaitMs>(Side::Arguments);
    if let Some(properties) = ask.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove("session_id");
        if let Some(wait_ms) = wait.pointer("/properties/wait_ms") {
            properties.insert("wait_ms".to_owned(), wait_ms.clone());
        }
    }
    if let Some(required) = ask.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name != "session_id");
    }
    ask
}

/// MCPA-4: the wait a call asked for, clamped.
fn clamped(wait_ms: Option<Millis>) -> Duration {
    MCP_WAIT.serve(wait_ms.map(|ms| ms.0))
}

fn error_result(error: &Error) -> Value {
    envelope::tool_result(envelope::tool_error(error), true)
}

fn ok_result(structured: &impl Serialize) -> Value {
    envelope::tool_result(envelope::to_json(structured), false)
}

impl AskTool {
    /// MCPA-3: the database part of a call on `session_id`'s server:
    /// `ask_human` asks (ASK-1..5; a retry with the same idempotency key
    /// finds the same bundle), `wait_for_answer` checks the bundle is the
    /// session's, `cancel_question` cancels it. A bundle of another
    /// session, a deleted one or an unknown id is `not_found`.
    pub(crate) fn start(self, engine: &Engine, session_id: &str, arguments: &Value) -> AskStep {
        match self.started(engine, session_id, arguments) {
            Ok(step) => step,
            Err(error) => AskStep::Done(error_result(&error)),
        }
    }

    fn started(self, engine: &Engine, session_id: &str, arguments: &Value) -> Result<AskStep> {
        let empty = Value::Object(Map::new());
        let arguments = if arguments.is_null() {
            &empty
        } else {
            arguments
        };
        match self {
            AskTool::AskHuman => {
                let (ask, wait) = ask_arguments(arguments, session_id)?;
                let asked = operations::ask(engine, Channel::Mcp, &ask)?;
                Ok(AskStep::Wait {
                    pending_id: asked.pending_id,
                    wait,
                })
            }
            AskTool::WaitForAnswer => {
                let args: WaitForAnswerArgs = args::read(arguments, "arguments")?;
                session_bundle(engine, session_id, &args.pending_id.0)?;
                Ok(AskStep::Wait {
                    pending_id: args.pending_id.0,
                    wait: clamped(args.wait_ms),
                })
            }
            AskTool::CancelQuestion => {
                let args: CancelQuestionArgs = args::read(arguments, "arguments")?;
                let pending_id = args.pending_id.0;
                session_bundle(engine, session_id, &pending_id)?;
                let host = admit(&Principal::System, HOST, Channel::Mcp)?;
                let resolved = engine.cancel_bundle(&host, &pending_id)?;
                Ok(AskStep::Done(ok_result(&CancelQuestionBody::of(
                    &pending_id,
                    &resolved,
                ))))
            }
        }
    }
}

/// `ask_human`'s arguments as `ask`'s (with the server's session) and its
/// wait; `session_id` is not one of them.
fn ask_arguments(arguments: &Value, session_id: &str) -> Result<(Value, Duration)> {
    let Some(given) = arguments.as_object() else {
        return Err(ValidationError::new(
            "arguments",
            format!("expected an object, got {}", args::type_name(arguments)),
        )
        .into());
    };
    if given.contains_key("session_id") {
        return Err(ValidationError::new(
            "arguments.session_id",
            "not an argument of ask_human: the question goes to this server's session",
        )
        .into());
    }
    let mut ask = given.clone();
    let wait = ask.remove("wait_ms").map_or(Ok(None), |value| {
        args::read::<WaitMs>(&json!({ "wait_ms": value }), "arguments").map(|w| w.wait_ms)
    })?;
    ask.insert(
        "session_id".to_owned(),
        Value::String(session_id.to_owned()),
    );
    Ok((Value::Object(ask), clamped(wait)))
}

/// The bundle's `created_at`, if it is one of `session_id`'s; else the
/// one not-found.
fn session_bundle(engine: &Engine, session_id: &str, pending_id: &str) -> Result<Timestamp> {
    let host = admit(&Principal::System, HOST, Channel::Mcp)?;
    let detail = engine.get_bundle(&host, pending_id)?;
    if detail.bundle.session_id != session_id {
        return Err(Error::NotFound(Entity::Bundle));
    }
    Ok(detail.bundle.created_at)
}

/// MCPA-6: one check of a task's bundle, like a wait's: a due bundle is
/// settled (WAIT-5) and a received resolution acknowledged (WAIT-2), so a
/// task read after a restart shows what happened meanwhile. A bundle of
/// another session, a deleted one or an unknown id is not-found.
pub(crate) fn task_state(
    engine: &Arc<Engine>,
    session_id: &str,
    pending_id: &str,
) -> Result<TaskState> {
    let created_at = session_bundle(engine, session_id, pending_id)?;
    let waiter = engine.begin_wait(pending_id, None)?;
    let checked = PendingWait::new(engine.clone(), waiter).check()?;
    Ok(match checked {
        // A detach of the session does not end a task: the bundle is
        // still pending.
        Checked::Waiting(_) | Checked::Over(WaitOutcome::Detached) => {
            TaskState::Working { created_at }
        }
        Checked::Over(outcome) => TaskState::Settled {
            created_at,
            updated_at: outcome
                .response()
                .and_then(|response| response.responded_at)
                .unwrap_or_else(|| engine.now()),
            result: wait_result(pending_id, Ok(outcome)),
        },
    })
}

/// MCPA-5: the result of an asking call's wait on `pending_id`: the
/// resolution with its response, `expired` or `superseded`, or `pending`
/// (the wait was cut at `wait_ms`, or the host detached the session); an
/// error is a WIRE-4 error result.
pub fn wait_result(pending_id: &str, outcome: Result<WaitOutcome>) -> Value {
    match &outcome {
        Ok(outcome) => ok_result(&AskResultBody::of(pending_id, outcome)),
        Err(error) => error_result(error),
    }
}
