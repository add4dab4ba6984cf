//! HTTP-6 over loopback, both backends: `GET /api/v1/events` as
//! Server-Sent Events — live events in order, `Last-Event-ID` resume with
//! none missing and none twice, `reset` for a pruned position, keep-alive
//! comments, another process's commits, a client that goes away, the
//! server shutting down, and the door's refusals.

use std::io::{BufRead, BufReader};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use clarion::http::{HttpOptions, TokenAuthenticator};
use clarion::Principal;
use serde_json::Value;

use crate::events::wait_until_readable;
use crate::support::server::*;
use crate::support::*;

/// One SSE message, or a comment line (a keep-alive).
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Message {
        id: Option<String>,
        event: String,
        data: Value,
    },
    Comment,
}

impl Frame {
    pub fn event(&self) -> &str {
        match self {
            Frame::Message { event, .. } => event,
            Frame::Comment => "",
        }
    }

    pub fn pending_id(&self) -> String {
        match self {
            Frame::Message { data, .. } => {
                data["pending_id"].as_str().unwrap_or_default().to_owned()
            }
            Frame::Comment => String::new(),
        }
    }
}

/// An open stream: its frames arrive on a channel from a reader thread,
/// so a test waits for them with a timeout. Dropping it closes the
/// connection.
pub struct Stream {
    pub frames: Receiver<Frame>,
    pub status: u16,
    content_type: String,
    body: Option<String>,
}

fn open(server: &Server, token: &str, query: &str, last_event_id: Option<&str>) -> Stream {
    let mut request = client()
        .get(server.url(&format!("/api/v1/events{query}")))
        .bearer_auth(token);
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id);
    }
    open_request(request)
}

/// Opens the stream `request` asks for.
pub fn open_request(request: reqwest::blocking::RequestBuilder) -> Stream {
    let response = request.send().expect("request");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let (sender, frames) = mpsc::channel();
    if status != 200 {
        let body = response.text().ok();
        return Stream {
            frames,
            status,
            content_type,
            body,
        };
    }
    std::thread::spawn(move || {
        let mut lines = BufReader::new(response).lines();
        let (mut id, mut event, mut data) = (None, String::new(), String::new());
        while let Some(Ok(line)) = lines.next() {
            if line.is_empty() {
                if !event.is_empty() || !data.is_empty() {
                    let frame = Frame::Message {
                        id: id.take(),
                        event: std::mem::take(&mut event),
                        data: serde_json::from_str(&std::mem::take(&mut data))
                            .unwrap_or(Value::Null),
                    };
                    if sender.send(frame).is_err() {
                        return;
                    }
                }
            } else if line.starts_with(':') {
                if sender.send(Frame::Comment).is_err() {
                    return;
                }
            } else if let Some(value) = line.strip_prefix("id:") {
                id = Some(value.trim_start().to_owned());
            } else if let Some(value) = line.strip_prefix("event:") {
                event = value.trim_start().to_owned();
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.trim_start());
            }
        }
    });
    Stream {
        frames,
        status,
        content_type,
        body: None,
    }
}

impl Stream {
    /// The next message (comments skipped), within 10 s.
    pub fn next(&self) -> Frame {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .frames
                .recv_timeout(left)
                .expect("an event within 10 s")
            {
                Frame::Comment => continue,
                frame => return frame,
            }
        }
    }

    /// True if no message arrives within `quiet`.
    fn stays_quiet(&self, quiet: Duration) -> bool {
        let deadline = Instant::now() + quiet;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.frames.recv_timeout(left) {
                Ok(Frame::Comment) => continue,
                Ok(_) => return false,
                Err(_) => return true,
            }
        }
    }
}

/// The positions of every event so far, as `system` reads them.
pub fn positions(db: &TestDb) -> Vec<String> {
    wait_until_readable(db);
    db.events_after(&Principal::System, "", Some(1000))
        .unwrap()
        .events
        .into_iter()
        .map(|event| event.position)
        .collect()
}

dual_backend!(
    http_6_the_stream_follows_the_log,
    http_6_last_event_id_resumes_exactly,
    http_6_a_pruned_position_starts_with_reset,
    http_16_a_position_past_the_head_resets_then_follows,
    http_13_streams_per_credential,
    http_6_keep_alive_comments,
    http_6_another_process_reaches_the_stream,
    http_6_streams_end_with_their_client_and_the_server,
    http_6_refusals
);

/// HTTP-6: with no position the stream starts at the head and then
/// follows the log: `id:` is the position, `event:` the type, `data:`
/// the EVT-2 element; each reader sees only what it may (AUTH-3).
fn http_6_the_stream_follows_the_log(db: &TestDb) {
    let server = start(db);
    let tokens = tokens(db);
    let session = mirror(db, "a", "alice");
    let before = ask(db, &session, 1);
    // The head is the newest readable event (EVT-1a).
    wait_until_readable(db);
    let alice = open(&server, &tokens.alice, "", None);
    assert_eq!(alice.status, 200);
    assert!(
        alice.content_type.starts_with("text/event-stream"),
        "{}",
        alice.content_type
    );
    let bob = open(&server, &tokens.bob, "", None);
    let pending_id = ask(db, &session, 1);
    let asked = alice.next();
    assert_eq!(asked.event(), "bundle.asked");
    assert_eq!(asked.pending_id(), pending_id, "the head excludes {before}");
    let Frame::Message { id, data, .. } = &asked else {
        unreachable!()
    };
    assert_eq!(id.as_deref(), data["position"].as_str());
    let keys: Vec<&str> = data
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["position", "type", "at", "pending_id", "task_id", "data"]
    );
    let answered = post(
        &server,
        &tokens.alice,
        &format!("/api/v1/clarification/{pending_id}/respond"),
        r#"{"answers":[{"question_id":"q1","selected_options":["q1_opt1"]}]}"#,
    );
    assert_eq!(answered.status, 200);
    let resolved = alice.next();
    assert_eq!(resolved.event(), "bundle.resolved");
    let Frame::Message { data, .. } = &resolved else {
        unreachable!()
    };
    assert_eq!(data["data"]["response"], answered.json()["response"]);
    // Bob may see none of it; an unowned workspace's bundle he may.
    assert!(bob.stays_quiet(Duration::from_millis(300)));
    let open_bundle = ask(db, &session_in(db, "open", "", None), 1);
    assert_eq!(bob.next().pending_id(), open_bundle);
    assert_eq!(alice.next().pending_id(), open_bundle);
}

/// HTTP-6, EVT-1a: a reader that reconnects with `Last-Event-ID` gets
/// every event after it, none twice, none missing; the header takes
/// precedence over `?after=`.
fn http_6_last_event_id_resumes_exactly(db: &TestDb) {
    let server = start(db);
    let tokens = tokens(db);
    let session = mirror(db, "a", "alice");
    for _ in 0..3 {
        let pending_id = ask(db, &session, 1);
        db.cancel_bundle(&alice(), &pending_id).unwrap();
    }
    let all = positions(db);
    assert_eq!(all.len(), 6);
    let first = open(&server, &tokens.alice, &format!("?after={}", all[0]), None);
    let mut got: Vec<String> = Vec::new();
    for _ in 0..2 {
        let Frame::Message { id, .. } = first.next() else {
            unreachable!()
        };
        got.push(id.unwrap());
    }
    drop(first);
    let last = got.last().unwrap().clone();
    let resumed = open(
        &server,
        &tokens.alice,
        &format!("?after={}", all[0]),
        Some(&last),
    );
    for _ in 0..3 {
        let Frame::Message { id, .. } = resumed.next() else {
            unreachable!()
        };
        got.push(id.unwrap());
    }
    assert!(
        resumed.stays_quiet(Duration::from_millis(300)),
        "nothing twice"
    );
    assert_eq!(got, all[1..]);
    // A later event still arrives on the resumed stream.
    let pending_id = ask(db, &session, 1);
    assert_eq!(resumed.next().pending_id(), pending_id);
}

/// HTTP-6, EVT-3: a position behind what prune deleted starts with
/// `event: reset`, then what is kept.
fn http_6_a_pruned_position_starts_with_reset(db: &TestDb) {
    let server = start(db);
    let tokens = tokens(db);
    let session = mirror(db, "a", "alice");
    let old = ask(db, &session, 1);
    db.cancel_bundle(&alice(), &old).unwrap();
    let behind = positions(db)[0].clone();
    db.clock.advance_micros(10 * 86_400_000_000);
    let kept = ask(db, &session, 1);
    db.prune(Duration::from_secs(86_400)).unwrap();
    wait_until_readable(db);
    let stream = open(&server, &tokens.alice, "", Some(&behind));
    assert_eq!(stream.next().event(), "reset");
    assert_eq!(stream.next().pending_id(), kept);
}

/// HTTP-6, EVT-4: a `Last-Event-ID` past the head (a restored database)
/// starts with `event: reset`, then follows from the head; an empty one is
/// not given, so `?after=` decides.
fn http_16_a_position_past_the_head_resets_then_follows(db: &TestDb) {
    let server = start(db);
    let tokens = tokens(db);
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    // The head is what is readable (EVT-1a): the first event, once it is.
    wait_until_readable(db);
    let stream = open(&server, &tokens.alice, "", Some("9000000000000-1"));
    assert_eq!(stream.next().event(), "reset");
    let later = ask(db, &session, 1);
    assert_eq!(stream.next().pending_id(), later);
    // Empty: not given; `after` at the first event's position reads on.
    let before = positions(db)[0].clone();
    let from_after = open(
        &server,
        &tokens.alice,
        &format!("?after={before}"),
        Some(""),
    );
    assert_eq!(from_after.status, 200);
    assert_eq!(from_after.next().pending_id(), later);
}

/// HTTP-13: the 17th stream of one token is a `429` with `Retry-After: 5`
/// while another token's stream is served; a stream that ends frees its
/// place (here its client goes away).
fn http_13_streams_per_credential(db: &TestDb) {
    let server = start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().keep_alive(Duration::from_millis(200)),
    );
    let tokens = tokens(db);
    let mut held: Vec<Stream> = (0..clarion::http::STREAMS_PER_CREDENTIAL)
        .map(|_| open(&server, &tokens.alice, "", None))
        .collect();
    assert!(held.iter().all(|stream| stream.status == 200));
    let refused = send(
        client()
            .get(server.url("/api/v1/events"))
            .bearer_auth(&tokens.alice),
    );
    assert_eq!(
        refused.text(),
        r#"429 {"error":"too many event streams for this credential"}"#
    );
    assert_eq!(refused.header("retry-after"), Some("5"));
    let other = open(&server, &tokens.bob, "", None);
    assert_eq!(other.status, 200);
    drop(held.pop());
    eventually(
        Duration::from_secs(5),
        "a place frees when a stream ends",
        || {
            let again = open(&server, &tokens.alice, "", None);
            let served = again.status == 200;
            if served {
                held.push(again);
            }
            served
        },
    );
}

/// HTTP-6: an idle stream sends comment lines (15 s by default; short
/// here) so proxies keep it open.
fn http_6_keep_alive_comments(db: &TestDb) {
    let server = start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().keep_alive(Duration::from_millis(200)),
    );
    let tokens = tokens(db);
    let stream = open(&server, &tokens.alice, "", None);
    let frame = stream
        .frames
        .recv_timeout(Duration::from_secs(5))
        .expect("a keep-alive");
    assert_eq!(frame, Frame::Comment);
}

/// HTTP-6, WAIT-3a: an event committed by another process reaches the
/// stream within the push bound (well under a second here).
fn http_6_another_process_reaches_the_stream(db: &TestDb) {
    let server = start(db);
    let tokens = tokens(db);
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    // The head is the newest readable event (EVT-1a).
    wait_until_readable(db);
    let stream = open(&server, &tokens.alice, "", None);
    let started = Instant::now();
    answer_from_another_process(&db.url, &pending_id, "elsewhere");
    let committed = started.elapsed();
    let frame = stream.next();
    assert_eq!(frame.event(), "bundle.resolved");
    let Frame::Message { data, .. } = frame else {
        unreachable!()
    };
    assert_eq!(
        data["data"]["response"]["answers"][0]["custom_text"],
        "elsewhere"
    );
    let heard = started.elapsed() - committed;
    assert!(
        heard < Duration::from_secs(1),
        "heard {heard:?} after the other process ended"
    );
}

/// HTTP-6, HTTP-8: a stream whose client goes away ends (the gauge of
/// open streams falls back), and shutting down ends every stream.
fn http_6_streams_end_with_their_client_and_the_server(db: &TestDb) {
    let server = start_with(
        db,
        TokenAuthenticator::new(db),
        HttpOptions::new().keep_alive(Duration::from_millis(200)),
    );
    let tokens = tokens(db);
    let open_streams = || -> String {
        let metrics = get(&server, &tokens.system, "/metrics");
        metrics
            .body
            .lines()
            .find(|line| line.starts_with("clarion_event_streams "))
            .unwrap_or_default()
            .to_owned()
    };
    let stream = open(&server, &tokens.alice, "", None);
    assert_eq!(open_streams(), "clarion_event_streams 1");
    drop(stream);
    eventually(
        Duration::from_secs(5),
        "the stream ends with its client",
        || open_streams() == "clarion_event_streams 0",
    );
    let stream = open(&server, &tokens.alice, "", None);
    server.stop();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match stream.frames.recv_timeout(Duration::from_millis(100)) {
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            _ => assert!(Instant::now() < deadline, "the stream outlived the server"),
        }
    }
}

/// HTTP-3 for the stream: no credential 401, no `questions:read` 403,
/// a malformed position 400 naming it, an unknown parameter 400.
fn http_6_refusals(db: &TestDb) {
    let server = start(db);
    let tokens = tokens(db);
    let anonymous = send(client().get(server.url("/api/v1/events")));
    assert_eq!(anonymous.status, 401);
    let denied = open(&server, &tokens.alice_bot_none, "", None);
    assert_eq!(denied.status, 403);
    assert_eq!(
        denied.body.as_deref(),
        Some(r#"{"error":"capability not authorized","code":"capability_denied"}"#)
    );
    // HTTP-16: a Last-Event-ID that is no position is refused, never
    // read as `after` or the head; a bad `after` names `after`.
    let refused = r#"{"error":"Last-Event-ID: not an event position"}"#;
    for id in ["not-a-position", "1-2-3", "1 2", "-5"] {
        let malformed = open(&server, &tokens.alice, "", Some(id));
        assert_eq!(malformed.status, 400, "{id}");
        assert_eq!(malformed.body.as_deref(), Some(refused), "{id}");
    }
    let non_ascii = send(
        client()
            .get(server.url("/api/v1/events?after=1"))
            .bearer_auth(&tokens.alice)
            .header(
                "Last-Event-ID",
                reqwest::header::HeaderValue::from_bytes(b"1\xe9").unwrap(),
            ),
    );
    assert_eq!(non_ascii.text(), format!("400 {refused}"));
    let bad_after = open(&server, &tokens.alice, "?after=x", None);
    assert_eq!(bad_after.status, 400);
    assert!(bad_after.body.unwrap().starts_with(r#"{"error":"after: "#));
    let unknown = open(&server, &tokens.alice, "?since=1", None);
    assert_eq!(unknown.status, 400);
    assert!(unknown.body.unwrap().contains("since"));
}

dual_backend!(http_6_an_event_held_back_by_an_open_transaction_still_arrives);

/// HTTP-6, EVT-1a: on PostgreSQL an event whose transaction began
/// after one still open elsewhere is held back until that one ends —
/// and nothing announces its end, so the stream reads again on its own
/// and delivers the event soon after. (SQLite has no such window: its
/// writers are serialized; there the event simply arrives.)
fn http_6_an_event_held_back_by_an_open_transaction_still_arrives(db: &TestDb) {
    let server = start(db);
    let tokens = tokens(db);
    let session = mirror(db, "a", "alice");
    let stream = open(&server, &tokens.alice, "", None);
    #[cfg(feature = "postgres")]
    let held = (db.backend() == clarion::Backend::Postgres).then(|| {
        use diesel::connection::SimpleConnection;
        use diesel::Connection;
        let mut conn = diesel::PgConnection::establish(&postgres_base_url()).unwrap();
        // An open transaction with an id: every later one is held back.
        conn.batch_execute("BEGIN; SELECT pg_current_xact_id();")
            .unwrap();
        conn
    });
    let pending_id = ask(db, &session, 1);
    #[cfg(feature = "postgres")]
    if let Some(mut conn) = held {
        use diesel::connection::SimpleConnection;
        assert!(
            stream.stays_quiet(Duration::from_millis(500)),
            "read past an open transaction"
        );
        conn.batch_execute("COMMIT").unwrap();
    }
    let started = Instant::now();
    assert_eq!(stream.next().pending_id(), pending_id);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
