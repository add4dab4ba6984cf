//! HTTP-9: the seed's race across doors (R3) and a bounded load run, over
//! real loopback sockets on both backends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use clarion::envelope;
use clarion::ffi::{clarion_close, Handle};
use clarion::Principal;
use serde_json::{json, Value};

use crate::support::abi::{abi_open, abi_resolve_as_alice};
use crate::support::server::*;
use crate::support::*;

fn answer_args(pending_id: &str, text: &str) -> Value {
    json!({
        "pending_id": pending_id,
        "answers": [
            {"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": text},
        ],
    })
}

/// One MCP racer: the official Python client driving its own `clarion
/// mcp` process (tests/mcp_client/racer.py), ready before the race.
struct McpRacer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl McpRacer {
    fn start(python: &std::path::Path, url: &str, note: &str) -> McpRacer {
        let mut child = Command::new(python)
            .arg(root().join("tests/mcp_client/racer.py"))
            .arg(note)
            .env("CLARION_BIN", env!("CARGO_BIN_EXE_clarion"))
            .env("CLARION_DATABASE_URL", url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut ready = String::new();
        stdout.read_line(&mut ready).unwrap();
        assert_eq!(ready.trim(), "ready", "the MCP racer did not start");
        McpRacer {
            child,
            stdin,
            stdout,
        }
    }

    /// Answers `pending_id` over MCP; the tool result's text, as sent.
    fn answer(&mut self, pending_id: &str) -> String {
        writeln!(self.stdin, "{pending_id}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the MCP racer ended");
        line.trim_end().to_owned()
    }
}

impl Drop for McpRacer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `(claimed, response)` of one racer.
type Outcome = (bool, String);

/// Resident memory (kB) and threads of this process, from /proc.
fn resources() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("Threads:"))
}

dual_backend!(
    http_9_rest_mcp_and_c_abi_race_for_one_bundle,
    http_9_bounded_load_run
);

/// HTTP-9, [seed R3]: the same bundle answered at once over REST, MCP
/// (`clarion mcp` processes driven by the official Python client) and
/// the C ABI: one winner, and every loser gets byte-identical answers
/// (the stored response).
fn http_9_rest_mcp_and_c_abi_race_for_one_bundle(db: &TestDb) {
    let Some(python) = crate::doors_mcp_server::mcp_python() else {
        return;
    };
    let session = mirror(db, "race", "alice");
    let mcp: Vec<Arc<Mutex<McpRacer>>> = (0..4)
        .map(|n| {
            Arc::new(Mutex::new(McpRacer::start(
                &python,
                &db.url,
                &format!("mcp racer {n}"),
            )))
        })
        .collect();
    let server = start(db);
    let alice_token = tokens(db).alice;
    let abi = abi_open(&db.url);
    for round in 0..5 {
        let pending_id = ask(db, &session, 1);
        let racers = 12;
        let start = Arc::new(Barrier::new(racers));
        let threads: Vec<_> = (0..racers)
            .map(|n| {
                let (start, pending_id) = (start.clone(), pending_id.clone());
                let mcp = mcp[n / 3].clone();
                let url = server.url(&format!("/api/v1/clarification/{pending_id}/respond"));
                let token = alice_token.clone();
                std::thread::spawn(move || -> (Outcome, Option<String>) {
                    let text = format!("racer {n}");
                    let client = client();
                    start.wait();
                    match n % 3 {
                        0 => {
                            let reply = send(
                                client
                                    .post(url)
                                    .bearer_auth(token)
                                    .header("content-type", "application/json")
                                    .body(json!({"answers": answer_args(&pending_id, &text)["answers"]}).to_string()),
                            );
                            assert_eq!(reply.status, 200, "{}", reply.body);
                            let body = reply.json();
                            let claimed = body["claimed"].as_bool().unwrap();
                            ((claimed, body["response"].to_string()), (!claimed).then_some(reply.body))
                        }
                        1 => {
                            let mut mcp = mcp.lock().unwrap();
                            let text = mcp.answer(&pending_id);
                            let body: Value = serde_json::from_str(&text).unwrap();
                            assert_eq!(body.as_object().unwrap().keys().collect::<Vec<_>>(), ["claimed", "status", "response", "quorum"]);
                            let claimed = body["claimed"].as_bool().unwrap();
                            ((claimed, body["response"].to_string()), None)
                        }
                        _ => {
                            let reply = abi_resolve_as_alice(abi, answer_args(&pending_id, &text));
                            let body = &reply["body"];
                            let claimed = body["claimed"].as_bool().unwrap();
                            ((claimed, body["response"].to_string()), (!claimed).then(|| body.to_string()))
                        }
                    }
                })
            })
            .collect();
        let results: Vec<(Outcome, Option<String>)> =
            threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_one_winner_and_the_stored_response(
            db,
            &pending_id,
            results
                .iter()
                .map(|((claimed, response), _)| (*claimed, response)),
            round,
        );
        // Every REST and C ABI loser's whole body is the same bytes.
        let loser_bodies: Vec<&String> = results
            .iter()
            .filter_map(|(_, body)| body.as_ref())
            .collect();
        assert!(
            loser_bodies.windows(2).all(|pair| pair[0] == pair[1]),
            "round {round}: {loser_bodies:#?}"
        );
    }
    clarion_close(abi as *mut Handle);
}

/// HTTP-9: a bounded load run on loopback: 200 long polls held open
/// while 20 answerers answer their bundles (each bundle by three of
/// them), bounded by 20 s. No 5xx, no lost answer: every poll returns
/// the one stored response. The server's threads stay within its
/// runtime's bound (no thread per poll); memory and threads are
/// printed.
fn http_9_bounded_load_run(db: &TestDb) {
    let session = mirror(db, "load", "alice");
    let server = start(db);
    let t = tokens(db);
    let token = t.alice;
    let bundles: Vec<String> = (0..200).map(|_| ask(db, &session, 1)).collect();
    let before = resources();
    let deadline = Instant::now() + Duration::from_secs(20);

    // The long polls: raw connections read by one thread, so the run
    // adds no thread per poll to the process it measures.
    let polls: Vec<std::net::TcpStream> = bundles
        .iter()
        .map(|pending_id| {
            send_raw(
                &server,
                &format!("/api/v1/clarification/{pending_id}/wait?timeout_ms=20000"),
                &token,
            )
        })
        .collect();
    // Measured once every poll is open, not after a guess at how long
    // opening them takes.
    let metrics = server.url("/metrics");
    eventually(Duration::from_secs(15), "every long poll began", || {
        crate::http_routes::waits_in_flight(&metrics, &t.system) >= bundles.len() as u64
    });
    let during = resources();
    let server_threads = server.threads();
    let answerers: Vec<_> = (0..20)
        .map(|n| {
            let urls: Vec<String> = bundles
                .iter()
                .cycle()
                .skip(n * 10)
                .take(30)
                .map(|id| server.url(&format!("/api/v1/clarification/{id}/respond")))
                .collect();
            let token = token.clone();
            std::thread::spawn(move || -> Vec<u16> {
                let client = client();
                urls.iter()
                    .take_while(|_| Instant::now() < deadline)
                    .map(|url| {
                        send(
                            client
                                .post(url)
                                .bearer_auth(&token)
                                .header("content-type", "application/json")
                                .body(format!(r#"{{"answers": [{{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "answerer {n}"}}]}}"#)),
                        )
                        .status
                    })
                    .collect()
            })
        })
        .collect();
    let statuses: Vec<u16> = answerers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(statuses.iter().all(|status| *status == 200), "{statuses:?}");
    for (pending_id, poll) in bundles.iter().zip(polls) {
        let (status, body) = read_raw(poll);
        assert_eq!(status, 200, "{pending_id}: {body}");
        let got: Value = serde_json::from_str(&body).unwrap();
        let stored = db
            .get_bundle(&Principal::System, pending_id)
            .unwrap()
            .response
            .unwrap();
        assert_eq!(
            got["response"].to_string(),
            envelope::response(&stored).to_string(),
            "{pending_id}"
        );
        assert_eq!(got["claimed"], json!(false));
    }
    let after = resources();
    println!(
        "load run: {} polls, {} answers, rss {} → {} → {} kB, process threads {} → {} → {}, server threads {}",
        bundles.len(), statuses.len(), before.0, during.0, after.0, before.1, during.1, after.1, server_threads
    );
    assert_eq!(statuses.len(), 600, "the run hit its 20 s bound");
    // The test runtime's bound: two workers and at most 40 blocking
    // threads (support/server.rs), however many polls are open.
    assert!(
        server_threads <= 2 + 40,
        "{server_threads} server threads for 200 polls"
    );
}
