//! HTTP-2, HTTP-5, HTTP-7: every route over a real loopback socket with a
//! real client, its body compared byte for byte with the envelope the
//! library makes for the same call (WIRE-1..3), on both backends.

use std::time::Duration;

use clarion::envelope;
use clarion::{Entity, Error, ListRequest};
use serde_json::json;

use crate::support::server::*;
use crate::support::*;

fn ask_args(session: &str) -> String {
    json!({
        "session_id": session,
        "questions": [{"prompt": "Ship it?", "options": [
            {"label": "Yes", "description": "ship"},
            {"label": "No", "description": "wait"},
        ]}],
    })
    .to_string()
}

const ANSWER: &str = r#"{"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "yes"}]}"#;

/// The server's `clarion_waits_in_flight` gauge, read from `metrics_url`
/// with a system token: a wait counts once it has begun (its waker is
/// registered), so a test waits on this, not on a sleep.
pub fn waits_in_flight(metrics_url: &str, system_token: &str) -> u64 {
    send(client().get(metrics_url).bearer_auth(system_token))
        .body
        .lines()
        .find_map(|line| line.strip_prefix("clarion_waits_in_flight "))
        .and_then(|value| value.parse::<u64>().ok())
        .unwrap()
}

dual_backend!(
    http_2_every_route_answers_the_library_envelope,
    http_2_rpc_calls_any_wire_5_operation,
    http_5_waits_over_http,
    wait_1b_a_wait_cut_by_the_door_does_not_detach,
    http_5_waits_hold_no_thread_and_end_with_their_client,
    http_8_open_waits_answer_503_on_shutdown,
    http_7_operations,
    http_7_openapi_document_is_pinned
);

/// HTTP-2, HTTP-3: each route's bytes are the library's envelope for
/// the same call, with JSON and no-store headers.
fn http_2_every_route_answers_the_library_envelope(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let server = start(db);
    let t = tokens(db);

    let listed = get(&server, &t.alice, "/api/v1/clarification");
    assert_eq!(
        listed.text(),
        result_text(
            db.list_pending(&alice(), &ListRequest::default()),
            envelope::list_page
        )
    );
    assert_eq!(listed.header("content-type"), Some("application/json"));
    assert_eq!(listed.header("cache-control"), Some("no-store"));
    let paged = get(
        &server,
        &t.alice,
        "/api/v1/clarification?limit=1&workspace_id=w-a",
    );
    assert_eq!(paged.text(), listed.text());

    let got = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}"),
    );
    assert_eq!(
        got.text(),
        result_text(db.get_bundle(&alice(), &pending), envelope::bundle_detail)
    );
    // AUTH-5 over HTTP: bob's not-found is the library's not-found.
    let hidden = get(&server, &t.bob, &format!("/api/v1/clarification/{pending}"));
    assert_eq!(
        hidden.text(),
        envelope_text(envelope::error(&Error::NotFound(Entity::Bundle)))
    );

    let summary = get(&server, &t.alice, "/api/v1/summary");
    assert_eq!(
        summary.text(),
        result_text(db.summary(&alice()), envelope::summary)
    );

    let actions = post(
        &server,
        &t.alice,
        "/api/v1/pending-actions",
        r#"{"task_ids": ["t-a", "t-x"]}"#,
    );
    assert_eq!(
        actions.text(),
        result_text(
            db.pending_actions(&alice(), &["t-a".into(), "t-x".into()]),
            |tasks| envelope::pending_actions(tasks)
        )
    );

    // Asking is a host operation: system only (AUTH-2).
    let denied = post(
        &server,
        &t.alice,
        "/api/v1/clarification/request",
        &ask_args(&session),
    );
    assert_eq!(
        denied.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );
    let asked = post(
        &server,
        &t.system,
        "/api/v1/clarification/request",
        &ask_args(&session),
    );
    assert_eq!(asked.status, 200, "{}", asked.body);
    let asked = asked.json();
    assert_eq!(asked["created"], json!(true));
    let second = asked["pending_id"].as_str().unwrap().to_owned();

    // The winner, then a loser that gets the winner's bytes.
    let won = post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/respond"),
        ANSWER,
    );
    assert_eq!(won.status, 200, "{}", won.body);
    let won_json = won.json();
    assert_eq!(won_json["claimed"], json!(true));
    assert_eq!(won_json["status"], json!("answered"));
    let lost = post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/respond"),
        ANSWER,
    );
    assert_eq!(
        lost.text(),
        result_text(
            db.resolve_bundle(&alice(), &pending, &one_answer("other")),
            envelope::resolved
        )
    );
    // A settled bundle's wait answers at once, as the library does.
    let waited = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/wait?timeout_ms=0"),
    );
    assert_eq!(
        waited.text(),
        result_text(
            db.wait_bundle(&alice(), &pending, Duration::ZERO),
            envelope::resolved
        )
    );

    // Cancel: no body, or `{}`.
    let cancelled = send(
        client()
            .post(server.url(&format!("/api/v1/clarification/{second}/cancel")))
            .bearer_auth(&t.alice),
    );
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    assert_eq!(cancelled.json()["status"], json!("cancelled"));
    let again = post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{second}/cancel"),
        "{}",
    );
    assert_eq!(
        again.text(),
        result_text(db.cancel_bundle(&alice(), &second), envelope::resolved)
    );
    // An agent may not cancel (AUTH-2).
    let by_agent = post(
        &server,
        &t.alice_bot,
        &format!("/api/v1/clarification/{second}/cancel"),
        "{}",
    );
    assert_eq!(
        by_agent.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );
}

/// HTTP-2: `/rpc/{op}` takes exactly WIRE-5's args; the principal comes
/// from authentication (a `principal` member is a 400), an unknown op
/// (`metrics` among them) is a 400.
fn http_2_rpc_calls_any_wire_5_operation(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let server = start(db);
    let t = tokens(db);

    let summary = post(&server, &t.alice, "/api/v1/rpc/summary", "");
    assert_eq!(
        summary.text(),
        result_text(db.summary(&alice()), envelope::summary)
    );
    let got = post(
        &server,
        &t.alice,
        "/api/v1/rpc/get_bundle",
        &json!({"pending_id": pending}).to_string(),
    );
    assert_eq!(
        got.text(),
        result_text(db.get_bundle(&alice(), &pending), envelope::bundle_detail)
    );
    let turn = post(
        &server,
        &t.system,
        "/api/v1/rpc/begin_turn",
        r#"{"session_id": "s-a"}"#,
    );
    assert_eq!(turn.status, 200, "{}", turn.body);
    assert!(turn.json()["turn_id"].is_string());
    let upsert = post(
        &server,
        &t.system,
        "/api/v1/rpc/upsert_workspace",
        r#"{"id": "w-new", "owner_id": "carol"}"#,
    );
    assert_eq!(upsert.text(), r#"200 {"ok":true}"#);
    let denied = post(
        &server,
        &t.alice,
        "/api/v1/rpc/upsert_workspace",
        r#"{"id": "w-x"}"#,
    );
    assert_eq!(
        denied.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );

    let smuggled = post(
        &server,
        &t.alice,
        "/api/v1/rpc/summary",
        r#"{"principal": {"kind": "system"}}"#,
    );
    assert_eq!(smuggled.status, 400);
    assert!(
        smuggled.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("principal:"),
        "{}",
        smuggled.body
    );
    for op in ["metrics", "nope", "events"] {
        let unknown = post(&server, &t.system, &format!("/api/v1/rpc/{op}"), "{}");
        assert_eq!(
            unknown.text(),
            format!(r#"400 {{"error":"op: unknown operation \"{op}\""}}"#)
        );
    }
    // An unknown op is a 400 even for a principal that may do nothing.
    for op in ["nope", "metrics"] {
        let unknown = post(
            &server,
            &t.alice_bot_none,
            &format!("/api/v1/rpc/{op}"),
            "{",
        );
        assert_eq!(
            unknown.text(),
            format!(r#"400 {{"error":"op: unknown operation \"{op}\""}}"#)
        );
    }
    // The capability comes before the arguments are read (WIRE-5).
    let denied_first = post(&server, &t.alice_bot_none, "/api/v1/rpc/get_bundle", "[1,");
    assert_eq!(
        denied_first.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );
    let bad_args = post(&server, &t.alice, "/api/v1/rpc/get_bundle", "[1]");
    assert_eq!(bad_args.status, 400, "{}", bad_args.body);
}

/// HTTP-5: waits time out with WIRE-1's 504, wake up on an answer, and
/// the agent-side `wait` answers WAIT-1's outcomes over `/rpc`.
fn http_5_waits_over_http(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let server = start(db);
    let t = tokens(db);

    let timed_out = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/wait?timeout_ms=100"),
    );
    assert_eq!(
        timed_out.text(),
        envelope_text(envelope::error(&Error::TimedOut))
    );
    let negative = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/wait?timeout_ms=-1"),
    );
    assert_eq!(
        negative.text(),
        r#"400 {"error":"timeout_ms: must not be negative"}"#
    );

    // A wait woken by an answer committed through the library.
    let url = server.url(&format!("/api/v1/clarification/{pending}/wait"));
    let token = t.alice.clone();
    let waiter = std::thread::spawn(move || send(client().get(url).bearer_auth(token)));
    let metrics = server.url("/metrics");
    eventually(Duration::from_secs(30), "the wait began", || {
        waits_in_flight(&metrics, &t.system) >= 1
    });
    db.resolve_bundle(&alice(), &pending, &one_answer("yes"))
        .unwrap();
    let woken = waiter.join().unwrap();
    assert_eq!(
        woken.text(),
        result_text(
            db.wait_bundle(&alice(), &pending, Duration::ZERO),
            envelope::resolved
        )
    );

    // The agent side through /rpc: a host operation.
    let rpc_wait = format!(r#"{{"pending_id": "{pending}", "timeout_ms": 0}}"#);
    let denied = post(&server, &t.alice, "/api/v1/rpc/wait", &rpc_wait);
    assert_eq!(
        denied.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );
    let outcome = post(&server, &t.system, "/api/v1/rpc/wait", &rpc_wait);
    assert_eq!(
        outcome.text(),
        result_text(db.wait(&pending, Duration::ZERO), envelope::waited)
    );
    let other = ask(db, &session, 1);
    let timed = post(
        &server,
        &t.system,
        "/api/v1/rpc/wait",
        &format!(r#"{{"pending_id": "{other}", "timeout_ms": 50}}"#),
    );
    assert_eq!(
        timed.text(),
        r#"200 {"outcome":"timed_out","response":null}"#
    );
    let through_rpc = post(
        &server,
        &t.alice,
        "/api/v1/rpc/wait_bundle",
        &format!(r#"{{"pending_id": "{other}", "timeout_ms": 50}}"#),
    );
    assert_eq!(
        through_rpc.text(),
        envelope_text(envelope::error(&Error::TimedOut))
    );
    let unknown = post(
        &server,
        &t.alice,
        "/api/v1/rpc/wait_bundle",
        r#"{"pending_id": "nope", "timeout_ms": 50}"#,
    );
    assert_eq!(
        unknown.text(),
        envelope_text(envelope::error(&Error::NotFound(Entity::Bundle)))
    );
}

/// HTTP-5, WAIT-1b: a wait the door cuts short answers `timed_out`
/// (or 504) at the cap and leaves the bundle attached, as does one asked
/// with `detach_on_timeout: false` (WIRE-5); one that ends at the
/// caller's own timeout detaches it (WAIT-1), so only its answer goes to
/// the outbox.
fn wait_1b_a_wait_cut_by_the_door_does_not_detach(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let server = start_with(
        db,
        clarion::http::TokenAuthenticator::new(db),
        clarion::http::HttpOptions::new().wait_cap(Duration::from_millis(300)),
    );
    let t = tokens(db);
    let cut = ask(db, &session, 1);
    let started = std::time::Instant::now();
    let reply = post(
        &server,
        &t.system,
        "/api/v1/rpc/wait",
        &format!(r#"{{"pending_id": "{cut}", "timeout_ms": 20000}}"#),
    );
    assert_eq!(
        reply.text(),
        r#"200 {"outcome":"timed_out","response":null}"#
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not cut: {:?}",
        started.elapsed()
    );
    let own = ask(db, &session, 1);
    let reply = post(
        &server,
        &t.system,
        "/api/v1/rpc/wait",
        &format!(r#"{{"pending_id": "{own}", "timeout_ms": 100}}"#),
    );
    assert_eq!(
        reply.text(),
        r#"200 {"outcome":"timed_out","response":null}"#
    );
    // The external wait is cut the same way, by default too.
    let external = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{cut}/wait"),
    );
    assert_eq!(
        external.text(),
        envelope_text(envelope::error(&Error::TimedOut))
    );

    // WIRE-5: a caller waiting in slices says so; its own timeout then
    // detaches nothing either.
    let sliced = ask(db, &session, 1);
    let reply = post(
        &server,
        &t.system,
        "/api/v1/rpc/wait",
        &format!(r#"{{"pending_id": "{sliced}", "timeout_ms": 100, "detach_on_timeout": false}}"#),
    );
    assert_eq!(
        reply.text(),
        r#"200 {"outcome":"timed_out","response":null}"#
    );

    db.resolve_bundle(&alice(), &cut, &one_answer("cut"))
        .unwrap();
    db.resolve_bundle(&alice(), &own, &one_answer("own"))
        .unwrap();
    db.resolve_bundle(&alice(), &sliced, &one_answer("sliced"))
        .unwrap();
    assert_eq!(outbox(db), vec![own]);
}

/// HTTP-5: open waits hold no thread each, and a client that goes away
/// ends its wait at once (the waits-in-flight gauge falls back to 0).
fn http_5_waits_hold_no_thread_and_end_with_their_client(db: &TestDb) {
    use std::io::Write;
    let session = mirror(db, "a", "alice");
    let server = start(db);
    let t = tokens(db);
    let waits: u64 = 300;
    let bundles: Vec<String> = (0..10).map(|_| ask(db, &session, 1)).collect();
    let metrics = server.url("/metrics");
    let in_flight = || waits_in_flight(&metrics, &t.system);
    let before = server.threads();
    let connections: Vec<std::net::TcpStream> = (0..waits as usize)
        .map(|n| {
            let mut stream = std::net::TcpStream::connect(server.authority()).unwrap();
            let request = format!(
                "GET /api/v1/clarification/{}/wait?timeout_ms=50000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n",
                bundles[n % bundles.len()],
                t.alice
            );
            stream.write_all(request.as_bytes()).unwrap();
            stream
        })
        .collect();
    eventually(Duration::from_secs(30), "every wait began", || {
        in_flight() >= waits
    });
    let during = server.threads();
    println!("{waits} open waits: the server's threads {before} → {during}");
    // Two workers and the blocking pool the checks share (40 at most,
    // as `clarion serve` sizes it); none per wait.
    assert!(during <= 2 + 40, "{waits} waits took {during} threads");
    drop(connections);
    // "At once": 10 s is far beyond the few milliseconds this takes.
    eventually(
        Duration::from_secs(10),
        "no wait outlives its client",
        || in_flight() == 0,
    );
    // Nothing was detached by the clients going away (WAIT-1b).
    db.resolve_bundle(&alice(), &bundles[0], &one_answer("yes"))
        .unwrap();
    assert!(outbox(db).is_empty());
}

/// HTTP-8: once the shutdown begins, an open wait answers 503 at once.
fn http_8_open_waits_answer_503_on_shutdown(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let server = start(db);
    let t = tokens(db);
    let url = server.url(&format!(
        "/api/v1/clarification/{pending}/wait?timeout_ms=30000"
    ));
    let token = t.alice.clone();
    let waiter = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        (
            send(client().get(url).bearer_auth(token)),
            started.elapsed(),
        )
    });
    let metrics = server.url("/metrics");
    eventually(Duration::from_secs(30), "the wait began", || {
        waits_in_flight(&metrics, &t.system) >= 1
    });
    server.shutdown.begin();
    let (reply, took) = waiter.join().unwrap();
    assert_eq!(reply.text(), r#"503 {"error":"server shutting down"}"#);
    assert!(
        took < Duration::from_secs(10),
        "the wait held on for {took:?}"
    );
    server.stop();
}

/// HTTP-7: health, readiness, metrics (system only), request ids.
fn http_7_operations(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    ask(db, &session, 1);
    let server = start(db);
    let t = tokens(db);
    for path in ["/healthz", "/readyz"] {
        let reply = send(client().get(server.url(path)));
        assert_eq!(reply.text(), r#"200 {"ok":true}"#, "{path}");
    }
    post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/respond"),
        ANSWER,
    );
    post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/respond"),
        ANSWER,
    );

    let metrics = get(&server, &t.system, "/metrics");
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    for line in [
        "clarion_pending_bundles 1",
        "clarion_resolves_total{outcome=\"answered\"} 1",
        "clarion_resolve_losers_total 1",
        "clarion_waits_in_flight 0",
        "clarion_http_requests_total{route=\"/api/v1/clarification/{pending_id}/respond\",method=\"POST\",status=\"200\"} 2",
        "clarion_http_request_duration_seconds_count{route=\"/api/v1/clarification/{pending_id}/respond\",method=\"POST\"} 2",
    ] {
        assert!(metrics.body.lines().any(|l| l == line), "no {line:?} in\n{}", metrics.body);
    }
    let by_user = get(&server, &t.alice, "/metrics");
    assert_eq!(
        by_user.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );
    let anonymous = send(client().get(server.url("/metrics")));
    assert_eq!(anonymous.status, 401);

    // X-Request-Id: kept when given, made when not.
    let given = send(
        client()
            .get(server.url("/healthz"))
            .header("x-request-id", "abc-123"),
    );
    assert_eq!(given.header("x-request-id"), Some("abc-123"));
    let made = send(client().get(server.url("/healthz")));
    assert!(made.header("x-request-id").is_some_and(|id| id.len() >= 32));

    // Not ready once the database cannot be reached (here: the handle
    // closed, REL-7); alive all the same.
    db.close();
    assert_eq!(
        send(client().get(server.url("/readyz"))).text(),
        r#"503 {"error":"database unavailable"}"#
    );
    assert_eq!(
        send(client().get(server.url("/healthz"))).text(),
        r#"200 {"ok":true}"#
    );
}

/// HTTP-7: the OpenAPI 3.1 document of every route, generated from the
/// code, pinned by a snapshot.
fn http_7_openapi_document_is_pinned(db: &TestDb) {
    let server = start(db);
    let reply = send(client().get(server.url("/api/v1/openapi.json")));
    assert_eq!(reply.status, 200);
    let document = reply.json();
    assert_eq!(document["openapi"], json!("3.1.0"));
    for path in [
        "/api/v1/clarification",
        "/api/v1/clarification/{pending_id}",
        "/api/v1/clarification/{pending_id}/wait",
        "/api/v1/clarification/{pending_id}/respond",
        "/api/v1/clarification/{pending_id}/cancel",
        "/api/v1/clarification/request",
        "/api/v1/summary",
        "/api/v1/pending-actions",
        "/api/v1/session",
        "/api/v1/events",
        "/healthz",
        "/readyz",
        "/metrics",
        "/api/v1/openapi.json",
    ] {
        assert!(
            document["paths"].get(path).is_some(),
            "{path} is not documented"
        );
    }
    // Every WIRE-5 operation at its own `/rpc` path, with its schemas.
    for operation in clarion::Operation::all().filter(|op| *op != clarion::Operation::Metrics) {
        let path = format!("/api/v1/rpc/{operation}");
        let post = &document["paths"][&path]["post"];
        assert!(post.is_object(), "{path} is not documented");
        assert!(
            post["requestBody"]["content"]["application/json"]["schema"].is_object(),
            "{path}"
        );
        assert!(
            post["responses"]["200"]["content"]["application/json"]["schema"].is_object(),
            "{path}"
        );
    }
    let mut settings = snapshot_settings();
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!("http_openapi", reply.body));
}
