//! Quorum benchmarks (#42, QUO-3, QUO-4; OPS-2), a program, not a timed test:
//!
//!     cargo bench --bench quorum --features test-hooks           # SQLite
//!     cargo bench --bench quorum --features postgres,test-hooks  # and PostgreSQL
//!
//! Two measurements per run, each interleaving its sides in blocks so a
//! slow spell of the machine falls on both, and printing each run's ratio:
//!
//! - Votes beside a plain resolve (clarion only, no floor): two-question
//!   bundles resolved by one user, against quorum bundles (2 approvals) of
//!   the same shape: the first vote (recorded, the bundle still pending) by
//!   alice, then the deciding vote (the claim) by bob. Ratios: vote / plain
//!   and deciding / plain throughput.
//! - Ten racing voters: quorum bundles of 3 approvals, `eligible` the ten
//!   voters (members of the workspace); ten threads, each its own user, are
//!   released together on each bundle and submit the same answers. Exactly
//!   one call per bundle claims. Reports bundles settled per second and the
//!   per-vote latency (p50, p99). Floor, per voter, by hand on the same
//!   database: read the bundle's rows (a voter that sees them settled
//!   replays and is done); otherwise one transaction — SQLite `BEGIN
//!   IMMEDIATE`, not waiting in the busy handler but reading again after a
//!   short pause as clarion does, PostgreSQL `BEGIN` and the rows locked
//!   in id order — re-reads whether the rows are pending, inserts the vote,
//!   reads the votes of the same digest, and with 3 writes the claim (rows
//!   answered, bundle marked `quorum` with its voters, the `won` ledger
//!   entry, `bundle.resolved`), else the `voted` entry and `bundle.voted`.
//!   A voter that lost writes its `lost` entry in one insert after its
//!   block, as clarion's appender batches them (AUD-2).
//!
//! Before the timed runs, each backend prints the round trips, statements
//! and transactions of one plain resolve, one vote and one deciding vote,
//! clarion's and the floor's (test hook `StatementCounter`, as resolve's
//! counts of #41).
//!
//! Environment: CLARION_BENCH_COUNTS (`only`: the counts and no timed
//! runs; `0`: no counts), CLARION_BENCH_BUNDLES (default 300 bundles of each kind
//! per run), CLARION_BENCH_CONTENDED (default 40 contested bundles per run
//! and side), CLARION_BENCH_RUNS (default 3; the median run is reported),
//! CLARION_BENCH_BACKEND, CLARION_TEST_DATABASE_URL, CLARION_BENCH_POOLED.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clarion::test_hooks::{AnyConnection, Counts, StatementCounter};
use clarion::{AskRequest, BundleStatus, Clarion, Principal, QuorumRequest};
use clarion::{SessionUpsert, TaskUpsert, WorkspaceUpsert};
use common::{
    contend, digest_of, median, median_f64, ms, per_second, timed, two_answers, two_questions,
    Contended, Raced, Raw, ANSWER_Q1, ANSWER_Q2,
};
use diesel::connection::SimpleConnection;
use diesel::sql_types::Text;
use diesel::RunQueryDsl;

const VOTERS: usize = 10;
const APPROVALS: usize = 3;
/// Bundles of each kind handled before the next kind takes its turn.
const BLOCK: usize = 50;
/// Contested bundles clarion's voters settle before the floor's turn.
const RACE_BLOCK: usize = 10;

fn voter(n: usize) -> String {
    format!("voter-{n:02}")
}

fn joined(values: &[f64]) -> String {
    let parts: Vec<String> = values.iter().map(|v| format!("{v:.2}")).collect();
    parts.join(", ")
}

/// [`two_questions`] asked with a quorum.
fn quorum_ask(session: &str, approvals: usize, eligible: Vec<String>) -> AskRequest {
    AskRequest {
        quorum: Some(QuorumRequest {
            approvals: approvals as u32,
            eligible,
            ..QuorumRequest::default()
        }),
        ..two_questions(session)
    }
}

/// Asks `n` bundles (untimed), with a progress bar.
fn ask_many(clarion: &Clarion, request: &AskRequest, n: usize, label: &str) -> Vec<String> {
    let mut progress = common::Progress::new(label, n as u64);
    let ids = (0..n)
        .map(|_| {
            progress.inc();
            clarion.ask(request).unwrap().pending_id
        })
        .collect();
    progress.finish();
    ids
}

const PENDING_ROWS: &str = "SELECT status FROM bundle_questions WHERE pending_id = ?";
/// PostgreSQL: QUO-3's serialization, the rows locked in id order; the
/// locked rows' statuses are their latest (the re-read under the lock).
const LOCK_ROWS: &str =
    "SELECT status FROM bundle_questions WHERE pending_id = ? ORDER BY id FOR UPDATE";
const INSERT_VOTE: &str = "INSERT INTO votes
    (pending_id, user_id, at, rejected, answers, reject_reason, digest)
    VALUES (?, ?, ?, FALSE, ?, '', ?)";
const SAME_VOTES: &str =
    "SELECT user_id FROM votes WHERE pending_id = ? AND digest = ? ORDER BY at, id";
const ANSWER_ROWS: &str = "UPDATE bundle_questions SET status = 'answered',
        response = CASE question_id WHEN 'q1' THEN ? ELSE ? END
    WHERE pending_id = ? AND status = 'pending'";
const MARK_BUNDLE: &str = "UPDATE bundles SET reject_reason = '', responded_at = 1,
        response_delivery_pending = TRUE, may_be_active = FALSE,
        resolved_by_kind = 'quorum', resolved_by_id = '', voters = ?
    WHERE pending_id = ?";
/// AUD-2: the ledger entry of the vote (`voted`) or of the claim (`won`).
const LEDGER_ENTRY: &str = "INSERT INTO attempts
    (pending_id, at, principal_kind, user_id, agent_id, channel, outcome, digest)
    VALUES (?, 1, 'user', ?, '', 'rust', ?, ?)";
/// EVT-1, QUO-2: events of a quorum bundle are for people only.
const INSERT_EVENT: &str = "INSERT INTO events
    (event_type, at, pending_id, task_id, workspace_id, task_exists, kind, data, human_only)
    VALUES (?, 1, ?, 't', 'w', TRUE, 'question', ?, TRUE)";

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    status: Option<String>,
}

#[derive(diesel::QueryableByName)]
struct UserId {
    #[diesel(sql_type = Text)]
    user_id: String,
}

fn any_pending(rows: &[Row]) -> bool {
    rows.iter().any(|r| r.status.as_deref() == Some("pending"))
}

fn read_rows(conn: &mut AnyConnection, sql: &str, pending_id: &str) -> Vec<Row> {
    Raw::new(sql).text(pending_id).load(conn).unwrap()
}

fn is_sqlite(conn: &AnyConnection) -> bool {
    matches!(conn, AnyConnection::Sqlite(_))
}

/// Voter `n`'s hand-written vote on `pending_id`: true if it made the
/// claim. A voter that finds the bundle settled is recorded in `lost`.
fn floor_vote(
    conn: &mut AnyConnection,
    pending_id: &str,
    n: usize,
    lost: &mut Vec<String>,
) -> bool {
    if !any_pending(&read_rows(conn, PENDING_ROWS, pending_id)) {
        lost.push(pending_id.to_owned());
        return false;
    }
    let rows = if is_sqlite(conn) {
        // Like clarion, no queue in SQLite's busy handler: read again
        // after the same pauses; a read that shows the claim ends it.
        let mut pause = Duration::from_micros(250);
        loop {
            conn.batch_execute("PRAGMA busy_timeout = 0").unwrap();
            let began = conn.batch_execute("BEGIN IMMEDIATE");
            conn.batch_execute("PRAGMA busy_timeout = 5000").unwrap();
            if began.is_ok() {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(2));
            if !any_pending(&read_rows(conn, PENDING_ROWS, pending_id)) {
                lost.push(pending_id.to_owned());
                return false;
            }
        }
        read_rows(conn, PENDING_ROWS, pending_id)
    } else {
        conn.batch_execute("BEGIN").unwrap();
        read_rows(conn, LOCK_ROWS, pending_id)
    };
    if !any_pending(&rows) {
        conn.batch_execute("COMMIT").unwrap();
        lost.push(pending_id.to_owned());
        return false;
    }
    let user = voter(n);
    let answers = format!("[{ANSWER_Q1},{ANSWER_Q2}]");
    let digest = digest_of(&answers);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    Raw::new(INSERT_VOTE)
        .text(pending_id)
        .text(&user)
        .int(now)
        .text(&answers)
        .text(&digest)
        .execute(conn)
        .unwrap();
    let same: Vec<UserId> = Raw::new(SAME_VOTES)
        .text(pending_id)
        .text(&digest)
        .load(conn)
        .unwrap();
    let won = same.len() >= APPROVALS;
    let event = |conn: &mut AnyConnection, word: &str, data: &str| {
        Raw::new(INSERT_EVENT)
            .text(word)
            .text(pending_id)
            .text(data)
            .execute(conn)
            .unwrap();
    };
    let entry = |conn: &mut AnyConnection, outcome: &str| {
        Raw::new(LEDGER_ENTRY)
            .text(pending_id)
            .text(&user)
            .text(outcome)
            .text(&digest)
            .execute(conn)
            .unwrap();
    };
    if won {
        let ids: Vec<&str> = same
            .iter()
            .take(APPROVALS)
            .map(|v| v.user_id.as_str())
            .collect();
        let voters = serde_json::to_string(&ids).unwrap();
        let claimed = Raw::new(ANSWER_ROWS)
            .text(ANSWER_Q1)
            .text(ANSWER_Q2)
            .text(pending_id)
            .execute(conn)
            .unwrap();
        assert_eq!(claimed, 2, "the deciding vote claims both rows");
        Raw::new(MARK_BUNDLE)
            .text(&voters)
            .text(pending_id)
            .execute(conn)
            .unwrap();
        entry(conn, "won");
        let data = format!(
            r#"{{"status":"answered","response":{{"pending_id":"{pending_id}","status":"answered","answers":{answers},"reject_reason":"","decided_by":"quorum","voters":{voters}}}}}"#
        );
        event(conn, "bundle.resolved", &data);
    } else {
        entry(conn, "voted");
        let data = format!(
            r#"{{"user_id":"{user}","rejected":false,"votes":{}}}"#,
            same.len()
        );
        event(conn, "bundle.voted", &data);
    }
    conn.batch_execute("COMMIT").unwrap();
    won
}

/// AUD-2: a floor voter's `lost` entries, in one insert after its block.
fn write_lost(conn: &mut AnyConnection, lost: &[String], n: usize) {
    if lost.is_empty() {
        return;
    }
    let digest = digest_of(&format!("[{ANSWER_Q1},{ANSWER_Q2}]"));
    let user = voter(n);
    let tuples = vec!["(?, 1, 'user', ?, '', 'rust', 'lost', ?)"; lost.len()].join(", ");
    let sql = format!(
        "INSERT INTO attempts (pending_id, at, principal_kind, user_id, agent_id, channel, \
         outcome, digest) VALUES {tuples}"
    );
    let mut insert = Raw::new(&sql);
    for pending_id in lost {
        insert = insert.text(pending_id).text(&user).text(&digest);
    }
    insert.execute(conn).unwrap();
}

/// Workspace `w` owned by olga, whose members are alice, bob and the ten
/// voters, and its task `t`.
fn world(clarion: &Clarion) {
    clarion
        .upsert_workspace(WorkspaceUpsert::new("w").owner("olga"))
        .unwrap();
    let mut members: Vec<String> = (0..VOTERS).map(voter).collect();
    members.extend(["alice".to_owned(), "bob".to_owned()]);
    clarion.set_members("w", &members).unwrap();
    clarion
        .upsert_task(TaskUpsert::new("t").workspace("w"))
        .unwrap();
}

/// #41-style counts (test hook `StatementCounter`, one counted
/// connection, every statement run once before): what one plain resolve,
/// one vote and one deciding vote send, clarion's and the floor's.
fn count_round_trips(name: &str, url: &str) {
    let counter = StatementCounter::recording();
    let db = Clarion::builder(url)
        .pool_size(1)
        .count_statements(counter.clone())
        .open()
        .expect("open");
    world(&db);
    db.upsert_session(SessionUpsert::new("c", "t")).unwrap();
    let (alice, bob) = (Principal::user("alice"), Principal::user("bob"));
    let answers = two_answers();
    let eligible: Vec<String> = (0..VOTERS).map(voter).collect();
    let cost = |work: &mut dyn FnMut()| {
        let before = counter.counts();
        work();
        counter.counts() - before
    };
    let mut rows: Vec<(&str, &str, Counts)> = Vec::new();
    for pass in 0..2 {
        let plain = db.ask(&two_questions("c")).unwrap().pending_id;
        let pair = db.ask(&quorum_ask("c", 2, vec![])).unwrap().pending_id;
        let request = quorum_ask("c", APPROVALS, eligible.clone());
        let (ours, floor) = (
            db.ask(&request).unwrap().pending_id,
            db.ask(&request).unwrap().pending_id,
        );
        let mut measured = vec![
            (
                "plain resolve",
                "clarion",
                cost(&mut || assert!(db.resolve_bundle(&alice, &plain, &answers).unwrap().claimed)),
            ),
            (
                "vote (pending), eligible empty",
                "clarion",
                cost(&mut || assert!(!db.resolve_bundle(&alice, &pair, &answers).unwrap().claimed)),
            ),
            (
                "deciding vote of 2",
                "clarion",
                cost(&mut || assert!(db.resolve_bundle(&bob, &pair, &answers).unwrap().claimed)),
            ),
        ];
        for n in 0..APPROVALS {
            let me = Principal::user(voter(n));
            let counts = cost(&mut || {
                let claimed = db.resolve_bundle(&me, &ours, &answers).unwrap().claimed;
                assert_eq!(claimed, n + 1 == APPROVALS);
            });
            let floor_counts = cost(&mut || {
                db.with_raw_connection(|conn| {
                    let claimed = floor_vote(conn, &floor, n, &mut Vec::new());
                    assert_eq!(claimed, n + 1 == APPROVALS);
                })
                .unwrap()
            });
            if n == 0 || n + 1 == APPROVALS {
                let what = if n == 0 {
                    "vote 1 of 3 (pending), eligible 10"
                } else {
                    "deciding vote 3 of 3"
                };
                measured.push((what, "clarion", counts));
                measured.push(("", "floor", floor_counts));
            }
        }
        // The first pass prepared every statement; the second is counted.
        if pass == 1 {
            rows = measured;
        }
    }
    println!("\n{name}: round trips per vote, once after a warm-up");
    println!(
        "  {:<36} {:<7} {:>5} {:>5} {:>5}",
        "operation", "by", "trips", "stmts", "txs"
    );
    for (what, by, c) in rows {
        println!(
            "  {what:<36} {by:<7} {:>5} {:>5} {:>5}",
            c.round_trips, c.statements, c.transactions
        );
    }
}

fn bench(name: &str, url: &str, bundles: usize, contended: usize, runs: usize) {
    // Every voter gets its own connection, through clarion or by hand.
    let clarion = Clarion::builder(url)
        .pool_size(VOTERS as u32 + 2)
        .open()
        .expect("open");
    world(&clarion);
    let (alice, bob) = (Principal::user("alice"), Principal::user("bob"));
    let (mut plain, mut first, mut deciding) = (Vec::new(), Vec::new(), Vec::new());
    let (mut race, mut race_floor) = (Vec::new(), Vec::new());
    let mut ratios: Vec<[f64; 3]> = Vec::new();
    for run in 0..runs {
        eprintln!("{name}: run {}/{runs}", run + 1);
        let session = format!("s{run}");
        clarion
            .upsert_session(SessionUpsert::new(&session, "t"))
            .unwrap();
        let label = format!("{name}: asking {bundles} plain bundles");
        let plain_ids = ask_many(&clarion, &two_questions(&session), bundles, &label);
        let label = format!("{name}: asking {bundles} quorum bundles");
        let quorum_ids = ask_many(&clarion, &quorum_ask(&session, 2, vec![]), bundles, &label);
        let answers = two_answers();
        let mut took = [Duration::ZERO; 3];
        for (plain_block, quorum_block) in plain_ids.chunks(BLOCK).zip(quorum_ids.chunks(BLOCK)) {
            took[0] += timed(|| {
                for id in plain_block {
                    assert!(
                        clarion
                            .resolve_bundle(&alice, id, &answers)
                            .unwrap()
                            .claimed
                    );
                }
            })
            .0;
            took[1] += timed(|| {
                for id in quorum_block {
                    let voted = clarion.resolve_bundle(&alice, id, &answers).unwrap();
                    assert!(!voted.claimed && voted.status == BundleStatus::Pending);
                }
            })
            .0;
            took[2] += timed(|| {
                for id in quorum_block {
                    assert!(clarion.resolve_bundle(&bob, id, &answers).unwrap().claimed);
                }
            })
            .0;
        }
        let rates = took.map(|t| per_second(t, bundles));
        plain.push(rates[0]);
        first.push(rates[1]);
        deciding.push(rates[2]);

        // Ten voters per bundle, clarion and the floor taking turns.
        let eligible: Vec<String> = (0..VOTERS).map(voter).collect();
        let request = quorum_ask(&session, APPROVALS, eligible);
        let label = format!("{name}: asking {} contested bundles", 2 * contended);
        let ids = ask_many(&clarion, &request, 2 * contended, &label);
        let (ours, theirs) = ids.split_at(contended);
        let (mut raced, mut raced_floor) = (Raced::default(), Raced::default());
        for (block, floor_block) in ours.chunks(RACE_BLOCK).zip(theirs.chunks(RACE_BLOCK)) {
            raced.add(contend(block, VOTERS, |race, n| {
                let me = Principal::user(voter(n));
                race.run(|id| {
                    clarion
                        .resolve_bundle(&me, id, &answers)
                        .expect("voter")
                        .claimed
                })
            }));
            // Each floor voter holds one raw connection for the block.
            raced_floor.add(contend(floor_block, VOTERS, |race, n| {
                clarion
                    .with_raw_connection(|conn| {
                        let mut lost = Vec::new();
                        race.run(|id| floor_vote(conn, id, n, &mut lost));
                        write_lost(conn, &lost, n);
                    })
                    .unwrap()
            }));
        }
        let (raced, raced_floor) = (raced.figures(), raced_floor.figures());
        let run_ratios = [
            rates[1] / rates[0],
            rates[2] / rates[0],
            raced.settled_per_second / raced_floor.settled_per_second,
        ];
        eprintln!(
            "{name}: run {}: vote/plain {:.3}, deciding/plain {:.3}, voters clarion/floor {:.3}",
            run + 1,
            run_ratios[0],
            run_ratios[1],
            run_ratios[2]
        );
        ratios.push(run_ratios);
        race.push(raced);
        race_floor.push(raced_floor);
    }
    let per_run = |which: usize| joined(&ratios.iter().map(|r| r[which]).collect::<Vec<_>>());
    let median_of = |which: usize| median_f64(ratios.iter().map(|r| r[which]).collect());
    let contended_median = |c: &[Contended]| Contended {
        settled_per_second: median_f64(c.iter().map(|c| c.settled_per_second).collect()),
        p50: median(c.iter().map(|c| c.p50).collect()),
        p99: median(c.iter().map(|c| c.p99).collect()),
    };
    let (race, race_floor) = (contended_median(&race), contended_median(&race_floor));
    println!("\n{name}: median of {runs} runs");
    println!(
        "  plain resolve, {bundles} bundles:      {:>7.0}/s",
        median_f64(plain)
    );
    println!(
        "  first vote (pending), {bundles}:       {:>7.0}/s   vote/plain {:.2}x   (per run: {})",
        median_f64(first),
        median_of(0),
        per_run(0)
    );
    println!(
        "  deciding vote (claim), {bundles}:      {:>7.0}/s   deciding/plain {:.2}x   (per run: {})",
        median_f64(deciding),
        median_of(1),
        per_run(1)
    );
    println!(
        "  {VOTERS} voters x {contended} bundles ({APPROVALS} approvals), settled: clarion {:>6.0}/s   floor {:>6.0}/s   ratio {:.2}x   (per run: {})",
        race.settled_per_second,
        race_floor.settled_per_second,
        median_of(2),
        per_run(2)
    );
    for (label, ours, floor) in [
        ("p50", race.p50, race_floor.p50),
        ("p99", race.p99, race_floor.p99),
    ] {
        println!(
            "    per-vote latency {label}: clarion {:.2} ms   floor {:.2} ms   ratio {:.2}x (time)",
            ms(ours),
            ms(floor),
            ours.as_secs_f64() / floor.as_secs_f64()
        );
    }
}

fn main() {
    let bundles = common::setting("CLARION_BENCH_BUNDLES", 300).max(1);
    let contended = common::setting("CLARION_BENCH_CONTENDED", 40).max(1);
    let runs = common::runs(3);
    let counting = std::env::var("CLARION_BENCH_COUNTS").unwrap_or_default();
    for (name, place_for) in common::backends() {
        if counting != "0" {
            count_round_trips(name, &place_for("counts").url);
        }
        if counting == "only" {
            continue;
        }
        let place = place_for("quorum");
        bench(name, &place.url, bundles, contended, runs);
    }
    common::print_peak_memory();
}
