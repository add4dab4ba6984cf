//! HTTP-11 over real loopback sockets: `clarion serve --open-as` answers
//! only requests addressed to a loopback name, so a page on a name rebound
//! to 127.0.0.1 (which sends its own name as `Host`, and a matching
//! `Origin`) cannot list or answer as the open principal; a server with
//! tokens serves any `Host` (a reverse proxy passes its own).

use std::io::Write;
use std::net::TcpStream;

use crate::support::server::{read_reply, serve, start, tokens};
use crate::support::*;

dual_backend!(
    http_11_open_server_refuses_other_host_names,
    http_11_open_server_serves_loopback_names,
    http_11_token_server_serves_any_host
);

const MISDIRECTED: &str = r#"{"error":"misdirected request: this server answers only to localhost, 127.0.0.1 and [::1]"}"#;

/// A raw HTTP/1.1 request with exactly the `Host` given (`None`: no
/// `Host` line at all), then `extra` header lines and `body`.
fn request(line: &str, host: Option<&str>, extra: &str, body: &str) -> String {
    let host = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
    let length = if body.is_empty() {
        String::new()
    } else {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        )
    };
    format!("{line}\r\n{host}{extra}{length}Connection: close\r\n\r\n{body}")
}

/// Sends `request` on a connection of its own; the reply's status and
/// its whole text.
fn exchange(authority: &str, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream.write_all(request.as_bytes()).expect("send");
    read_reply(stream)
}

fn body(reply: &str) -> &str {
    reply.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}

/// A rebound name with a matching `Origin`, and no `Host` at all: `421`
/// with `Connection: close` for the page, its assets, `/healthz`, a list
/// and a respond; and the bundle is still pending afterwards.
fn http_11_open_server_refuses_other_host_names(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending = ask(db, &session, 1);
    let served = serve(&db.url, &["--open-as", "user:alice"]);
    let authority = served.base.trim_start_matches("http://").to_owned();
    let port = authority.rsplit(':').next().unwrap().to_owned();
    let rebound = format!("rebind.example:{port}");
    let origin = format!("Origin: http://{rebound}\r\n");
    let respond = format!("POST /api/v1/clarification/{pending}/respond HTTP/1.1");
    let answer = r#"{"answers":[{"question_id":"q1","selected_options":["q1_opt1"]}]}"#;
    let cases = [
        request("GET / HTTP/1.1", Some(&rebound), "", ""),
        request("GET /inbox.js HTTP/1.1", Some(&rebound), "", ""),
        request("GET /healthz HTTP/1.1", Some(&rebound), "", ""),
        request(
            "GET /api/v1/clarification HTTP/1.1",
            Some(&rebound),
            &origin,
            "",
        ),
        request(&respond, Some(&rebound), &origin, answer),
        request("GET /api/v1/clarification HTTP/1.1", None, "", ""),
        request(
            "GET /api/v1/clarification HTTP/1.1",
            Some("rebind.example"),
            "",
            "",
        ),
        request("GET /nope HTTP/1.1", Some("127.0.0.1.nip.io"), "", ""),
    ];
    for sent in cases {
        let (status, reply) = exchange(&authority, &sent);
        assert_eq!(status, 421, "{sent}: {reply}");
        assert_eq!(body(&reply), MISDIRECTED, "{sent}");
        let lower = reply.to_ascii_lowercase();
        assert!(lower.contains("connection: close"), "{reply}");
        assert!(lower.contains("content-type: application/json"), "{reply}");
    }
    // The refused respond changed nothing.
    let detail = db
        .get_bundle(&clarion::Principal::user("alice"), &pending)
        .unwrap();
    assert_eq!(detail.status.as_str(), "pending");
}

/// The three loopback names, in any letter case, with and without a
/// port, are served as the open principal.
fn http_11_open_server_serves_loopback_names(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    let served = serve(&db.url, &["--open-as", "user:alice"]);
    let authority = served.base.trim_start_matches("http://").to_owned();
    let port = authority.rsplit(':').next().unwrap().to_owned();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
    ] {
        let list = request("GET /api/v1/clarification HTTP/1.1", Some(&host), "", "");
        let (status, reply) = exchange(&authority, &list);
        assert_eq!(status, 200, "{host}: {reply}");
        assert!(body(&reply).contains(r#""count":1"#), "{host}: {reply}");
        let (status, _) = exchange(&authority, &request("GET / HTTP/1.1", Some(&host), "", ""));
        assert_eq!(status, 200, "{host}");
    }
}

/// A server with tokens keeps serving whatever `Host` a proxy passes.
fn http_11_token_server_serves_any_host(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let bearer = format!("Authorization: Bearer {}\r\n", t.alice);
    for host in ["inbox.example.com", "rebind.example:7878"] {
        let summary = request("GET /api/v1/summary HTTP/1.1", Some(host), &bearer, "");
        let (status, reply) = exchange(server.authority(), &summary);
        assert_eq!(status, 200, "{host}: {reply}");
    }
    let healthz = request("GET /healthz HTTP/1.1", None, "", "");
    let (status, _) = exchange(server.authority(), &healthz);
    assert_eq!(status, 200);
}
