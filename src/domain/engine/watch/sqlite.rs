//! SQLite: one `PRAGMA data_version` per tick while anyone waits, on a
//! connection of its own; only when it moved are the waited-on bundles
//! read again.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use crate::domain::engine::watch::tick::{recheck_logged, Context, Reread};
use crate::store::watch::DataVersion;

/// How long an idle SQLite watcher sleeps unless a waiter nudges it.
const IDLE_SLEEP: Duration = Duration::from_secs(1);

/// SQLite: one `data_version` per tick while anyone waits.
pub(super) fn watch(context: &Context, path: &str, stopped: &mpsc::Receiver<()>) {
    let mut probe: Option<DataVersion> = None;
    let mut last: Option<i64> = None;
    loop {
        // Nobody waits: no check, and a long sleep that the next waiter
        // ends (the watcher does not tick a hundred times a second for an
        // idle handle).
        // Marked idle before looking, so a waiter that enters meanwhile
        // either is seen here or finds the mark and nudges.
        context.stats.idle.store(true, Ordering::SeqCst);
        let idle = context.is_idle();
        if !idle {
            context.stats.idle.store(false, Ordering::SeqCst);
        }
        let sleep = if idle {
            IDLE_SLEEP
        } else {
            context.settings.tick
        };
        match stopped.recv_timeout(sleep) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if context.is_idle() {
            continue;
        }
        if probe.is_none() {
            probe = DataVersion::open(path, context.settings.busy_timeout)
                .map_err(|error| tracing::warn!(%error, "no data_version connection; re-reading every tick"))
                .ok();
        }
        let version = probe.as_mut().map(DataVersion::read);
        context.stats.checks.fetch_add(1, Ordering::SeqCst);
        let changed = match version {
            Some(Ok(version)) => last.replace(version) != Some(version),
            Some(Err(error)) => {
                tracing::warn!(%error, "data_version failed; re-reading");
                probe = None;
                true
            }
            None => true,
        };
        if changed {
            // Any commit may have appended events (HTTP-6).
            context.events.notify();
            if !context.waiters.is_empty() && !recheck_logged(context, Reread::AfterChange) {
                // Not re-read: the next tick tries again.
                last = None;
            }
        }
    }
}
