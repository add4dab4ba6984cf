//! The resume dispatcher's worker (DEL-3, DEL-4): one thread per handle
//! that calls the host's [`ResumeDispatcher`], one entry at a time, and
//! acknowledges or releases each entry itself. A winning resolve only
//! queues its entry, so dispatch never delays the winner's reply; and a
//! dispatcher that hangs holds this one thread, never a thread per entry.
//! The thread ends when its handle is dropped.

use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;

use crate::domain::resume::{Delivery, DispatchError, ResumeDispatcher};
use crate::error::{Error, Result};
use crate::store::schema::bundles;
use crate::store::{AnyConnection, DbPool};

/// One entry for the worker, and where to report its outcome if someone
/// waits for it.
struct Job {
    delivery: Delivery,
    reply: Option<SyncSender<Result<(), DispatchError>>>,
}

/// The handle's side of the worker.
pub(crate) struct DispatchWorker {
    jobs: Sender<Job>,
    /// How long a waiting caller waits for one dispatch (DEL-4).
    pub(crate) timeout: Duration,
}

/// How an offered entry ended, for a caller that waited.
pub(crate) enum Offered {
    /// The dispatcher took it; it is acknowledged.
    Delivered,
    /// The dispatcher failed (its lease is released) or did not answer in
    /// time (its lease runs out); the entry stays in the outbox.
    Failed,
}

impl DispatchWorker {
    /// Starts the worker thread.
    pub(crate) fn start(
        dispatcher: Arc<dyn ResumeDispatcher>,
        pool: DbPool,
        timeout: Duration,
    ) -> std::io::Result<DispatchWorker> {
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("clarion-dispatch".to_owned())
            .spawn(move || work(dispatcher.as_ref(), &pool, queue))?;
        Ok(DispatchWorker { jobs, timeout })
    }

    /// Queues an entry without waiting (a winner's reply never waits).
    pub(crate) fn queue(&self, delivery: Delivery) {
        let _ = self.jobs.send(Job {
            delivery,
            reply: None,
        });
    }

    /// Offers an entry and waits for its outcome, at most the timeout.
    pub(crate) fn offer(&self, delivery: Delivery) -> Offered {
        let pending_id = delivery.pending_id.clone();
        let (reply, outcome) = mpsc::sync_channel(1);
        let sent = self.jobs.send(Job {
            delivery,
            reply: Some(reply),
        });
        if sent.is_err() {
            return Offered::Failed;
        }
        match outcome.recv_timeout(self.timeout) {
            Ok(Ok(())) => Offered::Delivered,
            Ok(Err(_)) => Offered::Failed,
            Err(_) => {
                // The dispatcher may still be running: its lease stays
                // until it expires, so nobody else dispatches meanwhile.
                tracing::warn!(%pending_id, "resume dispatch timed out; the entry stays in the outbox");
                Offered::Failed
            }
        }
    }
}

fn work(dispatcher: &dyn ResumeDispatcher, pool: &DbPool, queue: Receiver<Job>) {
    for job in queue {
        let pending_id = job.delivery.pending_id.as_str();
        let outcome = dispatcher.resume(&job.delivery);
        if let Err(message) = &outcome {
            tracing::warn!(pending_id, %message, "resume dispatch failed; the entry stays in the outbox");
        }
        let settled = match &outcome {
            Ok(()) => run(pool, |conn| acknowledge(conn, pending_id)),
            Err(_) => run(pool, |conn| release_lease(conn, pending_id)),
        };
        if let Err(error) = settled {
            tracing::warn!(pending_id, %error, "could not record a dispatch's outcome; its lease will run out");
        }
        if let Some(reply) = job.reply {
            let _ = reply.send(outcome);
        }
    }
}

fn run(pool: &DbPool, body: impl FnOnce(&mut AnyConnection) -> Result<()>) -> Result<()> {
    pool.get().map_err(Error::from)?.run(body)
}

/// LIFE-8: the entry leaves the outbox (and its lease with it). Only a
/// resolved bundle has anything to acknowledge.
pub(crate) fn acknowledge(conn: &mut AnyConnection, pending_id: &str) -> Result<()> {
    diesel::update(
        bundles::table
            .find(pending_id)
            .filter(bundles::responded_at.is_not_null()),
    )
    .set((
        bundles::response_delivery_pending.eq(false),
        bundles::delivery_lease_until.eq(None::<i64>),
    ))
    .execute(conn)?;
    Ok(())
}

/// DEL-4: a failed dispatch gives its lease back at once, so a retry need
/// not wait for it to run out.
fn release_lease(conn: &mut AnyConnection, pending_id: &str) -> Result<()> {
    diesel::update(bundles::table.find(pending_id))
        .set(bundles::delivery_lease_until.eq(None::<i64>))
        .execute(conn)?;
    Ok(())
}
