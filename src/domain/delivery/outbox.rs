//! The outbox (DEL-3..5, LIFE-8, LIFE-9): reading and acknowledging
//! entries, and offering them to the host's dispatcher under an expiring
//! lease. Never touches a resolution itself (DEL-1).

use diesel::prelude::*;

use crate::domain::bundle;
use crate::domain::engine::dispatch::{acknowledge, Offered};
use crate::domain::engine::Engine;
use crate::domain::resume::{Delivery, DeliveryReport};
use crate::error::Result;
use crate::rules::limits::{check_text, page_size};
use crate::rules::outbox::{in_outbox, outbox_entries, outbox_query};
use crate::store::schema::bundles;
use crate::store::AnyConnection;

impl Engine {
    /// LIFE-8: the outbox, oldest resolution first; `limit` defaults to 50,
    /// below 1 means 50, above 200 is clamped.
    pub(crate) fn pending_deliveries(&self, limit: Option<i64>) -> Result<Vec<Delivery>> {
        let limit = page_size(limit);
        let now = self.now().as_micros();
        self.read(|conn| {
            let ids: Vec<String> = outbox_query(now, limit).load(conn)?;
            let mut deliveries = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(delivery) = load_delivery(conn, &id)? {
                    deliveries.push(delivery);
                }
            }
            Ok(deliveries)
        })
    }

    /// LIFE-8: removes an entry from the outbox. Acknowledging twice, an
    /// unknown id, or a bundle with nothing undelivered changes nothing;
    /// acknowledging an unresolved bundle does not stop its later
    /// resolution from being delivered (the claim marks it again).
    pub(crate) fn ack_delivery(&self, pending_id: &str) -> Result<()> {
        check_text("pending_id", pending_id)?;
        self.change_in_one_statement(|conn| acknowledge(conn, pending_id))
    }

    /// DEL-4, LIFE-9: offers every outbox entry to the dispatcher once.
    /// Call it at start-up, and whenever a retry is due.
    pub(crate) fn deliver_pending(&self) -> Result<DeliveryReport> {
        let mut report = DeliveryReport::default();
        if self.dispatch.is_none() {
            return Ok(report);
        }
        // Every entry, not a page: failed entries stay oldest, and a page
        // of them would hide everything behind it.
        let now = self.now().as_micros();
        let ids: Vec<String> = self.read_one(|conn| Ok(outbox_entries(now).load(conn)?))?;
        for id in ids {
            match self.dispatch_one(&id, true) {
                Ok(Dispatch::Delivered) => report.delivered += 1,
                Ok(Dispatch::Failed) => report.failed += 1,
                Ok(Dispatch::Leased | Dispatch::NotDue | Dispatch::Queued) => report.skipped += 1,
                Err(error) => {
                    tracing::warn!(pending_id = %id, %error, "dispatch attempt failed");
                    report.failed += 1;
                }
            }
        }
        Ok(report)
    }

    /// Offers one outbox entry to the dispatcher under an expiring lease, so
    /// two processes never dispatch it at once (DEL-4). With `wait`, the
    /// caller waits for the outcome (at most the dispatch timeout);
    /// without, the entry is only queued for the handle's dispatch worker.
    /// Never touches the resolution itself.
    pub(crate) fn dispatch_one(&self, pending_id: &str, wait: bool) -> Result<Dispatch> {
        let Some(worker) = &self.dispatch else {
            return Ok(Dispatch::NotDue);
        };
        let now = self.now().as_micros();
        // Twice the timeout, saturating: a huge timeout means a long lease,
        // never an overflow.
        let timeout = i64::try_from(worker.timeout.as_micros()).unwrap_or(i64::MAX);
        let lease_until = now.saturating_add(timeout.saturating_mul(2));
        let leased = self.write(|conn| {
            Ok(diesel::update(
                bundles::table
                    .find(pending_id)
                    .filter(in_outbox(now))
                    .filter(
                        bundles::delivery_lease_until
                            .is_null()
                            .or(bundles::delivery_lease_until.lt(now)),
                    ),
            )
            .set(bundles::delivery_lease_until.eq(lease_until))
            .execute(conn)?)
        })?;
        if leased == 0 {
            return Ok(Dispatch::Leased);
        }
        let Some(delivery) = self.read(|conn| load_delivery(conn, pending_id))? else {
            return Ok(Dispatch::NotDue);
        };
        if !wait {
            worker.queue(delivery);
            return Ok(Dispatch::Queued);
        }
        Ok(match worker.offer(delivery) {
            Offered::Delivered => Dispatch::Delivered,
            Offered::Failed => Dispatch::Failed,
        })
    }
}

/// What one dispatch attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dispatch {
    Delivered,
    Failed,
    /// Handed to the worker without waiting for it.
    Queued,
    Leased,
    NotDue,
}

fn load_delivery(conn: &mut AnyConnection, pending_id: &str) -> Result<Option<Delivery>> {
    let Some((record, rows)) = bundle::load_stored(conn, pending_id)? else {
        return Ok(None);
    };
    let Some((status, response)) = bundle::stored_response(&record, &rows) else {
        return Ok(None);
    };
    // Only the questions of the view are delivered; its age and names
    // are irrelevant.
    let view = bundle::bundle_view(
        &record,
        &rows,
        Default::default(),
        None,
        crate::store::Timestamp::from_micros(record.created_at),
    );
    Ok(Some(Delivery {
        pending_id: record.pending_id,
        task_id: view.task_id,
        session_id: view.session_id,
        status,
        questions: view.questions,
        response,
    }))
}
