//! The store's failures: a database error kept opaque (callers learn what
//! went wrong, not which driver said it), and why a database could not be
//! opened.

/// A failure of the database or of the connection pool. Its message says
/// what the database reported; the driver's own types stay private.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DbError(Cause);

#[derive(Debug, thiserror::Error)]
enum Cause {
    #[error("database error: {0}")]
    Query(#[from] diesel::result::Error),
    #[error("no database connection available: {0}")]
    Pool(#[from] diesel::r2d2::PoolError),
    #[error("the database does not answer")]
    Unreachable,
}

/// PROD-2: a failure that is the database's state, not the request's:
/// callers are told so (and may retry), never an internal error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outage {
    /// The database cannot be reached, or dropped the connection.
    Unavailable,
    /// The database has no room to write (a full disk).
    Full,
    /// The database refuses writes (a read-only file or server).
    ReadOnly,
}

impl Outage {
    /// What a caller is told.
    pub fn message(self) -> &'static str {
        match self {
            Outage::Unavailable => "database unavailable",
            Outage::Full => "database full",
            Outage::ReadOnly => "database read-only",
        }
    }
}

impl DbError {
    /// The pool refused at once: the database did not answer its last try.
    pub(crate) fn unavailable() -> DbError {
        DbError(Cause::Unreachable)
    }

    /// Whether this failure is an outage of the database, and which.
    pub fn outage(&self) -> Option<Outage> {
        use diesel::result::DatabaseErrorKind::{ClosedConnection, UnableToSendCommand};
        use diesel::result::Error::DatabaseError;
        match &self.0 {
            Cause::Pool(_) | Cause::Unreachable => Some(Outage::Unavailable),
            Cause::Query(DatabaseError(ClosedConnection | UnableToSendCommand, _)) => {
                Some(Outage::Unavailable)
            }
            Cause::Query(DatabaseError(_, info)) => outage_named(info.message()),
            Cause::Query(_) => None,
        }
    }

    /// The server closed the connection (or it could not be written to):
    /// the pool must not hand it out again.
    pub(crate) fn connection_lost(&self) -> bool {
        use diesel::result::DatabaseErrorKind::{ClosedConnection, UnableToSendCommand};
        matches!(
            self.0,
            Cause::Query(diesel::result::Error::DatabaseError(
                ClosedConnection | UnableToSendCommand,
                _
            ))
        )
    }
}

/// The outages a database names only in its message: SQLite's
/// `SQLITE_FULL` and `SQLITE_READONLY`, PostgreSQL's disk full (53100),
/// read-only transaction (25006) and shutdown (57P01, 57P03).
fn outage_named(message: &str) -> Option<Outage> {
    let message = message.to_ascii_lowercase();
    let has = |words: &str| message.contains(words);
    if has("database or disk is full") || has("no space left on device") {
        Some(Outage::Full)
    } else if has("readonly database") || has("read-only transaction") {
        Some(Outage::ReadOnly)
    } else if has("terminating connection due to administrator command")
        || has("the database system is shutting down")
        || has("the database system is starting up")
        || has("server closed the connection unexpectedly")
    {
        Some(Outage::Unavailable)
    } else {
        None
    }
}

impl From<diesel::result::Error> for DbError {
    fn from(error: diesel::result::Error) -> Self {
        DbError(Cause::Query(error))
    }
}

impl From<diesel::r2d2::PoolError> for DbError {
    fn from(error: diesel::r2d2::PoolError) -> Self {
        DbError(Cause::Pool(error))
    }
}

/// What the store needs to know of the error type of the layers above: it
/// can hold a database error, and may say the connection is gone.
pub(crate) trait Failure: From<DbError> {
    /// True when the failure was the connection itself going away.
    fn lost_connection(&self) -> bool;
}

/// Why a database could not be opened. Each variant carries the real cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The URL names no database clarion can open.
    #[error("invalid database URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A PostgreSQL URL, in a build without the `postgres` feature.
    #[error(
        "{url:?} is a PostgreSQL URL, but this build of clarion has no PostgreSQL support \
         (enable the cargo feature `postgres`)"
    )]
    PostgresNotCompiled {
        /// The URL as given.
        url: String,
    },
    /// The database refused or could not be reached.
    #[error("could not connect to the {backend} database: {message}")]
    Connect {
        /// `SQLite` or `PostgreSQL`.
        backend: &'static str,
        /// What the database said.
        message: String,
    },
    /// A connection opened, but setting it up (pragmas, session settings) failed.
    #[error("could not configure the {backend} connection: {message}")]
    Configure {
        /// `SQLite` or `PostgreSQL`.
        backend: &'static str,
        /// What the database said.
        message: String,
    },
    /// The embedded migrations failed.
    #[error("could not migrate the {backend} database: {message}")]
    Migrate {
        /// `SQLite` or `PostgreSQL`.
        backend: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A setting is out of range.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The pool could not be built.
    #[error("could not build the connection pool: {0}")]
    Pool(String),
}

/// The pool's error type: the open error, as a standard error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct ConnectError(#[from] pub(crate) OpenError);
