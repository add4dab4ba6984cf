//! What the benchmark programs share: settings from the environment,
//! medians and percentiles, scratch databases, a progress bar, the two
//! bundle shapes they ask and answer, hand-written SQL for the floors, and
//! the peak-memory report.

#![allow(dead_code)]

#[cfg(feature = "test-hooks")]
pub mod floors;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use clarion::{AnswerInput, AskRequest, OptionSpec, QuestionSpec, ResolveRequest};

/// An unsigned setting from the environment, or its default.
pub fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// How many runs each figure is the median of (`CLARION_BENCH_RUNS`).
pub fn runs(default: usize) -> usize {
    setting("CLARION_BENCH_RUNS", default).max(1)
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The `p` quantile (0..=1) of samples sorted ascending.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A fresh database for one benchmark, removed on drop.
pub struct Scratch {
    pub url: String,
    cleanup: Option<Box<dyn FnOnce()>>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(cleanup) = self.cleanup.take() {
            cleanup();
        }
    }
}

pub fn sqlite(name: &str) -> Scratch {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!(
        "sqlite://{}",
        dir.path().join(format!("{name}.db")).display()
    );
    Scratch {
        url,
        cleanup: Some(Box::new(move || drop(dir))),
    }
}

/// A fresh schema on `CLARION_TEST_DATABASE_URL` (default the local test
/// server); with `CLARION_BENCH_KEEP=1` it is left behind (its name
/// printed) for reading plans afterwards.
#[cfg(feature = "postgres")]
pub fn postgres(name: &str) -> Scratch {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let base = std::env::var("CLARION_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let schema = format!("clarion_bench_{name}_{}", std::process::id());
    let mut admin = diesel::PgConnection::establish(&base).expect("PostgreSQL for the benchmark");
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .unwrap();
    let separator = if base.contains('?') { '&' } else { '?' };
    let mut url = format!("{base}{separator}options=-c%20search_path%3D{schema}");
    // PROD-1: `CLARION_BENCH_POOLED=1` measures pooler mode's cost on the
    // server itself: no named prepared statements, no session settings.
    if std::env::var("CLARION_BENCH_POOLED").is_ok_and(|pooled| pooled == "1") {
        url.push_str("&pooler=transaction");
    }
    if std::env::var("CLARION_BENCH_KEEP").is_ok_and(|keep| keep == "1") {
        eprintln!("keeping schema {schema}");
        return Scratch { url, cleanup: None };
    }
    Scratch {
        url,
        cleanup: Some(Box::new(move || {
            let _ = admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        })),
    }
}

/// How to make a scratch database on one backend.
pub type Place = fn(&str) -> Scratch;

/// Every backend this build can measure, by name; `CLARION_BENCH_BACKEND`
/// (`sqlite` or `postgresql`) keeps only one.
pub fn backends() -> Vec<(&'static str, Place)> {
    let only = std::env::var("CLARION_BENCH_BACKEND").ok();
    let chosen: Vec<(&'static str, Place)> = all_backends()
        .into_iter()
        .filter(|(name, _)| only.as_deref().is_none_or(|o| name.eq_ignore_ascii_case(o)))
        .collect();
    if chosen.is_empty() {
        let known: Vec<&str> = all_backends().iter().map(|(name, _)| *name).collect();
        eprintln!(
            "CLARION_BENCH_BACKEND={:?} names no backend of this build; known: {}",
            only.unwrap_or_default(),
            known.join(", ")
        );
        std::process::exit(2);
    }
    chosen
}

fn all_backends() -> Vec<(&'static str, Place)> {
    #[allow(unused_mut)]
    let mut list: Vec<(&'static str, Place)> = vec![("SQLite", sqlite)];
    #[cfg(feature = "postgres")]
    list.push(("PostgreSQL", postgres));
    list
}

/// A progress bar on stderr, redrawn at most ten times a second.
pub struct Progress {
    label: String,
    total: u64,
    done: u64,
    started: Instant,
    drawn: Instant,
}

impl Progress {
    pub fn new(label: impl Into<String>, total: u64) -> Progress {
        let now = Instant::now();
        let progress = Progress {
            label: label.into(),
            total: total.max(1),
            done: 0,
            started: now,
            drawn: now,
        };
        progress.draw();
        progress
    }

    pub fn inc(&mut self) {
        self.done += 1;
        if self.drawn.elapsed() >= Duration::from_millis(100) {
            self.draw();
            self.drawn = Instant::now();
        }
    }

    fn draw(&self) {
        const WIDTH: u64 = 30;
        let filled = (WIDTH * self.done / self.total) as usize;
        eprint!(
            "\r{} [{}{}] {}/{} {:.1?}  ",
            self.label,
            "#".repeat(filled),
            "-".repeat(WIDTH as usize - filled),
            self.done,
            self.total,
            self.started.elapsed()
        );
        let _ = std::io::stderr().flush();
    }

    pub fn finish(self) {
        self.draw();
        eprintln!();
    }
}

/// Runs `work`, which cannot report its own progress (one big statement),
/// with a ticking spinner and the elapsed time on stderr.
pub fn with_spinner<T>(label: &str, work: impl FnOnce() -> T) -> T {
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let (value, took) = std::thread::scope(|scope| {
        scope.spawn(|| {
            for frame in ['|', '/', '-', '\\'].iter().cycle() {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                eprint!("\r{label} {frame} {:.0?}  ", started.elapsed());
                let _ = std::io::stderr().flush();
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        let value = work();
        let took = started.elapsed();
        done.store(true, Ordering::Relaxed);
        (value, took)
    });
    eprintln!("\r{label}: done in {took:.1?}   ");
    value
}

/// The bundle the write benchmarks ask: two questions of two options each.
pub fn two_questions(session: &str) -> AskRequest {
    let options = || {
        vec![
            OptionSpec {
                option_id: None,
                label: "Yes".into(),
                description: "Go on".into(),
            },
            OptionSpec {
                option_id: None,
                label: "No".into(),
                description: "Stop".into(),
            },
        ]
    };
    let question = |title: &str, prompt: &str| QuestionSpec {
        question_id: None,
        title: title.into(),
        prompt: prompt.into(),
        multi_select: None,
        options: options(),
    };
    AskRequest {
        session_id: session.into(),
        questions: vec![question("A", "First?"), question("B", "Second?")],
        ..AskRequest::default()
    }
}

/// The answers to [`two_questions`].
pub fn two_answers() -> ResolveRequest {
    ResolveRequest {
        answers: vec![
            AnswerInput {
                question_id: "q1".into(),
                selected_options: vec!["q1_opt1".into()],
                custom_text: "ok".into(),
            },
            AnswerInput {
                question_id: "q2".into(),
                selected_options: vec!["q2_opt2".into()],
                custom_text: String::new(),
            },
        ],
        ..ResolveRequest::default()
    }
}

/// The stored answers of [`two_answers`], as clarion writes them.
pub const ANSWER_Q1: &str =
    r#"{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"ok"}"#;
pub const ANSWER_Q2: &str =
    r#"{"question_id":"q2","selected_options":["q2_opt2"],"custom_text":""}"#;

/// A bound value of a [`Raw`] statement.
pub enum Value<'a> {
    Int(i64),
    Text(&'a str),
}

/// Hand-written SQL with `?` placeholders and its bound values. Unlike
/// `diesel::sql_query`, it stays in diesel's prepared-statement cache (keyed
/// by its text), as clarion's own queries do, so a floor pays neither a
/// parse nor a fresh plan per call; each backend numbers the placeholders
/// its own way.
pub struct Raw<'a> {
    sql: &'a str,
    values: Vec<Value<'a>>,
}

impl<'a> Raw<'a> {
    pub fn new(sql: &'a str) -> Raw<'a> {
        Raw {
            sql,
            values: Vec::new(),
        }
    }

    pub fn int(mut self, value: i64) -> Raw<'a> {
        self.values.push(Value::Int(value));
        self
    }

    pub fn text(mut self, value: &'a str) -> Raw<'a> {
        self.values.push(Value::Text(value));
        self
    }

    /// The statement with its values written in as SQL literals, for a
    /// batch sent in one round trip.
    pub fn literal(&self) -> String {
        let mut parts = self.sql.split('?');
        let mut text = parts.next().unwrap_or_default().to_owned();
        for (part, value) in parts.zip(&self.values) {
            match value {
                Value::Int(v) => text.push_str(&v.to_string()),
                Value::Text(v) => text.push_str(&format!("'{}'", v.replace('\'', "''"))),
            }
            text.push_str(part);
        }
        text
    }
}

impl<DB> diesel::query_builder::QueryFragment<DB> for Raw<'_>
where
    DB: diesel::backend::Backend
        + diesel::sql_types::HasSqlType<diesel::sql_types::BigInt>
        + diesel::sql_types::HasSqlType<diesel::sql_types::Text>,
    i64: diesel::serialize::ToSql<diesel::sql_types::BigInt, DB>,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        let mut parts = self.sql.split('?');
        assert_eq!(
            self.sql.matches('?').count(),
            self.values.len(),
            "one value per placeholder"
        );
        out.push_sql(parts.next().unwrap_or_default());
        for (part, value) in parts.zip(&self.values) {
            match value {
                Value::Int(v) => out.push_bind_param::<diesel::sql_types::BigInt, _>(v)?,
                Value::Text(v) => out.push_bind_param::<diesel::sql_types::Text, str>(*v)?,
            }
            out.push_sql(part);
        }
        Ok(())
    }
}

impl diesel::query_builder::QueryId for Raw<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl diesel::query_builder::Query for Raw<'_> {
    type SqlType = diesel::sql_types::Untyped;
}

impl<C> diesel::RunQueryDsl<C> for Raw<'_> {}

/// OPS-2: the process's peak resident memory, printed at the end of each
/// program.
pub fn print_peak_memory() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    match status.lines().find(|line| line.starts_with("VmHWM:")) {
        Some(line) => {
            let kib: f64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0);
            println!("\npeak memory (VmHWM): {:.1} MiB", kib / 1024.0);
        }
        None => println!("\npeak memory: /proc/self/status has no VmHWM"),
    }
}

/// The benchmark program re-run as a helper process (another process
/// writing to the same database): started with `role` set to the database
/// URL in its environment, it answers one line on stdout for each line it
/// reads on stdin. Killed when dropped.
pub struct Helper {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: std::io::BufReader<std::process::ChildStdout>,
}

impl Helper {
    pub fn start(role: &str, url: &str) -> Helper {
        use std::process::{Command, Stdio};
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(role, url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let to = child.stdin.take().unwrap();
        let from = std::io::BufReader::new(child.stdout.take().unwrap());
        Helper { child, to, from }
    }

    /// Sends `line` and returns the helper's one-line reply.
    pub fn request(&mut self, line: &str) -> String {
        use std::io::BufRead;
        writeln!(self.to, "{line}").unwrap();
        self.to.flush().unwrap();
        let mut reply = String::new();
        self.from.read_line(&mut reply).unwrap();
        reply.trim().to_owned()
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A small deterministic generator for random pauses (xorshift), so a
/// writer is not in step with any watcher tick.
pub struct Jitter(pub u64);

impl Jitter {
    /// A pause below `bound`.
    pub fn below(&mut self, bound: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Duration::from_micros(self.0 % (bound.as_micros().max(1) as u64))
    }
}

/// How long `work` took, and what it returned.
pub fn timed<T>(work: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let value = work();
    (started.elapsed(), value)
}

/// `n` operations in `took`, per second.
pub fn per_second(took: Duration, n: usize) -> f64 {
    n as f64 / took.as_secs_f64()
}

/// AUD-5: the floor hashes what it submits too.
pub fn digest_of(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The median of some figures (the upper one of an even count).
pub fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

// Racing many callers over the same bundles (OPS-4, QUO-4): each bundle
// has exactly one winner; the figures are settled bundles per second and
// every call's latency.

/// One contended run's figures.
pub struct Contended {
    pub settled_per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
}

/// What racing over some bundles took: the wall time with racers
/// released, how many bundles, and every call's latency.
#[derive(Default)]
pub struct Raced {
    busy: Duration,
    bundles: usize,
    latencies: Vec<Duration>,
}

impl Raced {
    pub fn add(&mut self, other: Raced) {
        self.busy += other.busy;
        self.bundles += other.bundles;
        self.latencies.extend(other.latencies);
    }

    pub fn figures(mut self) -> Contended {
        self.latencies.sort();
        Contended {
            settled_per_second: self.bundles as f64 / self.busy.as_secs_f64(),
            p50: percentile(&self.latencies, 0.5),
            p99: percentile(&self.latencies, 0.99),
        }
    }
}

/// The bundles under contention and what the racers record.
pub struct Race<'a> {
    ids: &'a [String],
    start: Barrier,
    end: Barrier,
    latencies: Mutex<Vec<Duration>>,
    wins: Mutex<Vec<usize>>,
}

impl Race<'_> {
    /// One racer: on each bundle, waits for the others, then claims.
    pub fn run(&self, mut claim: impl FnMut(&str) -> bool) {
        let mut mine = Vec::with_capacity(self.ids.len());
        for (round, id) in self.ids.iter().enumerate() {
            self.start.wait();
            let (took, won) = timed(|| claim(id));
            mine.push(took);
            if won {
                self.wins.lock().unwrap()[round] += 1;
            }
            self.end.wait();
        }
        self.latencies.lock().unwrap().extend(mine);
    }
}

/// `racers` threads run `racer` (given the race and the racer's number),
/// which calls [`Race::run`]; on each bundle they are released together
/// and the round ends when the last returns. Exactly one call per bundle
/// must win.
pub fn contend(ids: &[String], racers: usize, racer: impl Fn(&Race, usize) + Sync) -> Raced {
    let race = Race {
        ids,
        start: Barrier::new(racers + 1),
        end: Barrier::new(racers + 1),
        latencies: Mutex::new(Vec::with_capacity(ids.len() * racers)),
        wins: Mutex::new(vec![0; ids.len()]),
    };
    let mut busy = Duration::ZERO;
    std::thread::scope(|scope| {
        for n in 0..racers {
            let (race, racer) = (&race, &racer);
            scope.spawn(move || racer(race, n));
        }
        for _ in ids {
            race.start.wait();
            let released = Instant::now();
            race.end.wait();
            busy += released.elapsed();
        }
    });
    assert!(
        race.wins.into_inner().unwrap().iter().all(|&w| w == 1),
        "each contested bundle must have exactly one winner"
    );
    Raced {
        busy,
        bundles: ids.len(),
        latencies: race.latencies.into_inner().unwrap(),
    }
}
