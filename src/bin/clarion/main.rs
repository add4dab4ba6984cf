//! The clarion command line. `clarion demo` runs the main job on a fresh
//! SQLite file (OPS-1); the other subcommands expose the library to
//! operators and scripts against any database URL, `clarion mcp` serves
//! the external MCP tools over stdio (WIRE-4), and `clarion serve` the HTTP
//! API (HTTP-8) with the tokens of `clarion token` (HTTP-4).
//!
//! Every operation goes through the WIRE-5 JSON layer (`Clarion::call`),
//! so the command line answers exactly what the C ABI and a REST host would.

mod demo;
mod mcp_server;
mod serve;
mod text;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use clarion::envelope::Envelope;
use clarion::{Clarion, Principal};
use serde_json::{json, Map, Value};

#[derive(Parser)]
#[command(
    name = "clarion",
    version,
    about = "A durable \"ask a human\" inbox for agent backends",
    after_help = "Exit codes: 0 ok, 1 internal or database error, 2 usage, 3 not found, \
                  4 conflict (no longer active, session ended), 5 validation, \
                  6 capability denied, 7 timed out."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// Where and as whom.
#[derive(Args, Clone)]
struct Target {
    /// SQLite path or URL (`sqlite:///abs/path`), or a PostgreSQL URL.
    #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
    database_url: String,
    /// Who is calling: system, user:<id>, agent:<user>/<agent>:<grant,...>, unclassified.
    #[arg(long = "as", default_value = "system")]
    principal: Principal,
    /// Readable text instead of JSON.
    #[arg(long)]
    text: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole flow on a fresh SQLite file, narrating each step.
    Demo {
        /// Use this database instead of a fresh SQLite file.
        #[arg(long)]
        database_url: Option<String>,
    },
    /// List the bundles waiting for an answer (LIST-4 arguments).
    List {
        #[command(flatten)]
        target: Target,
        #[arg(long)]
        workspace: Option<String>,
        /// RFC 3339; only bundles created at or after it.
        #[arg(long)]
        since: Option<String>,
        /// `next_cursor` of the previous page.
        #[arg(long)]
        cursor: Option<String>,
        #[arg(long)]
        limit: Option<i64>,
    },
    /// Show one bundle, in any status.
    Get {
        pending_id: String,
        #[command(flatten)]
        target: Target,
    },
    /// Answer a bundle.
    Answer {
        pending_id: String,
        #[command(flatten)]
        target: Target,
        /// JSON: [{"question_id": ..., "selected_options": [...], "custom_text": ...}].
        #[arg(long)]
        answers: String,
    },
    /// Reject a bundle (decline to answer).
    Reject {
        pending_id: String,
        #[command(flatten)]
        target: Target,
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Cancel a bundle (humans and system only).
    Cancel {
        pending_id: String,
        #[command(flatten)]
        target: Target,
    },
    /// Count the bundles and questions waiting (SUM-1).
    Summary {
        #[command(flatten)]
        target: Target,
    },
    /// Ask a bundle on a session (a host operation).
    Ask {
        session_id: String,
        #[command(flatten)]
        target: Target,
        /// JSON: [{"title", "prompt", "options": [{"label", "description"}]}].
        #[arg(long)]
        questions: String,
        #[arg(long, default_value = "")]
        context: String,
        /// question or permission.
        #[arg(long, default_value = "question")]
        kind: String,
        #[arg(long)]
        idempotency_key: Option<String>,
    },
    /// Read the outbox of undelivered resolutions, or acknowledge one.
    Deliveries {
        #[command(flatten)]
        target: Target,
        #[arg(long)]
        limit: Option<i64>,
        /// Acknowledge this bundle's delivery instead of listing.
        #[arg(long, value_name = "PENDING_ID")]
        ack: Option<String>,
    },
    /// Delete bundles that stopped being active long ago (REL-8).
    Prune {
        #[command(flatten)]
        target: Target,
        /// How long ago: a number and a unit, e.g. 30d, 12h, 45m, 90s, 500ms.
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: u64,
    },
    /// Serve the HTTP API (HTTP-1..9) until SIGINT or SIGTERM.
    Serve(serve::ServeArgs),
    /// Manage the API tokens `clarion serve` accepts (HTTP-4).
    Token {
        #[command(subcommand)]
        command: serve::TokenCommand,
    },
    /// Serve the external MCP tools over stdio.
    Mcp {
        #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
        database_url: String,
        /// Whom the tools act for, e.g. user:alice or agent:alice/bot:questions:read.
        #[arg(long = "as")]
        principal: Principal,
    },
}

/// The operation, its arguments and the target of one command.
struct Request {
    op: &'static str,
    args: Value,
    target: Target,
}

/// `30d`, `12h`, `45m`, `90s`, `500ms` as milliseconds.
fn parse_age(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{text:?} needs a unit: ms, s, m, h or d"))?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} does not start with a number"))?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        other => return Err(format!("unknown unit {other:?}: use ms, s, m, h or d")),
    };
    number
        .checked_mul(unit_ms)
        .ok_or_else(|| format!("{text:?} is too long"))
}

fn parse_json(flag: &str, text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("{flag} is not valid JSON: {error}"))
}

/// Drops `None` arguments so that defaults apply.
fn arguments(pairs: &[(&str, Option<Value>)]) -> Value {
    let map: Map<String, Value> = pairs
        .iter()
        .filter_map(|(key, value)| value.clone().map(|value| ((*key).to_owned(), value)))
        .collect();
    Value::Object(map)
}

fn request_of(command: Command) -> Result<Request, String> {
    let (op, args, target) = match command {
        Command::List {
            target,
            workspace,
            since,
            cursor,
            limit,
        } => (
            "list_pending",
            arguments(&[
                ("workspace_id", workspace.map(Value::from)),
                ("created_since", since.map(Value::from)),
                ("cursor", cursor.map(Value::from)),
                ("limit", limit.map(Value::from)),
            ]),
            target,
        ),
        Command::Get { pending_id, target } => {
            ("get_bundle", json!({"pending_id": pending_id}), target)
        }
        Command::Answer {
            pending_id,
            target,
            answers,
        } => (
            "resolve_bundle",
            json!({"pending_id": pending_id, "answers": parse_json("--answers", &answers)?}),
            target,
        ),
        Command::Reject {
            pending_id,
            target,
            reason,
        } => (
            "resolve_bundle",
            json!({"pending_id": pending_id, "rejected": true, "reject_reason": reason}),
            target,
        ),
        Command::Cancel { pending_id, target } => {
            ("cancel_bundle", json!({"pending_id": pending_id}), target)
        }
        Command::Summary { target } => ("summary", json!({}), target),
        Command::Ask {
            session_id,
            target,
            questions,
            context,
            kind,
            idempotency_key,
        } => (
            "ask",
            json!({
                "session_id": session_id,
                "questions": parse_json("--questions", &questions)?,
                "context": context,
                "kind": kind,
                "idempotency_key": idempotency_key,
            }),
            target,
        ),
        Command::Deliveries {
            target,
            limit,
            ack: Some(pending_id),
        } => {
            if limit.is_some() {
                return Err("--limit and --ack cannot be combined".to_owned());
            }
            ("ack_delivery", json!({"pending_id": pending_id}), target)
        }
        Command::Deliveries {
            target,
            limit,
            ack: None,
        } => (
            "pending_deliveries",
            arguments(&[("limit", limit.map(Value::from))]),
            target,
        ),
        Command::Prune { target, older_than } => {
            ("prune", json!({"older_than_ms": older_than}), target)
        }
        Command::Demo { .. } | Command::Mcp { .. } | Command::Serve(_) | Command::Token { .. } => {
            return Err("not an operation".to_owned());
        }
    };
    Ok(Request { op, args, target })
}

/// A distinct exit code per outcome class (documented in `--help`).
fn exit_code(status: u16) -> ExitCode {
    ExitCode::from(match status {
        200 => 0,
        404 => 3,
        409 => 4,
        400 => 5,
        403 => 6,
        504 => 7,
        _ => 1,
    })
}

fn run(request: Request, op_name: &str) -> ExitCode {
    let clarion = match Clarion::open(&request.target.database_url) {
        Ok(clarion) => clarion,
        Err(error) => {
            eprintln!("clarion {op_name}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let reply: Envelope = clarion.call_value(&json!({
        "op": request.op,
        "principal": request.target.principal.to_wire(),
        "args": request.args,
    }));
    if request.target.text {
        if reply.status == 200 {
            println!("{}", text::render(request.op, &reply.body));
        } else {
            eprintln!(
                "clarion {op_name}: {} ({})",
                reply.body["error"].as_str().unwrap_or_default(),
                reply.status
            );
        }
    } else {
        println!("{}", reply.to_reply());
    }
    exit_code(reply.status)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Demo { database_url: None });
    let name = match &command {
        Command::Demo { .. } => "demo",
        Command::List { .. } => "list",
        Command::Get { .. } => "get",
        Command::Answer { .. } => "answer",
        Command::Reject { .. } => "reject",
        Command::Cancel { .. } => "cancel",
        Command::Summary { .. } => "summary",
        Command::Ask { .. } => "ask",
        Command::Deliveries { .. } => "deliveries",
        Command::Prune { .. } => "prune",
        Command::Mcp { .. } => "mcp",
        Command::Serve(_) => "serve",
        Command::Token { .. } => "token",
    };
    match command {
        Command::Demo { database_url } => match demo::run(database_url.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("clarion demo: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Mcp {
            database_url,
            principal,
        } => match mcp_server::serve(&database_url, principal) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("clarion mcp: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Serve(args) => match serve::serve(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("clarion serve: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Token { command } => match serve::token(command) {
            Ok(()) => ExitCode::SUCCESS,
            Err((error, code)) => {
                eprintln!("clarion token: {error}");
                ExitCode::from(code)
            }
        },
        command => match request_of(command) {
            Ok(request) => run(request, name),
            Err(message) => {
                eprintln!("clarion {name}: {message}");
                ExitCode::from(5)
            }
        },
    }
}
