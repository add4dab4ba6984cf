//! Reminders and escalation as stored and shown (NUDGE-1, NUDGE-5): the
//! columns an ask writes, the schedule they make, and the `nudges` object
//! every LIST-6 element carries. When steps fall is `rules::nudges`'s; the
//! sweep that takes them is `domain::steps`.

use diesel::prelude::*;

use crate::domain::views::NudgesView;
use crate::error::Result;
use crate::rules::nudges::{Progress, Reminders, Schedule};
use crate::store::schema::{bundles, escalation_grants};
use crate::store::{AnyConnection, Timestamp};

/// A bundle's nudge columns as stored (NUDGE-1, NUDGE-2).
#[derive(Debug, Clone, Queryable)]
pub(crate) struct StoredNudges {
    /// The reminders' JSON text ([`StoredReminders`]), if any.
    pub reminders: Option<String>,
    /// PPL-6: the escalation's `from`.
    pub escalate_at: Option<i64>,
    /// NUDGE-2: when its last step transaction ran.
    pub stepped_at: Option<i64>,
}

/// The columns of a [`StoredNudges`].
#[diesel::dsl::auto_type]
pub(crate) fn nudge_columns() -> _ {
    (
        bundles::reminders,
        bundles::escalate_at,
        bundles::stepped_at,
    )
}

/// NUDGE-1: the `reminders` column's JSON text.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredReminders {
    first_after_ms: i64,
    every_ms: i64,
    max: i32,
}

/// NUDGE-1: reminders as the `reminders` column stores them.
pub(crate) fn stored_reminders(reminders: &Reminders) -> String {
    serde_json::json!({
        "first_after_ms": reminders.first_after_ms,
        "every_ms": reminders.every_ms,
        "max": reminders.max,
    })
    .to_string()
}

impl StoredNudges {
    /// The bundle's steps in time (DM-1: an unreadable reminders column
    /// schedules none).
    pub(crate) fn schedule(&self, created_at: i64, expires_at: Option<i64>) -> Schedule {
        let reminders = self
            .reminders
            .as_deref()
            .and_then(|text| serde_json::from_str::<StoredReminders>(text).ok())
            .and_then(|stored| {
                Reminders::from_stored(
                    Some(stored.first_after_ms),
                    Some(stored.every_ms),
                    Some(stored.max),
                )
            });
        Schedule {
            created_at,
            expires_at,
            reminders,
            escalate_at: self.escalate_at,
        }
    }

    /// NUDGE-5: the `nudges` object at `now`; `None` for a bundle asked
    /// with neither reminders nor an escalation.
    pub(crate) fn view(
        &self,
        created_at: i64,
        expires_at: Option<i64>,
        now: Timestamp,
    ) -> Option<NudgesView> {
        let asked = self.reminders.is_some() || self.escalate_at.is_some();
        asked.then(|| {
            let schedule = self.schedule(created_at, expires_at);
            view(&schedule, schedule.progress(self.stepped_at), now)
        })
    }
}

/// NUDGE-5: where a schedule stands at `now`: the reminders taken, the
/// next one, and the escalation's `from` once it is past (by the clock,
/// as its grants take effect, PPL-6).
pub(crate) fn view(schedule: &Schedule, progress: Progress, now: Timestamp) -> NudgesView {
    NudgesView {
        reminders_sent: progress.reminders_sent,
        next_reminder_at: schedule
            .next_reminder(progress.reminders_sent)
            .map(Timestamp::from_micros),
        escalated_at: schedule
            .escalation_at()
            .filter(|at| *at <= now.as_micros())
            .map(Timestamp::from_micros),
    }
}

/// PPL-6: the escalation's grants, written at ask when its `from` falls
/// before the deadline.
pub(crate) fn insert_grants(
    conn: &mut AnyConnection,
    pending_id: &str,
    to: &[String],
    from: i64,
) -> Result<()> {
    let rows: Vec<_> = to
        .iter()
        .map(|user_id| {
            (
                escalation_grants::pending_id.eq(pending_id),
                escalation_grants::user_id.eq(user_id),
                escalation_grants::visible_from.eq(from),
            )
        })
        .collect();
    per_backend!(conn, c => diesel::insert_into(escalation_grants::table)
        .values(&rows)
        .execute(c))?;
    Ok(())
}

/// NUDGE-3: who a bundle's escalation names, by user id.
pub(crate) fn escalated_users(conn: &mut AnyConnection, pending_id: &str) -> Result<Vec<String>> {
    Ok(escalation_grants::table
        .filter(escalation_grants::pending_id.eq(pending_id))
        .order(escalation_grants::user_id)
        .select(escalation_grants::user_id)
        .load(conn)?)
}
