//! Statement shapes diesel lacks, cached under their types: a fixed
//! `UPDATE`, `… RETURNING`, and the bound every claim statement meets.

use diesel::query_builder::{QueryFragment, QueryId};

/// A statement both backends can run on their concrete connections.
#[cfg(feature = "postgres")]
pub trait OnEitherBackend:
    QueryFragment<diesel::sqlite::Sqlite> + QueryFragment<diesel::pg::Pg> + QueryId
{
}
#[cfg(feature = "postgres")]
impl<T> OnEitherBackend for T where
    T: QueryFragment<diesel::sqlite::Sqlite> + QueryFragment<diesel::pg::Pg> + QueryId
{
}
/// A statement both backends can run on their concrete connections.
#[cfg(not(feature = "postgres"))]
pub trait OnEitherBackend: QueryFragment<diesel::sqlite::Sqlite> + QueryId {}
#[cfg(not(feature = "postgres"))]
impl<T> OnEitherBackend for T where T: QueryFragment<diesel::sqlite::Sqlite> + QueryId {}

/// `UPDATE <table> SET <changes> WHERE <predicate>`, for the claim's
/// statements. Diesel's own UPDATE refuses its prepared statement a place
/// in the cache (a changeset with optional fields can render differently
/// each time), so every resolve re-prepared the same few statements.
///
/// A `FixedUpdate` is cached under its type, like diesel's static queries:
/// its parts must render the same text every time (no optional fields, no
/// lists whose length varies), which is what "fixed" promises. That spares
/// rendering the whole statement on every call just to find it in the
/// cache, which for the claim's guarded write cost more than running it.
#[derive(Debug, Clone, Copy)]
pub struct FixedUpdate<F, V, W, Id = ()> {
    from: F,
    changes: V,
    predicate: W,
    id: PhantomParts<Id>,
}

/// The query id of a [`FixedUpdate`]: its table, the changes as written
/// (diesel gives the rendered changeset no id) and its predicate.
#[derive(Debug, Clone, Copy)]
pub struct FixedUpdateId<T, C, W>(PhantomParts<(T, C, W)>);

/// Names types without owning values of them (and stays `Send`/`Sync`).
type PhantomParts<T> = std::marker::PhantomData<fn() -> T>;

/// A [`FixedUpdate`], typed like
/// `diesel::update(table.filter(predicate)).set(changes)`.
#[allow(clippy::type_complexity)]
pub fn fixed_update<T, C, W>(
    table: T,
    changes: C,
    predicate: W,
) -> FixedUpdate<T::FromClause, C::Changeset, W, FixedUpdateId<T, C, W>>
where
    T: diesel::Table,
    C: diesel::AsChangeset<Target = T>,
    W: diesel::AppearsOnTable<T> + diesel::Expression,
    W::SqlType: diesel::sql_types::BoolOrNullableBool,
{
    FixedUpdate {
        from: table.from_clause(),
        changes: changes.as_changeset(),
        predicate,
        id: std::marker::PhantomData,
    }
}

impl<F, V, W, Id, DB> QueryFragment<DB> for FixedUpdate<F, V, W, Id>
where
    DB: diesel::backend::Backend,
    F: QueryFragment<DB>,
    V: QueryFragment<DB>,
    W: QueryFragment<DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        out.push_sql("UPDATE ");
        self.from.walk_ast(out.reborrow())?;
        out.push_sql(" SET ");
        self.changes.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.predicate.walk_ast(out.reborrow())
    }
}

impl<F, V, W, T, C, P> QueryId for FixedUpdate<F, V, W, FixedUpdateId<T, C, P>>
where
    T: QueryId,
    C: QueryId,
    P: QueryId,
{
    type QueryId = FixedUpdateId<T::QueryId, C::QueryId, P::QueryId>;
    const HAS_STATIC_QUERY_ID: bool =
        T::HAS_STATIC_QUERY_ID && C::HAS_STATIC_QUERY_ID && P::HAS_STATIC_QUERY_ID;
}

/// `CAST(<expr> AS INTEGER)`: a 32-bit integer on PostgreSQL (SQLite has
/// one integer type), so that `SUM` of it is a `BIGINT` there too, not the
/// `NUMERIC` that `SUM` of a `BIGINT` (as `COUNT` returns) would be. Only
/// for values that fit: counts of a bundle's questions, and a boolean
/// compared as a number so that no partial index's predicate follows from
/// it (pending actions' hint, PROD-3).
#[derive(Debug, Clone, Copy, diesel::expression::ValidGrouping)]
pub struct AsInteger<E>(pub E);

impl<E> diesel::Expression for AsInteger<E>
where
    E: diesel::Expression,
{
    type SqlType = diesel::sql_types::Nullable<diesel::sql_types::Integer>;
}

impl<E, QS> diesel::AppearsOnTable<QS> for AsInteger<E> where E: diesel::AppearsOnTable<QS> {}

impl<E, QS> diesel::SelectableExpression<QS> for AsInteger<E> where
    E: diesel::SelectableExpression<QS>
{
}

impl<E: QueryId> QueryId for AsInteger<E> {
    type QueryId = AsInteger<E::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = E::HAS_STATIC_QUERY_ID;
}

impl<E, DB> QueryFragment<DB> for AsInteger<E>
where
    DB: diesel::backend::Backend,
    E: QueryFragment<DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        out.push_sql("CAST(");
        self.0.walk_ast(out.reborrow())?;
        out.push_sql(" AS INTEGER)");
        Ok(())
    }
}

/// `<column> IN (<ids>)` with the ids bound as one value, so the statement's
/// text never depends on how many there are: SQLite reads them from a JSON
/// array (`IN (SELECT value FROM json_each(?))`), PostgreSQL from an array
/// (`= ANY(?)`). Diesel's `eq_any` writes one placeholder per id on SQLite
/// and so keeps the statement out of the prepared-statement cache: a page's
/// candidates, question rows and names were prepared again on every call.
#[derive(Debug, Clone)]
pub struct Among<'a, C> {
    column: C,
    /// PostgreSQL's array.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    ids: Vec<&'a str>,
    /// SQLite's JSON array.
    json: String,
}

impl<C> diesel::expression::ValidGrouping<()> for Among<'_, C> {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}

/// `column IN (ids)`, cached like a static query (see [`Among`]).
pub fn among<'a, C>(column: C, ids: impl IntoIterator<Item = &'a str>) -> Among<'a, C> {
    let ids: Vec<&'a str> = ids.into_iter().collect();
    // A list of strings always serializes.
    let json = serde_json::to_string(&ids).unwrap_or_default();
    Among { column, ids, json }
}

impl<C> diesel::Expression for Among<'_, C> {
    type SqlType = diesel::sql_types::Bool;
}

impl<C, QS> diesel::AppearsOnTable<QS> for Among<'_, C> where C: diesel::AppearsOnTable<QS> {}

impl<C, QS> diesel::SelectableExpression<QS> for Among<'_, C> where
    C: diesel::SelectableExpression<QS>
{
}

/// The query id of an [`Among`]: its column's.
#[derive(Debug, Clone, Copy)]
pub struct AmongId<C>(PhantomParts<C>);

impl<C: QueryId> QueryId for Among<'_, C> {
    type QueryId = AmongId<C::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = C::HAS_STATIC_QUERY_ID;
}

impl<C> QueryFragment<diesel::sqlite::Sqlite> for Among<'_, C>
where
    C: QueryFragment<diesel::sqlite::Sqlite>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::sqlite::Sqlite>,
    ) -> diesel::QueryResult<()> {
        self.column.walk_ast(out.reborrow())?;
        out.push_sql(" IN (SELECT value FROM json_each(");
        out.push_bind_param::<diesel::sql_types::Text, _>(&self.json)?;
        out.push_sql("))");
        Ok(())
    }
}

#[cfg(feature = "postgres")]
impl<C> QueryFragment<diesel::pg::Pg> for Among<'_, C>
where
    C: QueryFragment<diesel::pg::Pg>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> diesel::QueryResult<()> {
        self.column.walk_ast(out.reborrow())?;
        out.push_sql(" = ANY(");
        out.push_bind_param::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(&self.ids)?;
        out.push_sql(")");
        Ok(())
    }
}

impl<C> QueryFragment<<super::connection::AnyConnection as diesel::Connection>::Backend>
    for Among<'_, C>
where
    Self: OnEitherBackend,
{
    fn walk_ast<'b>(
        &'b self,
        pass: diesel::query_builder::AstPass<
            '_,
            'b,
            <super::connection::AnyConnection as diesel::Connection>::Backend,
        >,
    ) -> diesel::QueryResult<()> {
        <super::connection::AnyConnection as diesel::Connection>::Backend::walk_variant_ast(
            self, pass,
        )
    }
}

/// Three writes in one PostgreSQL statement:
/// `WITH "first" AS (<a>), "second" AS (<b>) <c>`. Data-modifying common
/// table expressions run exactly once, on one snapshot, and commit or
/// vanish with the statement; a foreign key between them is checked at
/// the statement's end, so a row and the rows that reference it go in
/// together. One round trip where each write was one.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone)]
pub struct Together<A, B, C>(pub A, pub B, pub C);

#[cfg(feature = "postgres")]
impl<A, B, C> QueryFragment<diesel::pg::Pg> for Together<A, B, C>
where
    A: QueryFragment<diesel::pg::Pg>,
    B: QueryFragment<diesel::pg::Pg>,
    C: QueryFragment<diesel::pg::Pg>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> diesel::QueryResult<()> {
        out.push_sql("WITH ");
        out.push_identifier("first")?;
        out.push_sql(" AS (");
        self.0.walk_ast(out.reborrow())?;
        out.push_sql("), ");
        out.push_identifier("second")?;
        out.push_sql(" AS (");
        self.1.walk_ast(out.reborrow())?;
        out.push_sql(") ");
        self.2.walk_ast(out.reborrow())
    }
}

#[cfg(feature = "postgres")]
impl<A: QueryId, B: QueryId, C: QueryId> QueryId for Together<A, B, C> {
    type QueryId = Together<A::QueryId, B::QueryId, C::QueryId>;
    const HAS_STATIC_QUERY_ID: bool =
        A::HAS_STATIC_QUERY_ID && B::HAS_STATIC_QUERY_ID && C::HAS_STATIC_QUERY_ID;
}

#[cfg(feature = "postgres")]
impl<A, B, C, Conn> diesel::RunQueryDsl<Conn> for Together<A, B, C> {}
