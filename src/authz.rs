//! Principals (AUTH-1), the capability matrix (AUTH-2) and `authorize`
//! (AUTH-8..10).
//!
//! The capability check depends only on the principal and the operation and
//! runs before any database read. Visibility (who may see which bundle) is
//! the `visibility` module's; `authorize` combines the two.

use std::collections::BTreeSet;
use std::fmt;

use diesel::prelude::*;

use crate::error::{Error, Result};
use crate::schema::{bundles, tasks};
use crate::visibility::{self, Scope};
use crate::Clarion;

/// What an API-key agent may do beyond nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grant {
    QuestionsRead,
    QuestionsAnswer,
}

impl Grant {
    pub const ALL: [Grant; 2] = [Grant::QuestionsRead, Grant::QuestionsAnswer];

    pub fn as_str(self) -> &'static str {
        match self {
            Grant::QuestionsRead => "questions:read",
            Grant::QuestionsAnswer => "questions:answer",
        }
    }

    pub fn parse(text: &str) -> Option<Grant> {
        Grant::ALL.into_iter().find(|grant| grant.as_str() == text)
    }
}

/// Who is calling (AUTH-1). Exactly four kinds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Principal {
    /// An internal caller, or a deployment with authentication off. Unscoped.
    System,
    /// A session-authenticated human.
    User { user_id: String },
    /// An API-key agent acting for its owner `user_id`.
    Agent {
        user_id: String,
        agent_id: String,
        grants: BTreeSet<Grant>,
    },
    /// A credential the host cannot classify. Denied everything.
    Unclassified,
}

impl Principal {
    pub fn user(user_id: impl Into<String>) -> Principal {
        Principal::User {
            user_id: user_id.into(),
        }
    }

    pub fn agent(
        user_id: impl Into<String>,
        agent_id: impl Into<String>,
        grants: impl IntoIterator<Item = Grant>,
    ) -> Principal {
        Principal::Agent {
            user_id: user_id.into(),
            agent_id: agent_id.into(),
            grants: grants.into_iter().collect(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Principal::System => "system",
            Principal::User { .. } => "user",
            Principal::Agent { .. } => "agent",
            Principal::Unclassified => "unclassified",
        }
    }

    /// The id recorded for audit: the user id, `user/agent` for an agent.
    pub fn audit_id(&self) -> String {
        match self {
            Principal::System | Principal::Unclassified => String::new(),
            Principal::User { user_id } => user_id.clone(),
            Principal::Agent {
                user_id, agent_id, ..
            } => format!("{user_id}/{agent_id}"),
        }
    }
}

impl std::str::FromStr for Principal {
    type Err = String;

    /// `system`, `unclassified`, `user:<id>`, or
    /// `agent:<user>/<agent>[:<grant>,<grant>]` (the command-line form).
    fn from_str(text: &str) -> Result<Principal, String> {
        match text.split_once(':') {
            None if text == "system" => Ok(Principal::System),
            None if text == "unclassified" => Ok(Principal::Unclassified),
            Some(("user", user_id)) if !user_id.is_empty() => Ok(Principal::user(user_id)),
            Some(("agent", rest)) => {
                let (who, grants) = rest.split_once(':').unwrap_or((rest, ""));
                let Some((user_id, agent_id)) = who.split_once('/') else {
                    return Err(format!("agent principal {text:?} needs <user>/<agent>"));
                };
                if user_id.is_empty() || agent_id.is_empty() {
                    return Err(format!("agent principal {text:?} needs <user>/<agent>"));
                }
                let grants = grants
                    .split(',')
                    .filter(|g| !g.is_empty())
                    .map(|g| Grant::parse(g).ok_or_else(|| format!("unknown grant {g:?}")))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Principal::agent(user_id, agent_id, grants))
            }
            _ => Err(format!(
                "unknown principal {text:?}: use system, user:<id> or agent:<user>/<agent>:<grants>"
            )),
        }
    }
}

/// Every operation clarion exposes (AUTH-2, WIRE-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    ListPending,
    GetBundle,
    WaitBundle,
    Summary,
    PendingActions,
    ResolveBundle,
    CancelBundle,
    Authorize,
    UpsertWorkspace,
    DeleteWorkspace,
    UpsertTask,
    DeleteTask,
    UpsertSession,
    DeleteSession,
    BeginTurn,
    SetSessionState,
    DetachSession,
    HasPendingClarification,
    Ask,
    Wait,
    PendingDeliveries,
    AckDelivery,
}

/// What an agent needs for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentAccess {
    Needs(Grant),
    Never,
}

/// Who besides `system` may perform an operation. `system` may do
/// everything; `unclassified` nothing but `authorize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub user: bool,
    pub agent: AgentAccess,
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
pub const CAPABILITIES: [(Operation, &str, Access); 22] = [
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
];

impl Operation {
    fn entry(self) -> Option<&'static (Operation, &'static str, Access)> {
        CAPABILITIES
            .iter()
            .find(|(operation, _, _)| *operation == self)
    }

    pub fn as_str(self) -> &'static str {
        self.entry().map_or("", |entry| entry.1)
    }

    /// An operation missing from the matrix is denied to everyone but
    /// `system` (fail closed).
    pub fn access(self) -> Access {
        self.entry().map_or(HOST, |entry| entry.2)
    }

    pub fn parse(text: &str) -> Option<Operation> {
        CAPABILITIES
            .iter()
            .find(|(_, name, _)| *name == text)
            .map(|(operation, _, _)| *operation)
    }

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

/// The capability check as an error, for the start of every operation.
pub(crate) fn require_capability(principal: &Principal, operation: Operation) -> Result<()> {
    if has_capability(principal, operation) {
        Ok(())
    } else {
        Err(Error::CapabilityDenied)
    }
}

/// What `authorize` is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    Bundle(&'a str),
    Task(&'a str),
}

/// Why `authorize` said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    CapabilityDenied,
    NotFound,
}

impl Denial {
    pub fn as_str(self) -> &'static str {
        match self {
            Denial::CapabilityDenied => "capability_denied",
            Denial::NotFound => "not_found",
        }
    }
}

/// The answer of [`Clarion::authorize`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authorization {
    Allowed,
    Denied(Denial),
}

impl Authorization {
    pub fn is_allowed(self) -> bool {
        self == Authorization::Allowed
    }
}

impl Clarion {
    /// AUTH-8: may `principal` perform `operation` on `target`? Capability
    /// first (no I/O), then visibility from durable rows only (AUTH-9): the
    /// task of a bundle is derived from its stored row, never taken from the
    /// caller. Invisible and nonexistent targets give the same `not_found`.
    pub fn authorize(
        &self,
        principal: &Principal,
        operation: Operation,
        target: Target<'_>,
    ) -> Result<Authorization> {
        if !has_capability(principal, operation) {
            return Ok(Authorization::Denied(Denial::CapabilityDenied));
        }
        let Some(scope) = Scope::of(principal) else {
            return Ok(Authorization::Denied(Denial::CapabilityDenied));
        };
        // `authorize` needs no target: answering it with a lookup would let a
        // principal without any grant probe which bundles exist.
        if operation == Operation::Authorize {
            return Ok(Authorization::Allowed);
        }
        let visible = self.read_one(|conn| {
            Ok(match target {
                Target::Bundle(pending_id) => {
                    bundle_visibility_query(&scope, pending_id).get_result::<bool>(conn)?
                }
                Target::Task(task_id) => {
                    task_visibility_query(&scope, task_id).get_result::<bool>(conn)?
                }
            })
        })?;
        Ok(if visible {
            Authorization::Allowed
        } else {
            Authorization::Denied(Denial::NotFound)
        })
    }
}

/// AUTH-8: is the bundle visible to the scope?
#[diesel::dsl::auto_type]
pub fn bundle_visibility_query<'a>(scope: &'a Scope, pending_id: &'a str) -> _ {
    let visible: visibility::bundle_visible<'a> = visibility::bundle_visible(scope);
    diesel::dsl::select(diesel::dsl::exists(
        bundles::table
            .filter(bundles::pending_id.eq(pending_id))
            .filter(visible)
            .select(bundles::pending_id),
    ))
}

/// AUTH-8: is the task visible to the scope?
#[diesel::dsl::auto_type]
pub fn task_visibility_query<'a>(scope: &'a Scope, task_id: &'a str) -> _ {
    let visible: visibility::task_visible<'a> = visibility::task_visible(scope);
    diesel::dsl::select(diesel::dsl::exists(
        tasks::table
            .filter(tasks::id.eq(task_id))
            .filter(visible)
            .select(tasks::id),
    ))
}
