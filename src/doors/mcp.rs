//! WIRE-4: the external MCP surface. Two tools, their JSON Schemas, and a
//! dispatcher that reads arguments with the same parsers as the C ABI
//! (`call`), so a tool and its operation can never disagree.

use serde_json::{json, Value};

use crate::domain::engine::Engine;
use crate::doors::envelope;
use crate::doors::json::{self, Fields};
use crate::error::{Error, Result};
use crate::rules::capability::{has_capability, Operation};
use crate::rules::limits::{DEFAULT_PAGE_SIZE, MAX_FREE_TEXT_RUNES, MAX_PAGE_SIZE};
use crate::rules::principal::Principal;

/// The external tools and the operation each one performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `list_pending_questions`: LIST-4 arguments, a LIST-5 page.
    ListPendingQuestions,
    /// `answer_question`: answer or reject one bundle.
    AnswerQuestion,
}

impl Tool {
    /// Every tool.
    pub const ALL: [Tool; 2] = [Tool::ListPendingQuestions, Tool::AnswerQuestion];

    /// The tool's name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::ListPendingQuestions => "list_pending_questions",
            Tool::AnswerQuestion => "answer_question",
        }
    }

    /// The tool with this name.
    pub fn parse(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// The capability a caller needs (AUTH-2).
    pub fn operation(self) -> Operation {
        match self {
            Tool::ListPendingQuestions => Operation::ListPending,
            Tool::AnswerQuestion => Operation::ResolveBundle,
        }
    }

    /// `{"name", "description", "inputSchema"}`.
    pub fn definition(self) -> Value {
        match self {
            Tool::ListPendingQuestions => json!({
                "name": self.name(),
                "description": "List the clarification requests waiting for an answer that you \
                    may see, oldest first. Each bundle holds one to four questions with their \
                    options. Pass next_cursor back as cursor to read the next page.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "workspace_id": {"type": "string", "description": "Only bundles of this workspace."},
                        "created_since": {"type": "string", "format": "date-time", "description": "Only bundles created at or after this RFC 3339 time."},
                        "cursor": {"type": "string", "description": "next_cursor of the previous page."},
                        "limit": {"type": "integer", "description": format!("Page size: default {DEFAULT_PAGE_SIZE}, at most {MAX_PAGE_SIZE}.")},
                    },
                    "additionalProperties": false,
                },
            }),
            Tool::AnswerQuestion => json!({
                "name": self.name(),
                "description": "Answer or reject one clarification request. Give one answer per \
                    question, or rejected=true with an optional reason. Exactly one caller wins; \
                    if someone answered first you get claimed=false and their answer.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "pending_id": {"type": "string", "description": "The bundle to answer."},
                        "answers": {
                            "type": "array",
                            "description": "One entry per question of the bundle.",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "question_id": {"type": "string"},
                                    "selected_options": {"type": "array", "items": {"type": "string"}, "description": "option_ids of the chosen options."},
                                    "custom_text": {"type": "string", "description": format!("Free text, at most {MAX_FREE_TEXT_RUNES} characters.")},
                                },
                                "required": ["question_id"],
                                "additionalProperties": false,
                            },
                        },
                        "rejected": {"type": "boolean", "description": "Decline to answer; then give no answers."},
                        "reject_reason": {"type": "string", "description": format!("Why, at most {MAX_FREE_TEXT_RUNES} characters.")},
                    },
                    "required": ["pending_id"],
                    "additionalProperties": false,
                },
            }),
        }
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
        .filter(|tool| has_capability(principal, tool.operation()))
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
    Ok(match perform_tool(engine, principal, tool, arguments) {
        Ok(structured) => envelope::tool_result(structured, false),
        Err(error) => envelope::tool_result(envelope::tool_error(&error), true),
    })
}

fn perform_tool(
    engine: &Engine,
    principal: &Principal,
    tool: Tool,
    arguments: &Value,
) -> Result<Value> {
    if !has_capability(principal, tool.operation()) {
        return Err(Error::CapabilityDenied);
    }
    let empty = json!({});
    let arguments = if arguments.is_null() {
        &empty
    } else {
        arguments
    };
    let args = Fields::top(arguments, "arguments")?;
    match tool {
        Tool::ListPendingQuestions => {
            let page = engine.list_pending(principal, &json::list_request(&args)?)?;
            Ok(envelope::list_page(&page).body)
        }
        Tool::AnswerQuestion => {
            let (pending_id, request) = json::resolve_request(&args)?;
            let resolved = engine.resolve_bundle(principal, pending_id, &request)?;
            Ok(envelope::tool_answered(&resolved))
        }
    }
}
