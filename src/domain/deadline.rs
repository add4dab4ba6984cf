//! Deadlines (EXP-2..4): a due bundle is settled exactly once, by
//! whoever meets it first, with the outcome its deadline names. The write
//! is the claim's ([`claim::settle`]); this adds what every settlement
//! does in its transaction — its event (EVT-1), its ledger entry (AUD-2)
//! and what it wakes — and
//! the sweep, which settles due bundles in deadline order.

use std::time::Duration;

use diesel::dsl::min;
use diesel::prelude::*;

use crate::domain::bundle;
use crate::domain::change::{Change, Changes};
use crate::domain::claim::{self, Settled};
use crate::domain::engine::ledger::{self, NewAttempt};
use crate::domain::engine::Engine;
use crate::error::{Error, Result};
use crate::rules::activeness;
use crate::rules::digest;
use crate::rules::limits::sweep_limit;
use crate::rules::vocabulary::{Channel, CloseReason, DecidedBy, Outcome};
use crate::store::schema::bundles;
use crate::store::{AnyConnection, Timestamp};

/// EXP-4: the next due bundles to settle, in deadline order then
/// `pending_id`, walking the `bundles_due` index: O(limit) bundles.
#[diesel::dsl::auto_type]
pub fn due_batch_query(now: i64, limit: i64) -> _ {
    let due: activeness::is_due = activeness::is_due(now);
    bundles::table
        .filter(bundles::may_be_active)
        .filter(due)
        .order_by((bundles::expires_at.asc(), bundles::pending_id.asc()))
        .select((bundles::pending_id, bundles::session_id))
        .limit(limit)
}

/// EXP-4: the earliest deadline after `now` of a bundle that may still be
/// active (the sweeper sleeps until then, at most), on the same index.
#[diesel::dsl::auto_type]
pub fn next_deadline_query(now: i64) -> _ {
    let soonest: diesel::helper_types::min<bundles::expires_at> = min(bundles::expires_at);
    bundles::table
        .filter(bundles::may_be_active)
        .filter(bundles::expires_at.is_not_null())
        .filter(bundles::expires_at.gt(now))
        .select(soonest)
}

/// LIFE-11: the due bundles of one session.
#[diesel::dsl::auto_type]
fn due_of_session<'a>(session_id: &'a str, now: i64) -> _ {
    let due: activeness::due_bundle_ids = activeness::due_bundle_ids(now);
    due.filter(bundles::session_id.eq(session_id))
}

/// LIFE-11: before a lifecycle operation changes a session, it settles the
/// session's due bundles in its own transaction, with its one `now`: a
/// bundle whose deadline passed gets its deadline's outcome, never the
/// operation's (superseded, expired, deleted, detached unanswered).
pub(crate) fn settle_due_of_session(
    engine: &Engine,
    conn: &mut AnyConnection,
    changes: &mut Changes,
    session_id: &str,
    now: Timestamp,
) -> Result<()> {
    let due: Vec<String> = due_of_session(session_id, now.as_micros()).load(conn)?;
    for pending_id in due {
        settle_due_in(engine, conn, changes, &pending_id, session_id, now)?;
    }
    Ok(())
}

/// What one sweep did (EXP-4, NUDGE-2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Swept {
    /// How many due bundles it settled.
    pub settled: u64,
    /// How many steps (reminders and escalations) it took.
    pub nudged: u64,
}

impl Engine {
    /// EXP-4, NUDGE-2: one sweep — settles up to `limit` due bundles, then
    /// takes the due steps of up to `limit` bundles.
    pub(crate) fn expire_due(&self, limit: Option<i64>) -> Result<Swept> {
        let settled = self.settle_due(limit)?;
        let nudged = self.take_due_steps(limit)?;
        Ok(Swept { settled, nudged })
    }

    /// EXP-4: settles up to `limit` due bundles (default 100, clamped to
    /// 1..1,000), each in a settlement of its own; returns how many this
    /// call settled. Safe from several processes: a bundle another
    /// settled first is skipped.
    fn settle_due(&self, limit: Option<i64>) -> Result<u64> {
        let now = self.now();
        let batch: Vec<(String, String)> = self.read_one(|conn| {
            Ok(due_batch_query(now.as_micros(), sweep_limit(limit)).load(conn)?)
        })?;
        let mut settled = 0;
        for (pending_id, session_id) in batch {
            let won = self.change_claiming(&session_id, &pending_id, true, |conn, changes| {
                settle_due_in(self, conn, changes, &pending_id, &session_id, self.now())
            })?;
            settled += u64::from(won == Some(true));
        }
        Ok(settled)
    }

    /// EXP-4, NUDGE-2: how long until the next deadline or step, if one
    /// lies ahead.
    fn until_next_deadline(&self) -> Result<Option<Duration>> {
        let now = self.now().as_micros();
        let deadline: Option<i64> =
            self.read_one(|conn| Ok(next_deadline_query(now).first(conn)?))?;
        let step = self.next_step_after(now)?;
        let next = deadline.into_iter().chain(step).min();
        Ok(next.map(|at| Duration::from_micros(u64::try_from(at - now).unwrap_or(0))))
    }

    /// EXP-4, NUDGE-2: one round of the deadline sweeper: settles what is
    /// due and takes the due steps, then says how long to sleep — until
    /// the earliest of `interval`, the next deadline and the next step.
    pub(crate) fn sweep(&self, interval: Duration) -> Duration {
        if let Err(error) = self.expire_due(None) {
            // PROD-2: an outage is logged once, by the pool.
            if !error.is_outage() {
                tracing::warn!(%error, "the deadline sweep failed; it runs again");
            }
        }
        let next = self.until_next_deadline().unwrap_or(None);
        next.map_or(interval, |next| next.min(interval))
    }

    /// A nearer deadline or step was just asked: the sweeper, if any, looks
    /// again.
    pub(crate) fn deadline_asked(&self) {
        if let Some(sweeper) = self.deadline_sweeper.get() {
            sweeper.nudge();
        }
    }
}

/// EXP-3: settles `pending_id` if it is due at `now`, inside the caller's
/// write transaction (the claim's, on the bundle's session): `expire`
/// appends `bundle.closed` (reason `deadline`) and wakes the session's
/// waiters; `answer` and `reject` append `bundle.resolved` with the
/// default's resolution and hand it on like a claim's (waiters, the
/// outbox of a detached bundle). True when this call settled it.
pub(crate) fn settle_due_in(
    engine: &Engine,
    conn: &mut AnyConnection,
    changes: &mut Changes,
    pending_id: &str,
    session_id: &str,
    now: Timestamp,
) -> Result<bool> {
    match claim::settle(conn, pending_id, now, &engine.failpoints)? {
        None => Ok(false),
        Some(Settled::Expired) => {
            changes.append_closed(conn, &[pending_id.to_owned()], CloseReason::Deadline, now)?;
            let digest = digest::sha256_hex(digest::EXPIRE.as_bytes());
            ledger::insert(conn, &[entry(pending_id, now, Outcome::Expired, digest)])?;
            changes.push(Change::Session {
                session_id: session_id.to_owned(),
            });
            Ok(true)
        }
        Some(Settled::Resolved { record, rows }) => {
            let (status, response) = bundle::stored_response(&record, &rows).ok_or_else(|| {
                Error::Internal(format!("settled bundle {pending_id} has no resolution"))
            })?;
            changes.append_resolved(conn, status, &response, now)?;
            // AUD-5: the stored default, byte for byte.
            let stored = record.default_response.as_deref().unwrap_or_default();
            let digest = digest::sha256_hex(stored.as_bytes());
            ledger::insert(conn, &[entry(pending_id, now, Outcome::Won, digest)])?;
            changes.push(Change::Resolved {
                pending_id: pending_id.to_owned(),
                status,
                response,
            });
            Ok(true)
        }
    }
}

/// AUD-1: a settlement's ledger entry, written in its transaction (AUD-2):
/// kind and channel `deadline`, no ids.
fn entry(pending_id: &str, now: Timestamp, outcome: Outcome, digest: String) -> NewAttempt {
    NewAttempt {
        pending_id: pending_id.to_owned(),
        at: now.as_micros(),
        principal_kind: DecidedBy::Deadline.as_str(),
        user_id: String::new(),
        agent_id: String::new(),
        channel: Channel::DEADLINE_WORD,
        outcome: outcome.as_str(),
        digest,
    }
}
