//! What the suites share. One harness for every behavioural test: each case
//! runs on a fresh SQLite file and on a fresh PostgreSQL schema, so tests
//! run in parallel. Beside it: the world-building helpers ([`world`]), the
//! principals ([`principals`]), requests and checks several suites use
//! ([`requests`], [`checks`]), bounds on how long a call takes
//! ([`timing`]), the C ABI as a host calls it ([`abi`]), programs outside
//! this binary ([`outside`]) and direct row access ([`rows`]).
//!
//! PostgreSQL: `CLARION_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`). When it is unreachable the
//! PostgreSQL half is skipped with a message — except under `CI=true`, where
//! that is a failure. With `CLARION_TEST_POOLER_URL` set (a transaction-mode
//! PgBouncer in front of that server, `.ci/setup`'s `ensure_pgbouncer`), the
//! PostgreSQL half runs through it instead (PROD-1): a fresh database per
//! case (a pooler forwards no `search_path`), opened with
//! `?pooler=transaction` and the server's own URL as the direct URL.

pub mod abi;
pub mod browser;
pub mod checks;
pub mod outside;
pub mod principals;
pub mod python;
pub mod requests;
pub mod rows;
pub mod schema_gen;
pub mod server;
pub mod timing;
pub mod webhooks;
pub mod world;

pub use checks::*;
pub use outside::*;
pub use principals::*;
pub use requests::*;
pub use timing::*;
pub use world::*;

use std::sync::Arc;
use std::time::Duration;

use clarion::test_hooks::AnyConnection;
use clarion::{Builder, Clarion, ManualClock, SequentialIds, Timestamp};

/// 2026-11-29T20:00:00Z: every test clock starts here.
pub const EPOCH: Timestamp = Timestamp::from_micros(1_795_982_400_000_000);

pub struct TestDb {
    pub clarion: Clarion,
    pub clock: Arc<ManualClock>,
    /// Shared by every handle on this database, so ids never collide.
    pub ids: Arc<SequentialIds>,
    pub url: String,
    /// PROD-1: the server itself, when `url` goes through a pooler.
    pub direct_url: Option<String>,
    _place: Place,
}

enum Place {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    #[cfg(feature = "postgres")]
    Postgres {
        base_url: String,
        schema: String,
    },
    /// A database of its own, reached through a pooler.
    #[cfg(feature = "postgres")]
    Pooled {
        base_url: String,
        database: String,
    },
}

impl Drop for Place {
    fn drop(&mut self) {
        #[cfg(feature = "postgres")]
        {
            use diesel::connection::SimpleConnection;
            use diesel::Connection;
            let (base_url, drop) = match self {
                Place::Postgres { base_url, schema } => {
                    (base_url, format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                }
                // The pooler's server connections to it end with it.
                Place::Pooled { base_url, database } => (
                    base_url,
                    format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"),
                ),
                Place::Sqlite(_) => return,
            };
            if let Ok(mut conn) = diesel::PgConnection::establish(base_url) {
                let _ = conn.batch_execute(&drop);
            }
        }
    }
}

impl std::ops::Deref for TestDb {
    type Target = Clarion;
    fn deref(&self) -> &Clarion {
        &self.clarion
    }
}

impl TestDb {
    /// A builder for another handle on the same database, sharing its clock
    /// and id source.
    pub fn builder(&self) -> Builder {
        let builder = Clarion::builder(&self.url)
            .clock(self.clock.clone())
            .ids(self.ids.clone());
        match &self.direct_url {
            Some(direct) => builder.direct_url(direct),
            None => builder,
        }
    }

    /// Opens another handle on the same database (a second "process").
    pub fn reopen(&self) -> Clarion {
        self.builder().open().expect("reopen test database")
    }

    /// Another handle on the same database whose waits poll every `poll`.
    pub fn reopen_polling(&self, poll: Duration) -> Clarion {
        self.builder()
            .poll_interval(poll)
            .open()
            .expect("open a waiting handle")
    }

    /// The URL a raw connection of a test takes to this database: the
    /// server itself, also when the handle goes through a pooler (PROD-1;
    /// libpq knows no `pooler` parameter).
    pub fn server_url(&self) -> &str {
        self.direct_url.as_deref().unwrap_or(&self.url)
    }

    /// Runs `body` on a raw connection, for rows clarion never writes (DM-1).
    pub fn raw<T>(&self, body: impl FnOnce(&mut AnyConnection) -> T) -> T {
        self.clarion
            .with_raw_connection(body)
            .expect("raw connection")
    }
}

fn open(url: &str, direct_url: Option<&str>) -> (Clarion, Arc<ManualClock>, Arc<SequentialIds>) {
    let clock = Arc::new(ManualClock::new(EPOCH));
    let ids = Arc::new(SequentialIds::default());
    let mut builder = Clarion::builder(url);
    if let Some(direct) = direct_url {
        builder = builder.direct_url(direct);
    }
    let clarion = builder
        .clock(clock.clone())
        .ids(ids.clone())
        .open()
        .unwrap_or_else(|e| panic!("open {url}: {e}"));
    (clarion, clock, ids)
}

pub fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("clarion.db").display());
    let (clarion, clock, ids) = open(&url, None);
    TestDb {
        clarion,
        clock,
        ids,
        url,
        direct_url: None,
        _place: Place::Sqlite(dir),
    }
}

#[cfg(feature = "postgres")]
static SCHEMA_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[cfg(feature = "postgres")]
pub fn postgres_base_url() -> String {
    std::env::var("CLARION_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A schema or database name no other case of any run uses.
#[cfg(feature = "postgres")]
fn fresh_name(prefix: &str) -> String {
    format!(
        "{prefix}{}_{}_{}",
        std::process::id(),
        SCHEMA_COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    )
}

/// A fresh schema on the test server, or `None` (skip) when the server is
/// unreachable outside CI.
#[cfg(feature = "postgres")]
pub fn postgres() -> Option<TestDb> {
    use diesel::Connection;
    let base_url = postgres_base_url();
    let mut admin = match diesel::PgConnection::establish(&base_url) {
        Ok(conn) => conn,
        Err(e) if under_ci() => {
            panic!("PostgreSQL at {base_url} is unreachable under CI=true: {e}")
        }
        Err(e) => {
            eprintln!("skipping the PostgreSQL half: {base_url} is unreachable: {e}");
            return None;
        }
    };
    let schema = fresh_name("clarion_t");
    if let Some(pooler_url) = pooler_url() {
        return Some(pooled(&mut admin, base_url, &pooler_url, schema));
    }
    Some(in_schema(&mut admin, base_url, schema))
}

/// PROD-1: a fresh database reached through the transaction-mode pooler
/// (`CLARION_TEST_POOLER_URL`, else `.ci/setup`'s PgBouncer on port 6432),
/// or `None` (skip) when it is unreachable outside CI.
#[cfg(feature = "postgres")]
pub fn postgres_through_pooler() -> Option<TestDb> {
    use diesel::Connection;
    let pooler_url =
        pooler_url().unwrap_or_else(|| "postgres://postgres@127.0.0.1:6432".to_owned());
    let reachable = diesel::PgConnection::establish(&with_database(&pooler_url, "test"));
    match reachable {
        Ok(_) => {}
        Err(e) if under_ci() => {
            panic!("the pooler at {pooler_url} is unreachable under CI=true: {e}")
        }
        Err(e) => {
            eprintln!("skipping: the pooler at {pooler_url} is unreachable: {e}");
            return None;
        }
    }
    let base_url = postgres_base_url();
    let mut admin = diesel::PgConnection::establish(&base_url).ok()?;
    let database = fresh_name("clarion_p");
    Some(pooled(&mut admin, base_url, &pooler_url, database))
}

/// A fresh schema of the test database, named by the URL's `search_path`.
#[cfg(feature = "postgres")]
fn in_schema(admin: &mut diesel::PgConnection, base_url: String, schema: String) -> TestDb {
    use diesel::connection::SimpleConnection;
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .expect("create test schema");
    let separator = if base_url.contains('?') { '&' } else { '?' };
    let url = format!("{base_url}{separator}options=-c%20search_path%3D{schema}");
    let (clarion, clock, ids) = open(&url, None);
    TestDb {
        clarion,
        clock,
        ids,
        url,
        direct_url: None,
        _place: Place::Postgres { base_url, schema },
    }
}

/// PROD-1: the transaction-mode pooler the PostgreSQL half goes through,
/// when `CLARION_TEST_POOLER_URL` names one (`postgres://user@host:port`,
/// no database).
#[cfg(feature = "postgres")]
pub fn pooler_url() -> Option<String> {
    std::env::var("CLARION_TEST_POOLER_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

/// `base_url` with its database (the path) replaced by `database`.
#[cfg(feature = "postgres")]
pub fn with_database(base_url: &str, database: &str) -> String {
    let (url, query) = base_url
        .split_once('?')
        .map_or((base_url, None), |(url, query)| (url, Some(query)));
    let authority_end = url
        .find("://")
        .map(|scheme| scheme + 3)
        .and_then(|start| url[start..].find('/').map(|slash| start + slash))
        .unwrap_or(url.len());
    let mut out = format!("{}/{database}", &url[..authority_end]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// A fresh database reached through the pooler, with the server's own URL
/// as the direct one.
#[cfg(feature = "postgres")]
fn pooled(
    admin: &mut diesel::PgConnection,
    base_url: String,
    pooler_url: &str,
    database: String,
) -> TestDb {
    use diesel::connection::SimpleConnection;
    admin
        .batch_execute(&format!("CREATE DATABASE {database}"))
        .expect("create test database");
    let url = format!(
        "{}?pooler=transaction",
        with_database(pooler_url, &database)
    );
    let direct_url = with_database(&base_url, &database);
    let (clarion, clock, ids) = open(&url, Some(&direct_url));
    TestDb {
        clarion,
        clock,
        ids,
        url,
        direct_url: Some(direct_url),
        _place: Place::Pooled { base_url, database },
    }
}

/// Runs each named case on both backends. Beside a plain function
/// `fn act_1_x(db: &TestDb) { ... }`, `dual_backend!(act_1_x, act_1_y);`
/// gives the tests `act_1_x::sqlite` and `act_1_x::postgres` (so `cargo
/// test -- postgres` selects every PostgreSQL half); the PostgreSQL half is
/// skipped when the server is unreachable outside CI (see [`postgres`]).
/// Attributes written before a name go on its module: a case whose function
/// carries a `#[cfg(...)]` names it as `#[cfg(...)] act_1_x`.
macro_rules! dual_backend {
    ($( $(#[$meta:meta])* $name:ident ),* $(,)?) => {
        $(
            $(#[$meta])*
            mod $name {
                #[test]
                fn sqlite() {
                    super::$name(&$crate::support::sqlite());
                }

                #[cfg(feature = "postgres")]
                #[test]
                fn postgres() {
                    if let Some(db) = $crate::support::postgres() {
                        super::$name(&db);
                    }
                }
            }
        )*
    };
}
