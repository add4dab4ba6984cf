//! Opening a database: URL forms, real causes in errors, SQLite pragmas,
//! migrations that are idempotent and safe to race.

use clarion::{Clarion, OpenError, TaskUpsert};

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use crate::support::{self, TestDb};

fn open_error(url: &str) -> OpenError {
    Clarion::open(url).expect_err("opening should fail")
}

#[test]
fn unknown_scheme_is_refused_and_creates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("postgress://{}/x.db", dir.path().display());
    let error = open_error(&url);
    assert!(matches!(error, OpenError::InvalidUrl { .. }), "{error:?}");
    assert!(error.to_string().contains("unknown scheme"), "{error}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!(!std::path::Path::new("postgress:").exists());
}

#[test]
fn missing_directory_is_named() {
    let error = open_error("sqlite:///definitely/not/here/clarion.db");
    assert!(matches!(error, OpenError::InvalidUrl { .. }), "{error:?}");
    assert!(
        error.to_string().contains("/definitely/not/here"),
        "{error}"
    );
}

#[test]
fn empty_url_and_in_memory_are_refused() {
    assert!(matches!(open_error(""), OpenError::InvalidUrl { .. }));
    assert!(matches!(
        open_error("sqlite://"),
        OpenError::InvalidUrl { .. }
    ));
    assert!(matches!(
        open_error(":memory:"),
        OpenError::InvalidUrl { .. }
    ));
}

#[test]
fn zero_pool_size_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("c.db").display().to_string();
    let error = Clarion::builder(&url).pool_size(0).open().unwrap_err();
    assert!(matches!(error, OpenError::Config(_)), "{error:?}");
}

#[test]
fn sqlite_url_with_three_slashes_and_bare_path_open_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("same.db");
    let by_url = Clarion::open(&format!("sqlite://{}", path.display())).unwrap();
    by_url.upsert_task(TaskUpsert::new("t1")).unwrap();
    drop(by_url);
    let by_path = Clarion::open(&path.display().to_string()).unwrap();
    // Reopening migrates again (a no-op) and sees the data.
    by_path
        .upsert_session(clarion::SessionUpsert::new("s1", "t1"))
        .unwrap();
}

#[derive(QueryableByName)]
struct Pragma {
    #[diesel(sql_type = Text)]
    value: String,
}

#[test]
fn sqlite_connections_are_configured() {
    let db = support::sqlite();
    let read = |pragma: &str| -> String {
        db.raw(|conn| {
            diesel::sql_query(format!(
                "SELECT CAST(\"{pragma}\" AS TEXT) AS value FROM pragma_{pragma}"
            ))
            .get_result::<Pragma>(conn)
            .unwrap()
            .value
        })
    };
    assert_eq!(read("journal_mode"), "wal");
    assert_eq!(read("synchronous"), "2", "FULL (REL-5)");
    assert_eq!(read("foreign_keys"), "1");
    #[derive(QueryableByName)]
    struct Timeout {
        #[diesel(sql_type = BigInt)]
        timeout: i64,
    }
    let timeout = db.raw(|conn| {
        diesel::sql_query("PRAGMA busy_timeout")
            .get_result::<Timeout>(conn)
            .unwrap()
            .timeout
    });
    assert_eq!(timeout, 5000);
}

#[test]
fn racing_opens_of_a_fresh_sqlite_file_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("race.db").display());
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || Clarion::open(&url).map(|_| ()))
        })
        .collect();
    for handle in handles {
        handle.join().unwrap().unwrap();
    }
}

#[cfg(not(feature = "postgres"))]
#[test]
fn postgres_url_without_the_feature_says_so() {
    let error = open_error("postgres://postgres@127.0.0.1/test");
    assert!(
        matches!(error, OpenError::PostgresNotCompiled { .. }),
        "{error:?}"
    );
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;

    #[test]
    fn unreachable_server_reports_the_real_cause() {
        let error = open_error("postgres://postgres@127.0.0.1:1/test");
        assert!(matches!(error, OpenError::Connect { .. }), "{error:?}");
        let text = error.to_string();
        assert!(text.contains("refused"), "{text}");
    }

    #[test]
    fn unknown_database_reports_the_server_message() {
        let base = support::postgres_base_url();
        let Some((server, _)) = base.rsplit_once('/') else {
            panic!("{base}")
        };
        if support::postgres().is_none() {
            return;
        }
        let error = open_error(&format!("{server}/clarion_no_such_database"));
        let text = error.to_string();
        assert!(
            text.contains("clarion_no_such_database") && text.contains("does not exist"),
            "{text}"
        );
    }

    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = Text)]
        value: String,
    }

    #[derive(QueryableByName)]
    struct Backend {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }

    fn backend_pid(db: &support::TestDb) -> i32 {
        db.raw(|conn| {
            diesel::sql_query("SELECT pg_backend_pid() AS pid")
                .get_result::<Backend>(conn)
                .unwrap()
                .pid
        })
    }

    /// Every statement keeps one generic plan (see `configure_postgres`).
    #[test]
    fn postgres_connections_are_configured() {
        let Some(db) = support::postgres() else {
            return;
        };
        let mode = db.raw(|conn| {
            diesel::sql_query("SELECT current_setting('plan_cache_mode') AS value")
                .get_result::<Setting>(conn)
                .unwrap()
                .value
        });
        assert_eq!(mode, "force_generic_plan");
    }

    /// A pooled connection that sat idle is checked before it is handed out
    /// again, so one the server dropped meanwhile is replaced rather than
    /// failing the caller's operation.
    #[test]
    fn an_idle_connection_the_server_dropped_is_replaced() {
        let Some(db) = support::postgres() else {
            return;
        };
        let session = support::mirror(&db, "idle", "alice");
        let dropped = backend_pid(&db);
        terminate(dropped);
        // Idle past the pool's 500 ms "recently used" window, so check-out
        // checks it: the behaviour under test, and only a lower bound.
        std::thread::sleep(std::time::Duration::from_millis(700));
        let asked = support::ask(&db, &session, 1);
        assert!(!asked.is_empty());
        assert_ne!(backend_pid(&db), dropped);
    }

    /// Ends the server process behind `pid` and waits until it is gone.
    fn terminate(pid: i32) {
        let mut admin = diesel::PgConnection::establish(&support::postgres_base_url()).unwrap();
        diesel::sql_query(format!("SELECT pg_terminate_backend({pid})"))
            .execute(&mut admin)
            .unwrap();
        support::eventually(
            std::time::Duration::from_secs(30),
            "the backend ended",
            || {
                diesel::sql_query(format!(
                    "SELECT pid FROM pg_stat_activity WHERE pid = {pid}"
                ))
                .load::<Backend>(&mut admin)
                .unwrap()
                .is_empty()
            },
        );
    }

    /// A connection the server dropped while it was in steady use (too
    /// recently used to be checked on check-out) fails the one operation
    /// that finds it closed, and is then discarded: the next operation runs
    /// on a new connection.
    #[test]
    fn a_connection_found_closed_is_discarded() {
        let Some(db) = support::postgres() else {
            return;
        };
        let dropped = backend_pid(&db);
        terminate(dropped);
        // `authorize` reads with one statement and no transaction, so no
        // failed ROLLBACK marks the connection broken for the pool.
        let ask = || {
            db.authorize(
                &support::alice(),
                clarion::Operation::GetBundle,
                clarion::Target::Bundle("no-such-bundle"),
            )
        };
        // PROD-2: a connection found closed is an outage, said as one.
        let first = ask();
        assert!(
            matches!(
                first,
                Err(clarion::Error::Unavailable {
                    outage: clarion::Outage::Unavailable,
                    ..
                }) | Ok(clarion::Authorization::Denied(_))
            ),
            "{first:?}"
        );
        let second = ask();
        assert!(
            matches!(second, Ok(clarion::Authorization::Denied(_))),
            "{second:?}"
        );
        assert_ne!(backend_pid(&db), dropped);
    }

    #[test]
    fn racing_opens_of_a_fresh_schema_all_succeed() {
        let Some(db) = support::postgres() else {
            return;
        };
        // A second fresh schema, migrated by six handles at once.
        let fresh = db.url.replace("search_path%3D", "search_path%3Drace_");
        let schema = fresh.rsplit("search_path%3D").next().unwrap().to_owned();
        db.raw(|conn| {
            diesel::sql_query(format!("CREATE SCHEMA {schema}"))
                .execute(conn)
                .unwrap()
        });
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let url = fresh.clone();
                std::thread::spawn(move || Clarion::open(&url).map(|_| ()))
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        db.raw(|conn| {
            diesel::sql_query(format!("DROP SCHEMA {schema} CASCADE"))
                .execute(conn)
                .unwrap()
        });
        for result in results {
            result.unwrap();
        }
    }
}

/// The durability setting a handle's connection runs with: SQLite's
/// `synchronous` (2 = FULL, 1 = NORMAL) or PostgreSQL's `synchronous_commit`.
fn durability(clarion: &Clarion) -> String {
    clarion
        .with_raw_connection(|conn| {
            let sql = match clarion.backend() {
                clarion::Backend::Sqlite => {
                    "SELECT CAST(synchronous AS TEXT) AS value FROM pragma_synchronous"
                }
                clarion::Backend::Postgres => {
                    "SELECT current_setting('synchronous_commit') AS value"
                }
            };
            diesel::sql_query(sql)
                .get_result::<Pragma>(conn)
                .unwrap()
                .value
        })
        .unwrap()
}

dual_backend!(rel_5_commits_are_durable_by_default);

/// REL-5: by default a commit is on disk before the call returns
/// (SQLite `synchronous = FULL`; PostgreSQL `synchronous_commit = on`).
/// A host may choose SQLite's `NORMAL` through the builder.
fn rel_5_commits_are_durable_by_default(db: &TestDb) {
    let expected = match db.backend() {
        clarion::Backend::Sqlite => "2",
        clarion::Backend::Postgres => "on",
    };
    assert_eq!(durability(db), expected);
    let normal = db
        .builder()
        .synchronous(clarion::Synchronous::Normal)
        .open()
        .unwrap();
    let expected = match db.backend() {
        clarion::Backend::Sqlite => "1",
        clarion::Backend::Postgres => "on",
    };
    assert_eq!(durability(&normal), expected);
}
