//! SQLite's side of the claim (CLAIM-1, CLAIM-4): `BEGIN IMMEDIATE` has
//! held the write lock since before the read, so the read is the guard and
//! the writes add no condition.

use diesel::prelude::*;
use diesel::SqliteConnection;

use diesel::expression::{is_aggregate, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::Bool;

use super::statements::{claim_bundle_statement, claim_rows_statement, RowWrite};
use super::target::{Marks, Target};
use crate::domain::bundle::{
    bundle_record_columns, rows_of_bundle_query, sort_dm4, BundleRecord, QuestionRecord,
};
use crate::error::Result;
use crate::rules::activeness;
use crate::rules::visibility::{self, Scope};
use crate::store::failpoints::{points, Failpoints};
use crate::store::schema::bundle_questions;

/// The guard of a SQLite claim: the claim's read evaluated ACT-1, and the
/// write lock `BEGIN IMMEDIATE` took before that read is still held, so
/// nothing can have changed since and the write adds no condition
/// (rendered `TRUE`). Evaluating ACT-1 again would cost SQLite a third of
/// its resolve.
#[derive(Debug, Clone, Copy)]
pub struct ReadUnderWriteLock;

impl Expression for ReadUnderWriteLock {
    type SqlType = Bool;
}
impl AppearsOnTable<bundle_questions::table> for ReadUnderWriteLock {}
impl ValidGrouping<()> for ReadUnderWriteLock {
    type IsAggregate = is_aggregate::Never;
}
impl QueryId for ReadUnderWriteLock {
    type QueryId = ReadUnderWriteLock;
    const HAS_STATIC_QUERY_ID: bool = true;
}
impl<DB: diesel::backend::Backend> QueryFragment<DB> for ReadUnderWriteLock {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("TRUE");
        Ok(())
    }
}

/// The claim's read on SQLite (CLAIM-1): one bundle, if the scope may see
/// it, with ACT-1 evaluated in the same statement; under the write lock
/// this is the claim's guard. SQLite reads the question rows with a second
/// statement, which costs it less than joining them (the bundle's derived
/// columns would be evaluated once per question row).
#[diesel::dsl::auto_type]
pub fn claim_target_query<'a>(scope: &'a Scope, pending_id: &'a str, now: i64) -> _ {
    let bundle: visibility::visible_bundle<'a> = visibility::visible_bundle(scope, pending_id, now);
    let active: activeness::is_active = activeness::is_active(now);
    bundle.select((bundle_record_columns(), active))
}

/// The claim's read: the bundle and whether it is active, then its rows.
pub(crate) fn read(
    conn: &mut SqliteConnection,
    scope: &Scope,
    pending_id: &str,
    now: i64,
) -> Result<Option<Target>> {
    let target: Option<(BundleRecord, Option<bool>)> =
        claim_target_query(scope, pending_id, now).load(conn)?.pop();
    let Some((record, active)) = target else {
        return Ok(None);
    };
    let mut rows: Vec<QuestionRecord> = rows_of_bundle_query(pending_id).load(conn)?;
    sort_dm4(&mut rows);
    Ok(Some(Target {
        record,
        // SQL NULL (a session without turns) is not active, as in a filter.
        active_when_read: active.unwrap_or(false),
        rows,
    }))
}

/// SQLite's claim writes, under the write lock its read was taken under:
/// one statement per row (each says whether its row changed), then the
/// bundle row if any did. Returns the ids of the rows that changed.
pub(crate) fn write(
    conn: &mut SqliteConnection,
    marks: &Marks<'_>,
    writes: &[RowWrite],
    failpoints: &Failpoints,
) -> Result<Vec<i64>> {
    use diesel::query_dsl::methods::ExecuteDsl;
    let claimed = write_rows(conn, marks.pending_id, marks.status, writes)?;
    if !claimed.is_empty() {
        failpoints.check(points::CLAIM_AFTER_ROWS)?;
        let bundle = claim_bundle_statement(
            marks.pending_id,
            marks.reason,
            marks.responded_at,
            marks.resolver,
        );
        ExecuteDsl::execute(bundle, conn)?;
    }
    Ok(claimed)
}

/// The rows' writes under the write lock: one statement per row (each
/// says whether its row changed). Returns the ids of the rows that did.
pub(crate) fn write_rows(
    conn: &mut SqliteConnection,
    pending_id: &str,
    status: &str,
    writes: &[RowWrite],
) -> Result<Vec<i64>> {
    use diesel::query_dsl::methods::ExecuteDsl;
    let mut claimed = Vec::new();
    for write in writes {
        let one = [write.clone()];
        let statement = claim_rows_statement(pending_id, status, &one, ReadUnderWriteLock);
        if ExecuteDsl::execute(statement, conn)? == 1 {
            claimed.push(write.row_id);
        }
    }
    Ok(claimed)
}

/// EXP-3 on SQLite: is the bundle due, read under the write lock (the
/// settlement's guard, as the claim's read is the claim's).
pub(crate) fn is_due(conn: &mut SqliteConnection, pending_id: &str, now: i64) -> Result<bool> {
    Ok(diesel::select(activeness::bundle_is_due(pending_id, now)).get_result(conn)?)
}
