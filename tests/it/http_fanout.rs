//! HTTP-14 over loopback, both backends: one follower serves every event
//! stream. Many streams of one principal cost one read of the log per
//! wake-up (counted through the handle's hook), each stream still gets
//! every event in order and none twice, and the streams' reads and checks
//! run on a pool of their own: a `respond` never waits for it.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use axum::http::request::Parts;
use clarion::http::{Authentication, Authenticator, HttpOptions, TokenAuthenticator};

use crate::events::wait_until_readable;
use crate::http_events::{open_request, Stream};
use crate::support::server::*;
use crate::support::*;

dual_backend!(
    http_14_streams_of_one_principal_share_one_read,
    http_14_a_respond_never_waits_for_the_streams_pool
);

const ANSWER: &str = r#"{"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "yes"}]}"#;

/// Twelve streams on each of two tokens of Alice's (HTTP-13's cap is per
/// token): 24 streams of one principal.
const STREAMS_PER_TOKEN: usize = 12;

fn stream_of(server: &Server, token: &str) -> Stream {
    let stream = open_request(
        client()
            .get(server.url("/api/v1/events"))
            .bearer_auth(token),
    );
    assert_eq!(stream.status, 200);
    stream
}

/// Asks one bundle and waits until every stream has its `bundle.asked`,
/// as the next message of each: in order, none twice.
fn ask_and_see(db: &TestDb, session: &str, streams: &[Stream]) {
    let pending = ask(db, session, 1);
    for stream in streams {
        let frame = stream.next();
        assert_eq!(frame.event(), "bundle.asked", "{frame:?}");
        assert_eq!(frame.pending_id(), pending, "{frame:?}");
    }
}

/// 24 streams of Alice at the head; each of five asks wakes the follower,
/// which reads the log for Alice once per wake-up. A commit may wake it
/// more than once (the handle's own signal, then its watcher seeing the
/// commit; PostgreSQL also reads again while an unrelated transaction
/// holds the event back, EVT-1a), so the bound is loose: one follower per
/// stream made at least one read per stream per event, 120 here.
fn http_14_streams_of_one_principal_share_one_read(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let second = db
        .add_token(&clarion::Principal::user("alice"), "second")
        .unwrap()
        .token;
    let session = mirror(db, "a", "alice");
    let streams: Vec<Stream> = (0..STREAMS_PER_TOKEN)
        .flat_map(|_| [stream_of(&server, &t.alice), stream_of(&server, &second)])
        .collect();
    // Every stream has joined the follower once each has an event.
    ask_and_see(db, &session, &streams);
    wait_until_readable(db);
    let before = db.event_reads();
    const ASKS: u64 = 5;
    for _ in 0..ASKS {
        ask_and_see(db, &session, &streams);
    }
    let reads = db.event_reads() - before;
    let per_stream = ASKS * streams.len() as u64;
    assert!(
        reads <= per_stream / 4,
        "{reads} reads of the log for {ASKS} events to {} streams",
        streams.len()
    );
}

/// An authenticator whose batched checks — the streams' checks, on their
/// pool — block while the gate is shut, reporting that they did.
struct GatedChecks {
    inner: TokenAuthenticator,
    gate: Arc<Gate>,
}

#[derive(Default)]
struct Gate {
    state: Mutex<(bool, usize)>,
    changed: Condvar,
}

impl Gate {
    fn shut(&self) {
        self.state.lock().unwrap().0 = true;
    }

    fn open(&self) {
        self.state.lock().unwrap().0 = false;
        self.changed.notify_all();
    }

    /// Blocks while shut, counting those who wait.
    fn pass(&self) {
        let mut state = self.state.lock().unwrap();
        state.1 += 1;
        self.changed.notify_all();
        while state.0 {
            state = self.changed.wait(state).unwrap();
        }
        state.1 -= 1;
    }

    /// Waits until someone is held at the gate.
    fn until_held(&self) {
        let state = self.state.lock().unwrap();
        let (state, timeout) = self
            .changed
            .wait_timeout_while(state, Duration::from_secs(20), |(_, held)| *held == 0)
            .unwrap();
        assert!(
            !timeout.timed_out() || state.1 > 0,
            "no check reached the gate"
        );
    }
}

impl Authenticator for GatedChecks {
    fn authenticate(&self, request: &Parts) -> Authentication {
        self.inner.authenticate(request)
    }

    fn authenticate_all(&self, requests: &[&Parts]) -> Vec<Authentication> {
        self.gate.pass();
        self.inner.authenticate_all(requests)
    }
}

/// With the streams' only place held by a check that does not return, a
/// `respond` and a `GET` are answered at once; when the check returns the
/// stream delivers the resolution.
fn http_14_a_respond_never_waits_for_the_streams_pool(db: &TestDb) {
    let gate = Arc::new(Gate::default());
    let auth = GatedChecks {
        inner: TokenAuthenticator::new(db),
        gate: gate.clone(),
    };
    let options = HttpOptions::new()
        .stream_reads(1)
        .keep_alive(Duration::from_millis(100));
    let server = start_with(db, auth, options);
    let t = tokens(db);
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    // The stream starts past the ask's event (PostgreSQL may hold it back
    // while another transaction is open, EVT-1a): its next is the answer.
    wait_until_readable(db);
    let stream = stream_of(&server, &t.alice);
    gate.shut();
    // The next keep-alive's check takes the streams' one place and stays.
    gate.until_held();
    let got = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}"),
    );
    assert_eq!(got.status, 200, "{}", got.body);
    let responded = post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/respond"),
        ANSWER,
    );
    assert_eq!(responded.status, 200, "{}", responded.body);
    gate.open();
    let frame = stream.next();
    assert_eq!(frame.event(), "bundle.resolved", "{frame:?}");
    assert_eq!(frame.pending_id(), pending);
}
