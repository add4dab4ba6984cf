//! Opening and closing an engine: the pool, and every thread a handle
//! runs — the watcher, the heartbeat, the dispatch worker, the announcer,
//! the ledger's appender, the deadline sweeper and the webhook worker —
//! started here and stopped in [`Engine::close`], so no thread is wired
//! by hand anywhere else and none outlives its handle (REL-7).

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::domain::engine::dispatch::DispatchWorker;
use crate::domain::engine::heartbeat::Heartbeat;
use crate::domain::engine::ledger::Ledger;
use crate::domain::engine::rounds::RoundThread;
use crate::domain::engine::signal::EventSignal;
use crate::domain::engine::waiters::Waiters;
use crate::domain::engine::watch::{Watch, WatchSettings};
use crate::domain::engine::Engine;
use crate::domain::resume::ResumeDispatcher;
use crate::error::OpenError;
use crate::store::failpoints::Failpoints;
use crate::store::watch::Announcer;
use crate::store::{
    open_pool, Clock, IdKind, IdSource, PoolSettings, Synchronous, SystemClock, Target as DbTarget,
    UuidV7Ids,
};

/// Everything an engine is opened with: the public `Builder`'s settings.
pub(crate) struct EngineOptions {
    pub(crate) database_url: String,
    /// PROD-1: PostgreSQL straight, beside a pooled `database_url`.
    pub(crate) direct_url: Option<String>,
    pub(crate) pool_size: u32,
    pub(crate) busy_timeout: Duration,
    pub(crate) connection_timeout: Duration,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: Arc<dyn IdSource>,
    pub(crate) poll_interval: Duration,
    pub(crate) dispatcher: Option<Arc<dyn ResumeDispatcher>>,
    pub(crate) dispatch_timeout: Duration,
    pub(crate) synchronous: Synchronous,
    pub(crate) attachment_lease: Duration,
    pub(crate) watch_interval: Duration,
    /// EXP-4: the deadline sweeper's longest sleep, when it runs.
    pub(crate) sweep_interval: Option<Duration>,
    /// LINK-1: the base of answer links' URLs.
    pub(crate) public_url: Option<String>,
    #[cfg(feature = "test-hooks")]
    pub(crate) statements: Option<crate::store::StatementCounter>,
}

impl EngineOptions {
    /// The defaults the public API documents.
    pub(crate) fn new(database_url: &str) -> EngineOptions {
        EngineOptions {
            database_url: database_url.to_owned(),
            direct_url: None,
            pool_size: 8,
            busy_timeout: Duration::from_secs(5),
            connection_timeout: Duration::from_secs(30),
            clock: Arc::new(SystemClock),
            ids: Arc::new(UuidV7Ids),
            poll_interval: Duration::from_millis(250),
            dispatcher: None,
            dispatch_timeout: Duration::from_secs(5),
            synchronous: Synchronous::Full,
            attachment_lease: Duration::from_secs(30),
            watch_interval: Duration::from_millis(10),
            sweep_interval: None,
            public_url: None,
            #[cfg(feature = "test-hooks")]
            statements: None,
        }
    }
}

/// A thread that could not start is a configuration error of the open.
fn could_not_start(what: &str) -> impl FnOnce(std::io::Error) -> OpenError + '_ {
    move |error| OpenError::Config(format!("could not start the {what}: {error}"))
}

/// LINK-1: a public URL is an absolute `http` or `https` URL without
/// spaces, control characters, a query or a fragment; links are put under
/// it without its trailing slash.
pub(crate) fn checked_public_url(url: &str) -> Result<String, OpenError> {
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    let host = url.split_once("://").map_or("", |(_, rest)| rest);
    let clean = !url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '?' || c == '#');
    if !scheme_ok || host.is_empty() || host.starts_with('/') || !clean || url.len() > 2000 {
        return Err(OpenError::Config(format!(
            "public_url must be an absolute http or https URL without a query or fragment, \
             not {url:?}"
        )));
    }
    Ok(url.trim_end_matches('/').to_owned())
}

impl Engine {
    /// Connects, migrates, and starts the threads the options ask for.
    pub(crate) fn open(options: EngineOptions) -> Result<Arc<Engine>, OpenError> {
        let public_url = options
            .public_url
            .as_deref()
            .map(checked_public_url)
            .transpose()?;
        let target = DbTarget::parse(&options.database_url)?
            .with_direct_url(options.direct_url.as_deref())?;
        let backend = target.backend();
        let pool = open_pool(
            target.clone(),
            &PoolSettings {
                size: options.pool_size,
                busy_timeout: options.busy_timeout,
                connection_timeout: options.connection_timeout,
                synchronous: options.synchronous,
                #[cfg(feature = "test-hooks")]
                statements: options.statements,
            },
        )?;
        // After opening: a fresh SQLite file exists now, so its path
        // canonicalizes like every later handle's.
        let database = target.identity();
        let dispatch = options
            .dispatcher
            .map(|dispatcher| {
                DispatchWorker::start(dispatcher, pool.clone(), options.dispatch_timeout)
            })
            .transpose()
            .map_err(could_not_start("dispatch thread"))?;
        let announcer = match &target {
            DbTarget::Sqlite { .. } => None,
            DbTarget::Postgres(target) => Some(
                Announcer::start(target.url.clone(), target.pooled)
                    .map_err(could_not_start("announcing thread"))?,
            ),
        };
        let handle_id = UuidV7Ids.new_id(IdKind::Bundle);
        let waiters = Arc::new(Waiters::default());
        let event_signal = Arc::new(EventSignal::default());
        let watch = Watch::new(
            WatchSettings {
                target,
                handle_id: handle_id.clone(),
                poll_interval: options.poll_interval,
                tick: options.watch_interval,
                busy_timeout: options.busy_timeout,
                clock: options.clock.clone(),
            },
            waiters.clone(),
            event_signal.clone(),
            pool.clone(),
        );
        let failpoints = Arc::new(Failpoints::default());
        let ledger = Ledger::start(pool.clone(), failpoints.clone())
            .map_err(could_not_start("attempt ledger"))?;
        let heartbeat = Heartbeat::new(
            handle_id,
            options.attachment_lease,
            options.clock.clone(),
            pool.clone(),
        );
        let engine = Arc::new(Engine {
            pool,
            backend,
            database,
            clock: options.clock,
            ids: options.ids,
            failpoints,
            waiters,
            poll_interval: options.poll_interval,
            watch,
            announcer,
            dispatch,
            heartbeat,
            closed: Default::default(),
            event_signal,
            deadline_sweeper: Default::default(),
            ledger,
            public_url,
            #[cfg(feature = "webhooks")]
            webhook_worker: Default::default(),
            #[cfg(feature = "mail")]
            mail_worker: Default::default(),
        });
        if let Some(interval) = options.sweep_interval {
            engine
                .start_deadline_sweeper(interval)
                .map_err(could_not_start("deadline sweeper"))?;
        }
        Ok(engine)
    }

    /// EXP-4: a sweep, then a sleep until the earlier of `interval` and
    /// the next deadline in the database.
    fn start_deadline_sweeper(self: &Arc<Self>, interval: Duration) -> std::io::Result<()> {
        let round = while_open(self, move |engine| engine.sweep(interval));
        let sweeper = RoundThread::start("clarion-sweeper", round)?;
        if self.deadline_sweeper.set(sweeper).is_err() {
            tracing::error!("a handle's sweeper started twice");
        }
        Ok(())
    }

    /// HOOK-4: the webhook worker, woken when events are appended here or
    /// (through the watcher) in another process. A handle runs one:
    /// starting it again leaves the first running.
    #[cfg(feature = "webhooks")]
    pub(crate) fn start_webhooks(
        self: &Arc<Self>,
        options: crate::domain::webhooks::worker::WebhookOptions,
    ) -> std::io::Result<()> {
        use crate::domain::engine::rounds::EventRoundThread;
        use crate::domain::webhooks::worker::{Stopper, Worker};
        if self.webhook_worker.get().is_some() {
            return Ok(());
        }
        let worker = Arc::new(Worker::new(options));
        let rounds = worker.clone();
        let round = while_open(self, move |engine| rounds.round_or_idle(engine));
        // PROD-4: stopping cancels the deliveries in flight; dropped
        // without a stop (the handle gone), it cancels them too.
        let stopper = Stopper::new(worker.clone());
        let thread = EventRoundThread::start(
            "clarion-webhooks",
            round,
            |wake| {
                worker.wake_with(wake.clone());
                self.subscribe_events(wake)
            },
            move || stopper.stop(),
        )?;
        // Two started at once: the later one stops at once.
        if let Err(thread) = self.webhook_worker.set(thread) {
            thread.stop();
        }
        Ok(())
    }

    /// REL-7: closes the handle for every clone: new calls fail with
    /// `HandleClosed`, blocked waits wake to return it at once, and every
    /// thread this handle started ends (the ledger's appender writes what
    /// it holds first), connections being opened for it included (waited
    /// for at most [`CONNECTS_SETTLE`]).
    pub(crate) fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.waiters.notify_all();
        self.watch.stop();
        if let Some(sweeper) = self.deadline_sweeper.get() {
            sweeper.stop();
        }
        #[cfg(feature = "webhooks")]
        if let Some(worker) = self.webhook_worker.get() {
            worker.stop();
        }
        #[cfg(feature = "mail")]
        if let Some(worker) = self.mail_worker.get() {
            worker.stop();
        }
        self.ledger.close();
        self.pool.settle_connects(CONNECTS_SETTLE);
    }
}

/// How long closing a handle waits for connections being opened for it: a
/// server that does not answer holds an opening until its own timeout. As
/// long as the announcer's flush ([`crate::store`]'s `Announcer`): a TLS
/// connection on a loaded machine can take over 2 s, and exiting during
/// one crashes in libpq's TLS teardown.
const CONNECTS_SETTLE: Duration = Duration::from_secs(10);

/// A round thread's body: `round` on the engine while it is open. The
/// thread holds the engine only during a round, so it never keeps a
/// dropped handle alive, and ends once the handle is closed or gone.
pub(crate) fn while_open(
    engine: &Arc<Engine>,
    mut round: impl FnMut(&Arc<Engine>) -> Duration + Send + 'static,
) -> impl FnMut() -> Option<Duration> + Send + 'static {
    let weak: Weak<Engine> = Arc::downgrade(engine);
    move || {
        let engine = weak.upgrade()?;
        engine.check_open().ok()?;
        Some(round(&engine))
    }
}
