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
//! Environment: CLARION_BENCH_ROUNDS (default 200), CLARION_TEST_DATABASE_URL.

use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use clarion::{
    AnswerInput, AskRequest, Clarion, OptionSpec, Principal, QuestionSpec, ResolveRequest,
    SessionUpsert,
};

fn ask(clarion: &Clarion) -> String {
    let options = vec![
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
    ];
    clarion
        .ask(&AskRequest {
            session_id: "s".into(),
            questions: vec![QuestionSpec {
                question_id: None,
                title: "T".into(),
                prompt: "Proceed?".into(),
                options,
            }],
            ..AskRequest::default()
        })
        .unwrap()
        .pending_id
}

fn answers() -> ResolveRequest {
    ResolveRequest {
        answers: vec![AnswerInput {
            question_id: "q1".into(),
            selected_options: vec!["q1_opt1".into()],
            custom_text: String::new(),
        }],
        ..ResolveRequest::default()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn setup(url: &str) -> Clarion {
    let clarion = Clarion::open(url).unwrap();
    clarion.upsert_workspace("w", Some("alice")).unwrap();
    clarion.upsert_task("t", Some("w")).unwrap();
    clarion
        .upsert_session(SessionUpsert {
            id: "s",
            task_id: "t",
            state: None,
            is_primary: None,
        })
        .unwrap();
    clarion
}

fn in_process(name: &str, url: &str, rounds: usize) {
    let clarion = setup(url);
    let (mut wake, mut resolve) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let pending_id = ask(&clarion);
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
            .resolve_bundle(&Principal::user("alice"), &pending_id, &answers())
            .unwrap();
        resolve.push(started.elapsed());
        let (woke, _) = waiter.join().unwrap();
        wake.push(woke.duration_since(started));
    }
    wake.sort();
    resolve.sort();
    println!(
        "{name:<10} in-process wake-up: p50 {:.3} ms  p99 {:.3} ms   (resolve call p50 {:.3} ms)",
        percentile(&wake, 0.5).as_secs_f64() * 1e3,
        percentile(&wake, 0.99).as_secs_f64() * 1e3,
        percentile(&resolve, 0.5).as_secs_f64() * 1e3,
    );
}

fn cross_process(name: &str, url: &str, rounds: usize) {
    let clarion = setup(url);
    let mut wake = Vec::new();
    for _ in 0..rounds {
        let pending_id = ask(&clarion);
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
            .arg(r#"[{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":""}]"#)
            .output()
            .unwrap();
        let committed = Instant::now();
        assert!(output.status.success());
        wake.push(waiter.join().unwrap().saturating_duration_since(committed));
    }
    wake.sort();
    println!(
        "{name:<10} cross-process wake-up after the other process exited: p50 {:.1} ms  p99 {:.1} ms  (poll interval 250 ms)",
        percentile(&wake, 0.5).as_secs_f64() * 1e3,
        percentile(&wake, 0.99).as_secs_f64() * 1e3,
    );
}

fn main() {
    let rounds = std::env::var("CLARION_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let sqlite = common::sqlite("waiting");
    in_process("SQLite", &sqlite.url, rounds);
    cross_process("SQLite", &sqlite.url, rounds.min(40));
    #[cfg(feature = "postgres")]
    {
        let postgres = common::postgres("waiting");
        in_process("PostgreSQL", &postgres.url, rounds);
        cross_process("PostgreSQL", &postgres.url, rounds.min(40));
    }
}
