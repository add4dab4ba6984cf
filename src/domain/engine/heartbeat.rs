//! DEL-3: attachment as a lease. A bundle is attached to the handle that
//! asked it (or last waited on it); the handle keeps one heartbeat row,
//! renewed once per tick while any agent of it waits — one write per
//! handle, however many waiters. When the process dies, or nobody waits
//! for a lease, the row lapses and its bundles count as detached, so their
//! answers reach the outbox without any host call.

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::prelude::*;
use diesel::query_dsl::methods::ExecuteDsl;

use crate::error::{Error, Result};
use crate::store::schema::{attachments, handles};
use crate::store::{AnyConnection, Clock, DbPool, OnEitherBackend};

/// One handle's heartbeat.
pub(crate) struct Heartbeat {
    /// This handle's id in `handles` and `attachments`.
    pub(crate) handle_id: String,
    lease: Duration,
    clock: Arc<dyn Clock>,
    pool: DbPool,
    /// Agent waits in progress on this handle.
    agents: Arc<AtomicUsize>,
    /// The `alive_until` this handle last committed (clock micros), so an
    /// ask made while the row is fresh costs no renewal.
    renewed_until: Arc<AtomicI64>,
    /// The renewing thread, started at the first wait; dropping the sender
    /// (with the handle) ends it.
    renewer: Mutex<Option<Sender<()>>>,
}

/// One agent wait counted by the heartbeat while it lives.
pub(crate) struct Beating {
    agents: Arc<AtomicUsize>,
}

impl Drop for Beating {
    fn drop(&mut self) {
        self.agents.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Heartbeat {
    pub(crate) fn new(
        handle_id: String,
        lease: Duration,
        clock: Arc<dyn Clock>,
        pool: DbPool,
    ) -> Heartbeat {
        Heartbeat {
            handle_id,
            lease,
            clock,
            pool,
            agents: Arc::default(),
            renewed_until: Arc::new(AtomicI64::new(i64::MIN)),
            renewer: Mutex::new(None),
        }
    }

    /// Makes sure this handle's row is alive for at least two thirds of a
    /// lease more, renewing it (in a statement of its own, which commits by
    /// itself) only when it is not. Called before a bundle is attached, so
    /// the row an attachment names is committed and fresh.
    pub(crate) fn keep_alive(&self) -> Result<()> {
        let lease = i64::try_from(self.lease.as_micros()).unwrap_or(i64::MAX);
        let now = self.clock.now().as_micros();
        if self
            .renewed_until
            .load(Ordering::SeqCst)
            .saturating_sub(now)
            >= lease / 3 * 2
        {
            return Ok(());
        }
        let until = alive_until(self.clock.as_ref(), self.lease);
        let mut conn = self.pool.get().map_err(Error::from)?;
        conn.run(|conn| renew(conn, &self.handle_id, until))?;
        self.renewed_until.fetch_max(until, Ordering::SeqCst);
        Ok(())
    }

    /// Attaches a bundle to this handle, inside the caller's transaction;
    /// [`Heartbeat::keep_alive`] first.
    pub(crate) fn attach(&self, conn: &mut AnyConnection, pending_id: &str) -> Result<()> {
        per_backend!(conn, c => ExecuteDsl::execute(self.attach_statement(pending_id), c))?;
        Ok(())
    }

    /// The statement of [`Heartbeat::attach`], for a caller that runs it
    /// with others (asking, on PostgreSQL).
    pub(crate) fn attach_statement<'a>(&'a self, pending_id: &'a str) -> impl OnEitherBackend + 'a {
        let handle_id = self.handle_id.as_str();
        diesel::insert_into(attachments::table)
            .values((
                attachments::pending_id.eq(pending_id),
                attachments::handle_id.eq(handle_id),
            ))
            .on_conflict(attachments::pending_id)
            .do_update()
            .set(attachments::handle_id.eq(handle_id))
    }

    /// Counts an agent wait; while any is counted, the renewing thread
    /// renews the lease once per tick (a third of the lease).
    pub(crate) fn beating(&self) -> Beating {
        self.agents.fetch_add(1, Ordering::SeqCst);
        let mut renewer = self.renewer.lock().unwrap_or_else(|p| p.into_inner());
        if renewer.is_none() {
            *renewer = self.start_renewing();
        }
        Beating {
            agents: self.agents.clone(),
        }
    }

    fn start_renewing(&self) -> Option<Sender<()>> {
        let (stop, stopped) = mpsc::channel::<()>();
        let tick = (self.lease / 3).max(Duration::from_millis(1));
        let (agents, pool, clock) = (self.agents.clone(), self.pool.clone(), self.clock.clone());
        let renewed_until = self.renewed_until.clone();
        let (handle_id, lease) = (self.handle_id.clone(), self.lease);
        let spawned = std::thread::Builder::new()
            .name("clarion-heartbeat".to_owned())
            .spawn(move || loop {
                match stopped.recv_timeout(tick) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                if agents.load(Ordering::SeqCst) == 0 {
                    continue;
                }
                let alive_until = alive_until(clock.as_ref(), lease);
                let renewed = pool
                    .get()
                    .map_err(Error::from)
                    .and_then(|mut conn| conn.run(|conn| renew(conn, &handle_id, alive_until)));
                match renewed {
                    Ok(()) => {
                        renewed_until.fetch_max(alive_until, Ordering::SeqCst);
                    }
                    // PROD-2: an outage is logged once, by the pool.
                    Err(error) if error.is_outage() => {}
                    Err(error) => {
                        tracing::warn!(%error, "heartbeat not renewed; attachments lapse if this goes on");
                    }
                }
            });
        match spawned {
            Ok(_) => Some(stop),
            Err(error) => {
                tracing::error!(%error, "could not start the heartbeat thread; waits will not renew their lease");
                None
            }
        }
    }
}

/// One lease from now on `clock`, saturating.
fn alive_until(clock: &dyn Clock, lease: Duration) -> i64 {
    let lease = i64::try_from(lease.as_micros()).unwrap_or(i64::MAX);
    clock.now().as_micros().saturating_add(lease)
}

fn renew(conn: &mut AnyConnection, handle_id: &str, alive_until: i64) -> Result<()> {
    per_backend!(conn, c => diesel::insert_into(handles::table)
        .values((handles::id.eq(handle_id), handles::alive_until.eq(alive_until)))
        .on_conflict(handles::id)
        .do_update()
        .set(handles::alive_until.eq(alive_until))
        .execute(c))?;
    Ok(())
}
