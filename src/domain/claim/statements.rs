//! The claim's statements, typed once for both backends: which rows take
//! which response, the guard each backend evaluates, and the bundle row's
//! marks (CLAIM-3). `sqlite.rs` and `postgres.rs` assemble them into each
//! backend's writes.

use diesel::expression::{is_aggregate, ValidGrouping};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Bool, Nullable, Text};

use crate::rules::activeness;
use crate::store::schema::{bundle_questions, bundles};
use crate::store::{fixed_update, OnEitherBackend};

/// Who resolved a bundle, for audit (CLAIM-3).
pub struct Resolver<'a> {
    /// The principal's kind.
    pub kind: &'a str,
    /// The principal's audit id.
    pub id: String,
    /// QUO-4: the deciding voters' ids as a JSON array; `[]` for every
    /// resolver but a quorum.
    pub voters: String,
}

/// The stored `voters` of every resolution but a quorum's (QUO-4).
pub const NO_VOTERS: &str = "[]";

/// What one question row takes if it is still pending: its id and its
/// stored answer (`None` for rejections and cancellations).
#[derive(Debug, Clone)]
pub struct RowWrite {
    /// The row's id.
    pub row_id: i64,
    /// Its stored answer, `None` for rejections and cancellations.
    pub response: Option<String>,
}

/// `CASE "bundle_questions"."id" WHEN $1 THEN $2 … END`: each row's own
/// response in the one statement that writes them all.
#[derive(Debug, Clone, Copy)]
pub struct ResponseOfRow<'a, const N: usize>(&'a [RowWrite; N]);

/// `"bundle_questions"."id" IN ($1, …)`: only the rows the claim read, so no
/// row can take a status without the response meant for it. Written out
/// rather than with `eq_any`, which keeps SQLite statements out of the
/// prepared-statement cache.
#[derive(Debug, Clone, Copy)]
pub struct AmongRows<'a, const N: usize>(&'a [RowWrite; N]);

/// The static query id of [`ResponseOfRow`] and [`AmongRows`]: their text
/// depends on nothing but the number of rows `N`.
#[derive(Debug, Clone, Copy)]
pub struct RowSlotsId<const RESPONSE: bool, const N: usize>;

impl<const N: usize> Expression for ResponseOfRow<'_, N> {
    type SqlType = Nullable<Text>;
}

impl<const N: usize> Expression for AmongRows<'_, N> {
    type SqlType = Bool;
}

macro_rules! row_expression_impls {
    ($type:ident, $response:literal) => {
        impl<const N: usize> AppearsOnTable<bundle_questions::table> for $type<'_, N> {}
        impl<const N: usize> ValidGrouping<()> for $type<'_, N> {
            type IsAggregate = is_aggregate::Never;
        }
        impl<const N: usize> QueryId for $type<'_, N> {
            type QueryId = RowSlotsId<$response, N>;
            const HAS_STATIC_QUERY_ID: bool = true;
        }
    };
}
row_expression_impls!(ResponseOfRow, true);
row_expression_impls!(AmongRows, false);

impl<DB, const N: usize> QueryFragment<DB> for ResponseOfRow<'_, N>
where
    DB: diesel::backend::Backend,
    i64: diesel::serialize::ToSql<BigInt, DB>,
    Option<String>: diesel::serialize::ToSql<Nullable<Text>, DB>,
    DB: diesel::sql_types::HasSqlType<BigInt> + diesel::sql_types::HasSqlType<Text>,
    bundle_questions::id: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("CASE ");
        bundle_questions::id.walk_ast(out.reborrow())?;
        for write in self.0.iter() {
            out.push_sql(" WHEN ");
            out.push_bind_param::<BigInt, _>(&write.row_id)?;
            out.push_sql(" THEN ");
            out.push_bind_param::<Nullable<Text>, _>(&write.response)?;
        }
        out.push_sql(" END");
        Ok(())
    }
}

impl<DB, const N: usize> QueryFragment<DB> for AmongRows<'_, N>
where
    DB: diesel::backend::Backend + diesel::sql_types::HasSqlType<BigInt>,
    i64: diesel::serialize::ToSql<BigInt, DB>,
    bundle_questions::id: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        bundle_questions::id.walk_ast(out.reborrow())?;
        out.push_sql(" IN (");
        for (index, write) in self.0.iter().enumerate() {
            if index > 0 {
                out.push_sql(", ");
            }
            out.push_bind_param::<BigInt, _>(&write.row_id)?;
        }
        out.push_sql(")");
        Ok(())
    }
}

/// CLAIM-1, CLAIM-3: the bundle's rows that are still pending take the
/// resolution, but only under `guard` — `postgres::active_in_the_write`
/// on PostgreSQL, `sqlite::ReadUnderWriteLock` on SQLite. Rows already terminal in a
/// mixed bundle are left untouched. The count of changed rows (or, with
/// `RETURNING`, their ids) tells whether this caller claimed the bundle.
/// This is the only statement that writes a resolution status.
pub fn claim_rows_statement<'a, G, const N: usize>(
    pending_id: &'a str,
    status: &'a str,
    writes: &'a [RowWrite; N],
    guard: G,
) -> impl OnEitherBackend + 'a
where
    G: Expression<SqlType = Bool> + AppearsOnTable<bundle_questions::table> + OnEitherBackend + 'a,
{
    fixed_update(
        bundle_questions::table,
        (
            bundle_questions::status.eq(status),
            bundle_questions::response.eq(ResponseOfRow(writes)),
        ),
        bundle_questions::pending_id
            .eq(pending_id)
            .and(AmongRows(writes))
            .and(activeness::question_is_pending())
            .and(guard),
    )
}

/// CLAIM-3: what the bundle row records — who resolved it, when, the
/// reason, and the delivery mark — and the cleared listing hint (ACT-4).
#[diesel::dsl::auto_type]
pub(crate) fn bundle_marks<'a>(
    reason: &'a str,
    responded_at: i64,
    resolved_by_kind: &'a str,
    resolved_by_id: &'a str,
    voters: &'a str,
) -> _ {
    let undelivered: bool = true;
    let listable: bool = false;
    (
        bundles::reject_reason.eq(reason),
        bundles::responded_at.eq(responded_at),
        bundles::resolved_by_kind.eq(resolved_by_kind),
        bundles::resolved_by_id.eq(resolved_by_id),
        bundles::voters.eq(voters),
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
) -> impl OnEitherBackend + 'a {
    fixed_update(
        bundles::table,
        bundle_marks(
            reason,
            responded_at,
            resolver.kind,
            &resolver.id,
            &resolver.voters,
        ),
        bundles::pending_id.eq(pending_id),
    )
}
