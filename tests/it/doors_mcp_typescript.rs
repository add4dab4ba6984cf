//! WIRE-4, MCPA-5: the official TypeScript MCP SDK as a client of both
//! servers: `tools/list` first, then calls, every error code.
//!
//! The SDK (npm `@modelcontextprotocol/sdk`, pinned in
//! `tests/mcp_client_ts/package-lock.json`) checks every result against the
//! tool's `outputSchema` once it listed the tools, and compiles the schemas
//! with Ajv, which warns about formats it does not know. The scripts in
//! `tests/mcp_client_ts/` fail when an error result reaches the caller as
//! an SDK exception instead of `{"error", "code"}` text with `isError`, and
//! on any warning.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use clarion::{envelope, Principal, SessionState};
use serde_json::{json, Value};

use crate::support::outside::{kill_after, root, under_ci};
use crate::support::*;

dual_backend!(
    wire_4_typescript_client_on_the_answering_server,
    mcpa_5_typescript_client_on_the_asking_server
);

/// WIRE-4: alice lists, is refused (`not_found`, `validation`,
/// `no_longer_active`), answers and reads the settled list; an agent
/// without grants and a reader are denied (`capability_denied`).
fn wire_4_typescript_client_on_the_answering_server(db: &TestDb) {
    let Some(dir) = mcp_node_dir() else { return };
    let session = mirror(db, "ts", "alice");
    let pending_id = ask(db, &session, 1);
    let ended = mirror(db, "ts-ended", "alice");
    let ended_id = ask(db, &ended, 1);
    db.set_session_state(&ended, SessionState::Completed)
        .unwrap();
    let result = node(
        &dir,
        "answering.mjs",
        db,
        &[
            ("CLARION_PENDING_ID", &pending_id),
            ("CLARION_ENDED_ID", &ended_id),
        ],
    );
    assert_eq!(
        result["codes"],
        json!([
            "not_found",
            "validation",
            "validation",
            "validation",
            "no_longer_active",
            "capability_denied",
            "capability_denied",
            "capability_denied",
            "capability_denied"
        ])
    );
    let stored = db.get_bundle(&Principal::System, &pending_id).unwrap();
    assert_eq!(stored.status.as_str(), "answered");
    assert_eq!(
        envelope::response(&stored.response.unwrap()),
        result["response"]
    );
    let untouched = db.get_bundle(&Principal::System, &ended_id).unwrap();
    assert!(untouched.response.is_none(), "the ended session's stays");
}

/// MCPA-5: the agent is refused (`validation`, `not_found` for an unknown
/// bundle and for another session's), withdraws one question, receives
/// alice's answer to another, and is told `session_ended` on a session the
/// host ended.
fn mcpa_5_typescript_client_on_the_asking_server(db: &TestDb) {
    let Some(dir) = mcp_node_dir() else { return };
    let others = ask(db, &mirror(db, "ts-other", "alice"), 1);
    let ended = mirror(db, "ts-done", "alice");
    db.set_session_state(&ended, SessionState::Completed)
        .unwrap();
    let result = node(
        &dir,
        "asking.mjs",
        db,
        &[
            ("CLARION_SESSION", "s-ts-asking"),
            ("CLARION_OTHER_ID", &others),
            ("CLARION_ENDED_SESSION", &ended),
        ],
    );
    assert_eq!(
        result["codes"],
        json!([
            "validation",
            "validation",
            "not_found",
            "not_found",
            "not_found",
            "not_found",
            "session_ended"
        ])
    );
    let answered = result["answered"]["pending_id"].as_str().unwrap();
    let stored = db.get_bundle(&Principal::System, answered).unwrap();
    assert_eq!(stored.bundle.session_id, "s-ts-asking");
    assert_eq!(
        envelope::response(&stored.response.unwrap()),
        result["answered"]["response"]
    );
    let withdrawn = result["withdrawn"].as_str().unwrap();
    let withdrawn = db.get_bundle(&Principal::System, withdrawn).unwrap();
    assert_eq!(withdrawn.status.as_str(), "cancelled");
    let other = db.get_bundle(&Principal::System, &others).unwrap();
    assert_eq!(other.status.as_str(), "pending", "another session's stays");
}

/// Runs `script` of `dir` with node against `db` and this build's
/// `clarion`; it must succeed. Its last line, as JSON.
fn node(dir: &Path, script: &str, db: &TestDb, env: &[(&str, &str)]) -> Value {
    let child = Command::new("node")
        .arg(dir.join(script))
        .env("CLARION_BIN", env!("CARGO_BIN_EXE_clarion"))
        .env("CLARION_DATABASE_URL", &db.url)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    kill_after(child.id(), Duration::from_secs(120));
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script}:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// The folder of the TypeScript client, its dependencies installed
/// (`CLARION_MCP_NODE_DIR`, set by `.ci/setup`, or `npm ci` here on first
/// use); `None` (skip) only outside CI.
fn mcp_node_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(find_node_dir).clone()
}

fn find_node_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("CLARION_MCP_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/mcp_client_ts"));
    if !installed(&dir) {
        let _ = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status();
    }
    if installed(&dir) {
        Some(dir)
    } else if under_ci() {
        panic!(
            "the TypeScript MCP client (node and npm ci in {}) is not installable under CI=true",
            dir.display()
        )
    } else {
        eprintln!("skipping: the TypeScript MCP client could not be installed");
        None
    }
}

/// Whether node runs and finds the SDK from `dir`.
fn installed(dir: &Path) -> bool {
    Command::new("node")
        .args(["--input-type=module", "-e"])
        .arg("await import('@modelcontextprotocol/sdk/client/index.js')")
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success())
}
