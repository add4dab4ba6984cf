//! MAIL-1a: the mail worker's one row — its cursor, lease, progress and
//! counts — as `mail_status`, `/metrics` and `prune` read it, and the
//! `Message-ID` every mail about one event to one person shares.

use diesel::prelude::*;
use sha2::{Digest, Sha256};

use crate::domain::engine::Engine;
use crate::domain::events::{self, Position};
use crate::error::Result;
use crate::store::clock::or_empty;
use crate::store::schema::mail_state;
use crate::store::Timestamp;

/// The one row's id.
pub(crate) const ROW: i64 = 1;

/// MAIL-1a: how mail stands (`mail_status`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct MailStatus {
    /// Whether mail was ever configured on this database (the worker's
    /// row exists).
    pub configured: bool,
    /// The position of the last event the worker is done with (`""`:
    /// before the first event).
    pub cursor: String,
    /// Events after the cursor.
    pub backlog: i64,
    /// The last failure, as the SMTP server or the connection said
    /// (`""` before any).
    pub last_error: String,
    /// Messages the SMTP server accepted.
    pub sent: i64,
    /// Messages dropped: refused for good (5xx), failing for the give-up
    /// time, or to an address that is not one.
    pub failed: i64,
    /// When the message being retried is tried again; `""` when none is.
    #[serde(with = "or_empty")]
    #[schemars(schema_with = "or_empty::schema")]
    pub next_attempt_at: Option<Timestamp>,
}

/// MAIL-1: the `Message-ID` of the mail about the event at `position`
/// to `user_id`: a hash of both, the same on every resend, revealing no
/// address.
#[cfg_attr(not(feature = "mail"), allow(dead_code))] // for the worker
pub(crate) fn message_id(position: &str, user_id: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(b"clarion mail\0");
    digest.update(position.as_bytes());
    digest.update(b"\0");
    digest.update(user_id.as_bytes());
    let hex: String = digest.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("<{hex}@clarion>")
}

/// MAIL-1a, REL-8: where the log must be kept from for mail: its cursor,
/// while a worker held its lease within the give-up time (`None`: mail
/// keeps nothing).
pub(crate) fn retained_from(engine: &Engine) -> Result<Option<Position>> {
    let now = engine.now().as_micros();
    let row: Option<(String, i64, i64)> = engine.read(|conn| {
        Ok(mail_state::table
            .find(ROW)
            .select((
                mail_state::cursor,
                mail_state::ran_at,
                mail_state::give_up_us,
            ))
            .first(conn)
            .optional()?)
    })?;
    Ok(row
        .filter(|(_, ran_at, give_up)| now.saturating_sub(*ran_at) < *give_up)
        .map(|(cursor, _, _)| Position::parse(&cursor).ok().flatten().unwrap_or_default()))
}

impl Engine {
    /// MAIL-1a (`mail_status`): the cursor, the backlog, the last error
    /// and the counts.
    pub(crate) fn mail_status(&self) -> Result<MailStatus> {
        self.read(|conn| {
            let row: Option<(String, String, i64, i64, Option<i64>)> = mail_state::table
                .find(ROW)
                .select((
                    mail_state::cursor,
                    mail_state::last_error,
                    mail_state::sent,
                    mail_state::failed,
                    mail_state::next_attempt_at,
                ))
                .first(conn)
                .optional()?;
            let Some((cursor, last_error, sent, failed, next)) = row else {
                return Ok(MailStatus {
                    configured: false,
                    cursor: String::new(),
                    backlog: 0,
                    last_error: String::new(),
                    sent: 0,
                    failed: 0,
                    next_attempt_at: None,
                });
            };
            let backlog = events::count_after(conn, Position::parse(&cursor).ok().flatten())?;
            Ok(MailStatus {
                configured: true,
                cursor,
                backlog,
                last_error,
                sent,
                failed,
                next_attempt_at: next.map(Timestamp::from_micros),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_are_per_event_and_person() {
        let id = message_id("12", "ann");
        assert_eq!(id, message_id("12", "ann"));
        assert_ne!(id, message_id("12", "bob"));
        assert_ne!(id, message_id("13", "ann"));
        assert!(id.starts_with('<') && id.ends_with("@clarion>") && !id.contains("ann"));
    }
}
