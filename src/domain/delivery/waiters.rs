//! The in-process waiter registry of one handle (WAIT-3, WAIT-4): a slot
//! per waited-on bundle, a generation counter that closes the gap between
//! reading and sleeping, and the resolution this handle committed, handed
//! to its waiters so they need not read it back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::domain::model::Response;
use crate::error::Result;
use crate::rules::vocabulary::BundleStatus;

/// A bundle some thread of this handle waits on.
#[derive(Debug)]
pub(crate) struct Slot {
    session_id: String,
    generation: Mutex<u64>,
    changed: Condvar,
    /// Every waiter, agent or external: the slot lives while any remains.
    waiters: AtomicUsize,
    /// Agent-side waiters only: the last one to time out detaches the
    /// bundle; an external `wait_bundle` never keeps an agent attached.
    agent_waiters: AtomicUsize,
    /// A resolution this handle committed, handed to its waiters so they
    /// need not read it back (it is the committed one: the winner's
    /// response is built from the committed rows).
    pub(crate) resolution: Mutex<Option<(BundleStatus, Response)>>,
}

impl Slot {
    pub(crate) fn generation(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn bump(&self) {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.changed.notify_all();
    }

    /// Sleeps until the generation moves past `seen` or `timeout` passes.
    pub(crate) fn wait_past(&self, seen: u64, timeout: Duration) {
        let guard = self.generation.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .changed
            .wait_timeout_while(guard, timeout, |generation| *generation == seen);
    }
}

/// The in-process waiter registry of one handle.
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

impl Waiters {
    pub(crate) fn enter(&self, pending_id: &str, session_id: &str, agent: bool) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots
            .entry(pending_id.to_owned())
            .or_insert_with(|| {
                Arc::new(Slot {
                    session_id: session_id.to_owned(),
                    generation: Mutex::new(0),
                    changed: Condvar::new(),
                    waiters: AtomicUsize::new(0),
                    agent_waiters: AtomicUsize::new(0),
                    resolution: Mutex::new(None),
                })
            })
            .clone();
        slot.waiters.fetch_add(1, Ordering::SeqCst);
        if agent {
            slot.agent_waiters.fetch_add(1, Ordering::SeqCst);
        }
        slot
    }

    /// Leaves the slot; returns how many other agent waiters remain on it.
    pub(crate) fn leave(&self, pending_id: &str, slot: &Arc<Slot>, agent: bool) -> usize {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if slot.waiters.fetch_sub(1, Ordering::SeqCst) == 1 {
            slots.remove(pending_id);
        }
        if agent {
            slot.agent_waiters.fetch_sub(1, Ordering::SeqCst) - 1
        } else {
            slot.agent_waiters.load(Ordering::SeqCst)
        }
    }

    /// Runs `body` unless an agent waits on the bundle, holding the registry
    /// lock so that no agent starts waiting meanwhile. `None` if it did not run.
    pub(crate) fn unless_waited<T>(
        &self,
        pending_id: &str,
        body: impl FnOnce() -> Result<T>,
    ) -> Result<Option<T>> {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let waited = slots
            .get(pending_id)
            .is_some_and(|slot| slot.agent_waiters.load(Ordering::SeqCst) > 0);
        if waited {
            return Ok(None);
        }
        let value = body()?;
        drop(slots);
        Ok(Some(value))
    }

    /// This handle committed a resolution of the bundle.
    pub(crate) fn notify_resolved(
        &self,
        pending_id: &str,
        status: BundleStatus,
        response: &Response,
    ) {
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(pending_id)
            .cloned();
        if let Some(slot) = slot {
            *slot.resolution.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((status, response.clone()));
            slot.bump();
        }
    }

    /// Something about this session's bundles changed and committed.
    pub(crate) fn notify_session(&self, session_id: &str) {
        let slots: Vec<Arc<Slot>> = self
            .slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|slot| slot.session_id == session_id)
            .cloned()
            .collect();
        slots.iter().for_each(|slot| slot.bump());
    }

    /// Anything may have changed (a task and its sessions were deleted).
    pub(crate) fn notify_all(&self) {
        let slots: Vec<Arc<Slot>> = self
            .slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        slots.iter().for_each(|slot| slot.bump());
    }
}
