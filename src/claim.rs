//! The one claim (CLAIM-1..4): the only transition of an active bundle to a
//! resolution (`answered`, `rejected`, `cancelled`). Resolve and cancel both
//! end here; nothing else writes a resolution status.
//!
//! The guard (ACT-1, from the shared activeness fragments) is evaluated
//! inside the claim's transaction, where nothing can change it before the
//! commit. On SQLite that is the claim's read: `BEGIN IMMEDIATE` has held
//! the write lock since before it. On PostgreSQL the guard is part of the
//! write itself, sent after the session lock: one statement gives the rows
//! their resolution only while ACT-1 holds, and writes the bundle row's
//! marks only if a row was claimed — one round trip for all the writes.

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

/// How many question rows one PostgreSQL claim statement writes: a bundle's
/// most (ASK-1). The statement always names this many rows — unused places
/// name row id 0, which no row has — so its SQL text never changes and it
/// stays in the prepared-statement cache under its type, without its SQL
/// being rendered again on every call.
pub const ROWS_PER_STATEMENT: usize = *crate::ask::QUESTIONS_PER_BUNDLE.end();

/// The row id that fills unused places of a claim statement.
#[cfg(feature = "postgres")]
const NO_ROW: RowWrite = RowWrite {
    row_id: 0,
    response: None,
};

/// What one question row takes if it is still pending: its id and its
/// stored answer (`None` for rejections and cancellations).
#[derive(Debug, Clone)]
pub struct RowWrite {
    pub row_id: i32,
    pub response: Option<String>,
}

/// A PostgreSQL claim statement's [`ROWS_PER_STATEMENT`] rows, padded with
/// row id 0. SQLite writes one row per statement (`[RowWrite; 1]`): its
/// statements cost no round trip, and a statement per row tells it which
/// rows changed without `RETURNING`, which costs SQLite more.
pub type RowSlots = [RowWrite; ROWS_PER_STATEMENT];

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
    i32: diesel::serialize::ToSql<Integer, DB>,
    Option<String>: diesel::serialize::ToSql<Nullable<Text>, DB>,
    DB: diesel::sql_types::HasSqlType<Integer> + diesel::sql_types::HasSqlType<Text>,
    bundle_questions::id: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("CASE ");
        bundle_questions::id.walk_ast(out.reborrow())?;
        for write in self.0.iter() {
            out.push_sql(" WHEN ");
            out.push_bind_param::<Integer, _>(&write.row_id)?;
            out.push_sql(" THEN ");
            out.push_bind_param::<Nullable<Text>, _>(&write.response)?;
        }
        out.push_sql(" END");
        Ok(())
    }
}

impl<DB, const N: usize> QueryFragment<DB> for AmongRows<'_, N>
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
pub fn bundle_is_active<'a>(pending_id: &'a str) -> _ {
    exists(activeness::active_bundle_ids().filter(bundles::pending_id.eq(pending_id)))
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

/// The guard of a PostgreSQL claim: ACT-1 for the bundle, evaluated by the
/// write statement itself. The statement starts after the session lock
/// was granted, so it sees every state change and new turn committed
/// before; later ones wait for the claim (CLAIM-4).
pub fn active_in_the_write(pending_id: &str) -> ActiveGuard<bundle_is_active<'_>> {
    ActiveGuard(bundle_is_active(pending_id))
}

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

/// CLAIM-1, CLAIM-3: the bundle's rows that are still pending take the
/// resolution, but only under `guard` — [`active_in_the_write`] on
/// PostgreSQL, [`ReadUnderWriteLock`] on SQLite. Rows already terminal in a
/// mixed bundle are left untouched. The count of changed rows (or, with
/// `RETURNING`, their ids) tells whether this caller claimed the bundle.
/// This is the only statement that writes a resolution status.
pub fn claim_rows_statement<'a, G, const N: usize>(
    pending_id: &'a str,
    status: &'a str,
    writes: &'a [RowWrite; N],
    guard: G,
) -> impl db::OnEitherBackend + 'a
where
    G: Expression<SqlType = Bool>
        + AppearsOnTable<bundle_questions::table>
        + db::OnEitherBackend
        + 'a,
{
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
            .and(guard),
    )
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

#[cfg(feature = "postgres")]
diesel::table! {
    /// The rows a PostgreSQL claim changed: the name of the first common
    /// table expression of [`ClaimStatement`], not a stored table.
    claimed (id) {
        id -> Integer,
    }
}
#[cfg(feature = "postgres")]
diesel::allow_tables_to_appear_in_same_query!(claimed, bundles);

/// The claim's writes on PostgreSQL as one statement:
///
/// `WITH claimed AS (<rows>), marked AS (<the bundle's marks, only if a row
/// was claimed>) SELECT id FROM claimed`
///
/// Both updates see one snapshot, taken after the session lock was granted,
/// and commit or vanish together with the transaction.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone)]
pub struct ClaimStatement<R, B> {
    rows: R,
    bundle: B,
    result: diesel::dsl::Select<claimed::table, claimed::id>,
}

/// The claim's writes for PostgreSQL (see [`ClaimStatement`]); `rows` is a
/// [`claim_rows_statement`].
#[cfg(feature = "postgres")]
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

#[cfg(feature = "postgres")]
impl<R: QueryId, B: QueryId> QueryId for ClaimStatement<R, B> {
    type QueryId = ClaimStatement<R::QueryId, B::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = R::HAS_STATIC_QUERY_ID && B::HAS_STATIC_QUERY_ID;
}

#[cfg(feature = "postgres")]
impl<R, B> diesel::query_builder::Query for ClaimStatement<R, B> {
    type SqlType = Integer;
}

#[cfg(feature = "postgres")]
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
/// replay without queueing for the session lock. A bundle the read found
/// active is, by then, serialized with every other writer of its session:
/// on SQLite by the write lock held since `BEGIN IMMEDIATE`, on PostgreSQL
/// by the session row lock the read itself took (CLAIM-4; see
/// `bundle::claim_target_with_rows_query`). PostgreSQL's write statement
/// starts after that lock was granted, so its guard sees everything
/// committed before.
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
    let marks = Marks {
        pending_id: &record.pending_id,
        status,
        reason,
        responded_at,
        resolver,
    };
    let claimed = match conn {
        AnyConnection::Sqlite(conn) => write_on_sqlite(clarion, conn, &marks, &writes)?,
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => write_on_postgres(clarion, conn, &marks, &writes)?,
    };
    if claimed.is_empty() {
        return Ok(None);
    }
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

/// What a claim writes besides each row's answer.
struct Marks<'a> {
    pending_id: &'a str,
    status: &'static str,
    reason: &'a str,
    responded_at: i64,
    resolver: &'a Resolver<'a>,
}

/// SQLite's claim writes, under the write lock its read was taken under:
/// one statement per row (each says whether its row changed), then the
/// bundle row if any did. Returns the ids of the rows that changed.
fn write_on_sqlite(
    clarion: &Clarion,
    conn: &mut diesel::SqliteConnection,
    marks: &Marks<'_>,
    writes: &[RowWrite],
) -> Result<Vec<i32>> {
    use diesel::query_dsl::methods::ExecuteDsl;
    let mut claimed = Vec::new();
    for write in writes {
        let one = [write.clone()];
        let statement =
            claim_rows_statement(marks.pending_id, marks.status, &one, ReadUnderWriteLock);
        if ExecuteDsl::execute(statement, conn)? == 1 {
            claimed.push(write.row_id);
        }
    }
    if !claimed.is_empty() {
        clarion.failpoint(points::CLAIM_AFTER_ROWS)?;
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

/// PostgreSQL's claim writes: one [`ClaimStatement`] for the rows and the
/// bundle row, guarded by ACT-1 in the statement itself. A bundle has at
/// most [`ROWS_PER_STATEMENT`] rows (ASK-1); more, from rows written by
/// hand, take several statements alike. Returns the ids of the rows that
/// changed.
#[cfg(feature = "postgres")]
fn write_on_postgres(
    clarion: &Clarion,
    conn: &mut diesel::PgConnection,
    marks: &Marks<'_>,
    writes: &[RowWrite],
) -> Result<Vec<i32>> {
    let mut claimed = Vec::new();
    for chunk in writes.chunks(ROWS_PER_STATEMENT) {
        let slots: RowSlots =
            std::array::from_fn(|place| chunk.get(place).cloned().unwrap_or(NO_ROW));
        let guard = active_in_the_write(marks.pending_id);
        let rows = db::returning(
            claim_rows_statement(marks.pending_id, marks.status, &slots, guard),
            bundle_questions::id,
        );
        let statement = claim_statement(
            rows,
            marks.pending_id,
            marks.reason,
            marks.responded_at,
            marks.resolver,
        );
        claimed.extend(statement.load::<i32>(conn)?);
    }
    if !claimed.is_empty() {
        clarion.failpoint(points::CLAIM_AFTER_ROWS)?;
    }
    Ok(claimed)
}
