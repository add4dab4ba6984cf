//! OPS-2/3 resolve benchmark (a program, not a timed test):
//!
//!     cargo bench --bench resolve                      # SQLite
//!     cargo bench --bench resolve --features postgres  # SQLite and PostgreSQL
//!
//! Resolves distinct two-question bundles one after another through
//! `resolve_bundle`, and beside it does the same row writes by hand — one
//! transaction per bundle with the two question rows and the bundle row
//! updated through raw SQL (the floor). Prints throughput and the ratio.
//! Goal (OPS-3): clarion at least 0.5x the floor.
//!
//! Environment: CLARION_BENCH_BUNDLES (default 2000), CLARION_BENCH_RUNS
//! (default 5; the median run is reported), CLARION_TEST_DATABASE_URL.

use std::time::{Duration, Instant};

use clarion::db::AnyConnection;
use clarion::{
    AnswerInput, AskRequest, Clarion, OptionSpec, Principal, QuestionSpec, ResolveRequest,
    SessionUpsert,
};
use common::median;
use diesel::connection::SimpleConnection;

mod common;

fn request(session: &str) -> AskRequest {
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
    AskRequest {
        session_id: session.into(),
        questions: vec![
            QuestionSpec {
                question_id: None,
                title: "A".into(),
                prompt: "First?".into(),
                options: options(),
            },
            QuestionSpec {
                question_id: None,
                title: "B".into(),
                prompt: "Second?".into(),
                options: options(),
            },
        ],
        ..AskRequest::default()
    }
}

fn answers() -> ResolveRequest {
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

fn prepare(clarion: &Clarion, run: usize, bundles: usize) -> Vec<String> {
    let session = format!("s{run}");
    clarion
        .upsert_session(SessionUpsert {
            id: &session,
            task_id: "t",
            state: None,
            is_primary: None,
        })
        .unwrap();
    (0..bundles)
        .map(|_| clarion.ask(&request(&session)).unwrap().pending_id)
        .collect()
}

/// The floor: the claim's row writes, by hand, one transaction per bundle.
fn floor_script(pending_id: &str, sqlite: bool) -> String {
    let begin = if sqlite { "BEGIN IMMEDIATE" } else { "BEGIN" };
    format!(
        "{begin};
         UPDATE bundle_questions SET status = 'answered',
             response = '{{\"question_id\":\"q1\",\"selected_options\":[\"q1_opt1\"],\"custom_text\":\"ok\"}}'
             WHERE pending_id = '{pending_id}' AND question_id = 'q1' AND status = 'pending';
         UPDATE bundle_questions SET status = 'answered',
             response = '{{\"question_id\":\"q2\",\"selected_options\":[\"q2_opt2\"],\"custom_text\":\"\"}}'
             WHERE pending_id = '{pending_id}' AND question_id = 'q2' AND status = 'pending';
         UPDATE bundles SET responded_at = 1, response_delivery_pending = TRUE, may_be_active = FALSE,
             resolved_by_kind = 'user', resolved_by_id = 'alice' WHERE pending_id = '{pending_id}';
         COMMIT;"
    )
}

fn bench(name: &str, url: &str, bundles: usize, runs: usize) {
    let clarion = Clarion::open(url).expect("open");
    clarion.upsert_workspace("w", Some("alice")).unwrap();
    clarion.upsert_task("t", Some("w")).unwrap();
    let alice = Principal::user("alice");
    let sqlite = clarion.backend() == clarion::Backend::Sqlite;
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let ids = prepare(&clarion, run * 2, bundles);
        let started = Instant::now();
        for id in &ids {
            assert!(
                clarion
                    .resolve_bundle(&alice, id, &answers())
                    .unwrap()
                    .claimed
            );
        }
        ours.push(started.elapsed());
        let ids = prepare(&clarion, run * 2 + 1, bundles);
        let started = Instant::now();
        clarion
            .with_raw_connection(|conn: &mut AnyConnection| {
                for id in &ids {
                    conn.batch_execute(&floor_script(id, sqlite)).unwrap();
                }
            })
            .unwrap();
        floor.push(started.elapsed());
    }
    let per_second = |d: Duration| bundles as f64 / d.as_secs_f64();
    let (ours, floor) = (per_second(median(ours)), per_second(median(floor)));
    println!(
        "{name:<10} resolve, distinct bundles: clarion {ours:>8.0}/s   floor {floor:>8.0}/s   ratio {:.2}x",
        ours / floor
    );
}

fn main() {
    let bundles = std::env::var("CLARION_BENCH_BUNDLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let runs = std::env::var("CLARION_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let sqlite = common::sqlite("resolve");
    bench("SQLite", &sqlite.url, bundles, runs);
    #[cfg(feature = "postgres")]
    {
        let postgres = common::postgres("resolve");
        bench("PostgreSQL", &postgres.url, bundles, runs);
    }
}
