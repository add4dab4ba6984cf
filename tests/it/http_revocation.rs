//! HTTP-10 over real loopback sockets: a credential that ends ends the
//! event streams and waits it opened. A token revoked by `clarion token
//! revoke` (another process), a web session signed out, and one expired
//! (the injected clock) each end an open stream with `event: revoked` —
//! nothing delivered after — and answer an open wait `401` with
//! `WWW-Authenticate: Bearer`.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use clarion::http::{HttpOptions, TokenAuthenticator};
use serde_json::json;

use crate::events::wait_until_readable;
use crate::http_events::{open_request, Frame, Stream};
use crate::support::server::*;
use crate::support::*;

dual_backend!(
    http_10_a_revoked_token_ends_its_stream_and_its_wait,
    http_10_signing_out_ends_the_sessions_stream_and_wait,
    http_10_an_expired_session_ends_its_stream_and_wait
);

/// Checks a keep-alive apart, so a test sees an ending within a second.
fn quick_checks(db: &TestDb) -> Server {
    start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().keep_alive(Duration::from_millis(200)),
    )
}

/// The stream's last message is `revoked`, carrying the 401's body, and
/// then it closes: nothing else arrives.
fn assert_revoked(stream: &Stream) {
    let frame = stream.next();
    assert_eq!(frame.event(), "revoked", "{frame:?}");
    let Frame::Message { data, .. } = frame else {
        unreachable!()
    };
    assert_eq!(data, json!({"error": "authentication required"}));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match stream.frames.recv_timeout(Duration::from_millis(100)) {
            Err(RecvTimeoutError::Disconnected) => return,
            Ok(Frame::Comment) | Err(RecvTimeoutError::Timeout) => {}
            Ok(other) => panic!("delivered after the revocation: {other:?}"),
        }
        assert!(Instant::now() < deadline, "the stream stayed open");
    }
}

/// A wait on `pending` with `credential` (a header), in a thread of its
/// own: its reply once it ends.
fn waiting(
    server: &Server,
    pending: &str,
    header: (&'static str, String),
) -> std::thread::JoinHandle<Reply> {
    let url = server.url(&format!(
        "/api/v1/clarification/{pending}/wait?timeout_ms=30000"
    ));
    std::thread::spawn(move || send(client().get(url).header(header.0, header.1)))
}

/// Waits until `count` waits are in flight (HTTP-7's gauge), so what
/// follows happens to a wait that began.
fn waits_in_flight(server: &Server, system: &str, count: usize) {
    let gauge = format!("clarion_waits_in_flight {count}");
    eventually(Duration::from_secs(10), &gauge, || {
        get(server, system, "/metrics")
            .body
            .lines()
            .any(|line| line == gauge)
    });
}

/// Alice signed in on the web: her session cookie, a stream and a wait
/// (on a bundle of hers) opened with it, the wait in flight.
struct SignedInUse {
    cookie: String,
    session: String,
    stream: Stream,
    wait: std::thread::JoinHandle<Reply>,
}

fn signed_in_use(db: &TestDb, server: &Server, t: &Tokens) -> SignedInUse {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    wait_until_readable(db);
    let (cookie, _) = web_sign_in(server, &t.alice);
    let stream = open_request(
        client()
            .get(server.url("/api/v1/events"))
            .header("cookie", &cookie),
    );
    assert_eq!(stream.status, 200);
    let wait = waiting(server, &pending, ("cookie", cookie.clone()));
    waits_in_flight(server, &t.system, 1);
    SignedInUse {
        cookie,
        session,
        stream,
        wait,
    }
}

fn assert_unauthenticated(reply: Reply) {
    assert_eq!(reply.text(), r#"401 {"error":"authentication required"}"#);
    assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
}

/// A token revoked by another process: the stream's next delivery is
/// `revoked` instead of the event that woke it, and the wait answers 401.
fn http_10_a_revoked_token_ends_its_stream_and_its_wait(db: &TestDb) {
    let server = quick_checks(db);
    let t = tokens(db);
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    // The stream starts at the head past this ask's event: nothing is
    // delivered before the revocation (PostgreSQL may hold an event
    // back while another transaction is open, EVT-1a).
    wait_until_readable(db);
    let bearer = format!("Bearer {}", t.alice);
    let stream = open_request(
        client()
            .get(server.url("/api/v1/events"))
            .header("authorization", &bearer),
    );
    assert_eq!(stream.status, 200);
    let wait = waiting(&server, &pending, ("authorization", bearer));
    // Bob's token is untouched by Alice's revocation.
    let bobs = open_request(
        client()
            .get(server.url("/api/v1/events"))
            .bearer_auth(&t.bob),
    );
    waits_in_flight(&server, &t.system, 1);
    let revoked = clarion(&["token", "revoke", &t.alice, "--database-url", &db.url]);
    assert!(revoked.status.success(), "{revoked:?}");
    // The event this ask appends must not reach the revoked stream.
    ask(db, &session, 1);
    assert_revoked(&stream);
    assert_unauthenticated(wait.join().unwrap());
    let bobs_session = mirror(db, "b", "bob");
    let bobs_bundle = ask(db, &bobs_session, 1);
    assert_eq!(bobs.next().pending_id(), bobs_bundle);
}

/// Signing out (`DELETE /api/v1/session`) ends the session's stream and
/// wait; a bearer stream of the same user goes on.
fn http_10_signing_out_ends_the_sessions_stream_and_wait(db: &TestDb) {
    let server = quick_checks(db);
    let t = tokens(db);
    let bearer = open_request(
        client()
            .get(server.url("/api/v1/events"))
            .bearer_auth(&t.alice),
    );
    let used = signed_in_use(db, &server, &t);
    let out = send(
        client()
            .delete(server.url("/api/v1/session"))
            .header("origin", server.base.as_str())
            .header("cookie", &used.cookie),
    );
    assert_eq!(out.status, 200);
    assert_revoked(&used.stream);
    assert_unauthenticated(used.wait.join().unwrap());
    let later = ask(db, &used.session, 1);
    eventually(Duration::from_secs(10), "the bearer stream goes on", || {
        bearer.next().pending_id() == later
    });
}

/// A web session past its expiry (the injected clock moves 12 hours and
/// a second on) ends its stream and wait at the next check.
fn http_10_an_expired_session_ends_its_stream_and_wait(db: &TestDb) {
    let server = quick_checks(db);
    let t = tokens(db);
    let used = signed_in_use(db, &server, &t);
    db.clock.advance_micros((12 * 3_600 + 1) * 1_000_000);
    assert_revoked(&used.stream);
    assert_unauthenticated(used.wait.join().unwrap());
}
