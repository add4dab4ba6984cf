//! Embedded migrations, one folder per backend, serialized so several
//! processes may open one fresh database at once.

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::Connection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use super::connection::{backend_of, AnyConnection};
use super::error::OpenError;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
#[cfg(feature = "postgres")]
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// Runs the embedded migrations of the connection's backend. Several
/// processes may open one fresh database at once, so migrating is serialized:
/// SQLite by taking the write lock up front, PostgreSQL by an advisory lock.
pub(super) fn migrate(conn: &mut AnyConnection) -> Result<(), OpenError> {
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
                diesel::connection::SimpleConnection::batch_execute(
                    conn,
                    "SELECT pg_advisory_xact_lock(7426118023)",
                )?;
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
