//! Asking over MCP (MCPA-1..5), on both backends: an agent drives
//! `clarion mcp --ask-in` with the official Python MCP client
//! (`tests/mcp_client/test_asking.py`) while this test is the human,
//! answering over the CLI, over HTTP or through the library; raw JSON-RPC
//! lines check cancellation, progress and the `wait_ms` cap.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use clarion::{Principal, SessionState};
use serde_json::{json, Value};

use crate::doors_mcp_server::{mcp_python, Server};
use crate::support::server::{post, start, tokens};
use crate::support::*;

dual_backend!(
    mcpa_2_an_agent_asks_and_a_human_answers_on_the_command_line,
    mcpa_2_the_pending_path_answered_over_http,
    mcpa_1_pauses_longer_than_the_lease_send_nothing_to_the_outbox,
    mcpa_5_a_deadlines_default_reaches_the_agent,
    mcpa_5_expired_and_superseded_are_results,
    mcpa_5_validation_not_found_and_session_ended_are_errors,
    mcpa_5_a_retried_ask_human_finds_the_same_bundle,
    mcpa_3_cancel_question,
    mcpa_3_tools_list_in_both_modes,
    mcpa_1_arguments_and_an_unknown_session,
    mcpa_4_cancelled_ends_the_wait_at_once,
    mcpa_4_a_client_giving_up_leaves_the_bundle_pending,
    mcpa_4_progress_every_15_s,
    mcpa_4_wait_ms_is_cut_at_50_s
);

/// The agent: the Python client running one scenario of `test_asking.py`.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Agent {
    fn start(db: &TestDb, session: &str, scenario: &str, env: &[(&str, &str)]) -> Option<Agent> {
        let python = mcp_python()?;
        let mut child = Command::new(python)
            .arg(root().join("tests/mcp_client/test_asking.py"))
            .arg(scenario)
            .env("CLARION_BIN", env!("CARGO_BIN_EXE_clarion"))
            .env("CLARION_DATABASE_URL", &db.url)
            .env("CLARION_SESSION", session)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        kill_after(child.id(), Duration::from_secs(120));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Some(Agent {
            child,
            stdin,
            stdout,
        })
    }

    /// The rest of the next line starting with `prefix`.
    fn line(&mut self, prefix: &str) -> String {
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(read > 0, "the agent ended before {prefix}");
            if let Some(rest) = line.trim_end().strip_prefix(prefix) {
                return rest.trim().to_owned();
            }
        }
    }

    /// The agent goes on after this side acted.
    fn go(&mut self) {
        self.stdin.write_all(b"go\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The scenario's result; the agent must have succeeded.
    fn result(mut self) -> Value {
        let result = serde_json::from_str(&self.line("RESULT ")).unwrap();
        assert!(self.child.wait().unwrap().success());
        result
    }
}

/// The one bundle the session waits on, once the agent asked it.
fn asked_on(db: &TestDb, session: &str) -> String {
    let mut found = String::new();
    eventually(Duration::from_secs(30), "the agent's question", || {
        let page = db
            .list_pending(&Principal::System, &Default::default())
            .unwrap();
        match page.bundles.iter().find(|b| b.session_id == session) {
            Some(bundle) => {
                found = bundle.pending_id.clone();
                true
            }
            None => false,
        }
    });
    found
}

const ANSWER: &str =
    r#"[{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"ship it"}]"#;

/// MCPA-2: `ask_human` waits, a human answers on the command line, and the
/// agent gets the answer (`decided_by` user). The server mirrors the task
/// and the workspace it was given first.
fn mcpa_2_an_agent_asks_and_a_human_answers_on_the_command_line(db: &TestDb) {
    let mirror = "--task t-mcp --workspace w-mcp --owner alice";
    let Some(agent) = Agent::start(db, "s-mcp", "answered", &[("CLARION_MIRROR", mirror)]) else {
        return;
    };
    let id = asked_on(db, "s-mcp");
    let answered = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["answer", &id, "--answers", ANSWER, "--as", "user:alice"])
        .args(["--database-url", &db.url])
        .output()
        .unwrap();
    assert!(answered.status.success(), "{answered:?}");
    let result = agent.result();
    assert_eq!(
        result.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["pending_id", "status", "response"]
    );
    assert_eq!(
        (result["pending_id"].as_str(), result["status"].as_str()),
        (Some(id.as_str()), Some("answered"))
    );
    assert_eq!(result["response"]["answers"][0]["custom_text"], "ship it");
    assert_eq!(result["response"]["decided_by"], "user");
}

/// MCPA-2: `ask_human` ends pending, the human answers over HTTP, and
/// `wait_for_answer` returns it; the answer never went to the outbox and
/// the bundle stayed attached (MCPA-1).
fn mcpa_2_the_pending_path_answered_over_http(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let Some(mut agent) = Agent::start(db, &session, "pending", &[]) else {
        return;
    };
    let id = agent.line("PENDING ");
    let server = start(db);
    let t = tokens(db);
    let reply = post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{id}/respond"),
        r#"{"answers":[{"question_id":"q1","selected_options":["q1_opt2"],"custom_text":"over http"}]}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = agent.result();
    assert_eq!(result["status"], "answered", "{result}");
    assert_eq!(result["response"]["answers"][0]["custom_text"], "over http");
    // Read on the system clock, the server's: the test's clock is days
    // behind, so through `db` every lease would look alive.
    let now = clarion::Clarion::open(&db.url).unwrap();
    let outbox = now.pending_deliveries(None).unwrap();
    assert!(outbox.iter().all(|d| d.pending_id != id), "no outbox entry");
    now.close();
}

/// MCPA-1, DEL-3: the server keeps its lease between the agent's calls:
/// with a lease of 1 s, a pause until the lease was renewed past three
/// leases after the ask, and the answer given while no call waits, nothing
/// reaches the outbox and the next `wait_for_answer` receives it.
fn mcpa_1_pauses_longer_than_the_lease_send_nothing_to_the_outbox(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let env = [("CLARION_MIRROR", "--attachment-lease 1s")];
    let Some(mut agent) = Agent::start(db, &session, "paused", &env) else {
        return;
    };
    let id = agent.line("PENDING ");
    let asked = clarion::Clock::now(&clarion::SystemClock).as_micros();
    // The agent pauses until the server has renewed its lease past three
    // leases after the ask: the first lease is long over by then. A server
    // that does not hold its lease never gets there.
    eventually(
        Duration::from_secs(30),
        "the lease renewed past three leases after the ask",
        || lease_of(db, &id).is_some_and(|until| until > asked + 3_000_000),
    );
    db.resolve_bundle(&alice(), &id, &one_answer("while it paused"))
        .unwrap();
    // Read on the system clock, the server's: the test's clock is days
    // behind, so through `db` every lease would look alive.
    let now = clarion::Clarion::open(&db.url).unwrap();
    let outbox = now.pending_deliveries(None).unwrap();
    assert!(outbox.iter().all(|d| d.pending_id != id), "{outbox:?}");
    agent.go();
    let result = agent.result();
    assert_eq!(
        result["response"]["answers"][0]["custom_text"],
        "while it paused"
    );
    assert!(now
        .pending_deliveries(None)
        .unwrap()
        .iter()
        .all(|d| d.pending_id != id));
    now.close();
}

/// When the lease of the handle `pending_id` is attached to ends (µs).
fn lease_of(db: &TestDb, pending_id: &str) -> Option<i64> {
    use clarion::test_hooks::schema::{attachments, handles};
    use diesel::prelude::*;
    db.raw(|conn| {
        attachments::table
            .inner_join(handles::table.on(handles::id.eq(attachments::handle_id)))
            .filter(attachments::pending_id.eq(pending_id))
            .select(handles::alive_until)
            .first::<i64>(conn)
            .optional()
            .unwrap()
    })
}

/// MCPA-5, EXP-3, WAIT-5: nobody answers; at the deadline the wait
/// settles the bundle and the agent gets the default, `decided_by`
/// deadline.
fn mcpa_5_a_deadlines_default_reaches_the_agent(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let Some(agent) = Agent::start(db, &session, "deadline_default", &[]) else {
        return;
    };
    let result = agent.result();
    assert_eq!(result["status"], "answered", "{result}");
    assert_eq!(result["response"]["decided_by"], "deadline");
    assert_eq!(
        result["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
}

/// MCPA-5: `expired` (a deadline's `expire`, or the host ending the
/// session) and `superseded` (the host began a new turn) are results with
/// `isError: false`, without a response.
fn mcpa_5_expired_and_superseded_are_results(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let Some(agent) = Agent::start(db, &session, "deadline_expire", &[]) else {
        return;
    };
    let expired = agent.result();
    assert_eq!(
        expired,
        json!({"pending_id": expired["pending_id"], "status": "expired"})
    );
    let Some(agent) = Agent::start(db, &session, "answered", &[]) else {
        return;
    };
    asked_on(db, &session);
    db.begin_turn(&session).unwrap();
    let superseded = agent.result();
    assert_eq!(superseded["status"], "superseded", "{superseded}");
    // The host ends the session while the agent waits: expired too.
    let Some(agent) = Agent::start(db, &session, "answered", &[]) else {
        return;
    };
    asked_on(db, &session);
    db.set_session_state(&session, SessionState::Completed)
        .unwrap();
    let ended = agent.result();
    assert_eq!(ended["status"], "expired", "{ended}");
}

/// MCPA-5, WIRE-4: a bad request is a `validation` error result, another
/// session's or an unknown bundle `not_found`, and asking on a session
/// the host ended `session_ended`, each with `isError: true`.
fn mcpa_5_validation_not_found_and_session_ended_are_errors(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let Some(mut agent) = Agent::start(db, &session, "refusals", &[]) else {
        return;
    };
    agent.line("PENDING ");
    db.set_session_state(&session, SessionState::Completed)
        .unwrap();
    agent.go();
    assert_eq!(
        agent.result()["codes"],
        json!(["validation", "not_found", "session_ended"])
    );
}

/// MCPA-5, ASK-4: a retried `ask_human` with the same key finds the same
/// bundle.
fn mcpa_5_a_retried_ask_human_finds_the_same_bundle(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let Some(agent) = Agent::start(db, &session, "idempotent", &[]) else {
        return;
    };
    let result = agent.result();
    assert_eq!(result["status"], "pending");
    let page = db.list_pending(&alice(), &Default::default()).unwrap();
    assert_eq!(page.bundles.len(), 1, "one bundle for both asks");
}

/// MCPA-3: `cancel_question` withdraws the agent's own bundle, refuses
/// another session's (`not_found`), and on one a human answered first
/// says `claimed: false` with the winner.
fn mcpa_3_cancel_question(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let others = ask(db, &mirror(db, "b", "alice"), 1);
    let env = [("CLARION_OTHER_ID", others.as_str())];
    let Some(mut agent) = Agent::start(db, &session, "cancelling", &env) else {
        return;
    };
    let late = agent.line("PENDING ");
    db.resolve_bundle(&alice(), &late, &one_answer("first"))
        .unwrap();
    agent.go();
    let beaten = agent.result();
    assert_eq!(beaten["response"]["answers"][0]["custom_text"], "first");
    let other = db.get_bundle(&Principal::System, &others).unwrap();
    assert_eq!(other.status.as_str(), "pending", "another session's stays");
}

/// MCPA-3: `tools/list` shows exactly the asking tools with `--ask-in`,
/// and none of them with `--as`.
fn mcpa_3_tools_list_in_both_modes(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let Some(agent) = Agent::start(db, &session, "tools", &[]) else {
        return;
    };
    let result = agent.result();
    assert_eq!(
        result["as"],
        json!([
            "list_pending_questions",
            "answer_question",
            "list_settled_questions"
        ])
    );
}

/// MCPA-1: `--ask-in` conflicts with `--as`, `--owner` needs
/// `--workspace` and `--workspace` needs `--task` (usage errors, exit
/// 2); without `--task` an unknown session exits 3 at start.
fn mcpa_1_arguments_and_an_unknown_session(db: &TestDb) {
    let code = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_clarion"))
            .args(["mcp", "--database-url", &db.url])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(code(&["--ask-in", "s", "--as", "system"]), Some(2));
    assert_eq!(
        code(&["--ask-in", "s", "--task", "t", "--owner", "u"]),
        Some(2)
    );
    assert_eq!(code(&["--ask-in", "s", "--workspace", "w"]), Some(2));
    assert_eq!(code(&["--ask-in", "s-unknown"]), Some(3));
}

/// MCPA-4 with the official client: a call the client gives up on (anyio
/// cancels it; the SDK sends `notifications/cancelled`) ends at once and
/// leaves the bundle pending, found again by the same idempotency key.
fn mcpa_4_a_client_giving_up_leaves_the_bundle_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let Some(agent) = Agent::start(db, &session, "cancelled", &[]) else {
        return;
    };
    let result = agent.result();
    let id = result["pending_id"].as_str().unwrap();
    let detail = db.get_bundle(&Principal::System, id).unwrap();
    assert_eq!(detail.status.as_str(), "pending");
}

/// A raw JSON-RPC asking server on `session`, initialized.
fn raw_server(db: &TestDb, session: &str) -> Server {
    let mut server = Server::start_with(&db.url, &["--ask-in", session]);
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
    assert_eq!(server.receive()["id"], 1);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server
}

fn ask_human(id: u64, wait_ms: u64, meta: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "ask_human", "_meta": meta,
        "arguments": {"questions": [{"title": "Go?", "prompt": "Ship it?", "options": [
            {"label": "Yes", "description": "y"}, {"label": "No", "description": "n"}]}],
            "wait_ms": wait_ms}}})
    .to_string()
}

/// MCPA-4: `notifications/cancelled` ends the wait at once: no reply is
/// sent for the cancelled call, the bundle stays pending and the server
/// goes on answering.
fn mcpa_4_cancelled_ends_the_wait_at_once(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut server = raw_server(db, &session);
    server.send(&ask_human(5, 40_000, json!({})));
    let id = asked_on(db, &session);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user gave up"}}"#);
    server.send(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
            "name": "wait_for_answer", "arguments": {"pending_id": id, "wait_ms": 0}}})
        .to_string(),
    );
    let next = server.receive();
    assert_eq!(next["id"], 6, "no reply for the cancelled call: {next}");
    assert_eq!(next["result"]["structuredContent"]["status"], "pending");
    server.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(server.receive()["id"], 7);
    let detail = db.get_bundle(&Principal::System, &id).unwrap();
    assert_eq!(detail.status.as_str(), "pending");
    assert!(server.finish().success());
}

/// MCPA-4: a call whose `_meta` carries a progress token gets
/// `notifications/progress` every 15 s while it waits, then its result.
fn mcpa_4_progress_every_15_s(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut server = raw_server(db, &session);
    server.send(&ask_human(5, 16_000, json!({"progressToken": "p-1"})));
    let progress = server.receive();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "p-1");
    let result = server.receive();
    assert_eq!(result["id"], 5, "{result}");
    assert_eq!(result["result"]["structuredContent"]["status"], "pending");
    assert!(server.finish().success());
}

/// MCPA-4: a `wait_ms` of 120 s is cut at 50 s: the call returns
/// `pending` after about 50 s, and nothing was detached (WAIT-1b).
fn mcpa_4_wait_ms_is_cut_at_50_s(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut server = raw_server(db, &session);
    let asked = Instant::now();
    server.send(&ask_human(5, 120_000, json!({})));
    let result = server.receive();
    let took = asked.elapsed();
    assert_eq!(
        result["result"]["structuredContent"]["status"], "pending",
        "{result}"
    );
    assert!(
        took >= Duration::from_millis(49_500) && took < Duration::from_secs(58),
        "took {took:?}"
    );
    let id = result["result"]["structuredContent"]["pending_id"]
        .as_str()
        .unwrap();
    assert!(!rows::detached(db, id));
    assert!(server.finish().success());
}
