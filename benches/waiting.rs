//! OPS-2 wake-up benchmark (a program, not a timed test):
//!
//!     cargo bench --bench waiting                      # SQLite
//!     cargo bench --bench waiting --features postgres  # SQLite and PostgreSQL
//!
//! In-process: a thread waits on a bundle; the time from the start of
//! `resolve_bundle` on another thread to the waiter holding the answer (p50,
//! p99), beside the duration of the resolve call itself.
//!
//! Cross-process (WAIT-3a, OPS-4): the answer comes from another OS process
//! (this program re-run as an answerer), told which bundle to answer after
//! a random delay, so the answer is not phase-locked to the watcher's tick;
//! the figure is the time from the start of the answerer's resolve call to
//! the waiter holding the answer (wall clock, one machine), printed per run.
//! The old way is beside it (`clarion answer` processes, from the exit of
//! the process).
//!
//! Many waiters (OPS-4): 1,000 agents wait on one handle; the watcher's
//! checks and statements per tick while idle, then the wake-up latency of
//! one of them answered by the other process while the rest wait on.
//!
//! Each summary figure is the median over several runs of that run's
//! percentile.
//!
//! Environment: CLARION_BENCH_ROUNDS (default 200 in-process, at most 40
//! across processes, per run), CLARION_BENCH_RUNS (default 3),
//! CLARION_BENCH_WAITERS (default 1000), CLARION_TEST_DATABASE_URL.

use std::io::{BufRead, Write};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod common;

use common::{median, ms, percentile, two_answers, two_questions};

use clarion::{Clarion, Principal, SessionUpsert, Synchronous, TaskUpsert, WorkspaceUpsert};

/// Set in the answerer child to the database URL.
const ANSWERER: &str = "CLARION_BENCH_ANSWERER";

/// A two-question bundle on session `s` (the write benchmarks' bundle).
fn ask(clarion: &Clarion) -> String {
    clarion.ask(&two_questions("s")).unwrap().pending_id
}

fn setup(url: &str) -> Clarion {
    let clarion = Clarion::open(url).unwrap();
    clarion
        .upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
        .unwrap();
    clarion
        .upsert_task(TaskUpsert::new("t").workspace("w"))
        .unwrap();
    clarion
        .upsert_session(SessionUpsert::new("s", "t"))
        .unwrap();
    clarion
}

/// One in-process run: the wake-up p50 and p99 and the resolve call's p50.
fn in_process(clarion: &Clarion, rounds: usize) -> [Duration; 3] {
    let (mut wake, mut resolve) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let pending_id = ask(clarion);
        let waiter = {
            let clarion = clarion.clone();
            let pending_id = pending_id.clone();
            std::thread::spawn(move || {
                let outcome = clarion.wait(&pending_id, Duration::from_secs(30)).unwrap();
                (Instant::now(), outcome)
            })
        };
        std::thread::sleep(Duration::from_millis(3)); // let the waiter block
        let started = Instant::now();
        clarion
            .resolve_bundle(&Principal::user("alice"), &pending_id, &two_answers())
            .unwrap();
        resolve.push(started.elapsed());
        let (woke, _) = waiter.join().unwrap();
        wake.push(woke.duration_since(started));
    }
    wake.sort();
    resolve.sort();
    [
        percentile(&wake, 0.5),
        percentile(&wake, 0.99),
        percentile(&resolve, 0.5),
    ]
}

/// Wall-clock microseconds: comparable between two processes on one
/// machine.
fn wall_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// The answerer: reads pending ids on stdin, answers each, and prints the
/// wall-clock time its resolve call started.
fn answerer(url: &str) {
    let clarion = Clarion::open(url).unwrap();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let pending_id = line.unwrap();
        let started = wall_micros();
        clarion
            .resolve_bundle(&Principal::user("alice"), pending_id.trim(), &two_answers())
            .unwrap();
        writeln!(out, "{started}").unwrap();
        out.flush().unwrap();
    }
}

/// This program re-run as the answering process.
struct Answerer(common::Helper);

impl Answerer {
    fn start(url: &str) -> Answerer {
        Answerer(common::Helper::start(ANSWERER, url))
    }

    /// Answers and returns when (wall clock) the resolve call started.
    fn answer(&mut self, pending_id: &str) -> i64 {
        self.0.request(pending_id).parse().unwrap()
    }
}

/// One cross-process run through the answerer: the wake-up p50 and p99
/// from the start of the other process's resolve call.
fn pushed(
    clarion: &Clarion,
    answerer: &mut Answerer,
    jitter: &mut common::Jitter,
    rounds: usize,
) -> [Duration; 2] {
    let mut wake = Vec::new();
    for _ in 0..rounds {
        let pending_id = ask(clarion);
        let waiter = spawn_waiter(clarion, &pending_id, wall_micros);
        // Past the waiter's first read, then not in step with any tick.
        std::thread::sleep(Duration::from_millis(3) + jitter.below(Duration::from_millis(25)));
        let started = answerer.answer(&pending_id);
        let woke = waiter.join().unwrap();
        wake.push(Duration::from_micros(
            woke.saturating_sub(started).max(0) as u64
        ));
    }
    wake.sort();
    [percentile(&wake, 0.5), percentile(&wake, 0.99)]
}

/// OPS-4: `waiters` agents wait on one handle. Returns the checks and
/// statements per idle tick, and the wake-up p50 and p99 of `rounds` of
/// them answered one at a time by the other process.
fn many_waiters(
    url: &str,
    answerer: &mut Answerer,
    jitter: &mut common::Jitter,
    waiters: usize,
    rounds: usize,
) -> (f64, [Duration; 2]) {
    let clarion = Clarion::builder(url)
        .synchronous(Synchronous::Normal)
        .pool_size(4)
        .open()
        .unwrap();
    let ids: Vec<String> = (0..waiters).map(|_| ask(&clarion)).collect();
    let threads: Vec<_> = ids
        .iter()
        .map(|id| {
            let (clarion, id) = (clarion.clone(), id.clone());
            std::thread::spawn(move || {
                let _ = clarion.wait(&id, Duration::from_secs(120));
                wall_micros()
            })
        })
        .collect();
    // Until every waiter read its bundle and nobody reads any more.
    let mut last = (0, Instant::now());
    loop {
        let reads = clarion.watch_counts().reads;
        if reads != last.0 {
            last = (reads, Instant::now());
        } else if reads >= waiters as u64 && last.1.elapsed() > Duration::from_millis(300) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let before = clarion.watch_counts();
    std::thread::sleep(Duration::from_secs(1));
    let idle = clarion.watch_counts();
    let ticks = (idle.checks - before.checks).max(1);
    let statements = (idle.checks - before.checks)
        + (idle.rechecks - before.rechecks)
        + (idle.reads - before.reads);
    let per_tick = statements as f64 / ticks as f64;
    let mut threads: Vec<Option<_>> = threads.into_iter().map(Some).collect();
    let mut wake = Vec::new();
    for n in 0..rounds.min(waiters) {
        let index = n * waiters / rounds.min(waiters).max(1);
        std::thread::sleep(jitter.below(Duration::from_millis(25)));
        let started = answerer.answer(&ids[index]);
        let woke = threads[index].take().unwrap().join().unwrap();
        wake.push(Duration::from_micros(
            woke.saturating_sub(started).max(0) as u64
        ));
    }
    clarion.close();
    for thread in threads.into_iter().flatten() {
        let _ = thread.join();
    }
    wake.sort();
    (per_tick, [percentile(&wake, 0.5), percentile(&wake, 0.99)])
}

/// A thread waiting on `pending_id` (30 s at most) that returns `stamp()`
/// taken the moment it holds the answer.
fn spawn_waiter<T: Send + 'static>(
    clarion: &Clarion,
    pending_id: &str,
    stamp: fn() -> T,
) -> std::thread::JoinHandle<T> {
    let (clarion, pending_id) = (clarion.clone(), pending_id.to_owned());
    std::thread::spawn(move || {
        clarion.wait(&pending_id, Duration::from_secs(30)).unwrap();
        stamp()
    })
}

/// One cross-process run the old way: `clarion answer` processes, the
/// wake-up p50 and p99 after the answering process exited.
fn cross_process(clarion: &Clarion, url: &str, rounds: usize) -> [Duration; 2] {
    let mut wake = Vec::new();
    for _ in 0..rounds {
        let pending_id = ask(clarion);
        let waiter = spawn_waiter(clarion, &pending_id, Instant::now);
        let output = Command::new(env!("CARGO_BIN_EXE_clarion"))
            .args([
                "answer",
                &pending_id,
                "--database-url",
                url,
                "--as",
                "user:alice",
                "--answers",
            ])
            .arg(
                r#"[{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":""},
                    {"question_id":"q2","selected_options":["q2_opt2"],"custom_text":""}]"#,
            )
            .output()
            .unwrap();
        let committed = Instant::now();
        assert!(
            output.status.success(),
            "{}: {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        wake.push(waiter.join().unwrap().saturating_duration_since(committed));
    }
    wake.sort();
    [percentile(&wake, 0.5), percentile(&wake, 0.99)]
}

/// The median over runs of each figure.
fn medians<const N: usize>(runs: &[[Duration; N]]) -> [Duration; N] {
    std::array::from_fn(|i| median(runs.iter().map(|run| run[i]).collect()))
}

fn main() {
    if let Ok(url) = std::env::var(ANSWERER) {
        answerer(&url);
        return;
    }
    let rounds = common::setting("CLARION_BENCH_ROUNDS", 200).max(1);
    let runs = common::runs(3);
    let waiters = common::setting("CLARION_BENCH_WAITERS", 1000).max(1);
    let mut jitter = common::Jitter(0x9E37_79B9_7F4A_7C15);
    for (name, place_for) in common::backends() {
        let place = place_for("waiting");
        let clarion = setup(&place.url);
        let mut answerer = Answerer::start(&place.url);
        let (mut near, mut far, mut push, mut many) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for run in 0..runs {
            eprintln!("{name}: run {}/{runs}", run + 1);
            near.push(in_process(&clarion, rounds));
            let [p50, p99] = pushed(&clarion, &mut answerer, &mut jitter, rounds.min(100));
            println!(
                "{name:<10} run {}: cross-process wake-up from the start of the other process's resolve: p50 {:.2} ms  p99 {:.2} ms",
                run + 1,
                ms(p50),
                ms(p99)
            );
            push.push([p50, p99]);
            far.push(cross_process(&clarion, &place.url, rounds.min(10)));
            let (per_tick, [p50, p99]) =
                many_waiters(&place.url, &mut answerer, &mut jitter, waiters, 20);
            println!(
                "{name:<10} run {}: {waiters} waiters on one handle: {per_tick:.2} statements per idle tick; one answered: wake-up p50 {:.2} ms  p99 {:.2} ms",
                run + 1,
                ms(p50),
                ms(p99)
            );
            many.push([p50, p99]);
        }
        let [p50, p99, resolve] = medians(&near);
        println!(
            "{name:<10} in-process wake-up: p50 {:.3} ms  p99 {:.3} ms   (resolve call p50 {:.3} ms)  median of {runs} runs",
            ms(p50),
            ms(p99),
            ms(resolve)
        );
        let [p50, p99] = medians(&push);
        println!(
            "{name:<10} cross-process wake-up (WAIT-3a): p50 {:.2} ms  p99 {:.2} ms  (poll interval 250 ms)  median of {runs} runs",
            ms(p50),
            ms(p99)
        );
        let [p50, p99] = medians(&far);
        println!(
            "{name:<10} cross-process wake-up after a `clarion answer` process exited: p50 {:.1} ms  p99 {:.1} ms  median of {runs} runs",
            ms(p50),
            ms(p99)
        );
        let [p50, p99] = medians(&many);
        println!(
            "{name:<10} one of {waiters} waiters answered from another process: p50 {:.2} ms  p99 {:.2} ms  median of {runs} runs",
            ms(p50),
            ms(p99)
        );
    }
    common::print_peak_memory();
}
