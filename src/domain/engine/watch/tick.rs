//! What every tick of the watcher shares, whichever backend it hears:
//! the context the thread holds, the one statement that re-reads every
//! waited-on bundle, and the waking of the waiters an announcement names.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;

use crate::domain::engine::signal::EventSignal;
use crate::domain::engine::waiters::{Fingerprint, Waiters};
use crate::error::{Error, Result};
use crate::rules::activeness;
use crate::store::schema::bundles;
use crate::store::{DbPool, Target};

/// What the watcher needs to know of its handle.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // the id and poll serve the listener
pub(crate) struct WatchSettings {
    pub(crate) target: Target,
    pub(crate) handle_id: String,
    /// The fallback poll (PostgreSQL) and the bound of WAIT-3.
    pub(crate) poll_interval: Duration,
    /// How often SQLite's `data_version` is checked.
    pub(crate) tick: Duration,
    pub(crate) busy_timeout: Duration,
    /// The handle's clock: a re-read's fingerprint is ACT-1 at its `now`,
    /// as each waiter's own read is.
    pub(crate) clock: Arc<dyn crate::store::clock::Clock>,
}

/// Counts for tests and benchmarks (OPS-4: checks per tick).
#[derive(Debug, Default)]
pub(crate) struct WatchStats {
    /// Ticks that made their one check (`data_version`, or the poll).
    pub(crate) checks: AtomicU64,
    /// Statements that read the state of every waited-on bundle again
    /// after a check found a change (PostgreSQL's poll is such a read, but
    /// it is its tick's check, counted above).
    pub(crate) rechecks: AtomicU64,
    /// Reads of one bundle by a waiter.
    pub(crate) reads: AtomicU64,
    /// The listening connection's server pid, 0 while there is none.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) listener_pid: AtomicI64,
    /// Test hook: refuse to (re)listen, so the poll alone carries waiters.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) block_listening: AtomicBool,
    /// The SQLite watcher sleeps long, nobody waiting; a new waiter nudges.
    pub(super) idle: AtomicBool,
}

/// What the watcher thread holds: never the handle itself, so dropping
/// the handle ends it.
pub(super) struct Context {
    pub(super) settings: Arc<WatchSettings>,
    pub(super) waiters: Arc<Waiters>,
    /// This handle's event readers (HTTP-6): told of every change heard.
    pub(super) events: Arc<EventSignal>,
    pub(super) pool: DbPool,
    pub(super) stats: Arc<WatchStats>,
}

impl Context {
    /// Nobody waits and nobody reads events: nothing to check.
    pub(super) fn is_idle(&self) -> bool {
        self.waiters.is_empty() && !self.events.has_readers()
    }
}

/// Why the waited-on bundles are read again.
#[derive(Clone, Copy)]
pub(super) enum Reread {
    /// A check found a change (or may have missed one): every scoped
    /// waiter reads again too.
    AfterChange,
    /// PostgreSQL's poll, which is itself the tick's one check (counted
    /// as the check, not as a re-read); scoped waiters read again only when
    /// `wake_scoped`.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))] // PostgreSQL's poll only
    Poll { wake_scoped: bool },
}

/// True if the waited-on bundles were re-read.
pub(super) fn recheck_logged(context: &Context, why: Reread) -> bool {
    match recheck(context, why) {
        Ok(()) => true,
        Err(error) => {
            // PROD-2: an outage is logged once, by the pool.
            if !error.is_outage() {
                tracing::warn!(%error, "could not re-read the waited-on bundles; retrying next tick");
            }
            false
        }
    }
}

/// The one statement of a tick that found a change: the state of every
/// waited-on bundle, compared with what its waiters last read; only the
/// waiters of a bundle that moved (or vanished) are woken. Scoped waiters
/// are woken on every change when `wake_scoped`, since what a principal
/// may see can change while the bundle's row does not.
fn recheck(context: &Context, why: Reread) -> Result<()> {
    let (wake_scoped, counted) = match why {
        Reread::AfterChange => (true, true),
        Reread::Poll { wake_scoped } => (wake_scoped, false),
    };
    context.waiters.recheck_started();
    let slots = context.waiters.snapshot();
    if slots.is_empty() {
        return Ok(());
    }
    let mut now: HashMap<String, Fingerprint> = HashMap::with_capacity(slots.len());
    let mut conn = context.pool.get().map_err(Error::from)?;
    let at = context.settings.clock.now().as_micros();
    // Bounded so SQLite's limit on bound values is never reached.
    for chunk in slots.chunks(10_000) {
        let ids: Vec<&str> = chunk.iter().map(|(id, _)| id.as_str()).collect();
        let rows: Vec<(String, Fingerprint)> = conn.run(|conn| -> Result<_> {
            Ok(bundles::table
                .filter(bundles::pending_id.eq_any(&ids))
                .select((
                    bundles::pending_id,
                    (
                        bundles::responded_at,
                        activeness::is_active(at),
                        activeness::in_current_turn(),
                        bundles::agent_disconnected,
                    ),
                ))
                .load(conn)?)
        })?;
        if counted {
            context.stats.rechecks.fetch_add(1, Ordering::SeqCst);
        }
        now.extend(rows);
    }
    drop(conn);
    for (pending_id, slot) in slots {
        let moved = slot.moved(now.get(&pending_id).copied());
        if moved || (wake_scoped && slot.is_scoped()) {
            slot.bump();
        }
    }
    Ok(())
}

/// Wakes the waiters a notification names; a handle's own notifications
/// are skipped (it woke its waiters itself).
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // PostgreSQL's listener only
pub(super) fn heard(context: &Context, payload: &str) {
    let Ok(announced) = serde_json::from_str::<serde_json::Value>(payload) else {
        context.waiters.notify_all();
        context.events.notify();
        return;
    };
    if announced["h"].as_str() == Some(context.settings.handle_id.as_str()) {
        return;
    }
    if announced["e"].as_bool() == Some(true) {
        context.events.notify();
    }
    if announced["all"].as_bool() == Some(true) {
        context.waiters.notify_all();
        return;
    }
    let names = |key: &str| -> Vec<String> {
        announced[key]
            .as_array()
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| id.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    for pending_id in names("b") {
        context.waiters.notify_bundle(&pending_id);
    }
    for session_id in names("s") {
        context.waiters.notify_session(&session_id);
    }
}
