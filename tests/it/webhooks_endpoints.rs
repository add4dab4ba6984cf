//! HOOK-1, HOOK-5, HOOK-6 without a worker: endpoints are the host's,
//! managed through every door; a new one starts at the head of the log;
//! `prune` keeps what an enabled or failing endpoint has yet to deliver,
//! and `enable` past the prune horizon resumes at the head, listing what it
//! skipped. (Delivery itself: `webhooks_delivery.rs`.)

use std::time::Duration;

use base64::Engine as _;
use clarion::{Error, WebhookAdd};
use serde_json::{json, Value};

use crate::doors_json_support::{call, ok, refused, request, ALICE, SYSTEM};
use crate::events::wait_until_readable;
use crate::support::server::clarion;
use crate::support::webhooks::{endpoint, listed};
use crate::support::*;

dual_backend!(
    hook_1_an_endpoint_is_added_with_a_secret_shown_once,
    hook_1_bad_urls_and_event_types_are_refused_naming_the_field,
    hook_1_only_the_host_manages_endpoints_and_unknown_ids_are_404,
    hook_1_the_command_line_manages_endpoints,
    hook_1_a_new_endpoint_starts_at_the_head,
    hook_5_prune_keeps_what_an_enabled_endpoint_has_yet_to_deliver,
    hook_5_enable_past_the_prune_horizon_resumes_at_the_head,
);

/// HOOK-1: `whsec_` and the padded standard base64 of 32 bytes.
fn assert_secret(secret: &str) {
    let encoded = secret
        .strip_prefix("whsec_")
        .unwrap_or_else(|| panic!("{secret}"));
    assert_eq!(encoded.len(), 44, "{secret}");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap_or_else(|e| panic!("{e}: {secret}"));
    assert_eq!(bytes.len(), 32, "{secret}");
}

fn hook_1_an_endpoint_is_added_with_a_secret_shown_once(db: &TestDb) {
    let added = ok(
        db,
        "webhook_add",
        SYSTEM,
        json!({"url": "https://hooks.example.com/clarion", "events": ["bundle.resolved", "bundle.asked"], "workspace_id": "w-a"}),
    );
    let keys: Vec<&String> = added.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["id", "secret"]);
    let secret = added["secret"].as_str().unwrap();
    assert_secret(secret);
    let (_, other) = endpoint(db, "http://127.0.0.1:9/other", &[], "");
    assert_secret(&other);
    assert_ne!(secret, other, "each endpoint has a secret of its own");

    // HOOK-6: the list, in the stored order of event types, never a secret.
    let (status, text) = call(db, &request("webhook_list", SYSTEM, json!({})));
    assert_eq!(status, 200, "{text}");
    assert!(
        !text.contains("whsec_") && !text.contains("secret"),
        "{text}"
    );
    let listed: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = listed.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["webhooks"]);
    let first = &listed["webhooks"][0];
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "url",
            "events",
            "workspace_id",
            "state",
            "cursor",
            "backlog",
            "last_error",
            "last_attempt_at",
            "next_attempt_at",
            "skipped_after",
            "skipped_through",
            "allow_private",
            "links"
        ]
    );
    assert_eq!(first["id"], added["id"]);
    assert_eq!(first["url"], "https://hooks.example.com/clarion");
    assert_eq!(first["events"], json!(["bundle.asked", "bundle.resolved"]));
    assert_eq!(first["workspace_id"], "w-a");
    assert_eq!(first["state"], "enabled");
    assert_eq!(first["last_attempt_at"], "");
    assert_eq!(first["allow_private"], false);
    assert_eq!(listed["webhooks"][1]["events"], json!([]));
    assert_eq!(listed["webhooks"][1]["allow_private"], true);

    // HOOK-3: rotate shows the new secret once.
    let rotated = ok(
        db,
        "webhook_rotate",
        SYSTEM,
        json!({"id": added["id"], "overlap_ms": 60000}),
    );
    assert_eq!(rotated["id"], added["id"]);
    let new = rotated["secret"].as_str().unwrap();
    assert_secret(new);
    assert_ne!(new, secret);
    let (_, text) = call(db, &request("webhook_list", SYSTEM, json!({})));
    assert!(!text.contains(new) && !text.contains(secret), "{text}");
}

fn hook_1_bad_urls_and_event_types_are_refused_naming_the_field(db: &TestDb) {
    for url in [
        "ftp://example.com/hook",
        "example.com/hook",
        "/hook",
        "https://",
        "javascript:alert(1)",
        "http://exa mple.com/",
        "",
    ] {
        let (status, body) = refused(db, "webhook_add", SYSTEM, json!({ "url": url }));
        assert_eq!(status, 400, "{url}: {body}");
        assert!(body.starts_with(r#"{"error":"url: "#), "{url}: {body}");
        match db.webhook_add(&WebhookAdd {
            url: url.to_owned(),
            ..WebhookAdd::default()
        }) {
            Err(Error::Validation(refusal)) => assert_eq!(refusal.field, "url", "{url}"),
            other => panic!("{url}: {other:?}"),
        }
    }
    let long = format!("https://example.com/{}", "a".repeat(2000));
    let (status, body) = refused(db, "webhook_add", SYSTEM, json!({ "url": long }));
    assert_eq!(status, 400, "{body}");
    let (status, body) = refused(
        db,
        "webhook_add",
        SYSTEM,
        json!({"url": "https://example.com", "events": ["bundle.asked", "bundle.answered"]}),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body.starts_with(r#"{"error":"events[1]: unknown event type \"bundle.answered\""#),
        "{body}"
    );
    assert!(db.webhook_list().unwrap().is_empty(), "nothing was added");
}

fn hook_1_only_the_host_manages_endpoints_and_unknown_ids_are_404(db: &TestDb) {
    let (id, _) = endpoint(db, "http://127.0.0.1:9/hook", &[], "");
    for (op, args) in [
        ("webhook_add", json!({"url": "http://127.0.0.1:9/hook"})),
        ("webhook_list", json!({})),
        ("webhook_enable", json!({ "id": id })),
        ("webhook_disable", json!({ "id": id })),
        ("webhook_remove", json!({ "id": id })),
        ("webhook_rotate", json!({ "id": id })),
    ] {
        let (status, body) = refused(db, op, ALICE, args);
        assert_eq!(
            (status, body.as_str()),
            (
                403,
                r#"{"error":"capability not authorized","code":"capability_denied"}"#
            ),
            "{op}"
        );
    }
    for op in [
        "webhook_enable",
        "webhook_disable",
        "webhook_remove",
        "webhook_rotate",
    ] {
        let (status, body) = refused(db, op, SYSTEM, json!({"id": "webhook-nope"}));
        assert_eq!(
            (status, body.as_str()),
            (404, r#"{"error":"webhook not found"}"#),
            "{op}"
        );
    }
    assert!(matches!(
        db.webhook_enable("webhook-nope"),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        db.webhook_rotate("webhook-nope", Duration::from_secs(1)),
        Err(Error::NotFound(_))
    ));
    db.webhook_disable(&id).unwrap();
    assert_eq!(listed(db, &id).state, "disabled");
    db.webhook_enable(&id).unwrap();
    assert_eq!(listed(db, &id).state, "enabled");
    db.webhook_remove(&id).unwrap();
    assert!(db.webhook_list().unwrap().is_empty());
    assert!(matches!(db.webhook_remove(&id), Err(Error::NotFound(_))));
}

fn hook_1_the_command_line_manages_endpoints(db: &TestDb) {
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--database-url", &db.url]);
        clarion(&all)
    };
    let added = run(&[
        "webhook",
        "add",
        "http://127.0.0.1:9/hook",
        "--events",
        "bundle.resolved,bundle.closed",
        "--workspace",
        "w-a",
        "--allow-private",
        "--text",
    ]);
    assert!(added.status.success(), "{added:?}");
    let printed = String::from_utf8(added.stdout).unwrap();
    // The secret alone on the last line, for `| tail -n 1`.
    let secret = printed.lines().last().unwrap();
    assert_secret(secret);
    let id = db.webhook_list().unwrap()[0].id.clone();
    assert!(printed.contains(&id), "{printed}");
    // As JSON (the default), the envelope is the one line.
    let json_added = run(&["webhook", "add", "https://example.com/b"]);
    let envelope: Value = serde_json::from_slice(&json_added.stdout).unwrap();
    assert_eq!(envelope["status"], 200);
    assert_secret(envelope["body"]["secret"].as_str().unwrap());
    run(&[
        "webhook",
        "remove",
        envelope["body"]["id"].as_str().unwrap(),
    ]);

    let list = run(&["webhook", "list", "--json"]);
    assert!(list.status.success(), "{list:?}");
    let text = String::from_utf8(list.stdout).unwrap();
    assert!(!text.contains(secret), "{text}");
    let listed: Value = serde_json::from_str(&text).unwrap();
    let first = &listed["body"]["webhooks"][0];
    assert_eq!(first["events"], json!(["bundle.resolved", "bundle.closed"]));
    assert_eq!(first["workspace_id"], "w-a");
    let words = run(&["webhook", "list", "--text"]);
    let words = String::from_utf8(words.stdout).unwrap();
    assert!(
        words.contains(&id) && words.contains("enabled") && !words.contains(secret),
        "{words}"
    );

    assert!(run(&["webhook", "disable", &id]).status.success());
    assert_eq!(listed_state(db, &id), "disabled");
    assert!(run(&["webhook", "enable", &id]).status.success());
    assert_eq!(listed_state(db, &id), "enabled");
    let rotated = run(&["webhook", "rotate", &id, "--overlap", "1h", "--text"]);
    assert!(rotated.status.success(), "{rotated:?}");
    let rotated = String::from_utf8(rotated.stdout).unwrap();
    let new = rotated.lines().last().unwrap();
    assert_secret(new);
    assert_ne!(new, secret);

    let bad = run(&["webhook", "add", "ftp://example.com"]);
    assert_eq!(bad.status.code(), Some(5), "{bad:?}");
    let bad = run(&[
        "webhook",
        "add",
        "http://a.example",
        "--events",
        "bundle.nope",
    ]);
    assert_eq!(bad.status.code(), Some(5), "{bad:?}");
    assert!(
        String::from_utf8_lossy(&bad.stdout).contains("events[0]"),
        "{bad:?}"
    );
    assert!(run(&["webhook", "remove", &id]).status.success());
    let gone = run(&["webhook", "remove", &id]);
    assert_eq!(gone.status.code(), Some(3), "{gone:?}");
    assert!(
        String::from_utf8_lossy(&gone.stdout).contains("webhook not found"),
        "{gone:?}"
    );
}

fn listed_state(db: &TestDb, id: &str) -> String {
    listed(db, id).state
}

/// The log as `system` reads it once every committed event is readable
/// (on PostgreSQL a transaction of another test may hold them back a
/// moment, EVT-1a); there must be `count` events.
fn log(db: &TestDb, count: usize) -> Vec<clarion::Event> {
    wait_until_readable(db);
    let events = db
        .events_after(&clarion::Principal::System, "", Some(1000))
        .unwrap()
        .events;
    assert_eq!(events.len(), count, "{events:?}");
    events
}

/// The newest of `count` readable events.
fn head(db: &TestDb, count: usize) -> String {
    log(db, count).last().unwrap().position.clone()
}

fn hook_1_a_new_endpoint_starts_at_the_head(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    ask(db, &session, 1);
    let head = head(db, 2);
    let (id, _) = endpoint(db, "http://127.0.0.1:9/hook", &[], "");
    let view = listed(db, &id);
    assert_eq!(view.cursor, head, "it starts after what was there");
    assert_eq!(view.backlog, 0);
    ask(db, &session, 1);
    assert_eq!(listed(db, &id).backlog, 1, "it receives what comes after");
}

fn hook_5_prune_keeps_what_an_enabled_endpoint_has_yet_to_deliver(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let before = ask(db, &session, 1);
    // A new endpoint starts at the readable head: `before` must be behind
    // it, whatever another test's open transaction holds back (EVT-1a).
    wait_until_readable(db);
    let (id, _) = endpoint(db, "http://127.0.0.1:9/hook", &[], "");
    let kept = [ask(db, &session, 1), ask(db, &session, 1)];
    db.clock.advance_micros(3 * 24 * 3600 * 1_000_000);
    db.prune(Duration::from_secs(24 * 3600)).unwrap();
    let events = log(db, 2);
    let pending: Vec<&str> = events.iter().map(|e| e.pending_id.as_str()).collect();
    assert_eq!(
        pending, kept,
        "the event before the cursor went, the rest stay"
    );
    assert!(!pending.contains(&before.as_str()));
    assert_eq!(listed(db, &id).backlog, 2);

    // HOOK-5: a disabled endpoint keeps nothing.
    db.webhook_disable(&id).unwrap();
    db.prune(Duration::from_secs(24 * 3600)).unwrap();
    assert!(log(db, 0).is_empty());
}

fn hook_5_enable_past_the_prune_horizon_resumes_at_the_head(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let cursor = head(db, 1);
    let (id, _) = endpoint(db, "http://127.0.0.1:9/hook", &[], "");
    ask(db, &session, 1);
    ask(db, &session, 1);
    // Enabled again before anything was pruned: it resumes at its cursor.
    db.webhook_disable(&id).unwrap();
    db.webhook_enable(&id).unwrap();
    let view = listed(db, &id);
    assert_eq!((view.cursor.as_str(), view.backlog), (cursor.as_str(), 2));
    assert_eq!(
        (view.skipped_after.as_str(), view.skipped_through.as_str()),
        ("", "")
    );

    db.webhook_disable(&id).unwrap();
    db.clock.advance_micros(3 * 24 * 3600 * 1_000_000);
    db.prune(Duration::from_secs(24 * 3600)).unwrap();
    ask(db, &session, 1);
    let head = head(db, 1);
    db.webhook_enable(&id).unwrap();
    let view = listed(db, &id);
    assert_eq!(view.state, "enabled");
    assert_eq!(view.cursor, head, "it resumes at the head");
    assert_eq!(view.backlog, 0);
    assert_eq!(
        view.skipped_after, cursor,
        "the skipped range starts at its cursor"
    );
    assert_eq!(view.skipped_through, head, "and ends at the head");
    let listed_json = ok(db, "webhook_list", SYSTEM, json!({}));
    assert_eq!(listed_json["webhooks"][0]["skipped_through"], head.as_str());
}
