//! PROD-4 (targets): a webhook URL with userinfo, or whose host is or
//! resolves to an address inside the machine or its network, is refused
//! at add, and a delivery that would reach one is a failed attempt,
//! unless the endpoint was added with `allow_private`.

use clarion::{Error, WebhookAdd};
use diesel::prelude::*;
use serde_json::{json, Value};

use crate::doors_json_support::{ok, refused, SYSTEM};
use crate::support::server::clarion;
use crate::support::webhooks::*;
use crate::support::*;

dual_backend!(
    prod_4_private_targets_are_refused_at_add_through_every_door,
    prod_4_allow_private_adds_them_and_the_list_shows_it,
    prod_4_a_name_resolving_to_loopback_is_refused_at_add,
    prod_4_a_delivery_to_a_private_address_is_a_failed_attempt,
);

/// Each target the rule refuses.
const REFUSED: [&str; 8] = [
    "http://169.254.169.254/latest",
    "http://[fd00:ec2::254]/",
    "http://0.0.0.0:9/",
    "http://localhost:9/",
    "http://127.0.0.1:9/",
    "http://10.1.2.3/",
    "http://user:pass@example.com/",
    "http://[::ffff:127.0.0.1]/",
];

fn prod_4_private_targets_are_refused_at_add_through_every_door(db: &TestDb) {
    for url in REFUSED {
        // The JSON door: 400 naming `url`, in words without rule ids.
        let (status, body) = refused(db, "webhook_add", SYSTEM, json!({ "url": url }));
        assert_eq!(status, 400, "{url}: {body}");
        assert!(body.starts_with(r#"{"error":"url: "#), "{url}: {body}");
        let message: Value = serde_json::from_str(&body).unwrap();
        let message = message["error"].as_str().unwrap();
        assert!(
            message.contains("allow_private") && !message.contains("PROD-"),
            "{url}: {message}"
        );
        // The Rust API.
        match db.webhook_add(&WebhookAdd {
            url: url.to_owned(),
            ..WebhookAdd::default()
        }) {
            Err(Error::Validation(refusal)) => assert_eq!(refusal.field, "url", "{url}"),
            other => panic!("{url}: {other:?}"),
        }
        // The command line: the validation exit code, the field named.
        let cli = clarion(&["webhook", "add", url, "--database-url", &db.url]);
        assert_eq!(cli.status.code(), Some(5), "{url}: {cli:?}");
        let out = String::from_utf8_lossy(&cli.stdout);
        assert!(out.contains("url: "), "{url}: {out}");
    }
    assert!(db.webhook_list().unwrap().is_empty(), "nothing was added");
}

fn prod_4_allow_private_adds_them_and_the_list_shows_it(db: &TestDb) {
    let mut ids = Vec::new();
    for url in REFUSED {
        let added = ok(
            db,
            "webhook_add",
            SYSTEM,
            json!({ "url": url, "allow_private": true }),
        );
        ids.push(added["id"].as_str().unwrap().to_owned());
    }
    let cli = clarion(&[
        "webhook",
        "add",
        "http://127.0.0.1:9/cli",
        "--allow-private",
        "--database-url",
        &db.url,
    ]);
    assert!(cli.status.success(), "{cli:?}");
    let envelope: Value = serde_json::from_slice(&cli.stdout).unwrap();
    ids.push(envelope["body"]["id"].as_str().unwrap().to_owned());
    // A public address needs nothing.
    let public = ok(
        db,
        "webhook_add",
        SYSTEM,
        json!({ "url": "https://93.184.216.34/hook" }),
    );

    for id in &ids {
        assert!(listed(db, id).allow_private, "{id}");
    }
    assert!(!listed(db, public["id"].as_str().unwrap()).allow_private);
    let list = ok(db, "webhook_list", SYSTEM, json!({}));
    assert_eq!(list["webhooks"][0]["allow_private"], true);
    let words = clarion(&["webhook", "list", "--text", "--database-url", &db.url]);
    let words = String::from_utf8(words.stdout).unwrap();
    assert!(
        words.contains("may deliver to private and loopback addresses"),
        "{words}"
    );
}

fn prod_4_a_name_resolving_to_loopback_is_refused_at_add(db: &TestDb) {
    // `localhost.` (the fully qualified spelling) goes to the resolver
    // like any other name would; /etc/hosts answers it with loopback.
    for url in ["http://localhost./hook", "http://localhost:8080/hook"] {
        let (status, body) = refused(db, "webhook_add", SYSTEM, json!({ "url": url }));
        assert_eq!(status, 400, "{url}: {body}");
        assert!(body.contains("loopback"), "{url}: {body}");
    }
}

/// What a name that resolved publicly when it was added and resolves to
/// loopback now comes to: the row says `allow_private` false, the URL
/// reaches a real receiver on loopback.
fn prod_4_a_delivery_to_a_private_address_is_a_failed_attempt(db: &TestDb) {
    let Some(python) = verifier_python() else {
        return;
    };
    let receiver = Receiver::start(&python, &[]);
    // The guarded endpoints first: the worker tries them before the open
    // one, so the open one's delivery means they were tried.
    let (guarded, _) = endpoint(db, &receiver.url("/hook/guarded"), &[], "");
    let (named, _) = endpoint(
        db,
        &format!("http://localhost:{}/hook/named", receiver.port),
        &[],
        "",
    );
    let (open, secret) = endpoint(db, &receiver.url("/hook/open"), &[], "");
    receiver.verify_with(&[&secret]);
    db.raw(|conn| {
        diesel::sql_query(format!(
            "UPDATE webhooks SET allow_private = FALSE WHERE id IN ('{guarded}', '{named}')"
        ))
        .execute(conn)
        .unwrap();
    });
    assert!(!listed(db, &guarded).allow_private);

    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let _worker = worker(db, quick());
    receiver.await_deliveries(1);
    for id in [&guarded, &named] {
        eventually(ARRIVES, "the refused attempt is recorded", || {
            !listed(db, id).last_error.is_empty()
        });
        let view = listed(db, id);
        assert!(
            view.last_error.contains("refused to deliver")
                && view.last_error.contains("a loopback address"),
            "{}",
            view.last_error
        );
        assert_eq!(view.backlog, 1, "the event was not delivered");
        assert!(view.next_attempt_at.is_some(), "tried again later");
    }
    let figures = db.webhook_list().unwrap();
    assert_eq!(figures.len(), 3);
    // HOOK-3's test send is held to the same rule.
    let test = clarion(&["webhook", "test", &guarded, "--database-url", &db.url]);
    assert_eq!(test.status.code(), Some(1), "{test:?}");
    let said = String::from_utf8(test.stdout).unwrap();
    assert!(said.contains("refused to deliver"), "{said}");
    // The receiver saw only the open endpoint's delivery.
    let deliveries = receiver.deliveries();
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0]["path"], "/hook/open");
    assert_eq!(listed(db, &open).backlog, 0);
}
