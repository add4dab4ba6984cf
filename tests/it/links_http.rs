//! LINK-2, LINK-3, LINK-5 over the HTTP door: `/a/<token>` opens the page
//! or gives one `404` page for every reason, and changes nothing; the
//! link API answers once through the one claim with channel `link`; a
//! link credential opens no other route, and no other credential opens
//! the link routes; rotation; and the token in no log line. A real server
//! on loopback, a real client, both backends.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use clarion::http::{HttpOptions, TokenAuthenticator};
use clarion::{Principal, Timestamp};
use serde_json::json;

use crate::support::server::*;
use crate::support::*;

dual_backend!(
    link_2_opening_changes_nothing,
    link_2_every_refusal_is_the_same_404,
    link_3_a_link_wins_once_then_is_410,
    link_3_a_losing_link_post_gets_the_winner,
    link_3_a_link_and_a_bearer_race_to_one_winner,
    link_3_the_link_routes_check_in_http_3_order,
    link_3_the_link_credential_opens_no_other_route,
    link_3_no_other_credential_opens_the_link_routes,
    link_5_rotation_without_now_keeps_links_with_now_ends_them,
    link_5_the_token_is_in_no_log_line
);

const ANSWER: &str = r#"{"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "yes"}]}"#;

/// A bundle in `w-a` (owned by alice; bob a member), and its pending id.
fn world(db: &TestDb) -> String {
    let session = mirror(db, "a", "alice");
    db.set_members("w-a", &["bob".to_owned()]).unwrap();
    ask(db, &session, 1)
}

/// A link's token for `user` on `pending`, minted as the host.
fn token(db: &TestDb, pending: &str, user: &str) -> String {
    token_for(db, pending, user, None)
}

fn token_for(db: &TestDb, pending: &str, user: &str, ttl: Option<Duration>) -> String {
    let link = db.answer_link(pending, user, ttl).unwrap();
    link.url.strip_prefix("/a/").unwrap().to_owned()
}

fn page(server: &Server, path: &str) -> Reply {
    send(client().get(server.url(path)))
}

fn head(server: &Server, path: &str) -> Reply {
    send(client().head(server.url(path)))
}

fn link_get(server: &Server, token: &str) -> Reply {
    send(
        client()
            .get(server.url("/api/v1/link/bundle"))
            .header("authorization", format!("Link {token}")),
    )
}

fn link_post(server: &Server, token: &str, action: &str, body: &str) -> Reply {
    send_refused(
        client()
            .post(server.url(&format!("/api/v1/link/{action}")))
            .header("authorization", format!("Link {token}"))
            .header("content-type", "application/json")
            .body(body.to_owned()),
    )
}

/// LINK-2: what every link page carries.
fn assert_link_headers(reply: &Reply, what: &str) {
    assert_eq!(
        reply.header("referrer-policy"),
        Some("no-referrer"),
        "{what}"
    );
    assert_eq!(reply.header("cache-control"), Some("no-store"), "{what}");
    assert!(reply.header("set-cookie").is_none(), "{what}");
    let policy = reply.header("content-security-policy").unwrap_or_default();
    assert!(
        policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"),
        "{what}: {policy}"
    );
    assert_eq!(
        reply.header("content-type"),
        Some("text/html; charset=utf-8"),
        "{what}"
    );
}

/// What a test compares before and after: the ledger and the bundle.
fn observed(db: &TestDb, pending: &str) -> String {
    let attempts = db.attempts(&Principal::System, pending).unwrap();
    let bundle = db.get_bundle(&Principal::System, pending).unwrap();
    format!(
        "{} {}",
        attempts.len(),
        clarion::envelope::bundle_detail(&bundle).body_text()
    )
}

fn last_attempt(db: &TestDb, pending: &str) -> (String, String) {
    let attempts = db.attempts(&Principal::System, pending).unwrap();
    let last = attempts.last().expect("an attempt");
    (last.channel.clone(), last.outcome.clone())
}

/// LINK-2: GET and HEAD of a link, many times and with a query, show the
/// page in link mode and change nothing.
fn link_2_opening_changes_nothing(db: &TestDb) {
    let pending = world(db);
    let token = token(db, &pending, "alice");
    let server = start(db);
    let before = observed(db, &pending);
    for round in 0..5 {
        let opened = page(&server, &format!("/a/{token}"));
        assert_eq!(opened.status, 200, "round {round}");
        assert!(opened
            .body
            .contains(r#"<meta name="clarion-mode" content="link">"#));
        assert!(opened.body.contains(r#"src="../inbox.js""#));
        assert!(
            !opened.body.contains(&token),
            "the page does not echo the token"
        );
        assert_link_headers(&opened, "GET");
        let headed = head(&server, &format!("/a/{token}?utm_source=mail&x=%00"));
        assert_eq!(headed.status, 200);
        assert!(headed.body.is_empty());
        assert_link_headers(&headed, "HEAD");
    }
    // The page's files resolve from `/a/`.
    assert_eq!(page(&server, "/inbox.js").status, 200);
    assert_eq!(observed(db, &pending), before);
    assert!(db
        .attempts(&Principal::System, &pending)
        .unwrap()
        .is_empty());
    // The link still answers: opening used nothing.
    let answered = link_post(&server, &token, "respond", ANSWER);
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert_eq!(answered.json()["claimed"], true);
    // Once used, it still opens (the settled panel), still changing nothing.
    let after = observed(db, &pending);
    assert_eq!(page(&server, &format!("/a/{token}")).status, 200);
    assert_eq!(observed(db, &pending), after);
}

/// LINK-2, LINK-5: every token that does not open gets the same bytes.
fn link_2_every_refusal_is_the_same_404(db: &TestDb) {
    let pending = world(db);
    let server = start(db);
    let good = token(db, &pending, "alice");
    let gone = page(&server, "/a/not-a-token");
    assert_eq!(gone.status, 404);
    assert!(
        gone.body.contains("This link no longer works"),
        "{}",
        gone.body
    );
    assert_link_headers(&gone, "404");
    let check = |path: &str, what: &str| {
        let reply = page(&server, path);
        assert_eq!(reply.status, 404, "{what}");
        assert_eq!(reply.body, gone.body, "{what}: the same bytes");
        assert_link_headers(&reply, what);
        let headed = head(&server, path);
        assert_eq!(headed.status, 404, "{what} HEAD");
        assert_link_headers(&headed, what);
    };
    let (payload, mac) = good.rsplit_once('.').unwrap();
    let flipped = if mac.starts_with('A') { "B" } else { "A" };
    let forged = format!("{payload}.{flipped}{}", &mac[1..]);
    check(&format!("/a/{forged}"), "forged");
    check(&format!("/a/{}", &good[..good.len() - 3]), "truncated");
    check("/a/", "empty");
    check("/a/%00", "NUL");
    check("/a/v1.%C3%A9.x", "non-ASCII");
    check(&format!("/a/{}", "A".repeat(600)), "over 512 bytes");
    check(&format!("/a/{good}x"), "one byte more");
    check("/a/v1..", "malformed");
    check(&format!("/a/{good}/more"), "a longer path");
    check("/a/not-a-token?with=query", "with a query");
    // Raw bytes the client did not percent-encode: a NUL-free control
    // byte and non-ASCII, as sent on the wire.
    for raw in ["/a/v1.\u{e9}.x", "/a/v1.%ZZ.x", "/a/v1\\x"] {
        use std::io::Write;
        let mut stream = std::net::TcpStream::connect(server.authority()).unwrap();
        let request = format!(
            "GET {raw} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            server.authority()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let (status, reply) = read_reply(stream);
        let reply = raw_reply(&reply);
        assert_eq!(status, 404, "{raw:?}");
        assert_eq!(reply.body, gone.body, "{raw:?}: the same bytes");
    }

    // A removed member's link (the bundle no longer seen).
    let bobs = token(db, &pending, "bob");
    assert_eq!(page(&server, &format!("/a/{bobs}")).status, 200);
    db.set_members("w-a", &[]).unwrap();
    check(&format!("/a/{bobs}"), "a removed member");
    // A link for a bundle of another workspace, after its user leaves.
    let other = ask(db, &mirror(db, "b", "carol"), 1);
    db.set_members("w-b", &["dave".to_owned()]).unwrap();
    let daves = token(db, &other, "dave");
    db.set_members("w-b", &[]).unwrap();
    check(&format!("/a/{daves}"), "another bundle no longer seen");

    // Expired: its page's time is over.
    let short = token_for(db, &pending, "alice", Some(Duration::from_secs(60)));
    assert_eq!(page(&server, &format!("/a/{short}")).status, 200);
    db.clock.advance_micros(61_000_000);
    check(&format!("/a/{short}"), "expired");
    assert_eq!(page(&server, &format!("/a/{good}")).status, 200);

    // A deleted key.
    db.rotate_link_key(true).unwrap();
    check(&format!("/a/{good}"), "a deleted key");
    assert!(db
        .attempts(&Principal::System, &pending)
        .unwrap()
        .is_empty());
}

/// LINK-3: a link wins once (channel `link`); a second POST is 410
/// `link_used`, recorded as such.
fn link_3_a_link_wins_once_then_is_410(db: &TestDb) {
    let pending = world(db);
    let server = start(db);
    let token = token(db, &pending, "bob");
    let read = link_get(&server, &token);
    assert_eq!(read.status, 200, "{}", read.body);
    let body = read.json();
    assert_eq!(body["as"], json!({"user_id": "bob", "name": ""}));
    assert_eq!(body["bundle"]["pending_id"], pending.as_str());
    assert_eq!(body["bundle"]["status"], "pending");
    assert!(body["people"].is_array());

    let won = link_post(&server, &token, "respond", ANSWER);
    assert_eq!(won.status, 200, "{}", won.body);
    assert_eq!(won.json()["claimed"], true);
    assert_eq!(won.json()["status"], "answered");
    assert_eq!(
        last_attempt(db, &pending),
        ("link".to_owned(), "won".to_owned())
    );
    let attempt = db.attempts(&Principal::System, &pending).unwrap();
    assert_eq!(attempt.last().unwrap().user_id, "bob");

    let again = link_post(&server, &token, "respond", ANSWER);
    assert_eq!(again.status, 410, "{}", again.body);
    assert_eq!(again.json()["error"], "link already used");
    assert_eq!(again.header("content-type"), Some("application/json"));
    assert_eq!(
        last_attempt(db, &pending),
        ("link".to_owned(), "link_used".to_owned())
    );
    let cancel = link_post(&server, &token, "cancel", "{}");
    assert_eq!(cancel.status, 410, "{}", cancel.body);
    // Reading it still works: the settled panel's data.
    let read = link_get(&server, &token);
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["bundle"]["status"], "answered");
}

/// LINK-3: a link POST that loses is told the winner and uses nothing.
fn link_3_a_losing_link_post_gets_the_winner(db: &TestDb) {
    let pending = world(db);
    let server = start(db);
    let t = tokens(db);
    let token = token(db, &pending, "bob");
    let path = format!("/api/v1/clarification/{pending}/respond");
    let winner = post(&server, &t.alice, &path, ANSWER);
    assert_eq!(winner.json()["claimed"], true);
    let rejection = r#"{"rejected": true, "reject_reason": "no"}"#;
    for _ in 0..2 {
        let lost = link_post(&server, &token, "respond", rejection);
        assert_eq!(lost.status, 200, "{}", lost.body);
        assert_eq!(lost.json()["claimed"], false);
        assert_eq!(lost.json()["status"], "answered");
        assert_eq!(lost.json()["response"], winner.json()["response"]);
        assert_eq!(
            last_attempt(db, &pending),
            ("link".to_owned(), "lost".to_owned())
        );
    }
}

/// LINK-3: a link POST and another user's bearer POST released together:
/// one winner, each round.
fn link_3_a_link_and_a_bearer_race_to_one_winner(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.set_members("w-a", &["bob".to_owned()]).unwrap();
    let server = Arc::new(start(db));
    let t = tokens(db);
    for round in 0..4 {
        let pending = ask(db, &session, 1);
        let token = token(db, &pending, "bob");
        let barrier = Arc::new(Barrier::new(2));
        let by_link = {
            let (server, barrier, token) = (server.clone(), barrier.clone(), token.clone());
            std::thread::spawn(move || {
                let request = client()
                    .post(server.url("/api/v1/link/respond"))
                    .header("authorization", format!("Link {token}"))
                    .header("content-type", "application/json")
                    .body(ANSWER);
                barrier.wait();
                send(request)
            })
        };
        let by_bearer = {
            let (server, barrier, alice) = (server.clone(), barrier.clone(), t.alice.clone());
            let path = format!("/api/v1/clarification/{pending}/respond");
            std::thread::spawn(move || {
                let request = post_request(&server, &alice, &path, ANSWER);
                barrier.wait();
                send(request)
            })
        };
        let replies = [by_link.join().unwrap(), by_bearer.join().unwrap()];
        let winners = replies
            .iter()
            .filter(|reply| reply.status == 200 && reply.json()["claimed"] == true)
            .count();
        assert_eq!(winners, 1, "round {round}");
        assert!(replies.iter().all(|reply| reply.status == 200));
        let won: Vec<_> = db
            .attempts(&Principal::System, &pending)
            .unwrap()
            .into_iter()
            .filter(|attempt| attempt.outcome == "won")
            .collect();
        assert_eq!(won.len(), 1, "round {round}");
    }
}

/// LINK-3: HTTP-3's order on the link routes (401, then the body's 415
/// and 413, then WIRE-5's 400s), and a bundle no longer seen is the
/// bundle's own not-found, byte for byte.
fn link_3_the_link_routes_check_in_http_3_order(db: &TestDb) {
    let pending = world(db);
    let server = start(db);
    let good = token(db, &pending, "bob");
    let forged = format!("{good}A");
    let raw = |token: &str, content_type: &str, body: &str| {
        send_refused(
            client()
                .post(server.url("/api/v1/link/respond"))
                .header("authorization", format!("Link {token}"))
                .header("content-type", content_type)
                .body(body.to_owned()),
        )
    };
    let refused = raw(&forged, "text/plain", "x");
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    assert_eq!(link_get(&server, &forged).status, 401);
    assert_eq!(link_post(&server, &forged, "cancel", "{}").status, 401);
    assert_eq!(raw(&good, "text/plain", "x").status, 415);
    assert_eq!(
        raw(&good, "application/json", &"x".repeat(2 << 20)).status,
        413
    );
    let not_json = raw(&good, "application/json", "{");
    assert_eq!(not_json.status, 400);
    assert!(
        not_json.body.contains("not valid JSON"),
        "{}",
        not_json.body
    );
    let unknown = raw(&good, "application/json", r#"{"pending_id": "x"}"#);
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert!(unknown.body.contains("pending_id"), "{}", unknown.body);
    let cancel_args = link_post(&server, &good, "cancel", r#"{"answers": []}"#);
    assert_eq!(cancel_args.status, 400, "{}", cancel_args.body);
    let query = send(
        client()
            .get(server.url("/api/v1/link/bundle?x=1"))
            .header("authorization", format!("Link {good}")),
    );
    assert_eq!(query.status, 400);
    assert!(db
        .attempts(&Principal::System, &pending)
        .unwrap()
        .is_empty());

    // Bob no longer sees it: the one not-found, as his own GET gets it.
    db.set_members("w-a", &[]).unwrap();
    let bob = db.add_token(&Principal::user("bob"), "t").unwrap().token;
    let own = get(&server, &bob, &format!("/api/v1/clarification/{pending}"));
    assert_eq!(own.status, 404);
    assert_eq!(link_get(&server, &good).text(), own.text());
    assert_eq!(
        link_post(&server, &good, "respond", ANSWER).text(),
        own.text()
    );
    assert_eq!(link_post(&server, &good, "cancel", "").text(), own.text());
}

/// The paths and methods the OpenAPI document lists, with ids filled in.
fn documented_routes(server: &Server, pending: &str) -> Vec<(String, String)> {
    let document = page(server, "/api/v1/openapi.json").json();
    let mut routes = Vec::new();
    for (path, methods) in document["paths"].as_object().unwrap() {
        let filled = path
            .replace("{pending_id}", pending)
            .replace("{op}", "summary")
            .replace("{task_id}", "t-a")
            .replace("{session_id}", "s-a")
            .replace("{workspace_id}", "w-a");
        for method in methods.as_object().unwrap().keys() {
            routes.push((method.clone(), filled.clone()));
        }
    }
    routes
}

/// LINK-3, LINK-5: a valid link credential is a 401 on every other route
/// (each the OpenAPI document lists, and the page's own files).
fn link_3_the_link_credential_opens_no_other_route(db: &TestDb) {
    let pending = world(db);
    let server = start(db);
    let token = token(db, &pending, "alice");
    let mut routes = documented_routes(&server, &pending);
    assert!(routes.len() > 20, "{routes:?}");
    for path in [
        "/",
        "/inbox.js",
        "/metrics",
        "/healthz",
        "/api/v1/openapi.json",
    ] {
        routes.push(("get".to_owned(), path.to_owned()));
    }
    for (method, path) in routes {
        if path.starts_with("/api/v1/link/") {
            continue;
        }
        let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let reply = send_refused(
            client()
                .request(method.clone(), server.url(&path))
                .header("authorization", format!("Link {token}"))
                .header("content-type", "application/json")
                .body("{}"),
        );
        assert_eq!(reply.status, 401, "{method} {path}: {}", reply.body);
    }
    assert!(db
        .attempts(&Principal::System, &pending)
        .unwrap()
        .is_empty());
    // And the link still works where it belongs.
    assert_eq!(link_get(&server, &token).status, 200);
}

/// LINK-3: a bearer token, a session cookie and `--open-as` open no link
/// route; only the `Link` credential does.
fn link_3_no_other_credential_opens_the_link_routes(db: &TestDb) {
    let pending = world(db);
    let t = tokens(db);
    let server = start(db);
    let (cookie, _) = web_sign_in(&server, &t.alice);
    for (path, post) in [
        ("/api/v1/link/bundle", false),
        ("/api/v1/link/respond", true),
        ("/api/v1/link/cancel", true),
    ] {
        let request = |builder: reqwest::blocking::RequestBuilder| {
            let builder = if post {
                builder.header("content-type", "application/json").body(
                    if path.ends_with("respond") {
                        ANSWER
                    } else {
                        "{}"
                    },
                )
            } else {
                builder
            };
            send_refused(builder)
        };
        let url = server.url(path);
        let method = if post {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        };
        let bearer = request(client().request(method.clone(), &url).bearer_auth(&t.alice));
        assert_eq!(bearer.status, 401, "{path} bearer");
        let cookied = request(
            client()
                .request(method.clone(), &url)
                .header("cookie", &cookie),
        );
        assert_eq!(cookied.status, 401, "{path} cookie");
        let nothing = request(client().request(method.clone(), &url));
        assert_eq!(nothing.status, 401, "{path} nothing");
    }
    drop(server);
    let open = start_with(
        db,
        TokenAuthenticator::new(db).open_as(Principal::user("alice")),
        HttpOptions::new(),
    );
    let reply = send(client().get(open.url("/api/v1/link/bundle")));
    assert_eq!(reply.status, 401, "--open-as");
    let reply = send(
        client()
            .post(open.url("/api/v1/link/respond"))
            .header("content-type", "application/json")
            .body(ANSWER),
    );
    assert_eq!(reply.status, 401, "--open-as");
    assert!(db
        .attempts(&Principal::System, &pending)
        .unwrap()
        .is_empty());
    // A link works under `--open-as` too.
    let token = token(db, &pending, "bob");
    assert_eq!(link_get(&open, &token).status, 200);
}

/// LINK-1, LINK-5: rotating keeps old links for 7 days; with `now` they
/// stop at once: the page's 404 and the API's 401.
fn link_5_rotation_without_now_keeps_links_with_now_ends_them(db: &TestDb) {
    let pending = world(db);
    let server = start(db);
    let old = token(db, &pending, "alice");
    db.rotate_link_key(false).unwrap();
    let new = token(db, &pending, "bob");
    assert_eq!(page(&server, &format!("/a/{old}")).status, 200);
    assert_eq!(link_get(&server, &old).status, 200);
    assert_eq!(link_get(&server, &new).status, 200);
    db.rotate_link_key(true).unwrap();
    for token in [&old, &new] {
        assert_eq!(page(&server, &format!("/a/{token}")).status, 404);
        assert_eq!(link_get(&server, token).status, 401);
        assert_eq!(link_post(&server, token, "respond", ANSWER).status, 401);
    }
    assert!(db
        .attempts(&Principal::System, &pending)
        .unwrap()
        .is_empty());
}

/// LINK-2, LINK-5: a whole run of `clarion serve` at `trace`, every link
/// route used, succeeding and failing: the token is in no log line, and
/// the request logs say `/a/…`.
fn link_5_the_token_is_in_no_log_line(db: &TestDb) {
    // The process runs on the real clock: the world is made at its time.
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    db.clock
        .set(Timestamp::from_micros(since_epoch.as_micros() as i64));
    let pending = world(db);
    let token = token(db, &pending, "bob");
    let (_, mac) = token.rsplit_once('.').unwrap();
    // `clarion serve` wants a token to exist.
    db.add_token(&Principal::user("alice"), "t").unwrap();
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args([
            "serve",
            "--database-url",
            &db.url,
            "--listen",
            "127.0.0.1:0",
        ])
        .env_remove("CLARION_DATABASE_URL")
        .env("RUST_LOG", "trace")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    let line = String::from_utf8(first).unwrap();
    let base = match line.strip_prefix("listening on ") {
        Some(base) => base.to_owned(),
        None => {
            let mut text = String::new();
            log.reopen().unwrap().read_to_string(&mut text).unwrap();
            panic!("not a listening line: {line:?}\n{text}");
        }
    };
    let url = |path: &str| format!("{base}{path}");
    let with = |builder: reqwest::blocking::RequestBuilder| {
        builder.header("authorization", format!("Link {token}"))
    };
    assert_eq!(
        send(client().get(url(&format!("/a/{token}?q=1")))).status,
        200
    );
    assert_eq!(send(client().head(url(&format!("/a/{token}")))).status, 200);
    assert_eq!(send(client().get(url(&format!("/a/{token}x")))).status, 404);
    assert_eq!(
        send(with(client().get(url("/api/v1/link/bundle")))).status,
        200
    );
    let respond = |body: &str| {
        send(
            with(client().post(url("/api/v1/link/respond")))
                .header("content-type", "application/json")
                .body(body.to_owned()),
        )
    };
    assert_eq!(respond("{").status, 400);
    assert_eq!(respond(ANSWER).status, 200);
    assert_eq!(respond(ANSWER).status, 410);
    assert_eq!(
        send(with(client().get(url("/api/v1/clarification")))).status,
        401
    );
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let mut text = String::new();
    log.reopen().unwrap().read_to_string(&mut text).unwrap();
    assert!(!text.contains(&token), "the token is in the log");
    assert!(!text.contains(mac), "the token's MAC is in the log");
    assert!(text.contains("/a/…"), "the request logs show /a/…:\n{text}");
    assert!(text.contains("/api/v1/link/respond"), "{text}");
}
