//! CLAIM-5 across OS processes: several processes, each with its own handle
//! and pool, race through the same bundles in the same order. Every bundle
//! has exactly one winner; every process's result carries the stored
//! response. The children are this test binary itself, re-run
//! (`support::rerun`) for exactly `claim_processes::race_child`, with
//! environment variables that turn that test into the racer. A file
//! barrier releases every process together for each bundle, so they truly
//! race (and wins must spread over more than one process).

use std::collections::HashMap;
use std::process::Stdio;

use clarion::{envelope, Clarion, Principal};

use crate::support::*;

const CHILD_URL: &str = "CLARION_RACE_URL";
const CHILD_IDS: &str = "CLARION_RACE_IDS";
const CHILD_TAG: &str = "CLARION_RACE_TAG";
const CHILD_BARRIER: &str = "CLARION_RACE_BARRIER";

/// Waits (polling) until `path` exists; false after a minute.
pub fn appears(path: &std::path::Path) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !path.exists() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    true
}
const PROCESSES: usize = 6;
const BUNDLES: usize = 30;

/// The racer, ignored so a run never counts it: `race_across_processes`
/// runs it with `--ignored`. A no-op without that test's environment.
#[test]
#[ignore = "child process: run by its parent test"]
fn race_child() {
    if !is_child(module_path!(), "race_child") {
        return;
    }
    let (Ok(url), Ok(ids), Ok(tag), Ok(barrier)) = (
        std::env::var(CHILD_URL),
        std::env::var(CHILD_IDS),
        std::env::var(CHILD_TAG),
        std::env::var(CHILD_BARRIER),
    ) else {
        return;
    };
    let barrier = std::path::PathBuf::from(barrier);
    let clarion = Clarion::open(&url).unwrap();
    for (round, id) in ids.split(',').enumerate() {
        let request = one_answer(&format!("process {tag}"));
        // Ready for this round; go when every racer is.
        std::fs::write(barrier.join(format!("ready-{tag}-{round}")), "").unwrap();
        assert!(
            appears(&barrier.join(format!("go-{round}"))),
            "never released"
        );
        let resolved = clarion
            .resolve_bundle(&Principal::System, id, &request)
            .unwrap();
        println!(
            "RACE {id} {} {}",
            resolved.claimed,
            envelope::response(&resolved.response)
        );
    }
}

fn race_across_processes(db: &TestDb) {
    let session = mirror(db, "p", "alice");
    let ids: Vec<String> = (0..BUNDLES).map(|_| ask(db, &session, 1)).collect();
    let barrier = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|tag| {
            rerun(module_path!(), "race_child")
                .env(CHILD_URL, &db.url)
                .env(CHILD_IDS, ids.join(","))
                .env(CHILD_TAG, tag.to_string())
                .env(CHILD_BARRIER, barrier.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Release each round once every racer has reached it.
    for round in 0..BUNDLES {
        for tag in 0..PROCESSES {
            let ready = barrier.path().join(format!("ready-{tag}-{round}"));
            assert!(appears(&ready), "racer {tag} never reached round {round}");
        }
        std::fs::write(barrier.path().join(format!("go-{round}")), "").unwrap();
    }
    let mut winners: HashMap<String, usize> = HashMap::new();
    let mut seen: HashMap<String, Vec<String>> = HashMap::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "racer failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        // libtest prints "test claim_processes::race_child ... " before the
        // first line.
        let stdout = String::from_utf8(output.stdout).unwrap();
        for line in stdout
            .lines()
            .filter_map(|l| l.find("RACE ").map(|at| &l[at..]))
        {
            let mut parts = line.splitn(4, ' ').skip(1);
            let (id, claimed, response) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            if claimed == "true" {
                *winners.entry(id.to_owned()).or_default() += 1;
            }
            seen.entry(id.to_owned())
                .or_default()
                .push(response.to_owned());
        }
    }
    let mut winning_processes = std::collections::HashSet::new();
    for id in &ids {
        assert_eq!(winners.get(id), Some(&1), "winners of {id}");
        let responses = &seen[id];
        assert_eq!(
            responses.len(),
            PROCESSES,
            "every process got a result for {id}"
        );
        let stored = db
            .get_bundle(&Principal::System, id)
            .unwrap()
            .response
            .unwrap();
        let stored = envelope::response(&stored).to_string();
        assert!(
            responses.iter().all(|r| *r == stored),
            "{id}: {responses:?} vs {stored}"
        );
        let text = stored.split("process ").nth(1).unwrap_or_default();
        winning_processes.insert(
            text.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>(),
        );
    }
    assert!(
        winning_processes.len() > 1,
        "every round was won by the same process: the racers did not race ({winning_processes:?})"
    );
}

dual_backend!(claim_5_racing_processes_one_winner_each);

fn claim_5_racing_processes_one_winner_each(db: &TestDb) {
    race_across_processes(db);
}
