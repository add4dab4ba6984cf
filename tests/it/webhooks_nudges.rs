//! NUDGE-2, NUDGE-5, HOOK-2: a real `clarion serve` process (its sweeper
//! and its webhook worker) takes a bundle's reminder and delivers
//! `bundle.reminded` to the real receiver, which verifies the signature
//! with the Standard Webhooks reference library. The bundle is asked on
//! the test's handle, whose clock is days behind the system clock the
//! process keeps: its first reminder, a minute after the ask, is long due
//! for the process, and its second (30 days on) still to come.

use std::time::Duration;

use clarion::{RemindersRequest, Timestamp};
use serde_json::json;

use crate::support::server::serve;
use crate::support::webhooks::*;
use crate::support::*;

dual_backend!(nudge_2_clarion_serve_delivers_the_reminder_signed);

const FIRST: Duration = Duration::from_secs(60);
/// The longest interval NUDGE-1 allows, so the next reminder stays ahead
/// of the system clock.
const EVERY: Duration = Duration::from_secs(30 * 24 * 3600);

fn nudge_2_clarion_serve_delivers_the_reminder_signed(db: &TestDb) {
    let Some(python) = verifier_python() else {
        return;
    };
    let receiver = Receiver::start(&python, &[]);
    // Subscribed to the reminder alone: `bundle.asked` is passed over.
    let (_, secret) = endpoint(db, &receiver.url("/hook/nudges"), &["bundle.reminded"], "");
    receiver.verify_with(&[&secret]);
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.reminders = Some(RemindersRequest {
        first_after: FIRST,
        every: Some(EVERY),
        max: Some(20),
    });
    let pending_id = db.ask(&request).unwrap().pending_id;

    let _served = serve(
        &db.url,
        &[
            "--open-as",
            "user:alice",
            "--webhook-timeout",
            "2s",
            "--webhook-first-retry",
            "100ms",
        ],
    );
    let deliveries = receiver.await_deliveries(1);
    // Reminder k (from 1) falls at ask + FIRST + (k - 1) × EVERY; the
    // sweep takes the latest due by the process's (system) clock.
    let asked = EPOCH.as_micros();
    let since_first = chrono::Utc::now().timestamp_micros() - (asked + FIRST.as_micros() as i64);
    let n = 1 + since_first / EVERY.as_micros() as i64;
    let next_at =
        Timestamp::from_micros(asked + FIRST.as_micros() as i64 + n * EVERY.as_micros() as i64)
            .to_rfc3339();

    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    let delivery = &deliveries[0];
    assert_eq!(delivery["path"], "/hook/nudges");
    assert_eq!(delivery["verified"][0], true, "not verified: {delivery}");
    assert!(delivery["signature"].as_str().unwrap().starts_with("v1,"));
    let body = &delivery["body"];
    assert_eq!(body["type"], "bundle.reminded");
    assert_eq!(body["data"]["pending_id"], pending_id.as_str());
    assert_eq!(body["data"]["task_id"], "t-a");
    assert_eq!(body["data"]["workspace_id"], "w-a");
    assert_eq!(body["data"]["event"], json!({"n": n, "next_at": next_at}));
    // Taken once: the process's later rounds neither repeat it nor deliver
    // anything else before the endpoint's cursor passes the log's head.
    eventually(ARRIVES, "the cursor passes the last event", || {
        db.webhook_list().unwrap().iter().all(|w| w.backlog == 0)
    });
    assert_eq!(receiver.deliveries().len(), 1, "the reminder once");
}
