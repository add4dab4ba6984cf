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
pub use crate::rules::activeness::{active_bundle_ids, due_bundle_ids};
pub use crate::rules::visibility::Scope;
pub use crate::store::failpoints::{points, FailAction, Gate};
pub use crate::store::schema;
pub use crate::store::StatementCounter;
pub use crate::store::{returning, AnyConnection};
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

    /// Runs `body` on a raw pooled connection, for tests that write rows
    /// clarion itself never would (DM-1).
    pub fn with_raw_connection<T>(&self, body: impl FnOnce(&mut AnyConnection) -> T) -> Result<T> {
        let mut conn = self.engine.conn()?;
        Ok(body(&mut conn))
    }
}
