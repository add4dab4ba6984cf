//! `clarion ask`'s nudge flags (NUDGE-1): `--remind-after AGE
//! [--remind-every AGE] [--remind-max N]` and `--escalate-after AGE
//! --escalate-to U,U`, `ask`'s `reminders` and `escalate` arguments as a
//! person types them. As with the quorum flags (`quorum.rs`), `ask`'s
//! declaration leaves both arguments to these, which build the same
//! objects: their checks (and refusals, `escalate.to[2]`) are the
//! operation's.

use serde_json::{json, Map, Value};

use crate::parse_age;

/// `--remind-after AGE [--remind-every AGE] [--remind-max N]`,
/// `--escalate-after AGE --escalate-to U,U`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct NudgeFlags {
    /// Remind the people who see the bundle this long after the ask, if it still waits: an
    /// age with its unit, 1m to 30d (90m, 3h, 2d).
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    pub remind_after: Option<u64>,
    /// With --remind-after: this long between reminders, 1m to 30d (by default
    /// --remind-after's age).
    #[arg(long, value_name = "AGE", value_parser = parse_age, requires = "remind_after")]
    pub remind_every: Option<u64>,
    /// With --remind-after: at most this many reminders, 1 to 20 (3 by default). None is sent
    /// at or after the deadline.
    #[arg(long, value_name = "N", requires = "remind_after")]
    pub remind_max: Option<i64>,
    /// With --escalate-to: those people see the bundle this long after the ask, 1m to 30d;
    /// never if that is at or after the deadline.
    #[arg(long, value_name = "AGE", value_parser = parse_age, requires = "escalate_to")]
    pub escalate_after: Option<u64>,
    /// With --escalate-after: who sees the bundle then (1 to 20 users).
    #[arg(long, value_name = "USER,USER", requires = "escalate_after")]
    pub escalate_to: Option<String>,
}

impl NudgeFlags {
    /// `ask`'s `reminders` argument, `None` without `--remind-after`.
    pub fn reminders(&self) -> Option<Value> {
        let first = self.remind_after?;
        let mut reminders = Map::new();
        reminders.insert("first_after_ms".into(), json!(first));
        if let Some(every) = self.remind_every {
            reminders.insert("every_ms".into(), json!(every));
        }
        if let Some(max) = self.remind_max {
            reminders.insert("max".into(), json!(max));
        }
        Some(Value::Object(reminders))
    }

    /// `ask`'s `escalate` argument, `None` without `--escalate-after`. The
    /// words of `--escalate-to` are trimmed and empty ones dropped, as
    /// every list flag's are; duplicates are kept, for the operation to
    /// refuse.
    pub fn escalate(&self) -> Option<Value> {
        let after = self.escalate_after?;
        let to: Vec<&str> = self
            .escalate_to
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|user| !user.is_empty())
            .collect();
        Some(json!({"after_ms": after, "to": to}))
    }
}
