//! Sweeping (EXP-4): `expire_due` settles due bundles in deadline order,
//! at most `limit` of them; the sweeper thread does it by itself, wakes
//! for a deadline, and ends on close (REL-7); several sweepers settle
//! each bundle once.

use std::time::Duration;

use clarion::{Error, Expiry, OnExpire, Principal};
use serde_json::json;

use crate::deadlines_settling::ask_due;
use crate::doors_json_support::{mirror_by_call, ok, SYSTEM};
use crate::support::rows;
use crate::support::*;

dual_backend!(
    exp_4_settles_in_deadline_order_up_to_limit,
    exp_4_limit_clamped_to_one_at_least,
    exp_4_through_the_json_door_and_the_command_line,
    exp_4_the_sweeper_settles_with_nobody_calling,
    exp_4_two_sweepers_settle_each_bundle_once,
    exp_4_sweepers_in_two_processes_settle_each_bundle_once,
    rel_7_close_ends_the_sweeper
);

/// EXP-4, AUD-1: two `clarion expire-due` processes started together on
/// the same due bundles (due by the system clock, which the processes
/// keep) settle each exactly once between them: their counts add up, one
/// closing event and one deadline entry per bundle.
fn exp_4_sweepers_in_two_processes_settle_each_bundle_once(db: &TestDb) {
    const DUE: usize = 120;
    let session = mirror(db, "a", "alice");
    // The test clock is days behind the system clock: a minute after it
    // is long past for the processes.
    let ids: Vec<String> = (0..DUE).map(|_| ask_due_in(db, &session, 60)).collect();
    let settled: u64 = two_sweep_processes(db)
        .iter()
        .map(|body| body["settled"].as_u64().unwrap())
        .sum();
    assert_eq!(settled, DUE as u64, "each settled by exactly one process");
    assert!(ids.iter().all(|id| expired(db, id)));
    let closed = closed_events(db);
    assert_eq!(closed, DUE, "one bundle.closed each");
    for id in &ids {
        let ledger = db.attempts(&Principal::System, id).unwrap();
        assert_eq!(ledger.len(), 1, "{id}: {ledger:?}");
        assert_eq!(
            (ledger[0].channel.as_str(), ledger[0].outcome.as_str()),
            ("deadline", "expired")
        );
    }
}

/// The replies of two `clarion expire-due --limit 1000` processes started
/// together on `db` (they keep the system clock).
pub fn two_sweep_processes(db: &TestDb) -> Vec<serde_json::Value> {
    let sweep = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_clarion"))
            .args(["expire-due", "--limit", "1000", "--database-url", &db.url])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let sweepers = [sweep(), sweep()];
    sweepers
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "{output:?}");
            let reply: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            reply["body"].clone()
        })
        .collect()
}

/// A one-question bundle on `session` that expires `seconds` after the
/// test clock.
fn ask_due_in(db: &TestDb, session: &str, seconds: u64) -> String {
    ask_due(db, session, Duration::from_secs(seconds), OnExpire::Expire)
}

/// How many `bundle.closed` events the log holds.
fn closed_events(db: &TestDb) -> usize {
    crate::events::wait_until_readable(db);
    db.events_after(&Principal::System, "", Some(1000))
        .unwrap()
        .events
        .into_iter()
        .filter(|event| event.event_type == "bundle.closed")
        .count()
}

fn expired(db: &TestDb, pending_id: &str) -> bool {
    rows::statuses(db, pending_id) == [Some("expired".to_owned())]
}

/// EXP-4: the earliest deadlines first, `limit` per call; a bundle not
/// yet due is left alone; a sweep with nothing due settles nothing.
fn exp_4_settles_in_deadline_order_up_to_limit(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let late = ask_due_in(db, &session, 300);
    let first = ask_due_in(db, &session, 60);
    let second = ask_due_in(db, &session, 120);
    let not_yet = ask_due_in(db, &session, 3600);
    db.clock.advance_micros(301_000_000);
    assert_eq!(db.expire_due(Some(2)).unwrap().settled, 2);
    assert!(expired(db, &first) && expired(db, &second));
    assert!(
        !expired(db, &late),
        "the latest deadline waits for the next sweep"
    );
    assert_eq!(db.expire_due(None).unwrap().settled, 1);
    assert!(expired(db, &late));
    assert_eq!(db.expire_due(None).unwrap().settled, 0);
    assert!(!expired(db, &not_yet));
}

/// EXP-4: `limit` below 1 means 1, above 1,000 means 1,000.
fn exp_4_limit_clamped_to_one_at_least(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for seconds in [60, 61, 62] {
        ask_due_in(db, &session, seconds);
    }
    db.clock.advance_micros(100_000_000);
    assert_eq!(db.expire_due(Some(0)).unwrap().settled, 1);
    assert_eq!(db.expire_due(Some(-5)).unwrap().settled, 1);
    assert_eq!(db.expire_due(Some(5000)).unwrap().settled, 1);
}

/// EXP-4: `expire_due {limit}` → `{"settled": n, "nudged": k}` (system only), and
/// `clarion expire-due --limit N` prints the same reply.
fn exp_4_through_the_json_door_and_the_command_line(db: &TestDb) {
    mirror_by_call(db);
    for seconds in [60, 61] {
        ask_due_in(db, "s-a", seconds);
    }
    db.clock.advance_micros(100_000_000);
    assert_eq!(
        ok(db, "expire_due", SYSTEM, json!({"limit": 1})),
        json!({"settled": 1, "nudged": 0})
    );
    let (status, _) = crate::doors_json_support::refused(
        db,
        "expire_due",
        crate::doors_json_support::ALICE,
        json!({}),
    );
    assert_eq!(status, 403);
    // The command line runs with the system clock, long past the
    // test clock's deadlines.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["expire-due", "--limit", "5", "--database-url", &db.url])
        .output()
        .unwrap();
    let reply: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(reply["body"], json!({"settled": 1, "nudged": 0}), "{reply}");
    assert_eq!(output.status.code(), Some(0));
}

/// EXP-4: a handle built with `sweep_deadlines` settles a due bundle by
/// itself — the default is written, its event appended — with nobody
/// calling.
fn exp_4_the_sweeper_settles_with_nobody_calling(db: &TestDb) {
    let sweeping = db
        .builder()
        .sweep_deadlines(Duration::from_millis(20))
        .open()
        .unwrap();
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.expires = Some(Expiry::In(Duration::from_secs(1)));
    request.on_expire = OnExpire::Reject {
        reject_reason: "timed out".to_owned(),
    };
    let id = sweeping.ask(&request).unwrap().pending_id;
    db.clock.advance_micros(1_000_000);
    eventually(Duration::from_secs(30), "the sweeper settles it", || {
        rows::statuses(db, &id) == [Some("rejected".to_owned())]
    });
    let shown = db.get_bundle(&Principal::System, &id).unwrap();
    assert_eq!(shown.response.unwrap().reject_reason, "timed out");
    sweeping.close();
}

/// EXP-4: two handles sweeping the same database at once settle each due
/// bundle exactly once: one closing event per bundle.
fn exp_4_two_sweepers_settle_each_bundle_once(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let ids: Vec<String> = (0..12).map(|n| ask_due_in(db, &session, 60 + n)).collect();
    let sweepers: Vec<clarion::Clarion> = (0..2)
        .map(|_| {
            db.builder()
                .sweep_deadlines(Duration::from_millis(10))
                .open()
                .unwrap()
        })
        .collect();
    db.clock.advance_micros(120_000_000);
    eventually(Duration::from_secs(30), "every bundle settled", || {
        ids.iter().all(|id| expired(db, id))
    });
    let closed = closed_events(db);
    assert_eq!(closed, ids.len(), "one bundle.closed each");
    for sweeper in sweepers {
        sweeper.close();
    }
}

/// REL-7: closing a sweeping handle ends its sweeper thread (joined
/// before `close` returns), and the closed handle settles nothing more.
fn rel_7_close_ends_the_sweeper(db: &TestDb) {
    let sweeping = db
        .builder()
        .sweep_deadlines(Duration::from_millis(10))
        .open()
        .unwrap();
    assert!(clarion::test_hooks::sweeper_running(&sweeping));
    let session = mirror(db, "a", "alice");
    let id = ask_due_in(db, &session, 60);
    sweeping.close();
    assert!(
        !clarion::test_hooks::sweeper_running(&sweeping),
        "joined by close"
    );
    db.clock.advance_micros(61_000_000);
    assert!(matches!(
        sweeping.expire_due(None),
        Err(Error::HandleClosed)
    ));
    assert!(!expired(db, &id), "nothing swept after close");
    assert_eq!(db.expire_due(None).unwrap().settled, 1);
}
