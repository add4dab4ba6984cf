//! HTTP-4: bearer tokens, web sessions and the cookie origin rule, and a
//! host-written authenticator (HTTP-1), over a real loopback socket on
//! both backends.

use axum::http::request::Parts;
use clarion::http::{Authentication, Authenticator, HttpOptions, TokenAuthenticator};
use clarion::{Principal, Timestamp};
use serde_json::json;

use crate::support::server::*;
use crate::support::*;

const UNAUTHENTICATED: &str = r#"401 {"error":"authentication required"}"#;
const CROSS_SITE: &str = r#"403 {"error":"cross-site request refused"}"#;

fn with_cookie(request: reqwest::blocking::RequestBuilder, cookie: &str) -> Reply {
    send(request.header("cookie", cookie))
}

dual_backend!(
    http_4_bearer_tokens,
    http_4_web_sessions,
    http_4_cookie_origin_rule,
    http_4_secure_cookies,
    http_1_host_authenticator,
    http_1_mounted_under_a_prefix,
    http_4_token_store
);

/// HTTP-3, HTTP-4: no credential, an unknown, revoked or malformed one:
/// 401 with `WWW-Authenticate: Bearer`, never `unclassified`.
fn http_4_bearer_tokens(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let summary = server.url("/api/v1/summary");
    let none = send(client().get(&summary));
    assert_eq!(none.text(), UNAUTHENTICATED);
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    assert_eq!(none.header("content-type"), Some("application/json"));
    assert_eq!(
        get(&server, "clr_not-a-token", "/api/v1/summary").text(),
        UNAUTHENTICATED
    );
    assert_eq!(
        send(client().get(&summary).header("authorization", "Basic YTpi")).text(),
        UNAUTHENTICATED
    );
    assert_eq!(
        send(client().get(&summary).header("authorization", "Bearer")).text(),
        UNAUTHENTICATED
    );
    assert_eq!(get(&server, &t.alice, "/api/v1/summary").status, 200);

    let revoked = db.revoke_token(&t.alice).unwrap();
    assert!(revoked.revoked_at.is_some());
    assert_eq!(
        get(&server, &t.alice, "/api/v1/summary").text(),
        UNAUTHENTICATED
    );
    // Other tokens live on.
    assert_eq!(get(&server, &t.bob, "/api/v1/summary").status, 200);
}

/// HTTP-4: a token signs in to a 12-hour session cookie (HttpOnly,
/// SameSite=Strict); the session ends with sign-out, with its token,
/// and after 12 hours.
fn http_4_web_sessions(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let (cookie, set) = web_sign_in(&server, &t.alice);
    assert!(cookie.starts_with("clarion_session="), "{set}");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(
            set.split("; ").any(|a| a == attribute),
            "{attribute} missing in {set}"
        );
    }
    assert!(!set.contains("Secure"), "{set}");
    let summary = with_cookie(client().get(server.url("/api/v1/summary")), &cookie);
    assert_eq!(summary.status, 200, "{}", summary.body);

    // Wrong tokens do not sign in.
    for token in ["clr_nope", ""] {
        let reply = send(
            client()
                .post(server.url("/api/v1/session"))
                .header("content-type", "application/json")
                .body(json!({"token": token}).to_string()),
        );
        assert_ne!(reply.status, 200, "{token:?}");
    }

    // Sign-out ends the session and clears the cookie.
    let out = with_cookie(
        client()
            .delete(server.url("/api/v1/session"))
            .header("origin", server.base.as_str()),
        &cookie,
    );
    assert_eq!(out.text(), r#"200 {"ok":true}"#);
    assert!(out
        .header("set-cookie")
        .is_some_and(|c| c.contains("Max-Age=0")));
    let after = with_cookie(client().get(server.url("/api/v1/summary")), &cookie);
    assert_eq!(after.text(), UNAUTHENTICATED);

    // A session dies with its token.
    let (cookie, _) = web_sign_in(&server, &t.bob);
    db.revoke_token(&t.bob).unwrap();
    assert_eq!(
        with_cookie(client().get(server.url("/api/v1/summary")), &cookie).text(),
        UNAUTHENTICATED
    );

    // And after 12 hours.
    let (cookie, _) = web_sign_in(&server, &t.system);
    db.clock.advance_micros(12 * 3600 * 1_000_000 - 1);
    assert_eq!(
        with_cookie(client().get(server.url("/api/v1/summary")), &cookie).status,
        200
    );
    db.clock.advance_micros(1);
    assert_eq!(
        with_cookie(client().get(server.url("/api/v1/summary")), &cookie).text(),
        UNAUTHENTICATED
    );
    // A stale cookie is a 401, never `unclassified`.
    assert_eq!(
        with_cookie(
            client().get(server.url("/api/v1/summary")),
            "clarion_session=forged"
        )
        .text(),
        UNAUTHENTICATED
    );
}

/// HTTP-4: a cookie-authenticated unsafe request must come from the
/// server's own origin or an allowed one (Origin, else
/// Sec-Fetch-Site); a bearer request is not subject to it.
fn http_4_cookie_origin_rule(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let server = start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().allow_origin("http://inbox.example:8080"),
    );
    let t = tokens(db);
    let (cookie, _) = web_sign_in(&server, &t.alice);
    let cancel = |pending: &str| server.url(&format!("/api/v1/clarification/{pending}/cancel"));

    let pending = ask(db, &session, 1);
    let foreign = with_cookie(
        client()
            .post(cancel(&pending))
            .header("origin", "http://evil.example"),
        &cookie,
    );
    assert_eq!(foreign.text(), CROSS_SITE);
    let cross_site = with_cookie(
        client()
            .post(cancel(&pending))
            .header("sec-fetch-site", "cross-site"),
        &cookie,
    );
    assert_eq!(cross_site.text(), CROSS_SITE);
    let same_site = with_cookie(
        client()
            .post(cancel(&pending))
            .header("sec-fetch-site", "same-site"),
        &cookie,
    );
    assert_eq!(same_site.text(), CROSS_SITE);
    let null = with_cookie(
        client().post(cancel(&pending)).header("origin", "null"),
        &cookie,
    );
    assert_eq!(null.text(), CROSS_SITE);
    // The origin rule comes before the body limits (HTTP-3).
    let huge = with_cookie(
        client()
            .post(cancel(&pending))
            .header("origin", "http://evil.example")
            .header("content-type", "text/plain")
            .body("x".repeat(2 << 20)),
        &cookie,
    );
    assert_eq!(huge.text(), CROSS_SITE);
    // Safe methods carry no origin rule.
    let read = with_cookie(
        client()
            .get(server.url("/api/v1/summary"))
            .header("origin", "http://evil.example"),
        &cookie,
    );
    assert_eq!(read.status, 200);
    // Bearer tokens are sent deliberately: no origin rule.
    let bearer = send(
        client()
            .post(cancel(&pending))
            .bearer_auth(&t.alice)
            .header("origin", "http://evil.example"),
    );
    assert_eq!(bearer.status, 200, "{}", bearer.body);

    for allowed in [server.base.clone(), "http://inbox.example:8080".to_owned()] {
        let pending = ask(db, &session, 1);
        let reply = with_cookie(
            client()
                .post(cancel(&pending))
                .header("origin", allowed.as_str()),
            &cookie,
        );
        assert_eq!(reply.status, 200, "{allowed}: {}", reply.body);
    }
    let pending = ask(db, &session, 1);
    let same_origin = with_cookie(
        client()
            .post(cancel(&pending))
            .header("sec-fetch-site", "same-origin"),
        &cookie,
    );
    assert_eq!(same_origin.status, 200, "{}", same_origin.body);

    // A sign-in from a foreign page is refused too.
    let login = send(
        client()
            .post(server.url("/api/v1/session"))
            .header("origin", "http://evil.example")
            .header("content-type", "application/json")
            .body(json!({"token": t.alice}).to_string()),
    );
    assert_eq!(login.text(), CROSS_SITE);

    // CORS with credentials for the allowed origin only (HTTP-8).
    let preflight = send(
        client()
            .request(reqwest::Method::OPTIONS, server.url("/api/v1/summary"))
            .header("origin", "http://inbox.example:8080")
            .header("access-control-request-method", "POST"),
    );
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("http://inbox.example:8080")
    );
    assert_eq!(
        preflight.header("access-control-allow-credentials"),
        Some("true")
    );
    let other = send(
        client()
            .get(server.url("/healthz"))
            .header("origin", "http://evil.example"),
    );
    assert_eq!(other.header("access-control-allow-origin"), None);
}

/// HTTP-4: behind TLS (`--secure-cookies`) the cookie is `Secure`.
fn http_4_secure_cookies(db: &TestDb) {
    let server = start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().secure_cookies(true),
    );
    let t = tokens(db);
    let (_, set) = web_sign_in(&server, &t.alice);
    assert!(set.split("; ").any(|a| a == "Secure"), "{set}");
}

/// HTTP-1: a host-written authenticator decides who calls; without
/// sessions, sign-in is a 401.
fn http_1_host_authenticator(db: &TestDb) {
    struct Header;
    impl Authenticator for Header {
        fn authenticate(&self, request: &Parts) -> Authentication {
            match request.headers.get("x-user").and_then(|v| v.to_str().ok()) {
                Some("") => Authentication::Invalid,
                Some(user) => Authentication::Bearer(Principal::user(user)),
                None => Authentication::Missing,
            }
        }
    }
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let server = start_with(db, Header, HttpOptions::new());
    let read = |user: Option<&str>| {
        let mut request = client().get(server.url(&format!("/api/v1/clarification/{pending}")));
        if let Some(user) = user {
            request = request.header("x-user", user);
        }
        send(request)
    };
    assert_eq!(read(Some("alice")).status, 200);
    assert_eq!(read(Some("bob")).status, 404);
    assert_eq!(read(Some("")).text(), UNAUTHENTICATED);
    assert_eq!(read(None).text(), UNAUTHENTICATED);
    let login = send(
        client()
            .post(server.url("/api/v1/session"))
            .header("content-type", "application/json")
            .body(r#"{"token": "anything"}"#),
    );
    assert_eq!(login.text(), UNAUTHENTICATED);
}

/// HTTP-1: the router mounted under a prefix of a host's own app keeps
/// its routes, its JSON refusals and its authentication there.
fn http_1_mounted_under_a_prefix(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let t = tokens(db);
    let shutdown = clarion::http::Shutdown::new();
    let inbox = clarion::http::router(
        db.clarion.clone(),
        TokenAuthenticator::new(db),
        HttpOptions::new().shutdown(shutdown.clone()),
    );
    let app = axum::Router::new()
        .route("/", axum::routing::get(|| async { "host page" }))
        // With the slash, the page is at `/inbox/`, where its relative
        // module paths resolve (axum 0.8 puts a nested `/` at exactly the
        // prefix given).
        .nest("/inbox/", inbox);
    let server = serve_router(app, shutdown, clarion::http::ServeOptions::new());
    assert_eq!(send(client().get(server.url("/"))).text(), "200 host page");
    // The page, whose modules load relative to it, at the prefix's folder.
    let page = send(client().get(server.url("/inbox/")));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<html"), "{}", page.body);
    let got = get(
        &server,
        &t.alice,
        &format!("/inbox/api/v1/clarification/{pending}"),
    );
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(
        send(client().get(server.url("/inbox/api/v1/summary"))).text(),
        UNAUTHENTICATED
    );
    assert_eq!(
        get(&server, &t.alice, "/inbox/api/v1/nope").text(),
        r#"404 {"error":"route not found"}"#
    );
    assert_eq!(
        send(client().delete(server.url("/inbox/api/v1/summary"))).text(),
        r#"405 {"error":"method not allowed"}"#
    );
    let metrics = get(&server, &t.system, "/inbox/metrics");
    assert!(
        metrics
            .body
            .contains(r#"route="/inbox/api/v1/clarification/{pending_id}""#),
        "{}",
        metrics.body
    );
}

/// HTTP-4: tokens in the library: listed without their text, revoked
/// by an id prefix, refused for `unclassified`.
fn http_4_token_store(db: &TestDb) {
    let made = db.add_token(&alice(), "laptop").unwrap();
    assert!(
        made.token.starts_with("clr_") && made.token.len() >= 4 + 43,
        "{}",
        made.token
    );
    assert_eq!(db.token_principal(&made.token).unwrap(), Some(alice()));
    let listed = db.list_tokens().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].label, "laptop");
    assert_eq!(
        listed[0].created_at,
        Timestamp::from_micros(EPOCH.as_micros())
    );
    assert!(db.add_token(&Principal::Unclassified, "").is_err());
    assert!(db.revoke_token("abc").is_err(), "a short prefix is refused");
    assert!(db.revoke_token("zzzzzz").is_err());
    let revoked = db.revoke_token(&made.info.id[..8]).unwrap();
    assert_eq!(revoked.id, made.info.id);
    assert_eq!(db.token_principal(&made.token).unwrap(), None);
    assert!(!db.has_live_tokens().unwrap());
    assert!(db.open_web_session(&made.token).unwrap().is_none());
}
