//! Waiting (WAIT-1..4): the agent side's `wait` and the external
//! `wait_bundle`. A waiter never trusts a notification: it reads the
//! bundle's durable state, and a notification (from this handle's commits,
//! or from its watcher for other handles and processes: WAIT-3a) only
//! tells it to read again. An outcome is only ever derived from committed
//! rows, so none is invented.
//!
//! Both kinds of wait are one state machine, [`Waiter`]: begun (counted,
//! attached, registered in the slot), then read by [`Waiter::check`] until
//! it decides, then ended by its outcome, by the caller's timeout
//! ([`Waiter::expire`]: the agent's detach of WAIT-1), by a cap, or by
//! being dropped (WAIT-1b: nothing detached). The blocking `wait` and
//! `wait_bundle` drive it from one thread each, sleeping on the slot
//! between reads; [`PendingWait`] hands the same machine to a caller that
//! holds no thread while it waits (HTTP-5): the slot calls its callback
//! instead of waking a thread.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::prelude::*;

use crate::domain::bundle;
use crate::domain::change::Change;
use crate::domain::deadline;
use crate::domain::engine::heartbeat::Beating;
use crate::domain::engine::waiters::{AgentWait, Fingerprint, Slot, Waiters, Wake};
use crate::domain::engine::Engine;
use crate::domain::views::{QuorumView, Resolved, Response, WaitOutcome};
use crate::error::{Entity, Error, Result};
use crate::rules::capability::Admitted;
use crate::rules::limits::check_text;
use crate::rules::limits::wait_time;
use crate::rules::outbox::detach_bundle_statement;
use crate::rules::visibility::Scope;
use crate::rules::vocabulary::BundleStatus;
use crate::store::failpoints::points;
use crate::store::schema::bundles;
use crate::store::{at_most_one, lock_bundle};

/// Where a waited-on bundle stands, from durable rows.
enum Observed {
    Gone,
    /// The resolution, with the bundle's quorum (QUO-5) if it has one.
    Resolved(BundleStatus, Response, Option<Box<QuorumView>>),
    Expired,
    Superseded,
    /// Inactive for another reason (its session ended without expiry, or it
    /// is malformed): nothing will ever resolve it.
    Inactive,
    Detached,
    Open,
}

/// Reads the bundle and classifies it with the precedence of WIRE-3:
/// resolution, expired, superseded, inactive; then detachment.
/// An external waiter reads through its scope, so a bundle moved out of
/// its sight while it waits is `Gone` (AUTH-5), never revealed.
/// Also returns the bundle's [`Fingerprint`], which the watcher compares
/// with the database to decide whether this waiter must read again
/// (WAIT-3a).
fn observe(
    engine: &Engine,
    scope: Option<&Scope>,
    pending_id: &str,
) -> Result<(Observed, Option<Fingerprint>, Option<i64>)> {
    // Counted for OPS-4's test and benchmark: reads per tick.
    engine.watch.stats.reads.fetch_add(1, Ordering::Relaxed);
    let now = engine.now().as_micros();
    let mut loaded = engine.read(|conn| bundle::load_detail(conn, scope, pending_id, now))?;
    if let Some((record, standing, _)) = &loaded {
        if standing.is_due == Some(true) {
            // EXP-3: a wait that meets a due bundle settles it first (an
            // agent receives the default like any resolution), then reads
            // what was written.
            let session = record.session_id.clone();
            engine.change_claiming(&session, pending_id, true, |conn, changes| {
                deadline::settle_due_in(engine, conn, changes, pending_id, &session, engine.now())
            })?;
            loaded = engine.read(|conn| bundle::load_detail(conn, scope, pending_id, now))?;
        }
    }
    let Some((record, standing, rows)) = loaded else {
        return Ok((Observed::Gone, None, None));
    };
    let expires_at = record.expires_at;
    // What the watcher compares with the database: the stored bundle.
    let fingerprint = (
        record.responded_at,
        standing.is_active,
        standing.in_current_turn,
        standing.agent_disconnected,
    );
    let (record, rows) = bundle::as_read(record, standing, rows);
    let (status, response) = bundle::status_of(&record, standing, &rows);
    let observed = match (status, response) {
        (BundleStatus::Pending, _) if standing.agent_disconnected => Observed::Detached,
        (BundleStatus::Pending, _) => Observed::Open,
        (status, Some(response)) => {
            let quorum = match record.quorum_approvals {
                Some(_) => engine
                    .read(|conn| bundle::shown_quorum(conn, &record, false, now))?
                    .map(|shown| Box::new(shown.view)),
                None => None,
            };
            Observed::Resolved(status, response, quorum)
        }
        (BundleStatus::Expired, None) => Observed::Expired,
        (BundleStatus::Superseded, None) => Observed::Superseded,
        _ => Observed::Inactive,
    };
    Ok((observed, Some(fingerprint), expires_at))
}

/// How one kind of wait turns what it observed into its end.
struct Rules<T> {
    /// `Some` ends the wait.
    decide: fn(Observed) -> Option<Result<T>>,
    /// What the wait returns when it ends without an outcome.
    timed_out: fn() -> Result<T>,
}

/// WAIT-1: the agent's outcomes.
const AGENT: Rules<WaitOutcome> = Rules {
    decide: |observed| match observed {
        Observed::Gone => Some(Err(Error::NotFound(Entity::Bundle))),
        Observed::Resolved(status, response, _) => {
            Some(Ok(WaitOutcome::resolved(status, response)))
        }
        Observed::Expired | Observed::Inactive => Some(Ok(WaitOutcome::Expired)),
        Observed::Superseded => Some(Ok(WaitOutcome::Superseded)),
        // The wait re-attached the agent, so a detach seen now happened
        // during the wait.
        Observed::Detached => Some(Ok(WaitOutcome::Detached)),
        Observed::Open => None,
    },
    timed_out: || Ok(WaitOutcome::TimedOut),
};

/// WIRE-3 `wait_bundle`: the resolution unclaimed, or an error.
const EXTERNAL: Rules<Resolved> = Rules {
    decide: |observed| match observed {
        Observed::Gone => Some(Err(Error::NotFound(Entity::Bundle))),
        Observed::Resolved(status, response, quorum) => Some(Ok(Resolved {
            claimed: false,
            status,
            response,
            quorum: quorum.map(|quorum| *quorum),
        })),
        Observed::Expired | Observed::Superseded | Observed::Inactive => {
            Some(Err(Error::NoLongerActive))
        }
        Observed::Open | Observed::Detached => None,
    },
    timed_out: || Err(Error::TimedOut),
};

/// Who waits, and what the wait holds while it lasts.
enum Side {
    /// The agent, through the host: counted per process (WAIT-1), and
    /// keeping this handle's lease renewed (DEL-3).
    Agent {
        agent: Option<AgentWait>,
        _beating: Beating,
    },
    /// An external principal, reading through its scope (AUTH-5).
    External { scope: Scope },
}

/// One wait, from its start to its end, however it is driven: the one
/// place where a waiter reads, decides, and leaves.
pub(crate) struct Waiter<T> {
    pending_id: String,
    side: Side,
    rules: Rules<T>,
    registry: Arc<Waiters>,
    slot: Arc<Slot>,
    /// The callback of a waiter that holds no thread.
    wake: Option<Arc<Wake>>,
    /// The handle's watcher runs (WAIT-3a); else the waiter polls.
    watched: bool,
    /// The slot's generation taken before the last read (WAIT-3).
    seen: u64,
    /// What this waiter last read, which the slot keeps for the watcher
    /// while the waiter sleeps.
    mine: Option<Option<Fingerprint>>,
    /// Left the slot and the counts: the wait is over.
    over: bool,
    /// The bundle's deadline, as last read (WAIT-5: the wait reads again
    /// then, and settles it).
    expires_at: Option<i64>,
}

impl<T> Waiter<T> {
    /// WAIT-5: how long until the bundle's deadline, if one lies ahead.
    /// One that has come is none: the read that found it due settled it
    /// (and a bundle no longer live ends the wait anyway), so nothing
    /// spins on it.
    fn until_deadline(&self, engine: &Engine) -> Option<Duration> {
        let left = self.expires_at? - engine.now().as_micros();
        (left > 0).then(|| Duration::from_micros(left.unsigned_abs()))
    }
}

impl Engine {
    /// WAIT-1..4, the agent side (a host operation): blocks until the bundle
    /// is resolved or stops being active, or `timeout` passes (capped at
    /// ten minutes). A resolution is acknowledged as it is received (WAIT-2).
    /// On `TimedOut`, when no other waiter of this handle remains and
    /// `detach_on_timeout` holds, the bundle is detached (LIFE-5) and its
    /// later answer goes to the outbox; otherwise it stays attached
    /// (WAIT-1b: a caller waiting in slices).
    pub(crate) fn wait(
        &self,
        pending_id: &str,
        timeout: Duration,
        detach_on_timeout: bool,
    ) -> Result<WaitOutcome> {
        let deadline = Instant::now() + wait_time(timeout);
        let waiter = self.begin_wait(pending_id, None)?;
        self.block_on(waiter, deadline, detach_on_timeout)
    }

    /// WIRE-3 `wait_bundle`, the external side: authorized first (an
    /// invisible bundle is not-found at once), then the resolution when it
    /// arrives (`claimed: false`), `NoLongerActive` if the bundle stops being
    /// active without one, `TimedOut` otherwise. Acknowledges nothing.
    pub(crate) fn wait_bundle(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
        timeout: Duration,
    ) -> Result<Resolved> {
        let deadline = Instant::now() + wait_time(timeout);
        let waiter = self.begin_wait_bundle(caller, pending_id, None)?;
        // An external waiter detaches nothing either way.
        self.block_on(waiter, deadline, false)
    }

    /// Starts an agent-side wait: counted for WAIT-1, attached to this
    /// handle again (WAIT-1, DEL-3), registered in the bundle's slot
    /// (with `wake`, for a waiter that holds no thread).
    pub(crate) fn begin_wait(
        &self,
        pending_id: &str,
        wake: Option<Arc<Wake>>,
    ) -> Result<Waiter<WaitOutcome>> {
        check_text("pending_id", pending_id)?;
        let session_id: String = self
            .read(|conn| {
                Ok(at_most_one::<_, String>(
                    bundles::table.find(pending_id).select(bundles::session_id),
                    conn,
                )?)
            })?
            .ok_or(Error::NotFound(Entity::Bundle))?;
        let side = Side::Agent {
            agent: Some(AgentWait::arrive(&self.database, pending_id)),
            _beating: self.heartbeat.beating(),
        };
        // Entered before the re-attachment, so a failure leaves through
        // the waiter's drop.
        let mut waiter = self.enter(pending_id, &session_id, side, AGENT, wake);
        self.reattach(pending_id)?;
        waiter.watched = self.watch.ensure_running();
        Ok(waiter)
    }

    /// Starts an external wait: authorized first (an invisible bundle is
    /// not-found at once), then registered in the bundle's slot.
    pub(crate) fn begin_wait_bundle(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
        wake: Option<Arc<Wake>>,
    ) -> Result<Waiter<Resolved>> {
        check_text("pending_id", pending_id)?;
        let scope = caller.scope()?.clone();
        let (record, _) = self
            .read(|conn| bundle::load_visible(conn, &scope, pending_id, self.now().as_micros()))?
            .ok_or(Error::NotFound(Entity::Bundle))?;
        let side = Side::External { scope };
        let mut waiter = self.enter(pending_id, &record.session_id, side, EXTERNAL, wake);
        waiter.watched = self.watch.ensure_running();
        Ok(waiter)
    }

    fn enter<T>(
        &self,
        pending_id: &str,
        session_id: &str,
        side: Side,
        rules: Rules<T>,
        wake: Option<Arc<Wake>>,
    ) -> Waiter<T> {
        let scoped = matches!(side, Side::External { .. });
        let slot = self.waiters.enter(pending_id, session_id, scoped);
        if let Some(wake) = &wake {
            slot.listen(wake.clone());
        }
        Waiter {
            pending_id: pending_id.to_owned(),
            side,
            rules,
            registry: self.waiters.clone(),
            slot,
            wake,
            watched: false,
            seen: 0,
            expires_at: None,
            mine: None,
            over: false,
        }
    }

    /// The blocking waits: read, else sleep on the slot until notified or
    /// the deadline; the read after the deadline is the last. Changes made
    /// elsewhere reach the waiter through the handle's watcher (WAIT-3a):
    /// one check per tick for all waiters, not a poll per waiter; only if
    /// the watcher could not start does the waiter poll on its own, every
    /// poll interval.
    fn block_on<T>(&self, mut waiter: Waiter<T>, deadline: Instant, detach: bool) -> Result<T> {
        loop {
            if let Some(outcome) = waiter.check(self)? {
                return Ok(outcome);
            }
            let now = Instant::now();
            if now >= deadline {
                return if detach {
                    waiter.expire(self)
                } else {
                    waiter.cut_short()
                };
            }
            let mut sleep = deadline - now;
            if !waiter.watched {
                sleep = sleep.min(self.poll_interval);
            }
            // WAIT-5: awake at the deadline, to settle the bundle.
            if let Some(left) = waiter.until_deadline(self) {
                sleep = sleep.min(left.max(Duration::from_millis(1)));
            }
            waiter.slot.wait_past(waiter.seen, sleep);
        }
    }

    /// LIFE-5 for one bundle, when its last waiter timed out: detached if it
    /// is still active or holds an undelivered resolution (the same rule as
    /// `detach_session`). Runs under the registry lock, so an agent that
    /// starts waiting meanwhile is not detached behind its back.
    fn detach_bundle(&self, pending_id: &str) -> Result<()> {
        self.change_unless_waited(pending_id, |conn, changes| {
            let now = self.now();
            // LIFE-11: a due bundle takes its deadline's outcome first; an
            // `answer` or `reject` default then reaches the outbox.
            if let Some(session) = session_of(conn, pending_id)? {
                deadline::settle_due_in(self, conn, changes, pending_id, &session, now)?;
            }
            detach_bundle_statement(pending_id, now.as_micros()).execute(conn)?;
            changes.push(Change::BundleDetached {
                pending_id: pending_id.to_owned(),
            });
            Ok(())
        })?;
        Ok(())
    }

    /// WAIT-1: an agent waiting again on a detached, unresolved bundle is
    /// attached again, so its answer reaches it directly and not through
    /// the outbox.
    ///
    /// The waiting handle also takes the bundle's attachment (DEL-3): after
    /// a restart, the new process's wait holds it, and its heartbeat keeps
    /// it while it waits.
    fn reattach(&self, pending_id: &str) -> Result<()> {
        self.heartbeat.keep_alive()?;
        self.write(|conn| {
            // A bundle deleted meanwhile has nothing to attach; the wait
            // then finds it gone (not-found).
            if !lock_bundle(conn, pending_id)? {
                return Ok(());
            }
            self.heartbeat.attach(conn, pending_id)?;
            diesel::update(
                bundles::table
                    .find(pending_id)
                    .filter(bundles::agent_disconnected)
                    .filter(bundles::responded_at.is_null()),
            )
            .set(bundles::agent_disconnected.eq(false))
            .execute(conn)?;
            Ok(())
        })
    }
}

impl<T> Waiter<T> {
    /// Reads the bundle once (again, if the watcher re-read meanwhile) and
    /// decides: `Some` ends the wait, `None` means read again when the
    /// slot is bumped. The generation is taken before each read, so a
    /// bump that lands between the read and the sleep (or, for a waiter
    /// with a callback, any bump after this read) is never lost (WAIT-3).
    /// An outcome or an error ends the wait: it leaves the slot, and an
    /// agent acknowledges a resolution it received (WAIT-2).
    pub(crate) fn check(&mut self, engine: &Engine) -> Result<Option<T>> {
        if self.over {
            return Err(Error::Internal("a wait that ended was read again".into()));
        }
        match self.read(engine) {
            Ok(None) => Ok(None),
            Ok(Some((outcome, received))) => {
                self.leave();
                if received && matches!(self.side, Side::Agent { .. }) {
                    // WAIT-2: the agent has it; it leaves the outbox.
                    engine.ack_delivery(&self.pending_id)?;
                }
                Ok(Some(outcome))
            }
            Err(error) => {
                self.leave();
                Err(error)
            }
        }
    }

    /// [`Waiter::check`]'s reading; true beside an outcome that is a
    /// resolution the waiter received.
    fn read(&mut self, engine: &Engine) -> Result<Option<(T, bool)>> {
        // REL-7: a closed handle ends every wait at once; it is not the
        // caller's timeout, so nothing is detached (WAIT-1b).
        engine.check_open()?;
        loop {
            if let Some(wake) = &self.wake {
                wake.arm();
            }
            self.seen = self.slot.generation();
            let epoch = engine.waiters.recheck_epoch();
            // A resolution this handle committed is handed over without a
            // read — to the host's own waiters; an external waiter's read
            // re-checks what its principal may see.
            let (scope, handed) = match &self.side {
                Side::Agent { .. } => (
                    None,
                    self.slot
                        .resolution
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone(),
                ),
                Side::External { scope } => (Some(scope), None),
            };
            let observed = match handed {
                Some((status, response)) => Observed::Resolved(status, response, None),
                None => {
                    let (observed, fingerprint, expires_at) =
                        observe(engine, scope, &self.pending_id)?;
                    self.expires_at = expires_at;
                    self.slot
                        .observe(self.mine.replace(fingerprint), fingerprint);
                    observed
                }
            };
            let received = matches!(observed, Observed::Resolved(..));
            if let Some(result) = (self.rules.decide)(observed) {
                return result.map(|outcome| Some((outcome, received)));
            }
            engine.check_open()?;
            if engine.waiters.recheck_epoch() == epoch {
                // The window where a lost wake-up would hide: read, not yet
                // asleep (or not yet back with the caller).
                engine.failpoint(points::WAIT_BEFORE_SLEEP)?;
                return Ok(None);
            }
            // The watcher re-read while this waiter read: it may have
            // compared before this reading was recorded.
        }
    }

    /// The caller's own timeout passed (WAIT-1): the wait ends without an
    /// outcome, and the last agent waiter of this process detaches the
    /// bundle (LIFE-5), so its later answer goes to the outbox.
    pub(crate) fn expire(&mut self, engine: &Engine) -> Result<T> {
        let last_agent = self.leave();
        if last_agent {
            engine.detach_bundle(&self.pending_id)?;
        }
        (self.rules.timed_out)()
    }

    /// Ended by a door's cap: the timed-out result, nothing detached
    /// (WAIT-1b).
    fn cut_short(&mut self) -> Result<T> {
        self.leave();
        (self.rules.timed_out)()
    }

    /// Leaves the slot and the counts, once; true if this was an agent
    /// waiter and no other agent of this process waits on the bundle.
    fn leave(&mut self) -> bool {
        if std::mem::replace(&mut self.over, true) {
            return false;
        }
        self.slot.forget(self.mine.take());
        if let Some(wake) = self.wake.take() {
            self.slot.unlisten(&wake);
        }
        let scoped = matches!(self.side, Side::External { .. });
        self.registry.leave(&self.pending_id, &self.slot, scoped);
        match &mut self.side {
            Side::Agent { agent, .. } => agent.take().is_some_and(AgentWait::depart),
            Side::External { .. } => false,
        }
    }
}

impl<T> Drop for Waiter<T> {
    /// Ended by neither an outcome nor the caller's timeout (a disconnect,
    /// an error): leaves, detaching nothing (WAIT-1b).
    fn drop(&mut self) {
        self.leave();
    }
}

/// A wait that holds no thread while it waits (HTTP-5): the same wait as
/// [`Clarion::wait`](crate::Clarion::wait) or
/// [`Clarion::wait_bundle`](crate::Clarion::wait_bundle), driven by its
/// caller. Begun by [`Clarion::begin_wait`](crate::Clarion::begin_wait) or
/// [`Clarion::begin_wait_bundle`](crate::Clarion::begin_wait_bundle) with a
/// callback; the caller then calls [`PendingWait::check`] at once, and again
/// after each call of the callback, until it returns [`Checked::Over`].
/// `T` is the outcome: [`WaitOutcome`] for the agent side, [`Resolved`] for
/// `wait_bundle`.
///
/// The callback is called, from whichever thread commits a change or from
/// the handle's watcher, whenever the wait must read again: for every
/// change after the read of the latest `check` began (WAIT-3), so a call
/// that arrives while `check` runs must lead to another `check` once it
/// returns. Calls may be spurious and may come after the wait ended. It
/// must return quickly and not block (wake a task, send on a channel).
///
/// `check`, [`PendingWait::timed_out`] and [`PendingWait::capped`] read the
/// database briefly (a pooled connection for one read, released before
/// they return): an async caller runs them on a blocking pool. Between
/// them the wait holds no connection and no thread. Dropping it (the
/// client went away) ends the wait and detaches nothing (WAIT-1b); a drop
/// never touches the database, so it may happen on any thread.
///
/// An async server registers a callback that wakes its task (for example
/// `Notify::notify_one`, which keeps a wake that comes while the task runs
/// `check`), runs `check` on its blocking pool, awaits the wake or its
/// deadline, and on the deadline calls `timed_out` (the caller's timeout)
/// or `capped` (its own cap). The same loop with a channel:
///
/// ```
/// use std::sync::mpsc;
/// use std::time::Duration;
/// use clarion::{AskRequest, Checked, Clarion, OptionSpec, Principal, QuestionSpec, SessionUpsert, TaskUpsert};
/// # let dir = tempfile::tempdir().unwrap();
/// # let url = format!("sqlite://{}", dir.path().join("inbox.db").display());
/// let inbox = Clarion::open(&url)?;
/// inbox.upsert_task(TaskUpsert::new("t"))?;
/// inbox.upsert_session(SessionUpsert::new("s", "t"))?;
/// let option = |label: &str| OptionSpec { label: label.into(), description: label.into(), ..Default::default() };
/// let asked = inbox.ask(&AskRequest {
///     session_id: "s".into(),
///     questions: vec![QuestionSpec { prompt: "Ship it?".into(), options: vec![option("Yes"), option("No")], ..Default::default() }],
///     ..Default::default()
/// })?;
/// let (wakes, woken) = mpsc::channel();
/// let mut pending = inbox.begin_wait_bundle(&Principal::System, &asked.pending_id, move || {
///     let _ = wakes.send(());
/// })?;
/// inbox.cancel_bundle(&Principal::System, &asked.pending_id)?;
/// let resolved = loop {
///     match pending.check()? {
///         Checked::Over(resolved) => break resolved,
///         Checked::Waiting(still) => pending = still,
///     }
///     if woken.recv_timeout(Duration::from_secs(25)).is_err() {
///         break pending.timed_out()?;
///     }
/// };
/// assert!(!resolved.claimed);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PendingWait<T> {
    engine: Arc<Engine>,
    waiter: Waiter<T>,
}

/// What [`PendingWait::check`] found.
#[derive(Debug)]
pub enum Checked<T> {
    /// The wait is over, with this outcome.
    Over(T),
    /// Not yet: check again after the callback is called.
    Waiting(PendingWait<T>),
}

impl<T> std::fmt::Debug for PendingWait<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingWait")
            .field("pending_id", &self.waiter.pending_id)
            .finish_non_exhaustive()
    }
}

impl<T> PendingWait<T> {
    pub(crate) fn new(engine: Arc<Engine>, waiter: Waiter<T>) -> PendingWait<T> {
        PendingWait { engine, waiter }
    }

    /// The bundle waited on.
    pub fn pending_id(&self) -> &str {
        &self.waiter.pending_id
    }

    /// `Some(interval)` when this handle's watcher could not start: changes
    /// made by other handles and processes then call no callback, so check
    /// again at least this often (WAIT-3's bound). `None` normally.
    pub fn poll_interval(&self) -> Option<Duration> {
        (!self.waiter.watched).then_some(self.engine.poll_interval)
    }

    /// WAIT-5: when to check again even if no callback comes — the
    /// bundle's deadline, when one lies ahead (the check then settles
    /// it). `None` when there is none.
    pub fn next_check(&self) -> Option<std::time::Instant> {
        let left = self.waiter.until_deadline(&self.engine)?;
        Some(std::time::Instant::now() + left.max(Duration::from_millis(1)))
    }

    /// Reads the bundle: [`Checked::Over`] with the outcome the blocking
    /// wait would return (a received resolution acknowledged on the agent
    /// side: WAIT-2), or [`Checked::Waiting`]. An error ends the wait too:
    /// not-found, `NoLongerActive` (`wait_bundle`), or
    /// [`Error::HandleClosed`] once the handle is closed (REL-7).
    pub fn check(mut self) -> Result<Checked<T>> {
        Ok(match self.waiter.check(&self.engine)? {
            Some(outcome) => Checked::Over(outcome),
            None => Checked::Waiting(self),
        })
    }

    /// The caller's own timeout passed: reads once more (an outcome that
    /// landed meanwhile wins, as in the blocking wait), else ends the wait
    /// as timed out — `WaitOutcome::TimedOut`, after detaching the bundle
    /// if this was the last agent waiter of the process (WAIT-1), or
    /// [`Error::TimedOut`] for `wait_bundle`.
    pub fn timed_out(mut self) -> Result<T> {
        match self.waiter.check(&self.engine)? {
            Some(outcome) => Ok(outcome),
            None => self.waiter.expire(&self.engine),
        }
    }

    /// A door's cap (not the caller's timeout) ended the wait: like
    /// [`PendingWait::timed_out`], but nothing is detached (WAIT-1b).
    pub fn capped(mut self) -> Result<T> {
        match self.waiter.check(&self.engine)? {
            Some(outcome) => Ok(outcome),
            None => self.waiter.cut_short(),
        }
    }
}

/// The session a bundle belongs to, if the bundle exists.
fn session_of(conn: &mut crate::store::AnyConnection, pending_id: &str) -> Result<Option<String>> {
    use crate::store::schema::bundles;
    Ok(crate::store::at_most_one(
        bundles::table
            .filter(bundles::pending_id.eq(pending_id))
            .select(bundles::session_id),
        conn,
    )?)
}
