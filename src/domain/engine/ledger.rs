//! The attempt ledger's writing side (AUD-1, AUD-2): one entry, and the
//! one appender per handle that writes the entries written after the
//! outcome — a loser's, a `409`'s, an invalid attempt's — in batches,
//! outside any claim transaction. A winner's entry and a deadline's are
//! inserted in their own transaction instead (see [`insert`]).
//!
//! The appender writes a batch when its oldest entry is [`WITHIN`] old or
//! it holds [`BATCH`] entries, when a reader asks it to flush, and on
//! close (REL-7). A crash loses at most that window of entries. A failed
//! write is logged and dropped: it never changes a caller's result.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use diesel::prelude::*;

use crate::error::Result;
use crate::store::failpoints::{points, Failpoints};
use crate::store::schema::attempts;
use crate::store::{write_transaction, AnyConnection, DbPool};

/// AUD-2: how long an entry may wait in the appender.
pub(crate) const WITHIN: Duration = Duration::from_millis(100);
/// At most this many entries in one insert.
const BATCH: usize = 500;
/// How long a reader waits for the appender to flush before it reads
/// anyway (a stuck database; the reader then sees what is committed).
const FLUSH_WAIT: Duration = Duration::from_secs(10);

/// One ledger entry as stored (AUD-1).
#[derive(Debug, Clone, PartialEq, Eq, Insertable)]
#[diesel(table_name = attempts)]
pub(crate) struct NewAttempt {
    pub pending_id: String,
    pub at: i64,
    pub principal_kind: &'static str,
    pub user_id: String,
    pub agent_id: String,
    pub channel: &'static str,
    pub outcome: &'static str,
    pub digest: String,
}

/// An entry's columns after its id, in [`NewAttempt`]'s order: what the
/// claim's PostgreSQL statement inserts and a reader selects.
#[diesel::dsl::auto_type]
pub(crate) fn entry_columns() -> _ {
    (
        attempts::pending_id,
        attempts::at,
        attempts::principal_kind,
        attempts::user_id,
        attempts::agent_id,
        attempts::channel,
        attempts::outcome,
        attempts::digest,
    )
}

/// AUD-2: writes entries in the caller's transaction (a winner's, a
/// deadline's), or the appender's batch.
pub(crate) fn insert(conn: &mut AnyConnection, entries: &[NewAttempt]) -> Result<()> {
    match conn {
        // In process: one cached statement per entry costs no round trip.
        AnyConnection::Sqlite(conn) => {
            for entry in entries {
                diesel::insert_into(attempts::table)
                    .values(entry)
                    .execute(conn)?;
            }
        }
        // One multi-row statement: one round trip for a whole batch.
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => {
            diesel::insert_into(attempts::table)
                .values(entries)
                .execute(conn)?;
        }
    }
    Ok(())
}

enum Message {
    Entry(NewAttempt),
    /// Write everything queued, then answer.
    Flush(Sender<()>),
}

/// The handle's appender thread and its queue.
pub(crate) struct Ledger {
    queue: Mutex<Option<Sender<Message>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Ledger {
    /// Starts the appender on `pool`.
    pub(crate) fn start(pool: DbPool, failpoints: Arc<Failpoints>) -> std::io::Result<Ledger> {
        let (queue, received) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("clarion-ledger".to_owned())
            .spawn(move || append(&pool, &failpoints, &received))?;
        Ok(Ledger {
            queue: Mutex::new(Some(queue)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues an entry; it is written within [`WITHIN`]. After close it
    /// is logged and dropped.
    pub(crate) fn append(&self, entry: NewAttempt) {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let (pending_id, outcome) = (entry.pending_id.clone(), entry.outcome);
        let sent = queue
            .as_ref()
            .is_some_and(|queue| queue.send(Message::Entry(entry)).is_ok());
        if !sent {
            tracing::warn!(%pending_id, outcome,
                "the attempt ledger is closed; an attempt was not recorded");
        }
    }

    /// Waits until every entry queued before this call is written (or
    /// dropped by a failure): a handle reads its own entries (AUD-3).
    pub(crate) fn flush(&self) {
        let (done, written) = mpsc::channel();
        let sent = {
            let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue
                .as_ref()
                .is_some_and(|queue| queue.send(Message::Flush(done)).is_ok())
        };
        if sent {
            let _ = written.recv_timeout(FLUSH_WAIT);
        }
    }

    /// REL-7: writes what is queued and ends the appender.
    pub(crate) fn close(&self) {
        drop(self.queue.lock().unwrap_or_else(|p| p.into_inner()).take());
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        self.close();
    }
}

/// The appender's loop: gathers entries until the oldest is [`WITHIN`]
/// old, [`BATCH`] are queued, a flush is asked or the queue closes.
fn append(pool: &DbPool, failpoints: &Failpoints, received: &Receiver<Message>) {
    let mut batch: Vec<NewAttempt> = Vec::new();
    let mut flushed: Vec<Sender<()>> = Vec::new();
    let mut oldest = Instant::now();
    let mut open = true;
    while open {
        let message = if batch.is_empty() {
            received.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            received.recv_timeout(WITHIN.saturating_sub(oldest.elapsed()))
        };
        match message {
            Ok(Message::Entry(entry)) => {
                if batch.is_empty() {
                    oldest = Instant::now();
                }
                batch.push(entry);
                if batch.len() < BATCH && oldest.elapsed() < WITHIN {
                    continue;
                }
            }
            Ok(Message::Flush(done)) => flushed.push(done),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => open = false,
        }
        write(pool, failpoints, &mut batch);
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Writes the batch atomically; a failure is logged and the entries are
/// dropped (AUD-2). On SQLite in one transaction (one statement per entry,
/// one commit); on PostgreSQL the batch is one multi-row statement, atomic
/// by itself, so it runs alone: one round trip instead of three (#41).
fn write(pool: &DbPool, failpoints: &Failpoints, batch: &mut Vec<NewAttempt>) {
    if batch.is_empty() {
        return;
    }
    let written = failpoints
        .check(points::LEDGER_APPEND)
        .map_err(crate::error::Error::from)
        .and_then(|()| {
            let mut conn = pool.get()?;
            conn.run(|conn| match conn {
                AnyConnection::Sqlite(_) => write_transaction(conn, |conn| insert(conn, batch)),
                #[cfg(feature = "postgres")]
                AnyConnection::Postgres(_) => insert(conn, batch),
            })
        });
    if let Err(error) = written {
        tracing::error!(%error, entries = batch.len(), "attempts were not recorded");
    }
    batch.clear();
}
