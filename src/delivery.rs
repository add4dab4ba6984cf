//! Waiting and delivery (WAIT-1..4, DEL-1..5, LIFE-8, LIFE-9).
//!
//! A waiter never trusts a notification: it reads the bundle's durable state,
//! and a notification (or the poll interval, for changes made by other
//! handles and processes) only tells it to read again. A generation counter
//! taken before each read closes the gap between reading and sleeping, so no
//! wake-up is lost, and an outcome is only ever derived from committed rows,
//! so none is invented.
//!
//! Delivery is a transactional outbox: the claim marks a resolution
//! undelivered in the same transaction (DEL-1). A waiter that receives it
//! acknowledges it (WAIT-2); the resolution of a detached bundle stays in the
//! outbox until the host acknowledges it, or until a registered
//! [`ResumeDispatcher`] succeeds (DEL-3/4).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use diesel::prelude::*;

use crate::authz::{require_capability, Operation, Principal};
use crate::bundle::{self, BundleStatus, QuestionView, Response};
use crate::error::{Entity, Error, Result};
use crate::resolve::Resolved;
use crate::schema::bundles;
use crate::visibility::Scope;
use crate::Clarion;

/// Longest wait anyone may ask for (WIRE-5 caps `timeout_ms` at 600000).
pub const MAX_WAIT: Duration = Duration::from_secs(600);

/// How `wait` ended (WAIT-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitOutcome {
    Answered(Response),
    Rejected(Response),
    Cancelled(Response),
    Expired,
    Superseded,
    /// The host detached the session while the agent waited (LIFE-5).
    Detached,
    TimedOut,
}

impl WaitOutcome {
    pub fn as_str(&self) -> &'static str {
        match self {
            WaitOutcome::Answered(_) => "answered",
            WaitOutcome::Rejected(_) => "rejected",
            WaitOutcome::Cancelled(_) => "cancelled",
            WaitOutcome::Expired => "expired",
            WaitOutcome::Superseded => "superseded",
            WaitOutcome::Detached => "detached",
            WaitOutcome::TimedOut => "timed_out",
        }
    }

    /// The WIRE-2 response, for the three resolutions.
    pub fn response(&self) -> Option<&Response> {
        match self {
            WaitOutcome::Answered(r) | WaitOutcome::Rejected(r) | WaitOutcome::Cancelled(r) => {
                Some(r)
            }
            _ => None,
        }
    }
}

/// One outbox entry (DEL-3): everything a host needs to resume the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub pending_id: String,
    pub task_id: String,
    pub session_id: String,
    pub status: BundleStatus,
    pub questions: Vec<QuestionView>,
    pub response: Response,
}

/// A Rust host's way to resume a detached agent with its answer (DEL-3).
/// Called right after the claim commits, outside its transaction, with a
/// bounded timeout; success acknowledges the entry. The `pending_id` is the
/// idempotency key: delivery is at least once (DEL-5).
pub trait ResumeDispatcher: Send + Sync + 'static {
    fn resume(&self, delivery: &Delivery) -> std::result::Result<(), String>;
}

/// What [`Clarion::deliver_pending`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryReport {
    pub delivered: usize,
    pub failed: usize,
    /// Entries another process was dispatching (leased).
    pub skipped: usize,
}

/// A bundle some thread of this handle waits on.
#[derive(Debug)]
struct Slot {
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
    resolution: Mutex<Option<(BundleStatus, Response)>>,
}

impl Slot {
    fn generation(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn bump(&self) {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.changed.notify_all();
    }

    /// Sleeps until the generation moves past `seen` or `timeout` passes.
    fn wait_past(&self, seen: u64, timeout: Duration) {
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
    fn enter(&self, pending_id: &str, session_id: &str, agent: bool) -> Arc<Slot> {
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
    fn leave(&self, pending_id: &str, slot: &Arc<Slot>, agent: bool) -> usize {
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
    /// lock so that no agent starts waiting meanwhile. True if it ran.
    fn unless_waited(&self, pending_id: &str, body: impl FnOnce() -> Result<()>) -> Result<bool> {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let waited = slots
            .get(pending_id)
            .is_some_and(|slot| slot.agent_waiters.load(Ordering::SeqCst) > 0);
        if waited {
            return Ok(false);
        }
        body()?;
        drop(slots);
        Ok(true)
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

/// Where a waited-on bundle stands, from durable rows.
enum Observed {
    Gone,
    Resolved(BundleStatus, Response),
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
fn observe(clarion: &Clarion, pending_id: &str) -> Result<Observed> {
    let loaded = clarion.read(|conn| bundle::load_any(conn, pending_id))?;
    let Some((record, standing, rows)) = loaded else {
        return Ok(Observed::Gone);
    };
    let (status, response) = bundle::status_of(&record, standing, &rows);
    Ok(match (status, response) {
        (BundleStatus::Pending, _) if standing.agent_disconnected => Observed::Detached,
        (BundleStatus::Pending, _) => Observed::Open,
        (status, Some(response)) => Observed::Resolved(status, response),
        (BundleStatus::Expired, None) => Observed::Expired,
        (BundleStatus::Superseded, None) => Observed::Superseded,
        _ => Observed::Inactive,
    })
}

fn outcome_of(status: BundleStatus, response: Response) -> WaitOutcome {
    match status {
        BundleStatus::Rejected => WaitOutcome::Rejected(response),
        BundleStatus::Cancelled => WaitOutcome::Cancelled(response),
        _ => WaitOutcome::Answered(response),
    }
}

/// DEL-3: the bundle's resolution is an outbox entry — undelivered, and its
/// agent detached. The one definition every outbox reader uses.
#[diesel::dsl::auto_type]
pub fn in_outbox() -> _ {
    bundles::response_delivery_pending.and(bundles::agent_disconnected)
}

/// The outbox, oldest resolution first (DEL-3).
#[diesel::dsl::auto_type]
pub fn outbox_query(limit: i64) -> _ {
    bundles::table
        .filter(in_outbox())
        .order_by((bundles::responded_at.asc(), bundles::pending_id.asc()))
        .select(bundles::pending_id)
        .limit(limit)
}

impl Clarion {
    /// WAIT-1..4, the agent side (a host operation): blocks until the bundle
    /// is resolved or stops being active, or `timeout` passes (capped at
    /// ten minutes). A resolution is acknowledged as it is received (WAIT-2).
    /// On `TimedOut`, when no other waiter of this handle remains, the
    /// bundle is detached (LIFE-5) and its later answer goes to the outbox.
    pub fn wait(&self, pending_id: &str, timeout: Duration) -> Result<WaitOutcome> {
        let deadline = Instant::now() + timeout.min(MAX_WAIT);
        let session_id: String = self
            .read(|conn| {
                Ok(crate::db::at_most_one::<_, String>(
                    bundles::table.find(pending_id).select(bundles::session_id),
                    conn,
                )?)
            })?
            .ok_or(Error::NotFound(Entity::Bundle))?;
        let slot = self.inner.waiters.enter(pending_id, &session_id, true);
        let watched = self.reattach(pending_id).and_then(|()| {
            self.watch(pending_id, &slot, deadline, |observed| match observed {
                Observed::Gone => Some(Err(Error::NotFound(Entity::Bundle))),
                Observed::Resolved(status, response) => Some(Ok(outcome_of(status, response))),
                Observed::Expired | Observed::Inactive => Some(Ok(WaitOutcome::Expired)),
                Observed::Superseded => Some(Ok(WaitOutcome::Superseded)),
                // The wait re-attached the agent, so a detach seen now
                // happened during the wait.
                Observed::Detached => Some(Ok(WaitOutcome::Detached)),
                Observed::Open => None,
            })
        });
        let remaining = self.inner.waiters.leave(pending_id, &slot, true);
        let outcome = watched?.unwrap_or(WaitOutcome::TimedOut);
        if outcome.response().is_some() {
            // WAIT-2: the agent has it; it leaves the outbox.
            self.ack_delivery(pending_id)?;
        }
        if outcome == WaitOutcome::TimedOut && remaining == 0 {
            self.detach_bundle(pending_id)?;
        }
        Ok(outcome)
    }

    /// WIRE-3 `wait_bundle`, the external side: authorized first (an
    /// invisible bundle is not-found at once), then the resolution when it
    /// arrives (`claimed: false`), `NoLongerActive` if the bundle stops being
    /// active without one, `TimedOut` otherwise. Acknowledges nothing.
    pub fn wait_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        timeout: Duration,
    ) -> Result<Resolved> {
        require_capability(principal, Operation::WaitBundle)?;
        let scope = Scope::of(principal).ok_or(Error::CapabilityDenied)?;
        let deadline = Instant::now() + timeout.min(MAX_WAIT);
        let (record, _) = self
            .read(|conn| bundle::load_visible(conn, &scope, pending_id))?
            .ok_or(Error::NotFound(Entity::Bundle))?;
        let slot = self
            .inner
            .waiters
            .enter(pending_id, &record.session_id, false);
        let watched = self.watch(pending_id, &slot, deadline, |observed| match observed {
            Observed::Gone => Some(Err(Error::NotFound(Entity::Bundle))),
            Observed::Resolved(status, response) => Some(Ok(Resolved {
                claimed: false,
                status,
                response,
            })),
            Observed::Expired | Observed::Superseded | Observed::Inactive => {
                Some(Err(Error::NoLongerActive))
            }
            Observed::Open | Observed::Detached => None,
        });
        self.inner.waiters.leave(pending_id, &slot, false);
        watched?.ok_or(Error::TimedOut)
    }

    /// The waiting loop shared by `wait` and `wait_bundle`: read the bundle,
    /// let `decide` end the wait, else sleep until notified, the poll
    /// interval, or the deadline (`Ok(None)`). The generation is taken
    /// before each read, so a notification that lands between the read and
    /// the sleep is never lost.
    fn watch<T>(
        &self,
        pending_id: &str,
        slot: &Slot,
        deadline: Instant,
        mut decide: impl FnMut(Observed) -> Option<Result<T>>,
    ) -> Result<Option<T>> {
        loop {
            let seen = slot.generation();
            let handed = slot
                .resolution
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let observed = match handed {
                Some((status, response)) => Observed::Resolved(status, response),
                None => observe(self, pending_id)?,
            };
            if let Some(result) = decide(observed) {
                return result.map(Some);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.failpoint(crate::failpoints::points::WAIT_BEFORE_SLEEP)?;
            slot.wait_past(seen, (deadline - now).min(self.inner.poll_interval));
        }
    }

    /// LIFE-5 for one bundle, when its last waiter timed out: detached if it
    /// is still active or holds an undelivered resolution (the same rule as
    /// `detach_session`). Runs under the registry lock, so an agent that
    /// starts waiting meanwhile is not detached behind its back.
    fn detach_bundle(&self, pending_id: &str) -> Result<()> {
        let detached = self.inner.waiters.unless_waited(pending_id, || {
            self.write(|conn| {
                crate::lifecycle::detach_bundle_statement(pending_id).execute(conn)?;
                Ok(())
            })
        });
        if detached? {
            if let Err(error) = self.dispatch_one(pending_id) {
                tracing::warn!(pending_id, %error, "dispatch after detach failed; the entry stays in the outbox");
            }
        }
        Ok(())
    }

    /// WAIT-1: an agent waiting again on a detached, unresolved bundle is
    /// attached again, so its answer reaches it directly and not through
    /// the outbox.
    fn reattach(&self, pending_id: &str) -> Result<()> {
        self.write_one(|conn| {
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

    /// LIFE-8: the outbox, oldest resolution first; `limit` defaults to 50,
    /// below 1 means 50, above 200 is clamped.
    pub fn pending_deliveries(&self, limit: Option<i64>) -> Result<Vec<Delivery>> {
        let limit = match limit {
            Some(n) if n >= 1 => n.min(200),
            _ => 50,
        };
        self.read(|conn| {
            let ids: Vec<String> = outbox_query(limit).load(conn)?;
            let mut deliveries = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(delivery) = load_delivery(conn, &id)? {
                    deliveries.push(delivery);
                }
            }
            Ok(deliveries)
        })
    }

    /// LIFE-8: removes an entry from the outbox. Acknowledging twice, an
    /// unknown id, or a bundle with nothing undelivered changes nothing;
    /// acknowledging an unresolved bundle does not stop its later
    /// resolution from being delivered (the claim marks it again).
    pub fn ack_delivery(&self, pending_id: &str) -> Result<()> {
        self.write_one(|conn| {
            diesel::update(
                bundles::table
                    .find(pending_id)
                    .filter(bundles::responded_at.is_not_null()),
            )
            .set((
                bundles::response_delivery_pending.eq(false),
                bundles::delivery_lease_until.eq(None::<i64>),
            ))
            .execute(conn)?;
            Ok(())
        })
    }

    /// DEL-4, LIFE-9: offers every outbox entry to the dispatcher once.
    /// Call it at start-up, and whenever a retry is due.
    pub fn deliver_pending(&self) -> Result<DeliveryReport> {
        let mut report = DeliveryReport::default();
        if self.inner.dispatcher.is_none() {
            return Ok(report);
        }
        // Every entry, not a page: failed entries stay oldest, and a page
        // of them would hide everything behind it.
        let ids: Vec<String> = self.read_one(|conn| {
            Ok(bundles::table
                .filter(in_outbox())
                .order_by((bundles::responded_at.asc(), bundles::pending_id.asc()))
                .select(bundles::pending_id)
                .load(conn)?)
        })?;
        for id in ids {
            match self.dispatch_one(&id) {
                Ok(Dispatch::Delivered) => report.delivered += 1,
                Ok(Dispatch::Failed) => report.failed += 1,
                Ok(Dispatch::Leased | Dispatch::NotDue) => report.skipped += 1,
                Err(error) => {
                    tracing::warn!(pending_id = %id, %error, "dispatch attempt failed");
                    report.failed += 1;
                }
            }
        }
        Ok(report)
    }

    /// Offers one outbox entry to the dispatcher under an expiring lease, so
    /// two processes never dispatch it at once (DEL-4). Never touches the
    /// resolution itself.
    pub(crate) fn dispatch_one(&self, pending_id: &str) -> Result<Dispatch> {
        let Some(dispatcher) = self.inner.dispatcher.clone() else {
            return Ok(Dispatch::NotDue);
        };
        let now = self.now().as_micros();
        let lease_until = now + 2 * self.inner.dispatch_timeout.as_micros() as i64;
        let leased = self.write(|conn| {
            Ok(diesel::update(
                bundles::table.find(pending_id).filter(in_outbox()).filter(
                    bundles::delivery_lease_until
                        .is_null()
                        .or(bundles::delivery_lease_until.lt(now)),
                ),
            )
            .set(bundles::delivery_lease_until.eq(lease_until))
            .execute(conn)?)
        })?;
        if leased == 0 {
            return Ok(Dispatch::Leased);
        }
        let Some(delivery) = self.read(|conn| load_delivery(conn, pending_id))? else {
            return Ok(Dispatch::NotDue);
        };
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let outcome = dispatcher.resume(&delivery);
            let _ = done.send(outcome);
        });
        match result.recv_timeout(self.inner.dispatch_timeout) {
            Ok(Ok(())) => {
                self.ack_delivery(pending_id)?;
                Ok(Dispatch::Delivered)
            }
            Ok(Err(message)) => {
                tracing::warn!(pending_id, %message, "resume dispatch failed; the entry stays in the outbox");
                self.write(|conn| {
                    diesel::update(bundles::table.find(pending_id))
                        .set(bundles::delivery_lease_until.eq(None::<i64>))
                        .execute(conn)?;
                    Ok(())
                })?;
                Ok(Dispatch::Failed)
            }
            // Timed out: the dispatcher may still be running, so its lease
            // stays until it expires.
            Err(_) => {
                tracing::warn!(
                    pending_id,
                    "resume dispatch timed out; the entry stays in the outbox"
                );
                Ok(Dispatch::Failed)
            }
        }
    }
}

/// What one dispatch attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dispatch {
    Delivered,
    Failed,
    Leased,
    NotDue,
}

fn load_delivery(
    conn: &mut crate::db::AnyConnection,
    pending_id: &str,
) -> Result<Option<Delivery>> {
    let Some((record, _, rows)) = bundle::load_any(conn, pending_id)? else {
        return Ok(None);
    };
    let Some((status, response)) = bundle::stored_response(&record, &rows) else {
        return Ok(None);
    };
    // Only the questions of the view are delivered; its age is irrelevant.
    let view = bundle::bundle_view(
        &record,
        &rows,
        crate::Timestamp::from_micros(record.created_at),
    );
    Ok(Some(Delivery {
        pending_id: record.pending_id,
        task_id: view.task_id,
        session_id: view.session_id,
        status,
        questions: view.questions,
        response,
    }))
}
