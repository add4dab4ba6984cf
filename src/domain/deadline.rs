//! Deadlines (EXP-2, EXP-3): a due bundle is settled exactly once, by
//! whoever meets it first, with the outcome its deadline names. The write
//! is the claim's ([`claim::settle`]); this adds what every settlement
//! does in its transaction: its event (EVT-1) and what it wakes.

use crate::domain::bundle;
use crate::domain::change::{Change, Changes};
use crate::domain::claim::{self, Settled};
use crate::domain::engine::Engine;
use crate::error::{Error, Result};
use crate::rules::vocabulary::CloseReason;
use crate::store::{AnyConnection, Timestamp};

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
            changes.push(Change::Resolved {
                pending_id: pending_id.to_owned(),
                status,
                response,
            });
            Ok(true)
        }
    }
}
