//! The one connection type: SQLite or PostgreSQL, chosen by the URL.

use diesel::SqliteConnection;

use super::url::Backend;

/// One connection to whichever backend the URL named. Typed queries run on it
/// unchanged; backend-specific SQL matches on the variant (see
/// `per_backend!`).
#[cfg(feature = "postgres")]
#[derive(diesel::MultiConnection)]
#[allow(missing_docs)]
pub enum AnyConnection {
    Sqlite(SqliteConnection),
    Postgres(diesel::PgConnection),
}

/// One connection to whichever backend the URL named (SQLite only in this build).
#[cfg(not(feature = "postgres"))]
#[derive(diesel::MultiConnection)]
#[allow(missing_docs)]
pub enum AnyConnection {
    Sqlite(SqliteConnection),
}

/// Which backend a connection talks to.
pub(crate) fn backend_of(conn: &AnyConnection) -> Backend {
    match conn {
        AnyConnection::Sqlite(_) => Backend::Sqlite,
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(_) => Backend::Postgres,
    }
}
