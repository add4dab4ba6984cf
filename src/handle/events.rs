//! The event log (EVT-2, HTTP-6) and the webhooks that follow it
//! (HOOK-1..6).

use std::sync::Arc;
use std::time::Duration;

use crate::domain::engine::signal::EventSubscription;
use crate::domain::events::EventPage;

#[cfg(feature = "webhooks")]
use crate::domain::webhooks::worker::{TestDelivery, WebhookOptions};
use crate::domain::webhooks::{WebhookAdd, WebhookFigures, WebhookSecret, WebhookView};

use crate::doors::operations::Operation;
use crate::error::Result;

use crate::rules::principal::Principal;

use crate::handle::clarion::Clarion;

impl Clarion {
    /// EVT-2: the events after position `after` (`""`: from the oldest
    /// kept) that `principal` may see now, oldest first. At most `limit`
    /// events are examined (default 100, clamped at 1,000); `next` is the
    /// last one examined, visible or not, so a reader that sees none of
    /// them still advances. `reset` says events after `after` were pruned
    /// (EVT-3), or that `after` is a position this log never gave out
    /// (EVT-4: a restored database, another server; `next` is then the
    /// head): list again.
    pub fn events_after(
        &self,
        principal: &Principal,
        after: &str,
        limit: Option<i64>,
    ) -> Result<EventPage> {
        self.engine.events_after(
            &Operation::EventsAfter.admit(principal, self.channel)?,
            after,
            limit,
        )
    }

    /// HTTP-6: the position of the newest event a reader could read now
    /// (`""` for an empty log): where a live stream with no position of
    /// its own starts.
    pub fn events_head(&self, principal: &Principal) -> Result<String> {
        self.engine
            .events_head(&Operation::EventsAfter.admit(principal, self.channel)?)
    }

    /// HTTP-6: calls `wake` whenever events may have been appended — by
    /// this handle, after its commit, or by another handle or process, as
    /// this handle's watcher hears it (WAIT-3a). `wake` runs on the thread
    /// that noticed and must return at once (signal a channel, a condvar,
    /// an async notifier); the reader then reads with
    /// [`Clarion::events_after`] from its own position. Dropping the
    /// returned subscription stops the calls.
    pub fn subscribe_events(&self, wake: impl Fn() + Send + Sync + 'static) -> EventSubscription {
        self.engine.subscribe_events(Arc::new(wake))
    }

    /// HOOK-1: a new endpoint, enabled, receiving the events appended
    /// from now on; its secret is returned once.
    pub fn webhook_add(&self, add: &WebhookAdd) -> Result<WebhookSecret> {
        self.engine.webhook_add(add)
    }

    /// HOOK-6: every endpoint, oldest first, never its secret.
    pub fn webhook_list(&self) -> Result<Vec<WebhookView>> {
        self.engine.webhook_list()
    }

    /// HOOK-1, HOOK-5: delivered to again, from its cursor, or from the
    /// head if events after its cursor were pruned.
    pub fn webhook_enable(&self, id: &str) -> Result<()> {
        self.engine.webhook_enable(id)
    }

    /// HOOK-1, HOOK-5: no longer delivered to; its events are not kept.
    pub fn webhook_disable(&self, id: &str) -> Result<()> {
        self.engine.webhook_disable(id)
    }

    /// HOOK-1: removed, with its secret.
    pub fn webhook_remove(&self, id: &str) -> Result<()> {
        self.engine.webhook_remove(id)
    }

    /// HOOK-3: a new secret; for `overlap` the old one signs too.
    pub fn webhook_rotate(&self, id: &str, overlap: Duration) -> Result<WebhookSecret> {
        self.engine.webhook_rotate(id, overlap)
    }

    /// HOOK-6: each endpoint's delivered and failed counts and backlog.
    pub fn webhook_figures(&self) -> Result<Vec<WebhookFigures>> {
        self.engine.webhook_figures()
    }

    /// HOOK-4: delivers the webhooks on a thread of this handle until it
    /// is closed (a second call leaves the first worker running). Several
    /// handles and processes may run one each: an endpoint is delivered by
    /// one at a time.
    #[cfg(feature = "webhooks")]
    pub fn start_webhooks(&self, options: WebhookOptions) -> Result<()> {
        self.engine.start_webhooks(options).map_err(|error| {
            crate::error::Error::Internal(format!("could not start the webhook worker: {error}"))
        })
    }

    /// HOOK-3: sends endpoint `id` one signed `webhook.test` event now,
    /// outside its cursor; what it got.
    #[cfg(feature = "webhooks")]
    pub fn webhook_test(&self, id: &str, timeout: Duration) -> Result<TestDelivery> {
        crate::domain::webhooks::worker::send_test(&self.engine, id, timeout)
    }
}
