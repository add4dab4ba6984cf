//! The answering server (`--as`, WIRE-4): one principal's tools.

use clarion::mcp::{self, UnknownTool};
use clarion::{Clarion, Principal};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::{internal, tool_list, unknown_tool};

pub(super) struct AnswerServer {
    pub(super) clarion: Clarion,
    pub(super) principal: Principal,
}

impl ServerHandler for AnswerServer {
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
