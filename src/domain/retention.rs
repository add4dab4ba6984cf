//! REL-8: `prune` deletes, in batches, what stopped mattering before a
//! cutoff: bundles no longer active (with their rows and attachments, by
//! cascade) and heartbeat rows of handles long gone. Later features extend
//! it to what they store: events (EVT-3), the ledger later.

use std::time::Duration;

use diesel::prelude::*;

use crate::domain::engine::Engine;
use crate::error::Result;
use crate::rules::retention::{prunable, prunable_batch};
use crate::store::schema::{bundles, handles};

/// Bundles deleted per transaction, so a large prune never holds the write
/// lock (or many row locks) for long.
const BATCH: i64 = 500;

impl Engine {
    /// REL-8: deletes what stopped being active more than `older_than` ago;
    /// returns how many bundles it deleted. Never an active bundle, never an
    /// undelivered resolution.
    pub(crate) fn prune(&self, older_than: Duration) -> Result<u64> {
        let age = i64::try_from(older_than.as_micros()).unwrap_or(i64::MAX);
        let cutoff = self.now().as_micros().saturating_sub(age);
        let mut pruned = 0;
        loop {
            let deleted = self.change(|conn, _| {
                let ids: Vec<String> = prunable_batch(cutoff, BATCH).load(conn)?;
                if ids.is_empty() {
                    return Ok(0);
                }
                // Checked again in the delete: a bundle that became active
                // or undelivered meanwhile stays.
                Ok(diesel::delete(
                    bundles::table
                        .filter(bundles::pending_id.eq_any(&ids))
                        .filter(prunable(cutoff)),
                )
                .execute(conn)?)
            })?;
            pruned += deleted as u64;
            if deleted == 0 {
                break;
            }
        }
        // EVT-3, HOOK-5, MAIL-1a: events appended before the cutoff, but
        // none an enabled or failing webhook has yet to deliver, nor any
        // after the mail cursor while mail ran within its give-up time.
        let hooks = crate::domain::webhooks::retained_from(self)?;
        let mail = crate::domain::mail::retained_from(self)?;
        let keep_after = match (hooks, mail) {
            (Some(hooks), Some(mail)) => Some(hooks.min(mail)),
            (hooks, mail) => hooks.or(mail),
        };
        self.prune_events(cutoff, keep_after, BATCH)?;
        // REL-8, AUD-2: ledger entries recorded before the cutoff, whether
        // or not their bundle is still there.
        while self.write(|conn| crate::domain::attempts::prune_attempts(conn, cutoff, BATCH))? > 0 {
        }
        // REL-8, LINK-3: link uses whose POSTs have ended (whatever the
        // cutoff: a use matters only while its link could be used), and
        // keys retired more than 7 days ago.
        let now = self.now().as_micros();
        self.write(|conn| crate::domain::links::prune(conn, now))?;
        // Heartbeats that lapsed before the cutoff: their attachments
        // count as lapsed whether the row is there or not.
        self.change(|conn, _| {
            diesel::delete(handles::table.filter(handles::alive_until.lt(cutoff))).execute(conn)?;
            Ok(())
        })?;
        Ok(pruned)
    }
}
