//! The domain's own handle: what every operation needs — the pool, the
//! clock and id source, the failpoints, this handle's waiters and its
//! dispatcher — and the few ways an operation reaches the database. The
//! public `Clarion` handle wraps it; `domain/open.rs` opens it, starts
//! every thread it holds and stops them on close.

pub(crate) mod dispatch;
pub(crate) mod heartbeat;
pub(crate) mod ledger;
pub(crate) mod rounds;
pub(crate) mod signal;
pub(crate) mod waiters;
pub(crate) mod watch;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::domain::engine::dispatch::DispatchWorker;
use crate::domain::engine::heartbeat::Heartbeat;
use crate::domain::engine::signal::EventSignal;
use crate::domain::engine::waiters::Waiters;
use crate::domain::engine::watch::Watch;
use crate::error::{Error, Result};
use crate::store::failpoints::Failpoints;
use crate::store::watch::Announcer;
use crate::store::{
    read_snapshot, write_transaction, AnyConnection, Backend, Clock, DbConn, DbPool, IdKind,
    IdSource, Timestamp,
};

/// Everything one open database handle holds.
pub(crate) struct Engine {
    pub(crate) pool: DbPool,
    pub(crate) backend: Backend,
    /// Which database this is, the same for every handle of this process
    /// on it: the key of the process-wide agent-waiter counts (WAIT-1).
    pub(crate) database: String,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: Arc<dyn IdSource>,
    pub(crate) failpoints: Arc<Failpoints>,
    pub(crate) waiters: Arc<Waiters>,
    /// The bound of WAIT-3 for changes made elsewhere: a waiter polls on
    /// its own at this interval only when the watcher could not start.
    pub(crate) poll_interval: Duration,
    /// Hears other handles' and processes' commits (WAIT-3a).
    pub(crate) watch: Watch,
    /// Tells other handles and processes of this one's commits (WAIT-3a;
    /// PostgreSQL only: SQLite's handles see `data_version` move).
    pub(crate) announcer: Option<Announcer>,
    /// This handle's heartbeat and attachment lease (DEL-3).
    pub(crate) heartbeat: Heartbeat,
    /// Set by `close` (REL-7).
    pub(crate) closed: AtomicBool,
    /// The resume dispatcher's worker, when the host registered one (DEL-3).
    pub(crate) dispatch: Option<DispatchWorker>,
    /// Wakes this handle's event readers (HTTP-6).
    pub(crate) event_signal: Arc<EventSignal>,
    /// The deadline sweeper, when the host turned it on (EXP-4).
    pub(crate) deadline_sweeper: std::sync::OnceLock<rounds::RoundThread>,
    /// The attempt ledger's appender (AUD-2).
    pub(crate) ledger: ledger::Ledger,
    /// LINK-1: the base of answer links' URLs, if the host gave one.
    pub(crate) public_url: Option<String>,
    /// The webhook worker, when the host started one (HOOK-4).
    #[cfg(feature = "webhooks")]
    pub(crate) webhook_worker: std::sync::OnceLock<rounds::EventRoundThread>,
    /// The mail worker, when the host configured mail (MAIL-1a).
    #[cfg(feature = "mail")]
    pub(crate) mail_worker: std::sync::OnceLock<rounds::EventRoundThread>,
}

impl Engine {
    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    pub(crate) fn new_id(&self, kind: IdKind) -> String {
        self.ids.new_id(kind)
    }

    pub(crate) fn failpoint(&self, name: &'static str) -> Result<()> {
        Ok(self.failpoints.check(name)?)
    }

    pub(crate) fn conn(&self) -> Result<DbConn> {
        self.check_open()?;
        Ok(self.pool.get()?)
    }

    /// REL-7: a closed handle starts no more work.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::HandleClosed);
        }
        Ok(())
    }

    /// Runs `body` on a pooled connection, on one consistent snapshot
    /// (several reads never mix states from before and after a commit).
    pub(crate) fn read<T>(&self, body: impl FnOnce(&mut AnyConnection) -> Result<T>) -> Result<T> {
        self.conn()?.run(|conn| read_snapshot(conn, body))
    }

    /// Runs a single-statement read on a pooled connection; one statement
    /// sees one snapshot by itself.
    pub(crate) fn read_one<T>(
        &self,
        body: impl FnOnce(&mut AnyConnection) -> Result<T>,
    ) -> Result<T> {
        self.conn()?.run(body)
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE` on SQLite), for
    /// bookkeeping that changes no bundle's state (delivery leases). Every
    /// change to a bundle goes through [`Engine::change`] instead.
    pub(crate) fn write<T>(&self, body: impl FnOnce(&mut AnyConnection) -> Result<T>) -> Result<T> {
        self.conn()?.run(|conn| write_transaction(conn, body))
    }
}
