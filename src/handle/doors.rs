//! The doors a host reaches through the handle: the JSON call of the C
//! ABI (WIRE-5), the MCP tools (WIRE-4) and the asking tools' database
//! part (MCPA-3, MCPA-6).

use serde_json::Value;

use crate::doors::envelope::Envelope;
use crate::doors::mcp::UnknownTool;

use crate::error::Result;

use crate::rules::principal::Principal;

use crate::handle::clarion::Clarion;

impl Clarion {
    /// WIRE-5: performs one JSON request `{"op", "principal", "args"}` and
    /// returns its envelope. Never panics on input: malformed, oversized or
    /// too deeply nested text is a 400 naming the problem.
    pub fn call(&self, request: &str) -> Envelope {
        crate::doors::json::call(&self.engine, self.channel, request)
    }

    /// [`Clarion::call`] on raw bytes, which must be UTF-8.
    pub fn call_bytes(&self, request: &[u8]) -> Envelope {
        crate::doors::json::call_bytes(&self.engine, self.channel, request)
    }

    /// [`Clarion::call`] on an already parsed request.
    pub fn call_value(&self, request: &Value) -> Envelope {
        crate::doors::json::call_value(&self.engine, self.channel, request)
    }

    /// MCPA-3: the database part of an asking tool call on `session_id`'s
    /// server (`clarion mcp --ask-in`), as that session's host, recording
    /// channel `mcp`: a result now, or the bundle to wait on and for how
    /// long (MCPA-4), whose outcome [`crate::mcp::wait_result`] turns into
    /// the result. Reads and writes the database briefly: an async caller
    /// runs it on a blocking pool.
    pub fn start_ask_tool(
        &self,
        session_id: &str,
        tool: crate::doors::mcp::AskTool,
        arguments: &Value,
    ) -> crate::doors::mcp::AskStep {
        tool.start(&self.engine, session_id, arguments)
    }

    /// MCPA-6: where the task of an asking call on `session_id` stands —
    /// its bundle read as a wait's check reads it (a due bundle settled,
    /// a received resolution acknowledged) — so tasks survive a restart of
    /// the server. Not-found for a bundle that is not the session's.
    pub fn ask_task(
        &self,
        session_id: &str,
        pending_id: &str,
    ) -> Result<crate::doors::mcp_asking::TaskState> {
        crate::doors::mcp_asking::task_state(&self.engine, session_id, pending_id)
    }

    /// WIRE-4: performs one MCP tool call and returns the MCP result
    /// (`content`, `structuredContent`, `isError`).
    pub fn call_tool(
        &self,
        principal: &Principal,
        name: &str,
        arguments: &Value,
    ) -> std::result::Result<Value, UnknownTool> {
        crate::doors::mcp::call_tool(&self.engine, principal, name, arguments)
    }
}
