//! The clarion command line. `clarion demo` runs the main job on a fresh
//! SQLite file (OPS-1); the other subcommands expose the library to
//! operators and scripts against any database URL, `clarion mcp` serves
//! the external MCP tools over stdio (WIRE-4), and `clarion serve` the HTTP
//! API (HTTP-8) with the tokens of `clarion token` (HTTP-4).
//!
//! The subcommands that perform an operation are made from the
//! operations' declarations (`operations.rs`) and go through the WIRE-5
//! JSON layer (`Clarion::call`), so the command line answers exactly what
//! the C ABI and a REST host would.

mod database;
mod demo;
mod links;
mod mail;
mod mcp;
mod mirroring;
mod nudges;
mod operations;
mod quorum;
mod readable;
mod serve;
mod webhook;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use clarion::{Channel, Timestamp};

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

#[derive(Subcommand)]
enum Command {
    /// Run the whole flow on a fresh SQLite file, saying what happens at each step.
    Demo {
        /// Use this database instead of a fresh SQLite file.
        #[arg(long)]
        database_url: Option<String>,
        /// Also print each step's envelope, as compact JSON under it.
        #[arg(long, conflicts_with = "text")]
        json: bool,
        /// Only the narration, in words (the default).
        #[arg(long)]
        text: bool,
    },
    /// Serve the web inbox and the HTTP API until SIGINT or SIGTERM.
    Serve(serve::ServeArgs),
    /// Manage the API tokens `clarion serve` accepts.
    Token {
        #[command(subcommand)]
        command: serve::TokenCommand,
    },
    /// Serve the MCP tools over stdio: the answering tools (--as), or the asking tools for
    /// one session (--ask-in).
    Mcp(mcp::McpArgs),
    /// Read the attempt ledger: every attempt to answer, kept.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Write every ledger entry as JSON Lines, oldest first (system).
    Export {
        #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
        database_url: String,
        /// From this time on, inclusive (RFC 3339).
        #[arg(long, value_parser = parse_time)]
        since: Option<Timestamp>,
        /// Before this time, exclusive (RFC 3339).
        #[arg(long, value_parser = parse_time)]
        until: Option<Timestamp>,
    },
}

fn parse_time(text: &str) -> Result<Timestamp, String> {
    Timestamp::parse_rfc3339(text)
        .ok_or_else(|| format!("{text:?} is not an RFC 3339 time, e.g. 2026-12-03T14:05:00Z"))
}

/// AUD-3: `clarion audit export`, through a buffered writer, one line per
/// entry; memory stays constant whatever the ledger's size.
fn export(
    database_url: &str,
    since: Option<Timestamp>,
    until: Option<Timestamp>,
) -> Result<u64, Box<dyn std::error::Error>> {
    use std::io::Write;
    let clarion = database::builder(database_url).open()?.via(Channel::Cli);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = clarion.export_attempts(since, until, |entry| {
        serde_json::to_writer(&mut out, entry)?;
        out.write_all(b"\n")
    })?;
    out.flush()?;
    clarion.close();
    Ok(written)
}

/// `30d`, `12h`, `45m`, `90s`, `500ms` as milliseconds. A bare number is
/// refused: `--older-than 30` could mean thirty of anything, and a guess
/// would prune or expire on the wrong scale.
pub(crate) fn parse_age(text: &str) -> Result<u64, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(|| {
        format!("{text:?} needs a unit: {text}ms, {text}s, {text}m, {text}h or {text}d")
    })?;
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

/// `clarion demo`, printing until its reader goes away.
fn demo(database_url: Option<&str>, json: bool) -> Result<(), demo::Failure> {
    stdout_closes_quietly();
    demo::run(database_url, json)
}

/// A command that prints its result ends quietly when its reader goes
/// away (`clarion demo | head`), as command-line tools do, instead of
/// failing to print. Not for the servers, which write to sockets.
fn stdout_closes_quietly() {
    // SAFETY: restores the default action of one signal before any thread
    // is started; nothing else in this process handles SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A distinct exit code per outcome class (documented in `--help`).
pub(crate) fn exit_code(status: u16) -> ExitCode {
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

fn main() -> ExitCode {
    // The operations' subcommands come from their declarations; the rest
    // (demo, serve, token, mcp) are this binary's own.
    let app = Cli::command().subcommands(operations::commands(webhook::commands()));
    let matches = app.get_matches();
    if let Some((name, sub)) = matches.subcommand() {
        let (group, name, sub) = match sub.subcommand() {
            Some((inner, inner_sub)) if operations::is_group(name) => (name, inner, inner_sub),
            _ => ("", name, sub),
        };
        if let Some((operation, command)) = operations::find(group, name) {
            stdout_closes_quietly();
            return operations::run(operation, command, sub);
        }
        if group == "webhook" {
            if let Some(code) = webhook::run(name, sub) {
                return code;
            }
        }
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let command = cli.command.unwrap_or(Command::Demo {
        database_url: None,
        json: false,
        text: true,
    });
    match command {
        Command::Demo {
            database_url, json, ..
        } => match demo(database_url.as_deref(), json) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("clarion demo: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Mcp(args) => mcp::run(args),
        Command::Serve(args) => match serve::serve(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(refused) => {
                eprintln!("clarion serve: {}", refused.message());
                ExitCode::from(refused.code())
            }
        },
        Command::Audit {
            command:
                AuditCommand::Export {
                    database_url,
                    since,
                    until,
                },
        } => match export(&database_url, since, until) {
            Ok(_) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("clarion audit export: {error}");
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
    }
}
