//! Taking a bundle's reminders and escalation (NUDGE-2, NUDGE-3): each
//! step appends one event exactly once, across processes and restarts,
//! guarded as a settlement is — a conditional write on the bundle's next
//! step (`next_step_at`), in a transaction serialized with the bundle's
//! claims. Only the sweep takes steps (`expire_due` and the sweeper);
//! readers never write. When steps fall is `rules::nudges`'s.
//!
//! A step locks its bundle's session row exclusively, as an ask does,
//! where every claim, vote and settlement begins by sharing that lock
//! (CLAIM-4). On PostgreSQL that lock also orders the event log: a
//! transaction's id, its events' position (EVT-1a), is taken with its
//! first row lock, so a claim that began first holds a smaller id and the
//! step waits for its commit (then sees it settled and steps no more),
//! while a claim that begins after the step takes a larger id than the
//! step's: a step's event never follows the resolution in the log.

use diesel::dsl::min;
use diesel::prelude::*;

use crate::domain::change::Changes;
use crate::domain::engine::Engine;
use crate::domain::nudges::{self, StoredNudges};
use crate::error::Result;
use crate::rules::activeness;
use crate::rules::limits::sweep_limit;
use crate::rules::nudges::{DueSteps, Schedule};
use crate::rules::vocabulary::EventType;
use crate::store::schema::bundles;
use crate::store::{AnyConnection, Timestamp};

/// NUDGE-2: the bundles with a step due at `now`, in step time then
/// `pending_id`, walking the `bundles_next_step` index: O(limit) rows.
#[diesel::dsl::auto_type]
pub fn steps_due_query(now: i64, limit: i64) -> _ {
    bundles::table
        .filter(bundles::next_step_at.is_not_null())
        .filter(bundles::next_step_at.le(now))
        .order_by((bundles::next_step_at.asc(), bundles::pending_id.asc()))
        .select((bundles::pending_id, bundles::session_id))
        .limit(limit)
}

/// NUDGE-2: the earliest step after `now` (the sweeper sleeps until then,
/// at most), on the same index.
#[diesel::dsl::auto_type]
pub fn next_step_query(now: i64) -> _ {
    let soonest: diesel::helper_types::min<bundles::next_step_at> = min(bundles::next_step_at);
    bundles::table
        .filter(bundles::next_step_at.is_not_null())
        .filter(bundles::next_step_at.gt(now))
        .select(soonest)
}

/// What a step's transaction reads of its bundle under the lock.
#[derive(Queryable)]
struct StepRead {
    created_at: i64,
    expires_at: Option<i64>,
    next_step_at: Option<i64>,
    nudges: StoredNudges,
    active: Option<bool>,
    finished: Option<bool>,
}

/// The bundle's row as a step reads it: its schedule, its progress, and
/// whether it is active now (ACT-1) or can never be again.
#[diesel::dsl::auto_type]
fn step_read_query<'a>(pending_id: &'a str, now: i64) -> _ {
    let active: activeness::is_active = activeness::is_active(now);
    let finished: activeness::permanently_inactive = activeness::permanently_inactive();
    bundles::table
        .filter(bundles::pending_id.eq(pending_id))
        .select((
            bundles::created_at,
            bundles::expires_at,
            bundles::next_step_at,
            nudges::nudge_columns(),
            active,
            finished,
        ))
}

impl Engine {
    /// NUDGE-2: takes the due steps of up to `limit` bundles (default 100,
    /// clamped to 1..1,000), each bundle in a transaction of its own;
    /// returns how many steps (events) this call took. Safe from several
    /// processes: a step another took first is skipped.
    pub(crate) fn take_due_steps(&self, limit: Option<i64>) -> Result<u64> {
        let now = self.now();
        let batch: Vec<(String, String)> = self.read_one(|conn| {
            Ok(steps_due_query(now.as_micros(), sweep_limit(limit)).load(conn)?)
        })?;
        let mut taken = 0;
        for (pending_id, session_id) in batch {
            taken += self.change_session(&session_id, |conn, changes| {
                step_in(conn, changes, &pending_id, self.now())
            })?;
        }
        Ok(taken)
    }

    /// NUDGE-2: the time of the next step after `now`, if one lies ahead.
    pub(crate) fn next_step_after(&self, now: i64) -> Result<Option<i64>> {
        self.read_one(|conn| Ok(next_step_query(now).first(conn)?))
    }
}

/// NUDGE-2: takes the steps of `pending_id` due at `now`, inside the
/// caller's write transaction: one `bundle.reminded` for the latest due
/// reminder, one `bundle.escalated` for a due escalation, then the next
/// step's time, written only if no one moved it first. A bundle that is
/// not active now takes no step: its due steps pass unsent, and one that
/// can never be active again (settled, superseded, past its deadline)
/// leaves the index. Returns the steps (events) taken.
fn step_in(
    conn: &mut AnyConnection,
    changes: &mut Changes,
    pending_id: &str,
    now: Timestamp,
) -> Result<u64> {
    let Some(read) = step_read_query(pending_id, now.as_micros())
        .load::<StepRead>(conn)?
        .pop()
    else {
        return Ok(0);
    };
    let now_us = now.as_micros();
    // Another sweep took this step first (or there is none).
    let Some(old) = read.next_step_at.filter(|at| *at <= now_us) else {
        return Ok(0);
    };
    let schedule = read.nudges.schedule(read.created_at, read.expires_at);
    let due = schedule.due(schedule.progress(read.nudges.stepped_at), now_us);
    let over = read.finished != Some(false) || read.expires_at.is_some_and(|at| at <= now_us);
    let next = if over {
        None
    } else {
        schedule.next_step(schedule.progress(Some(now_us)))
    };
    let moved = diesel::update(bundles::table)
        .filter(bundles::pending_id.eq(pending_id))
        .filter(bundles::next_step_at.eq(old))
        .set((
            bundles::stepped_at.eq(now_us),
            bundles::next_step_at.eq(next),
        ))
        .execute(conn)?;
    if moved == 0 || read.active != Some(true) {
        return Ok(0);
    }
    append_steps(conn, changes, pending_id, &schedule, due, now)?;
    Ok(due.count())
}

/// NUDGE-2, NUDGE-3: the steps' events, in time order.
fn append_steps(
    conn: &mut AnyConnection,
    changes: &mut Changes,
    pending_id: &str,
    schedule: &Schedule,
    due: DueSteps,
    now: Timestamp,
) -> Result<()> {
    let reminder = due.reminder.map(|n| {
        let next_at = schedule
            .next_reminder(n)
            .map(|at| Timestamp::from_micros(at).to_rfc3339())
            .unwrap_or_default();
        let at = schedule.reminder_at(n).unwrap_or(now.as_micros());
        (at, serde_json::json!({"n": n, "next_at": next_at}))
    });
    let escalation = match (due.escalation, schedule.escalation_at()) {
        (true, Some(at)) => {
            let to = nudges::escalated_users(conn, pending_id)?;
            Some((at, serde_json::json!({ "to": to })))
        }
        _ => None,
    };
    let mut steps: Vec<(i64, EventType, serde_json::Value)> = Vec::with_capacity(2);
    if let Some((at, data)) = reminder {
        steps.push((at, EventType::Reminded, data));
    }
    if let Some((at, data)) = escalation {
        steps.push((at, EventType::Escalated, data));
    }
    steps.sort_by_key(|(at, _, _)| *at);
    for (_, kind, data) in steps {
        changes.append_step(conn, kind, pending_id, &data.to_string(), now)?;
    }
    Ok(())
}
