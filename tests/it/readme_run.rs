//! OPS-5, OPS-6: the README's blocks are run as written. The newcomer path
//! ("Start here") and the REST section mark their blocks with
//! `<!-- run: NAME -->` on the line before the fence; this test extracts
//! them by those markers and runs each with `bash -euo pipefail -c`
//! against a real `clarion serve` from the build under test (first on
//! `PATH`), on both backends through `CLARION_DATABASE_URL`, in a fresh
//! directory. The install block is not run. The one change made to a
//! block is the address `127.0.0.1:7878`, replaced by a free loopback port
//! that the server gets through `CLARION_LISTEN`. The newcomer path's
//! browser step is done by headless Chromium on the page.
//!
//! Every block runs in a process group of its own. The servers, which run
//! until `Ctrl`+`C`, are stopped as a terminal stops them (SIGINT to the
//! group) and must exit 0. Every group is killed when its test ends,
//! whatever happened, and a safety net kills it should the test hang.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use clarion::Principal;
use serde_json::Value;

use crate::support::browser::browser;
use crate::support::server::client;
use crate::support::*;

/// The address the README's blocks name.
const README_ADDRESS: &str = "127.0.0.1:7878";
/// How long `clarion ask … --wait` may take, from its start to its exit,
/// with the browser answering in between.
const ASK_BOUND: Duration = Duration::from_secs(60);
/// How long the REST walk-through may take.
const WALK_BOUND: Duration = Duration::from_secs(30);
/// How long a server or a stream may take to be ready, or to stop.
const READY_BOUND: Duration = Duration::from_secs(30);
/// The safety net: no block lives longer than this.
const LIFETIME: Duration = Duration::from_secs(300);

pub fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

/// The `sh` block whose fence follows the marker `<!-- run: NAME -->`.
fn block(readme: &str, name: &str) -> String {
    fenced(readme, name, "sh")
}

/// The `language` block whose fence follows the marker `<!-- run: NAME -->`.
pub fn fenced(readme: &str, name: &str, language: &str) -> String {
    let marker = format!("<!-- run: {name} -->");
    let found: Vec<_> = readme.match_indices(&marker).collect();
    assert_eq!(found.len(), 1, "the document has {marker} once");
    let mut lines = readme[found[0].0 + marker.len()..]
        .lines()
        .skip(1)
        .skip_while(|line| line.trim().is_empty());
    let fence = format!("```{language}");
    assert_eq!(
        lines.next(),
        Some(fence.as_str()),
        "a {fence} fence follows {marker}"
    );
    let mut text = String::new();
    for line in lines.by_ref() {
        if line == "```" {
            return text;
        }
        text.push_str(line);
        text.push('\n');
    }
    panic!("the block after {marker} never ends");
}

/// A free loopback port, for the server to take through `CLARION_LISTEN`.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind loopback")
        .local_addr()
        .unwrap()
        .port()
}

/// Where the README's blocks run: a fresh directory, the build under test
/// first on `PATH`, the test's database and a free port.
struct Place {
    dir: tempfile::TempDir,
    url: String,
    listen: String,
}

impl Place {
    fn new(db: &TestDb) -> Place {
        Place {
            dir: tempfile::tempdir().expect("a directory for the blocks"),
            url: db.url.clone(),
            listen: format!("127.0.0.1:{}", free_port()),
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.listen)
    }

    /// Starts the README's block `name` as written but for the address.
    fn run(&self, readme: &str, name: &str) -> Run {
        let script = block(readme, name).replace(README_ADDRESS, &self.listen);
        let bin = Path::new(env!("CARGO_BIN_EXE_clarion"))
            .parent()
            .expect("the binary's directory")
            .to_owned();
        let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .expect("a PATH");
        let out = self.dir.path().join(format!("{name}.out"));
        let err = self.dir.path().join(format!("{name}.err"));
        let child = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script])
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("CLARION_DATABASE_URL", &self.url)
            .env("CLARION_LISTEN", &self.listen)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("the block's stdout"))
            .stderr(std::fs::File::create(&err).expect("the block's stderr"))
            .process_group(0)
            .spawn()
            .expect("start bash");
        // The safety net: the group is killed after LIFETIME unless the
        // run is dropped first (which drops the sender and ends the wait).
        let (disarm, disarmed) = mpsc::channel::<()>();
        let group = child.id();
        std::thread::spawn(move || {
            if disarmed.recv_timeout(LIFETIME) == Err(RecvTimeoutError::Timeout) {
                signal_group(group, "KILL");
            }
        });
        Run {
            name: name.to_owned(),
            child,
            out,
            err,
            started: Instant::now(),
            _disarm: disarm,
        }
    }
}

/// Sends `signal` to the process group `group`.
fn signal_group(group: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
}

/// A README block running in a process group of its own.
struct Run {
    name: String,
    child: Child,
    out: PathBuf,
    err: PathBuf,
    started: Instant,
    /// Dropped with the run: the safety net stands down.
    _disarm: mpsc::Sender<()>,
}

impl Drop for Run {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            signal_group(self.child.id(), "KILL");
            let _ = self.child.wait();
        }
        // Whatever the block started in its group goes too.
        signal_group(self.child.id(), "KILL");
    }
}

impl Run {
    fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// What the block printed, for a failure's message.
    fn printed(&self) -> String {
        format!(
            "block {} printed:\n{}\nand on stderr:\n{}",
            self.name,
            self.stdout(),
            self.stderr()
        )
    }

    /// Polls the block's stdout until `done` holds, within `limit`; fails
    /// if the block ends first.
    fn wait_for(&mut self, what: &str, limit: Duration, done: impl Fn(&str) -> bool) -> String {
        let mut ended = None;
        let seen = within(limit, || {
            if done(&self.stdout()) {
                return true;
            }
            ended = self.child.try_wait().expect("the block's status");
            ended.is_some()
        });
        // It may have printed the last of it as it ended.
        let stdout = self.stdout();
        if let Some(status) = ended.filter(|_| !done(&stdout)) {
            panic!(
                "{what}: the block ended ({status}) first; {}",
                self.printed()
            );
        }
        assert!(seen, "{what}: not within {limit:?}; {}", self.printed());
        stdout
    }

    /// Waits until the block ends, at most `bound` after it started.
    fn finish(&mut self, bound: Duration) -> ExitStatus {
        let left = bound.saturating_sub(self.started.elapsed());
        let status = self.end_within(left);
        let took = self.started.elapsed();
        let status = status.unwrap_or_else(|| {
            panic!(
                "block {} did not end within {bound:?}; {}",
                self.name,
                self.printed()
            )
        });
        assert!(
            took <= bound,
            "block {} took {took:?}, more than {bound:?}",
            self.name
        );
        status
    }

    /// The block's exit status once it ends, if within `limit`.
    fn end_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let mut status = None;
        within(limit, || {
            status = self.child.try_wait().expect("the block's status");
            status.is_some()
        });
        status
    }

    /// `Ctrl`+`C`: SIGINT to the block's group, then its end within
    /// `limit`.
    fn interrupt(&mut self, limit: Duration) -> ExitStatus {
        signal_group(self.child.id(), "INT");
        self.end_within(limit).unwrap_or_else(|| {
            panic!(
                "block {} did not stop within {limit:?} of Ctrl+C; {}",
                self.name,
                self.printed()
            )
        })
    }
}

/// Starts a server block and waits until it listens where it was told
/// and answers `/healthz`.
fn start_server(place: &Place, readme: &str, name: &str) -> Run {
    let mut server = place.run(readme, name);
    let listening = format!("listening on {}", place.base());
    server.wait_for(
        &format!("{name} to say {listening:?}"),
        READY_BOUND,
        |out| out.lines().any(|line| line.trim_end() == listening),
    );
    let healthz = format!("{}/healthz", place.base());
    eventually(READY_BOUND, "the server to answer /healthz", || {
        client()
            .get(&healthz)
            .send()
            .is_ok_and(|reply| reply.status().is_success())
    });
    server
}

dual_backend!(ops_6_the_newcomer_path_runs, ops_6_the_rest_section_runs);

/// "Start here": serve, open the page, ask from a second terminal, answer
/// in the browser, and see the answer arrive.
fn ops_6_the_newcomer_path_runs(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let readme = readme();
    let place = Place::new(db);
    let mut server = start_server(&place, &readme, "start-serve");
    browser.goto(&format!("{}/", place.base()));
    browser.wait_visible("#inbox");

    let mut ask = place.run(&readme, "start-ask");
    let printed = ask.wait_for("the ask to print its ids", ASK_BOUND, |out| {
        out.contains("production")
    });
    let pending_id = printed
        .split_whitespace()
        .next()
        .expect("the pending_id first")
        .to_owned();
    let detail = db
        .get_bundle(&Principal::System, &pending_id)
        .unwrap_or_else(|error| panic!("{pending_id:?} is no bundle: {error}; {printed}"));
    assert_eq!(
        detail.bundle.questions[0].question_id, "target",
        "{printed}"
    );
    let lines: Vec<&str> = printed.lines().collect();
    assert!(
        lines.iter().any(|line| line.contains("target")),
        "the question's id: {printed}"
    );
    for (id, label) in [("staging", "Staging"), ("production", "Production")] {
        assert!(
            lines
                .iter()
                .any(|line| line.split_whitespace().eq([id, label])),
            "the option {id} with its label: {printed}"
        );
    }

    let card = format!("#bundles button.bundle[data-id='{pending_id}']");
    browser.wait_visible(&card);
    // The inbox names the task and the workspace, as the README's picture.
    let shown = browser.text(&card);
    assert!(
        shown.contains("Release 4.2") && shown.contains("My projects"),
        "the card names the task and the workspace: {shown:?}"
    );
    browser.click(&card);
    let staging = "#questions input.choice[value='staging']";
    browser.wait_visible(staging);
    browser.click(staging);
    browser.click("#submit");

    let status = ask.finish(ASK_BOUND);
    let printed = ask.stdout();
    assert!(status.success(), "the ask exits 0: {}", ask.printed());
    let arrived = printed
        .lines()
        .skip_while(|line| !line.contains("production"))
        .find(|line| line.starts_with("answered"))
        .unwrap_or_else(|| panic!("the answer arriving: {printed}"));
    assert!(arrived.contains("Staging"), "{arrived}");
    let detail = db.get_bundle(&Principal::System, &pending_id).unwrap();
    let response = detail.response.expect("a response");
    assert_eq!(response.answers[0].selected_options, ["staging"]);

    drop(browser);
    let stopped = server.interrupt(READY_BOUND);
    assert!(
        stopped.success(),
        "Ctrl+C stops the server cleanly: {stopped}"
    );
}

/// "REST": the server, the live events, and the walk-through that runs
/// whole when pasted.
fn ops_6_the_rest_section_runs(db: &TestDb) {
    let readme = readme();
    let place = Place::new(db);
    let mut server = start_server(&place, &readme, "rest-serve");
    for token in ["system.token", "alice.token"] {
        let text = std::fs::read_to_string(place.dir.path().join(token)).unwrap_or_default();
        assert!(
            text.trim().len() >= 32 && !text.trim().contains(char::is_whitespace),
            "{token} holds one token: {text:?}"
        );
    }

    let mut events = place.run(&readme, "rest-events");
    // The stream follows the log from its head as it was when the stream
    // opened, which the server's metrics tell (its first bytes may wait
    // for the first event or keep-alive).
    let system = std::fs::read_to_string(place.dir.path().join("system.token")).unwrap();
    eventually(READY_BOUND, "the event stream to open", || {
        open_streams(&place, system.trim()) >= 1.0
    });

    let mut walk = place.run(&readme, "rest-walk-through");
    let status = walk.finish(WALK_BOUND);
    assert!(status.success(), "the walk-through: {}", walk.printed());
    let printed = walk.stdout();
    let replies: Vec<Value> = printed
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let body = line
                .strip_suffix(" (HTTP 200)")
                .unwrap_or_else(|| panic!("every reply is a 200: {line}\n{printed}"));
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
        })
        .collect();
    assert_eq!(replies.len(), 8, "eight replies: {printed}");
    for mirrored in &replies[..3] {
        assert_eq!(mirrored, &serde_json::json!({"ok": true}), "{printed}");
    }
    assert_eq!(replies[3]["created"], true, "{printed}");
    let pending_id = replies[3]["pending_id"]
        .as_str()
        .expect("the ask's pending_id")
        .to_owned();
    let listed = &replies[4]["bundles"][0];
    assert_eq!(listed["pending_id"], pending_id.as_str(), "{printed}");
    assert_eq!(listed["workspace_name"], "Shop", "{printed}");
    assert_eq!(listed["task_title"], "New checkout", "{printed}");
    let question = &listed["questions"][0];
    assert_eq!(question["question_id"], "provider", "{printed}");
    assert_eq!(question["multi_select"], false, "{printed}");
    assert_eq!(question["options"][0]["option_id"], "stripe", "{printed}");
    assert_eq!(question["options"][1]["option_id"], "adyen", "{printed}");
    let (won, lost) = (&replies[5], &replies[6]);
    assert_eq!(won["claimed"], true, "{printed}");
    assert_eq!(lost["claimed"], false, "{printed}");
    for reply in [won, lost] {
        assert_eq!(reply["status"], "answered", "{printed}");
        assert_eq!(
            reply["response"]["answers"][0]["selected_options"],
            serde_json::json!(["stripe"]),
            "the winner's answer, to the loser too: {printed}"
        );
    }
    let history = &replies[7]["bundles"][0];
    assert_eq!(history["pending_id"], pending_id.as_str(), "{printed}");
    assert_eq!(history["decided_by_caller"], true, "{printed}");

    let stream = events.wait_for(
        "the walk-through's bundle.resolved on the event stream",
        READY_BOUND,
        |out| {
            sse_events(out)
                .iter()
                .any(|(kind, data)| kind == "bundle.resolved" && data["pending_id"] == *pending_id)
        },
    );
    let ours: Vec<String> = sse_events(&stream)
        .into_iter()
        .filter(|(_, data)| data["pending_id"] == *pending_id)
        .map(|(kind, _)| kind)
        .collect();
    assert_eq!(ours, ["bundle.asked", "bundle.resolved"], "{stream}");

    // Its `curl` may ignore SIGINT (a suite started in the background
    // passes that on), so it ends as the test ends.
    drop(events);
    let stopped = server.interrupt(READY_BOUND);
    assert!(
        stopped.success(),
        "Ctrl+C stops the server cleanly: {stopped}"
    );
}

/// How many event streams the server serves now, from `/metrics`.
fn open_streams(place: &Place, system: &str) -> f64 {
    let Ok(reply) = client()
        .get(format!("{}/metrics", place.base()))
        .bearer_auth(system)
        .send()
    else {
        return 0.0;
    };
    let text = reply.text().unwrap_or_default();
    text.lines()
        .find_map(|line| line.strip_prefix("clarion_event_streams "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0.0)
}

/// The `(event, data)` pairs of a Server-Sent Events text.
fn sse_events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|message| {
            let field = |name: &str| {
                message
                    .lines()
                    .find_map(|line| line.strip_prefix(name).map(str::trim))
            };
            let kind = field("event:")?;
            let data = serde_json::from_str(field("data:")?).ok()?;
            Some((kind.to_owned(), data))
        })
        .collect()
}

/// The README stays short, links what it moved out, and its prose cites no
/// requirement id: rules are linked to their section of docs/rules.md.
#[test]
fn ops_5_the_readme_is_short_and_cites_no_requirement_id() {
    let readme = readme();
    let lines = readme.lines().count();
    assert!(lines < 400, "README.md has {lines} lines, not under 400");

    let rules = std::fs::read_to_string(root().join("docs/rules.md")).expect("docs/rules.md");
    let prefixes: BTreeSet<&str> = rules
        .lines()
        .filter_map(|line| line.strip_prefix("- **"))
        .filter_map(|entry| entry.split_once('-').map(|(prefix, _)| prefix))
        .filter(|prefix| prefix.chars().all(|c| c.is_ascii_uppercase()))
        .collect();
    assert!(prefixes.contains("OPS"), "{prefixes:?}");
    let cited: Vec<String> = prose(&readme)
        .lines()
        .flat_map(|line| requirement_ids(line, &prefixes))
        .collect();
    assert!(cited.is_empty(), "README prose cites {cited:?}");

    for target in link_targets(&readme) {
        if target.starts_with("http") || target.starts_with('#') {
            continue;
        }
        let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let file = root().join(path);
        assert!(file.exists(), "README links to {target}, which is missing");
        if !anchor.is_empty() {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                text.lines()
                    .filter_map(|line| line.strip_prefix('#'))
                    .any(|heading| slug(heading.trim_start_matches('#')) == anchor),
                "README links to {target}: no such heading"
            );
        }
    }
    for image in ["docs/inbox.png", "docs/inbox-answer-360.png"] {
        assert!(readme.contains(&format!("]({image})")), "{image}");
    }
    for name in [
        "start-serve",
        "start-ask",
        "rest-serve",
        "rest-events",
        "rest-walk-through",
    ] {
        let script = block(&readme, name);
        assert!(
            !script.contains("--listen"),
            "{name}: the server takes its address from CLARION_LISTEN"
        );
        assert!(!script.contains('…'), "{name} holds no placeholder");
    }
}

/// The README without its fenced blocks, HTML comments and link targets.
fn prose(readme: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("<!--") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            out.push_str(&rest[..at]);
            rest = rest[at..].split_once(')').map_or("", |(_, after)| after);
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// Words like `LIST-4`, `OPS-3a` or `LIFE-*` whose prefix is a rule's.
fn requirement_ids(line: &str, prefixes: &BTreeSet<&str>) -> Vec<String> {
    let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '*'));
    words
        .filter(|word| {
            word.split_once('-').is_some_and(|(prefix, number)| {
                prefixes.contains(prefix)
                    && (number.starts_with(|c: char| c.is_ascii_digit()) || number == "*")
            })
        })
        .map(str::to_owned)
        .collect()
}

/// The targets of the README's links and images.
fn link_targets(readme: &str) -> Vec<String> {
    readme
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.to_owned()))
        .collect()
}

/// GitHub's anchor for a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}
