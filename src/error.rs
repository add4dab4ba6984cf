//! Typed errors, and what each one is on the wire: its HTTP status
//! (WIRE-1) and its code word (WIRE-4), defined once here beside the
//! error itself. Every fallible library call returns one of these; nothing
//! panics on input.

use std::fmt;

use crate::store::failpoints::Injected;
use crate::store::{DbError, Failure, Outage};

pub use crate::store::OpenError;

/// An entity an operation needed and did not find (LIFE-10, AUTH-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Entity {
    /// A workspace of the host mirror.
    Workspace,
    /// A task of the host mirror.
    Task,
    /// An agent session.
    Session,
    /// A bundle; its public name is "clarification request" (WIRE-1).
    Bundle,
    /// An API token (HTTP-4).
    Token,
    /// A webhook endpoint (HOOK-1).
    Webhook,
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Entity::Workspace => "workspace",
            Entity::Task => "task",
            Entity::Session => "session",
            Entity::Bundle => "clarification request",
            Entity::Token => "token",
            Entity::Webhook => "webhook",
        })
    }
}

/// A request that breaks a rule checkable without guessing: the message
/// always starts with the offending field (ASK-2, VAL-7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// The field's path, e.g. `answers[1].selected_options`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl ValidationError {
    /// A validation error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ValidationError {}

/// The error of every operation on an open [`crate::Clarion`] handle. Its
/// `Display` text is the `error` member of the wire body (WIRE-1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The entity does not exist, or the principal may not see it (AUTH-5).
    #[error("{0} not found")]
    NotFound(Entity),
    /// The request breaks a rule; the message names the field.
    #[error(transparent)]
    Validation(#[from] ValidationError),
    /// AUTH-2: the principal may not perform this operation at all.
    #[error("capability not authorized")]
    CapabilityDenied,
    /// REPLAY-1: the bundle stopped being active and nobody resolved it
    /// (superseded, its session ended, it expired, or it is malformed).
    #[error("clarification request is no longer active")]
    NoLongerActive,
    /// QUO-3: the caller is the quorum's requester, or not among its
    /// eligible voters.
    #[error("not an eligible voter")]
    NotEligible,
    /// QUO-3: the caller already voted on this quorum bundle, otherwise.
    #[error("already voted")]
    AlreadyVoted,
    /// LINK-3: the answer link already answered or voted once.
    #[error("link already used")]
    LinkUsed,
    /// WIRE-3 `wait_bundle`: the timeout passed first.
    #[error("timed out waiting for a response")]
    TimedOut,
    /// ASK-5: asking on a session in a terminal state.
    #[error("session has ended")]
    SessionEnded,
    /// The database or the connection pool failed.
    #[error(transparent)]
    Database(DbError),
    /// PROD-2: the database is unreachable, full or read-only; the request
    /// may succeed once it is back.
    #[error("{}", outage.message())]
    Unavailable {
        /// Which outage.
        outage: Outage,
        /// What the database reported.
        #[source]
        cause: DbError,
    },
    /// REL-7: the handle was closed; a wait blocked on it ends at once.
    #[error("handle closed")]
    HandleClosed,
    /// A broken invariant inside clarion; the message says which.
    #[error("internal error: {0}")]
    Internal(String),
    /// A fault injected by a test (feature `test-hooks` only).
    #[cfg(feature = "test-hooks")]
    #[error("injected fault at {0}")]
    Injected(&'static str),
}

/// A `Result` whose error is clarion's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The code word of an error or a denial (WIRE-4 tool errors, `authorize`
/// reasons, the 403 body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `not_found`
    NotFound,
    /// `no_longer_active`
    NoLongerActive,
    /// `not_eligible`: not a voter of this quorum bundle (QUO-3).
    NotEligible,
    /// `already_voted`: voted otherwise on this quorum bundle (QUO-3).
    AlreadyVoted,
    /// `link_used`: the answer link was used already (LINK-3).
    LinkUsed,
    /// `validation`
    Validation,
    /// `capability_denied`
    CapabilityDenied,
    /// `session_ended`: asking on a session that has ended (ASK-5).
    SessionEnded,
    /// `unavailable`: the database is unreachable, full or read-only
    /// (PROD-2); worth retrying later.
    Unavailable,
    /// `timed_out`: `wait_bundle`'s timeout passed first (WIRE-3).
    TimedOut,
    /// `handle_closed`: the handle was closed (REL-7).
    HandleClosed,
    /// `internal`: everything unexpected.
    Internal,
}

impl ErrorCode {
    /// Every code, in the order documents list them.
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::NotFound,
        ErrorCode::NoLongerActive,
        ErrorCode::NotEligible,
        ErrorCode::AlreadyVoted,
        ErrorCode::LinkUsed,
        ErrorCode::Validation,
        ErrorCode::CapabilityDenied,
        ErrorCode::SessionEnded,
        ErrorCode::Unavailable,
        ErrorCode::TimedOut,
        ErrorCode::HandleClosed,
        ErrorCode::Internal,
    ];

    /// The word on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "not_found",
            ErrorCode::NoLongerActive => "no_longer_active",
            ErrorCode::NotEligible => "not_eligible",
            ErrorCode::AlreadyVoted => "already_voted",
            ErrorCode::LinkUsed => "link_used",
            ErrorCode::Validation => "validation",
            ErrorCode::CapabilityDenied => "capability_denied",
            ErrorCode::SessionEnded => "session_ended",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::TimedOut => "timed_out",
            ErrorCode::HandleClosed => "handle_closed",
            ErrorCode::Internal => "internal",
        }
    }
}

impl Error {
    /// WIRE-1: the HTTP status this error is reported with.
    pub fn http_status(&self) -> u16 {
        match self {
            Error::NotFound(_) => 404,
            Error::Validation(_) => 400,
            Error::CapabilityDenied | Error::NotEligible => 403,
            Error::NoLongerActive | Error::SessionEnded | Error::AlreadyVoted => 409,
            Error::LinkUsed => 410,
            Error::TimedOut => 504,
            Error::HandleClosed => 503,
            Error::Unavailable { outage, .. } => outage_status(*outage),
            Error::Database(_) | Error::Internal(_) => 500,
            #[cfg(feature = "test-hooks")]
            Error::Injected(_) => 500,
        }
    }

    /// WIRE-5: the path of the field a validation error is about; `""`
    /// for every other error.
    pub fn field(&self) -> &str {
        match self {
            Error::Validation(error) => &error.field,
            _ => "",
        }
    }

    /// PROD-2: whether this is the database's outage (unreachable, full,
    /// read-only), which the pool logs once rather than each caller.
    pub fn is_outage(&self) -> bool {
        matches!(self, Error::Unavailable { .. })
    }

    /// WIRE-4: the code word of this error. Errors without a word of their
    /// own are `internal`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::NoLongerActive => ErrorCode::NoLongerActive,
            Error::NotEligible => ErrorCode::NotEligible,
            Error::AlreadyVoted => ErrorCode::AlreadyVoted,
            Error::LinkUsed => ErrorCode::LinkUsed,
            Error::Validation(_) => ErrorCode::Validation,
            Error::CapabilityDenied => ErrorCode::CapabilityDenied,
            Error::SessionEnded => ErrorCode::SessionEnded,
            Error::Unavailable { .. } => ErrorCode::Unavailable,
            Error::TimedOut => ErrorCode::TimedOut,
            Error::HandleClosed => ErrorCode::HandleClosed,
            _ => ErrorCode::Internal,
        }
    }
}

/// PROD-2: the status an outage is reported with: `507` for a full
/// database, `503` for one unreachable or read-only.
pub(crate) fn outage_status(outage: Outage) -> u16 {
    match outage {
        Outage::Full => 507,
        _ => 503,
    }
}

impl From<DbError> for Error {
    /// PROD-2: an outage is said as one; anything else stays a database
    /// error (an internal error to callers).
    fn from(error: DbError) -> Self {
        match error.outage() {
            Some(outage) => Error::Unavailable {
                outage,
                cause: error,
            },
            None => Error::Database(error),
        }
    }
}

impl From<diesel::result::Error> for Error {
    fn from(error: diesel::result::Error) -> Self {
        Error::from(DbError::from(error))
    }
}

impl From<diesel::r2d2::PoolError> for Error {
    fn from(error: diesel::r2d2::PoolError) -> Self {
        Error::from(DbError::from(error))
    }
}

impl From<Injected> for Error {
    fn from(fault: Injected) -> Self {
        #[cfg(feature = "test-hooks")]
        return Error::Injected(fault.0);
        #[cfg(not(feature = "test-hooks"))]
        match fault {}
    }
}

impl Failure for Error {
    fn lost_connection(&self) -> bool {
        matches!(
            self,
            Error::Database(error) | Error::Unavailable { cause: error, .. }
                if error.connection_lost()
        )
    }
}
