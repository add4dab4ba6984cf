//! The in-process waiter registry of one handle (WAIT-3, WAIT-4): a slot
//! per waited-on bundle, a generation counter that closes the gap between
//! reading and sleeping, and the resolution this handle committed, handed
//! to its waiters so they need not read it back. A waiter sleeps on the
//! slot's condition variable (a thread each), or registers a [`Wake`]
//! that every bump calls (no thread at all: HTTP-5).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::domain::views::Response;
use crate::rules::vocabulary::BundleStatus;

/// What of a bundle's durable state a waiter's outcome depends on: when
/// it is resolved, whether it is active and in its session's current turn,
/// and whether its agent is detached. The handle's watcher reads it for all
/// waited-on bundles in one statement (WAIT-3a) and wakes the waiters of a
/// bundle only if it differs from what one of them last read.
pub(crate) type Fingerprint = (Option<i64>, Option<bool>, Option<bool>, bool);

/// A bundle some thread of this handle waits on.
#[derive(Debug)]
pub(crate) struct Slot {
    session_id: String,
    generation: Mutex<u64>,
    changed: Condvar,
    /// Every waiter of this handle: the slot lives while any remains.
    waiters: AtomicUsize,
    /// Waiters reading through a principal's scope: what they may see
    /// can change without the bundle's own row changing.
    scoped: AtomicUsize,
    /// What each sleeping waiter last read (`None`: not read through the
    /// bundle's own row). One entry per waiter: two waiters of one bundle
    /// may have read it on either side of a commit.
    observed: Mutex<Vec<Option<Fingerprint>>>,
    /// A resolution this handle committed, handed to its waiters so they
    /// need not read it back (it is the committed one: the winner's
    /// response is built from the committed rows).
    pub(crate) resolution: Mutex<Option<(BundleStatus, Response)>>,
    /// The callbacks of waiters that hold no thread (HTTP-5).
    wakes: Mutex<Vec<Arc<Wake>>>,
}

/// The callback of a waiter that holds no thread: called whenever it must
/// read again. Armed by each read before it takes the generation, and
/// disarmed by the bump that calls it, so a burst of bumps during one read
/// calls it once, and a bump after that read always calls it (WAIT-3).
pub(crate) struct Wake {
    armed: AtomicBool,
    call: Box<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wake")
            .field("armed", &self.armed)
            .finish_non_exhaustive()
    }
}

impl Wake {
    pub(crate) fn new(call: impl Fn() + Send + Sync + 'static) -> Arc<Wake> {
        Arc::new(Wake {
            armed: AtomicBool::new(false),
            call: Box::new(call),
        })
    }

    /// The waiter is about to take the generation and read: the next bump
    /// calls it.
    pub(crate) fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }
}

impl Slot {
    pub(crate) fn generation(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A waiter read `now`, replacing what it read before (`previous`).
    pub(crate) fn observe(&self, previous: Option<Option<Fingerprint>>, now: Option<Fingerprint>) {
        let mut observed = self.observed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(previous) = previous {
            if let Some(at) = observed.iter().position(|seen| *seen == previous) {
                observed.swap_remove(at);
            }
        }
        observed.push(now);
    }

    /// A waiter that read `previous` (if it read) stops waiting.
    pub(crate) fn forget(&self, previous: Option<Option<Fingerprint>>) {
        let Some(previous) = previous else {
            return;
        };
        let mut observed = self.observed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = observed.iter().position(|seen| *seen == previous) {
            observed.swap_remove(at);
        }
    }

    /// The watcher read `now`: true if some waiter read something else.
    pub(crate) fn moved(&self, now: Option<Fingerprint>) -> bool {
        let observed = self.observed.lock().unwrap_or_else(|p| p.into_inner());
        observed.iter().any(|seen| *seen != now)
    }

    pub(crate) fn is_scoped(&self) -> bool {
        self.scoped.load(Ordering::SeqCst) > 0
    }

    /// Something the slot's waiters depend on may have changed: sleeping
    /// threads wake, and every armed callback is called — after the
    /// generation moved (a read that follows sees the change) and outside
    /// the slot's locks (a callback may end a wait, which leaves the slot).
    pub(crate) fn bump(&self) {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.changed.notify_all();
        let due: Vec<Arc<Wake>> = self
            .wakes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|wake| wake.armed.swap(false, Ordering::SeqCst))
            .cloned()
            .collect();
        for wake in due {
            (wake.call)();
        }
    }

    /// Registers a waiter's callback; every later bump may call it.
    pub(crate) fn listen(&self, wake: Arc<Wake>) {
        self.wakes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(wake);
    }

    /// Removes a callback registered with [`Slot::listen`].
    pub(crate) fn unlisten(&self, wake: &Arc<Wake>) {
        let mut wakes = self.wakes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = wakes.iter().position(|w| Arc::ptr_eq(w, wake)) {
            wakes.swap_remove(at);
        }
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
    /// Counts the watcher's re-reads as they start. A waiter whose read
    /// overlapped one records its reading too late for that re-read to
    /// compare, so it reads again instead of sleeping (WAIT-3).
    rechecks: AtomicU64,
}

impl Waiters {
    /// Enters the slot of `pending_id`; `scoped` for a waiter that reads
    /// through a principal's scope.
    pub(crate) fn enter(&self, pending_id: &str, session_id: &str, scoped: bool) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots
            .entry(pending_id.to_owned())
            .or_insert_with(|| {
                Arc::new(Slot {
                    session_id: session_id.to_owned(),
                    generation: Mutex::new(0),
                    changed: Condvar::new(),
                    waiters: AtomicUsize::new(0),
                    scoped: AtomicUsize::new(0),
                    observed: Mutex::new(Vec::new()),
                    resolution: Mutex::new(None),
                    wakes: Mutex::new(Vec::new()),
                })
            })
            .clone();
        slot.waiters.fetch_add(1, Ordering::SeqCst);
        if scoped {
            slot.scoped.fetch_add(1, Ordering::SeqCst);
        }
        slot
    }

    /// Leaves the slot.
    pub(crate) fn leave(&self, pending_id: &str, slot: &Arc<Slot>, scoped: bool) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if scoped {
            slot.scoped.fetch_sub(1, Ordering::SeqCst);
        }
        if slot.waiters.fetch_sub(1, Ordering::SeqCst) == 1 {
            slots.remove(pending_id);
        }
    }

    /// This handle committed a resolution of the bundle.
    pub(crate) fn notify_resolved(
        &self,
        pending_id: &str,
        status: BundleStatus,
        response: &Response,
    ) {
        if let Some(slot) = self.slot(pending_id) {
            *slot.resolution.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((status, response.clone()));
            slot.bump();
        }
    }

    /// Where the watcher's re-reads stand; see [`Waiters::recheck_started`].
    pub(crate) fn recheck_epoch(&self) -> u64 {
        self.rechecks.load(Ordering::SeqCst)
    }

    /// The watcher starts re-reading the waited-on bundles.
    pub(crate) fn recheck_started(&self) {
        self.rechecks.fetch_add(1, Ordering::SeqCst);
    }

    /// Every waited-on bundle and its slot, for the watcher's one check.
    pub(crate) fn snapshot(&self) -> Vec<(String, Arc<Slot>)> {
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(id, slot)| (id.clone(), slot.clone()))
            .collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// Another handle or process changed this bundle (WAIT-3a).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))] // heard on PostgreSQL only
    pub(crate) fn notify_bundle(&self, pending_id: &str) {
        if let Some(slot) = self.slot(pending_id) {
            slot.bump();
        }
    }

    /// The bundle's slot, if anyone waits on it here.
    fn slot(&self, pending_id: &str) -> Option<Arc<Slot>> {
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(pending_id)
            .cloned()
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

/// The agent-side waiters of this whole process, on every handle, per
/// database and bundle (WAIT-1): the last one to time out detaches the
/// bundle, so a second handle on the same database never has its agent
/// detached by another's timeout. An external `wait_bundle` never keeps an
/// agent attached, so it is not counted here.
///
/// The lock is held only to read and change the counts, never across
/// database work: a detach marks the bundle as detaching, commits with the
/// lock released, then clears the mark; an agent that starts waiting on
/// that bundle meanwhile waits for the mark to clear, so it is never
/// detached behind its back.
#[derive(Default)]
struct AgentWaits {
    bundles: Mutex<HashMap<(String, String), Attachment>>,
    detached: Condvar,
}

#[derive(Default)]
struct Attachment {
    agents: usize,
    detaching: bool,
}

fn agent_waits() -> &'static AgentWaits {
    static AGENT_WAITS: OnceLock<AgentWaits> = OnceLock::new();
    AGENT_WAITS.get_or_init(AgentWaits::default)
}

/// One agent-side wait on a bundle, counted while it lives.
pub(crate) struct AgentWait {
    key: (String, String),
}

impl AgentWait {
    /// Counts an agent waiting on `pending_id` in the database `database`;
    /// waits first for a detach of that bundle in flight to finish.
    pub(crate) fn arrive(database: &str, pending_id: &str) -> AgentWait {
        let key = (database.to_owned(), pending_id.to_owned());
        let waits = agent_waits();
        let bundles = waits.bundles.lock().unwrap_or_else(|p| p.into_inner());
        let mut bundles = waits
            .detached
            .wait_while(bundles, |bundles| {
                bundles.get(&key).is_some_and(|a| a.detaching)
            })
            .unwrap_or_else(|p| p.into_inner());
        bundles.entry(key.clone()).or_default().agents += 1;
        AgentWait { key }
    }

    /// Stops counting; true if no other agent of this process waits on the
    /// bundle.
    pub(crate) fn depart(self) -> bool {
        let mut bundles = agent_waits()
            .bundles
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let last = match bundles.get_mut(&self.key) {
            Some(attachment) => {
                attachment.agents = attachment.agents.saturating_sub(1);
                attachment.agents == 0
            }
            None => true,
        };
        if last && !bundles.get(&self.key).is_some_and(|a| a.detaching) {
            bundles.remove(&self.key);
        }
        last
    }
}

/// The right to detach a bundle no agent of this process waits on, held
/// while the detach commits; agents arriving meanwhile wait for it.
pub(crate) struct Detaching {
    key: (String, String),
}

impl Detaching {
    /// `None` if an agent of this process waits on the bundle, or another
    /// detach of it is in flight.
    pub(crate) fn begin(database: &str, pending_id: &str) -> Option<Detaching> {
        let key = (database.to_owned(), pending_id.to_owned());
        let mut bundles = agent_waits()
            .bundles
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let attachment = bundles.entry(key.clone()).or_default();
        if attachment.agents > 0 || attachment.detaching {
            return None;
        }
        attachment.detaching = true;
        Some(Detaching { key })
    }
}

impl Drop for Detaching {
    fn drop(&mut self) {
        let waits = agent_waits();
        let mut bundles = waits.bundles.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(attachment) = bundles.get_mut(&self.key) {
            attachment.detaching = false;
            if attachment.agents == 0 {
                bundles.remove(&self.key);
            }
        }
        waits.detached.notify_all();
    }
}
