//! Transactions and locks: how a write starts on each backend, how a
//! read sees one snapshot, and how a session row is locked.

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::Connection;

use super::connection::AnyConnection;
use super::error::DbError;

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
pub(crate) fn write_transaction<T, E: From<DbError> + std::fmt::Display>(
    conn: &mut AnyConnection,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E> {
    transaction(conn, "BEGIN IMMEDIATE", "BEGIN", body)
}

/// Runs `body` on one consistent snapshot, so that several reads of a
/// bundle (its row, its standing, its question rows) never mix states from
/// before and after a concurrent commit.
pub(crate) fn read_snapshot<T, E: From<DbError> + std::fmt::Display>(
    conn: &mut AnyConnection,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E> {
    transaction(
        conn,
        "BEGIN",
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        body,
    )
}

fn transaction<T, E: From<DbError> + std::fmt::Display>(
    conn: &mut AnyConnection,
    sqlite_begin: &str,
    postgres_begin: &str,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E> {
    match conn {
        AnyConnection::Sqlite(inner) => {
            AnsiTransactionManager::begin_transaction_sql(inner, sqlite_begin)
                .map_err(DbError::from)?
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(inner) => {
            AnsiTransactionManager::begin_transaction_sql(inner, postgres_begin)
                .map_err(DbError::from)?
        }
    }
    #[cfg(not(feature = "postgres"))]
    let _ = postgres_begin;
    match body(conn) {
        Ok(value) => {
            <AnyConnection as Connection>::TransactionManager::commit_transaction(conn)
                .map_err(DbError::from)?;
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
) -> Result<Option<String>, DbError> {
    use super::schema::sessions;
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
