//! WIRE-4: the external MCP surface. The tools are the operations whose
//! declarations back one (`doors/operations/`): each tool's input schema is
//! its operation's arguments' schema, its output schema the schema of its
//! `structuredContent`, and a call reads its arguments and performs its
//! operation exactly as the C ABI would, so a tool and its operation can
//! never disagree.

use serde_json::{json, Value};

use crate::domain::engine::Engine;
use crate::doors::envelope;
use crate::doors::operations::Operation;
use crate::rules::principal::Principal;

pub use crate::doors::mcp_asking::{ask_tool_definitions, wait_result, TaskState};
pub use crate::doors::operations::{AskStep, AskTool, Tool};

impl Tool {
    /// The tool's name.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The tool with this name.
    pub fn parse(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// The operation it performs, whose capability a caller needs (AUTH-2).
    pub fn operation(self) -> Operation {
        self.entry().operation
    }

    /// `{"name", "description", "inputSchema", "outputSchema"}`: the
    /// schemas self-contained (JSON Schema 2020-12); the output is the
    /// success's `structuredContent` (an error's is `{"error", "code"}`).
    pub fn definition(self) -> Value {
        let tool = self.entry();
        let input = tool
            .operation
            .args_schema()
            .unwrap_or_else(|| json!({"type": "object"}));
        json!({
            "name": tool.name,
            "description": tool.description,
            "inputSchema": input,
            "outputSchema": (tool.result_schema)(),
        })
    }
}

/// Every tool definition, whoever asks.
pub fn tool_definitions() -> Vec<Value> {
    Tool::ALL.into_iter().map(Tool::definition).collect()
}

/// WIRE-4: the tools `principal` may call; a denied tool is absent.
pub fn tools_for(principal: &Principal) -> Vec<Value> {
    Tool::ALL
        .into_iter()
        .filter(|tool| tool.operation().access().admits(principal))
        .map(Tool::definition)
        .collect()
}

/// A call to a tool that does not exist: a protocol error for the MCP
/// server, not a tool result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool {0:?}")]
pub struct UnknownTool(pub String);

/// WIRE-4: performs one tool call and returns the MCP result
/// (`content`, `structuredContent`, `isError`). Absent arguments are an
/// empty object.
pub(crate) fn call_tool(
    engine: &Engine,
    principal: &Principal,
    name: &str,
    arguments: &Value,
) -> std::result::Result<Value, UnknownTool> {
    let tool = Tool::parse(name).ok_or_else(|| UnknownTool(name.to_owned()))?;
    let arguments = crate::doors::args::or_empty(arguments);
    Ok(match (tool.entry().call)(engine, principal, arguments) {
        Ok(structured) => envelope::tool_result(structured, false),
        Err(error) => envelope::tool_result(envelope::tool_error(&error), true),
    })
}
