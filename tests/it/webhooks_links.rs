//! LINK-4, LINK-1, HOOK-3: a real `clarion serve --public-url` delivers to
//! an endpoint added with `clarion webhook add --links` and to a plain
//! one, each receiver verifying with the Standard Webhooks reference
//! library. The links endpoint's `bundle.asked`, `bundle.reminded` and
//! `bundle.escalated` payloads carry, after `event`, a link for each
//! person the bundle reaches who is in the directory and may act
//! (PPL-8; an escalation's `to` only); the plain endpoint never sees one.
//! A link from a payload answers as its person, and a resend carries the
//! same link.

use std::collections::BTreeSet;
use std::time::Duration;

use clarion::test_hooks::{derived_link, link_respond};
use clarion::{EscalateRequest, RemindersRequest, Timestamp, UserUpsert};
use serde_json::{json, Value};

use crate::cli_quorum::{code, reply};
use crate::support::server::{clarion, serve};
use crate::support::webhooks::*;
use crate::support::*;

dual_backend!(link_4_a_links_endpoint_gets_each_persons_link_and_a_plain_one_none);

const PUBLIC_URL: &str = "http://localhost:7878/inbox";

/// The deliveries of `event_type` about `pending_id`.
fn of<'d>(deliveries: &'d [Value], event_type: &str, pending_id: &str) -> Vec<&'d Value> {
    deliveries
        .iter()
        .filter(|delivery| {
            delivery["body"]["type"] == event_type
                && delivery["body"]["data"]["pending_id"] == pending_id
        })
        .collect()
}

/// The users a payload's `links` are for.
fn linked(body: &Value) -> BTreeSet<String> {
    body["data"]["links"]
        .as_array()
        .unwrap_or_else(|| panic!("no links: {body}"))
        .iter()
        .map(|link| link["user_id"].as_str().unwrap().to_owned())
        .collect()
}

fn users(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

/// The link of `user_id` in a payload.
fn link_of<'b>(body: &'b Value, user_id: &str) -> &'b Value {
    body["data"]["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|link| link["user_id"] == user_id)
        .unwrap_or_else(|| panic!("no link for {user_id}: {body}"))
}

fn token(url: &str) -> &str {
    url.rsplit_once("/a/").map(|(_, token)| token).unwrap()
}

fn link_4_a_links_endpoint_gets_each_persons_link_and_a_plain_one_none(db: &TestDb) {
    let Some(python) = verifier_python() else {
        return;
    };
    // alice owns w-l, bob and carol are members, gina and hal are
    // escalated to; carol and hal are not in the directory. (Before the
    // endpoints, which receive what is appended after them.)
    for user in ["alice", "bob", "gina"] {
        db.upsert_user(UserUpsert::new(user)).unwrap();
    }
    let session = mirror(db, "l", "alice");
    db.set_members("w-l", &["bob".to_owned(), "carol".to_owned()])
        .unwrap();
    // Its own receiver each, so the links endpoint's first attempt alone
    // fails (and is resent).
    let relay = Receiver::start(&python, &[]);
    let plain_receiver = Receiver::start(&python, &[]);
    let added = clarion(&[
        "webhook",
        "add",
        &relay.url("/hook/relay"),
        "--links",
        "--allow-private",
        "--database-url",
        &db.url,
    ]);
    assert_eq!(code(&added), 0, "{added:?}");
    let added = reply(&added)["body"].clone();
    let (relay_id, relay_secret) = (
        added["id"].as_str().unwrap().to_owned(),
        added["secret"].as_str().unwrap().to_owned(),
    );
    let (plain_id, plain_secret) = endpoint(db, &plain_receiver.url("/hook/plain"), &[], "");
    relay.verify_with(&[&relay_secret]);
    plain_receiver.verify_with(&[&plain_secret]);
    assert!(listed(db, &relay_id).links);
    assert!(!listed(db, &plain_id).links);
    let list = clarion(&["webhook", "list", "--database-url", &db.url]);
    let shown = reply(&list)["body"]["webhooks"].clone();
    let links_of = |id: &str| {
        shown
            .as_array()
            .unwrap()
            .iter()
            .find(|webhook| webhook["id"] == id)
            .map(|webhook| webhook["links"].clone())
    };
    assert_eq!(links_of(&relay_id), Some(json!(true)), "{shown}");
    assert_eq!(links_of(&plain_id), Some(json!(false)), "{shown}");

    relay.control(json!({"fail": 1}));
    let first = ask(db, &session, 1);

    let _served = serve(
        &db.url,
        &[
            "--open-as",
            "user:alice",
            "--public-url",
            PUBLIC_URL,
            "--webhook-timeout",
            "2s",
            "--webhook-first-retry",
            "100ms",
        ],
    );
    let relayed = relay.await_deliveries(2);
    all_verified(&relayed);
    let asked = of(&relayed, "bundle.asked", &first);
    assert_eq!(asked.len(), 2, "failed once, then resent: {relayed:?}");
    assert_eq!(asked[0]["answered"], json!(500));
    // A resend is the same message: the same id, the same bytes, the
    // same links.
    assert_eq!(asked[0]["id"], asked[1]["id"]);
    assert_eq!(asked[0]["body"], asked[1]["body"]);
    let body = &asked[1]["body"];
    assert_eq!(
        body["data"].as_object().unwrap().keys().collect::<Vec<_>>(),
        [
            "position",
            "pending_id",
            "task_id",
            "workspace_id",
            "kind",
            "event",
            "links"
        ],
        "links after event"
    );
    assert_eq!(
        linked(body),
        users(&["alice", "bob"]),
        "the directory's, who may act"
    );
    for link in body["data"]["links"].as_array().unwrap() {
        assert_eq!(
            link.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["user_id", "url", "expires_at"]
        );
        let url = link["url"].as_str().unwrap();
        assert!(url.starts_with(&format!("{PUBLIC_URL}/a/v1.")), "{url}");
        // Derived from (the event's position, the person).
        let at = Timestamp::parse_rfc3339(body["timestamp"].as_str().unwrap()).unwrap();
        let derived = derived_link(
            db,
            &first,
            body["data"]["position"].as_str().unwrap(),
            at,
            link["user_id"].as_str().unwrap(),
        )
        .unwrap();
        assert_eq!(token(url), token(&derived.url));
        assert_eq!(link["expires_at"], json!(derived.expires_at.to_rfc3339()));
    }
    let plain = plain_receiver.await_deliveries(1);
    all_verified(&plain);
    let plain_asked = of(&plain, "bundle.asked", &first);
    assert_eq!(plain_asked.len(), 1, "{plain:?}");
    assert!(
        plain_asked[0]["body"]["data"].get("links").is_none(),
        "{plain:?}"
    );

    // A link from the payload answers as its person, once.
    let alice = link_of(body, "alice")["url"].as_str().unwrap();
    match link_respond(db, token(alice), &one_answer("from the relay")).unwrap() {
        Some(Ok(resolved)) => assert!(resolved.claimed),
        other => panic!("{other:?}"),
    }

    // A reminder and an escalation, due at once for the server (its clock
    // is the system's, days after the test clock's ask): the reminder's
    // links go to everyone the bundle reaches by then, the escalation's to
    // its `to` only, each in the directory.
    let mut request = ask_request(&session, 1);
    request.reminders = Some(RemindersRequest {
        first_after: Duration::from_secs(60),
        every: Some(Duration::from_secs(30 * 24 * 3600)),
        max: Some(20),
    });
    request.escalate = Some(EscalateRequest {
        after: Duration::from_secs(60),
        to: vec!["gina".to_owned(), "hal".to_owned()],
    });
    let second = db.ask(&request).unwrap().pending_id;
    let mut relayed = Vec::new();
    eventually(ARRIVES, "the escalation relayed", || {
        relayed = relay.deliveries();
        !of(&relayed, "bundle.escalated", &second).is_empty()
    });
    all_verified(&relayed);
    let reminded = of(&relayed, "bundle.reminded", &second);
    assert_eq!(reminded.len(), 1, "{relayed:?}");
    assert_eq!(
        linked(&reminded[0]["body"]),
        users(&["alice", "bob", "gina"])
    );
    let escalated = of(&relayed, "bundle.escalated", &second);
    assert_eq!(
        escalated[0]["body"]["data"]["event"],
        json!({"to": ["gina", "hal"]})
    );
    assert_eq!(
        linked(&escalated[0]["body"]),
        users(&["gina"]),
        "its `to` only"
    );
    // The escalated person's link answers as them, once they see the
    // bundle by the test clock too.
    crate::nudges::at(db, 2 * 60 * 1_000_000);
    let gina = link_of(&escalated[0]["body"], "gina")["url"]
        .as_str()
        .unwrap();
    match link_respond(db, token(gina), &one_answer("gina")).unwrap() {
        Some(Ok(resolved)) => assert!(resolved.claimed),
        other => panic!("{other:?}"),
    }

    let mut plain = Vec::new();
    eventually(ARRIVES, "the escalation delivered plain", || {
        plain = plain_receiver.deliveries();
        !of(&plain, "bundle.escalated", &second).is_empty()
    });
    all_verified(&plain);
    assert!(
        plain
            .iter()
            .all(|delivery| delivery["body"]["data"].get("links").is_none()),
        "{plain:?}"
    );
    // Events without links to give: a resolution has none, on either.
    eventually(ARRIVES, "the resolutions relayed", || {
        relayed = relay.deliveries();
        of(&relayed, "bundle.resolved", &second).len() == 1
    });
    let resolved = of(&relayed, "bundle.resolved", &second);
    assert!(
        resolved[0]["body"]["data"].get("links").is_none(),
        "{relayed:?}"
    );
}
