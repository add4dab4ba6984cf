//! A handle's own background thread that runs one round of work, then
//! sleeps for as long as the round says, until it is nudged awake or
//! stopped: EXP-4's deadline sweeper is one, HOOK-4's webhook worker
//! another (woken by appended events too). It ends on close (REL-7), or by
//! itself once its round says so (its handle is gone).

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

#[cfg(any(feature = "webhooks", feature = "mail"))]
use crate::domain::engine::signal::{EventSubscription, Wake};

#[derive(Default)]
struct Signals {
    stopped: bool,
    nudged: bool,
}

#[derive(Default)]
struct Shared {
    signals: Mutex<Signals>,
    wake: Condvar,
}

/// The running thread and how to reach it.
pub(crate) struct RoundThread {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl RoundThread {
    /// Starts the thread `name`: `round` runs, then the thread sleeps for
    /// what it returned (`None` ends the thread).
    pub(crate) fn start(
        name: &str,
        mut round: impl FnMut() -> Option<Duration> + Send + 'static,
    ) -> std::io::Result<RoundThread> {
        let shared = Arc::new(Shared::default());
        let signals = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || loop {
                let Some(sleep) = round() else {
                    return;
                };
                let guard = signals.signals.lock().unwrap_or_else(|p| p.into_inner());
                let (mut guard, _) = signals
                    .wake
                    .wait_timeout_while(guard, sleep, |s| !s.stopped && !s.nudged)
                    .unwrap_or_else(|p| p.into_inner());
                if guard.stopped {
                    return;
                }
                guard.nudged = false;
            })?;
        Ok(RoundThread {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Runs the next round now (a nearer deadline was just asked).
    pub(crate) fn nudge(&self) {
        let mut signals = self.signals();
        signals.nudged = true;
        self.shared.wake.notify_all();
    }

    /// Stops the thread and waits for its round in flight to end; from
    /// the thread itself, only stops it.
    pub(crate) fn stop(&self) {
        self.signals().stopped = true;
        self.shared.wake.notify_all();
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }

    /// Whether the thread is still running (for REL-7's test).
    #[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
    pub(crate) fn is_running(&self) -> bool {
        self.thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|thread| !thread.is_finished())
    }

    fn signals(&self) -> std::sync::MutexGuard<'_, Signals> {
        self.shared
            .signals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

/// A round thread that every appended event nudges too (HOOK-4's webhook
/// worker): the thread, the subscription that wakes it, and what stops
/// the work its rounds handed to threads of their own (PROD-4), dropped
/// with it.
#[cfg(any(feature = "webhooks", feature = "mail"))]
pub(crate) struct EventRoundThread {
    thread: Arc<RoundThread>,
    _subscription: EventSubscription,
    stopping: Box<dyn Fn() + Send + Sync>,
}

#[cfg(any(feature = "webhooks", feature = "mail"))]
impl EventRoundThread {
    /// Starts the thread `name` as [`RoundThread::start`] does; `subscribe`
    /// is given the nudge to call whenever events may have been appended
    /// (or the rounds' own work wants another round); `stopping` runs
    /// first when it is stopped.
    pub(crate) fn start(
        name: &str,
        round: impl FnMut() -> Option<Duration> + Send + 'static,
        subscribe: impl FnOnce(Wake) -> EventSubscription,
        stopping: impl Fn() + Send + Sync + 'static,
    ) -> std::io::Result<EventRoundThread> {
        let thread = Arc::new(RoundThread::start(name, round)?);
        let nudged = Arc::downgrade(&thread);
        let subscription = subscribe(Arc::new(move || {
            if let Some(thread) = nudged.upgrade() {
                thread.nudge();
            }
        }));
        Ok(EventRoundThread {
            thread,
            _subscription: subscription,
            stopping: Box::new(stopping),
        })
    }

    pub(crate) fn stop(&self) {
        (self.stopping)();
        self.thread.stop();
    }

    #[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
    pub(crate) fn is_running(&self) -> bool {
        self.thread.is_running()
    }
}
