//! Keeping the database in shape: retention (REL-8) and the deadlines'
//! sweep (EXP-4, NUDGE-2). Host operations.

use std::time::Duration;

use crate::domain::deadline::Swept;
use crate::error::Result;

use crate::handle::clarion::Clarion;

impl Clarion {
    /// REL-8: deletes, in batches, bundles that stopped being active more
    /// than `older_than` ago — resolved and acknowledged, expired, or
    /// superseded — with their rows; never an active bundle or an
    /// undelivered resolution. Events appended more than `older_than` ago
    /// go too, and the highest position deleted is kept (EVT-3). Returns
    /// how many bundles it deleted.
    pub fn prune(&self, older_than: Duration) -> Result<u64> {
        self.engine.prune(older_than)
    }

    /// EXP-4, NUDGE-2: settles up to `limit` due bundles (default 100,
    /// clamped to 1..1,000) in deadline order, then `pending_id`, each with
    /// its deadline's outcome in a settlement of its own; then takes the
    /// due reminders and escalations of up to `limit` bundles, each step
    /// once. Returns how many it settled and how many steps it took. What
    /// [`Builder::sweep_deadlines`](crate::Builder::sweep_deadlines) runs;
    /// safe from several processes at once.
    pub fn expire_due(&self, limit: Option<i64>) -> Result<Swept> {
        self.engine.expire_due(limit)
    }
}
