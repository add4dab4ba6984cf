//! The capability rule (AUTH-2): who may perform an operation at all,
//! decided from the principal and the operation's access class alone,
//! before any database read. Each operation names its class in its one
//! declaration (`doors/operations/`), and the matrix is made from those;
//! this module says what each class admits. Also the vocabulary of
//! `authorize` (AUTH-8): its targets and its answers. Visibility — who
//! sees which bundle — is `visibility`'s.

use crate::error::{Error, ErrorCode, Result};
use crate::rules::links::LinkUse;
use crate::rules::principal::{Grant, Principal};
use crate::rules::visibility::Scope;
use crate::rules::vocabulary::Channel;

/// What an agent needs for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentAccess {
    /// Any agent may.
    Always,
    /// An agent holding this grant may.
    Needs(Grant),
    /// No agent may.
    Never,
}

/// Who besides `system` may perform an operation (its access class).
/// `system` may do everything; `unclassified` nothing but `authorize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Users may.
    pub user: bool,
    /// What an agent needs.
    pub agent: AgentAccess,
    /// `unclassified` may (only `authorize`).
    pub unclassified: bool,
}

/// Reading the inbox: users, and agents with `questions:read`.
pub const READ: Access = Access {
    user: true,
    agent: AgentAccess::Needs(Grant::QuestionsRead),
    unclassified: false,
};
/// Answering: users, and agents with `questions:answer`.
pub const ANSWER: Access = Access {
    user: true,
    agent: AgentAccess::Needs(Grant::QuestionsAnswer),
    unclassified: false,
};
/// Humans only: users (and `system`), never an agent.
pub const HUMANS: Access = Access {
    user: true,
    agent: AgentAccess::Never,
    unclassified: false,
};
/// Host operations: `system` only.
pub const HOST: Access = Access {
    user: false,
    agent: AgentAccess::Never,
    unclassified: false,
};
/// Everyone: `authorize`, which answers for the caller and reports a
/// denial as its result.
pub const OPEN: Access = Access {
    user: true,
    agent: AgentAccess::Always,
    unclassified: true,
};

impl Access {
    /// AUTH-2: may `principal` perform an operation of this class at all?
    /// No I/O.
    pub fn admits(self, principal: &Principal) -> bool {
        match principal {
            Principal::System => true,
            Principal::User { .. } => self.user,
            Principal::Agent { grants, .. } => match self.agent {
                AgentAccess::Always => true,
                AgentAccess::Needs(grant) => grants.contains(&grant),
                AgentAccess::Never => false,
            },
            Principal::Unclassified => self.unclassified,
        }
    }

    /// Open to every principal: nothing to hide, so `authorize` needs no
    /// target for it (AUTH-8).
    pub(crate) fn is_open(self) -> bool {
        self == OPEN
    }
}

/// A principal that passed an operation's capability check (AUTH-2), with
/// the scope the visibility fragments bind for it: what every external
/// operation of the domain takes, so none can run unchecked. Made only by
/// [`admit`].
#[derive(Debug)]
pub(crate) struct Admitted<'p> {
    principal: &'p Principal,
    /// `None` for `unclassified`, which only an operation open to everyone
    /// (`authorize`) admits, and which may see nothing.
    scope: Option<Scope>,
    /// The door it came through (AUD-4), recorded in the attempt ledger.
    channel: Channel,
    /// LINK-3: the answer link the call came with, which the win or the
    /// vote it makes uses up; `None` for every other credential.
    link: Option<LinkUse>,
}

impl<'p> Admitted<'p> {
    /// Who is calling.
    pub(crate) fn principal(&self) -> &'p Principal {
        self.principal
    }

    /// The door the call came through (AUD-4).
    pub(crate) fn channel(&self) -> Channel {
        self.channel
    }

    /// What it may see (AUTH-3..6); a caller that may see nothing is
    /// denied any operation that reads.
    pub(crate) fn scope(&self) -> Result<&Scope> {
        self.scope.as_ref().ok_or(Error::CapabilityDenied)
    }

    /// LINK-3: the answer link this call came with.
    pub(crate) fn link(&self) -> Option<&LinkUse> {
        self.link.as_ref()
    }
}

/// The start of every external operation (AUTH-10): the capability check
/// of the operation's class, then the principal's ids (REL-6), then the
/// scope the visibility fragments bind (none for `unclassified`, which
/// only `authorize` admits). `channel` is the door's (AUD-4).
pub(crate) fn admit(
    principal: &Principal,
    access: Access,
    channel: Channel,
) -> Result<Admitted<'_>> {
    if !access.admits(principal) {
        // AUD-1: a denied attempt is logged, never recorded.
        tracing::info!(
            principal = principal.kind(),
            channel = channel.as_str(),
            "capability denied"
        );
        return Err(Error::CapabilityDenied);
    }
    principal.check_text()?;
    Ok(Admitted {
        principal,
        scope: Scope::of(principal),
        channel,
        link: None,
    })
}

/// LINK-3: a call through an answer link's routes, as the user the link
/// names, recording channel `link`, carrying the link its win or vote
/// uses up. Admitted like that user's own call (AUTH-2).
#[cfg_attr(not(feature = "http"), allow(dead_code))] // for the HTTP door only
pub(crate) fn admit_link(
    principal: &Principal,
    access: Access,
    link: LinkUse,
) -> Result<Admitted<'_>> {
    let mut admitted = admit(principal, access, Channel::Link)?;
    admitted.link = Some(link);
    Ok(admitted)
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
