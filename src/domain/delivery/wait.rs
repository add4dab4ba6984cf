//! Waiting (WAIT-1..4): the agent side's `wait` and the external
//! `wait_bundle`. A waiter never trusts a notification: it reads the
//! bundle's durable state, and a notification (from this handle's commits,
//! or from its watcher for other handles and processes: WAIT-3a) only
//! tells it to read again. An outcome is only ever derived from committed
//! rows, so none is invented.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use diesel::prelude::*;

use crate::domain::bundle;
use crate::domain::change::Change;
use crate::domain::core::Core;
use crate::domain::delivery::waiters::{AgentWait, Fingerprint, Slot};
use crate::domain::model::{Resolved, Response, WaitOutcome};
use crate::error::{Entity, Error, Result};
use crate::rules::capability::{admit_to_bundle, Operation};
use crate::rules::limits::check_text;
use crate::rules::limits::wait_time;
use crate::rules::outbox::detach_bundle_statement;
use crate::rules::principal::Principal;
use crate::rules::visibility::Scope;
use crate::rules::vocabulary::BundleStatus;
use crate::store::failpoints::points;
use crate::store::schema::bundles;
use crate::store::{at_most_one, lock_bundle};

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
/// An external waiter reads through its scope, so a bundle moved out of
/// its sight while it waits is `Gone` (AUTH-5), never revealed.
/// Also returns the bundle's [`Fingerprint`], which the watcher compares
/// with the database to decide whether this waiter must read again
/// (WAIT-3a).
fn observe(
    core: &Core,
    scope: Option<&Scope>,
    pending_id: &str,
) -> Result<(Observed, Option<Fingerprint>)> {
    // Counted for OPS-4's test and benchmark: reads per tick.
    core.watch.stats.reads.fetch_add(1, Ordering::Relaxed);
    let loaded = core.read(|conn| bundle::load_detail(conn, scope, pending_id))?;
    let Some((record, standing, rows)) = loaded else {
        return Ok((Observed::Gone, None));
    };
    let fingerprint = (
        record.responded_at,
        standing.is_active,
        standing.in_current_turn,
        standing.agent_disconnected,
    );
    let (status, response) = bundle::status_of(&record, standing, &rows);
    let observed = match (status, response) {
        (BundleStatus::Pending, _) if standing.agent_disconnected => Observed::Detached,
        (BundleStatus::Pending, _) => Observed::Open,
        (status, Some(response)) => Observed::Resolved(status, response),
        (BundleStatus::Expired, None) => Observed::Expired,
        (BundleStatus::Superseded, None) => Observed::Superseded,
        _ => Observed::Inactive,
    };
    Ok((observed, Some(fingerprint)))
}

impl Core {
    /// WAIT-1..4, the agent side (a host operation): blocks until the bundle
    /// is resolved or stops being active, or `timeout` passes (capped at
    /// ten minutes). A resolution is acknowledged as it is received (WAIT-2).
    /// On `TimedOut`, when no other waiter of this handle remains, the
    /// bundle is detached (LIFE-5) and its later answer goes to the outbox.
    pub(crate) fn wait(&self, pending_id: &str, timeout: Duration) -> Result<WaitOutcome> {
        check_text("pending_id", pending_id)?;
        let deadline = Instant::now() + wait_time(timeout);
        let session_id: String = self
            .read(|conn| {
                Ok(at_most_one::<_, String>(
                    bundles::table.find(pending_id).select(bundles::session_id),
                    conn,
                )?)
            })?
            .ok_or(Error::NotFound(Entity::Bundle))?;
        let agent = AgentWait::arrive(&self.database, pending_id);
        let _beating = self.heartbeat.beating();
        let slot = self.waiters.enter(pending_id, &session_id, false);
        let watched = self.reattach(pending_id).and_then(|()| {
            self.watch(
                None,
                pending_id,
                &slot,
                deadline,
                |observed| match observed {
                    Observed::Gone => Some(Err(Error::NotFound(Entity::Bundle))),
                    Observed::Resolved(status, response) => {
                        Some(Ok(WaitOutcome::resolved(status, response)))
                    }
                    Observed::Expired | Observed::Inactive => Some(Ok(WaitOutcome::Expired)),
                    Observed::Superseded => Some(Ok(WaitOutcome::Superseded)),
                    // The wait re-attached the agent, so a detach seen now
                    // happened during the wait.
                    Observed::Detached => Some(Ok(WaitOutcome::Detached)),
                    Observed::Open => None,
                },
            )
        });
        self.waiters.leave(pending_id, &slot, false);
        let last_agent = agent.depart();
        let outcome = watched?.unwrap_or(WaitOutcome::TimedOut);
        if outcome.response().is_some() {
            // WAIT-2: the agent has it; it leaves the outbox.
            self.ack_delivery(pending_id)?;
        }
        if outcome == WaitOutcome::TimedOut && last_agent {
            self.detach_bundle(pending_id)?;
        }
        Ok(outcome)
    }

    /// WIRE-3 `wait_bundle`, the external side: authorized first (an
    /// invisible bundle is not-found at once), then the resolution when it
    /// arrives (`claimed: false`), `NoLongerActive` if the bundle stops being
    /// active without one, `TimedOut` otherwise. Acknowledges nothing.
    pub(crate) fn wait_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        timeout: Duration,
    ) -> Result<Resolved> {
        let scope = admit_to_bundle(principal, Operation::WaitBundle, pending_id)?;
        let deadline = Instant::now() + wait_time(timeout);
        let (record, _) = self
            .read(|conn| bundle::load_visible(conn, &scope, pending_id))?
            .ok_or(Error::NotFound(Entity::Bundle))?;
        let slot = self.waiters.enter(pending_id, &record.session_id, true);
        let watched =
            self.watch(
                Some(&scope),
                pending_id,
                &slot,
                deadline,
                |observed| match observed {
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
                },
            );
        self.waiters.leave(pending_id, &slot, true);
        watched?.ok_or(Error::TimedOut)
    }

    /// The waiting loop shared by `wait` and `wait_bundle`: read the bundle,
    /// let `decide` end the wait, else sleep until notified or the deadline
    /// (`Ok(None)`). The generation is taken before each read, so a
    /// notification that lands between the read and the sleep is never
    /// lost. Changes made elsewhere reach the waiter through the handle's
    /// watcher (WAIT-3a): one check per tick for all waiters, not a poll
    /// per waiter; only if the watcher could not start does the waiter
    /// poll on its own, every poll interval.
    fn watch<T>(
        &self,
        scope: Option<&Scope>,
        pending_id: &str,
        slot: &Slot,
        deadline: Instant,
        decide: impl FnMut(Observed) -> Option<Result<T>>,
    ) -> Result<Option<T>> {
        let watched = self.watch.ensure_running();
        let mut mine = None;
        let outcome = self.watch_loop(
            scope, pending_id, slot, deadline, watched, &mut mine, decide,
        );
        slot.forget(mine);
        outcome
    }

    /// [`Core::watch`]'s loop; `mine` is what this waiter last read, which
    /// the slot keeps for the watcher while the waiter sleeps.
    #[allow(clippy::too_many_arguments)]
    fn watch_loop<T>(
        &self,
        scope: Option<&Scope>,
        pending_id: &str,
        slot: &Slot,
        deadline: Instant,
        watched: bool,
        mine: &mut Option<Option<Fingerprint>>,
        mut decide: impl FnMut(Observed) -> Option<Result<T>>,
    ) -> Result<Option<T>> {
        loop {
            let seen = slot.generation();
            let epoch = self.waiters.recheck_epoch();
            // A resolution this handle committed is handed over without a
            // read — to the host's own waiters; an external waiter's read
            // re-checks what its principal may see.
            let handed = match scope {
                None => slot
                    .resolution
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
                Some(_) => None,
            };
            let observed = match handed {
                Some((status, response)) => Observed::Resolved(status, response),
                None => {
                    let (observed, fingerprint) = observe(self, scope, pending_id)?;
                    slot.observe(mine.replace(fingerprint), fingerprint);
                    observed
                }
            };
            if let Some(result) = decide(observed) {
                return result.map(Some);
            }
            // REL-7: a closed handle ends every wait at once; it is not
            // the caller's timeout, so nothing is detached (WAIT-1b).
            self.check_open()?;
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            if self.waiters.recheck_epoch() != epoch {
                // The watcher re-read while this waiter read: it may have
                // compared before this reading was recorded.
                continue;
            }
            self.failpoint(points::WAIT_BEFORE_SLEEP)?;
            let sleep = deadline - now;
            slot.wait_past(
                seen,
                if watched {
                    sleep
                } else {
                    sleep.min(self.poll_interval)
                },
            );
            self.check_open()?;
        }
    }

    /// LIFE-5 for one bundle, when its last waiter timed out: detached if it
    /// is still active or holds an undelivered resolution (the same rule as
    /// `detach_session`). Runs under the registry lock, so an agent that
    /// starts waiting meanwhile is not detached behind its back.
    fn detach_bundle(&self, pending_id: &str) -> Result<()> {
        self.change_unless_waited(pending_id, |conn, changes| {
            detach_bundle_statement(pending_id).execute(conn)?;
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
