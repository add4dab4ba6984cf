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
/// PostgreSQL states `READ COMMITTED` rather than inherit the server's
/// default: the claim's locks and per-statement snapshots are designed for
/// it, and under `SERIALIZABLE` racers would fail instead of losing.
pub(crate) fn write_transaction<T, E: From<DbError> + std::fmt::Display>(
    conn: &mut AnyConnection,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E> {
    transaction(
        conn,
        "BEGIN IMMEDIATE",
        "BEGIN ISOLATION LEVEL READ COMMITTED",
        body,
    )
}

/// The claim's write transaction (CLAIM-4), for a bundle of `session_id`.
///
/// On SQLite it takes the write lock up front, as [`write_transaction`]
/// does; but unless `queue`, it does not wait for it: when another
/// connection holds it, `BEGIN IMMEDIATE` fails at once (the busy handler
/// is off for that one statement) and this returns `Ok(None)` without
/// running `body`, so the caller can first learn from a read whether it
/// still needs the lock (OPS-4). SQLite's busy handler sleeps 1, 2, 5, 10,
/// 15, 20, … ms between attempts, so a queue of waiters learns late that
/// the lock was released.
///
/// On PostgreSQL (`READ COMMITTED`, never `None`) the transaction's first
/// statement, sent with its `BEGIN` in one round trip, locks the session
/// row `FOR SHARE`: what [`lock_session`] and [`lock_sessions_reached`]
/// lock `FOR UPDATE` — state changes, new turns, asks, task moves, owner
/// changes — then waits for the claim, and the claim for them, while
/// claims do not wait for each other. The same batch takes the advisory
/// lock of the bundle's workspace (its workspace key) in shared mode, which
/// member changes ([`hold`] exclusive: `set_members`, `delete_user`) take
/// exclusively, so a member's claim and that member's removal are
/// serialized (PPL-4). Every statement of `body` starts after both locks
/// were granted.
pub(crate) fn claim_transaction<T, E: From<DbError> + std::fmt::Display>(
    conn: &mut AnyConnection,
    session_id: &str,
    pending_id: &str,
    queue: bool,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<Option<T>, E> {
    match conn {
        AnyConnection::Sqlite(inner) => {
            if queue {
                AnsiTransactionManager::begin_transaction_sql(inner, "BEGIN IMMEDIATE")
                    .map_err(DbError::from)?;
            } else if !begin_immediate_unless_locked(inner).map_err(DbError::from)? {
                return Ok(None);
            }
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(inner) => {
            // A simple-protocol batch (no parameters): the id goes in as an
            // escape string literal, whatever `standard_conforming_strings`.
            let session = escaped_literal(session_id);
            let bundle = escaped_literal(pending_id);
            let begin = format!(
                "BEGIN ISOLATION LEVEL READ COMMITTED; \
                 SELECT 1 FROM sessions WHERE id = {session} FOR SHARE; \
                 SELECT pg_advisory_xact_lock_shared({WORKSPACE_LOCKS}, hashtext(workspace_key)) \
                 FROM bundles WHERE pending_id = {bundle} AND workspace_key <> ''"
            );
            AnsiTransactionManager::begin_transaction_sql(inner, &begin).map_err(DbError::from)?
        }
    }
    let _ = (session_id, pending_id);
    finish(conn, body).map(Some)
}

/// A write transaction that begins by locking the session row of
/// `session_id`, as [`lock_session`] does (CLAIM-4), for a change of that
/// session that needs nothing else first (asking). On SQLite `BEGIN
/// IMMEDIATE` ([`write_transaction`]); on PostgreSQL the lock (`FOR
/// UPDATE`) is sent with the `BEGIN` in one round trip, so every statement
/// of `body` starts after it was granted and sees what the session's
/// earlier changes committed. A session that does not exist locks nothing;
/// `body` finds it absent.
pub(crate) fn session_transaction<T, E: From<DbError> + std::fmt::Display>(
    conn: &mut AnyConnection,
    session_id: &str,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E> {
    match conn {
        AnyConnection::Sqlite(inner) => {
            AnsiTransactionManager::begin_transaction_sql(inner, "BEGIN IMMEDIATE")
                .map_err(DbError::from)?
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(inner) => {
            let session = escaped_literal(session_id);
            let begin = format!(
                "BEGIN ISOLATION LEVEL READ COMMITTED; \
                 SELECT 1 FROM sessions WHERE id = {session} FOR UPDATE"
            );
            AnsiTransactionManager::begin_transaction_sql(inner, &begin).map_err(DbError::from)?
        }
    }
    let _ = session_id;
    finish(conn, body)
}

/// A text as an escape string literal, whatever
/// `standard_conforming_strings`.
#[cfg(feature = "postgres")]
fn escaped_literal(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// The advisory locks' namespaces ([`hold`]).
#[cfg(feature = "postgres")]
const TASK_LOCKS: i32 = 1;
#[cfg(feature = "postgres")]
const WORKSPACE_LOCKS: i32 = 2;

#[derive(diesel::QueryableByName)]
struct BusyTimeout {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    timeout: i64,
}

/// `BEGIN IMMEDIATE` with the busy handler off; `false` if another
/// connection holds the write lock. The connection's busy timeout is
/// restored whatever happened.
fn begin_immediate_unless_locked(conn: &mut diesel::SqliteConnection) -> diesel::QueryResult<bool> {
    use diesel::connection::SimpleConnection;
    use diesel::RunQueryDsl;
    let configured = diesel::sql_query("PRAGMA busy_timeout")
        .load::<BusyTimeout>(conn)?
        .pop()
        .map_or(0, |busy| busy.timeout);
    conn.batch_execute("PRAGMA busy_timeout = 0")?;
    let began = AnsiTransactionManager::begin_transaction_sql(conn, "BEGIN IMMEDIATE");
    conn.batch_execute(&format!("PRAGMA busy_timeout = {configured}"))?;
    match began {
        Ok(()) => Ok(true),
        Err(diesel::result::Error::DatabaseError(_, info))
            if info.message().contains("locked") || info.message().contains("busy") =>
        {
            Ok(false)
        }
        Err(error) => Err(error),
    }
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
    finish(conn, body)
}

/// Runs `body` in the transaction just begun, then commits, or rolls back
/// if it failed.
fn finish<T, E: From<DbError> + std::fmt::Display>(
    conn: &mut AnyConnection,
    body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E> {
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
                // On a connection the server dropped the rollback fails too,
                // and the pool discards the connection (PROD-2: the outage is
                // logged once, by the pool).
                let gone = matches!(rollback, diesel::result::Error::BrokenTransactionManager)
                    || DbError::from(rollback).outage().is_some();
                if !gone {
                    tracing::error!("rollback failed after {error}");
                }
            }
            Err(error)
        }
    }
}

/// Locks a session row for the rest of the transaction, so that asking,
/// state changes and new turns of one session are serialized on
/// PostgreSQL, with each other and with claims, which lock the same row
/// `FOR SHARE` (CLAIM-4). On SQLite the transaction already holds the
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

/// Whether the bundle exists, keeping it from being deleted until the
/// transaction ends (PostgreSQL: `FOR KEY SHARE`, the lock a foreign key
/// check takes), so a row that references it can be written safely. On
/// SQLite the transaction already holds the database's write lock.
pub(crate) fn lock_bundle(conn: &mut AnyConnection, pending_id: &str) -> Result<bool, DbError> {
    use super::schema::bundles;
    use diesel::prelude::*;
    let found: Vec<String> = match conn {
        AnyConnection::Sqlite(conn) => bundles::table
            .find(pending_id)
            .select(bundles::pending_id)
            .load(conn)?,
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => bundles::table
            .find(pending_id)
            .select(bundles::pending_id)
            .for_key_share()
            .load(conn)?,
    };
    Ok(!found.is_empty())
}

/// Which sessions a visibility change reaches: those whose bundles may
/// take their task (AUTH-4) from the moved task, or from a task of the
/// workspace whose owner changes.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // read by PostgreSQL's locks only
pub(crate) enum Reach<'a> {
    /// A task moves to another workspace.
    Task(&'a str),
    /// A workspace changes owner.
    Workspace(&'a str),
}

/// CLAIM-4: a task move or an owner change takes the session lock of every
/// session it reaches (in id order, so two such changes never deadlock)
/// before it changes anything. A claim holds its session's lock from its
/// read to its commit, so the change waits for claims in flight, and a
/// claim that comes later re-checks visibility after the change committed.
/// On SQLite the transaction already holds the database's write lock.
pub(crate) fn lock_sessions_reached(
    conn: &mut AnyConnection,
    reach: Reach<'_>,
) -> Result<(), DbError> {
    #[cfg(feature = "postgres")]
    if let AnyConnection::Postgres(conn) = conn {
        use super::schema::{bundles, sessions, tasks};
        use diesel::prelude::*;
        let task_ids: Vec<String> = match reach {
            Reach::Task(task_id) => vec![task_id.to_owned()],
            Reach::Workspace(workspace_id) => tasks::table
                .filter(tasks::workspace_id.eq(workspace_id))
                .select(tasks::id)
                .load(conn)?,
        };
        let by_bundle = bundles::table
            .filter(bundles::task_key.eq_any(&task_ids))
            .select(bundles::session_id);
        sessions::table
            .filter(
                sessions::task_id
                    .eq_any(&task_ids)
                    .or(sessions::id.eq_any(by_bundle)),
            )
            .order_by(sessions::id)
            .select(sessions::id)
            .for_update()
            .load::<String>(conn)?;
    }
    let _ = (conn, reach);
    Ok(())
}

/// How [`hold`] holds a task or workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // read by PostgreSQL's locks only
pub(crate) enum Hold {
    /// The change rewrites what the task or workspace means for visibility.
    Exclusive,
    /// The change reads it to compute visibility keys (OPS-3a).
    Shared,
}

/// OPS-3a: on PostgreSQL, a transaction-scoped advisory lock on a task or
/// workspace id, so a change that rewrites the bundles' visibility keys and
/// one that computes keys from the same task or workspace never interleave
/// (under READ COMMITTED, either could otherwise miss the other's
/// uncommitted rows). Advisory, because the row may not exist yet: a
/// workspace created for a dangling id. Taken after the session locks, tasks
/// before workspaces, so no two changes wait on each other in a cycle. On
/// SQLite the transaction already holds the database's write lock.
pub(crate) fn hold(conn: &mut AnyConnection, key: Reach<'_>, mode: Hold) -> Result<(), DbError> {
    #[cfg(feature = "postgres")]
    if let AnyConnection::Postgres(conn) = conn {
        use diesel::prelude::*;
        use diesel::sql_types::{Integer, Text};
        let (namespace, id) = match key {
            Reach::Task(id) => (TASK_LOCKS, id),
            Reach::Workspace(id) => (WORKSPACE_LOCKS, id),
        };
        let statement = match mode {
            Hold::Exclusive => "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            Hold::Shared => "SELECT pg_advisory_xact_lock_shared($1, hashtext($2))",
        };
        diesel::sql_query(statement)
            .bind::<Integer, _>(namespace)
            .bind::<Text, _>(id)
            .execute(conn)?;
    }
    let _ = (conn, key, mode);
    Ok(())
}
