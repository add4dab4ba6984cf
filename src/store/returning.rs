//! `… RETURNING`, cached under its type (PostgreSQL's claim, and tests).

use diesel::query_builder::{QueryFragment, QueryId};

/// `statement` also returning `column` of every row it changed (both
/// backends: PostgreSQL, and SQLite since 3.35).
pub fn returning<S, C>(statement: S, column: C) -> Returning<S, C> {
    Returning { statement, column }
}

/// `<statement> RETURNING <column>`; see [`returning`].
#[derive(Debug, Clone, Copy)]
pub struct Returning<S, C> {
    statement: S,
    column: C,
}

impl<S, C, DB> QueryFragment<DB> for Returning<S, C>
where
    DB: diesel::backend::Backend,
    S: QueryFragment<DB>,
    C: QueryFragment<DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        self.statement.walk_ast(out.reborrow())?;
        out.push_sql(" RETURNING ");
        self.column.walk_ast(out.reborrow())
    }
}

impl<S: QueryId, C: QueryId> QueryId for Returning<S, C> {
    type QueryId = Returning<S::QueryId, C::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = S::HAS_STATIC_QUERY_ID && C::HAS_STATIC_QUERY_ID;
}

impl<S, C: diesel::Expression> diesel::query_builder::Query for Returning<S, C> {
    type SqlType = C::SqlType;
}

impl<S, C, Conn> diesel::RunQueryDsl<Conn> for Returning<S, C> {}
