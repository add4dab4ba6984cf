//! `clarion mcp` (WIRE-4 over stdio), on both backends: the official Python
//! MCP client lists, answers and loses a race against a database prepared
//! through the library; raw JSON-RPC lines check that bad input gets
//! protocol errors and never ends the server, even when the database goes
//! away underneath it.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use clarion::{envelope, Principal};
use serde_json::{json, Value};

use crate::support::*;

/// A Python with the official MCP client; `None` (skip) only outside CI.
pub fn mcp_python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    python::MCP_CLIENT.python(&PYTHON)
}

dual_backend!(
    wire_4_official_python_client_over_stdio,
    mcp_server_survives_bad_input
);

/// WIRE-4 with a real client: tools/list, list_pending_questions,
/// answer_question; a second client is beaten and told the winner's
/// answer; a read-only agent sees one tool and is denied the other.
fn wire_4_official_python_client_over_stdio(db: &TestDb) {
    let Some(python) = mcp_python() else { return };
    let session = mirror(db, "mcp", "alice");
    let pending_id = ask(db, &session, 2);
    let output = Command::new(python)
        .arg(root().join("tests/mcp_client/test_stdio.py"))
        .env("CLARION_BIN", env!("CARGO_BIN_EXE_clarion"))
        .env("CLARION_DATABASE_URL", &db.url)
        .env("CLARION_PENDING_ID", &pending_id)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let winner: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let stored = db.get_bundle(&Principal::System, &pending_id).unwrap();
    assert_eq!(stored.status.as_str(), "answered");
    assert_eq!(envelope::response(&stored.response.unwrap()), winner);
}

/// Malformed JSON-RPC, unknown tools, wrong argument types and a
/// database that disappears: protocol-correct errors, and the server
/// keeps serving until stdin closes.
fn mcp_server_survives_bad_input(db: &TestDb) {
    let session = mirror(db, "rough", "alice");
    let pending_id = ask(db, &session, 1);
    let mut server = Server::start(&db.url, "user:alice");
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
    assert_eq!(
        server.receive()["result"]["serverInfo"]["name"],
        json!("clarion")
    );
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    server.send("this is not json {");
    let parse_error = server.receive();
    assert_eq!(parse_error["error"]["code"], json!(-32700), "{parse_error}");
    assert_eq!(parse_error["id"], Value::Null);
    server.send_bytes(b"\xff\xfe\n");
    assert_eq!(server.receive()["error"]["code"], json!(-32700));
    // An overlong line is refused without being kept in memory.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
        "x".repeat(3 << 20)
    );
    server.send(&huge);
    let too_large = server.receive();
    assert_eq!(too_large["error"]["code"], json!(-32700), "{too_large}");
    assert!(too_large["error"]["message"]
        .as_str()
        .unwrap()
        .contains("larger than"));
    server.send(r#"{"no":"jsonrpc"}"#);
    assert_eq!(server.receive()["error"]["code"], json!(-32600));
    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#);
    let unknown_method = server.receive();
    assert_eq!(
        (
            unknown_method["id"].clone(),
            unknown_method["error"]["code"].clone()
        ),
        (json!(2), json!(-32601))
    );
    server.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#,
    );
    let unknown_tool = server.receive();
    assert_eq!(unknown_tool["id"], json!(3));
    assert_eq!(
        unknown_tool["error"]["code"],
        json!(-32602),
        "{unknown_tool}"
    );
    server.send(&json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"answer_question","arguments":{"pending_id": pending_id, "rejected": "yes"}}}).to_string());
    let wrong_type = server.receive();
    assert_eq!(wrong_type["result"]["isError"], json!(true));
    assert_eq!(
        error_of(&wrong_type["result"]),
        json!({"error": "rejected: expected a boolean, got a string", "code": "validation"})
    );

    // The database loses a table under the running server.
    db.raw(|conn| {
        use diesel::connection::SimpleConnection;
        conn.batch_execute("DROP TABLE bundle_questions").unwrap();
    });
    server.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_pending_questions","arguments":{}}}"#);
    let broken = server.receive();
    assert_eq!(broken["id"], json!(5));
    assert_eq!(broken["result"]["isError"], json!(true), "{broken}");
    assert_eq!(error_of(&broken["result"])["code"], json!("internal"));
    server.send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#);
    assert_eq!(
        server.receive()["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(
        server.finish().success(),
        "the server exits cleanly at end of input"
    );
}

dual_backend!(
    mcp_server_replies_are_never_cut,
    mcp_server_ends_with_stdin_whenever_it_comes
);

/// The end of stdin is how a stdio server is told to stop, at any moment:
/// before `initialize`, between `initialize` and `initialized`, and after;
/// both servers then exit 0.
fn mcp_server_ends_with_stdin_whenever_it_comes(db: &TestDb) {
    let session = mirror(db, "eof", "alice");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "eof", "version": "1"},
    }})
    .to_string();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    for mode in [["--as", "user:alice"], ["--ask-in", session.as_str()]] {
        let server = Server::start_with(&db.url, &mode);
        assert_eq!(server.finish().code(), Some(0), "{mode:?}: at once");

        let mut server = Server::start_with(&db.url, &mode);
        server.send("not json");
        assert_eq!(server.receive()["error"]["code"], json!(-32700));
        assert_eq!(
            server.finish().code(),
            Some(0),
            "{mode:?}: before initialize"
        );

        let mut server = Server::start_with(&db.url, &mode);
        server.send(&initialize);
        assert_eq!(server.receive()["id"], json!(1));
        assert_eq!(
            server.finish().code(),
            Some(0),
            "{mode:?}: before initialized"
        );

        let mut server = Server::start_with(&db.url, &mode);
        server.send(&initialize);
        assert_eq!(server.receive()["id"], json!(1));
        server.send(initialized);
        server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
        assert_eq!(server.receive()["id"], json!(2));
        assert_eq!(server.finish().code(), Some(0), "{mode:?}: after");
    }
}

/// The server's output stays whole lines: parse-error replies written
/// while a large response is being copied out never cut into it (a
/// partly read response line used to be dropped when a parse error won
/// the race for stdout).
fn mcp_server_replies_are_never_cut(db: &TestDb) {
    let session = mirror(db, "big", "alice");
    for _ in 0..50 {
        let mut request = ask_request(&session, 1);
        request.questions[0].prompt = "p".repeat(3_900);
        db.ask(&request).unwrap();
    }
    let mut server = Server::start(&db.url, "user:alice");
    server.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
    server.receive();
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    const ROUNDS: usize = 20;
    const GARBAGE: usize = 20;
    let mut stdin = server.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for round in 1..=ROUNDS {
            let call = json!({"jsonrpc": "2.0", "id": round, "method": "tools/call", "params": {"name": "list_pending_questions", "arguments": {}}});
            let mut burst = format!("{call}\n");
            for _ in 0..GARBAGE {
                burst.push_str("not json {\n");
            }
            stdin.write_all(burst.as_bytes()).unwrap();
            stdin.flush().unwrap();
        }
        stdin
    });
    let (mut results, mut parse_errors) = (0, 0);
    for _ in 0..ROUNDS * (GARBAGE + 1) {
        let reply = server.receive();
        if reply["error"]["code"] == json!(-32700) {
            parse_errors += 1;
        } else {
            assert_eq!(
                reply["result"]["structuredContent"]["count"],
                json!(50),
                "{reply}"
            );
            results += 1;
        }
    }
    assert_eq!((results, parse_errors), (ROUNDS, ROUNDS * GARBAGE));
    server.stdin = Some(writer.join().unwrap());
    assert!(server.finish().success());
}

/// `clarion mcp` as a child process speaking newline-delimited JSON-RPC.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(url: &str, principal: &str) -> Server {
        Server::start_with(url, &["--as", principal])
    }

    /// `clarion mcp` on `url` with these arguments (`--as …`, `--ask-in …`).
    pub fn start_with(url: &str, args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_clarion"))
            .args(["mcp", "--database-url", url])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        // A hung server fails the test instead of stalling the suite.
        let pid = child.id();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(120));
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        });
        Server {
            child,
            stdin,
            stdout,
        }
    }

    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn receive(&mut self) -> Value {
        let mut line = String::new();
        let read = self.stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "the server closed its output");
        serde_json::from_str(&line).unwrap()
    }

    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

/// An error result's `{"error", "code"}`: its text content, with no
/// `structuredContent` (docs/mcp.md).
fn error_of(result: &Value) -> Value {
    assert_eq!(result["isError"], json!(true), "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

dual_backend!(prod_6_mcp_answers_every_line_with_an_id);

/// PROD-6 on both servers: a line the SDK cannot decode (nesting deeper
/// than its decoder goes, an id no number type holds, a lone surrogate),
/// or a known method whose params do not fit, gets a JSON-RPC error under
/// the line's id (null when the id itself cannot be read); an undecodable
/// notification gets nothing, and one before `initialize` does not end
/// the server. After each bad line the next request is still answered.
fn prod_6_mcp_answers_every_line_with_an_id(db: &TestDb) {
    let session = mirror(db, "always", "alice");
    let deep = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"x":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        )
    };
    let bad_lines: Vec<(String, Value, i64)> = vec![
        (deep("11"), json!(11), -32700),
        (
            format!("{}{}", "[".repeat(200), "]".repeat(200)),
            Value::Null,
            -32700,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}"#.to_owned(),
            Value::Null,
            -32700,
        ),
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"cursor":"\ud800"}}"#
                .to_owned(),
            json!(12),
            -32700,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"s-13","method":"tools/call","params":{"name":"x\ud800","arguments":{}}}"#
                .to_owned(),
            json!("s-13"),
            -32700,
        ),
        // Cut off after its id.
        (
            r#"{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{"#.to_owned(),
            json!(18),
            -32700,
        ),
        (
            r#"{"jsonrpc":"2.0","id":14,"method":"tasks/get","params":{"taskId":null}}"#
                .to_owned(),
            json!(14),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":15,"method":"tasks/get","params":{}}"#.to_owned(),
            json!(15),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":16,"method":"tasks/cancel"}"#.to_owned(),
            json!(16),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":5}}"#.to_owned(),
            json!(17),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.to_owned(),
            Value::Null,
            -32600,
        ),
    ];
    for mode in [["--as", "user:alice"], ["--ask-in", session.as_str()]] {
        let mut server = Server::start_with(&db.url, &mode);
        // A notification before `initialize` would end the SDK's server.
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
        assert_eq!(server.receive()["id"], json!(1), "{mode:?}");
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let mut next_id = 100;
        let mut still_served = |server: &mut Server, after: &str| {
            next_id += 1;
            server.send(
                &json!({"jsonrpc": "2.0", "id": next_id, "method": "tools/list"}).to_string(),
            );
            let reply = server.receive();
            assert_eq!(
                reply["id"],
                json!(next_id),
                "{mode:?} after {after}: {reply}"
            );
            assert_eq!(
                reply["result"]["tools"].as_array().map(Vec::len),
                Some(3),
                "{mode:?} after {after}: {reply}"
            );
        };
        for (line, id, code) in &bad_lines {
            server.send(line);
            let reply = server.receive();
            let shown = &line[..line.len().min(90)];
            assert_eq!(reply["jsonrpc"], json!("2.0"), "{mode:?} {shown}: {reply}");
            assert_eq!(reply.get("id"), Some(id), "{mode:?} {shown}: {reply}");
            assert_eq!(
                reply["error"]["code"],
                json!(code),
                "{mode:?} {shown}: {reply}"
            );
            assert!(reply["error"]["message"].is_string(), "{reply}");
            assert!(reply.get("result").is_none(), "{reply}");
            still_served(&mut server, shown);
        }
        // Undecodable notifications get no reply: the next line out is the
        // next request's answer.
        for notification in [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"\ud800","progress":1}}"#.to_owned(),
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}1{}}}}}"#,
                "[".repeat(200),
                "]".repeat(200)
            ),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1e400}}"#
                .to_owned(),
        ] {
            server.send(&notification);
            still_served(&mut server, &notification[..60]);
        }
        assert_eq!(server.finish().code(), Some(0), "{mode:?}");
    }
}
