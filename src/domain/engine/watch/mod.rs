//! WAIT-3a, OPS-4: one watcher thread per handle hears other handles' and
//! processes' commits and wakes this handle's waiters, so a waiter sleeps
//! until woken instead of polling on its own. Per tick it makes one check
//! for all waiters together:
//! - SQLite: `PRAGMA data_version` on a connection of its own, every
//!   `watch_interval` (10 ms by default: one pragma, no table read); only
//!   when it moved, one statement reads the state of every waited-on bundle
//!   and wakes the waiters whose bundle changed.
//! - PostgreSQL: a listening connection (`LISTEN` on the schema's own
//!   channel, `store::watch::CHANNEL_SQL`) wakes the
//!   waiters a notification names at once; every poll interval the same one
//!   statement covers a notification lost to a crash between a commit and
//!   its `NOTIFY`. If the listening connection drops, that poll carries the
//!   waiters while the watcher listens again.
//!
//! The watcher starts with the handle's first wait and ends with the handle
//! (close or drop); it holds no lock of the registry across database work.

#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;
mod tick;

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
#[cfg(feature = "postgres")]
use std::time::Duration;

use crate::domain::engine::signal::EventSignal;
use crate::domain::engine::waiters::Waiters;
use crate::store::{DbPool, Target};

use tick::Context;
pub(crate) use tick::{WatchSettings, WatchStats};

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
            let thread = builder.spawn(move || sqlite::watch(&context, &path, &stopped))?;
            Ok(Running {
                stop: Stopper::Channel(stop),
                thread,
            })
        }
        #[cfg(feature = "postgres")]
        Target::Postgres(target) => {
            let url = target.listen_url().map(str::to_owned);
            let pipe = Arc::new(crate::store::watch::Stop::new()?);
            let (ready, listening) = mpsc::sync_channel::<()>(1);
            let thread = {
                let pipe = pipe.clone();
                builder.spawn(move || postgres::watch(&context, url.as_deref(), &pipe, ready))?
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
