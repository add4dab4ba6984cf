//! HTTP-12 over real loopback sockets: a body that does not arrive by the
//! request deadline gets `408` and a closed connection while `/healthz`
//! answers, and a wait outlives the deadline untouched; at the connection
//! cap nothing more is accepted until a connection closes; `clarion serve`
//! raises its descriptor limit and refuses a cap the limit cannot hold.
//! PROD-5: headers that stop halfway get `408` and a closed connection by
//! the deadline counted from the request's first byte, so stalled clients
//! free their places under the cap.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use clarion::http::{self, ServeOptions};

use crate::support::server::*;
use crate::support::*;

dual_backend!(
    http_12_a_stalled_body_gets_408,
    http_12_no_accept_at_the_connection_cap,
    http_12_idle_keep_alives_close_after_the_header_timeout,
    http_12_serve_raises_its_descriptor_limit,
    prod_5_stalled_headers_get_408_and_free_their_places,
    prod_5_a_later_request_stalled_mid_headers_gets_408
);

/// PROD-5 on a keep-alive connection: the first request is answered; the
/// second stops mid-headers and gets `408` and a closed connection within
/// the deadline of its first byte, although the connection as a whole has
/// been open longer and the header timeout is far off.
fn prod_5_a_later_request_stalled_mid_headers_gets_408(db: &TestDb) {
    let deadline = Duration::from_millis(800);
    let server = serve_with(
        db,
        ServeOptions::new()
            .request_timeout(deadline)
            .header_read_timeout(Duration::from_secs(60)),
    );
    let mut connection = TcpStream::connect(server.authority()).unwrap();
    let first = format!(
        "GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.authority()
    );
    connection.write_all(first.as_bytes()).unwrap();
    let answered = read_one_reply(&mut connection);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    connection
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let sent = Instant::now();
    // Generous: a loaded machine may be slow to fire the timer.
    let reply = read_until_closed(connection, sent + Duration::from_secs(20));
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply:?}");
    assert!(
        reply.ends_with(r#"{"error":"request timed out"}"#),
        "{reply}"
    );
    assert!(sent.elapsed() >= deadline - Duration::from_millis(100));
}

/// One reply read off a keep-alive connection: its head, then as many
/// body bytes as its `Content-Length` says.
fn read_one_reply(connection: &mut TcpStream) -> String {
    connection
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        assert_eq!(connection.read(&mut byte).unwrap(), 1, "closed mid-head");
        seen.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&seen).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map(|value| value.trim().parse().unwrap())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    connection.read_exact(&mut body).unwrap();
    seen.extend_from_slice(&body);
    String::from_utf8_lossy(&seen).into_owned()
}

/// PROD-5: with a 2 s deadline and a cap of 8, twenty clients that stop
/// mid-headers cannot hold `clarion serve`: each is answered `408` and
/// closed within the deadline of being read, so places free in rounds of
/// eight — a fresh `/healthz`, queued behind all twenty, is answered in the
/// third round (within two deadlines), the last stalled clients in it.
fn prod_5_stalled_headers_get_408_and_free_their_places(db: &TestDb) {
    const STALLED: usize = 20;
    const CAP: usize = 8;
    let deadline = Duration::from_secs(2);
    // Timers, scheduling and process start on a loaded machine.
    let slack = Duration::from_millis(1500);
    let served = serve(
        &db.url,
        &[
            "--open-as",
            "user:alice",
            "--request-timeout",
            "2",
            "--max-connections",
            "8",
        ],
    );
    let authority = served.base.strip_prefix("http://").unwrap().to_owned();
    let release = Arc::new(Barrier::new(STALLED + 1));
    let clients: Vec<_> = (0..STALLED)
        .map(|_| {
            let release = release.clone();
            let authority = authority.clone();
            std::thread::spawn(move || {
                let mut stalled = TcpStream::connect(&authority).unwrap();
                release.wait();
                stalled
                    .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                    .unwrap();
                stalled
            })
        })
        .collect();
    release.wait();
    let started = Instant::now();
    let stalled: Vec<TcpStream> = clients.into_iter().map(|c| c.join().unwrap()).collect();

    // Queued behind the twenty; answered once two rounds have timed out.
    let healthz_bound = 2 * deadline + slack;
    let mut fresh = TcpStream::connect(&authority).unwrap();
    let request =
        format!("GET /healthz HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    fresh.write_all(request.as_bytes()).unwrap();
    let reply = read_until_closed(fresh, started + healthz_bound);
    let answered = started.elapsed();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        answered < healthz_bound,
        "/healthz answered after {answered:?}"
    );

    // Every stalled client is answered 408 and closed, the last round
    // (read once places freed twice) one deadline after /healthz.
    let rounds = STALLED.div_ceil(CAP) as u32;
    let stalled_bound = rounds * deadline + slack;
    for connection in stalled {
        let reply = read_until_closed(connection, started + stalled_bound);
        assert!(reply.starts_with("HTTP/1.1 408"), "{reply:?}");
        assert!(
            reply.to_ascii_lowercase().contains("connection: close"),
            "{reply}"
        );
        assert!(
            reply.ends_with(r#"{"error":"request timed out"}"#),
            "{reply}"
        );
    }
    let closed = started.elapsed();
    assert!(
        closed < stalled_bound,
        "stalled clients closed after {closed:?}"
    );
}

/// Everything `connection` receives until the server closes it, waiting
/// no later than `until` (then it fails).
fn read_until_closed(mut connection: TcpStream, until: Instant) -> String {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "not closed in time; got {:?}",
            String::from_utf8_lossy(&seen)
        );
        connection.set_read_timeout(Some(left)).unwrap();
        match connection.read(&mut chunk) {
            Ok(0) => return String::from_utf8_lossy(&seen).into_owned(),
            Ok(n) => seen.extend_from_slice(&chunk[..n]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                panic!(
                    "neither answered nor closed in time; got {:?}",
                    String::from_utf8_lossy(&seen)
                )
            }
            Err(error) => panic!("{error} after {:?}", String::from_utf8_lossy(&seen)),
        }
    }
}

/// A request's body stops halfway: `408 {"error": "request timed out"}`
/// with `Connection: close`, and the connection ends; meanwhile
/// `/healthz` answers. A wait longer than the deadline is not cut.
fn http_12_a_stalled_body_gets_408(db: &TestDb) {
    let server = serve_with(
        db,
        ServeOptions::new().request_timeout(Duration::from_millis(500)),
    );
    let t = tokens(db);
    let mut stalled = stalled_post(&server, &t.alice);
    assert_eq!(send(client().get(server.url("/healthz"))).status, 200);
    let mut reply = String::new();
    stalled.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(
        reply.to_ascii_lowercase().contains("connection: close"),
        "{reply}"
    );
    assert!(
        reply.ends_with(r#"{"error":"request timed out"}"#),
        "{reply}"
    );
    // A wait (no body) runs past the deadline to its own end.
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let waited = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{pending}/wait?timeout_ms=1500"),
    );
    assert_eq!(
        waited.text(),
        r#"504 {"error":"timed out waiting for a response"}"#
    );
}

/// Three connections held open without a request fill a cap of three: a
/// fourth client's `/healthz` waits in the backlog, and is answered once
/// one of the three closes.
fn http_12_no_accept_at_the_connection_cap(db: &TestDb) {
    let server = serve_with(db, ServeOptions::new().max_connections(3));
    let mut held: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(server.authority()).unwrap())
        .collect();
    let mut fourth = TcpStream::connect(server.authority()).unwrap();
    let request = format!(
        "GET /healthz HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.authority()
    );
    fourth.write_all(request.as_bytes()).unwrap();
    // Not accepted: nothing comes back while the three stay open.
    fourth
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(
        fourth.read(&mut byte).is_err(),
        "answered above the connection cap"
    );
    drop(held.pop());
    fourth
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut reply = String::new();
    fourth.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

/// A keep-alive connection left idle after its answer, and one that never
/// sent a request, are closed by the server once the header timeout has
/// passed: idle connections do not hold places under the cap forever.
fn http_12_idle_keep_alives_close_after_the_header_timeout(db: &TestDb) {
    let server = serve_with(
        db,
        ServeOptions::new()
            .max_connections(2)
            .header_read_timeout(Duration::from_millis(300)),
    );
    let mut answered = TcpStream::connect(server.authority()).unwrap();
    let silent = TcpStream::connect(server.authority()).unwrap();
    let request = format!(
        "GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.authority()
    );
    answered.write_all(request.as_bytes()).unwrap();
    for mut connection in [answered, silent] {
        // Generous: a loaded machine may be slow to fire the timer.
        connection
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut seen = Vec::new();
        // Ends (EOF) only when the server closes the connection.
        connection.read_to_end(&mut seen).unwrap();
        let seen = String::from_utf8_lossy(&seen);
        assert!(
            seen.is_empty() || seen.starts_with("HTTP/1.1 200"),
            "{seen}"
        );
    }
    // Both places are free again: a third client is answered.
    assert_eq!(send(client().get(server.url("/healthz"))).status, 200);
}

/// `clarion serve` started with a low soft descriptor limit raises it to
/// the hard one and says how many connections that allows; a
/// `--max-connections` above that is refused, naming the limit.
fn http_12_serve_raises_its_descriptor_limit(db: &TestDb) {
    let (_, hard) = http::descriptor_limits();
    tokens(db);
    let binary = env!("CARGO_BIN_EXE_clarion");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -Sn 512 && exec '{binary}' serve --database-url '{}' --listen 127.0.0.1:0",
            db.url
        ))
        .env_remove("CLARION_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    kill_after(child.id(), Duration::from_secs(60));
    let mut said = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let expected = format!(
        "up to {} connections (descriptor limit {hard})",
        http::connections_allowed(hard)
    );
    assert!(said.contains(&expected), "{said}");
    let refused = clarion(&[
        "serve",
        "--database-url",
        &db.url,
        "--listen",
        "127.0.0.1:0",
        "--max-connections",
        &(hard * 2).to_string(),
    ]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!("descriptor limit {hard}")),
        "{stderr}"
    );
}
