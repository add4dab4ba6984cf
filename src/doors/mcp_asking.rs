//! MCPA-3..6: the asking tools of `clarion mcp --ask-in <session>` as an
//! MCP door serves them, a set of their own beside WIRE-4's answering
//! tools. Each is declared once (`doors/operations/asking.rs`) and
//! registered with the operations ([`AskTool`]); this adds their
//! definitions, the results of their waits, and the tasks of MCPA-6.
//!
//! The library stays synchronous: `Clarion::start_ask_tool` does the call's
//! database part and says whether the door must now wait; the door drives
//! that wait without a thread (the library's [`crate::PendingWait`], as the
//! HTTP door does, HTTP-5) for at most the call's `wait_ms`, and turns its
//! outcome into the result with [`wait_result`].

use std::sync::Arc;

use serde_json::{json, Value};

use crate::domain::delivery::wait::{Checked, PendingWait};
use crate::domain::engine::Engine;
use crate::domain::views::WaitOutcome;
use crate::doors::args;
use crate::doors::envelope::bodies::AskResultBody;
use crate::doors::operations::{error_result, ok_result, session_bundle, AskStep, AskTool};
use crate::error::Result;
use crate::store::Timestamp;

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

impl AskTool {
    /// The tool's name.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The tool with this name.
    pub fn parse(name: &str) -> Option<AskTool> {
        AskTool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// `{"name", "description", "inputSchema", "outputSchema"}`, the
    /// schemas self-contained (JSON Schema 2020-12).
    pub fn definition(self) -> Value {
        let entry = self.entry();
        json!({
            "name": entry.name,
            "description": entry.description,
            "inputSchema": (entry.input_schema)(),
            "outputSchema": (entry.result_schema)(),
        })
    }

    /// MCPA-3: the database part of a call on `session_id`'s server. A
    /// bundle of another session, a deleted one or an unknown id is
    /// `not_found`; absent arguments are `{}`.
    pub(crate) fn start(self, engine: &Engine, session_id: &str, arguments: &Value) -> AskStep {
        (self.entry().start)(engine, session_id, args::or_empty(arguments))
            .unwrap_or_else(|error| AskStep::Done(error_result(&error)))
    }
}

/// Every asking tool's definition.
pub fn ask_tool_definitions() -> Vec<Value> {
    AskTool::ALL.into_iter().map(AskTool::definition).collect()
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
