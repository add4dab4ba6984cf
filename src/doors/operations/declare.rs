//! The vocabulary of a declaration: the trait every operation implements
//! ([`Declared`]), what an operation that waits ([`Waits`]) or backs an
//! MCP tool ([`Tooled`]) adds, and the plain data of its route, its
//! refusals and its command line.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::domain::delivery::wait::Waiter;
use crate::domain::engine::waiters::Wake;
use crate::domain::engine::Engine;
use crate::doors::args;
use crate::error::Result;
use crate::rules::capability::{admit, Access, Admitted};
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;

/// An HTTP method of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
}

/// An operation's own REST route (HTTP-2). The path's `{names}` are
/// arguments taken from the path; the others come from the query (`GET`)
/// or the JSON body (`POST`). Every operation is also at `/rpc/{name}`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Route {
    pub(crate) method: Method,
    pub(crate) path: &'static str,
    /// The OpenAPI tag that groups it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // the OpenAPI document's
    pub(crate) tag: &'static str,
}

/// A status an operation can answer besides `200`, `400`, `403`, `500`
/// and `503`, which every operation can (WIRE-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `404`: an unknown or hidden bundle, or an unknown host entity.
    NotFound,
    /// `409`: no longer active, or the session has ended.
    Conflict,
    /// `504`: the wait timed out.
    TimedOut,
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // the OpenAPI document's
impl Refusal {
    pub(crate) fn status(self) -> u16 {
        match self {
            Refusal::NotFound => 404,
            Refusal::Conflict => 409,
            Refusal::TimedOut => 504,
        }
    }
}

/// What the HTTP door's `/metrics` counts of an operation's replies
/// (HTTP-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    /// Only the request (every route is counted by route).
    Requests,
    /// Also the outcome: a winner under its resolution, a loser as one.
    Resolves,
}

/// How a command-line value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliValue {
    /// As its argument's JSON type says: text, an integer, a flag for a
    /// boolean, JSON text for an array or an object.
    AsTyped,
    /// An age (`30d`, `12h`, `45m`, `90s`, `500ms`) given to an argument
    /// in milliseconds.
    Age,
    /// Comma-separated words given to an argument that is a list of
    /// strings (`--events bundle.asked,bundle.closed`).
    List,
}

/// One argument's spelling on the command line.
#[derive(Debug, Clone, Copy)]
pub struct CliArg {
    /// The WIRE-5 argument.
    pub arg: &'static str,
    /// Its flag, without `--` (`""`: a positional argument).
    pub flag: &'static str,
    /// How its value is written.
    pub value: CliValue,
}

/// A subcommand of `clarion` that performs the operation (OPS-1). Its
/// arguments are the operation's; those not listed in `args` are flags
/// named like the argument (`--idempotency-key`).
#[derive(Debug, Clone, Copy)]
pub struct CliCommand {
    /// The group it is under (`webhook` for `clarion webhook add`); `""`
    /// for a command of its own.
    pub group: &'static str,
    /// The subcommand.
    pub name: &'static str,
    /// Its one-line help.
    pub about: &'static str,
    /// Arguments spelt otherwise than `--<argument>`.
    pub args: &'static [CliArg],
    /// Arguments the subcommand sets itself (`reject` sets `rejected`).
    pub fixed: &'static [(&'static str, bool)],
    /// Arguments the subcommand leaves out (`answer` takes no reason).
    pub skip: &'static [&'static str],
}

impl CliCommand {
    pub(crate) const fn new(name: &'static str, about: &'static str) -> CliCommand {
        CliCommand {
            group: "",
            name,
            about,
            args: &[],
            fixed: &[],
            skip: &[],
        }
    }

    /// How a user types it after `clarion`: `members set`, `ask`.
    pub fn spelt(&self) -> String {
        if self.group.is_empty() {
            self.name.to_owned()
        } else {
            format!("{} {}", self.group, self.name)
        }
    }
}

/// A positional command-line argument.
pub(crate) const fn positional(arg: &'static str) -> CliArg {
    CliArg {
        arg,
        flag: "",
        value: CliValue::AsTyped,
    }
}

/// A flag spelt otherwise than its argument.
pub(crate) const fn flag(arg: &'static str, flag: &'static str) -> CliArg {
    CliArg {
        arg,
        flag,
        value: CliValue::AsTyped,
    }
}

/// One operation, declared once.
pub(crate) trait Declared: 'static {
    /// Its WIRE-5 name, also its row of the capability matrix.
    const NAME: &'static str;
    /// What it does, in one line (the OpenAPI summary, the CLI's help).
    const SUMMARY: &'static str;
    /// Who may perform it (AUTH-2).
    const ACCESS: Access;
    /// Its arguments as WIRE-5 reads them.
    type Args: DeserializeOwned + JsonSchema;
    /// What the domain returns.
    type Reply: 'static;
    /// The body of its `200` (WIRE-1..3).
    type Body<'a>: Serialize + JsonSchema + From<&'a Self::Reply>;
    /// What it can answer besides the statuses every operation can.
    const REFUSALS: &'static [Refusal] = &[];
    /// Its own REST route, if it has one.
    const HTTP: Option<Route> = None;
    /// The subcommands that perform it.
    const CLI: &'static [CliCommand] = &[];
    /// What `/metrics` counts of its replies.
    const COUNTED: Counted = Counted::Requests;

    /// Performs it for an admitted caller.
    fn perform(engine: &Engine, caller: &Admitted<'_>, args: Self::Args) -> Result<Self::Reply>;

    /// AUTH-2 for this operation: the start of its every door.
    fn admit(principal: &Principal, channel: Channel) -> Result<Admitted<'_>> {
        admit(principal, Self::ACCESS, channel)
    }

    /// WIRE-5's order: the capability first (before the arguments are
    /// even read), then the arguments, then the domain.
    fn run(
        engine: &Engine,
        principal: &Principal,
        channel: Channel,
        args: &Value,
    ) -> Result<Self::Reply> {
        let caller = Self::admit(principal, channel)?;
        let args = read_args::<Self::Args>(args)?;
        Self::perform(engine, &caller, args)
    }
}

/// An operation's arguments, read by the one WIRE-5 reader; absent
/// (`null`) arguments are `{}`.
pub(crate) fn read_args<A: DeserializeOwned>(args: &Value) -> Result<A> {
    Ok(args::read(args::or_empty(args), "args")?)
}

/// An operation an async door waits on without a thread (HTTP-5): the
/// library's `PendingWait`, begun and ended as the operation says.
pub(crate) trait Waits: Declared {
    /// What the wait ends with.
    type Outcome: Send + 'static;
    /// The timeout the caller asked for, if any.
    fn asked(args: &Self::Args) -> Option<Duration>;
    /// Whether the caller's own timeout detaches what it waits on
    /// (WAIT-1); a wait that says not ends as a door's cap ends it.
    fn detaches(_args: &Self::Args) -> bool {
        true
    }
    /// Registers the wait (authorized, on the blocking pool).
    fn begin(
        engine: &Engine,
        caller: &Admitted<'_>,
        args: Self::Args,
        wake: Arc<Wake>,
    ) -> Result<Waiter<Self::Outcome>>;
    /// The operation's reply for the outcome.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
    fn reply(outcome: Self::Outcome) -> Self::Reply;
}

/// An external MCP tool (WIRE-4): the operation it performs, its name and
/// description, and the `structuredContent` of its success.
pub(crate) trait Tooled: Declared {
    /// The tool's name.
    const TOOL: &'static str;
    /// What the tool tells a model about itself.
    const DESCRIPTION: &'static str;
    /// Its successful result.
    type Result<'a>: Serialize + JsonSchema + From<&'a Self::Reply>;
    /// Its place in `tools/list`: the order in which tools were added,
    /// which clients have seen since (the registry's is the matrix's).
    const LISTED: usize;
}

/// What an MCP door does after an asking tool's database part (MCPA-3).
#[derive(Debug)]
pub enum AskStep {
    /// The call's result (success or error), an MCP `CallToolResult`.
    Done(Value),
    /// Wait on this bundle (the agent-side wait, [`crate::Clarion::begin_wait`])
    /// for at most `wait`, then pass the outcome to
    /// [`crate::mcp::wait_result`].
    Wait {
        /// The bundle to wait on.
        pending_id: String,
        /// How long, already clamped (MCPA-4).
        wait: Duration,
    },
}

/// An asking tool of `clarion mcp --ask-in` (MCPA-3): its name, what it
/// tells a model, its schemas, and the database part of a call on the
/// server's one session, as that session's host.
pub(crate) trait Asking: 'static {
    /// The tool's name.
    const NAME: &'static str;
    /// What the tool tells a model about itself.
    const DESCRIPTION: &'static str;
    /// The `structuredContent` of its success.
    type Result: JsonSchema;
    /// Its arguments' schema, self-contained.
    fn input_schema() -> Value;
    /// The call's database part: a result now, or a wait.
    fn start(engine: &Engine, session_id: &str, arguments: &Value) -> Result<AskStep>;
}
