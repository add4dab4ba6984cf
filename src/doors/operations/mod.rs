//! One declaration per operation. Each WIRE-5 operation is a unit struct
//! implementing [`Declared`] in the file of its area (`answering.rs`,
//! `mirror.rs`, `agent.rs`): its name, its capability row (an access
//! class), its typed arguments and its typed body, the statuses it can
//! answer besides the common ones, and, where it has them, its HTTP route
//! and its command line; an external tool of WIRE-4 implements [`Tooled`]
//! beside it. Everything else is derived from these declarations:
//!
//! - the [`Operation`] enum, the capability matrix ([`CAPABILITIES`]) and
//!   [`has_capability`] (AUTH-2, section 13a), from the registry below;
//! - the JSON door's dispatch (WIRE-5, [`Entry::call`]): capability →
//!   arguments (read by `doors::args`, so every message names its field)
//!   → the domain → the body's envelope;
//! - the Rust API's checks ([`Declared::admit`]);
//! - the OpenAPI paths and schemas, the REST routes and `/rpc/{op}` (the
//!   HTTP door), the MCP tools' input and output schemas, and the command
//!   line's subcommands ([`Operation`]'s schema, route and CLI accessors).
//!
//! Adding an operation: its typed function in the domain, one declaration
//! here, one line in the registry, and its tests (`docs/architecture.md`
//! shows a worked example).

mod agent;
mod answering;
mod asking;
pub(crate) mod declare;
mod links;
mod mail;
mod mirror;
mod people;
mod webhooks;

/// LINK-3: the link door's respond reads an answer as `resolve_bundle` does.
#[cfg(feature = "http")]
pub(crate) use answering::AnswerArgs;

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::domain::delivery::wait::{Checked, PendingWait};
use crate::domain::engine::waiters::Wake;
use crate::domain::engine::Engine;
use crate::doors::args::schema::{self, Side};
use crate::doors::args::{self, given, Id};
use crate::doors::envelope::bodies::AuthorizationBody;
use crate::doors::envelope::{self, Envelope};
use crate::error::{Error, Result, ValidationError};
use crate::rules::capability::{admit, Access, Admitted, Authorization, Target, HOST, OPEN};
use crate::rules::limits::WaitBounds;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;

pub(crate) use asking::{error_result, ok_result, session_bundle};
pub(crate) use declare::{
    read_args, Asking, Counted, Declared, Method, Refusal, Route, Tooled, Waits,
};
pub use declare::{AskStep, CliArg, CliCommand, CliValue};
pub use schema::{Property, PropertyKind};

/// WIRE-5 for one declared operation ([`Declared::run`]); every error
/// is its WIRE-1 envelope.
fn call<D: Declared>(
    engine: &Engine,
    principal: &Principal,
    channel: Channel,
    args: &Value,
) -> Envelope {
    D::run(engine, principal, channel, args)
        .map(|reply| envelope::ok_with(&D::Body::from(&reply)))
        .unwrap_or_else(|error| envelope::error(&error))
}

/// A WIRE-4 tool call: the operation, its result as the tool's.
fn call_tool<D: Tooled>(engine: &Engine, principal: &Principal, args: &Value) -> Result<Value> {
    let caller = D::admit(principal, Channel::Mcp)?;
    let args = args::read::<D::Args>(args, "arguments")?;
    let reply = D::perform(engine, &caller, args)?;
    let result = envelope::to_json(&D::Result::from(&reply));
    Ok(result)
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
/// A wait as an async door drives it: checked on the blocking pool at once
/// and whenever its callback fires, ended at `timeout` (HTTP-5).
pub(crate) struct DoorWait {
    pending: Box<dyn ErasedWait>,
    /// How long the door waits.
    pub(crate) timeout: Duration,
    /// The door's cap, not the caller's own timeout, ends it: nothing is
    /// detached then (WAIT-1b).
    pub(crate) cut: bool,
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
/// What a check of a [`DoorWait`] found.
pub(crate) enum Step {
    /// Over, with the operation's envelope.
    Over(Envelope),
    /// Check again when woken.
    Waiting(DoorWait),
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
impl DoorWait {
    /// Reads the bundle (briefly: run it on a blocking pool).
    pub(crate) fn check(self) -> Step {
        let DoorWait {
            pending,
            timeout,
            cut,
        } = self;
        match pending.check() {
            Ok(pending) => Step::Waiting(DoorWait {
                pending,
                timeout,
                cut,
            }),
            Err(over) => Step::Over(over),
        }
    }

    /// The deadline came: the outcome that landed meanwhile, else the
    /// timeout's — as capped when the door cut it.
    pub(crate) fn end(self) -> Envelope {
        self.pending.end(self.cut)
    }

    /// How often to check when no callback can come (WAIT-3's bound).
    pub(crate) fn poll_interval(&self) -> Option<Duration> {
        self.pending.poll_interval()
    }

    /// WAIT-5: the bundle's deadline, when to check again regardless.
    pub(crate) fn next_check(&self) -> Option<std::time::Instant> {
        self.pending.next_check()
    }
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
/// A typed `PendingWait`, its outcome turned into the operation's envelope.
trait ErasedWait: Send {
    /// Still waiting, or over with the envelope.
    fn check(self: Box<Self>) -> std::result::Result<Box<dyn ErasedWait>, Envelope>;
    fn end(self: Box<Self>, cut: bool) -> Envelope;
    fn poll_interval(&self) -> Option<Duration>;
    fn next_check(&self) -> Option<std::time::Instant>;
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
struct Typed<D: Waits> {
    pending: PendingWait<D::Outcome>,
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
fn reply_envelope<D: Waits>(outcome: Result<D::Outcome>) -> Envelope {
    match outcome {
        Ok(outcome) => envelope::ok_with(&D::Body::from(&D::reply(outcome))),
        Err(error) => envelope::error(&error),
    }
}

impl<D: Waits> ErasedWait for Typed<D> {
    fn check(self: Box<Self>) -> std::result::Result<Box<dyn ErasedWait>, Envelope> {
        match self.pending.check() {
            Ok(Checked::Waiting(pending)) => Ok(Box::new(Typed::<D> { pending })),
            Ok(Checked::Over(outcome)) => Err(reply_envelope::<D>(Ok(outcome))),
            Err(error) => Err(envelope::error(&error)),
        }
    }

    fn end(self: Box<Self>, cut: bool) -> Envelope {
        let ended = if cut {
            self.pending.capped()
        } else {
            self.pending.timed_out()
        };
        reply_envelope::<D>(ended)
    }

    fn poll_interval(&self) -> Option<Duration> {
        self.pending.poll_interval()
    }

    fn next_check(&self) -> Option<std::time::Instant> {
        self.pending.next_check()
    }
}

/// Begins a declared wait for an async door under that door's `bounds`:
/// capability, arguments, then the library's `begin`; a refusal is the
/// operation's envelope.
fn begin_wait<D: Waits>(
    engine: &Arc<Engine>,
    principal: &Principal,
    channel: Channel,
    args: &Value,
    bounds: WaitBounds,
    wake: Arc<Wake>,
) -> std::result::Result<DoorWait, Envelope> {
    let started = (|| {
        let caller = D::admit(principal, channel)?;
        let args = read_args::<D::Args>(args)?;
        let asked = D::asked(&args);
        let detaches = D::detaches(&args);
        let waiter = D::begin(engine, &caller, args, wake)?;
        Ok::<_, Error>((waiter, asked, detaches))
    })();
    let (waiter, asked, detaches) = started.map_err(|error| envelope::error(&error))?;
    Ok(DoorWait {
        pending: Box::new(Typed::<D> {
            pending: PendingWait::new(engine.clone(), waiter),
        }),
        timeout: bounds.serve(asked),
        cut: bounds.cuts(asked) || !detaches,
    })
}

/// A schema of a declared type, in the shape a door needs; named types go
/// into the map of components.
pub(crate) type SchemaOf = fn(Shape, &mut Map<String, Value>) -> Value;

/// WIRE-5 for one operation: who, through which door (AUD-4), with
/// which arguments.
pub(crate) type JsonCall = fn(&Engine, &Principal, Channel, &Value) -> Envelope;

/// Begins a declared wait for an async door under that door's bounds.
pub(crate) type BeginWait = fn(
    &Arc<Engine>,
    &Principal,
    Channel,
    &Value,
    WaitBounds,
    Arc<Wake>,
) -> std::result::Result<DoorWait, Envelope>;

/// A door's view of one declaration, its types erased.
pub(crate) struct Entry {
    pub(crate) operation: Operation,
    pub(crate) name: &'static str,
    pub(crate) summary: &'static str,
    pub(crate) access: Access,
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // the OpenAPI document's
    pub(crate) refusals: &'static [Refusal],
    pub(crate) http: Option<Route>,
    pub(crate) cli: &'static [CliCommand],
    /// WIRE-5; `None` for a matrix row no JSON call performs (`metrics`).
    pub(crate) call: Option<JsonCall>,
    /// For an async door, when the operation waits.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // for the async doors only
    pub(crate) begin_wait: Option<BeginWait>,
    /// The arguments' schema (`None` without a JSON call).
    pub(crate) args_schema: Option<SchemaOf>,
    /// The `200` body's schema.
    pub(crate) body_schema: Option<SchemaOf>,
    /// What `/metrics` counts of its replies.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // the HTTP door's
    pub(crate) counted: Counted,
}

/// A door's view of one WIRE-4 tool.
pub(crate) struct ToolEntry {
    /// The operation it performs, whose capability a caller needs.
    pub(crate) operation: Operation,
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) call: fn(&Engine, &Principal, &Value) -> Result<Value>,
    pub(crate) result_schema: fn() -> Value,
}

pub(crate) use schema::Shape;

fn args_schema<D: Declared>(shape: Shape, components: &mut Map<String, Value>) -> Value {
    match shape {
        Shape::Inline => schema::inline::<D::Args>(Side::Arguments),
        Shape::Components => schema::component::<D::Args>(Side::Arguments, components),
    }
}

fn body_schema<D: Declared>(shape: Shape, components: &mut Map<String, Value>) -> Value {
    match shape {
        Shape::Inline => schema::inline::<D::Body<'static>>(Side::Bodies),
        Shape::Components => schema::component::<D::Body<'static>>(Side::Bodies, components),
    }
}

fn result_schema<D: Tooled>() -> Value {
    schema::inline::<D::Result<'static>>(Side::Bodies)
}

impl ToolEntry {
    const fn of<D: Tooled>(operation: Operation) -> ToolEntry {
        ToolEntry {
            operation,
            name: D::TOOL,
            description: D::DESCRIPTION,
            call: call_tool::<D>,
            result_schema: result_schema::<D>,
        }
    }
}

/// A door's view of one asking tool (MCPA-3).
pub(crate) struct AskingEntry {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) input_schema: fn() -> Value,
    pub(crate) result_schema: fn() -> Value,
    pub(crate) start: fn(&Engine, &str, &Value) -> Result<AskStep>,
}

impl AskingEntry {
    const fn of<D: Asking>() -> AskingEntry {
        AskingEntry {
            name: D::NAME,
            description: D::DESCRIPTION,
            input_schema: D::input_schema,
            result_schema: asking_result_schema::<D>,
            start: D::start,
        }
    }
}

fn asking_result_schema<D: Asking>() -> Value {
    schema::inline::<D::Result>(Side::Bodies)
}

impl Entry {
    const fn of<D: Declared>(operation: Operation) -> Entry {
        Entry {
            operation,
            name: D::NAME,
            summary: D::SUMMARY,
            access: D::ACCESS,
            refusals: D::REFUSALS,
            http: D::HTTP,
            cli: D::CLI,
            call: Some(call::<D>),
            begin_wait: None,
            args_schema: Some(args_schema::<D>),
            body_schema: Some(body_schema::<D>),
            counted: D::COUNTED,
        }
    }

    const fn waiting<D: Waits>(self) -> Entry {
        Entry {
            begin_wait: Some(begin_wait::<D>),
            ..self
        }
    }

    /// A row of the matrix that no JSON call performs.
    const fn capability(
        operation: Operation,
        name: &'static str,
        summary: &'static str,
        access: Access,
    ) -> Entry {
        Entry {
            operation,
            name,
            summary,
            access,
            refusals: &[],
            http: None,
            cli: &[],
            call: None,
            begin_wait: None,
            args_schema: None,
            body_schema: None,
            counted: Counted::Requests,
        }
    }
}

/// `authorize`'s arguments (AUTH-8): an operation and exactly one target.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [
    {"required": ["pending_id"], "properties": {"pending_id": {"type": "string", "minLength": 1},
        "task_id": {"enum": ["", null]}}},
    {"required": ["task_id"], "properties": {"task_id": {"type": "string", "minLength": 1},
        "pending_id": {"enum": ["", null]}}},
]))]
pub(crate) struct AuthorizeArgs {
    /// The name of the operation asked about (WIRE-5).
    #[schemars(with = "Operation")]
    operation: Id,
    /// A bundle, by id.
    pending_id: Option<String>,
    /// A task, by id.
    task_id: Option<String>,
}

/// `authorize` (AUTH-8).
pub(crate) struct Authorize;

impl Declared for Authorize {
    const NAME: &'static str = "authorize";
    // AUTH-8.
    const SUMMARY: &'static str = "May the caller perform an operation on a bundle or a task? \
        A denial is the answer, never an error.";
    const ACCESS: crate::rules::capability::Access = OPEN;
    type Args = AuthorizeArgs;
    type Reply = Authorization;
    type Body<'a> = AuthorizationBody;

    fn perform(
        engine: &Engine,
        caller: &Admitted<'_>,
        args: AuthorizeArgs,
    ) -> Result<Authorization> {
        let operation = Operation::parse(&args.operation).ok_or_else(|| {
            ValidationError::new(
                "operation",
                format!("unknown operation {:?}", args.operation.0),
            )
        })?;
        let (pending_id, task_id) = (given(args.pending_id), given(args.task_id));
        let target = match (&pending_id, &task_id) {
            (Some(pending_id), None) => Target::Bundle(pending_id),
            (None, Some(task_id)) => Target::Task(task_id),
            _ => {
                return Err(ValidationError::new(
                    "pending_id",
                    "give exactly one of pending_id and task_id",
                )
                .into())
            }
        };
        engine.authorize(caller.principal(), operation.access(), target)
    }
}

/// The registry: every operation once, in the matrix's order, with what
/// its declaration provides beyond [`Declared`] (`wait`: [`Waits`];
/// `tool`: the WIRE-4 [`Tool`] it backs, [`Tooled`]), and the asking
/// tools of MCPA-3 ([`Asking`]). The enums [`Operation`], [`Tool`] and
/// [`AskTool`], their lists and their entries are all made here, so none
/// can name a declaration that is not registered.
macro_rules! registry {
    (
        declared { $( $(#[$doc:meta])* $variant:ident => $decl:ty $([$($extra:tt)*])?, )* }
        capability_only { $( $(#[$cdoc:meta])* $cvariant:ident => $cname:literal, $csummary:literal, $caccess:expr, )* }
        asking { $( $(#[$adoc:meta])* $avariant:ident => $adecl:ty, )* }
    ) => {
        /// Every operation clarion exposes (AUTH-2, WIRE-5), each declared
        /// once in `doors/operations/`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Operation {
            $( $(#[$doc])* $variant, )*
            $( $(#[$cdoc])* $cvariant, )*
        }

        /// Every declaration, in the matrix's order: the variants' order, so
        /// an operation's entry is found by its index (checked as the crate
        /// compiles).
        const ENTRY_LIST: &[Entry] = &[
            $( registry!(@entry $variant $decl $([$($extra)*])?), )*
            $( Entry::capability(Operation::$cvariant, $cname, $csummary, $caccess), )*
        ];

        registry!(@tools [] $( $variant $decl $([$($extra)*])? ; )*);

        /// The asking tools of `clarion mcp --ask-in` (MCPA-3).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum AskTool {
            $( $(#[$adoc])* $avariant, )*
        }

        impl AskTool {
            /// Every asking tool.
            pub const ALL: [AskTool; registry!(@count $($avariant)*)] = [$(AskTool::$avariant),*];

            pub(crate) fn entry(self) -> AskingEntry {
                match self {
                    $( AskTool::$avariant => AskingEntry::of::<$adecl>(), )*
                }
            }
        }
    };
    (@entry $variant:ident $decl:ty) => { Entry::of::<$decl>(Operation::$variant) };
    (@entry $variant:ident $decl:ty [wait]) => { Entry::of::<$decl>(Operation::$variant).waiting::<$decl>() };
    (@entry $variant:ident $decl:ty [tool $tool:ident]) => { Entry::of::<$decl>(Operation::$variant) };
    // The WIRE-4 tools: the registry lines marked `[tool Name]`, gathered.
    (@tools [$( ($tool:ident $tvariant:ident $tdecl:ty) )*]) => {
        /// The external tools (WIRE-4), each backed by the operation whose
        /// registry line names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Tool {
            $( #[doc = concat!("The tool of the operation `", stringify!($tvariant), "`.")] $tool, )*
        }

        impl Tool {
            /// Every tool, in `tools/list`'s order (each declaration's `LISTED`).
            pub const ALL: [Tool; registry!(@count $($tool)*)] = {
                let mut all = [$(Tool::$tool),*];
                $( all[<$tdecl as Tooled>::LISTED] = Tool::$tool; )*
                // Each place taken once: no tool lost to another's place.
                let mut i = 0;
                while i < all.len() {
                    let mut j = 0;
                    while j < i {
                        assert!(all[i] as usize != all[j] as usize);
                        j += 1;
                    }
                    i += 1;
                }
                all
            };

            pub(crate) fn entry(self) -> ToolEntry {
                match self {
                    $( Tool::$tool => ToolEntry::of::<$tdecl>(Operation::$tvariant), )*
                }
            }
        }
    };
    (@tools [$($found:tt)*] $variant:ident $decl:ty [tool $tool:ident] ; $($rest:tt)*) => {
        registry!(@tools [$($found)* ($tool $variant $decl)] $($rest)*);
    };
    (@tools [$($found:tt)*] $variant:ident $decl:ty $([$($extra:tt)*])? ; $($rest:tt)*) => {
        registry!(@tools [$($found)*] $($rest)*);
    };
    (@count) => { 0 };
    (@count $head:ident $($tail:ident)*) => { 1 + registry!(@count $($tail)*) };
}

/// Every declaration, in the matrix's order.
pub(crate) static ENTRIES: &[Entry] = ENTRY_LIST;

/// [`Operation::entry`] is exact: the `n`th entry is the `n`th variant's.
const _: () = {
    let mut index = 0;
    while index < ENTRY_LIST.len() {
        assert!(ENTRY_LIST[index].operation as usize == index);
        index += 1;
    }
};

registry! {
    declared {
    /// `list_pending` (LIST-1).
    ListPending => answering::ListPending [tool ListPendingQuestions],
    /// `list_settled` (LIST-12).
    ListSettled => answering::ListSettled [tool ListSettledQuestions],
    /// `get_bundle` (WIRE-3).
    GetBundle => answering::GetBundle,
    /// `wait_bundle`, the external wait.
    WaitBundle => answering::WaitBundle [wait],
    /// `summary` (SUM-1).
    Summary => answering::Summary,
    /// `pending_actions` (PA-1).
    PendingActions => answering::PendingActions,
    /// `resolve_bundle`: answer or reject.
    ResolveBundle => answering::ResolveBundle [tool AnswerQuestion],
    /// `cancel_bundle` (LIFE-6).
    CancelBundle => answering::CancelBundle,
    /// `authorize` (AUTH-8).
    Authorize => Authorize,
    /// `upsert_workspace` (LIFE-1).
    UpsertWorkspace => mirror::UpsertWorkspace,
    /// `delete_workspace` (LIFE-1).
    DeleteWorkspace => mirror::DeleteWorkspace,
    /// `upsert_task` (LIFE-1).
    UpsertTask => mirror::UpsertTask,
    /// `delete_task` (LIFE-1).
    DeleteTask => mirror::DeleteTask,
    /// `upsert_session` (LIFE-1).
    UpsertSession => mirror::UpsertSession,
    /// `delete_session` (LIFE-1).
    DeleteSession => mirror::DeleteSession,
    /// `begin_turn` (LIFE-2).
    BeginTurn => mirror::BeginTurn,
    /// `set_session_state` (LIFE-3).
    SetSessionState => mirror::SetSessionState,
    /// `detach_session` (LIFE-5).
    DetachSession => mirror::DetachSession,
    /// `has_pending_clarification` (LIFE-7).
    HasPendingClarification => agent::HasPendingClarification,
    /// `ask` (ASK-1).
    Ask => agent::Ask,
    /// `wait`, the agent side (WAIT-1).
    Wait => agent::Wait [wait],
    /// `pending_deliveries` (LIFE-8).
    PendingDeliveries => agent::PendingDeliveries,
    /// `ack_delivery` (LIFE-8).
    AckDelivery => agent::AckDelivery,
    /// `prune` (REL-8).
    Prune => agent::Prune,
    /// `events_after` (EVT-2).
    EventsAfter => answering::EventsAfter,
    /// `expire_due` (EXP-4).
    ExpireDue => agent::ExpireDue,
    /// `attempts` (AUD-3).
    Attempts => answering::Attempts,
    /// `webhook_add` (HOOK-1).
    WebhookAdd => webhooks::WebhookAddOp,
    /// `webhook_list` (HOOK-6).
    WebhookList => webhooks::WebhookListOp,
    /// `webhook_enable` (HOOK-1, HOOK-5).
    WebhookEnable => webhooks::WebhookEnableOp,
    /// `webhook_disable` (HOOK-1, HOOK-5).
    WebhookDisable => webhooks::WebhookDisableOp,
    /// `webhook_remove` (HOOK-1).
    WebhookRemove => webhooks::WebhookRemoveOp,
    /// `webhook_rotate` (HOOK-3).
    WebhookRotate => webhooks::WebhookRotateOp,
    /// `upsert_user` (PPL-1).
    UpsertUser => people::UpsertUser,
    /// `delete_user` (PPL-1).
    DeleteUser => people::DeleteUser,
    /// `list_users` (PPL-1).
    ListUsers => people::ListUsers,
    /// `set_members` (PPL-2).
    SetMembers => people::SetMembers,
    /// `members` (PPL-2).
    Members => people::Members,
    /// `people` (PPL-1a).
    People => people::People,
    /// `whoami` (PPL-1a).
    Whoami => people::Whoami,
    /// `answer_link` (LINK-1).
    AnswerLink => links::AnswerLinkOp,
    /// `rotate_link_key` (LINK-1).
    RotateLinkKey => links::RotateLinkKeyOp,
    /// `mail_status` (MAIL-1a).
    MailStatus => mail::MailStatusOp,
    }
    capability_only {
    /// Reading the operational metrics (HTTP-7, `/metrics`). Not a WIRE-5
    /// operation: no JSON call performs it.
    Metrics => "metrics", "Prometheus text of the door's figures.", HOST,
    }
    asking {
    /// `ask_human`: asks on the server's session, then waits.
    AskHuman => asking::AskHuman,
    /// `wait_for_answer`: waits again on one of the session's bundles.
    WaitForAnswer => asking::WaitForAnswer,
    /// `cancel_question`: withdraws one of the session's pending bundles.
    CancelQuestion => asking::CancelQuestion,
    }
}

/// AUTH-2, the capability matrix: who may perform which operation, one
/// row per declaration, in the matrix's order.
pub fn capabilities() -> impl Iterator<Item = (Operation, &'static str, Access)> {
    ENTRIES
        .iter()
        .map(|entry| (entry.operation, entry.name, entry.access))
}

impl Operation {
    /// Its declaration: the entry at its index (exact, checked as the
    /// crate compiles).
    pub(crate) fn entry(self) -> &'static Entry {
        &ENTRIES[self as usize]
    }

    /// The operation's WIRE-5 name.
    pub fn as_str(self) -> &'static str {
        self.entry().name
    }

    /// Who may perform it (its row of the matrix).
    pub fn access(self) -> Access {
        self.entry().access
    }

    /// AUTH-2 for this operation: the start of every door's call of it.
    pub(crate) fn admit(self, principal: &Principal, channel: Channel) -> Result<Admitted<'_>> {
        admit(principal, self.access(), channel)
    }

    /// The operation with this WIRE-5 name.
    pub fn parse(text: &str) -> Option<Operation> {
        ENTRIES
            .iter()
            .find(|entry| entry.name == text)
            .map(|entry| entry.operation)
    }

    /// Every operation, in the matrix's order.
    pub fn all() -> impl Iterator<Item = Operation> {
        ENTRIES.iter().map(|entry| entry.operation)
    }

    /// What it does, in one line.
    pub fn summary(self) -> &'static str {
        self.entry().summary
    }

    /// True for a WIRE-5 operation (every one but `metrics`, a matrix row
    /// no JSON call performs).
    pub fn is_call(self) -> bool {
        self.entry().call.is_some()
    }

    /// The JSON Schema (2020-12, self-contained) of its WIRE-5 arguments:
    /// what every door publishes for them (the OpenAPI document, an MCP
    /// tool's `inputSchema`, the command line's flags).
    pub fn args_schema(self) -> Option<Value> {
        self.entry()
            .args_schema
            .map(|schema| schema(Shape::Inline, &mut Map::new()))
    }

    /// Its arguments' properties, read from [`Operation::args_schema`]:
    /// what a door that reads them from words needs (the command line's
    /// flags, a query string).
    pub fn properties(self) -> Vec<Property> {
        self.args_schema()
            .map(|schema| schema::properties(&schema))
            .unwrap_or_default()
    }

    /// The JSON Schema of its `200` body.
    pub fn body_schema(self) -> Option<Value> {
        self.entry()
            .body_schema
            .map(|schema| schema(Shape::Inline, &mut Map::new()))
    }

    /// The name of its `200` body's type (`ListPage`, `Resolved`, …), the
    /// name the OpenAPI document's components give it.
    pub fn body_name(self) -> Option<String> {
        let schema = self.entry().body_schema?(Shape::Components, &mut Map::new());
        let reference = schema["$ref"].as_str()?;
        reference.rsplit('/').next().map(str::to_owned)
    }

    /// The `clarion` subcommands that perform it (OPS-1).
    pub fn cli(self) -> &'static [CliCommand] {
        self.entry().cli
    }

    /// Its own REST route (method and path), where it has one (HTTP-2);
    /// every operation is also at `POST /api/v1/rpc/{name}`.
    pub fn route(self) -> Option<(&'static str, &'static str)> {
        self.entry().http.map(|route| {
            let method = match route.method {
                Method::Get => "GET",
                Method::Post => "POST",
            };
            (method, route.path)
        })
    }

    /// The operation a WIRE-5 request names: a JSON call (not `metrics`).
    pub(crate) fn callable(text: &str) -> Option<&'static Entry> {
        ENTRIES
            .iter()
            .find(|entry| entry.name == text && entry.call.is_some())
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// AUTH-2: may `principal` perform `operation` at all? No I/O.
pub fn has_capability(principal: &Principal, operation: Operation) -> bool {
    operation.access().admits(principal)
}

/// `authorize.operation`: one of the WIRE-5 names.
impl JsonSchema for Operation {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Operation".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ENTRIES.iter().map(|entry| entry.name).collect();
        schemars::json_schema!({"type": "string", "enum": names})
    }
}
