//! PROD-1: clarion behind a transaction-mode pooler — Debian's PgBouncer,
//! started by `.ci/setup` — where every transaction may run on another
//! server connection. A pooled handle keeps nothing between transactions
//! (no named prepared statement, no session setting); `LISTEN` runs on the
//! direct URL beside it, and without one other processes' changes arrive
//! by polling. (The PostgreSQL suite's behavioural core also runs through
//! the pooler: `.ci/run`'s pooled pass, `CLARION_TEST_POOLER_URL`.)

#![cfg(feature = "postgres")]

use std::time::Duration;

use clarion::{Clarion, WaitOutcome};
use diesel::sql_types::BigInt;
use diesel::RunQueryDsl;

use crate::delivery_push::waiting;
use crate::support::*;

/// Far longer than any push takes: a waiter that woke sooner was pushed.
const LONG_POLL: Duration = Duration::from_secs(30);

/// Until `clarion`'s waiters have read their bundles once: they sleep.
fn until_read(clarion: &Clarion) {
    eventually(
        Duration::from_secs(60),
        "the waiter read its bundle",
        || clarion.watch_counts().reads >= 1,
    );
}

fn answered(outcome: clarion::Result<WaitOutcome>) {
    match outcome.unwrap() {
        WaitOutcome::Answered(response) => {
            assert_eq!(response.answers[0].custom_text, "from afar")
        }
        other => panic!("expected the answer, got {other:?}"),
    }
}

/// PROD-1: through the pooler, with `LISTEN` on the direct URL, an answer
/// committed by another OS process (itself pooled, with no direct URL)
/// wakes a waiter whose poll is 30 s within a second.
#[test]
fn prod_1_postgres_through_a_pooler_listen_on_the_direct_url_wakes_other_processes() {
    let Some(db) = postgres_through_pooler() else {
        return;
    };
    let session = mirror(&db, "x", "alice");
    let pending_id = ask(&db, &session, 1);
    let waiter_handle = db.reopen_polling(LONG_POLL);
    let waiter = waiting(&waiter_handle, &pending_id);
    until_read(&waiter_handle);
    assert!(
        waiter_handle.listener_pid().is_some(),
        "the handle listens on the direct URL"
    );
    let exited = answer_from_another_process(&db.url, &pending_id, "from afar");
    let (outcome, woke) = waiter.join().unwrap();
    answered(outcome);
    let late = woke.saturating_duration_since(exited);
    assert!(
        late < Duration::from_secs(1),
        "woke {late:?} after the answer"
    );
}

/// PROD-1: through the pooler with no direct URL nothing listens, and the
/// poll carries the wake-up: within a poll interval (here 300 ms, with
/// room for a loaded machine), never the wait's own timeout.
#[test]
fn prod_1_postgres_through_a_pooler_without_a_direct_url_other_processes_are_polled() {
    let Some(db) = postgres_through_pooler() else {
        return;
    };
    let session = mirror(&db, "x", "alice");
    let pending_id = ask(&db, &session, 1);
    let poll = Duration::from_millis(300);
    let waiter_handle = Clarion::builder(&db.url)
        .clock(db.clock.clone())
        .ids(db.ids.clone())
        .poll_interval(poll)
        .open()
        .unwrap();
    let waiter = waiting(&waiter_handle, &pending_id);
    until_read(&waiter_handle);
    assert_eq!(waiter_handle.listener_pid(), None, "nothing can listen");
    let exited = answer_from_another_process(&db.url, &pending_id, "from afar");
    let (outcome, woke) = waiter.join().unwrap();
    answered(outcome);
    let late = woke.saturating_duration_since(exited);
    assert!(
        late < poll + Duration::from_secs(3),
        "woke {late:?} after the answer; the poll is {poll:?}"
    );
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// The named prepared statements of the one connection of a one-connection
/// handle, after it has asked, listed and answered.
fn prepared_after_work(db: &TestDb, url: &str) -> i64 {
    let handle = Clarion::builder(url)
        .clock(db.clock.clone())
        .ids(db.ids.clone())
        .pool_size(1)
        .open()
        .unwrap();
    let session = mirror(&handle, "y", "bob");
    let pending_id = ask(&handle, &session, 2);
    handle
        .list_pending(&clarion::Principal::System, &Default::default())
        .unwrap();
    handle.get_bundle(&bob(), &pending_id).unwrap();
    handle
        .with_raw_connection(|conn| {
            diesel::sql_query("SELECT count(*) AS n FROM pg_prepared_statements")
                .get_result::<Count>(conn)
                .unwrap()
                .n
        })
        .unwrap()
}

/// PROD-1: `?pooler=transaction` leaves no named prepared statement on a
/// connection (each statement is parsed, bound and run in one round
/// trip), while the default prepares and keeps them. Checked straight on
/// the server, where a connection's statements can be counted.
#[test]
fn prod_1_postgres_pooler_mode_keeps_no_named_statement() {
    let Some(db) = postgres() else {
        return;
    };
    // The server itself, also when the suite runs through the pooler.
    let server = db.server_url().to_owned();
    let separator = if server.contains('?') { '&' } else { '?' };
    let pooled = format!("{server}{separator}pooler=transaction");
    assert_eq!(prepared_after_work(&db, &pooled), 0);
    assert!(
        prepared_after_work(&db, &server) > 0,
        "the default prepares"
    );
}

/// Opens through the C ABI: the handle, or `clarion_last_error`.
fn abi_open_config(config: serde_json::Value) -> Result<*mut clarion::ffi::Handle, String> {
    use std::ffi::{CStr, CString};
    let config = CString::new(config.to_string()).unwrap();
    let handle = unsafe { clarion::ffi::clarion_open(config.as_ptr()) };
    if handle.is_null() {
        let error = unsafe { CStr::from_ptr(clarion::ffi::clarion_last_error()) };
        return Err(error.to_string_lossy().into_owned());
    }
    Ok(handle)
}

/// PROD-1 through the C ABI: `direct_database_url` beside a pooled URL
/// opens a handle that answers (and listens on the direct URL); a value
/// that is no string, or a direct URL beside SQLite, is refused by name.
#[test]
fn prod_1_postgres_the_c_abi_takes_a_direct_url() {
    let Some(db) = postgres_through_pooler() else {
        return;
    };
    let handle = abi_open_config(serde_json::json!({
        "database_url": db.url,
        "direct_database_url": db.server_url(),
    }))
    .unwrap();
    let reply = crate::support::abi::abi_call(
        handle as usize,
        &serde_json::json!({"op": "list_pending", "principal": {"kind": "system"}, "args": {}}),
    );
    assert_eq!(reply["status"], 200, "{reply}");
    clarion::ffi::clarion_close(handle);

    let refused = abi_open_config(serde_json::json!({
        "database_url": db.url,
        "direct_database_url": 5,
    }));
    assert_eq!(
        refused.unwrap_err(),
        "config.direct_database_url: expected a string"
    );
    let beside_sqlite = abi_open_config(serde_json::json!({
        "database_url": "/tmp/clarion-prod-1.db",
        "direct_database_url": db.server_url(),
    }));
    assert!(
        beside_sqlite.unwrap_err().contains("not a SQLite one"),
        "a direct URL beside SQLite is refused"
    );
}
