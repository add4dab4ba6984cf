//! What tests and benchmarks reach below the public API (feature
//! `test-hooks`): failpoints, raw rows, bulk worlds and the typed queries.

mod fixtures;
pub mod sql_catalog;

pub use crate::domain::claim::guard::{active_in_the_write, RowSlots};
pub use crate::domain::claim::statements::{claim_rows_statement, RowWrite};
pub use crate::domain::deadline::{due_batch_query, next_deadline_query};
pub use crate::domain::history::{
    granted_settled_page_query, owner_settled_page_query, settled_page_query,
    workspace_settled_page_query, SettledFilter,
};
pub use crate::domain::listing::{
    granted_page_query, granted_summary_query, member_summary_query, owner_page_query,
    owner_summary_query, page_query, pending_actions_query, visible_tasks_query,
    workspace_page_query, ListFilter,
};
pub use crate::domain::steps::{next_step_query, steps_due_query};
pub use crate::rules::activeness::{active_bundle_ids, due_bundle_ids};
pub use crate::rules::visibility::Scope;
pub use crate::store::failpoints::{points, FailAction, Gate};
pub use crate::store::schema;
pub use crate::store::{returning, AnyConnection};
pub use crate::store::{Counts, StatementCounter, UNCOUNTED};
pub use crate::test_hooks::fixtures::WorldSpec;

use crate::error::Result;
use crate::handle::Clarion;

pub use crate::test_hooks::fixtures::Drift;

/// ACT-4, OPS-3a: the bundles whose stored hint or visibility keys
/// differ from what the library's rules derive (none, normally).
/// EXP-4, REL-7: whether the handle's deadline sweeper thread runs.
pub fn sweeper_running(clarion: &Clarion) -> bool {
    clarion
        .engine
        .deadline_sweeper
        .get()
        .is_some_and(|sweeper| sweeper.is_running())
}

/// HOOK-4, REL-7: whether the handle's webhook worker thread runs.
#[cfg(feature = "webhooks")]
pub fn webhooks_running(clarion: &Clarion) -> bool {
    clarion
        .engine
        .webhook_worker
        .get()
        .is_some_and(|worker| worker.is_running())
}

pub fn drift(clarion: &Clarion) -> Result<Vec<Drift>> {
    crate::test_hooks::fixtures::drift(&clarion.engine)
}

/// OPS-3a: recomputes one bundle's visibility keys (after a test wrote
/// its row directly).
pub fn refresh_keys_of_bundle(conn: &mut AnyConnection, pending_id: &str) {
    use diesel::RunQueryDsl;
    crate::rules::visibility::refresh_keys_of_bundle(pending_id)
        .execute(conn)
        .expect("refresh the keys of a test row");
}

/// PPL-6: stores an escalation grant, as the reminders' `escalate` will at
/// ask: `user_id` sees the bundle from `visible_from` on, by the handle's
/// clock. Tests write grants past and future with it.
pub fn grant_escalation(
    clarion: &Clarion,
    pending_id: &str,
    user_id: &str,
    visible_from: crate::store::Timestamp,
) -> Result<()> {
    use crate::store::schema::escalation_grants;
    use diesel::prelude::*;
    clarion.engine.write(|conn| {
        diesel::insert_into(escalation_grants::table)
            .values((
                escalation_grants::pending_id.eq(pending_id),
                escalation_grants::user_id.eq(user_id),
                escalation_grants::visible_from.eq(visible_from.as_micros()),
            ))
            .execute(conn)?;
        Ok(())
    })
}

/// #41: rows written, as the database itself counts them (see
/// [`Clarion::rows_written`]); the difference of two readings is what was
/// written between them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowsWritten {
    /// Rows inserted, updated and deleted.
    pub total: u64,
    /// PostgreSQL: rows inserted (`n_tup_ins`).
    pub inserted: Option<u64>,
    /// PostgreSQL: rows updated (`n_tup_upd`), heap-only updates included.
    pub updated: Option<u64>,
    /// PostgreSQL: heap-only updates (`n_tup_hot_upd`, part of `updated`).
    pub hot_updated: Option<u64>,
    /// PostgreSQL: rows deleted (`n_tup_del`).
    pub deleted: Option<u64>,
    /// Whether the count covers every connection (PostgreSQL: the
    /// schema's tables) rather than the handle's one connection (SQLite).
    pub every_connection: bool,
}

impl std::ops::Sub for RowsWritten {
    type Output = RowsWritten;

    fn sub(self, earlier: RowsWritten) -> RowsWritten {
        let minus = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a - b);
        RowsWritten {
            total: self.total - earlier.total,
            inserted: minus(self.inserted, earlier.inserted),
            updated: minus(self.updated, earlier.updated),
            hot_updated: minus(self.hot_updated, earlier.hot_updated),
            deleted: minus(self.deleted, earlier.deleted),
            every_connection: self.every_connection,
        }
    }
}

#[derive(diesel::QueryableByName)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // SQLite reads one
struct Tuples {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    inserted: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    updated: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    hot_updated: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    deleted: i64,
}

/// See [`Clarion::watch_counts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchCounts {
    /// Ticks that made their one check.
    pub checks: u64,
    /// Statements that re-read every waited-on bundle at once.
    pub rechecks: u64,
    /// Reads of one bundle by a waiter.
    pub reads: u64,
}

/// Generates a bulk world (see [`WorldSpec`]).
pub fn populate(clarion: &Clarion, spec: &WorldSpec) -> Result<()> {
    crate::test_hooks::fixtures::populate(&clarion.engine, spec)
}

impl Clarion {
    /// Arms a failpoint on this handle.
    pub fn arm_failpoint(&self, name: &'static str, action: FailAction) {
        self.engine.failpoints.arm(name, action);
    }

    /// Disarms a failpoint on this handle.
    pub fn disarm_failpoint(&self, name: &'static str) {
        self.engine.failpoints.disarm(name);
    }

    /// WAIT-3a, OPS-4: what this handle's watcher did so far: ticks that
    /// made their one check, statements re-reading every waited-on
    /// bundle, and single-bundle reads by waiters.
    pub fn watch_counts(&self) -> WatchCounts {
        use std::sync::atomic::Ordering::SeqCst;
        let stats = &self.engine.watch.stats;
        WatchCounts {
            checks: stats.checks.load(SeqCst),
            rechecks: stats.rechecks.load(SeqCst),
            reads: stats.reads.load(SeqCst),
        }
    }

    /// The server pid of this handle's listening connection
    /// (PostgreSQL), if it listens now.
    pub fn listener_pid(&self) -> Option<i64> {
        let pid = self
            .engine
            .watch
            .stats
            .listener_pid
            .load(std::sync::atomic::Ordering::SeqCst);
        (pid != 0).then_some(pid)
    }

    /// HTTP-14, HTTP-17: how many reads of the event log
    /// (`events_after`) this handle made so far, by any door.
    pub fn event_reads(&self) -> u64 {
        self.engine.event_signal.reads()
    }

    /// Keeps the watcher from (re)listening, so the poll alone carries
    /// the waiters while it is set.
    pub fn block_listening(&self, blocked: bool) {
        self.engine
            .watch
            .stats
            .block_listening
            .store(blocked, std::sync::atomic::Ordering::SeqCst);
    }

    /// #41: rows written so far, read without being counted by a
    /// [`StatementCounter`] (its statements start with [`UNCOUNTED`]).
    ///
    /// - SQLite: `total_changes()` of a pooled connection — the rows that
    ///   connection's `INSERT`, `UPDATE` and `DELETE` statements changed
    ///   since it opened (triggers' and foreign-key actions' included).
    ///   Meaningful for a handle opened with `pool_size(1)`, whose one
    ///   connection runs everything the handle does.
    /// - PostgreSQL: the sums of `n_tup_ins`, `n_tup_upd`
    ///   (`n_tup_hot_upd`) and `n_tup_del` over the tables of the
    ///   connection's schema in `pg_stat_user_tables`, written by every
    ///   connection. A backend hands its counts to the statistics when it
    ///   goes idle, at most once a second unless forced: this first runs
    ///   `pg_stat_force_next_flush()` on the pooled connection, so with
    ///   `pool_size(1)` the handle's own writes are all counted; another
    ///   handle's are once it read this too (or a second later).
    pub fn rows_written(&self) -> Result<RowsWritten> {
        use diesel::RunQueryDsl;
        let mut conn = self.engine.conn()?;
        let read = match &mut **conn {
            AnyConnection::Sqlite(conn) => {
                let tuples: Tuples = diesel::sql_query(format!(
                    "{UNCOUNTED} SELECT total_changes() AS inserted, 0 AS updated, \
                     0 AS hot_updated, 0 AS deleted"
                ))
                .get_result(conn)
                .map_err(crate::store::DbError::from)?;
                RowsWritten {
                    total: tuples.inserted as u64,
                    every_connection: false,
                    ..RowsWritten::default()
                }
            }
            #[cfg(feature = "postgres")]
            AnyConnection::Postgres(conn) => {
                use diesel::connection::SimpleConnection;
                conn.batch_execute(&format!("{UNCOUNTED} SELECT pg_stat_force_next_flush()"))
                    .map_err(crate::store::DbError::from)?;
                let tuples: Tuples = diesel::sql_query(format!(
                    "{UNCOUNTED} SELECT COALESCE(sum(n_tup_ins), 0)::bigint AS inserted, \
                     COALESCE(sum(n_tup_upd), 0)::bigint AS updated, \
                     COALESCE(sum(n_tup_hot_upd), 0)::bigint AS hot_updated, \
                     COALESCE(sum(n_tup_del), 0)::bigint AS deleted \
                     FROM pg_stat_user_tables WHERE schemaname = current_schema()"
                ))
                .get_result(conn)
                .map_err(crate::store::DbError::from)?;
                let [inserted, updated, hot_updated, deleted] = [
                    tuples.inserted,
                    tuples.updated,
                    tuples.hot_updated,
                    tuples.deleted,
                ]
                .map(|n| n as u64);
                RowsWritten {
                    total: inserted + updated + deleted,
                    inserted: Some(inserted),
                    updated: Some(updated),
                    hot_updated: Some(hot_updated),
                    deleted: Some(deleted),
                    every_connection: true,
                }
            }
        };
        Ok(read)
    }

    /// AUD-2: waits until the ledger's appender wrote every entry queued
    /// so far (a loser's entry is written after its outcome, in a batch).
    pub fn flush_ledger(&self) {
        self.engine.ledger.flush();
    }

    /// Runs `body` on a raw pooled connection, for tests that write rows
    /// clarion itself never would (DM-1).
    pub fn with_raw_connection<T>(&self, body: impl FnOnce(&mut AnyConnection) -> T) -> Result<T> {
        let mut conn = self.engine.conn()?;
        Ok(body(&mut conn))
    }
}

/// LINK-3: what `POST /api/v1/link/respond` does with `token`; `None`
/// when the token does not verify.
pub fn link_respond(
    clarion: &Clarion,
    token: &str,
    request: &crate::domain::resolve::ResolveRequest,
) -> Result<Option<Result<crate::domain::views::Resolved>>> {
    crate::doors::link::respond(&clarion.engine, token, request)
}

/// LINK-3: what `POST /api/v1/link/cancel` does with `token`.
pub fn link_cancel(
    clarion: &Clarion,
    token: &str,
) -> Result<Option<Result<crate::domain::views::Resolved>>> {
    crate::doors::link::cancel(&clarion.engine, token)
}

/// LINK-3: `GET /api/v1/link/bundle`'s body for `token`, as JSON.
pub fn link_bundle(clarion: &Clarion, token: &str) -> Result<Option<Result<serde_json::Value>>> {
    Ok(crate::doors::link::bundle(&clarion.engine, token)?
        .map(|found| found.map(|body| crate::doors::envelope::to_json(&body))))
}

/// LINK-2: whether `/a/<token>` opens the page.
pub fn link_page_opens(clarion: &Clarion, token: &str) -> Result<bool> {
    crate::doors::link::page_opens(&clarion.engine, token)
}

/// LINK-1, LINK-4: the link derived for (event position, recipient).
pub fn derived_link(
    clarion: &Clarion,
    pending_id: &str,
    position: &str,
    at: crate::store::Timestamp,
    user_id: &str,
) -> Result<crate::domain::links::AnswerLink> {
    let engine = &clarion.engine;
    let (bundle, _) = engine
        .read(|conn| crate::domain::bundle::load_stored(conn, pending_id))?
        .ok_or(crate::error::Error::NotFound(crate::error::Entity::Bundle))?;
    engine.derived_link(&bundle, position, at, user_id)
}

/// PPL-8: whom mail and relay links about the bundle go to now.
pub fn recipients(clarion: &Clarion, pending_id: &str) -> Result<Vec<String>> {
    Ok(clarion
        .engine
        .recipients(pending_id, None)?
        .into_iter()
        .map(|recipient| recipient.user_id)
        .collect())
}
