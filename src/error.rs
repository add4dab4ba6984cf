//! Typed errors. Every fallible library call returns one of these; nothing
//! panics on input.

use std::fmt;

/// An entity an operation needed and did not find (LIFE-10, AUTH-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entity {
    Workspace,
    Task,
    Session,
    /// A bundle; its public name is "clarification request" (WIRE-1).
    Bundle,
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Entity::Workspace => "workspace",
            Entity::Task => "task",
            Entity::Session => "session",
            Entity::Bundle => "clarification request",
        })
    }
}

/// A request that breaks a rule checkable without guessing: the message
/// always starts with the offending field (ASK-2, VAL-7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub field: String,
    pub message: String,
}

impl ValidationError {
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

/// The error of every operation on an open [`crate::Clarion`] handle.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0} not found")]
    NotFound(Entity),
    #[error(transparent)]
    Validation(#[from] ValidationError),
    /// AUTH-2: the principal may not perform this operation at all.
    #[error("capability not authorized")]
    CapabilityDenied,
    /// REPLAY-1: the bundle stopped being active and nobody resolved it
    /// (superseded, its session ended, it expired, or it is malformed).
    #[error("clarification request is no longer active")]
    NoLongerActive,
    /// WIRE-3 `wait_bundle`: the timeout passed first.
    #[error("timed out waiting for a response")]
    TimedOut,
    /// ASK-5: asking on a session in a terminal state.
    #[error("session has ended")]
    SessionEnded,
    #[error("database error: {0}")]
    Database(#[from] diesel::result::Error),
    #[error("no database connection available: {0}")]
    Pool(#[from] diesel::r2d2::PoolError),
    /// A broken invariant inside clarion; the message says which.
    #[error("internal error: {0}")]
    Internal(String),
    /// A fault injected by a test through the `test-hooks` feature.
    #[error("injected fault at {0}")]
    Injected(&'static str),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Validation(ValidationError::new(field, message))
    }
}

/// Why a database could not be opened. Each variant carries the real cause.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("invalid database URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error(
        "{url:?} is a PostgreSQL URL, but this build of clarion has no PostgreSQL support \
         (enable the cargo feature `postgres`)"
    )]
    PostgresNotCompiled { url: String },
    #[error("could not connect to the {backend} database: {source}")]
    Connect {
        backend: &'static str,
        #[source]
        source: diesel::ConnectionError,
    },
    #[error("could not configure the {backend} connection: {source}")]
    Configure {
        backend: &'static str,
        #[source]
        source: diesel::result::Error,
    },
    #[error("could not migrate the {backend} database: {message}")]
    Migrate {
        backend: &'static str,
        message: String,
    },
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("could not build the connection pool: {0}")]
    Pool(String),
}
