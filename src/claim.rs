//! The one claim (CLAIM-1..4): the only transition of an active bundle to a
//! resolution (`answered`, `rejected`, `cancelled`). Resolve and cancel both
//! end here; nothing else writes a resolution status.
//!
//! The guard is part of the write itself: the statement that gives the rows
//! their resolution only touches them while ACT-1 holds for the bundle, as
//! evaluated by that statement. On PostgreSQL the rows and the bundle row
//! are written by one statement, after the session lock, so a claim costs
//! one round trip for its writes whatever the number of questions.

use diesel::dsl::exists;
use diesel::expression::{is_aggregate, ValidGrouping};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Bool, Integer, Nullable, Text};

use crate::activeness;
use crate::bundle::{BundleRecord, QuestionRecord};
use crate::db::{self, AnyConnection};
use crate::error::{Error, Result};
use crate::failpoints::points;
use crate::schema::{bundle_questions, bundles};
use crate::Clarion;

/// What the claim writes, after normalization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// One normalized answer per question, in DM-4 order (NORM-1).
    Answered(Vec<crate::bundle::Answer>),
    Rejected {
        reason: String,
    },
    Cancelled,
}

impl Resolution {
    fn status(&self) -> &'static str {
        match self {
            Resolution::Answered(_) => "answered",
            Resolution::Rejected { .. } => "rejected",
            Resolution::Cancelled => "cancelled",
        }
    }

    fn reject_reason(&self) -> &str {
        match self {
            Resolution::Rejected { reason } => reason,
            _ => "",
        }
    }

    /// The stored answer object of one row (REPLAY-2: every answered row
    /// stores one, even an empty "no answer").
    fn stored_answer(&self, question_id: &str) -> Result<Option<String>> {
        let Resolution::Answered(answers) = self else {
            return Ok(None);
        };
        answers
            .iter()
            .find(|answer| answer.question_id == question_id)
            .map(|answer| {
                serde_json::to_string(answer)
                    .map_err(|e| Error::Internal(format!("answer of {question_id}: {e}")))
            })
            .transpose()
    }
}

/// Who resolved a bundle, for audit (CLAIM-3).
pub struct Resolver<'a> {
    pub kind: &'a str,
    pub id: String,
}

/// What one question row takes if it is still pending: its id and its
/// stored answer (`None` for rejections and cancellations).
#[derive(Debug, Clone)]
pub struct RowWrite {
    pub row_id: i32,
    pub response: Option<String>,
}

/// `CASE "bundle_questions"."id" WHEN $1 THEN $2 … END`: each row's own
/// response in the one statement that writes them all.
#[derive(Debug, Clone, Copy)]
pub struct ResponseOfRow<'a>(&'a [RowWrite]);

/// `"bundle_questions"."id" IN ($1, …)`: only the rows the claim read, so no
/// row can take a status without the response meant for it. Written out
/// rather than with `eq_any`, which keeps SQLite statements out of the
/// prepared-statement cache.
#[derive(Debug, Clone, Copy)]
pub struct AmongRows<'a>(&'a [RowWrite]);

impl Expression for ResponseOfRow<'_> {
    type SqlType = Nullable<Text>;
}

impl Expression for AmongRows<'_> {
    type SqlType = Bool;
}

macro_rules! row_expression_impls {
    ($type:ident) => {
        impl AppearsOnTable<bundle_questions::table> for $type<'_> {}
        impl ValidGrouping<()> for $type<'_> {
            type IsAggregate = is_aggregate::Never;
        }
        impl QueryId for $type<'_> {
            type QueryId = ();
            const HAS_STATIC_QUERY_ID: bool = false;
        }
    };
}
row_expression_impls!(ResponseOfRow);
row_expression_impls!(AmongRows);

impl<DB> QueryFragment<DB> for ResponseOfRow<'_>
where
    DB: diesel::backend::Backend,
    i32: diesel::serialize::ToSql<Integer, DB>,
    Option<String>: diesel::serialize::ToSql<Nullable<Text>, DB>,
    DB: diesel::sql_types::HasSqlType<Integer> + diesel::sql_types::HasSqlType<Text>,
    bundle_questions::id: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("CASE ");
        bundle_questions::id.walk_ast(out.reborrow())?;
        for write in self.0 {
            out.push_sql(" WHEN ");
            out.push_bind_param::<Integer, _>(&write.row_id)?;
            out.push_sql(" THEN ");
            out.push_bind_param::<Nullable<Text>, _>(&write.response)?;
        }
        out.push_sql(" END");
        Ok(())
    }
}

impl<DB> QueryFragment<DB> for AmongRows<'_>
where
    DB: diesel::backend::Backend + diesel::sql_types::HasSqlType<Integer>,
    i32: diesel::serialize::ToSql<Integer, DB>,
    bundle_questions::id: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        bundle_questions::id.walk_ast(out.reborrow())?;
        out.push_sql(" IN (");
        for (index, write) in self.0.iter().enumerate() {
            if index > 0 {
                out.push_sql(", ");
            }
            out.push_bind_param::<Integer, _>(&write.row_id)?;
        }
        out.push_sql(")");
        Ok(())
    }
}

/// ACT-1 for one bundle, from the one activeness rule.
#[diesel::dsl::auto_type]
fn bundle_is_active<'a>(pending_id: &'a str) -> _ {
    exists(activeness::active_bundle_ids().filter(bundles::pending_id.eq(pending_id)))
}

/// [`bundle_is_active`] as a condition of a statement on `bundle_questions`.
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
impl<E> QueryId for ActiveGuard<E> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}
impl<E: QueryFragment<DB>, DB: diesel::backend::Backend> QueryFragment<DB> for ActiveGuard<E> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

/// CLAIM-1, CLAIM-3: the bundle's rows that are still pending take the
/// resolution, but only while ACT-1 holds for the bundle as this very
/// statement sees it; rows already terminal in a mixed bundle are left
/// untouched. Returns the ids of the rows it changed: none means this
/// caller did not claim the bundle. This is the only statement that writes
/// a resolution status. `writes` must not be empty.
pub fn claim_rows_statement<'a>(
    pending_id: &'a str,
    status: &'a str,
    writes: &'a [RowWrite],
) -> db::Returning<impl db::OnEitherBackend + 'a, bundle_questions::id> {
    let still_active = ActiveGuard(bundle_is_active(pending_id));
    db::fixed_update(
        bundle_questions::table,
        (
            bundle_questions::status.eq(status),
            bundle_questions::response.eq(ResponseOfRow(writes)),
        ),
        bundle_questions::pending_id
            .eq(pending_id)
            .and(AmongRows(writes))
            .and(activeness::question_is_pending())
            .and(still_active),
    )
    .returning(bundle_questions::id)
}

/// CLAIM-3: what the bundle row records — who resolved it, when, the
/// reason, and the delivery mark — and the cleared listing hint (ACT-4).
#[diesel::dsl::auto_type]
fn bundle_marks<'a>(
    reason: &'a str,
    responded_at: i64,
    resolved_by_kind: &'a str,
    resolved_by_id: &'a str,
) -> _ {
    let undelivered: bool = true;
    let listable: bool = false;
    (
        bundles::reject_reason.eq(reason),
        bundles::responded_at.eq(responded_at),
        bundles::resolved_by_kind.eq(resolved_by_kind),
        bundles::resolved_by_id.eq(resolved_by_id),
        bundles::response_delivery_pending.eq(undelivered),
        bundles::may_be_active.eq(listable),
    )
}

/// CLAIM-3 on SQLite: the bundle row's marks, written right after
/// [`claim_rows_statement`] changed a row in the same transaction.
pub fn claim_bundle_statement<'a>(
    pending_id: &'a str,
    reason: &'a str,
    responded_at: i64,
    resolver: &'a Resolver<'a>,
) -> impl db::OnEitherBackend + 'a {
    db::fixed_update(
        bundles::table,
        bundle_marks(reason, responded_at, resolver.kind, &resolver.id),
        bundles::pending_id.eq(pending_id),
    )
}

diesel::table! {
    /// The rows a PostgreSQL claim changed: the name of the first common
    /// table expression of [`ClaimStatement`], not a stored table.
    claimed (id) {
        id -> Integer,
    }
}
diesel::allow_tables_to_appear_in_same_query!(claimed, bundles);

/// The claim's writes on PostgreSQL as one statement:
///
/// `WITH claimed AS (<rows>), marked AS (<the bundle's marks, only if a row
/// was claimed>) SELECT id FROM claimed`
///
/// Both updates see one snapshot, taken after the session lock was granted,
/// and commit or vanish together with the transaction.
#[derive(Debug, Clone)]
pub struct ClaimStatement<R, B> {
    rows: R,
    bundle: B,
    result: diesel::dsl::Select<claimed::table, claimed::id>,
}

/// The claim's writes for PostgreSQL (see [`ClaimStatement`]); `rows` is a
/// [`claim_rows_statement`].
pub fn claim_statement<'a, R>(
    rows: R,
    pending_id: &'a str,
    reason: &'a str,
    responded_at: i64,
    resolver: &'a Resolver<'a>,
) -> ClaimStatement<R, impl db::OnEitherBackend + 'a> {
    let some_row_claimed = exists(claimed::table.select(claimed::id));
    let bundle = db::fixed_update(
        bundles::table,
        bundle_marks(reason, responded_at, resolver.kind, &resolver.id),
        bundles::pending_id.eq(pending_id).and(some_row_claimed),
    );
    ClaimStatement {
        rows,
        bundle,
        result: claimed::table.select(claimed::id),
    }
}

#[cfg(feature = "postgres")]
impl<R, B> QueryFragment<diesel::pg::Pg> for ClaimStatement<R, B>
where
    R: QueryFragment<diesel::pg::Pg>,
    B: QueryFragment<diesel::pg::Pg>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        out.push_sql("WITH ");
        out.push_identifier("claimed")?;
        out.push_sql(" AS (");
        self.rows.walk_ast(out.reborrow())?;
        out.push_sql("), ");
        out.push_identifier("marked")?;
        out.push_sql(" AS (");
        self.bundle.walk_ast(out.reborrow())?;
        out.push_sql(") ");
        QueryFragment::<diesel::pg::Pg>::walk_ast(&self.result, out.reborrow())
    }
}

impl<R, B> QueryId for ClaimStatement<R, B> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<R, B> diesel::query_builder::Query for ClaimStatement<R, B> {
    type SqlType = Integer;
}

impl<R, B, C> RunQueryDsl<C> for ClaimStatement<R, B> {}

/// The bundle a claim is about, as read inside the claim's transaction.
pub(crate) struct ClaimTarget<'a> {
    pub record: &'a mut BundleRecord,
    /// ACT-1 as evaluated by the read itself.
    pub active_when_read: bool,
    pub rows: &'a [QuestionRecord],
}

/// CLAIM-1: the one transition of an active bundle to a resolution, inside
/// the caller's write transaction. Returns the bundle's rows as they will
/// commit when this call claimed it, `None` when it did not.
///
/// A bundle the read found inactive is final on both backends: that branch
/// writes nothing, so the read's snapshot is as good a moment to decide at
/// as any later one, and losers arriving after a winner committed go to the
/// replay without queueing for the session lock. Otherwise PostgreSQL locks
/// the session row first, which serializes the claim with state changes and
/// new turns of the same session (CLAIM-4); its write statement starts after
/// the lock was granted, so its guard sees everything committed before. On
/// SQLite the transaction has held the write lock since `BEGIN IMMEDIATE`.
pub(crate) fn claim(
    clarion: &Clarion,
    conn: &mut AnyConnection,
    target: ClaimTarget<'_>,
    resolution: &Resolution,
    resolver: &Resolver<'_>,
) -> Result<Option<Vec<QuestionRecord>>> {
    let ClaimTarget {
        record,
        active_when_read,
        rows,
    } = target;
    if !active_when_read || rows.is_empty() {
        return Ok(None);
    }
    clarion.failpoint(points::CLAIM_AFTER_READ)?;
    db::serialize_with_session(conn, &record.session_id)?;
    clarion.failpoint(points::CLAIM_BEFORE_WRITES)?;
    let writes = rows
        .iter()
        .map(|row| {
            Ok(RowWrite {
                row_id: row.id,
                response: resolution.stored_answer(&row.question_id)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let status = resolution.status();
    let reason = resolution.reject_reason();
    let responded_at = clarion.now().as_micros();
    let rows_statement = claim_rows_statement(&record.pending_id, status, &writes);
    let claimed: Vec<i32> = match conn {
        AnyConnection::Sqlite(conn) => {
            let claimed: Vec<i32> = rows_statement.load(conn)?;
            if claimed.is_empty() {
                return Ok(None);
            }
            clarion.failpoint(points::CLAIM_AFTER_ROWS)?;
            diesel::query_dsl::methods::ExecuteDsl::execute(
                claim_bundle_statement(&record.pending_id, reason, responded_at, resolver),
                conn,
            )?;
            claimed
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => {
            let claimed: Vec<i32> = claim_statement(
                rows_statement,
                &record.pending_id,
                reason,
                responded_at,
                resolver,
            )
            .load(conn)?;
            if claimed.is_empty() {
                return Ok(None);
            }
            clarion.failpoint(points::CLAIM_AFTER_ROWS)?;
            claimed
        }
    };
    clarion.failpoint(points::CLAIM_BEFORE_COMMIT)?;
    record.reject_reason = reason.to_owned();
    record.responded_at = Some(responded_at);
    let committed = rows
        .iter()
        .zip(writes)
        .map(|(row, write)| {
            let mut row = row.clone();
            if claimed.contains(&row.id) {
                row.status = Some(status.to_owned());
                row.response = write.response;
            }
            row
        })
        .collect();
    Ok(Some(committed))
}
