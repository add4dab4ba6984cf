//! HTTP-4, HTTP-8: `clarion serve` and `clarion token` as real processes:
//! the `listening on` line, tokens made and revoked from the command line,
//! the refusal to start without tokens, `--open-as` on loopback only, and
//! a graceful stop on SIGTERM with exit 0.

use std::time::{Duration, Instant};

use crate::support::rows;
use crate::support::server::*;
use crate::support::*;

dual_backend!(
    http_8_serve_with_tokens_from_the_command_line,
    http_4_serve_refuses_without_tokens_and_open_as_binds_loopback_only,
    http_8_serve_stops_gracefully_with_open_waits,
    http_8_serve_sweeps_unless_no_sweep,
    http_5_a_wait_wakes_at_the_deadline
);

/// HTTP-5, WAIT-5: a long-poll wait on a bundle due in a second comes
/// back at the deadline with the default's outcome, by its own check: the
/// server does not sweep (`--no-sweep`) and nothing else happens.
fn http_5_a_wait_wakes_at_the_deadline(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let system = db
        .add_token(&clarion::Principal::System, "asks")
        .unwrap()
        .token;
    let mut served = serve(&db.url, &["--open-as", "user:alice", "--no-sweep"]);
    let asked = send(
        client()
            .post(served.url("/api/v1/clarification/request"))
            .bearer_auth(&system)
            .json(&serde_json::json!({
                "session_id": session,
                "questions": [{"title": "Go?", "prompt": "Ship it?", "options": [
                    {"label": "Yes", "description": "ship"}, {"label": "No", "description": "wait"}]}],
                "expires_in_ms": 1000,
                "on_expire": {"action": "reject", "reject_reason": "no answer in time"},
            })),
    );
    assert_eq!(asked.status, 200, "{}", asked.body);
    let id = asked.json()["pending_id"].as_str().unwrap().to_owned();
    let started = Instant::now();
    let waited = send(
        client().get(served.url(&format!("/api/v1/clarification/{id}/wait?timeout_ms=60000"))),
    );
    assert_eq!(waited.status, 200, "{}", waited.body);
    let body = waited.json();
    assert_eq!(body["status"], "rejected", "{body}");
    assert_eq!(body["response"]["decided_by"], "deadline", "{body}");
    // Without its own check at the deadline the wait would next look at
    // its 15 s keep-alive check (HTTP-10), or its 60 s timeout.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "woken at the deadline: {:?}",
        started.elapsed()
    );
    assert_eq!(served.terminate(Duration::from_secs(20)).code(), Some(0));
}

/// HTTP-8, EXP-4: `clarion serve` settles due bundles by itself (its
/// sweeper's first round runs at start); with `--no-sweep` it leaves them
/// for whoever meets them. The bundles' deadlines are a minute after the
/// test clock, long past for the server's system clock.
fn http_8_serve_sweeps_unless_no_sweep(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.expires = Some(clarion::Expiry::In(Duration::from_secs(60)));
    let left = db.ask(&request).unwrap().pending_id;
    let expired = |id: &str| rows::statuses(db, id) == [Some("expired".to_owned())];

    let mut unswept = serve(&db.url, &["--open-as", "user:alice", "--no-sweep"]);
    let listed = send(client().get(unswept.url("/api/v1/summary")));
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.json()["pending_bundles"], 0, "due: not counted");
    assert!(!expired(&left), "--no-sweep: nothing settled it");
    assert_eq!(unswept.terminate(Duration::from_secs(20)).code(), Some(0));

    let mut swept = serve(&db.url, &["--open-as", "user:alice"]);
    eventually(
        Duration::from_secs(30),
        "the server's sweeper settles it",
        || expired(&left),
    );
    assert_eq!(swept.terminate(Duration::from_secs(20)).code(), Some(0));
}

/// HTTP-4, HTTP-8: a token made on the command line serves requests
/// until it is revoked there; SIGTERM stops the server with exit 0.
fn http_8_serve_with_tokens_from_the_command_line(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let added = clarion(&[
        "token",
        "add",
        "--as",
        "user:alice",
        "--label",
        "laptop",
        "--database-url",
        &db.url,
    ]);
    let stdout = succeeded(added, "clarion token add");
    let token = stdout.lines().last().unwrap().to_owned();
    assert!(token.starts_with("clr_") && token.len() >= 47, "{token}");
    let listed = succeeded(
        clarion(&["token", "list", "--database-url", &db.url]),
        "clarion token list",
    );
    let line = listed.lines().next().unwrap();
    assert!(
        line.contains("user:alice") && line.contains("live") && line.contains("laptop"),
        "{line}"
    );
    assert!(!listed.contains(&token), "the list shows a token's text");
    let id = line.split_whitespace().next().unwrap().to_owned();

    let mut served = serve(&db.url, &[]);
    let listing = send(
        client()
            .get(served.url("/api/v1/clarification"))
            .bearer_auth(&token),
    );
    assert_eq!(listing.status, 200, "{}", listing.body);
    assert_eq!(listing.json()["count"], 1);
    assert_eq!(
        send(client().get(served.url("/api/v1/summary"))).status,
        401
    );

    succeeded(
        clarion(&["token", "revoke", &id[..8], "--database-url", &db.url]),
        "clarion token revoke",
    );
    assert_eq!(
        send(
            client()
                .get(served.url("/api/v1/summary"))
                .bearer_auth(&token)
        )
        .status,
        401
    );
    let unknown = clarion(&["token", "revoke", "ffffffffffff", "--database-url", &db.url]);
    assert_eq!(unknown.status.code(), Some(3), "{unknown:?}");

    let status = served.terminate(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// HTTP-4: no tokens and no `--open-as`: refuse to start; `--open-as`
/// only on loopback, where requests without a credential act as it.
fn http_4_serve_refuses_without_tokens_and_open_as_binds_loopback_only(db: &TestDb) {
    let refused = clarion(&[
        "serve",
        "--database-url",
        &db.url,
        "--listen",
        "127.0.0.1:0",
    ]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("no tokens"),
        "{refused:?}"
    );
    let wide = clarion(&[
        "serve",
        "--database-url",
        &db.url,
        "--listen",
        "0.0.0.0:0",
        "--open-as",
        "user:alice",
    ]);
    assert!(!wide.status.success());
    assert!(
        String::from_utf8_lossy(&wide.stderr).contains("loopback"),
        "{wide:?}"
    );

    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let mut served = serve(&db.url, &["--open-as", "user:alice"]);
    let got = send(client().get(served.url(&format!("/api/v1/clarification/{pending}"))));
    assert_eq!(got.status, 200, "{}", got.body);
    // An open server's ambient principal obeys the origin rule.
    let foreign = send(
        client()
            .post(served.url(&format!("/api/v1/clarification/{pending}/cancel")))
            .header("origin", "http://evil.example"),
    );
    assert_eq!(foreign.status, 403);
    // A given credential must still be valid.
    assert_eq!(
        send(
            client()
                .get(served.url("/api/v1/summary"))
                .bearer_auth("clr_nope")
        )
        .status,
        401
    );
    assert_eq!(served.terminate(Duration::from_secs(20)).code(), Some(0));
}

/// HTTP-8: SIGTERM answers an open wait with 503 and exits 0 well
/// within the grace period. That 503, like a wait's 504 (WIRE-1), is an
/// outcome the server documents, not a fault: both log at `info`, and
/// nothing logs an error.
fn http_8_serve_stops_gracefully_with_open_waits(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let token = db.add_token(&alice(), "").unwrap().token;
    let system = db.add_token(&clarion::Principal::System, "").unwrap().token;
    let place = tempfile::tempdir().unwrap();
    let log_path = place.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut served = serve_logged(&db.url, &["--grace-period", "5"], &log);
    let wait = |timeout_ms: u64| {
        served.url(&format!(
            "/api/v1/clarification/{pending}/wait?timeout_ms={timeout_ms}"
        ))
    };
    let timed_out = send(client().get(wait(100)).bearer_auth(&token));
    assert_eq!(timed_out.status, 504, "{}", timed_out.text());
    let url = wait(50000);
    let waiter = std::thread::spawn(move || send(client().get(url).bearer_auth(token)));
    let metrics = served.url("/metrics");
    eventually(Duration::from_secs(30), "the wait began", || {
        crate::http_routes::waits_in_flight(&metrics, &system) >= 1
    });
    let started = Instant::now();
    let status = served.terminate(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}",
        started.elapsed()
    );
    let reply = waiter.join().unwrap();
    assert_eq!(reply.text(), r#"503 {"error":"server shutting down"}"#);
    let logged = std::fs::read_to_string(&log_path).unwrap();
    let line = |words: &str| logged.lines().find(|line| line.contains(words));
    for words in ["wait timed out", "service unavailable"] {
        let found = line(words).unwrap_or_else(|| panic!("no {words:?} in the log:\n{logged}"));
        assert!(found.contains(" INFO "), "{found}");
    }
    assert!(line("ERROR").is_none(), "{logged}");
}
