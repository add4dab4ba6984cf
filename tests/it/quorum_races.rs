//! QUO-3, QUO-4, CLAIM-5: ten voters released together make exactly one
//! claim. Each submits the same approval on a quorum of ten, so the last
//! vote to commit decides: every vote is recorded once, nine replies are
//! "recorded, pending", one is the claim, and its voters are all ten in
//! vote order. Across threads of one process, and across two processes
//! (this test binary re-run, `support::rerun`) released by a file barrier.

use std::collections::HashSet;
use std::process::Stdio;
use std::sync::{Arc, Barrier};

use clarion::{envelope, Clarion, Principal, QuorumRequest, WorkspaceUpsert};
use serde_json::Value;

use crate::claim_processes::appears;
use crate::quorum::approve;
use crate::support::*;

const VOTERS: usize = 10;
const CHILD_URL: &str = "CLARION_QUORUM_URL";
const CHILD_ID: &str = "CLARION_QUORUM_ID";
const CHILD_FIRST: &str = "CLARION_QUORUM_FIRST";
const CHILD_BARRIER: &str = "CLARION_QUORUM_BARRIER";

fn voter(n: usize) -> String {
    format!("voter-{n:02}")
}

/// A workspace whose members are the ten voters, and a quorum of ten on
/// one of its bundles.
fn ten_voter_bundle(db: &Clarion) -> String {
    db.upsert_workspace(WorkspaceUpsert::new("w-ten").owner("olga"))
        .unwrap();
    let members: Vec<String> = (0..VOTERS).map(voter).collect();
    db.set_members("w-ten", &members).unwrap();
    let session = session_in(db, "ten", "w-ten", Some(true));
    let mut request = ask_request(&session, 1);
    request.quorum = Some(QuorumRequest {
        approvals: VOTERS as u32,
        eligible: members,
        ..QuorumRequest::default()
    });
    db.ask(&request).unwrap().pending_id
}

/// One voter's reply: `claimed`, then the envelope body.
fn vote(db: &Clarion, n: usize, id: &str) -> (bool, Value) {
    let resolved = db
        .resolve_bundle(&Principal::user(voter(n)), id, &approve(1, "ship it"))
        .unwrap();
    (resolved.claimed, envelope::resolved(&resolved).body)
}

/// What ten replies and the stored bundle must say.
fn assert_one_claim(db: &TestDb, id: &str, replies: &[(bool, Value)]) {
    assert_eq!(replies.len(), VOTERS);
    let winners: Vec<&Value> = replies.iter().filter(|(c, _)| *c).map(|(_, b)| b).collect();
    assert_eq!(winners.len(), 1, "exactly one claim: {replies:?}");
    let pending = replies
        .iter()
        .filter(|(claimed, body)| !claimed && body["status"] == "pending")
        .count();
    assert_eq!(pending, VOTERS - 1, "the others were recorded and pending");
    let detail = db.get_bundle(&Principal::System, id).unwrap();
    let body = envelope::bundle_detail(&detail).body;
    let votes = body["quorum"]["votes"].as_array().unwrap();
    let users: HashSet<&str> = votes
        .iter()
        .map(|v| v["user_id"].as_str().unwrap())
        .collect();
    assert_eq!(votes.len(), VOTERS, "every vote recorded once");
    assert_eq!(users.len(), VOTERS);
    assert!(votes.iter().all(|v| v["counts"] == true));
    let in_order: Vec<&Value> = votes.iter().map(|v| &v["user_id"]).collect();
    let voters: Vec<&Value> = body["response"]["voters"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(voters, in_order, "voters in vote order");
    assert_eq!(winners[0]["response"], body["response"]);
    db.flush_ledger();
    let mut outcomes: Vec<String> = db
        .attempts(&Principal::System, id)
        .unwrap()
        .into_iter()
        .map(|a| a.outcome)
        .collect();
    outcomes.sort();
    let mut expected = vec!["voted".to_owned(); VOTERS - 1];
    expected.push("won".to_owned());
    expected.sort();
    assert_eq!(outcomes, expected);
}

dual_backend!(
    quo_4_ten_voters_in_threads_make_one_claim,
    quo_4_ten_voters_in_two_processes_make_one_claim
);

fn quo_4_ten_voters_in_threads_make_one_claim(db: &TestDb) {
    let id = ten_voter_bundle(db);
    let barrier = Arc::new(Barrier::new(VOTERS));
    let replies: Vec<(bool, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..VOTERS)
            .map(|n| {
                let (barrier, id) = (barrier.clone(), id.as_str());
                let db: &Clarion = db;
                scope.spawn(move || {
                    barrier.wait();
                    vote(db, n, id)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_one_claim(db, &id, &replies);
}

/// The child: five voters in threads on a handle of its own, released
/// when the parent writes `go`. Ignored so a run never counts it.
#[test]
#[ignore = "child process: run by its parent test"]
fn quorum_child() {
    if !is_child(module_path!(), "quorum_child") {
        return;
    }
    let (Ok(url), Ok(id), Ok(first), Ok(barrier)) = (
        std::env::var(CHILD_URL),
        std::env::var(CHILD_ID),
        std::env::var(CHILD_FIRST),
        std::env::var(CHILD_BARRIER),
    ) else {
        return;
    };
    let first: usize = first.parse().unwrap();
    let barrier = std::path::PathBuf::from(barrier);
    let clarion = Clarion::open(&url).unwrap();
    std::fs::write(barrier.join(format!("ready-{first}")), "").unwrap();
    assert!(appears(&barrier.join("go")), "never released");
    let replies: Vec<(bool, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (first..first + VOTERS / 2)
            .map(|n| {
                let (clarion, id) = (&clarion, id.as_str());
                scope.spawn(move || vote(clarion, n, id))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (claimed, body) in replies {
        println!("VOTE {claimed} {body}");
    }
}

fn quo_4_ten_voters_in_two_processes_make_one_claim(db: &TestDb) {
    let id = ten_voter_bundle(db);
    let barrier = tempfile::tempdir().unwrap();
    let children: Vec<_> = [0, VOTERS / 2]
        .into_iter()
        .map(|first| {
            rerun(module_path!(), "quorum_child")
                .env(CHILD_URL, &db.url)
                .env(CHILD_ID, &id)
                .env(CHILD_FIRST, first.to_string())
                .env(CHILD_BARRIER, barrier.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for first in [0, VOTERS / 2] {
        let ready = barrier.path().join(format!("ready-{first}"));
        assert!(appears(&ready), "child {first} never ready");
    }
    std::fs::write(barrier.path().join("go"), "").unwrap();
    let mut replies = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "voter process failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        for line in stdout
            .lines()
            .filter_map(|l| l.find("VOTE ").map(|at| &l[at + 5..]))
        {
            let (claimed, body) = line.split_once(' ').unwrap();
            replies.push((claimed == "true", serde_json::from_str(body).unwrap()));
        }
    }
    assert_one_claim(db, &id, &replies);
}
