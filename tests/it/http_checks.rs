//! HTTP-3, HTTP-9: statuses, bodies and the order of checks, odd ids,
//! malformed and huge bodies, query parameters and slow clients, over a
//! real loopback socket on both backends.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use clarion::envelope;
use clarion::http::{self, HttpOptions, ServeOptions, Shutdown, TokenAuthenticator};
use clarion::{Entity, Error};

use crate::support::server::*;
use crate::support::*;

const NOT_FOUND: &str = r#"404 {"error":"route not found"}"#;
const NOT_ALLOWED: &str = r#"405 {"error":"method not allowed"}"#;
const UNAUTHENTICATED: &str = r#"401 {"error":"authentication required"}"#;
const TOO_LARGE: &str = r#"413 {"error":"request body too large"}"#;
const NOT_JSON: &str = r#"415 {"error":"content type must be application/json"}"#;

fn big_body() -> String {
    format!(r#"{{"reject_reason": "{}"}}"#, "x".repeat(2 << 20))
}

/// Sends raw bytes and reads the reply's status line, for paths a client
/// library would normalize (`..`).
fn raw_status(server: &Server, request: &str) -> String {
    let mut stream = TcpStream::connect(server.authority()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let status = reply.lines().next().unwrap_or_default().to_owned();
    let body = reply
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    format!("{status} {body}")
}

dual_backend!(
    http_3_check_order,
    http_3_refusals_of_unread_bodies_close_the_connection,
    http_9_odd_ids,
    http_3_query_parameters,
    http_3_refusals_are_pinned,
    http_9_slow_client_is_disconnected
);

/// HTTP-3: route (404, 405, no redirects) → authentication (401) →
/// cookie origin (403) → body limits (413, then 415) → WIRE-5 (400
/// envelope → 403 capability → 400 args → 404).
fn http_3_check_order(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let server = start(db);
    let t = tokens(db);
    let respond = format!("/api/v1/clarification/{pending}/respond");

    // Route first: unknown paths and methods, authenticated or not.
    assert_eq!(
        send(client().get(server.url("/api/v1/nope"))).text(),
        NOT_FOUND
    );
    assert_eq!(get(&server, &t.alice, "/api/v1/nope").text(), NOT_FOUND);
    assert_eq!(
        send(client().delete(server.url("/api/v1/summary"))).text(),
        NOT_ALLOWED
    );
    let not_allowed = send(client().get(server.url(&respond)));
    assert_eq!(not_allowed.text(), NOT_ALLOWED);
    assert_eq!(not_allowed.header("content-type"), Some("application/json"));
    assert_eq!(not_allowed.header("cache-control"), Some("no-store"));
    assert_eq!(not_allowed.header("allow"), Some("POST"));
    // No trailing-slash redirects.
    let slash = get(&server, &t.alice, "/api/v1/summary/");
    assert_eq!(slash.text(), NOT_FOUND);

    // Then authentication, before any body is looked at.
    let anonymous = send_refused(
        client()
            .post(server.url(&respond))
            .header("content-type", "text/plain")
            .body(big_body()),
    );
    assert_eq!(anonymous.text(), UNAUTHENTICATED);
    assert_eq!(anonymous.header("www-authenticate"), Some("Bearer"));
    // Then 413 before 415 before anything WIRE-5 says.
    let huge = send_refused(
        client()
            .post(server.url(&respond))
            .bearer_auth(&t.alice_bot_none)
            .header("content-type", "text/plain")
            .body(big_body()),
    );
    assert_eq!(huge.text(), TOO_LARGE);
    let huge_json = send_refused(post_request(&server, &t.alice, &respond, &big_body()));
    assert_eq!(huge_json.text(), TOO_LARGE);
    let plain = send(
        client()
            .post(server.url(&respond))
            .bearer_auth(&t.alice_bot_none)
            .header("content-type", "text/plain")
            .body("{}"),
    );
    assert_eq!(plain.text(), NOT_JSON);
    let untyped = send(
        client()
            .post(server.url(&respond))
            .bearer_auth(&t.alice)
            .body("{}"),
    );
    assert_eq!(untyped.text(), NOT_JSON);
    let with_charset = send(
        client()
            .post(server.url(&respond))
            .bearer_auth(&t.alice)
            .header("content-type", "application/json; charset=utf-8")
            .body(r#"{"rejected": true}"#),
    );
    assert_eq!(with_charset.status, 200, "{}", with_charset.body);
    // A body exactly at the limit is read, and judged by WIRE-5 (VAL-5).
    let padding = (1 << 20) - r#"{"reject_reason": ""}"#.len();
    let at_limit = post(
        &server,
        &t.alice,
        &respond,
        &format!(r#"{{"reject_reason": "{}"}}"#, "x".repeat(padding)),
    );
    assert_eq!(at_limit.status, 400, "{}", at_limit.body);
    assert!(at_limit.body.contains("reject_reason"), "{}", at_limit.body);
    // Then the capability, before the arguments are read (WIRE-5).
    let denied = post(&server, &t.alice_bot_none, &respond, "{not json");
    assert_eq!(
        denied.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );
    let malformed = post(&server, &t.alice, &respond, "{not json");
    assert_eq!(malformed.status, 400);
    assert!(
        malformed.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("body: not valid JSON"),
        "{}",
        malformed.body
    );
    let not_object = post(&server, &t.alice, &respond, "[1, 2]");
    assert_eq!(
        not_object.text(),
        r#"400 {"error":"body: expected an object, got an array"}"#
    );
    // A body that is there says something: `null` is no empty body.
    let null = post(&server, &t.alice, &respond, "null");
    assert_eq!(
        null.text(),
        r#"400 {"error":"body: expected an object, got null"}"#
    );
    let null_args = post(&server, &t.alice, "/api/v1/rpc/summary", "null");
    assert_eq!(
        null_args.text(),
        r#"400 {"error":"body: expected an object, got null"}"#
    );
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(post(&server, &t.alice, &respond, &deep).status, 400);
    let invalid_utf8 = send(
        client()
            .post(server.url(&respond))
            .bearer_auth(&t.alice)
            .header("content-type", "application/json")
            .body(vec![b'{', 0xff, b'}']),
    );
    assert_eq!(invalid_utf8.status, 400);
    let id_in_body = post(&server, &t.alice, &respond, r#"{"pending_id": "other"}"#);
    assert_eq!(id_in_body.status, 400);
    assert!(
        id_in_body.body.contains("pending_id"),
        "{}",
        id_in_body.body
    );
}

/// HTTP-3: a refusal that comes before the body was read closes the
/// connection and says so, so a client that pools connections never
/// sends its next request on a dead one.
fn http_3_refusals_of_unread_bodies_close_the_connection(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let pooled = reqwest::blocking::Client::new();
    for _ in 0..3 {
        let anonymous = send_refused(
            pooled
                .post(server.url("/api/v1/rpc/summary"))
                .header("content-type", "application/json")
                .body(big_body()),
        );
        assert_eq!(anonymous.text(), UNAUTHENTICATED);
        assert_eq!(anonymous.header("connection"), Some("close"));
        let huge = send_refused(
            pooled
                .post(server.url("/api/v1/rpc/summary"))
                .bearer_auth(&t.alice)
                .header("content-type", "application/json")
                .body(big_body()),
        );
        assert_eq!(huge.text(), TOO_LARGE);
        assert_eq!(
            send(
                pooled
                    .get(server.url("/api/v1/summary"))
                    .bearer_auth(&t.alice)
            )
            .status,
            200
        );
    }
}

/// HTTP-3, HTTP-9: path ids are percent-decoded once; NUL, empty and
/// non-UTF-8 ids are 400s; `..`, `%2F` and emoji are just ids (404).
fn http_9_odd_ids(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let not_found = envelope_text(envelope::error(&Error::NotFound(Entity::Bundle)));
    for id in [
        "a%2Fb",
        "%2F",
        "%F0%9F%98%80",
        "%252F",
        "a%20b",
        "..a",
        "a..",
        "%2E%2Ex",
    ] {
        assert_eq!(
            get(&server, &t.alice, &format!("/api/v1/clarification/{id}")).text(),
            not_found,
            "{id}"
        );
        assert_eq!(
            post(
                &server,
                &t.alice,
                &format!("/api/v1/clarification/{id}/respond"),
                "{}"
            )
            .text(),
            not_found,
            "{id}"
        );
    }
    let nul = get(&server, &t.alice, "/api/v1/clarification/a%00b");
    assert_eq!(
        nul.text(),
        r#"400 {"error":"pending_id: must not contain a NUL character"}"#
    );
    let nul = post(&server, &t.alice, "/api/v1/clarification/%00/cancel", "");
    assert_eq!(nul.status, 400, "{}", nul.body);
    let not_utf8 = get(&server, &t.alice, "/api/v1/clarification/%FF");
    assert_eq!(not_utf8.status, 400, "{}", not_utf8.body);
    let empty = post(&server, &t.alice, "/api/v1/clarification//respond", "{}");
    assert_eq!(empty.status, 400, "{}", empty.body);
    // Dot segments as written, which a client library would resolve
    // away: the server takes them as ids, never as path steps.
    let token = &t.alice;
    for id in ["..", "%2E%2E", ".", "%2e"] {
        let dots = raw_status(&server, &format!(
            "GET /api/v1/clarification/{id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        ));
        assert!(dots.starts_with("HTTP/1.1 404"), "{id}: {dots}");
        assert!(
            dots.ends_with(r#"{"error":"clarification request not found"}"#),
            "{id}: {dots}"
        );
    }
    let up = raw_status(&server, &format!(
        "GET /api/v1/clarification/../summary HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    ));
    assert!(up.starts_with("HTTP/1.1 404"), "{up}");
}

/// HTTP-3: an unknown or repeated query parameter is a 400 naming it;
/// an empty one is not given.
fn http_3_query_parameters(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let server = start(db);
    let t = tokens(db);
    let cases = [
        (
            "/api/v1/clarification?foo=1",
            r#"400 {"error":"foo: unknown query parameter"}"#,
        ),
        (
            "/api/v1/clarification?limit=1&limit=2",
            r#"400 {"error":"limit: repeated query parameter"}"#,
        ),
        (
            "/api/v1/clarification?limit=x",
            r#"400 {"error":"limit: expected an integer"}"#,
        ),
        (
            "/api/v1/clarification?limit=1.5",
            r#"400 {"error":"limit: expected an integer"}"#,
        ),
        (
            "/api/v1/clarification?created_since=yesterday",
            r#"400 {"error":"created_since: not an RFC 3339 timestamp: \"yesterday\""}"#,
        ),
        (
            "/api/v1/summary?x=",
            r#"400 {"error":"x: unknown query parameter"}"#,
        ),
    ];
    for (path, expected) in cases {
        assert_eq!(get(&server, &t.alice, path).text(), expected, "{path}");
    }
    let wait = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/wait?timeout_ms=0&timeout_ms=1"),
    );
    assert_eq!(
        wait.text(),
        r#"400 {"error":"timeout_ms: repeated query parameter"}"#
    );
    let get_with_query = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}?x=1"),
    );
    assert_eq!(
        get_with_query.text(),
        r#"400 {"error":"x: unknown query parameter"}"#
    );
    // Empty values are not given.
    let listed = get(&server, &t.alice, "/api/v1/clarification");
    let empty = get(
        &server,
        &t.alice,
        "/api/v1/clarification?limit=&workspace_id=&cursor=&created_since=",
    );
    assert_eq!(empty.text(), listed.text());
    // The capability still comes first (WIRE-5).
    let denied = get(&server, &t.alice_bot_none, "/api/v1/clarification?foo=1");
    assert_eq!(
        denied.text(),
        envelope_text(envelope::error(&Error::CapabilityDenied))
    );
}

/// HTTP-3, HTTP-4, HTTP-8: the door's own refusals, byte for byte,
/// pinned like every other envelope (status, body, and the headers
/// every API response carries).
fn http_3_refusals_are_pinned(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let (cookie, _) = {
        let reply = send(
            client()
                .post(server.url("/api/v1/session"))
                .header("content-type", "application/json")
                .body(format!(r#"{{"token": "{}"}}"#, t.alice)),
        );
        (
            reply
                .header("set-cookie")
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_owned(),
            (),
        )
    };
    let open = start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().loopback_hosts_only(true),
    );
    let capped = start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().streams_per_credential(1),
    );
    let _holding_the_place = client()
        .get(capped.url("/api/v1/events"))
        .bearer_auth(&t.alice)
        .send()
        .unwrap();
    let replies = [
        (
            "too_many_streams",
            send(
                client()
                    .get(capped.url("/api/v1/events"))
                    .bearer_auth(&t.alice),
            ),
        ),
        (
            "misdirected",
            send(
                client()
                    .get(open.url("/api/v1/summary"))
                    .header("host", "rebind.example"),
            ),
        ),
        ("route_not_found", send(client().get(server.url("/nope")))),
        (
            "method_not_allowed",
            send(client().put(server.url("/api/v1/summary"))),
        ),
        (
            "authentication_required",
            send(client().get(server.url("/api/v1/summary"))),
        ),
        (
            "cross_site_refused",
            send(
                client()
                    .post(server.url("/api/v1/rpc/summary"))
                    .header("cookie", cookie.as_str())
                    .header("origin", "http://evil.example"),
            ),
        ),
        (
            "body_too_large",
            send_refused(post_request(
                &server,
                &t.alice,
                "/api/v1/rpc/summary",
                &big_body(),
            )),
        ),
        (
            "content_type",
            send(
                client()
                    .post(server.url("/api/v1/rpc/summary"))
                    .bearer_auth(&t.alice)
                    .body("{}"),
            ),
        ),
        (
            "unknown_query_parameter",
            get(&server, &t.alice, "/api/v1/summary?x=1"),
        ),
        (
            "principal_in_rpc_body",
            post(
                &server,
                &t.alice,
                "/api/v1/rpc/summary",
                r#"{"principal": {"kind": "system"}}"#,
            ),
        ),
    ];
    // Once the shutdown began the listener is closed, so the router
    // itself answers a request that arrives on an open connection.
    let shutdown = {
        use tower::ServiceExt;
        let stop = Shutdown::new();
        let router = http::router(
            db.clarion.clone(),
            TokenAuthenticator::new(db),
            HttpOptions::new().shutdown(stop.clone()),
        );
        stop.begin();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let request = axum::http::Request::get("/api/v1/summary")
                .body(axum::body::Body::empty())
                .unwrap();
            let response = router.oneshot(request).await.unwrap();
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = http_body_util::BodyExt::collect(response.into_body())
                .await
                .unwrap()
                .to_bytes();
            Reply {
                status,
                headers,
                body: String::from_utf8(body.to_vec()).unwrap(),
            }
        })
    };
    // HTTP-12: a body that stops halfway, past the request deadline.
    let timed_out = {
        let slow = serve_with(
            db,
            ServeOptions::new().request_timeout(Duration::from_millis(300)),
        );
        let mut text = String::new();
        stalled_post(&slow, &t.alice)
            .read_to_string(&mut text)
            .unwrap();
        raw_reply(&text)
    };
    let mut settings = snapshot_settings();
    settings.set_omit_expression(true);
    settings.bind(|| {
        for (name, reply) in replies.iter().chain(
            [
                ("server_shutting_down", shutdown),
                ("request_timed_out", timed_out),
            ]
            .iter(),
        ) {
            let headers = format!(
                "content-type: {}; cache-control: {}; www-authenticate: {}",
                reply.header("content-type").unwrap_or("-"),
                reply.header("cache-control").unwrap_or("-"),
                reply.header("www-authenticate").unwrap_or("-"),
            );
            insta::assert_snapshot!(
                format!("http_refusal_{name}"),
                format!("{}\n{headers}", reply.text())
            );
        }
    });
}

/// HTTP-9: a client that never finishes its headers is disconnected
/// after the header-read timeout.
fn http_9_slow_client_is_disconnected(db: &TestDb) {
    let shutdown = Shutdown::new();
    let router = http::router(
        db.clarion.clone(),
        TokenAuthenticator::new(db),
        HttpOptions::new().shutdown(shutdown.clone()),
    );
    let server = serve_router(
        router,
        shutdown,
        ServeOptions::new().header_read_timeout(Duration::from_millis(500)),
    );
    let mut stream = TcpStream::connect(server.authority()).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut reply = Vec::new();
    let read = stream.read_to_end(&mut reply);
    let took = started.elapsed();
    assert!(read.is_ok(), "the connection was not closed: {read:?}");
    assert!(took < Duration::from_secs(5), "closed only after {took:?}");
    // A prompt client on another connection is served meanwhile.
    let healthy = send(client().get(server.url("/healthz")));
    assert_eq!(healthy.status, 200);
}
