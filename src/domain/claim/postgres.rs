//! PostgreSQL's side of the claim (CLAIM-1, CLAIM-4): the first read, one
//! statement without a lock, and one statement for every write, guarded
//! by ACT-1 itself (the session row lock comes with the transaction's
//! `BEGIN`, `store::claim_transaction`).

use diesel::dsl::exists;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Bool, Text};
use diesel::IntoSql;
use diesel::PgConnection;

use super::guard::{active_in_the_write, due_in_the_write, RowSlots, ROWS_PER_STATEMENT};
use super::statements::{bundle_marks, claim_rows_statement, Resolver, RowWrite};
use super::target::Marks;
use crate::domain::bundle::{
    bundle_record_columns, question_record_columns, sort_dm4, BundleRecord, QuestionRecord,
};
use crate::domain::engine::ledger::{entry_columns, NewAttempt};
use crate::domain::events::{event_columns, rows_of_type};
use crate::error::Result;
use crate::rules::visibility::{self, Scope};
use crate::rules::vocabulary::EventType;
use crate::store::failpoints::{points, Failpoints};
use crate::store::schema::{attempts, bundle_questions, bundles, events};
use crate::store::{fixed_update, returning, OnEitherBackend};

diesel::alias!(bundle_questions as claim_rows: ClaimRows);

/// The claim's first read and a loser's replay (OPS-4, REPLAY-1, see
/// `claim::read_first`): the bundle if the scope may see it, with its
/// question rows joined (one result row per question), run as a statement
/// of its own outside any transaction: one round trip, one snapshot.
#[diesel::dsl::auto_type]
pub fn claim_first_read_query<'a>(scope: &'a Scope, pending_id: &'a str, now: i64) -> _ {
    let bundle: visibility::visible_bundle<'a> = visibility::visible_bundle(scope, pending_id, now);
    let rows_of_this_bundle: diesel::dsl::Eq<
        diesel::query_source::AliasedField<ClaimRows, bundle_questions::pending_id>,
        bundles::pending_id,
    > = claim_rows
        .field(bundle_questions::pending_id)
        .eq(bundles::pending_id);
    let rows: diesel::dsl::Nullable<
        diesel::dsl::Fields<diesel::query_source::Alias<ClaimRows>, question_record_columns>,
    > = claim_rows.fields(question_record_columns()).nullable();
    bundle
        .left_join(claim_rows.on(rows_of_this_bundle))
        .select((bundle_record_columns(), rows))
}

/// The claim's first read, in one statement that takes no lock (see
/// [`claim_first_read_query`]): the bundle and its rows in DM-4 order.
pub(crate) fn read_first(
    conn: &mut PgConnection,
    scope: &Scope,
    pending_id: &str,
    now: i64,
) -> Result<Option<(BundleRecord, Vec<QuestionRecord>)>> {
    let joined: Vec<(BundleRecord, Option<QuestionRecord>)> =
        claim_first_read_query(scope, pending_id, now).load(conn)?;
    let mut joined = joined.into_iter();
    let Some((record, first)) = joined.next() else {
        return Ok(None);
    };
    let mut rows: Vec<QuestionRecord> = first
        .into_iter()
        .chain(joined.filter_map(|(_, row)| row))
        .collect();
    sort_dm4(&mut rows);
    Ok(Some((record, rows)))
}

/// The row id that fills unused places of a claim statement.
const NO_ROW: RowWrite = RowWrite {
    row_id: 0,
    response: None,
};

diesel::table! {
    /// The rows a PostgreSQL claim changed: the name of the first common
    /// table expression of [`ClaimStatement`], not a stored table.
    claimed (id) {
        id -> BigInt,
    }
}
diesel::allow_tables_to_appear_in_same_query!(claimed, bundles);
diesel::allow_tables_to_appear_in_same_query!(claimed, attempts);
diesel::allow_tables_to_appear_in_same_query!(claimed, events);

/// The claim's writes on PostgreSQL as one statement:
///
/// `WITH claimed AS (<rows>), marked AS (<the bundle's marks, only if a row
/// was claimed>), logged AS (<the winner's ledger entry, only if a row was
/// claimed>), announced AS (<the `bundle.resolved` event, only if a row was
/// claimed>) SELECT id FROM claimed`
///
/// The writes see one snapshot, taken after the session lock was granted,
/// and commit or vanish together with the transaction: the winner's entry
/// (AUD-2) and its event (EVT-1) exist exactly when its claim committed,
/// at no extra round trip.
#[derive(Debug, Clone)]
pub struct ClaimStatement<R, B, L, E> {
    rows: R,
    bundle: B,
    logged: L,
    announced: E,
    result: diesel::dsl::Select<claimed::table, claimed::id>,
}

/// EVT-1: the `bundle.resolved` event a won claim appends, its data frozen
/// from what the win commits (see `claim::write`).
pub(crate) struct Announced<'a> {
    pub at: i64,
    pub data: &'a str,
}

/// EVT-1: the winner's `bundle.resolved` event, inserted only when a row
/// was claimed, and only while `log` (as [`winners_entry`]).
fn announced_event<'a>(
    pending_ids: &'a [&'a str],
    announced: &'a Announced<'a>,
    log: bool,
) -> impl QueryFragment<diesel::pg::Pg> + QueryId + 'a {
    let rows = rows_of_type(
        EventType::Resolved,
        pending_ids,
        announced.at,
        announced.data,
    )
    .filter(exists(claimed::table.select(claimed::id)))
    .filter(log.into_sql::<Bool>());
    diesel::insert_into(events::table)
        .values(rows)
        .into_columns(event_columns())
}

/// AUD-2: the winner's ledger entry, selected from `claimed` so that it is
/// inserted only when a row was claimed (once: `LIMIT 1`), and only while
/// `log` (a later statement of the same claim passes false).
fn winners_entry<'a>(
    entry: &'a NewAttempt,
    log: bool,
) -> impl QueryFragment<diesel::pg::Pg> + QueryId + 'a {
    let values = (
        entry.pending_id.as_str().into_sql::<Text>(),
        entry.at.into_sql::<BigInt>(),
        entry.principal_kind.into_sql::<Text>(),
        entry.user_id.as_str().into_sql::<Text>(),
        entry.agent_id.as_str().into_sql::<Text>(),
        entry.channel.into_sql::<Text>(),
        entry.outcome.into_sql::<Text>(),
        entry.digest.as_str().into_sql::<Text>(),
    );
    let once = claimed::table
        .filter(log.into_sql::<Bool>())
        .select(values)
        .limit(1);
    diesel::insert_into(attempts::table)
        .values(once)
        .into_columns(entry_columns())
}

/// The claim's writes for PostgreSQL (see [`ClaimStatement`]); `rows` is a
/// [`claim_rows_statement`].
#[allow(clippy::too_many_arguments)]
pub fn claim_statement<'a, R>(
    rows: R,
    pending_ids: &'a [&'a str; 1],
    reason: &'a str,
    responded_at: i64,
    resolver: &'a Resolver<'a>,
    entry: &'a NewAttempt,
    announced: &'a Announced<'a>,
    log: bool,
) -> ClaimStatement<
    R,
    impl OnEitherBackend + 'a,
    impl QueryFragment<diesel::pg::Pg> + QueryId + 'a,
    impl QueryFragment<diesel::pg::Pg> + QueryId + 'a,
> {
    let pending_id = pending_ids[0];
    let some_row_claimed = exists(claimed::table.select(claimed::id));
    let bundle = fixed_update(
        bundles::table,
        bundle_marks(
            reason,
            responded_at,
            resolver.kind,
            &resolver.id,
            &resolver.voters,
        ),
        bundles::pending_id.eq(pending_id).and(some_row_claimed),
    );
    ClaimStatement {
        rows,
        bundle,
        logged: winners_entry(entry, log),
        announced: announced_event(pending_ids, announced, log),
        result: claimed::table.select(claimed::id),
    }
}

impl<R, B, L, E> QueryFragment<diesel::pg::Pg> for ClaimStatement<R, B, L, E>
where
    R: QueryFragment<diesel::pg::Pg>,
    B: QueryFragment<diesel::pg::Pg>,
    L: QueryFragment<diesel::pg::Pg>,
    E: QueryFragment<diesel::pg::Pg>,
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
        out.push_sql("), ");
        out.push_identifier("logged")?;
        out.push_sql(" AS (");
        self.logged.walk_ast(out.reborrow())?;
        out.push_sql("), ");
        out.push_identifier("announced")?;
        out.push_sql(" AS (");
        self.announced.walk_ast(out.reborrow())?;
        out.push_sql(") ");
        QueryFragment::<diesel::pg::Pg>::walk_ast(&self.result, out.reborrow())
    }
}

impl<R: QueryId, B: QueryId, L: QueryId, E: QueryId> QueryId for ClaimStatement<R, B, L, E> {
    type QueryId = ClaimStatement<R::QueryId, B::QueryId, L::QueryId, E::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = R::HAS_STATIC_QUERY_ID
        && B::HAS_STATIC_QUERY_ID
        && L::HAS_STATIC_QUERY_ID
        && E::HAS_STATIC_QUERY_ID;
}

impl<R, B, L, E> diesel::query_builder::Query for ClaimStatement<R, B, L, E> {
    type SqlType = BigInt;
}

impl<R, B, L, E, C> RunQueryDsl<C> for ClaimStatement<R, B, L, E> {}

/// PostgreSQL's claim writes: one [`ClaimStatement`] for the rows and the
/// bundle row, guarded by ACT-1 in the statement itself. A bundle has at
/// most [`ROWS_PER_STATEMENT`] rows (ASK-1); more, from rows written by
/// hand, take several statements alike. Returns the ids of the rows that
/// changed.
pub(crate) fn write(
    conn: &mut PgConnection,
    marks: &Marks<'_>,
    writes: &[RowWrite],
    entry: &NewAttempt,
    announced: &Announced<'_>,
    failpoints: &Failpoints,
) -> Result<Vec<i64>> {
    let pending_ids = [marks.pending_id];
    let mut claimed = Vec::new();
    for chunk in writes.chunks(ROWS_PER_STATEMENT) {
        let slots: RowSlots =
            std::array::from_fn(|place| chunk.get(place).cloned().unwrap_or(NO_ROW));
        let guard = active_in_the_write(marks.scope, marks.pending_id, marks.now);
        let rows = returning(
            claim_rows_statement(marks.pending_id, marks.status, &slots, guard),
            bundle_questions::id,
        );
        let statement = claim_statement(
            rows,
            &pending_ids,
            marks.reason,
            marks.responded_at,
            marks.resolver,
            entry,
            announced,
            claimed.is_empty(),
        );
        claimed.extend(statement.load::<i64>(conn)?);
    }
    if !claimed.is_empty() {
        failpoints.check(points::CLAIM_AFTER_ROWS)?;
    }
    Ok(claimed)
}

/// EXP-3 on PostgreSQL: the settlement's row writes, guarded by "the
/// bundle is due" in the statement itself; the rows' own pending test
/// decides between two settlers, or a settler and a claimer, as between
/// two claims (CLAIM-5). Returns the ids of the rows that changed.
pub(crate) fn settle_rows(
    conn: &mut PgConnection,
    pending_id: &str,
    status: &str,
    writes: &[RowWrite],
    now: i64,
) -> Result<Vec<i64>> {
    let mut claimed = Vec::new();
    for chunk in writes.chunks(ROWS_PER_STATEMENT) {
        let slots: RowSlots =
            std::array::from_fn(|place| chunk.get(place).cloned().unwrap_or(NO_ROW));
        let guard = due_in_the_write(pending_id, now);
        let rows = returning(
            claim_rows_statement(pending_id, status, &slots, guard),
            bundle_questions::id,
        );
        claimed.extend(rows.load::<i64>(conn)?);
    }
    Ok(claimed)
}
