//! The one change path. Every change that touches a bundle's state runs
//! through [`Engine::change`], which has two halves:
//! - inside the changing transaction, the body gets the [`Changes`] through
//!   which alone events are appended (EVT-1, `domain::events`), so an
//!   event commits or vanishes with its change;
//! - right after the commit, [`Engine::publish`]: announces the change to
//!   other handles and processes (`NOTIFY` on PostgreSQL, from the
//!   announcing thread: WAIT-3a), wakes this handle's waiters (DEL-2,
//!   WAIT-3) and event readers (HTTP-6), and offers new outbox entries to
//!   the dispatcher (DEL-3).
//!
//! Operations say what they changed by pushing a [`Change`]; none wakes a
//! waiter or dispatches by hand.

use crate::domain::engine::waiters::Detaching;
use crate::domain::engine::Engine;
use crate::domain::views::Response;
use crate::error::Result;
use crate::rules::outbox::in_outbox;
use crate::rules::vocabulary::BundleStatus;
use crate::store::failpoints::points;
use crate::store::schema::bundles;
use crate::store::{
    claim_transaction, session_transaction, write_transaction, AnyConnection, DbConn,
};

/// What a committed change did, as far as anyone outside its transaction
/// cares.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// A bundle was asked (ASK-1).
    Asked,
    /// The claim resolved a bundle; the response is the committed one.
    Resolved {
        pending_id: String,
        status: BundleStatus,
        response: Response,
    },
    /// One bundle was detached (its last waiter timed out): a resolution
    /// it holds is now an outbox entry.
    BundleDetached { pending_id: String },
    /// A session's bundles changed: a new state, a new turn, a deletion.
    Session { session_id: String },
    /// A session was detached: its bundles' resolutions are outbox entries.
    SessionDetached { session_id: String },
    /// Anything may have changed (a task and its sessions were deleted).
    Everything,
}

/// The changes one transaction made, and whether it appended events
/// (EVT-1: the `append_*` methods in `domain::events`, which only a
/// change's body can reach).
#[derive(Debug, Default)]
pub(crate) struct Changes {
    made: Vec<Change>,
    pub(crate) appended_events: bool,
}

impl Changes {
    pub(crate) fn push(&mut self, change: Change) {
        self.made.push(change);
    }
}

impl Engine {
    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE` on SQLite),
    /// lets it append events inside the transaction, and publishes it
    /// after the commit.
    pub(crate) fn change<T>(
        &self,
        body: impl FnOnce(&mut AnyConnection, &mut Changes) -> Result<T>,
    ) -> Result<T> {
        let mut conn = self.conn()?;
        let (value, changes) = self.commit(&mut conn, body)?;
        self.publish(conn, changes)?;
        Ok(value)
    }

    /// [`Engine::change`] in a transaction that begins with the session row
    /// of `session_id` locked (`store::session_transaction`: on PostgreSQL
    /// in the `BEGIN`'s round trip).
    pub(crate) fn change_session<T>(
        &self,
        session_id: &str,
        body: impl FnOnce(&mut AnyConnection, &mut Changes) -> Result<T>,
    ) -> Result<T> {
        let mut changes = Changes::default();
        let mut conn = self.conn()?;
        let value = conn.run(|conn| {
            session_transaction::<T, crate::error::Error>(conn, session_id, |conn| {
                body(conn, &mut changes)
            })
        })?;
        self.publish(conn, changes)?;
        Ok(value)
    }

    /// [`Engine::change`] for the claim of a bundle of `session_id`, in the
    /// claim's transaction (`store::claim_transaction`: on PostgreSQL it
    /// begins by locking the session row `FOR SHARE`). Unless `queue`,
    /// `None`, with nothing run, while another connection holds SQLite's
    /// write lock.
    pub(crate) fn change_claiming<T>(
        &self,
        session_id: &str,
        pending_id: &str,
        queue: bool,
        body: impl FnOnce(&mut AnyConnection, &mut Changes) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut changes = Changes::default();
        let mut conn = self.conn()?;
        let value = conn.run(|conn| {
            claim_transaction::<T, crate::error::Error>(
                conn,
                session_id,
                pending_id,
                queue,
                |conn| body(conn, &mut changes),
            )
        })?;
        let Some(value) = value else {
            return Ok(None);
        };
        self.publish(conn, changes)?;
        Ok(Some(value))
    }

    /// [`Engine::change`] for a bundle only while no agent of this process
    /// waits on it (WAIT-1). The bundle is marked as detaching until the
    /// commit, so an agent that starts waiting meanwhile waits for it; no
    /// lock is held across the database work. `None` if an agent waits.
    pub(crate) fn change_unless_waited<T>(
        &self,
        pending_id: &str,
        body: impl FnOnce(&mut AnyConnection, &mut Changes) -> Result<T>,
    ) -> Result<Option<T>> {
        let Some(detaching) = Detaching::begin(&self.database, pending_id) else {
            return Ok(None);
        };
        let mut conn = self.conn()?;
        let committed = self.commit(&mut conn, body);
        drop(detaching);
        let (value, changes) = committed?;
        self.publish(conn, changes)?;
        Ok(Some(value))
    }

    /// A change made by one statement that commits by itself (one round
    /// trip on PostgreSQL instead of three). It records and publishes
    /// nothing, so only bookkeeping that no waiter or listener cares about
    /// uses it: acknowledging a delivery.
    pub(crate) fn change_in_one_statement<T>(
        &self,
        body: impl FnOnce(&mut AnyConnection) -> Result<T>,
    ) -> Result<T> {
        self.conn()?.run(body)
    }

    fn commit<T>(
        &self,
        conn: &mut DbConn,
        body: impl FnOnce(&mut AnyConnection, &mut Changes) -> Result<T>,
    ) -> Result<(T, Changes)> {
        let mut changes = Changes::default();
        let value = conn.run(|conn| {
            write_transaction::<T, crate::error::Error>(conn, |conn| body(conn, &mut changes))
        })?;
        Ok((value, changes))
    }

    /// The half after the commit. Neither announcing, waking nor
    /// dispatching can undo what committed (DEL-1, DEL-4): a failed
    /// `NOTIFY` is logged and left to the other handles' poll (WAIT-3a), a
    /// failed dispatch leaves its entry in the outbox and is logged.
    fn publish(&self, conn: DbConn, changes: Changes) -> Result<()> {
        if let Some(announcer) = &self.announcer {
            if let Some(payload) = announcement(&self.heartbeat.handle_id, &changes) {
                announcer.queue(payload);
            }
        }
        // Released before dispatching, which may need connections of its own.
        drop(conn);
        if changes.appended_events {
            self.event_signal.notify();
        }
        for change in changes.made {
            match change {
                Change::Asked => {}
                Change::Resolved {
                    pending_id,
                    status,
                    response,
                } => {
                    self.failpoint(points::RESOLVE_AFTER_COMMIT)?;
                    self.waiters.notify_resolved(&pending_id, status, &response);
                    self.dispatch_logged(&pending_id);
                }
                Change::BundleDetached { pending_id } => self.dispatch_logged(&pending_id),
                Change::Session { session_id } => self.waiters.notify_session(&session_id),
                Change::SessionDetached { session_id } => {
                    self.waiters.notify_session(&session_id);
                    self.dispatch_session(&session_id)?;
                }
                Change::Everything => self.waiters.notify_all(),
            }
        }
        Ok(())
    }

    fn dispatch_logged(&self, pending_id: &str) {
        if let Err(error) = self.dispatch_one(pending_id, false) {
            tracing::warn!(pending_id, %error, "resume dispatch could not start; the entry stays in the outbox");
        }
    }

    /// Resolutions that were waiting for this session's agent are now
    /// outbox entries; offer them to the dispatcher at once.
    fn dispatch_session(&self, session_id: &str) -> Result<()> {
        use diesel::prelude::*;
        if self.dispatch.is_none() {
            return Ok(());
        }
        let now = self.now().as_micros();
        let entries: Vec<String> = self.read_one(|conn| {
            Ok(bundles::table
                .filter(bundles::session_id.eq(session_id))
                .filter(in_outbox(now))
                .select(bundles::pending_id)
                .load(conn)?)
        })?;
        for pending_id in entries {
            self.dispatch_logged(&pending_id);
        }
        Ok(())
    }
}

/// WAIT-3a: what other handles' waiters must re-read after `changes`, as
/// the small payload of one `NOTIFY` (PostgreSQL allows 8000 bytes): the
/// announcing handle `h`, the bundles `b` and sessions `s` touched, or
/// `all`, and `e` when events were appended. `None` when neither a waiter
/// nor an event reader can care.
fn announcement(handle_id: &str, changes: &Changes) -> Option<String> {
    let (mut bundles, mut sessions, mut all) = (Vec::new(), Vec::new(), false);
    for change in &changes.made {
        match change {
            Change::Asked => {}
            Change::Resolved { pending_id, .. } | Change::BundleDetached { pending_id } => {
                bundles.push(pending_id.as_str())
            }
            Change::Session { session_id } | Change::SessionDetached { session_id } => {
                sessions.push(session_id.as_str())
            }
            Change::Everything => all = true,
        }
    }
    // HTTP-6: other processes' event readers read on when `e` is set.
    let events = changes.appended_events;
    if !all && !events && bundles.is_empty() && sessions.is_empty() {
        return None;
    }
    let named =
        serde_json::json!({"h": handle_id, "b": bundles, "s": sessions, "e": events}).to_string();
    if all || named.len() > 7_000 {
        return Some(serde_json::json!({"h": handle_id, "all": true, "e": events}).to_string());
    }
    Some(named)
}
