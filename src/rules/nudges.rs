//! Reminders and escalation (NUDGE-1, NUDGE-2, NUDGE-4): what an ask may
//! schedule and when each step falls. Plain data and pure functions: the
//! sweep (`domain::nudge`) reads a bundle's stored schedule under its lock
//! and asks this module which steps are due and when the next one is.

use std::ops::RangeInclusive;
use std::time::Duration;

use crate::error::ValidationError;
use crate::rules::limits::{check_count, check_id};

/// NUDGE-1: the range of every delay (`first_after_ms`, `every_ms`,
/// `after_ms`): one minute to 30 days.
pub const DELAY_MS: RangeInclusive<u64> = 60_000..=2_592_000_000;
/// NUDGE-1: how many reminders a bundle may ask for.
pub const REMINDERS: RangeInclusive<u32> = 1..=20;
/// NUDGE-1: the reminders when `max` is not given.
pub const DEFAULT_REMINDERS: u32 = 3;
/// NUDGE-1: how many users an escalation names.
pub const ESCALATE_TO: RangeInclusive<usize> = 1..=20;

/// Reminders as the agent asked for them (NUDGE-1), before their checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemindersRequest {
    /// The first reminder, this long after the ask: 1 minute to 30 days.
    pub first_after: Duration,
    /// The interval between reminders, in the same range; `None`: as
    /// `first_after`.
    pub every: Option<Duration>,
    /// How many reminders at most; `None`: 3.
    pub max: Option<u32>,
}

/// An escalation as the agent asked for it (NUDGE-1), before its checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EscalateRequest {
    /// When its users see the bundle, this long after the ask: 1 minute to
    /// 30 days.
    pub after: Duration,
    /// Who sees it then: 1 to 20 distinct user ids.
    pub to: Vec<String>,
}

/// Reminders as stored with a bundle, checked (NUDGE-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reminders {
    /// The first reminder's delay after the ask, in milliseconds.
    pub first_after_ms: i64,
    /// The interval between reminders, in milliseconds.
    pub every_ms: i64,
    /// How many reminders at most.
    pub max: u32,
}

impl Reminders {
    /// NUDGE-1: the request's checks, without the database; field paths
    /// name `reminders.…`.
    pub fn checked(request: &RemindersRequest) -> Result<Reminders, ValidationError> {
        let first_after_ms = delay("reminders.first_after_ms", request.first_after)?;
        let every_ms = match request.every {
            Some(every) => delay("reminders.every_ms", every)?,
            None => first_after_ms,
        };
        let max = request.max.unwrap_or(DEFAULT_REMINDERS);
        if !REMINDERS.contains(&max) {
            return Err(ValidationError::new(
                "reminders.max",
                format!(
                    "expected {} to {} reminders, got {max}",
                    REMINDERS.start(),
                    REMINDERS.end()
                ),
            ));
        }
        Ok(Reminders {
            first_after_ms,
            every_ms,
            max,
        })
    }

    /// DM-1: the stored columns read back; `None` when they cannot make a
    /// schedule (then no reminder is ever taken).
    pub fn from_stored(first: Option<i64>, every: Option<i64>, max: Option<i32>) -> Option<Self> {
        let (first_after_ms, every_ms) = (first?, every?);
        let max = u32::try_from(max?).ok()?;
        let in_range = |ms: i64| u64::try_from(ms).is_ok_and(|ms| DELAY_MS.contains(&ms));
        (in_range(first_after_ms) && in_range(every_ms) && REMINDERS.contains(&max)).then_some(
            Reminders {
                first_after_ms,
                every_ms,
                max,
            },
        )
    }
}

/// NUDGE-1: the escalation's checks; field paths name `escalate.…`.
/// Returns its delay in milliseconds and its users, in the order given.
pub fn checked_escalation(
    request: &EscalateRequest,
) -> Result<(i64, Vec<String>), ValidationError> {
    let after_ms = delay("escalate.after_ms", request.after)?;
    check_count("escalate.to", request.to.len(), &ESCALATE_TO, "user ids")?;
    for (i, id) in request.to.iter().enumerate() {
        let field = format!("escalate.to[{i}]");
        check_id(&field, id)?;
        if let Some(first) = request.to[..i].iter().position(|earlier| earlier == id) {
            return Err(ValidationError::new(
                field,
                format!("duplicate of escalate.to[{first}]"),
            ));
        }
    }
    Ok((after_ms, request.to.clone()))
}

/// A delay in range, as whole milliseconds.
fn delay(field: &str, delay: Duration) -> Result<i64, ValidationError> {
    let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    if !DELAY_MS.contains(&ms) || !delay.subsec_nanos().is_multiple_of(1_000_000) {
        return Err(ValidationError::new(
            field,
            format!(
                "expected whole milliseconds from {} to {} (1 minute to 30 days), got {}",
                DELAY_MS.start(),
                DELAY_MS.end(),
                delay.as_secs_f64() * 1_000.0
            ),
        ));
    }
    i64::try_from(ms).map_err(|_| ValidationError::new(field, "out of range"))
}

/// A bundle's steps in time (NUDGE-2): its reminders and its escalation,
/// each only before its deadline. Times are microseconds, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// When it was asked.
    pub created_at: i64,
    /// Its deadline, if any: no step at or after it (NUDGE-2, NUDGE-4).
    pub expires_at: Option<i64>,
    /// Its reminders, if any.
    pub reminders: Option<Reminders>,
    /// When its escalation takes effect (PPL-6 `from`), if any.
    pub escalate_at: Option<i64>,
}

/// Where a bundle's steps stand (NUDGE-2), derived from its schedule and
/// the time of its last step ([`Schedule::progress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// The number of the last reminder taken (missed ones count).
    pub reminders_sent: u32,
    /// Whether the escalation's step was taken.
    pub escalated: bool,
}

/// What one sweep of a bundle does at `now` (NUDGE-2): the latest due
/// reminder (`n`, counted from 1) and whether the escalation steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DueSteps {
    /// The latest due reminder's number, if one is due and not yet taken.
    pub reminder: Option<u32>,
    /// The escalation is due and not yet taken.
    pub escalation: bool,
}

impl DueSteps {
    /// How many steps (events) this is.
    pub fn count(self) -> u64 {
        u64::from(self.reminder.is_some()) + u64::from(self.escalation)
    }
}

const MICROS_PER_MS: i64 = 1_000;

impl Schedule {
    /// Whether `at` is a time a step may fall at: before the deadline.
    fn before_deadline(&self, at: i64) -> bool {
        self.expires_at.is_none_or(|deadline| at < deadline)
    }

    /// The time of reminder number `n` (1-based), if the bundle has one
    /// before its deadline.
    pub fn reminder_at(&self, n: u32) -> Option<i64> {
        let reminders = self.reminders?;
        if n == 0 || n > reminders.max {
            return None;
        }
        let offset_ms = reminders
            .first_after_ms
            .checked_add(reminders.every_ms.checked_mul(i64::from(n - 1))?)?;
        let at = self
            .created_at
            .checked_add(offset_ms.checked_mul(MICROS_PER_MS)?)?;
        self.before_deadline(at).then_some(at)
    }

    /// PPL-6: the escalation's `from`, if it falls before the deadline
    /// (else it never takes effect and no grant was stored).
    pub fn escalation_at(&self) -> Option<i64> {
        self.escalate_at.filter(|at| self.before_deadline(*at))
    }

    /// The number of the latest reminder due at `now` (0: none yet).
    fn reminders_due(&self, now: i64) -> u32 {
        let Some(reminders) = self.reminders else {
            return 0;
        };
        (1..=reminders.max)
            .take_while(|n| self.reminder_at(*n).is_some_and(|at| at <= now))
            .last()
            .unwrap_or(0)
    }

    /// NUDGE-2: the steps due at `now` that `progress` has not taken.
    /// Nothing is due at or after the deadline.
    pub fn due(&self, progress: Progress, now: i64) -> DueSteps {
        if !self.before_deadline(now) {
            return DueSteps::default();
        }
        let latest = self.reminders_due(now);
        DueSteps {
            reminder: (latest > progress.reminders_sent).then_some(latest),
            escalation: !progress.escalated && self.escalation_at().is_some_and(|at| at <= now),
        }
    }

    /// NUDGE-2: the steps taken by a bundle last stepped at `stepped_at`:
    /// every step falling at or before it (missed ones count as sent).
    pub fn progress(&self, stepped_at: Option<i64>) -> Progress {
        let Some(stepped_at) = stepped_at else {
            return Progress::default();
        };
        Progress {
            reminders_sent: self.reminders_due(stepped_at),
            escalated: self.escalation_at().is_some_and(|at| at <= stepped_at),
        }
    }

    /// NUDGE-2: the time of the next step not yet taken, `None` when none
    /// remains before the deadline (the sweep's index key).
    pub fn next_step(&self, progress: Progress) -> Option<i64> {
        let reminder = self.reminder_at(progress.reminders_sent + 1);
        let escalation = self.escalation_at().filter(|_| !progress.escalated);
        match (reminder, escalation) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// NUDGE-5: the next reminder's time after `sent`, `None` when none
    /// remains before the deadline.
    pub fn next_reminder(&self, sent: u32) -> Option<i64> {
        self.reminder_at(sent + 1)
    }

    /// Whether the bundle was asked with reminders or an escalation.
    pub fn is_empty(&self) -> bool {
        self.reminders.is_none() && self.escalate_at.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE_US: i64 = 60_000_000;

    fn schedule(expires_at: Option<i64>) -> Schedule {
        Schedule {
            created_at: 0,
            expires_at,
            reminders: Some(Reminders {
                first_after_ms: 60_000,
                every_ms: 120_000,
                max: 3,
            }),
            escalate_at: Some(4 * MINUTE_US),
        }
    }

    #[test]
    fn nudge_2_reminders_fall_at_first_then_every_up_to_max() {
        let s = schedule(None);
        assert_eq!(s.reminder_at(1), Some(MINUTE_US));
        assert_eq!(s.reminder_at(2), Some(3 * MINUTE_US));
        assert_eq!(s.reminder_at(3), Some(5 * MINUTE_US));
        assert_eq!(s.reminder_at(4), None);
        assert_eq!(s.next_step(Progress::default()), Some(MINUTE_US));
    }

    #[test]
    fn nudge_2_a_sweep_takes_only_the_latest_due_reminder() {
        let s = schedule(None);
        let due = s.due(Progress::default(), 5 * MINUTE_US);
        assert_eq!(due.reminder, Some(3));
        assert!(due.escalation);
        assert_eq!(due.count(), 2);
        let after = s.progress(Some(5 * MINUTE_US));
        assert_eq!(
            after,
            Progress {
                reminders_sent: 3,
                escalated: true
            }
        );
        assert_eq!(s.next_step(after), None);
        assert_eq!(s.due(after, 6 * MINUTE_US), DueSteps::default());
        let between = s.progress(Some(3 * MINUTE_US));
        assert_eq!(s.next_step(between), Some(4 * MINUTE_US), "the escalation");
    }

    #[test]
    fn nudge_2_nothing_steps_at_or_after_the_deadline() {
        let s = schedule(Some(3 * MINUTE_US));
        assert_eq!(s.reminder_at(2), None, "a reminder at the deadline");
        assert_eq!(s.escalation_at(), None, "an escalation after it");
        assert_eq!(
            s.due(Progress::default(), 3 * MINUTE_US),
            DueSteps::default()
        );
        let first = s.due(Progress::default(), 3 * MINUTE_US - 1);
        assert_eq!(first.reminder, Some(1));
        assert!(!first.escalation);
        assert_eq!(s.next_step(s.progress(Some(3 * MINUTE_US - 1))), None);
    }

    #[test]
    fn nudge_1_ranges_and_defaults() {
        let ok = Reminders::checked(&RemindersRequest {
            first_after: Duration::from_secs(60),
            every: None,
            max: None,
        })
        .unwrap();
        assert_eq!((ok.every_ms, ok.max), (60_000, 3));
        for (request, field) in [
            (
                RemindersRequest {
                    first_after: Duration::from_millis(59_999),
                    ..Default::default()
                },
                "reminders.first_after_ms",
            ),
            (
                RemindersRequest {
                    first_after: Duration::from_secs(60),
                    every: Some(Duration::from_millis(2_592_000_001)),
                    max: None,
                },
                "reminders.every_ms",
            ),
            (
                RemindersRequest {
                    first_after: Duration::from_secs(60),
                    every: None,
                    max: Some(21),
                },
                "reminders.max",
            ),
        ] {
            assert_eq!(Reminders::checked(&request).unwrap_err().field, field);
        }
        let duplicate = EscalateRequest {
            after: Duration::from_secs(60),
            to: vec!["a".into(), "b".into(), "a".into()],
        };
        assert_eq!(
            checked_escalation(&duplicate).unwrap_err().field,
            "escalate.to[2]"
        );
        let empty = EscalateRequest {
            after: Duration::from_secs(60),
            to: vec![],
        };
        assert_eq!(checked_escalation(&empty).unwrap_err().field, "escalate.to");
    }
}
