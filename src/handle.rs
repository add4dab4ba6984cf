//! The public handle: [`Clarion`], an open database, and its [`Builder`].
//! Each method is the Rust door of one operation: it hands its typed
//! arguments to the domain's engine and returns the typed result.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::domain::engine::dispatch::DispatchWorker;
use crate::domain::engine::heartbeat::Heartbeat;
use crate::domain::engine::ledger::Ledger;
use crate::domain::engine::waiters::{Waiters, Wake};
use crate::domain::engine::watch::{Watch, WatchSettings};
use crate::domain::engine::Engine;
use crate::store::failpoints::Failpoints;
use crate::store::watch::Announcer;
use crate::store::{open_pool, PoolSettings, Target as DbTarget};

use crate::domain::ask::{AskRequest, Asked};
use crate::domain::delivery::wait::PendingWait;
use crate::domain::engine::signal::EventSubscription;
use crate::domain::events::EventPage;
use crate::domain::history::{SettledPage, SettledRequest};
use crate::domain::lifecycle::{SessionUpsert, TaskUpsert, WorkspaceUpsert};
use crate::domain::listing::{ListPage, ListRequest, Summary, TaskPendingActions};
use crate::domain::resolve::ResolveRequest;
use crate::domain::resume::{Delivery, DeliveryReport, ResumeDispatcher};
#[cfg(feature = "http")]
use crate::domain::tokens::{NewToken, TokenInfo, WebSession};
use crate::domain::views::{AttemptView, BundleDetail, LedgerEntry, Resolved, WaitOutcome};
#[cfg(feature = "webhooks")]
use crate::domain::webhooks::worker::{TestDelivery, WebhookOptions};
use crate::domain::webhooks::{WebhookAdd, WebhookFigures, WebhookSecret, WebhookView};
use crate::doors::envelope::Envelope;
use crate::doors::mcp::UnknownTool;
use crate::doors::operations::Operation;
use crate::error::{OpenError, Result};
use crate::rules::capability::{Authorization, Target};
use crate::rules::principal::Principal;
use crate::rules::vocabulary::{Channel, SessionState};
use crate::store::{
    Backend, Clock, IdKind, IdSource, Synchronous, SystemClock, Timestamp, UuidV7Ids,
};

/// An open clarion database. Cheap to clone; safe to share between threads.
/// Every operation checks the principal's capability first (AUTH-2), then
/// what it may see (AUTH-3..6): a bundle it may not see is `NotFound`,
/// exactly like one that does not exist (AUTH-5).
#[derive(Clone)]
pub struct Clarion {
    pub(crate) engine: Arc<Engine>,
    /// The door this handle's calls record in the attempt ledger (AUD-4).
    channel: Channel,
}

/// While it lives, the handle's attachment lease is renewed
/// ([`Clarion::keep_lease`]).
pub struct LeaseHold {
    _beating: crate::domain::engine::heartbeat::Beating,
}

impl std::fmt::Debug for LeaseHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseHold").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Clarion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clarion")
            .field("backend", &self.engine.backend)
            .finish_non_exhaustive()
    }
}

/// Options for [`Clarion::builder`].
///
/// ```
/// use std::time::Duration;
/// # let dir = tempfile::tempdir().unwrap();
/// # let url = format!("sqlite://{}", dir.path().join("inbox.db").display());
/// let inbox = clarion::Clarion::builder(&url)
///     .pool_size(4)
///     .poll_interval(Duration::from_millis(100))
///     .open()?;
/// # Ok::<(), clarion::OpenError>(())
/// ```
pub struct Builder {
    database_url: String,
    pool_size: u32,
    busy_timeout: Duration,
    connection_timeout: Duration,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdSource>,
    poll_interval: Duration,
    dispatcher: Option<Arc<dyn ResumeDispatcher>>,
    dispatch_timeout: Duration,
    synchronous: Synchronous,
    attachment_lease: Duration,
    watch_interval: Duration,
    sweep_interval: Option<Duration>,
    #[cfg(feature = "test-hooks")]
    statements: Option<crate::store::StatementCounter>,
}

impl Builder {
    /// EXP-4: settles due bundles on a thread of this handle, waking at
    /// the earlier of `interval` and the next deadline in the database
    /// (off by default; 250 ms suits most hosts). Correctness never
    /// depends on it — whoever meets a due bundle settles it — but with it
    /// a deadline's outcome reaches waiters, the outbox and the event log
    /// within about a second. It ends when the handle is closed or the
    /// last clone dropped. A host that mounts the HTTP router should turn
    /// it on: `clarion serve` does.
    pub fn sweep_deadlines(mut self, interval: Duration) -> Self {
        self.sweep_interval = Some(interval.max(Duration::from_millis(10)));
        self
    }

    /// How long a bundle stays attached to its agent without a wait renewing
    /// it (DEL-3; default 30 s). Asking attaches a bundle to this handle;
    /// while an agent of the handle waits, the lease is renewed once per
    /// third of it. When the process dies or nobody waits for a lease, the
    /// bundle counts as detached, so its answer reaches the outbox without
    /// any host call.
    pub fn attachment_lease(mut self, lease: Duration) -> Self {
        self.attachment_lease = lease.max(Duration::from_millis(3));
        self
    }

    /// When a SQLite commit reaches the disk (REL-5). The default,
    /// [`Synchronous::Full`], makes every `200` survive power loss;
    /// [`Synchronous::Normal`] commits faster but may lose the last commits
    /// on power loss (never on a process crash), so an answer reported as
    /// won could be pending again after a reboot. PostgreSQL ignores it:
    /// its durability is the server's `synchronous_commit`.
    pub fn synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// The bound within which a waiter sees a change made by another
    /// handle or process even if no notification reached it (WAIT-3;
    /// default 250 ms). Changes made through this handle wake waiters at
    /// once; on PostgreSQL other processes' changes arrive by `NOTIFY`
    /// (WAIT-3a), and this interval is the fallback poll: one statement per
    /// interval for all of the handle's waiters together.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// SQLite: how often the handle checks `PRAGMA data_version` for other
    /// processes' commits while any of its agents waits (WAIT-3a; default
    /// 10 ms). One pragma on one connection, whatever the number of
    /// waiters; the waited-on bundles are re-read only when it moved.
    /// PostgreSQL ignores it: notifications push.
    pub fn watch_interval(mut self, interval: Duration) -> Self {
        self.watch_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Resumes detached agents with their answers (DEL-3).
    pub fn dispatcher(mut self, dispatcher: Arc<dyn ResumeDispatcher>) -> Self {
        self.dispatcher = Some(dispatcher);
        self
    }

    /// How long `deliver_pending` waits for one dispatch before it counts
    /// as failed (default 5 s); its lease lasts twice as long (DEL-4). A
    /// winning resolve never waits: its entry is queued for the handle's
    /// one dispatch thread.
    pub fn dispatch_timeout(mut self, timeout: Duration) -> Self {
        self.dispatch_timeout = timeout;
        self
    }

    /// Maximum number of pooled connections (default 8).
    pub fn pool_size(mut self, size: u32) -> Self {
        self.pool_size = size;
        self
    }

    /// How long a SQLite connection waits for the write lock (default 5 s).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How long an operation waits for a free pooled connection (default 30 s).
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = timeout;
        self
    }

    /// The clock used for every timestamp clarion writes (DM-2).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The source of new `pending_id`s and turn ids.
    pub fn ids(mut self, ids: Arc<dyn IdSource>) -> Self {
        self.ids = ids;
        self
    }

    /// Test hook: counts the statements this handle's pool connections
    /// start, into `counter` (LIST-11).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn count_statements(mut self, counter: crate::store::StatementCounter) -> Self {
        self.statements = Some(counter);
        self
    }

    /// Connects, migrates and returns the handle.
    pub fn open(self) -> Result<Clarion, OpenError> {
        let target = DbTarget::parse(&self.database_url)?;
        let backend = target.backend();
        let named = target.clone();
        let watched = target.clone();
        let pool = open_pool(
            target,
            &PoolSettings {
                size: self.pool_size,
                busy_timeout: self.busy_timeout,
                connection_timeout: self.connection_timeout,
                synchronous: self.synchronous,
                #[cfg(feature = "test-hooks")]
                statements: self.statements,
            },
        )?;
        // After opening: a fresh SQLite file exists now, so its path
        // canonicalizes like every later handle's.
        let database = named.identity();
        let clock = self.clock;
        let dispatch = match self.dispatcher {
            None => None,
            Some(dispatcher) => Some(
                DispatchWorker::start(dispatcher, pool.clone(), self.dispatch_timeout).map_err(
                    |error| {
                        OpenError::Config(format!("could not start the dispatch thread: {error}"))
                    },
                )?,
            ),
        };
        let announcer = match &watched {
            DbTarget::Sqlite { .. } => None,
            DbTarget::Postgres { url } => Some(Announcer::start(url.clone()).map_err(|error| {
                OpenError::Config(format!("could not start the announcing thread: {error}"))
            })?),
        };
        let handle_id = UuidV7Ids.new_id(IdKind::Bundle);
        let waiters = Arc::new(Waiters::default());
        let event_signal: Arc<crate::domain::engine::signal::EventSignal> = Arc::default();
        let watch = Watch::new(
            WatchSettings {
                target: watched,
                handle_id: handle_id.clone(),
                poll_interval: self.poll_interval,
                tick: self.watch_interval,
                busy_timeout: self.busy_timeout,
                clock: clock.clone(),
            },
            waiters.clone(),
            event_signal.clone(),
            pool.clone(),
        );
        let failpoints = Arc::new(Failpoints::default());
        let ledger = Ledger::start(pool.clone(), failpoints.clone()).map_err(|error| {
            OpenError::Config(format!("could not start the attempt ledger: {error}"))
        })?;
        let clarion = Clarion {
            engine: Arc::new(Engine {
                pool: pool.clone(),
                backend,
                database,
                clock: clock.clone(),
                ids: self.ids,
                failpoints,
                waiters,
                poll_interval: self.poll_interval,
                watch,
                announcer,
                dispatch,
                heartbeat: Heartbeat::new(handle_id, self.attachment_lease, clock, pool),
                closed: Default::default(),
                event_signal,
                sweeper: Default::default(),
                ledger,
                #[cfg(feature = "webhooks")]
                webhook_worker: Default::default(),
            }),
            channel: Channel::Rust,
        };
        if let Some(interval) = self.sweep_interval {
            crate::domain::deadline::start_sweeper(&clarion.engine, interval).map_err(|error| {
                OpenError::Config(format!("could not start the deadline sweeper: {error}"))
            })?;
        }
        Ok(clarion)
    }
}

impl Clarion {
    /// Opens (and migrates) the database at `database_url` with default
    /// settings: `sqlite:///abs/path.db`, a plain file path, or
    /// `postgres://user@host/db`.
    pub fn open(database_url: &str) -> Result<Clarion, OpenError> {
        Clarion::builder(database_url).open()
    }

    /// A [`Builder`] with the defaults, to change settings before opening.
    pub fn builder(database_url: &str) -> Builder {
        Builder {
            database_url: database_url.to_owned(),
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
            #[cfg(feature = "test-hooks")]
            statements: None,
        }
    }

    /// Closes the handle for every clone of it (REL-7): blocked waits
    /// return [`Error::HandleClosed`](crate::Error::HandleClosed) at once, and every later call fails
    /// with it. Calls in flight finish or return; the connections go when
    /// the last clone is dropped.
    pub fn close(&self) {
        self.engine.close();
    }

    /// AUD-4: a clone of this handle whose resolves and cancels record
    /// `channel` in the attempt ledger (the C ABI's handle records
    /// `c_abi`, the command line's `cli`).
    pub fn via(&self, channel: Channel) -> Clarion {
        Clarion {
            engine: self.engine.clone(),
            channel,
        }
    }

    /// The channel this handle records (AUD-4).
    pub fn channel(&self) -> Channel {
        self.channel
    }

    /// Which backend this handle talks to.
    pub fn backend(&self) -> Backend {
        self.engine.backend
    }

    // ---- the host mirror (LIFE-1..10; host operations) ----

    /// LIFE-1, LIFE-12: creates the workspace, or changes the owner and
    /// name it is given. An empty owner means every user may see it
    /// (AUTH-3); an omitted or empty name keeps the stored one.
    pub fn upsert_workspace(&self, workspace: WorkspaceUpsert<'_>) -> Result<()> {
        self.engine.upsert_workspace(workspace)
    }

    /// LIFE-1: deletes the workspace; its tasks' workspace ids then dangle,
    /// and a dangling workspace is visible to every user (AUTH-3).
    pub fn delete_workspace(&self, id: &str) -> Result<()> {
        self.engine.delete_workspace(id)
    }

    /// LIFE-1, LIFE-12: creates the task, or moves it to the workspace and
    /// retitles it as given (an omitted or empty title keeps the stored one).
    pub fn upsert_task(&self, task: TaskUpsert<'_>) -> Result<()> {
        self.engine.upsert_task(task)
    }

    /// LIFE-1: deletes the task with its sessions, turns and bundles.
    pub fn delete_task(&self, id: &str) -> Result<()> {
        self.engine.delete_task(id)
    }

    /// LIFE-1, LIFE-3: creates or updates a session; a terminal state
    /// expires the current turn's pending questions.
    pub fn upsert_session(&self, session: SessionUpsert<'_>) -> Result<()> {
        self.engine.upsert_session(session)
    }

    /// LIFE-1: deletes the session with its turns and bundles.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        self.engine.delete_session(id)
    }

    /// LIFE-3, LIFE-10: sets a session's state, in any direction.
    pub fn set_session_state(&self, session_id: &str, state: SessionState) -> Result<()> {
        self.engine.set_session_state(session_id, state)
    }

    /// LIFE-2: starts a new turn, superseding every bundle of older turns.
    /// Returns the new turn's id.
    pub fn begin_turn(&self, session_id: &str) -> Result<String> {
        self.engine.begin_turn(session_id)
    }

    /// LIFE-5: detaches the session's current-turn bundles; their
    /// resolutions go to the outbox.
    pub fn detach_session(&self, session_id: &str) -> Result<()> {
        self.engine.detach_session(session_id)
    }

    /// LIFE-7: true iff the session has an active bundle (ACT-1).
    pub fn has_pending_clarification(&self, session_id: &str) -> Result<bool> {
        self.engine.has_pending_clarification(session_id)
    }

    // ---- the agent side, through the host ----

    /// ASK-1..5: creates a bundle in the session's current turn.
    pub fn ask(&self, request: &AskRequest) -> Result<Asked> {
        self.engine.ask(request)
    }

    /// WAIT-1..4: blocks until the bundle is resolved or stops being
    /// active, or `timeout` passes (capped at ten minutes). A received
    /// resolution is acknowledged (WAIT-2); on `TimedOut`, with no other
    /// waiter of this handle left, the bundle is detached (LIFE-5).
    pub fn wait(&self, pending_id: &str, timeout: Duration) -> Result<WaitOutcome> {
        self.engine.wait(pending_id, timeout)
    }

    /// [`Clarion::wait`] without a thread (HTTP-5): starts the agent-side
    /// wait — the bundle is attached to this handle again (WAIT-1, DEL-3)
    /// and counted as waited on — and returns it for the caller to drive
    /// (see [`PendingWait`]); `wake` is called whenever it must be checked
    /// again. Reads and writes the database briefly: an async caller runs
    /// it on a blocking pool. An unknown bundle is not-found.
    pub fn begin_wait(
        &self,
        pending_id: &str,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<PendingWait<WaitOutcome>> {
        let waiter = self.engine.begin_wait(pending_id, Some(Wake::new(wake)))?;
        Ok(PendingWait::new(self.engine.clone(), waiter))
    }

    /// [`Clarion::wait_bundle`] without a thread (HTTP-5): authorizes and
    /// starts the wait (an invisible bundle is not-found at once) and
    /// returns it for the caller to drive (see [`PendingWait`]); `wake` is
    /// called whenever it must be checked again. Reads the database
    /// briefly: an async caller runs it on a blocking pool.
    pub fn begin_wait_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<PendingWait<Resolved>> {
        let waiter = self.engine.begin_wait_bundle(
            &Operation::WaitBundle.admit(principal, self.channel)?,
            pending_id,
            Some(Wake::new(wake)),
        )?;
        Ok(PendingWait::new(self.engine.clone(), waiter))
    }

    // ---- the answering side ----

    /// LIST-1..10: the active, answerable bundles the principal may see,
    /// oldest first, one page.
    pub fn list_pending(&self, principal: &Principal, request: &ListRequest) -> Result<ListPage> {
        self.engine.list_pending(
            &Operation::ListPending.admit(principal, self.channel)?,
            request,
        )
    }

    /// LIST-12..14: the settled bundles the principal may see, newest
    /// resolution first, one page; each element is what `get_bundle`
    /// returns for it.
    pub fn list_settled(
        &self,
        principal: &Principal,
        request: &SettledRequest,
    ) -> Result<SettledPage> {
        self.engine.list_settled(
            &Operation::ListSettled.admit(principal, self.channel)?,
            request,
        )
    }

    /// WIRE-3: one bundle, its status and its response, from durable state.
    pub fn get_bundle(&self, principal: &Principal, pending_id: &str) -> Result<BundleDetail> {
        self.engine.get_bundle(
            &Operation::GetBundle.admit(principal, self.channel)?,
            pending_id,
        )
    }

    /// WIRE-3 `wait_bundle`: waits for the bundle's resolution
    /// (`claimed: false`); `NoLongerActive` if it stops being active
    /// without one, `TimedOut` otherwise. Acknowledges nothing.
    pub fn wait_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        timeout: Duration,
    ) -> Result<Resolved> {
        self.engine.wait_bundle(
            &Operation::WaitBundle.admit(principal, self.channel)?,
            pending_id,
            timeout,
        )
    }

    /// SUM-1: counts that always equal what paging the listing would collect.
    pub fn summary(&self, principal: &Principal) -> Result<Summary> {
        self.engine
            .summary(&Operation::Summary.admit(principal, self.channel)?)
    }

    /// PA-1: what blocks each visible requested task and its primary session.
    pub fn pending_actions(
        &self,
        principal: &Principal,
        task_ids: &[String],
    ) -> Result<Vec<TaskPendingActions>> {
        self.engine.pending_actions(
            &Operation::PendingActions.admit(principal, self.channel)?,
            task_ids,
        )
    }

    /// §8: answers or rejects a bundle. Exactly one caller claims it; every
    /// other gets the winner's status and response with `claimed: false`,
    /// or `NoLongerActive` when nothing won.
    pub fn resolve_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        request: &ResolveRequest,
    ) -> Result<Resolved> {
        self.engine.resolve_bundle(
            &Operation::ResolveBundle.admit(principal, self.channel)?,
            pending_id,
            request,
        )
    }

    /// LIFE-6: cancels a bundle through the same claim (humans and system).
    pub fn cancel_bundle(&self, principal: &Principal, pending_id: &str) -> Result<Resolved> {
        self.engine.cancel_bundle(
            &Operation::CancelBundle.admit(principal, self.channel)?,
            pending_id,
        )
    }

    /// AUD-3: every recorded attempt on a bundle — who, when, through
    /// which door, with what outcome and digest — oldest first. For a
    /// user the bundle must be visible (else the one not-found, AUTH-5);
    /// `system` also reads the entries of a deleted bundle.
    pub fn attempts(&self, principal: &Principal, pending_id: &str) -> Result<Vec<AttemptView>> {
        self.engine.attempts(
            &Operation::Attempts.admit(principal, self.channel)?,
            pending_id,
        )
    }

    /// AUD-3, for the host: every ledger entry recorded from `since`
    /// (inclusive) to `until` (exclusive), in (`at`, entry) order, handed
    /// to `sink` one by one and read in keyset pages, so memory stays
    /// constant; returns how many.
    pub fn export_attempts(
        &self,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        mut sink: impl FnMut(&LedgerEntry) -> std::io::Result<()>,
    ) -> Result<u64> {
        self.engine.export_attempts(since, until, &mut sink)
    }

    /// AUTH-8: may `principal` perform `operation` on `target`? A denial is
    /// the answer, never an error.
    pub fn authorize(
        &self,
        principal: &Principal,
        operation: Operation,
        target: Target<'_>,
    ) -> Result<Authorization> {
        self.engine.authorize(principal, operation.access(), target)
    }

    // ---- the outbox (DEL-3..5) ----

    /// LIFE-8: the outbox, oldest resolution first; `limit` defaults to 50,
    /// below 1 means 50, above 200 is clamped.
    pub fn pending_deliveries(&self, limit: Option<i64>) -> Result<Vec<Delivery>> {
        self.engine.pending_deliveries(limit)
    }

    /// LIFE-8: removes an entry from the outbox; idempotent.
    pub fn ack_delivery(&self, pending_id: &str) -> Result<()> {
        self.engine.ack_delivery(pending_id)
    }

    /// DEL-4, LIFE-9: offers every outbox entry to the dispatcher once.
    /// Call it at start-up, and whenever a retry is due.
    pub fn deliver_pending(&self) -> Result<DeliveryReport> {
        self.engine.deliver_pending()
    }

    /// REL-8: deletes, in batches, bundles that stopped being active more
    /// than `older_than` ago — resolved and acknowledged, expired, or
    /// superseded — with their rows; never an active bundle or an
    /// undelivered resolution. Events appended more than `older_than` ago
    /// go too, and the highest position deleted is kept (EVT-3). Returns
    /// how many bundles it deleted.
    pub fn prune(&self, older_than: Duration) -> Result<u64> {
        self.engine.prune(older_than)
    }

    /// EXP-4: settles up to `limit` due bundles (default 100, clamped to
    /// 1..1,000) in deadline order, then `pending_id`, each with its
    /// deadline's outcome in a settlement of its own; returns how many
    /// this call settled. What [`Builder::sweep_deadlines`] runs; safe
    /// from several processes at once.
    pub fn expire_due(&self, limit: Option<i64>) -> Result<u64> {
        self.engine.expire_due(limit)
    }

    // ---- webhooks (HOOK-1..6; host operations) ----

    /// HOOK-1: a new endpoint, enabled, receiving the events appended
    /// from now on; its secret is returned once.
    pub fn webhook_add(&self, add: &WebhookAdd) -> Result<WebhookSecret> {
        self.engine.webhook_add(add)
    }

    /// HOOK-6: every endpoint, oldest first, never its secret.
    pub fn webhook_list(&self) -> Result<Vec<WebhookView>> {
        self.engine.webhook_list()
    }

    /// HOOK-1, HOOK-5: delivered to again, from its cursor, or from the
    /// head if events after its cursor were pruned.
    pub fn webhook_enable(&self, id: &str) -> Result<()> {
        self.engine.webhook_enable(id)
    }

    /// HOOK-1, HOOK-5: no longer delivered to; its events are not kept.
    pub fn webhook_disable(&self, id: &str) -> Result<()> {
        self.engine.webhook_disable(id)
    }

    /// HOOK-1: removed, with its secret.
    pub fn webhook_remove(&self, id: &str) -> Result<()> {
        self.engine.webhook_remove(id)
    }

    /// HOOK-3: a new secret; for `overlap` the old one signs too.
    pub fn webhook_rotate(&self, id: &str, overlap: Duration) -> Result<WebhookSecret> {
        self.engine.webhook_rotate(id, overlap)
    }

    /// HOOK-6: each endpoint's delivered and failed counts and backlog.
    pub fn webhook_figures(&self) -> Result<Vec<WebhookFigures>> {
        self.engine.webhook_figures()
    }

    /// HOOK-4: delivers the webhooks on a thread of this handle until it
    /// is closed (a second call leaves the first worker running). Several
    /// handles and processes may run one each: an endpoint is delivered by
    /// one at a time.
    #[cfg(feature = "webhooks")]
    pub fn start_webhooks(&self, options: WebhookOptions) -> Result<()> {
        crate::domain::webhooks::worker::start(&self.engine, options).map_err(|error| {
            crate::error::Error::Internal(format!("could not start the webhook worker: {error}"))
        })
    }

    /// HOOK-3: sends endpoint `id` one signed `webhook.test` event now,
    /// outside its cursor; what it got.
    #[cfg(feature = "webhooks")]
    pub fn webhook_test(&self, id: &str, timeout: Duration) -> Result<TestDelivery> {
        crate::domain::webhooks::worker::send_test(&self.engine, id, timeout)
    }

    /// EVT-2: the events after position `after` (`""`: from the oldest
    /// kept) that `principal` may see now, oldest first. At most `limit`
    /// events are examined (default 100, clamped at 1,000); `next` is the
    /// last one examined, visible or not, so a reader that sees none of
    /// them still advances. `reset` says events after `after` were pruned
    /// (EVT-3), or that `after` is a position this log never gave out
    /// (EVT-4: a restored database, another server; `next` is then the
    /// head): list again.
    pub fn events_after(
        &self,
        principal: &Principal,
        after: &str,
        limit: Option<i64>,
    ) -> Result<EventPage> {
        self.engine.events_after(
            &Operation::EventsAfter.admit(principal, self.channel)?,
            after,
            limit,
        )
    }

    /// HTTP-6: the position of the newest event a reader could read now
    /// (`""` for an empty log): where a live stream with no position of
    /// its own starts.
    pub fn events_head(&self, principal: &Principal) -> Result<String> {
        self.engine
            .events_head(&Operation::EventsAfter.admit(principal, self.channel)?)
    }

    /// HTTP-6: calls `wake` whenever events may have been appended — by
    /// this handle, after its commit, or by another handle or process, as
    /// this handle's watcher hears it (WAIT-3a). `wake` runs on the thread
    /// that noticed and must return at once (signal a channel, a condvar,
    /// an async notifier); the reader then reads with
    /// [`Clarion::events_after`] from its own position. Dropping the
    /// returned subscription stops the calls.
    pub fn subscribe_events(&self, wake: impl Fn() + Send + Sync + 'static) -> EventSubscription {
        self.engine.subscribe_events(Arc::new(wake))
    }

    // ---- the doors ----

    /// WIRE-5: performs one JSON request `{"op", "principal", "args"}` and
    /// returns its envelope. Never panics on input: malformed, oversized or
    /// too deeply nested text is a 400 naming the problem.
    pub fn call(&self, request: &str) -> Envelope {
        crate::doors::json::call(&self.engine, self.channel, request)
    }

    /// [`Clarion::call`] on raw bytes, which must be UTF-8.
    pub fn call_bytes(&self, request: &[u8]) -> Envelope {
        crate::doors::json::call_bytes(&self.engine, self.channel, request)
    }

    /// [`Clarion::call`] on an already parsed request.
    pub fn call_value(&self, request: &Value) -> Envelope {
        crate::doors::json::call_value(&self.engine, self.channel, request)
    }

    /// MCPA-3: the database part of an asking tool call on `session_id`'s
    /// server (`clarion mcp --ask-in`), as that session's host, recording
    /// channel `mcp`: a result now, or the bundle to wait on and for how
    /// long (MCPA-4), whose outcome [`crate::mcp::wait_result`] turns into
    /// the result. Reads and writes the database briefly: an async caller
    /// runs it on a blocking pool.
    pub fn start_ask_tool(
        &self,
        session_id: &str,
        tool: crate::doors::mcp_asking::AskTool,
        arguments: &Value,
    ) -> crate::doors::mcp_asking::AskStep {
        tool.start(&self.engine, session_id, arguments)
    }

    /// MCPA-6: where the task of an asking call on `session_id` stands —
    /// its bundle read as a wait's check reads it (a due bundle settled,
    /// a received resolution acknowledged) — so tasks survive a restart of
    /// the server. Not-found for a bundle that is not the session's.
    pub fn ask_task(
        &self,
        session_id: &str,
        pending_id: &str,
    ) -> Result<crate::doors::mcp_asking::TaskState> {
        crate::doors::mcp_asking::task_state(&self.engine, session_id, pending_id)
    }

    /// MCPA-1, DEL-3: keeps this handle's attachment lease renewed while
    /// the returned hold lives, whether or not an agent waits, so answers
    /// given between an agent's calls are received by its next wait and
    /// never reach the outbox. Dropping the hold lets the lease lapse.
    pub fn keep_lease(&self) -> LeaseHold {
        LeaseHold {
            _beating: self.engine.heartbeat.beating(),
        }
    }

    /// WIRE-4: performs one MCP tool call and returns the MCP result
    /// (`content`, `structuredContent`, `isError`).
    pub fn call_tool(
        &self,
        principal: &Principal,
        name: &str,
        arguments: &Value,
    ) -> std::result::Result<Value, UnknownTool> {
        crate::doors::mcp::call_tool(&self.engine, principal, name, arguments)
    }
}

#[cfg(feature = "http")]
impl Clarion {
    // ---- API tokens and web sessions (HTTP-4) ----

    /// Makes a bearer token for `principal`; only its SHA-256 is stored,
    /// so the returned text is the only copy.
    pub fn add_token(&self, principal: &Principal, label: &str) -> Result<NewToken> {
        self.engine.add_token(principal, label)
    }

    /// Every token, oldest first, revoked ones included; never their text.
    pub fn list_tokens(&self) -> Result<Vec<TokenInfo>> {
        self.engine.list_tokens()
    }

    /// Revokes a token, named by its text or by at least 6 hex digits of
    /// its id; its web sessions end with it.
    pub fn revoke_token(&self, id_or_token: &str) -> Result<TokenInfo> {
        self.engine.revoke_token(id_or_token)
    }

    /// Whether any token is not revoked.
    pub fn has_live_tokens(&self) -> Result<bool> {
        self.engine.has_live_tokens()
    }

    /// The principal of a live token, `None` for an unknown or revoked one.
    pub fn token_principal(&self, token: &str) -> Result<Option<Principal>> {
        self.engine.token_principal(token)
    }

    /// Opens a 12-hour web session with a live token.
    pub fn open_web_session(&self, token: &str) -> Result<Option<WebSession>> {
        self.engine.open_web_session(token)
    }

    /// The principal of a live web session.
    pub fn web_session_principal(&self, session_id: &str) -> Result<Option<Principal>> {
        self.engine.web_session_principal(session_id)
    }

    /// Ends a web session.
    pub fn close_web_session(&self, session_id: &str) -> Result<()> {
        self.engine.close_web_session(session_id)
    }
}

/// HTTP-1: the router of every route of HTTP-2 and HTTP-7 over
/// `inbox`, authenticating with `auth`. Library calls run on the
/// blocking pool of the runtime that serves it, at most
/// [`HttpOptions::max_calls`](crate::http::HttpOptions::max_calls) at once; waits hold no thread between
/// their checks (HTTP-5).
#[cfg(feature = "http")]
pub fn router(
    inbox: Clarion,
    auth: impl crate::doors::http::Authenticator,
    options: crate::doors::http::HttpOptions,
) -> axum::Router {
    crate::doors::http::router(inbox.engine, Arc::new(auth), options)
}

#[cfg(feature = "http")]
impl crate::doors::http::TokenAuthenticator {
    /// HTTP-4: bearer tokens and web sessions of `inbox`'s database
    /// ([`Clarion::add_token`]).
    pub fn new(inbox: &Clarion) -> crate::doors::http::TokenAuthenticator {
        crate::doors::http::TokenAuthenticator::with_engine(inbox.engine.clone())
    }
}
