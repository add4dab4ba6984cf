//! The agent side, through the host: asking, the agent's waits, and the
//! outbox of answers for agents that went away (DEL-3..5).

use std::time::Duration;

use crate::domain::engine::waiters::Wake;

use crate::domain::ask::{AskRequest, Asked};
use crate::domain::delivery::wait::PendingWait;

use crate::domain::resume::{Delivery, DeliveryReport};

use crate::domain::views::{Resolved, WaitOutcome};

use crate::doors::operations::Operation;
use crate::error::Result;

use crate::rules::principal::Principal;

use crate::handle::clarion::Clarion;

impl Clarion {
    /// ASK-1..5: creates a bundle in the session's current turn.
    pub fn ask(&self, request: &AskRequest) -> Result<Asked> {
        self.engine.ask(request)
    }

    /// WAIT-1..4: blocks until the bundle is resolved or stops being
    /// active, or `timeout` passes (capped at ten minutes). A received
    /// resolution is acknowledged (WAIT-2); on `TimedOut`, with no other
    /// waiter of this handle left, the bundle is detached (LIFE-5).
    pub fn wait(&self, pending_id: &str, timeout: Duration) -> Result<WaitOutcome> {
        self.engine.wait(pending_id, timeout, true)
    }

    /// [`Clarion::wait`] whose `TimedOut` leaves the bundle attached
    /// (WIRE-5's `detach_on_timeout: false`): for a caller that waits in
    /// slices and detaches only when its own timeout ends, with a last
    /// [`Clarion::wait`] of zero (WAIT-1b, PY-3).
    pub fn wait_attached(&self, pending_id: &str, timeout: Duration) -> Result<WaitOutcome> {
        self.engine.wait(pending_id, timeout, false)
    }

    /// [`Clarion::wait`] without a thread (HTTP-5): starts the agent-side
    /// wait — the bundle is attached to this handle again (WAIT-1, DEL-3)
    /// and counted as waited on — and returns it for the caller to drive
    /// (see [`PendingWait`]); `wake` is called whenever it must be checked
    /// again. Reads and writes the database briefly: an async caller runs
    /// it on a blocking pool. An unknown bundle is not-found.
    pub fn begin_wait(
        &self,
        pending_id: &str,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<PendingWait<WaitOutcome>> {
        let waiter = self.engine.begin_wait(pending_id, Some(Wake::new(wake)))?;
        Ok(PendingWait::new(self.engine.clone(), waiter))
    }

    /// [`Clarion::wait_bundle`] without a thread (HTTP-5): authorizes and
    /// starts the wait (an invisible bundle is not-found at once) and
    /// returns it for the caller to drive (see [`PendingWait`]); `wake` is
    /// called whenever it must be checked again. Reads the database
    /// briefly: an async caller runs it on a blocking pool.
    pub fn begin_wait_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<PendingWait<Resolved>> {
        let waiter = self.engine.begin_wait_bundle(
            &Operation::WaitBundle.admit(principal, self.channel)?,
            pending_id,
            Some(Wake::new(wake)),
        )?;
        Ok(PendingWait::new(self.engine.clone(), waiter))
    }

    // ---- the outbox (DEL-3..5) ----

    /// LIFE-8: the outbox, oldest resolution first; `limit` defaults to 50,
    /// below 1 means 50, above 200 is clamped.
    pub fn pending_deliveries(&self, limit: Option<i64>) -> Result<Vec<Delivery>> {
        self.engine.pending_deliveries(limit)
    }

    /// LIFE-8: removes an entry from the outbox; idempotent.
    pub fn ack_delivery(&self, pending_id: &str) -> Result<()> {
        self.engine.ack_delivery(pending_id)
    }

    /// DEL-4, LIFE-9: offers every outbox entry to the dispatcher once.
    /// Call it at start-up, and whenever a retry is due.
    pub fn deliver_pending(&self) -> Result<DeliveryReport> {
        self.engine.deliver_pending()
    }
}
