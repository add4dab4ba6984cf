//! Bulk worlds for the plan tests and the benchmarks (feature `test-hooks`).
//! Rows are generated inside the database with one portable recursive CTE
//! per table, so a million bundles take seconds, not minutes. This is test
//! support, not part of the product: it is the one place outside pragmas and
//! locks that writes raw SQL.

#![allow(missing_docs)] // test support

use diesel::connection::SimpleConnection;

use diesel::prelude::*;

use crate::domain::engine::Engine;
use crate::error::Result;
use crate::rules::{activeness, visibility};
use crate::store::schema::bundles;

/// The shape of a generated world.
#[derive(Debug, Clone, Copy)]
pub struct WorldSpec {
    pub bundles: u64,
    pub sessions: u64,
    /// Workspaces are owned by `user0` … `user<owners-1>`, round robin.
    pub owners: u64,
    /// One bundle in `active_every` is active; of the rest, half are
    /// answered (at `created_at + 500` µs, by `user0`: the history of
    /// LIST-12) and half superseded by a newer turn.
    pub active_every: u64,
    /// `created_at` of bundle `i` is `base_micros + i * 1000`; bundle `i`
    /// belongs to session `(i / active_every) % sessions`, so active bundles
    /// spread over every session, task, workspace and owner.
    pub base_micros: i64,
    /// Refresh the planner's statistics once the world is written; false
    /// leaves them as a world grown through the API finds them, before
    /// any `ANALYZE` (OPS-3a).
    pub analyze: bool,
    /// Every other active bundle gets a deadline far ahead (`expire`), so
    /// listings check deadlines that do not yet exclude anything (EXP-2).
    pub deadlines: bool,
}

impl WorldSpec {
    /// `bundles` bundles of which about `active` are active, so worlds of
    /// different sizes can hold the same inbox.
    pub fn new(bundles: u64, active: u64) -> WorldSpec {
        WorldSpec {
            bundles,
            sessions: (bundles / 100).clamp(1, 10_000),
            owners: 10,
            active_every: (bundles / active.max(1)).max(1),
            base_micros: 1_795_982_400_000_000,
            analyze: true,
            deadlines: false,
        }
    }

    pub fn active_bundles(&self) -> u64 {
        self.bundles.div_ceil(self.active_every)
    }
}

fn series(n: u64) -> String {
    format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})",
        last = n.saturating_sub(1)
    )
}

/// Generates the world into an empty database and refreshes planner
/// statistics. Bundle ids are `b<i>`, sessions `s<i>`, tasks `t<i>`.
pub fn populate(engine: &Engine, spec: &WorldSpec) -> Result<()> {
    let WorldSpec {
        bundles,
        sessions,
        owners,
        active_every,
        base_micros,
        analyze,
        deadlines,
    } = *spec;
    // About 115 days after the bundle was asked.
    let ahead = 10_000_000_000_000_i64;
    let payload = r#"{"title":"T","prompt":"Proceed?","options":[{"option_id":"yes","label":"Yes","description":"Go on"},{"option_id":"no","label":"No","description":"Stop"}]}"#;
    let script = format!(
        "{s_sessions} INSERT INTO workspaces (id, owner_id, name) SELECT 'w' || i, 'user' || (i % {owners}), 'Workspace ' || i FROM n;
         {s_sessions} INSERT INTO tasks (id, workspace_id, title) SELECT 't' || i, 'w' || i, 'Task ' || i FROM n;
         {s_sessions} INSERT INTO sessions (id, task_id, state, is_primary) SELECT 's' || i, 't' || i, 'running', TRUE FROM n;
         {s_sessions} INSERT INTO turns (id, session_id, started_at) SELECT 'old' || i, 's' || i, 1 FROM n;
         {s_sessions} INSERT INTO turns (id, session_id, started_at) SELECT 'new' || i, 's' || i, 2 FROM n;
         {s_bundles} INSERT INTO bundles (pending_id, session_id, task_id, turn_id, kind, context, created_at, may_be_active, expires_at, on_expire,
                                          responded_at, resolved_by_kind, resolved_by_id)
             SELECT 'b' || i, 's' || ((i / {active_every}) % {sessions}), 't' || ((i / {active_every}) % {sessions}),
                    CASE WHEN i % {active_every} = 0 OR i % 2 = 0 THEN 'new' ELSE 'old' END || ((i / {active_every}) % {sessions}),
                    'question', 'generated', {base_micros} + i * 1000, i % {active_every} = 0,
                    CASE WHEN {deadlines} AND i % (2 * {active_every}) = 0 THEN {base_micros} + i * 1000 + {ahead} END,
                    CASE WHEN {deadlines} AND i % (2 * {active_every}) = 0 THEN 'expire' ELSE '' END,
                    CASE WHEN {answered} THEN {base_micros} + i * 1000 + 500 END,
                    CASE WHEN {answered} THEN 'user' END,
                    CASE WHEN {answered} THEN 'user0' END
             FROM n;
         INSERT INTO bundle_questions (pending_id, session_id, turn_id, question_id, question_index, payload, status, response, created_at)
             SELECT pending_id, session_id, turn_id, 'q1', 0, '{payload}',
                    CASE WHEN may_be_active OR turn_id LIKE 'old%' THEN 'pending' ELSE 'answered' END,
                    CASE WHEN may_be_active OR turn_id LIKE 'old%' THEN NULL
                         ELSE '{{\"question_id\":\"q1\",\"selected_options\":[\"yes\"],\"custom_text\":\"\"}}' END,
                    created_at
             FROM bundles;
         ",
        s_sessions = series(sessions),
        s_bundles = series(bundles),
        answered = format!("i % {active_every} <> 0 AND i % 2 = 0"),
    );
    engine.write(|conn| {
        conn.batch_execute(&script)?;
        // The keys come from the library's own statement, not a copy of it.
        visibility::refresh_keys(bundles::table).execute(conn)?;
        // This world's tables only: a bare ANALYZE on PostgreSQL reads
        // every schema's tables, and two of them at once (parallel tests,
        // one schema each) can deadlock.
        if analyze {
            conn.batch_execute(
                "ANALYZE workspaces; ANALYZE tasks; ANALYZE sessions; ANALYZE turns;
                 ANALYZE bundles; ANALYZE bundle_questions;",
            )?;
        }
        Ok(())
    })
}

/// A bundle whose stored derived columns differ from what the library's
/// rules derive from the rest of the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    pub pending_id: String,
    /// `(stored, derived)` of `may_be_active`: derived is "may ever be
    /// active again", what the library's own writes leave (ACT-4).
    pub may_be_active: Option<(bool, bool)>,
    pub task_key: Option<(Option<String>, Option<String>)>,
    /// `(stored, derived)` of the owner and workspace keys (OPS-3a, PPL-5).
    pub keys: Option<(Keys, Keys)>,
}

/// A bundle's owner key and workspace key (OPS-3a, PPL-5).
pub type Keys = (Option<String>, Option<String>);

type DerivedRow = (
    String,
    bool,
    Option<bool>,
    Option<String>,
    Option<String>,
    Keys,
    Keys,
);

/// Every bundle whose `may_be_active` hint differs from "may ever be active
/// again" (ACT-4) or whose visibility keys differ from what the mirror
/// implies (OPS-3a). Generated worlds must show none before a measurement;
/// property tests check the keys after every operation.
pub fn drift(engine: &Engine) -> Result<Vec<Drift>> {
    let rows: Vec<DerivedRow> = engine.read(|conn| {
        Ok(bundles::table
            .select((
                bundles::pending_id,
                bundles::may_be_active,
                activeness::permanently_inactive(),
                bundles::task_key,
                visibility::bundle_task_id(),
                (bundles::owner_key, bundles::workspace_key),
                (
                    visibility::owner_key_of_bundle(),
                    visibility::workspace_key_of_bundle(),
                ),
            ))
            .order_by(bundles::pending_id)
            .load(conn)?)
    })?;
    Ok(rows
        .into_iter()
        .filter_map(
            |(pending_id, hint, inactive, task, task_derived, key, key_derived)| {
                let derived_hint = inactive != Some(true);
                let drift = Drift {
                    pending_id,
                    may_be_active: (hint != derived_hint).then_some((hint, derived_hint)),
                    task_key: (task != task_derived).then_some((task, task_derived)),
                    keys: (key != key_derived).then_some((key, key_derived)),
                };
                let drifted = drift.may_be_active.is_some()
                    || drift.task_key.is_some()
                    || drift.keys.is_some();
                drifted.then_some(drift)
            },
        )
        .collect())
}
