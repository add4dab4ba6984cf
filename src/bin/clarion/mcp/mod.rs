//! `clarion mcp`: the external tools (WIRE-4) served over stdio with the
//! official Rust MCP SDK. The tool definitions, argument checks and results
//! all come from the library (`clarion::mcp`); these files only adapt them
//! to the protocol. The async runtime lives here, in the binary: each tool
//! call runs the synchronous library on a blocking thread.
//!
//! `answering.rs` serves one principal's tools (`--as`), `asking.rs` one
//! session's (`--ask-in`), `tasks.rs` the asking server's MCP tasks, and
//! `stdio.rs` the line framing both are served over.

mod answering;
mod asking;
mod stdio;
mod tasks;

use std::process::ExitCode;
use std::time::Duration;

use clarion::drive::BlockingPool;
use clarion::{Error, Principal};
use rmcp::model::{ListToolsResult, Tool};
use rmcp::ErrorData;
use serde_json::Value;

use crate::mirroring::MirrorArgs;

// WIRE-4 (`--as`) and MCPA-1 (`--ask-in`); the doc comments below are
// the command's help, for people: no requirement ids there.
/// `clarion mcp`'s arguments: the answering tools for one principal
/// (`--as`), or the asking tools for one session (`--ask-in`).
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
    /// session, as its host.
    #[arg(long)]
    ask_in: Option<String>,
    /// With --ask-in: the task, workspace and owner to record first.
    #[command(flatten)]
    mirror: MirrorArgs,
    /// How long the questions this server asked stay attached to it after it ends, before
    /// their answers go to the host's outbox: `30s` by default.
    #[arg(long, value_name = "AGE", value_parser = crate::parse_age)]
    attachment_lease: Option<u64>,
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
    let mut builder = crate::database::builder(&args.database_url);
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
            let server = asking::AskServer::new(clarion, session_id, &args.mirror)?;
            runtime.block_on(stdio::run_stdio(server))
        }
        None => {
            let principal = args.principal.ok_or("give --as or --ask-in")?;
            let server = answering::AnswerServer { clarion, principal };
            runtime.block_on(stdio::run_stdio(server))
        }
    };
    // REL-7: the ledger's appender writes what it holds before the exit.
    closing.close();
    served
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

/// Where a wait's reads run: tokio's blocking pool, a panicked read an
/// internal error.
struct Blocking;

impl BlockingPool for Blocking {
    type Error = ErrorData;

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        tokio::task::spawn_blocking(work).await.map_err(internal)
    }
}
