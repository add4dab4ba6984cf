//! PostgreSQL's claim guard and row slots: ACT-1 evaluated by the write
//! statement itself. Compiled for PostgreSQL, and for tests, which run the
//! guarded statement on both backends (the fragment is the same).

use diesel::dsl::exists;
use diesel::expression::{is_aggregate, ValidGrouping};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::Bool;

use super::statements::RowWrite;
use crate::rules::activeness;
use crate::rules::limits::QUESTIONS_PER_BUNDLE;
use crate::rules::visibility::{self, Scope};
use crate::store::schema::{bundle_questions, bundles};

/// How many question rows one PostgreSQL claim statement writes: a bundle's
/// most (ASK-1). The statement always names this many rows — unused places
/// name row id 0, which no row has — so its SQL text never changes and it
/// stays in the prepared-statement cache under its type, without its SQL
/// being rendered again on every call.
pub const ROWS_PER_STATEMENT: usize = *QUESTIONS_PER_BUNDLE.end();

/// A PostgreSQL claim statement's [`ROWS_PER_STATEMENT`] rows, padded with
/// row id 0. SQLite writes one row per statement (`[RowWrite; 1]`): its
/// statements cost no round trip, and a statement per row tells it which
/// rows changed without `RETURNING`, which costs SQLite more.
pub type RowSlots = [RowWrite; ROWS_PER_STATEMENT];

/// ACT-1 for one bundle, from the one activeness rule, and the bundle
/// still visible to the claimer (AUTH-3..6, from the one visibility rule).
#[diesel::dsl::auto_type]
pub fn bundle_is_active<'a>(scope: &'a Scope, pending_id: &'a str, now: i64) -> _ {
    let visible: visibility::bundle_visible<'a> = visibility::bundle_visible(scope, now);
    let active: activeness::active_bundle_ids = activeness::active_bundle_ids(now);
    exists(
        active
            .filter(bundles::pending_id.eq(pending_id))
            .filter(visible),
    )
}

/// The guard of a PostgreSQL settlement: the bundle due, evaluated by the
/// write statement itself (see [`active_in_the_write`]).
pub fn due_in_the_write(pending_id: &str, now: i64) -> ActiveGuard<activeness::bundle_is_due<'_>> {
    ActiveGuard(activeness::bundle_is_due(pending_id, now))
}

/// [`bundle_is_active`] as a condition of a statement on `bundle_questions`
/// (see [`active_in_the_write`]).
/// Diesel refuses it there on its own, because the activeness fragments
/// query `bundle_questions` too; SQL resolves those inner references to the
/// inner `FROM bundle_questions`, which is what the rule means.
#[derive(Debug, Clone, Copy)]
pub struct ActiveGuard<E>(E);

impl<E> Expression for ActiveGuard<E> {
    type SqlType = Bool;
}
impl<E> AppearsOnTable<bundle_questions::table> for ActiveGuard<E> {}
impl<E> ValidGrouping<()> for ActiveGuard<E> {
    type IsAggregate = is_aggregate::Never;
}
impl<E: QueryId> QueryId for ActiveGuard<E> {
    type QueryId = ActiveGuard<E::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = E::HAS_STATIC_QUERY_ID;
}
impl<E: QueryFragment<DB>, DB: diesel::backend::Backend> QueryFragment<DB> for ActiveGuard<E> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

/// The guard of a PostgreSQL claim: ACT-1 and visibility for the bundle,
/// evaluated by the write statement itself. The statement starts after
/// the session lock was granted, so it sees every state change, new turn,
/// task move and owner change committed before (each of those takes the
/// same session lock first); later ones wait for the claim (CLAIM-4).
pub fn active_in_the_write<'a>(
    scope: &'a Scope,
    pending_id: &'a str,
    now: i64,
) -> ActiveGuard<bundle_is_active<'a>> {
    ActiveGuard(bundle_is_active(scope, pending_id, now))
}
