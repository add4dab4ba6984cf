//! PROD-2: whether the database answers, as the pool last found it. While
//! it does not, callers are refused at once instead of each waiting out the
//! pool's connection timeout, and one caller at a time probes it again; the
//! change is logged once each way, not once per attempt.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often, at most, a caller tries the database while it is down.
pub(crate) const PROBE_EVERY: Duration = Duration::from_millis(500);

/// The database's reachability, shared by the pool's connection manager
/// (which learns it) and the pool's callers (who act on it).
#[derive(Debug)]
pub(crate) struct Health {
    up: AtomicBool,
    last_probe: Mutex<Option<Instant>>,
    backend: &'static str,
}

impl Health {
    pub(crate) fn new(backend: &'static str) -> Health {
        Health {
            up: AtomicBool::new(true),
            last_probe: Mutex::new(None),
            backend,
        }
    }

    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::SeqCst)
    }

    /// A connection opened.
    pub(crate) fn reached(&self) {
        if !self.up.swap(true, Ordering::SeqCst) {
            tracing::warn!(backend = self.backend, "database reachable again");
        }
    }

    /// A connection could not be opened.
    pub(crate) fn unreachable(&self, cause: &dyn std::fmt::Display) {
        if self.up.swap(false, Ordering::SeqCst) {
            tracing::warn!(backend = self.backend, %cause, "database unreachable; refusing requests until it answers");
        }
    }

    /// While the database is down: whether this caller is the one to try it
    /// again (at most one every [`PROBE_EVERY`]).
    pub(crate) fn take_probe(&self) -> bool {
        let mut last = self.last_probe.lock().unwrap_or_else(|e| e.into_inner());
        let due = last.is_none_or(|at| at.elapsed() >= PROBE_EVERY);
        if due {
            *last = Some(Instant::now());
        }
        due
    }
}
