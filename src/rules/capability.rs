//! The capability matrix (AUTH-2): who may perform which operation at
//! all, decided from the principal and the operation alone, before any
//! database read. Also the vocabulary of `authorize` (AUTH-8): its targets
//! and its answers. Visibility — who sees which bundle — is `visibility`'s.

use std::fmt;

use crate::error::{Error, ErrorCode, Result};
use crate::rules::limits::check_text;
use crate::rules::principal::{Grant, Principal};
use crate::rules::visibility::Scope;

/// Every operation clarion exposes (AUTH-2, WIRE-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// `list_pending` (LIST-1).
    ListPending,
    /// `get_bundle` (WIRE-3).
    GetBundle,
    /// `wait_bundle`, the external wait.
    WaitBundle,
    /// `summary` (SUM-1).
    Summary,
    /// `pending_actions` (PA-1).
    PendingActions,
    /// `resolve_bundle`: answer or reject.
    ResolveBundle,
    /// `cancel_bundle` (LIFE-6).
    CancelBundle,
    /// `authorize` (AUTH-8).
    Authorize,
    /// `upsert_workspace` (LIFE-1).
    UpsertWorkspace,
    /// `delete_workspace` (LIFE-1).
    DeleteWorkspace,
    /// `upsert_task` (LIFE-1).
    UpsertTask,
    /// `delete_task` (LIFE-1).
    DeleteTask,
    /// `upsert_session` (LIFE-1).
    UpsertSession,
    /// `delete_session` (LIFE-1).
    DeleteSession,
    /// `begin_turn` (LIFE-2).
    BeginTurn,
    /// `set_session_state` (LIFE-3).
    SetSessionState,
    /// `detach_session` (LIFE-5).
    DetachSession,
    /// `has_pending_clarification` (LIFE-7).
    HasPendingClarification,
    /// `ask` (ASK-1).
    Ask,
    /// `wait`, the agent side (WAIT-1).
    Wait,
    /// `pending_deliveries` (LIFE-8).
    PendingDeliveries,
    /// `ack_delivery` (LIFE-8).
    AckDelivery,
    /// `prune` (REL-8).
    Prune,
    /// `events_after` (EVT-2).
    EventsAfter,
    /// Reading the operational metrics (HTTP-7, `/metrics`). Not a WIRE-5
    /// operation: no JSON call performs it.
    Metrics,
}

/// What an agent needs for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentAccess {
    /// An agent holding this grant may.
    Needs(Grant),
    /// No agent may.
    Never,
}

/// Who besides `system` may perform an operation. `system` may do
/// everything; `unclassified` nothing but `authorize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Users may.
    pub user: bool,
    /// What an agent needs.
    pub agent: AgentAccess,
    /// `unclassified` may (only `authorize`).
    pub unclassified: bool,
}

const READ: Access = Access {
    user: true,
    agent: AgentAccess::Needs(Grant::QuestionsRead),
    unclassified: false,
};
const ANSWER: Access = Access {
    user: true,
    agent: AgentAccess::Needs(Grant::QuestionsAnswer),
    unclassified: false,
};
const HUMANS: Access = Access {
    user: true,
    agent: AgentAccess::Never,
    unclassified: false,
};
const HOST: Access = Access {
    user: false,
    agent: AgentAccess::Never,
    unclassified: false,
};
/// `authorize` answers for the caller and reports denials as its result.
const OPEN: Access = Access {
    user: true,
    agent: AgentAccess::Never,
    unclassified: true,
};

/// AUTH-2, the capability matrix: the one place that says who may do what.
pub const CAPABILITIES: [(Operation, &str, Access); 25] = [
    (Operation::ListPending, "list_pending", READ),
    (Operation::GetBundle, "get_bundle", READ),
    (Operation::WaitBundle, "wait_bundle", READ),
    (Operation::Summary, "summary", READ),
    (Operation::PendingActions, "pending_actions", READ),
    (Operation::ResolveBundle, "resolve_bundle", ANSWER),
    (Operation::CancelBundle, "cancel_bundle", HUMANS),
    (Operation::Authorize, "authorize", OPEN),
    (Operation::UpsertWorkspace, "upsert_workspace", HOST),
    (Operation::DeleteWorkspace, "delete_workspace", HOST),
    (Operation::UpsertTask, "upsert_task", HOST),
    (Operation::DeleteTask, "delete_task", HOST),
    (Operation::UpsertSession, "upsert_session", HOST),
    (Operation::DeleteSession, "delete_session", HOST),
    (Operation::BeginTurn, "begin_turn", HOST),
    (Operation::SetSessionState, "set_session_state", HOST),
    (Operation::DetachSession, "detach_session", HOST),
    (
        Operation::HasPendingClarification,
        "has_pending_clarification",
        HOST,
    ),
    (Operation::Ask, "ask", HOST),
    (Operation::Wait, "wait", HOST),
    (Operation::PendingDeliveries, "pending_deliveries", HOST),
    (Operation::AckDelivery, "ack_delivery", HOST),
    (Operation::Prune, "prune", HOST),
    // Section 13a.
    (Operation::EventsAfter, "events_after", READ),
    (Operation::Metrics, "metrics", HOST),
];

impl Operation {
    fn entry(self) -> Option<&'static (Operation, &'static str, Access)> {
        CAPABILITIES
            .iter()
            .find(|(operation, _, _)| *operation == self)
    }

    /// The operation's WIRE-5 name.
    pub fn as_str(self) -> &'static str {
        self.entry().map_or("", |entry| entry.1)
    }

    /// An operation missing from the matrix is denied to everyone but
    /// `system` (fail closed).
    pub fn access(self) -> Access {
        self.entry().map_or(HOST, |entry| entry.2)
    }

    /// The operation with this WIRE-5 name.
    pub fn parse(text: &str) -> Option<Operation> {
        CAPABILITIES
            .iter()
            .find(|(_, name, _)| *name == text)
            .map(|(operation, _, _)| *operation)
    }

    /// Every operation, in the matrix's order.
    pub fn all() -> impl Iterator<Item = Operation> {
        CAPABILITIES.iter().map(|(operation, _, _)| *operation)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// AUTH-2: may `principal` perform `operation` at all? No I/O.
pub fn has_capability(principal: &Principal, operation: Operation) -> bool {
    let access = operation.access();
    match principal {
        Principal::System => true,
        Principal::User { .. } => access.user,
        Principal::Agent { grants, .. } => match access.agent {
            AgentAccess::Needs(grant) => grants.contains(&grant),
            AgentAccess::Never => operation == Operation::Authorize,
        },
        Principal::Unclassified => access.unclassified,
    }
}

/// The start of every operation (AUTH-10): the capability check, then the
/// principal's ids (REL-6), then the scope the visibility fragments bind.
/// Operations that name a bundle check its id with [`admit_to_bundle`]. `unclassified` never gets this far.
pub(crate) fn admit(principal: &Principal, operation: Operation) -> Result<Scope> {
    if !has_capability(principal, operation) {
        return Err(Error::CapabilityDenied);
    }
    principal.check_text()?;
    Scope::of(principal).ok_or(Error::CapabilityDenied)
}

/// [`admit`] for an operation on one bundle: its `pending_id` is text
/// clarion can bind (REL-6) — a check that needs no database, so it comes
/// before visibility (AUTH-10).
pub(crate) fn admit_to_bundle(
    principal: &Principal,
    operation: Operation,
    pending_id: &str,
) -> Result<Scope> {
    let scope = admit(principal, operation)?;
    check_text("pending_id", pending_id)?;
    Ok(scope)
}

/// What `authorize` is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A bundle, by `pending_id`.
    Bundle(&'a str),
    /// A task, by id.
    Task(&'a str),
}

/// Why `authorize` said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// The principal may not perform the operation at all (AUTH-2).
    CapabilityDenied,
    /// The target does not exist or is invisible to the principal (AUTH-5).
    NotFound,
}

impl Denial {
    /// The reason's code word, the same as the matching error's.
    pub fn code(self) -> ErrorCode {
        match self {
            Denial::CapabilityDenied => ErrorCode::CapabilityDenied,
            Denial::NotFound => ErrorCode::NotFound,
        }
    }

    /// The reason's word on the wire.
    pub fn as_str(self) -> &'static str {
        self.code().as_str()
    }
}

/// The answer of `authorize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authorization {
    /// The principal may.
    Allowed,
    /// The principal may not, and why.
    Denied(Denial),
}

impl Authorization {
    /// True for [`Authorization::Allowed`].
    pub fn is_allowed(self) -> bool {
        self == Authorization::Allowed
    }
}
