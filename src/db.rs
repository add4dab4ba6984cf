//! Opening a database: URL parsing, the connection pool, SQLite pragmas,
//! embedded migrations, and the few places where SQLite and PostgreSQL differ
//! (how a write transaction starts and how a session row is locked).

use std::path::Path;
use std::time::{Duration, Instant};

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::query_builder::{QueryFragment, QueryId};
use diesel::r2d2::{self, ManageConnection, Pool, PooledConnection};
use diesel::{Connection, SqliteConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::error::{Error, OpenError};

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
#[cfg(feature = "postgres")]
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// One connection to whichever backend the URL named. Typed queries run on it
/// unchanged; backend-specific SQL matches on the variant.
#[cfg(feature = "postgres")]
#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    Sqlite(SqliteConnection),
    Postgres(diesel::PgConnection),
}

/// One connection to whichever backend the URL named (SQLite only in this build).
#[cfg(not(feature = "postgres"))]
#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    Sqlite(SqliteConnection),
}

/// Which backend a handle talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// A parsed database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A SQLite database file; created if missing, in a directory that must exist.
    Sqlite { path: String },
    /// A PostgreSQL connection URL, passed to libpq unchanged.
    Postgres { url: String },
}

impl Target {
    /// Parses `sqlite://<path>` (so `sqlite:///abs/path.db`), a bare path, or
    /// `postgres://…` / `postgresql://…`. Anything else that looks like a URL
    /// is refused rather than mistaken for a file name.
    pub fn parse(url: &str) -> Result<Target, OpenError> {
        let invalid = |reason: &str| OpenError::InvalidUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        if url.trim().is_empty() {
            return Err(invalid("the URL is empty"));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Target::Postgres {
                url: url.to_owned(),
            });
        }
        let path = match url.strip_prefix("sqlite://") {
            Some(path) => path,
            None if url.contains("://") => {
                return Err(invalid(
                    "unknown scheme; use sqlite://<path>, a plain file path, or postgres://",
                ))
            }
            None => url,
        };
        if path.is_empty() {
            return Err(invalid("the SQLite path is empty"));
        }
        if path == ":memory:" || path.starts_with("file:") {
            return Err(invalid(
                "in-memory and URI-style SQLite databases are not supported; give a file path",
            ));
        }
        if let Some(parent) = Path::new(path).parent() {
            if !parent.as_os_str().is_empty() && !parent.is_dir() {
                return Err(invalid(&format!(
                    "directory {} does not exist",
                    parent.display()
                )));
            }
        }
        Ok(Target::Sqlite {
            path: path.to_owned(),
        })
    }

    pub fn backend(&self) -> Backend {
        match self {
            Target::Sqlite { .. } => Backend::Sqlite,
            Target::Postgres { .. } => Backend::Postgres,
        }
    }
}

/// Opens connections for the pool, keeping the real error of a failed attempt
/// (unlike `MultiConnection::establish`, which would hide it).
#[derive(Debug)]
pub(crate) struct Manager {
    target: Target,
    busy_timeout: Duration,
}

impl Manager {
    fn connect_target(&self) -> Result<AnyConnection, OpenError> {
        match &self.target {
            Target::Sqlite { path } => {
                let mut conn =
                    SqliteConnection::establish(path).map_err(|source| OpenError::Connect {
                        backend: "SQLite",
                        source,
                    })?;
                configure_sqlite(&mut conn, self.busy_timeout).map_err(|source| {
                    OpenError::Configure {
                        backend: "SQLite",
                        source,
                    }
                })?;
                Ok(AnyConnection::Sqlite(conn))
            }
            #[cfg(feature = "postgres")]
            Target::Postgres { url } => {
                let mut conn =
                    diesel::PgConnection::establish(url).map_err(|source| OpenError::Connect {
                        backend: "PostgreSQL",
                        source,
                    })?;
                configure_postgres(&mut conn).map_err(|source| OpenError::Configure {
                    backend: "PostgreSQL",
                    source,
                })?;
                Ok(AnyConnection::Postgres(conn))
            }
            #[cfg(not(feature = "postgres"))]
            Target::Postgres { url } => Err(OpenError::PostgresNotCompiled { url: url.clone() }),
        }
    }
}

/// `busy_timeout` goes first and alone: switching to WAL may itself need the
/// lock, and must wait for it rather than fail.
fn configure_sqlite(
    conn: &mut SqliteConnection,
    busy_timeout: Duration,
) -> diesel::QueryResult<()> {
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {}",
        busy_timeout.as_millis()
    ))?;
    switch_to_wal(conn, busy_timeout)?;
    conn.batch_execute("PRAGMA synchronous = NORMAL")?;
    conn.batch_execute("PRAGMA foreign_keys = ON")?;
    // Reads through a memory map share the OS page cache between pooled
    // connections instead of copying pages into each connection's small
    // private cache; listings of large inboxes read many index pages.
    conn.batch_execute("PRAGMA mmap_size = 268435456")?;
    Ok(())
}

/// Every statement clarion runs is prepared once per connection and keeps
/// one plan whatever its values: each looks rows up by key or walks an
/// index in order, and the parameters decide nothing a plan could exploit.
/// Left to choose, PostgreSQL weighs a generic plan against the custom
/// plans of the first five runs; once the tables have grown it goes on
/// planning the claim's and the listing's nested subqueries afresh on every
/// run, which costs several times their execution (measured: binding the
/// claim's read went from 80 to 540 µs).
#[cfg(feature = "postgres")]
fn configure_postgres(conn: &mut diesel::PgConnection) -> diesel::QueryResult<()> {
    conn.batch_execute("SET plan_cache_mode = force_generic_plan")
}

/// Switching a fresh file to WAL can fail at once with "database is
/// locked", without waiting in the busy handler, while another connection
/// holds a lock it must not wait for (SQLite refuses rather than risk a
/// deadlock) — as when several handles open a new file together. The switch
/// is retried until the busy timeout has passed.
fn switch_to_wal(conn: &mut SqliteConnection, busy_timeout: Duration) -> diesel::QueryResult<()> {
    let deadline = Instant::now() + busy_timeout;
    loop {
        match conn.batch_execute("PRAGMA journal_mode = WAL") {
            Err(diesel::result::Error::DatabaseError(_, info))
                if info.message().contains("locked") && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            outcome => return outcome,
        }
    }
}

/// The pool's error type: the open error, as a standard error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct ConnectError(#[from] OpenError);

/// A connection is handed out again without a round trip to check it if it
/// came back to the pool this recently (as HikariCP's "alive bypass
/// window" does): a busy pool then pays nothing per operation, while a
/// connection that sat idle — across a server restart, say — is checked.
const RECENTLY_USED: Duration = Duration::from_millis(500);

/// A pooled connection, when it last came back to the pool, and whether an
/// operation on it found it closed.
pub(crate) struct PooledConn {
    conn: AnyConnection,
    returned_at: Option<Instant>,
    lost: bool,
}

impl PooledConn {
    /// Runs `body` on the connection; if it fails because the connection is
    /// gone (the server closed it), the pool discards the connection instead
    /// of handing it out again. (A failure inside a transaction is caught
    /// anyway: its ROLLBACK fails too, which breaks the transaction manager.)
    pub(crate) fn run<T>(
        &mut self,
        body: impl FnOnce(&mut AnyConnection) -> Result<T, Error>,
    ) -> Result<T, Error> {
        use diesel::result::DatabaseErrorKind::{ClosedConnection, UnableToSendCommand};
        let outcome = body(&mut self.conn);
        if let Err(Error::Database(diesel::result::Error::DatabaseError(
            ClosedConnection | UnableToSendCommand,
            _,
        ))) = &outcome
        {
            self.lost = true;
        }
        outcome
    }
}

impl std::ops::Deref for PooledConn {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

impl ManageConnection for Manager {
    type Connection = PooledConn;
    type Error = ConnectError;

    fn connect(&self) -> Result<PooledConn, ConnectError> {
        Ok(PooledConn {
            conn: self.connect_target()?,
            returned_at: None,
            lost: false,
        })
    }

    fn is_valid(&self, conn: &mut PooledConn) -> Result<(), ConnectError> {
        // A local SQLite file cannot drop a connection; a PostgreSQL
        // connection can, unless it just proved itself.
        let recently_used = conn
            .returned_at
            .is_some_and(|at| at.elapsed() < RECENTLY_USED);
        if self.target.backend() == Backend::Sqlite || recently_used {
            return Ok(());
        }
        conn.batch_execute("SELECT 1").map_err(|source| {
            ConnectError(OpenError::Configure {
                backend: self.target.backend().name(),
                source,
            })
        })
    }

    fn has_broken(&self, conn: &mut PooledConn) -> bool {
        // A connection dropped while unwinding, or still inside a
        // transaction, must not be handed out again.
        let broken = std::thread::panicking()
            || conn.lost
            || <AnyConnection as Connection>::TransactionManager::is_broken_transaction_manager(
                &mut conn.conn,
            );
        // r2d2 asks this as the connection comes back to the pool.
        conn.returned_at = Some(Instant::now());
        broken
    }
}

pub(crate) type DbPool = Pool<Manager>;
pub(crate) type DbConn = PooledConnection<Manager>;

/// Settings that shape the pool.
#[derive(Debug, Clone)]
pub(crate) struct PoolSettings {
    pub size: u32,
    pub busy_timeout: Duration,
    pub connection_timeout: Duration,
}

/// Connects once directly (so a failure reports the server's own message),
/// migrates, then builds the pool.
pub(crate) fn open_pool(target: Target, settings: &PoolSettings) -> Result<DbPool, OpenError> {
    if settings.size == 0 {
        return Err(OpenError::Config("pool_size must be at least 1".into()));
    }
    let manager = Manager {
        target,
        busy_timeout: settings.busy_timeout,
    };
    let mut first = manager.connect_target()?;
    migrate(&mut first)?;
    drop(first);
    Pool::builder()
        .max_size(settings.size)
        .test_on_check_out(true)
        .min_idle(Some(0))
        .connection_timeout(settings.connection_timeout)
        .error_handler(Box::new(r2d2::LoggingErrorHandler))
        .build(manager)
        .map_err(|e| OpenError::Pool(e.to_string()))
}

/// Runs the embedded migrations of the connection's backend. Several
/// processes may open one fresh database at once, so migrating is serialized:
/// SQLite by taking the write lock up front, PostgreSQL by an advisory lock.
fn migrate(conn: &mut AnyConnection) -> Result<(), OpenError> {
    let result = match conn {
        AnyConnection::Sqlite(conn) => {
            AnsiTransactionManager::begin_transaction_sql(&mut *conn, "BEGIN IMMEDIATE")
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    let outcome = conn
                        .run_pending_migrations(SQLITE_MIGRATIONS)
                        .map(|_| ())
                        .map_err(|e| e.to_string());
                    finish_transaction(conn, outcome)
                })
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => conn
            .transaction::<_, diesel::result::Error, _>(|conn| {
                conn.batch_execute("SELECT pg_advisory_xact_lock(7426118023)")?;
                Ok(conn
                    .run_pending_migrations(POSTGRES_MIGRATIONS)
                    .map(|_| ())
                    .map_err(|e| e.to_string()))
            })
            .map_err(|e| e.to_string())
            .and_then(|inner| inner),
    };
    result.map_err(|message| OpenError::Migrate {
        backend: backend_of(conn).name(),
        message,
    })
}

fn finish_transaction<C>(conn: &mut C, outcome: Result<(), String>) -> Result<(), String>
where
    C: Connection<TransactionManager = AnsiTransactionManager>,
{
    match outcome {
        Ok(()) => AnsiTransactionManager::commit_transaction(conn).map_err(|e| e.to_string()),
        Err(message) => {
            let _ = AnsiTransactionManager::rollback_transaction(conn);
            Err(message)
        }
    }
}

pub(crate) fn backend_of(conn: &AnyConnection) -> Backend {
    match conn {
        AnyConnection::Sqlite(_) => Backend::Sqlite,
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(_) => Backend::Postgres,
    }
}

/// The row a lookup by key finds, if any. Loads instead of calling
/// `first()`: through `MultiConnection`, `first()`'s `LIMIT ?` keeps a
/// statement out of the prepared-statement cache, which costs a full
/// re-prepare (measured: 5x slower) on every call.
pub(crate) fn at_most_one<'q, Q, T>(
    query: Q,
    conn: &mut AnyConnection,
) -> diesel::QueryResult<Option<T>>
where
    Q: diesel::query_dsl::LoadQuery<'q, AnyConnection, T>,
{
    Ok(diesel::RunQueryDsl::load::<T>(query, conn)?
        .into_iter()
        .next())
}

/// Runs `body` in a write transaction. SQLite takes the write lock up front
/// (`BEGIN IMMEDIATE`) so a transaction that reads before it writes never
/// has to upgrade its lock, which is where SQLite deadlocks (CLAIM-4).
pub(crate) fn write_transaction<T>(
    conn: &mut AnyConnection,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, Error>,
) -> Result<T, Error> {
    transaction(conn, "BEGIN IMMEDIATE", "BEGIN", body)
}

/// Runs `body` on one consistent snapshot, so that several reads of a
/// bundle (its row, its standing, its question rows) never mix states from
/// before and after a concurrent commit.
pub(crate) fn read_snapshot<T>(
    conn: &mut AnyConnection,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, Error>,
) -> Result<T, Error> {
    transaction(
        conn,
        "BEGIN",
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        body,
    )
}

fn transaction<T>(
    conn: &mut AnyConnection,
    sqlite_begin: &str,
    postgres_begin: &str,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, Error>,
) -> Result<T, Error> {
    match conn {
        AnyConnection::Sqlite(inner) => {
            AnsiTransactionManager::begin_transaction_sql(inner, sqlite_begin)?
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(inner) => {
            AnsiTransactionManager::begin_transaction_sql(inner, postgres_begin)?
        }
    }
    #[cfg(not(feature = "postgres"))]
    let _ = postgres_begin;
    match body(conn) {
        Ok(value) => {
            <AnyConnection as Connection>::TransactionManager::commit_transaction(conn)?;
            Ok(value)
        }
        Err(error) => {
            if let Err(rollback) =
                <AnyConnection as Connection>::TransactionManager::rollback_transaction(conn)
            {
                tracing::error!(%rollback, "rollback failed after {error}");
            }
            Err(error)
        }
    }
}

/// Locks a session row for the rest of the transaction, so that asking,
/// claiming, state changes and new turns of one session are serialized on
/// PostgreSQL (CLAIM-4). On SQLite the transaction already holds the
/// database's write lock. Returns the session's state, or `None` if the
/// session does not exist.
pub(crate) fn lock_session(
    conn: &mut AnyConnection,
    session_id: &str,
) -> Result<Option<String>, Error> {
    use crate::schema::sessions;
    use diesel::prelude::*;
    match conn {
        AnyConnection::Sqlite(conn) => Ok(sessions::table
            .find(session_id)
            .select(sessions::state)
            .load::<String>(conn)?
            .pop()),
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => Ok(sessions::table
            .find(session_id)
            .select(sessions::state)
            .for_update()
            .load::<String>(conn)?
            .pop()),
    }
}

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
