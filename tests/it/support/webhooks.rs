//! The webhook tests' receiver (HOOK-2..4): `tests/webhooks/receiver.py`,
//! a real HTTP server on loopback that verifies every delivery with the
//! Standard Webhooks reference library and records it; and a worker on a
//! handle of its own with the real clock, whose leases, retries and
//! give-up times pass as they would in production.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use clarion::{Clarion, WebhookAdd, WebhookOptions, WebhookView};
use serde_json::{json, Value};

use crate::support::outside::{kill_after, root};
use crate::support::python::WEBHOOK_VERIFIER;
use crate::support::server::client;
use crate::support::timing::eventually;
use crate::support::TestDb;

/// How long a test waits for deliveries that should come.
pub const ARRIVES: Duration = Duration::from_secs(30);

/// The interpreter with the reference library; `None` (skip) outside CI.
pub fn verifier_python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    WEBHOOK_VERIFIER.python(&PYTHON)
}

/// A running receiver.
pub struct Receiver {
    child: Child,
    pub port: u16,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// A receiver on a free port that verifies with `secrets`.
    pub fn start(python: &PathBuf, secrets: &[&str]) -> Receiver {
        Receiver::on_port(python, 0, secrets)
    }

    /// A receiver on `port` (0: a free one).
    pub fn on_port(python: &PathBuf, port: u16, secrets: &[&str]) -> Receiver {
        let mut command = Command::new(python);
        command
            .arg(root().join("tests/webhooks/receiver.py"))
            .args(["--port", &port.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for secret in secrets {
            command.args(["--secret", secret]);
        }
        let mut child = command.spawn().expect("start the webhook receiver");
        kill_after(child.id(), Duration::from_secs(300));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim_end()
            .strip_prefix("listening on ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("not a listening line: {line:?}"));
        Receiver { child, port }
    }

    /// The URL of `path` on it.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every delivery so far, in arrival order.
    pub fn deliveries(&self) -> Vec<Value> {
        let reply = client()
            .get(self.url("/deliveries"))
            .send()
            .expect("read the receiver");
        reply.json().expect("the receiver's deliveries")
    }

    /// The deliveries once there are at least `count`.
    pub fn await_deliveries(&self, count: usize) -> Vec<Value> {
        let mut seen = Vec::new();
        eventually(ARRIVES, &format!("{count} deliveries"), || {
            seen = self.deliveries();
            seen.len() >= count
        });
        seen
    }

    /// Steers what it answers from now on: `{"status", "delay", "fail"}`.
    pub fn control(&self, steer: Value) {
        let reply = client()
            .post(self.url("/control"))
            .json(&steer)
            .send()
            .expect("steer the receiver");
        assert!(reply.status().is_success());
    }

    /// The secrets it verifies with from now on.
    pub fn verify_with(&self, secrets: &[&str]) {
        let reply = client()
            .post(self.url("/secrets"))
            .json(&json!({ "secrets": secrets }))
            .send()
            .expect("give the receiver its secrets");
        assert!(reply.status().is_success());
    }

    /// Stops it (its port is free again).
    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Options short enough for tests: a 2 s timeout, a first retry after
/// 100 ms, failing after a minute.
pub fn quick() -> WebhookOptions {
    WebhookOptions::new()
        .timeout(Duration::from_secs(2))
        .first_retry(Duration::from_millis(100))
        .give_up(Duration::from_secs(60))
}

/// Another handle on the test database with the real clock, running the
/// worker with `options`.
pub fn worker(db: &TestDb, options: WebhookOptions) -> Clarion {
    let handle = Clarion::builder(&db.url)
        .ids(db.ids.clone())
        .open()
        .expect("open the worker's handle");
    handle.start_webhooks(options).expect("start the worker");
    handle
}

/// An endpoint for `url` with these filters; its id and secret. Added
/// with `allow_private`: the receivers listen on loopback (PROD-4).
pub fn endpoint(db: &Clarion, url: &str, events: &[&str], workspace_id: &str) -> (String, String) {
    let added = db
        .webhook_add(&WebhookAdd {
            url: url.to_owned(),
            events: events.iter().map(|event| (*event).to_owned()).collect(),
            workspace_id: workspace_id.to_owned(),
            allow_private: true,
            links: false,
        })
        .expect("add the endpoint");
    (added.id, added.secret)
}

/// The endpoint as `webhook_list` shows it.
pub fn listed(db: &Clarion, id: &str) -> WebhookView {
    db.webhook_list()
        .unwrap()
        .into_iter()
        .find(|view| view.id == id)
        .unwrap_or_else(|| panic!("{id} is listed"))
}

/// Each delivery's `webhook-id`.
pub fn ids(deliveries: &[Value]) -> Vec<String> {
    deliveries
        .iter()
        .map(|delivery| delivery["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Each delivery's `(type, pending_id)`.
pub fn what(deliveries: &[Value]) -> Vec<(String, String)> {
    deliveries
        .iter()
        .map(|delivery| {
            let body = &delivery["body"];
            (
                body["type"].as_str().unwrap_or_default().to_owned(),
                body["data"]["pending_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

/// Checks every delivery verified with the receiver's first secret.
pub fn all_verified(deliveries: &[Value]) {
    for delivery in deliveries {
        assert_eq!(delivery["verified"][0], true, "not verified: {delivery}");
    }
}
