//! PROD-2 under real faults, through a real `clarion serve`: a private
//! PostgreSQL cluster (its own data directory and port) stopped and
//! started mid-run, and SQLite on a small tmpfs filled to the last byte.
//! Requests are refused at once with the outage's word, never a `500`;
//! `/readyz` answers at once; event streams say `unavailable` and resume
//! from their position; the log says the outage once each way; everything
//! recovers without a restart.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::server::*;
use crate::support::*;

/// "Within about a second", with room for a loaded machine.
const FAST: Duration = Duration::from_millis(2500);

/// The longest a recovery may take once the database is back.
const RECOVERS: Duration = Duration::from_secs(30);

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|ci| ci == "true")
}

/// Runs `command`, as the `postgres` user when this process is root (the
/// server refuses to run as root).
fn as_postgres(program: &Path) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    if root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// A PostgreSQL cluster of the test's own: `initdb` into a temporary
/// directory, started on a free loopback port, stopped on drop.
struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// None (outside CI) where the server's programs are not installed.
    fn start() -> Option<Cluster> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|versions| {
                versions
                    .filter_map(|v| v.ok().map(|v| v.path().join("bin")))
                    .filter(|bin| bin.join("initdb").exists())
                    .max()
            });
        let Some(bin) = bin else {
            assert!(
                !in_ci(),
                "CI=true: no PostgreSQL server programs under /usr/lib/postgresql"
            );
            eprintln!("skipped: no PostgreSQL server programs");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let _ = Command::new("chown")
            .args(["-R", "postgres:"])
            .arg(dir.path())
            .status();
        let initdb = as_postgres(&bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "--no-sync"])
            .output()
            .unwrap();
        assert!(initdb.status.success(), "initdb: {initdb:?}");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Cluster {
            bin,
            data,
            port,
            _dir: dir,
        };
        cluster.run_server();
        Some(cluster)
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn pg_ctl(&self, args: &[&str]) {
        let out = as_postgres(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "pg_ctl {args:?}: {out:?}");
    }

    fn run_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.data.display()
        );
        let log = self.data.join("server.log");
        self.pg_ctl(&["-w", "-o", &options, "-l", &log.to_string_lossy(), "start"]);
    }

    fn stop(&self) {
        self.pg_ctl(&["-w", "-m", "fast", "stop"]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = as_postgres(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-w", "-m", "immediate", "stop"])
            .output();
    }
}

/// The lines of `log` that contain `words`.
fn lines_with(log: &Path, words: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains(words))
        .count()
}

/// PROD-2 on PostgreSQL: the cluster stops under a serving `clarion
/// serve` with an open event stream and requests in flight, then starts
/// again.
#[cfg(feature = "postgres")]
#[test]
fn prod_2_a_postgres_outage_fails_fast_and_recovers() {
    use crate::http_events::{open_request, Frame};
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url();
    let inbox = clarion::Clarion::open(&url).unwrap();
    let token = inbox
        .add_token(&clarion::Principal::System, "")
        .unwrap()
        .token;
    let session = mirror(&inbox, "a", "alice");
    let place = tempfile::tempdir().unwrap();
    let log_path = place.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let served = serve_logged(&url, &[], &log);
    let list = || {
        send(
            client()
                .get(served.url("/api/v1/clarification"))
                .bearer_auth(&token),
        )
    };
    assert_eq!(list().status, 200);
    let stream = open_request(
        client()
            .get(served.url("/api/v1/events"))
            .bearer_auth(&token),
    );
    assert_eq!(stream.status, 200);
    let first = ask(&inbox, &session, 1);
    let asked = stream.next();
    assert_eq!(
        (asked.event(), asked.pending_id()),
        ("bundle.asked", first.clone())
    );
    let Frame::Message {
        id: Some(position), ..
    } = asked
    else {
        panic!("no position: {asked:?}");
    };

    cluster.stop();
    // Requests in flight while it goes.
    let waiting: Vec<_> = (0..4)
        .map(|_| {
            let (url, token) = (served.url("/api/v1/clarification"), token.clone());
            std::thread::spawn(move || send(client().get(url).bearer_auth(token)))
        })
        .collect();
    let started = Instant::now();
    let refused = list();
    assert_eq!(
        refused.text(),
        r#"503 {"error":"database unavailable"}"#,
        "{}",
        std::fs::read_to_string(&log_path).unwrap()
    );
    assert!(
        started.elapsed() < FAST,
        "refused after {:?}",
        started.elapsed()
    );
    let started = Instant::now();
    let ready = send(client().get(served.url("/readyz")));
    assert_eq!(ready.text(), r#"503 {"error":"database unavailable"}"#);
    assert!(
        started.elapsed() < FAST,
        "/readyz after {:?}",
        started.elapsed()
    );
    for request in waiting {
        let reply = request.join().unwrap();
        assert!(matches!(reply.status, 200 | 503), "{}", reply.text());
    }
    let last = stream.next();
    assert_eq!(last.event(), "unavailable", "{last:?}");

    cluster.run_server();
    eventually(RECOVERS, "requests succeed again", || list().status == 200);
    eventually(RECOVERS, "ready again", || {
        send(client().get(served.url("/readyz"))).status == 200
    });
    // The stream resumes from its position: the ask made while it was
    // away comes first, the one before it not again.
    let second = ask(&inbox, &session, 1);
    let resumed = open_request(
        client()
            .get(served.url("/api/v1/events"))
            .bearer_auth(&token)
            .header("Last-Event-ID", position),
    );
    assert_eq!(resumed.status, 200);
    let next = resumed.next();
    assert_eq!((next.event(), next.pending_id()), ("bundle.asked", second));
    // One line when it went, one when it came back.
    assert_eq!(lines_with(&log_path, "database unreachable"), 1);
    assert_eq!(lines_with(&log_path, "database reachable again"), 1);
    assert!(
        lines_with(&log_path, "WARN") <= 6,
        "{}",
        std::fs::read_to_string(&log_path).unwrap()
    );
    assert_eq!(
        lines_with(&log_path, "ERROR"),
        0,
        "{}",
        std::fs::read_to_string(&log_path).unwrap()
    );
}

/// A tmpfs of `size` mounted at a temporary directory, unmounted on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// None (outside CI) where this process may not mount one.
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .is_ok_and(|out| out.status.success());
        if !mounted {
            assert!(!in_ci(), "CI=true: could not mount a tmpfs (run as root)");
            eprintln!("skipped: could not mount a tmpfs");
            return None;
        }
        Some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file until the disk has no room left.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.path().join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 4096];
        while file.write_all(&block).is_ok() {}
        let _ = file.sync_all();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// PROD-2 on SQLite: with the disk full, a write is `507 {"error":
/// "database full"}` (never a `500`), reads still answer, and once there is
/// room again writes succeed without a restart.
#[test]
fn prod_2_a_full_sqlite_disk_is_507_and_recovers() {
    let Some(disk) = SmallDisk::mount("8m") else {
        return;
    };
    let url = format!("sqlite://{}", disk.path().join("clarion.db").display());
    let inbox = clarion::Clarion::open(&url).unwrap();
    let token = inbox
        .add_token(&clarion::Principal::System, "")
        .unwrap()
        .token;
    let session = mirror(&inbox, "a", "alice");
    let served = serve(&url, &[]);
    let request = serde_json::json!({
        "session_id": session,
        "context": "x".repeat(4000),
        "questions": [{"title": "T", "prompt": "p".repeat(4000),
                       "options": [{"label": "Yes", "description": "Go on"}, {"label": "No", "description": "Stop"}]}],
    })
    .to_string();
    let ask = || {
        send(
            client()
                .post(served.url("/api/v1/clarification/request"))
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(request.clone()),
        )
    };
    let first = ask();
    assert_eq!(first.status, 200, "{}", first.text());
    let filler = disk.fill();
    // Pages already allocated may still take a write or two.
    let mut full = None;
    for _ in 0..200 {
        let reply = ask();
        assert!(matches!(reply.status, 200 | 507), "{}", reply.text());
        if reply.status == 507 {
            full = Some(reply);
            break;
        }
    }
    let full = full.expect("a write refused as full within 200 asks");
    assert_eq!(full.text(), r#"507 {"error":"database full"}"#);
    let listed = send(
        client()
            .get(served.url("/api/v1/clarification"))
            .bearer_auth(&token),
    );
    assert_eq!(listed.status, 200, "{}", listed.text());
    std::fs::remove_file(filler).unwrap();
    eventually(RECOVERS, "writes succeed again", || ask().status == 200);
}
