//! HOOK-2..4, HOOK-6: delivery to a real receiver on loopback that
//! verifies every signature with the Standard Webhooks reference library
//! (`tests/webhooks/receiver.py`). The worker runs on a handle of its own
//! with the real clock; the test's handle (the manual clock) asks.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clarion::{Principal, WebhookOptions};
use serde_json::{json, Value};

use crate::http_events::positions;
use crate::support::server::{clarion, get, serve, start, tokens};
use crate::support::webhooks::*;
use crate::support::*;

dual_backend!(
    hook_2_every_event_arrives_in_order_signed,
    hook_2_the_type_and_workspace_filters,
    hook_2_gone_disables_the_endpoint,
    hook_2_a_redirect_is_a_failure_never_followed,
    hook_2_a_receiver_down_then_up_gets_every_event_in_order,
    hook_2_a_failed_event_is_tried_again_with_the_same_id,
    hook_2_a_slow_receiver_times_out_then_is_retried,
    hook_2_failing_after_the_give_up_time_then_enable_resumes_at_the_cursor,
    hook_2_an_open_transaction_delays_delivery_but_never_reorders_it,
    hook_2_a_worker_killed_mid_delivery_is_followed_with_the_same_id,
    hook_2_two_workers_never_deliver_one_event_at_once,
    hook_3_during_the_overlap_both_secrets_sign_then_the_new_one_alone,
    hook_3_webhook_test_sends_one_signed_test_event,
    hook_3_the_readme_relay_verifies_and_relays,
    hook_4_clarion_serve_delivers_and_the_worker_ends_on_close,
    hook_5_enable_past_the_horizon_delivers_from_the_head,
    hook_6_the_list_and_metrics_show_each_endpoint,
);

/// The receiver with one secret, the endpoint at `path` on it (every
/// event type, every workspace), and its id; `None` to skip.
fn receiving(db: &TestDb, path: &str) -> Option<(Receiver, String)> {
    let python = verifier_python()?;
    let receiver = Receiver::start(&python, &[]);
    let (id, secret) = endpoint(db, &receiver.url(path), &[], "");
    receiver.verify_with(&[&secret]);
    Some((receiver, id))
}

fn evt(position: &str) -> String {
    format!("evt_{position}")
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn hook_2_every_event_arrives_in_order_signed(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &first, &one_answer("yes"))
        .unwrap();
    db.cancel_bundle(&Principal::System, &second).unwrap();
    let _worker = worker(db, quick());
    let deliveries = receiver.await_deliveries(4);
    assert_eq!(deliveries.len(), 4, "{deliveries:?}");
    all_verified(&deliveries);
    assert_eq!(
        what(&deliveries),
        [
            ("bundle.asked".into(), first.clone()),
            ("bundle.asked".into(), second.clone()),
            ("bundle.resolved".into(), first.clone()),
            ("bundle.resolved".into(), second.clone()),
        ]
    );
    let expected: Vec<String> = positions(db).iter().map(|p| evt(p)).collect();
    assert_eq!(ids(&deliveries), expected, "webhook-id is evt_<position>");

    // HOOK-3: the exact body, its keys in order, and the headers.
    let log = db
        .events_after(&Principal::System, "", Some(1000))
        .unwrap()
        .events;
    for (delivery, event) in deliveries.iter().zip(&log) {
        assert_eq!(delivery["content_type"], "application/json");
        let body = &delivery["body"];
        assert_eq!(keys(body), ["type", "timestamp", "data"]);
        assert_eq!(
            keys(&body["data"]),
            [
                "position",
                "pending_id",
                "task_id",
                "workspace_id",
                "kind",
                "event"
            ]
        );
        assert_eq!(body["timestamp"], json!(event.at));
        assert_eq!(body["data"]["position"], event.position.as_str());
        assert_eq!(body["data"]["task_id"], "t-a");
        assert_eq!(body["data"]["workspace_id"], "w-a");
        assert_eq!(body["data"]["kind"], "question");
        assert_eq!(
            body["data"]["event"],
            serde_json::to_value(&event.data).unwrap()
        );
        let sent: i64 = delivery["timestamp"].as_str().unwrap().parse().unwrap();
        let now = chrono::Utc::now().timestamp();
        assert!(
            (now - 120..=now + 1).contains(&sent),
            "the attempt's time: {sent}"
        );
        assert!(delivery["signature"].as_str().unwrap().starts_with("v1,"));
        assert!(!delivery["signature"].as_str().unwrap().contains(' '));
    }
    eventually(ARRIVES, "the cursor passes the last event", || {
        listed(db, &id).backlog == 0
    });
    let view = listed(db, &id);
    assert_eq!(view.cursor, *positions(db).last().unwrap());
    assert_eq!(view.last_error, "");
    assert!(view.last_attempt_at.is_some());
}

fn hook_2_the_type_and_workspace_filters(db: &TestDb) {
    let Some(python) = verifier_python() else {
        return;
    };
    let receiver = Receiver::start(&python, &[]);
    let (_, resolved_only) = endpoint(db, &receiver.url("/hook/types"), &["bundle.resolved"], "");
    let (_, in_a) = endpoint(db, &receiver.url("/hook/place"), &[], "w-a");
    receiver.verify_with(&[&resolved_only, &in_a]);
    let in_workspace_a = mirror(db, "a", "alice");
    let in_workspace_b = mirror(db, "b", "bob");
    let a = ask(db, &in_workspace_a, 1);
    let b = ask(db, &in_workspace_b, 1);
    db.resolve_bundle(&bob(), &b, &one_answer("b")).unwrap();
    db.resolve_bundle(&alice(), &a, &one_answer("a")).unwrap();
    let _worker = worker(db, quick());
    // Two resolutions to the first, a's two events to the second.
    let deliveries = receiver.await_deliveries(4);
    let at = |path: &str| -> Vec<Value> {
        deliveries
            .iter()
            .filter(|d| d["path"] == path)
            .cloned()
            .collect()
    };
    let types = at("/hook/types");
    assert_eq!(
        what(&types),
        [
            ("bundle.resolved".into(), b.clone()),
            ("bundle.resolved".into(), a.clone())
        ]
    );
    assert!(types.iter().all(|d| d["verified"][0] == true));
    let place = at("/hook/place");
    assert_eq!(
        what(&place),
        [
            ("bundle.asked".into(), a.clone()),
            ("bundle.resolved".into(), a.clone())
        ]
    );
    assert!(place.iter().all(|d| d["verified"][1] == true));
    // The events passed over moved both cursors to the head.
    eventually(ARRIVES, "both cursors at the head", || {
        db.webhook_list().unwrap().iter().all(|w| w.backlog == 0)
    });
    assert_eq!(receiver.deliveries().len(), 4, "nothing else was delivered");
}

fn hook_2_gone_disables_the_endpoint(db: &TestDb) {
    let Some((receiver, gone)) = receiving(db, "/gone") else {
        return;
    };
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    let _worker = worker(db, quick());
    let deliveries = receiver.await_deliveries(1);
    assert_eq!(deliveries[0]["answered"], 410);
    eventually(ARRIVES, "410 disables the endpoint", || {
        listed(db, &gone).state == "disabled"
    });
    let view = listed(db, &gone);
    assert!(view.last_error.contains("410"), "{}", view.last_error);
    assert_eq!(view.backlog, 1, "the event was not delivered");
    // A later endpoint gets a later event; the disabled one gets nothing.
    let (later, secret) = endpoint(db, &receiver.url("/hook"), &[], "");
    receiver.verify_with(&[&secret]);
    let second = ask(db, &session, 1);
    let deliveries = receiver.await_deliveries(2);
    assert_eq!(
        what(&deliveries),
        [
            ("bundle.asked".into(), first),
            ("bundle.asked".into(), second)
        ]
    );
    assert_eq!(deliveries[1]["path"], "/hook");
    assert_eq!(listed(db, &later).state, "enabled");
    assert_eq!(listed(db, &gone).state, "disabled");
}

fn hook_2_a_redirect_is_a_failure_never_followed(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/redirect") else {
        return;
    };
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let _worker = worker(db, quick());
    let deliveries = receiver.await_deliveries(2);
    assert!(deliveries.iter().all(|d| d["answered"] == 301));
    assert_eq!(
        deliveries[0]["id"], deliveries[1]["id"],
        "the same event again"
    );
    let followed: Vec<Value> = client_get(&receiver.url("/followed"));
    assert!(followed.is_empty(), "a redirect was followed: {followed:?}");
    let view = listed(db, &id);
    assert_eq!(view.state, "enabled");
    assert_eq!(view.backlog, 1);
    assert!(view.last_error.contains("301"), "{}", view.last_error);
}

fn client_get<T: serde::de::DeserializeOwned>(url: &str) -> T {
    crate::support::server::client()
        .get(url)
        .send()
        .unwrap()
        .json()
        .unwrap()
}

fn hook_2_a_receiver_down_then_up_gets_every_event_in_order(db: &TestDb) {
    let Some(python) = verifier_python() else {
        return;
    };
    // A port nothing listens on, until the receiver comes up on it.
    let placeholder = Receiver::start(&python, &[]);
    let port = placeholder.port;
    placeholder.stop();
    let (id, secret) = endpoint(db, &format!("http://127.0.0.1:{port}/hook"), &[], "");
    let session = mirror(db, "a", "alice");
    let asked = [
        ask(db, &session, 1),
        ask(db, &session, 1),
        ask(db, &session, 1),
    ];
    let _worker = worker(db, quick());
    eventually(ARRIVES, "a failed attempt", || {
        !listed(db, &id).last_error.is_empty()
    });
    let view = listed(db, &id);
    assert_eq!((view.state.as_str(), view.backlog), ("enabled", 3));
    assert!(view.next_attempt_at.is_some());
    let receiver = Receiver::on_port(&python, port, &[&secret]);
    let deliveries = receiver.await_deliveries(3);
    all_verified(&deliveries);
    let expected: Vec<(String, String)> = asked
        .iter()
        .map(|pending| ("bundle.asked".to_owned(), pending.clone()))
        .collect();
    assert_eq!(what(&deliveries), expected);
    let positions: Vec<String> = positions(db).iter().map(|p| evt(p)).collect();
    assert_eq!(ids(&deliveries), positions);
    eventually(ARRIVES, "the failure is over", || {
        listed(db, &id).last_error.is_empty()
    });
}

fn hook_2_a_failed_event_is_tried_again_with_the_same_id(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    receiver.control(json!({"fail": 2}));
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 1);
    let _worker = worker(db, quick());
    let deliveries = receiver.await_deliveries(4);
    all_verified(&deliveries);
    let answered: Vec<&Value> = deliveries.iter().map(|d| &d["answered"]).collect();
    assert_eq!(answered, [500, 500, 200, 200]);
    let positions = positions(db);
    assert_eq!(
        ids(&deliveries),
        [
            evt(&positions[0]),
            evt(&positions[0]),
            evt(&positions[0]),
            evt(&positions[1])
        ]
    );
    assert_eq!(
        deliveries[0]["body"], deliveries[2]["body"],
        "the same body"
    );
    assert_eq!(
        what(&deliveries[2..]),
        [
            ("bundle.asked".into(), first),
            ("bundle.asked".into(), second)
        ]
    );
    eventually(ARRIVES, "delivered", || listed(db, &id).backlog == 0);
}

fn hook_2_a_slow_receiver_times_out_then_is_retried(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    receiver.control(json!({"delay": 3.0}));
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let _worker = worker(db, quick().timeout(Duration::from_millis(500)));
    eventually(ARRIVES, "the attempt timed out", || {
        listed(db, &id).last_error.contains("timed out")
    });
    assert_eq!(listed(db, &id).backlog, 1, "not delivered");
    receiver.control(json!({"delay": 0.0}));
    eventually(ARRIVES, "delivered on a later try", || {
        listed(db, &id).backlog == 0
    });
    let deliveries = receiver.deliveries();
    assert!(deliveries.len() >= 2, "{deliveries:?}");
    let first = &deliveries[0]["id"];
    assert!(
        deliveries.iter().all(|d| &d["id"] == first),
        "one event, one id"
    );
    all_verified(&deliveries);
}

fn hook_2_failing_after_the_give_up_time_then_enable_resumes_at_the_cursor(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    receiver.control(json!({"status": 500}));
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 1);
    let worker = worker(db, quick().give_up(Duration::from_millis(300)));
    eventually(ARRIVES, "the endpoint is failing", || {
        listed(db, &id).state == "failing"
    });
    let view = listed(db, &id);
    assert_eq!(view.last_error, "answered 500");
    assert_eq!(view.next_attempt_at, None, "no attempt until enable");
    assert_eq!(view.backlog, 2);
    let tried = receiver.deliveries();
    assert!(tried.len() >= 2, "retried before giving up: {tried:?}");
    assert!(tried
        .iter()
        .all(|d| d["body"]["data"]["pending_id"] == first));

    // HOOK-5: a failing endpoint keeps its events through prune.
    db.clock.advance_micros(3 * 24 * 3600 * 1_000_000);
    db.prune(Duration::from_secs(24 * 3600)).unwrap();
    assert_eq!(
        positions(db).len(),
        2,
        "prune kept the failing endpoint's events"
    );
    // Every attempt arrived before the endpoint was marked failing; none
    // comes after (the count is checked once it has caught up).
    let attempts = receiver.deliveries().len();
    let third = ask(db, &session, 1);
    assert_eq!(listed(db, &id).state, "failing");

    receiver.control(json!({"status": 200}));
    worker.webhook_enable(&id).unwrap();
    let deliveries = receiver.await_deliveries(attempts + 3);
    let resumed = &deliveries[attempts..];
    assert_eq!(
        what(resumed),
        [
            ("bundle.asked".into(), first),
            ("bundle.asked".into(), second),
            ("bundle.asked".into(), third)
        ],
        "it resumed at its cursor"
    );
    assert_eq!(
        resumed[0]["id"], tried[0]["id"],
        "the same event, the same id"
    );
    eventually(ARRIVES, "enabled and caught up", || {
        let view = listed(db, &id);
        view.state == "enabled" && view.backlog == 0 && view.last_error.is_empty()
    });
    assert_eq!(
        receiver.deliveries().len(),
        attempts + 3,
        "no attempt while failing"
    );
}

fn hook_2_an_open_transaction_delays_delivery_but_never_reorders_it(db: &TestDb) {
    let Some((receiver, _)) = receiving(db, "/hook") else {
        return;
    };
    let session = mirror(db, "a", "alice");
    let worker = worker(db, quick());
    if db.backend() != clarion::Backend::Postgres {
        // SQLite serializes writers: nothing can commit out of order.
        let asked = [ask(db, &session, 1), ask(db, &session, 1)];
        let deliveries = receiver.await_deliveries(2);
        assert_eq!(
            what(&deliveries),
            asked.map(|p| ("bundle.asked".to_owned(), p))
        );
        drop(worker);
        return;
    }
    #[cfg(feature = "postgres")]
    {
        use diesel::connection::SimpleConnection;
        use diesel::Connection;
        // A transaction with an id older than the ask's, which appends an
        // event after the ask committed: it comes first in position order.
        let mut held = diesel::PgConnection::establish(db.server_url()).unwrap();
        held.batch_execute("BEGIN; SELECT pg_current_xact_id();")
            .unwrap();
        let asked = ask(db, &session, 1);
        held.batch_execute(&format!(
            "INSERT INTO events (event_type, at, pending_id, task_id, workspace_id, task_exists, kind, data) \
             SELECT 'bundle.closed', at, pending_id, task_id, workspace_id, task_exists, kind, \
                    '{{\"status\":\"cancelled\"}}' \
             FROM events WHERE pending_id = '{asked}'"
        ))
        .unwrap();
        // The worker reads the log (twice: once after the probe was
        // committed) and delivers nothing while the transaction is open.
        let probe = ask(db, &session, 1);
        let reads = worker.event_reads();
        eventually(ARRIVES, "the worker read the log again", || {
            worker.event_reads() >= reads + 2
        });
        assert!(
            receiver.deliveries().is_empty(),
            "delivered past an open transaction"
        );
        held.batch_execute("COMMIT").unwrap();
        let deliveries = receiver.await_deliveries(3);
        assert_eq!(
            what(&deliveries),
            [
                ("bundle.closed".into(), asked.clone()),
                ("bundle.asked".into(), asked),
                ("bundle.asked".into(), probe)
            ],
            "position order: the older transaction's event first"
        );
        let positions: Vec<String> = positions(db).iter().map(|p| evt(p)).collect();
        assert_eq!(ids(&deliveries), positions);
    }
}

/// `clarion webhook run` on the test database with `flags`.
fn webhook_run(db: &TestDb, flags: &[&str]) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["webhook", "run", "--database-url", &db.url])
        .args(flags)
        .env_remove("CLARION_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start clarion webhook run");
    kill_after(child.id(), Duration::from_secs(120));
    child
}

fn hook_2_a_worker_killed_mid_delivery_is_followed_with_the_same_id(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    // The first answer takes longer than the test waits: the worker is
    // killed while it waits for it.
    receiver.control(json!({"delay": 20.0}));
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let flags = ["--webhook-timeout", "3s", "--webhook-first-retry", "100ms"];
    let mut first = webhook_run(db, &flags);
    let arrived = receiver.await_deliveries(1);
    first.kill().unwrap();
    first.wait().unwrap();
    receiver.control(json!({"delay": 0.0}));
    assert_eq!(listed(db, &id).backlog, 1, "killed before its cursor moved");
    // Its lease (2 × timeout + 1 s) lapses; another worker delivers again.
    let mut second = webhook_run(db, &flags);
    let deliveries = receiver.await_deliveries(2);
    assert_eq!(deliveries[1]["id"], arrived[0]["id"], "the same webhook-id");
    assert_eq!(
        what(&deliveries[1..]),
        [("bundle.asked".into(), pending_id)]
    );
    all_verified(&deliveries);
    eventually(ARRIVES, "delivered", || listed(db, &id).backlog == 0);
    second.kill().unwrap();
    second.wait().unwrap();
}

fn hook_2_two_workers_never_deliver_one_event_at_once(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    // Each answer takes a while, so both workers are awake while one
    // delivers.
    receiver.control(json!({"delay": 0.2}));
    let flags = ["--webhook-timeout", "5s", "--webhook-first-retry", "100ms"];
    let mut workers = [webhook_run(db, &flags), webhook_run(db, &flags)];
    let session = mirror(db, "a", "alice");
    let asked: Vec<String> = (0..6).map(|_| ask(db, &session, 1)).collect();
    eventually(ARRIVES, "all delivered", || listed(db, &id).backlog == 0);
    let deliveries = receiver.deliveries();
    all_verified(&deliveries);
    assert!(
        deliveries.iter().all(|d| d["concurrent"] == 1),
        "two deliveries at once: {deliveries:?}"
    );
    let expected: Vec<String> = positions(db).iter().map(|p| evt(p)).collect();
    assert_eq!(ids(&deliveries), expected, "each event once, in order");
    let expected: Vec<(String, String)> = asked
        .into_iter()
        .map(|pending| ("bundle.asked".to_owned(), pending))
        .collect();
    assert_eq!(what(&deliveries), expected);
    for worker in &mut workers {
        worker.kill().unwrap();
        worker.wait().unwrap();
    }
}

fn signatures(delivery: &Value) -> usize {
    delivery["signature"].as_str().unwrap().split(' ').count()
}

fn hook_3_during_the_overlap_both_secrets_sign_then_the_new_one_alone(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    let worker = worker(db, quick());
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let before = receiver.await_deliveries(1);
    assert_eq!(
        (signatures(&before[0]), &before[0]["verified"]),
        (1, &json!([true]))
    );
    let old = listed_secret_of(&receiver);
    // Rotated on the worker's handle, whose clock is the real one.
    let overlap = Duration::from_secs(5);
    let rotated_at = Instant::now();
    let new = worker.webhook_rotate(&id, overlap).unwrap().secret;
    receiver.verify_with(&[&new, &old]);
    ask(db, &session, 1);
    let during = receiver.await_deliveries(2);
    assert!(
        rotated_at.elapsed() < overlap,
        "the machine was too slow to check the overlap"
    );
    assert_eq!(signatures(&during[1]), 2, "v1,<new> v1,<old>");
    assert_eq!(during[1]["verified"], json!([true, true]));
    eventually(overlap * 3, "the overlap is over", || {
        rotated_at.elapsed() > overlap + Duration::from_millis(100)
    });
    ask(db, &session, 1);
    let after = receiver.await_deliveries(3);
    assert_eq!(signatures(&after[2]), 1);
    assert_eq!(
        after[2]["verified"],
        json!([true, false]),
        "the new secret alone"
    );
}

/// The secret the receiver verifies with now (its first).
fn listed_secret_of(receiver: &Receiver) -> String {
    let secrets: Value = client_get(&receiver.url("/secrets"));
    secrets[0].as_str().unwrap().to_owned()
}

fn hook_3_webhook_test_sends_one_signed_test_event(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    let cursor = listed(db, &id).cursor;
    let sent = clarion(&["webhook", "test", &id, "--database-url", &db.url]);
    assert!(sent.status.success(), "{sent:?}");
    assert_eq!(String::from_utf8(sent.stdout).unwrap(), "answered 200\n");
    let deliveries = receiver.await_deliveries(1);
    let test = &deliveries[0];
    assert_eq!(test["verified"], json!([true]));
    assert_eq!(keys(&test["body"]), ["type", "timestamp", "data"]);
    assert_eq!(test["body"]["type"], "webhook.test");
    assert_eq!(test["body"]["data"], json!({}));
    let message = test["id"].as_str().unwrap();
    assert!(message.starts_with("evt_test_"), "{message}");
    let again = clarion(&["webhook", "test", &id, "--database-url", &db.url]);
    assert!(again.status.success());
    let deliveries = receiver.await_deliveries(2);
    assert_ne!(
        deliveries[1]["id"], test["id"],
        "a fresh webhook-id each time"
    );
    assert_eq!(listed(db, &id).cursor, cursor, "outside the cursor");

    receiver.control(json!({"status": 503}));
    let refused = clarion(&["webhook", "test", &id, "--database-url", &db.url]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(String::from_utf8(refused.stdout).unwrap(), "answered 503\n");
    let unknown = clarion(&["webhook", "test", "webhook-nope", "--database-url", &db.url]);
    assert_eq!(unknown.status.code(), Some(3), "{unknown:?}");
}

fn hook_4_clarion_serve_delivers_and_the_worker_ends_on_close(db: &TestDb) {
    let Some((receiver, _)) = receiving(db, "/hook") else {
        return;
    };
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
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let deliveries = receiver.await_deliveries(1);
    assert_eq!(what(&deliveries), [("bundle.asked".into(), pending_id)]);
    all_verified(&deliveries);

    // REL-7: the worker is a thread of its handle, and ends with it.
    let handle = worker(db, quick());
    assert!(clarion::test_hooks::webhooks_running(&handle));
    let closing = handle.clone();
    handle.close();
    eventually(ARRIVES, "the worker ended on close", || {
        !clarion::test_hooks::webhooks_running(&closing)
    });
}

fn hook_5_enable_past_the_horizon_delivers_from_the_head(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    let session = mirror(db, "a", "alice");
    db.webhook_disable(&id).unwrap();
    // Two events: prune keeps the newest (EVT-3), the first goes.
    ask(db, &session, 1);
    ask(db, &session, 1);
    db.clock.advance_micros(3 * 24 * 3600 * 1_000_000);
    db.prune(Duration::from_secs(24 * 3600)).unwrap();
    let worker = worker(db, quick());
    worker.webhook_enable(&id).unwrap();
    let view = listed(db, &id);
    assert_ne!(view.skipped_through, "", "the skipped range is listed");
    let later = ask(db, &session, 1);
    let deliveries = receiver.await_deliveries(1);
    assert_eq!(what(&deliveries), [("bundle.asked".into(), later)]);
}

fn hook_6_the_list_and_metrics_show_each_endpoint(db: &TestDb) {
    let Some((receiver, id)) = receiving(db, "/hook") else {
        return;
    };
    receiver.control(json!({"fail": 1}));
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let first = worker(
        db,
        WebhookOptions::new().first_retry(Duration::from_millis(100)),
    );
    eventually(ARRIVES, "delivered after one failure", || {
        listed(db, &id).backlog == 0
    });
    first.close();
    db.webhook_disable(&id).unwrap();
    let (failing, _) = endpoint(db, &receiver.url("/hook/failing"), &[], "");
    receiver.control(json!({"status": 500}));
    // The next endpoint fails at once: a give-up time of zero.
    let worker = worker(db, quick().give_up(Duration::ZERO));
    ask(db, &session, 1);
    eventually(ARRIVES, "the second endpoint is failing", || {
        listed(db, &failing).state == "failing"
    });
    let server = start(db);
    let t = tokens(db);
    let metrics = get(&server, &t.system, "/metrics");
    assert_eq!(metrics.status, 200);
    let text = metrics.text();
    for line in [
        format!("clarion_webhook_delivered_total{{endpoint=\"{id}\"}} 1"),
        format!("clarion_webhook_failed_total{{endpoint=\"{id}\"}} 1"),
        format!("clarion_webhook_backlog{{endpoint=\"{id}\"}} 1"),
        format!("clarion_webhook_delivered_total{{endpoint=\"{failing}\"}} 0"),
        format!("clarion_webhook_failed_total{{endpoint=\"{failing}\"}} 1"),
        format!("clarion_webhook_backlog{{endpoint=\"{failing}\"}} 1"),
        "clarion_webhook_failing_endpoints 1".to_owned(),
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    let refused = get(&server, &t.alice, "/metrics");
    assert_eq!(refused.status, 403);
    worker.close();
}

/// OPS-6 for the README's webhook section: its `webhook add` line and the
/// Python relay it links to (docs/webhooks.md), run as written (the one change: the relay's address,
/// `127.0.0.1:8000`, becomes a free port, given to it as `PORT`). The chat
/// tool it relays to is the receiver, on `/hook/chat`.
fn hook_3_the_readme_relay_verifies_and_relays(db: &TestDb) {
    let Some(python) = verifier_python() else {
        return;
    };
    let readme = crate::readme_run::readme();
    // The relay the README links to lives in docs/webhooks.md.
    let relay_doc = std::fs::read_to_string(root().join("docs/webhooks.md")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let add = crate::readme_run::fenced(&readme, "webhook-add", "sh")
        .replace("127.0.0.1:8000", &format!("127.0.0.1:{port}"));
    let binaries = std::path::Path::new(env!("CARGO_BIN_EXE_clarion"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        binaries.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let added = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &add])
        .current_dir(dir.path())
        .env("PATH", &path)
        .env("CLARION_DATABASE_URL", &db.url)
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");
    let secret = std::fs::read_to_string(dir.path().join("hook.secret")).unwrap();
    assert!(secret.trim().starts_with("whsec_"), "{secret:?}");
    let endpoints = db.webhook_list().unwrap();
    assert_eq!(endpoints[0].url, format!("http://127.0.0.1:{port}/"));
    assert_eq!(endpoints[0].events, ["bundle.asked"]);

    let chat = Receiver::start(&python, &[]);
    let relay_source = dir.path().join("relay.py");
    std::fs::write(
        &relay_source,
        crate::readme_run::fenced(&relay_doc, "webhook-relay", "python"),
    )
    .unwrap();
    let mut relay = Command::new(&python)
        .arg(&relay_source)
        .current_dir(dir.path())
        .env("CHAT_WEBHOOK_URL", chat.url("/hook/chat"))
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    kill_after(relay.id(), Duration::from_secs(120));
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.questions[0].prompt = "Ship release 4.2 tonight?".into();
    let pending_id = db.ask(&request).unwrap().pending_id;
    db.resolve_bundle(&alice(), &pending_id, &one_answer("yes"))
        .unwrap();
    let _worker = worker(db, quick());
    let relayed = chat.await_deliveries(1);
    assert_eq!(relayed[0]["path"], "/hook/chat");
    assert_eq!(
        relayed[0]["body"],
        json!({"text": "An agent asks: Ship release 4.2 tonight?"})
    );
    eventually(ARRIVES, "the relay answered 204", || {
        let view = listed(db, &endpoints[0].id);
        view.backlog == 0 && view.last_error.is_empty()
    });
    // A forged delivery is refused.
    let forged = crate::support::server::client()
        .post(format!("http://127.0.0.1:{port}/"))
        .header("webhook-id", "evt_1")
        .header(
            "webhook-timestamp",
            chrono::Utc::now().timestamp().to_string(),
        )
        .header("webhook-signature", "v1,AAAA")
        .body(r#"{"type":"bundle.asked"}"#)
        .send()
        .unwrap();
    assert_eq!(forged.status().as_u16(), 401);
    assert_eq!(chat.deliveries().len(), 1, "nothing forged was relayed");
    let _ = relay.kill();
    let _ = relay.wait();
}
