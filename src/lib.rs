//! clarion: a durable, embeddable "ask a human" inbox for agent backends.
//!
//! A coding agent parks on a *bundle* of one to four clarification questions;
//! humans and external agents discover the bundles they may see and answer
//! each one exactly once. The library is synchronous and runs on SQLite
//! (bundled, the default) or PostgreSQL (cargo feature `postgres`).
//!
//! The product specification is `SPEC.md`; requirement ids such as ACT-1 or
//! LIFE-3 are cited where each rule is enforced.

#[macro_use]
mod macros;

pub mod activeness;
pub mod ask;
pub mod authz;
pub mod bundle;
pub mod call;
pub mod claim;
pub mod clock;
pub mod db;
pub mod delivery;
pub mod envelope;
pub mod error;
pub mod failpoints;
pub mod ffi;
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod fixtures;
pub mod lifecycle;
pub mod listing;
pub mod mcp;
pub mod resolve;
pub mod schema;
#[doc(hidden)]
pub mod sql_catalog;
pub mod visibility;

use std::sync::Arc;
use std::time::Duration;

pub use ask::{AskRequest, Asked, BundleKind, OptionSpec, QuestionSpec};
pub use authz::{Authorization, Denial, Grant, Operation, Principal, Target};
pub use bundle::{
    Answer, BundleDetail, BundleStatus, BundleView, OptionView, QuestionView, Response,
};
pub use clock::{
    Clock, IdKind, IdSource, ManualClock, SequentialIds, SystemClock, Timestamp, UuidV7Ids,
};
pub use db::Backend;
pub use delivery::{Delivery, DeliveryReport, ResumeDispatcher, WaitOutcome};
pub use error::{Entity, Error, OpenError, Result, ValidationError};
pub use lifecycle::{SessionState, SessionUpsert};
pub use listing::{ListPage, ListRequest, PendingAction, Summary, TaskPendingActions};
pub use resolve::{AnswerInput, ResolveRequest, Resolved};

use db::{AnyConnection, DbConn, DbPool, PoolSettings, Target as DbTarget};
use failpoints::Failpoints;

/// An open clarion database. Cheap to clone; safe to share between threads.
#[derive(Clone)]
pub struct Clarion {
    inner: Arc<Inner>,
}

struct Inner {
    pool: DbPool,
    backend: Backend,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdSource>,
    failpoints: Failpoints,
    waiters: delivery::Waiters,
    poll_interval: Duration,
    dispatcher: Option<Arc<dyn ResumeDispatcher>>,
    dispatch_timeout: Duration,
}

impl std::fmt::Debug for Clarion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clarion")
            .field("backend", &self.inner.backend)
            .finish_non_exhaustive()
    }
}

/// Options for [`Clarion::builder`].
pub struct Builder {
    database_url: String,
    pool_size: u32,
    busy_timeout: Duration,
    connection_timeout: Duration,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdSource>,
    poll_interval: Duration,
    dispatcher: Option<Arc<dyn ResumeDispatcher>>,
    dispatch_timeout: Duration,
}

impl Builder {
    /// How often a waiter re-reads the database for changes made by other
    /// handles or processes (WAIT-3; default 250 ms). Changes made through
    /// this handle wake waiters at once.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Resumes detached agents with their answers (DEL-3).
    pub fn dispatcher(mut self, dispatcher: Arc<dyn ResumeDispatcher>) -> Self {
        self.dispatcher = Some(dispatcher);
        self
    }

    /// How long one dispatch may take before it counts as failed (default
    /// 5 s); its lease lasts twice as long (DEL-4).
    pub fn dispatch_timeout(mut self, timeout: Duration) -> Self {
        self.dispatch_timeout = timeout;
        self
    }

    /// Maximum number of pooled connections (default 8).
    pub fn pool_size(mut self, size: u32) -> Self {
        self.pool_size = size;
        self
    }

    /// How long a SQLite connection waits for the write lock (default 5 s).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How long an operation waits for a free pooled connection (default 30 s).
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = timeout;
        self
    }

    /// The clock used for every timestamp clarion writes (DM-2).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The source of new `pending_id`s and turn ids.
    pub fn ids(mut self, ids: Arc<dyn IdSource>) -> Self {
        self.ids = ids;
        self
    }

    /// Connects, migrates and returns the handle.
    pub fn open(self) -> Result<Clarion, OpenError> {
        let target = DbTarget::parse(&self.database_url)?;
        let backend = target.backend();
        let pool = db::open_pool(
            target,
            &PoolSettings {
                size: self.pool_size,
                busy_timeout: self.busy_timeout,
                connection_timeout: self.connection_timeout,
            },
        )?;
        Ok(Clarion {
            inner: Arc::new(Inner {
                pool,
                backend,
                clock: self.clock,
                ids: self.ids,
                failpoints: Failpoints::default(),
                waiters: delivery::Waiters::default(),
                poll_interval: self.poll_interval,
                dispatcher: self.dispatcher,
                dispatch_timeout: self.dispatch_timeout,
            }),
        })
    }
}

impl Clarion {
    /// Opens (and migrates) the database at `database_url` with default
    /// settings: `sqlite:///abs/path.db`, a plain file path, or
    /// `postgres://user@host/db`.
    pub fn open(database_url: &str) -> Result<Clarion, OpenError> {
        Clarion::builder(database_url).open()
    }

    pub fn builder(database_url: &str) -> Builder {
        Builder {
            database_url: database_url.to_owned(),
            pool_size: 8,
            busy_timeout: Duration::from_secs(5),
            connection_timeout: Duration::from_secs(30),
            clock: Arc::new(SystemClock),
            ids: Arc::new(UuidV7Ids),
            poll_interval: Duration::from_millis(250),
            dispatcher: None,
            dispatch_timeout: Duration::from_secs(5),
        }
    }

    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// Arms a failpoint on this handle (tests only).
    #[cfg(feature = "test-hooks")]
    pub fn arm_failpoint(&self, name: &'static str, action: failpoints::FailAction) {
        self.inner.failpoints.arm(name, action);
    }

    /// Disarms a failpoint on this handle (tests only).
    #[cfg(feature = "test-hooks")]
    pub fn disarm_failpoint(&self, name: &'static str) {
        self.inner.failpoints.disarm(name);
    }

    /// Runs `body` on a raw pooled connection, for tests that write rows
    /// clarion itself never would (DM-1).
    #[cfg(feature = "test-hooks")]
    pub fn with_raw_connection<T>(&self, body: impl FnOnce(&mut AnyConnection) -> T) -> Result<T> {
        let mut conn = self.conn()?;
        Ok(body(&mut conn))
    }

    pub(crate) fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    pub(crate) fn new_id(&self, kind: IdKind) -> String {
        self.inner.ids.new_id(kind)
    }

    pub(crate) fn failpoint(&self, name: &'static str) -> Result<()> {
        self.inner.failpoints.check(name)
    }

    fn conn(&self) -> Result<DbConn> {
        Ok(self.inner.pool.get()?)
    }

    /// Runs `body` on a pooled connection, on one consistent snapshot
    /// (several reads never mix states from before and after a commit).
    pub(crate) fn read<T>(&self, body: impl FnOnce(&mut AnyConnection) -> Result<T>) -> Result<T> {
        self.conn()?.run(|conn| db::read_snapshot(conn, body))
    }

    /// Runs a single-statement read on a pooled connection; one statement
    /// sees one snapshot by itself.
    pub(crate) fn read_one<T>(
        &self,
        body: impl FnOnce(&mut AnyConnection) -> Result<T>,
    ) -> Result<T> {
        self.conn()?.run(body)
    }

    /// Runs one single-statement write, which commits by itself (one round
    /// trip on PostgreSQL instead of three).
    pub(crate) fn write_one<T>(
        &self,
        body: impl FnOnce(&mut AnyConnection) -> Result<T>,
    ) -> Result<T> {
        self.conn()?.run(body)
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE` on SQLite).
    pub(crate) fn write<T>(&self, body: impl FnOnce(&mut AnyConnection) -> Result<T>) -> Result<T> {
        self.conn()?.run(|conn| db::write_transaction(conn, body))
    }
}

/// Compiles the README's Rust examples as doctests, so they cannot rot.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
