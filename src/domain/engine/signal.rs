//! HTTP-6: the in-process signal that events may have been appended. It
//! imports nothing of the domain, so the handle's engine can hold it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// HTTP-6: wakes this handle's event readers when events may have been
/// appended — by this handle after a commit, or by others as the handle's
/// watcher hears (WAIT-3a). A reader never trusts it: it reads the log
/// from its position again. The callbacks run on the committing (or
/// watching) thread, so they must only signal (never block).
#[derive(Default)]
pub(crate) struct EventSignal {
    next_id: AtomicU64,
    readers: Mutex<Vec<(u64, Wake)>>,
    /// Reads of the log (`events_after`) through this handle: HTTP-17
    /// counts them to see the streams' fan-out share one read.
    reads: AtomicU64,
}

/// What an event reader is called with when it should read again.
pub(crate) type Wake = Arc<dyn Fn() + Send + Sync>;

impl EventSignal {
    pub(crate) fn count_read(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }

    /// How many reads of the log this handle made so far.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    fn subscribe(&self, wake: Wake) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, wake));
        id
    }

    fn unsubscribe(&self, id: u64) {
        self.lock().retain(|(reader, _)| *reader != id);
    }

    pub(crate) fn has_readers(&self) -> bool {
        !self.lock().is_empty()
    }

    pub(crate) fn notify(&self) {
        let readers: Vec<Wake> = self.lock().iter().map(|(_, wake)| wake.clone()).collect();
        readers.iter().for_each(|wake| wake());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Wake)>> {
        self.readers.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A subscription of `Clarion::subscribe_events`; dropping it ends the
/// calls.
pub struct EventSubscription {
    signal: Arc<EventSignal>,
    id: u64,
}

impl EventSubscription {
    pub(crate) fn new(signal: &Arc<EventSignal>, wake: Wake) -> EventSubscription {
        EventSubscription {
            signal: signal.clone(),
            id: signal.subscribe(wake),
        }
    }
}

impl std::fmt::Debug for EventSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSubscription")
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for EventSubscription {
    fn drop(&mut self) {
        self.signal.unsubscribe(self.id);
    }
}
