//! OPS-2 wake-up benchmark (a program, not a timed test):
//!
//!     cargo bench --bench waiting                      # SQLite
//!     cargo bench --bench waiting --features postgres  # SQLite and PostgreSQL
//!
//! In-process: a thread waits on a bundle; the time from the start of
//! `resolve_bundle` on another thread to the waiter holding the answer (p50,
//! p99), beside the duration of the resolve call itself. Cross-process: the
//! answer comes from another OS process (`clarion answer`), so the waiter
//! finds it by polling (default interval 250 ms).
//!
//! Each figure is the median over several runs of that run's percentile.
//!
//! Environment: CLARION_BENCH_ROUNDS (default 200 in-process, at most 40
//! across processes, per run), CLARION_BENCH_RUNS (default 3),
//! CLARION_TEST_DATABASE_URL.

use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use common::{median, ms, percentile, two_answers, two_questions};

use clarion::{Clarion, Principal, SessionUpsert};

/// A two-question bundle on session `s` (the write benchmarks' bundle).
fn ask(clarion: &Clarion) -> String {
    clarion.ask(&two_questions("s")).unwrap().pending_id
}

fn setup(url: &str) -> Clarion {
    let clarion = Clarion::open(url).unwrap();
    clarion.upsert_workspace("w", Some("alice")).unwrap();
    clarion.upsert_task("t", Some("w")).unwrap();
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

/// One cross-process run: the wake-up p50 and p99 after the answering
/// process exited.
fn cross_process(clarion: &Clarion, url: &str, rounds: usize) -> [Duration; 2] {
    let mut wake = Vec::new();
    for _ in 0..rounds {
        let pending_id = ask(clarion);
        let waiter = {
            let clarion = clarion.clone();
            let pending_id = pending_id.clone();
            std::thread::spawn(move || {
                clarion.wait(&pending_id, Duration::from_secs(30)).unwrap();
                Instant::now()
            })
        };
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
            "{}",
            String::from_utf8_lossy(&output.stdout)
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
    let rounds = common::setting("CLARION_BENCH_ROUNDS", 200).max(1);
    let runs = common::runs(3);
    for (name, place_for) in common::backends() {
        let place = place_for("waiting");
        let clarion = setup(&place.url);
        let (mut near, mut far) = (Vec::new(), Vec::new());
        for run in 0..runs {
            eprintln!("{name}: run {}/{runs}", run + 1);
            near.push(in_process(&clarion, rounds));
            far.push(cross_process(&clarion, &place.url, rounds.min(40)));
        }
        let [p50, p99, resolve] = medians(&near);
        println!(
            "{name:<10} in-process wake-up: p50 {:.3} ms  p99 {:.3} ms   (resolve call p50 {:.3} ms)  median of {runs} runs",
            ms(p50),
            ms(p99),
            ms(resolve)
        );
        let [p50, p99] = medians(&far);
        println!(
            "{name:<10} cross-process wake-up after the other process exited: p50 {:.1} ms  p99 {:.1} ms  (poll interval 250 ms)  median of {runs} runs",
            ms(p50),
            ms(p99)
        );
    }
    common::print_peak_memory();
}
