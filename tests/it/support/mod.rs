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
//! that is a failure.

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
    _place: Place,
}

enum Place {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    #[cfg(feature = "postgres")]
    Postgres {
        base_url: String,
        schema: String,
    },
}

impl Drop for Place {
    fn drop(&mut self) {
        #[cfg(feature = "postgres")]
        if let Place::Postgres { base_url, schema } = self {
            use diesel::connection::SimpleConnection;
            use diesel::Connection;
            if let Ok(mut conn) = diesel::PgConnection::establish(base_url) {
                let _ = conn.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
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
        Clarion::builder(&self.url)
            .clock(self.clock.clone())
            .ids(self.ids.clone())
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

    /// Runs `body` on a raw connection, for rows clarion never writes (DM-1).
    pub fn raw<T>(&self, body: impl FnOnce(&mut AnyConnection) -> T) -> T {
        self.clarion
            .with_raw_connection(body)
            .expect("raw connection")
    }
}

fn open(url: &str) -> (Clarion, Arc<ManualClock>, Arc<SequentialIds>) {
    let clock = Arc::new(ManualClock::new(EPOCH));
    let ids = Arc::new(SequentialIds::default());
    let clarion = Clarion::builder(url)
        .clock(clock.clone())
        .ids(ids.clone())
        .open()
        .unwrap_or_else(|e| panic!("open {url}: {e}"));
    (clarion, clock, ids)
}

pub fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("clarion.db").display());
    let (clarion, clock, ids) = open(&url);
    TestDb {
        clarion,
        clock,
        ids,
        url,
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

/// A fresh schema on the test server, or `None` (skip) when the server is
/// unreachable outside CI.
#[cfg(feature = "postgres")]
pub fn postgres() -> Option<TestDb> {
    use diesel::connection::SimpleConnection;
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
    let schema = format!(
        "clarion_t{}_{}_{}",
        std::process::id(),
        SCHEMA_COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    );
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .expect("create test schema");
    let separator = if base_url.contains('?') { '&' } else { '?' };
    let url = format!("{base_url}{separator}options=-c%20search_path%3D{schema}");
    let (clarion, clock, ids) = open(&url);
    Some(TestDb {
        clarion,
        clock,
        ids,
        url,
        _place: Place::Postgres { base_url, schema },
    })
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
