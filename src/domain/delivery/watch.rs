//! WAIT-3a, OPS-4: one watcher thread per handle hears other handles' and
//! processes' commits and wakes this handle's waiters, so a waiter sleeps
//! until woken instead of polling on its own. Per tick it makes one check
//! for all waiters together:
//! - SQLite: `PRAGMA data_version` on a connection of its own, every
//!   `watch_interval` (10 ms by default: one pragma, no table read); only
//!   when it moved, one statement reads the state of every waited-on bundle
//!   and wakes the waiters whose bundle changed.
//! - PostgreSQL: a listening connection (`LISTEN clarion`) wakes the
//!   waiters a notification names at once; every poll interval the same one
//!   statement covers a notification lost to a crash between a commit and
//!   its `NOTIFY`. If the listening connection drops, that poll carries the
//!   waiters while the watcher listens again.
//!
//! The watcher starts with the handle's first wait and ends with the handle
//! (close or drop); it holds no lock of the registry across database work.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use diesel::prelude::*;

use crate::domain::delivery::waiters::{Fingerprint, Waiters};
use crate::domain::events::signal::EventSignal;
use crate::error::{Error, Result};
use crate::rules::activeness;
use crate::store::schema::bundles;
use crate::store::watch::DataVersion;
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
    idle: AtomicBool,
}

/// One handle's watcher.
pub(crate) struct Watch {
    settings: Arc<WatchSettings>,
    waiters: Arc<Waiters>,
    events: Arc<EventSignal>,
    pool: DbPool,
    pub(crate) stats: Arc<WatchStats>,
    running: Mutex<State>,
}

enum State {
    Idle,
    Running(Running),
    /// Closed (REL-7): never starts again.
    Stopped,
}

struct Running {
    stop: Stopper,
    thread: JoinHandle<()>,
}

enum Stopper {
    /// A message ends the SQLite watcher's idle sleep; dropping the sender
    /// ends the watcher.
    Channel(mpsc::Sender<()>),
    #[cfg(feature = "postgres")]
    Pipe(Arc<crate::store::watch::Stop>),
}

/// What the watcher thread holds: never the handle itself, so dropping
/// the handle ends it.
struct Context {
    settings: Arc<WatchSettings>,
    waiters: Arc<Waiters>,
    /// This handle's event readers (HTTP-6): told of every change heard.
    events: Arc<EventSignal>,
    pool: DbPool,
    stats: Arc<WatchStats>,
}

impl Watch {
    pub(crate) fn new(
        settings: WatchSettings,
        waiters: Arc<Waiters>,
        events: Arc<EventSignal>,
        pool: DbPool,
    ) -> Watch {
        Watch {
            settings: Arc::new(settings),
            waiters,
            events,
            pool,
            stats: Arc::default(),
            running: Mutex::new(State::Idle),
        }
    }

    /// Starts the watcher if it is not running; true if it runs. On
    /// PostgreSQL the first `LISTEN` is in place before this returns, so a
    /// waiter's first read never races its notification. When the thread
    /// cannot start, false: the caller then polls on its own.
    pub(crate) fn ensure_running(&self) -> bool {
        let mut state = self.running.lock().unwrap_or_else(|p| p.into_inner());
        match &*state {
            State::Running(running) => {
                // A SQLite watcher asleep for want of waiters checks now.
                #[cfg_attr(not(feature = "postgres"), allow(irrefutable_let_patterns))]
                if let Stopper::Channel(nudge) = &running.stop {
                    if self.stats.idle.swap(false, Ordering::SeqCst) {
                        let _ = nudge.send(());
                    }
                }
                return true;
            }
            State::Stopped => return false,
            State::Idle => {}
        }
        let context = Context {
            settings: self.settings.clone(),
            waiters: self.waiters.clone(),
            events: self.events.clone(),
            pool: self.pool.clone(),
            stats: self.stats.clone(),
        };
        match start(context) {
            Ok(running) => {
                *state = State::Running(running);
                true
            }
            Err(error) => {
                tracing::error!(%error, "could not start the watcher; waits poll on their own");
                false
            }
        }
    }

    /// REL-7: ends the watcher and its connection; it never starts again.
    pub(crate) fn stop(&self) {
        let state = std::mem::replace(
            &mut *self.running.lock().unwrap_or_else(|p| p.into_inner()),
            State::Stopped,
        );
        if let State::Running(running) = state {
            match running.stop {
                Stopper::Channel(sender) => drop(sender),
                #[cfg(feature = "postgres")]
                Stopper::Pipe(pipe) => pipe.signal(),
            }
            let _ = running.thread.join();
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop();
    }
}

fn start(context: Context) -> std::io::Result<Running> {
    let builder = std::thread::Builder::new().name("clarion-watch".to_owned());
    match &context.settings.target {
        Target::Sqlite { path } => {
            let path = path.clone();
            let (stop, stopped) = mpsc::channel::<()>();
            let thread = builder.spawn(move || watch_sqlite(&context, &path, &stopped))?;
            Ok(Running {
                stop: Stopper::Channel(stop),
                thread,
            })
        }
        #[cfg(feature = "postgres")]
        Target::Postgres { url } => {
            let url = url.clone();
            let pipe = Arc::new(crate::store::watch::Stop::new()?);
            let (ready, listening) = mpsc::sync_channel::<()>(1);
            let thread = {
                let pipe = pipe.clone();
                builder.spawn(move || postgres::watch(&context, &url, &pipe, ready))?
            };
            // The first LISTEN, or its failure; a server that does not
            // answer in time leaves the poll in charge meanwhile.
            let _ = listening.recv_timeout(Duration::from_secs(10));
            Ok(Running {
                stop: Stopper::Pipe(pipe),
                thread,
            })
        }
        #[cfg(not(feature = "postgres"))]
        Target::Postgres { .. } => Err(std::io::Error::other("PostgreSQL is not compiled in")),
    }
}

/// How long an idle SQLite watcher sleeps unless a waiter nudges it.
const IDLE_SLEEP: Duration = Duration::from_secs(1);

/// SQLite: one `data_version` per tick while anyone waits.
fn watch_sqlite(context: &Context, path: &str, stopped: &mpsc::Receiver<()>) {
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

impl Context {
    /// Nobody waits and nobody reads events: nothing to check.
    fn is_idle(&self) -> bool {
        self.waiters.is_empty() && !self.events.has_readers()
    }
}

/// Why the waited-on bundles are read again.
#[derive(Clone, Copy)]
enum Reread {
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
fn recheck_logged(context: &Context, why: Reread) -> bool {
    match recheck(context, why) {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, "could not re-read the waited-on bundles; retrying next tick");
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
                        activeness::is_active(),
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
fn heard(context: &Context, payload: &str) {
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

#[cfg(feature = "postgres")]
mod postgres {
    use std::time::Instant;

    use super::*;
    use crate::store::watch::{Heard, Listener, Stop};

    /// Listens, waking waiters as notifications arrive; polls once per poll
    /// interval; listens again when the connection drops.
    pub(super) fn watch(context: &Context, url: &str, stop: &Stop, ready: mpsc::SyncSender<()>) {
        let mut listener = listen(context, url);
        let _ = ready.send(());
        let poll = context.settings.poll_interval;
        let mut next_poll = Instant::now() + poll;
        loop {
            let now = Instant::now();
            if now >= next_poll {
                next_poll = now + poll;
                let deaf = listener.is_none();
                if deaf {
                    listener = listen(context, url);
                }
                // Deaf, announcements were missed: event readers read on
                // from their positions. (Not on every poll: each reader
                // would read; a notification lost to a crash between a
                // commit and its NOTIFY waits for the next change.)
                if deaf {
                    context.events.notify();
                }
                if !context.waiters.is_empty() {
                    // The poll is this tick's one check: its statement is
                    // the re-read itself, not a re-read after a change.
                    context.stats.checks.fetch_add(1, Ordering::SeqCst);
                    // Deaf, a principal's sight may have changed unheard.
                    let _ = recheck_logged(context, Reread::Poll { wake_scoped: deaf });
                }
            }
            let timeout = next_poll.saturating_duration_since(Instant::now());
            let Some(active) = listener.as_mut() else {
                if stop.sleep(timeout) {
                    return;
                }
                continue;
            };
            match active.wait(timeout, stop) {
                Ok(Heard::Stopped) => return,
                Ok(Heard::Payloads(payloads)) => {
                    for payload in payloads {
                        heard(context, &payload);
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "the listening connection dropped; polling until it is back");
                    // Closed before a new one opens.
                    drop(listener.take());
                    context.stats.listener_pid.store(0, Ordering::SeqCst);
                    listener = listen(context, url);
                    // What was announced while deaf is read back.
                    context.events.notify();
                    let _ = recheck_logged(context, Reread::AfterChange);
                }
            }
        }
    }

    fn listen(context: &Context, url: &str) -> Option<Listener> {
        if context.stats.block_listening.load(Ordering::SeqCst) {
            return None;
        }
        match Listener::listen(url) {
            Ok(listener) => {
                context
                    .stats
                    .listener_pid
                    .store(i64::from(listener.backend_pid()), Ordering::SeqCst);
                Some(listener)
            }
            Err(error) => {
                tracing::warn!(%error, "could not listen for other processes' changes; polling");
                None
            }
        }
    }
}
