//! OPS-2/3/4 write benchmarks (a program, not a timed test):
//!
//!     cargo bench --bench resolve                      # SQLite
//!     cargo bench --bench resolve --features postgres  # SQLite and PostgreSQL
//!
//! Each figure is printed beside its floor — the same row changes written
//! by hand in SQL on the same database — with the ratio clarion / floor.
//! Every measurement interleaves clarion and its floor in blocks, so a slow
//! spell of the machine falls on both, and prints each run's ratio:
//!
//! - `ask`: two-question bundles created one after another. Floor: the
//!   bundle row (with its visibility keys, OPS-3a), its attachment to the
//!   asking handle (DEL-3), its two question rows and its `bundle.asked`
//!   event inserted in one transaction per bundle.
//! - `resolve_bundle` on distinct bundles (the bundles just asked), one
//!   after another. Floor: the two question rows and the bundle row updated,
//!   the winner's ledger entry and the `bundle.resolved` event inserted, in
//!   one transaction per bundle. Goal (OPS-3): at least 0.5x the floor.
//!   Both floors write each backend's fastest way (see [`by_hand`]).
//! - `resolve_bundle` under contention: 32 threads resolve the same bundle
//!   at once, each with a different answer, bundle after bundle; exactly
//!   one claims it, the others get the winner's answer replayed. Reports
//!   bundles settled per second and the per-call latency (p50, p99). Goal
//!   (OPS-4): at least 0.6x the floor. Floor: each racer first reads the
//!   bundle's rows and their bundle row (a loser that already sees the
//!   winner is done), otherwise races a hand-written guarded UPDATE of the
//!   question rows; the winner then marks the bundle row and writes its
//!   ledger entry and event (on PostgreSQL in the claim's statement), each
//!   loser reads
//!   the winner's answers. On SQLite a floor racer, like clarion's, does
//!   not wait in the busy handler for the write lock: while it is held it
//!   reads again after a short pause.
//!
//! Before the timed runs, each backend prints what one operation sends to
//! the database and writes — round trips, statements, transactions, rows —
//! for `ask`, `resolve_bundle` (the winner, a loser whose first read sees
//! the bundle settled, a loser that loses under the claim's lock),
//! `cancel_bundle`, `get_bundle` and a scoped `list_pending` page, and for
//! the floors, counted by the test hook `StatementCounter` on one connection
//! (see [`count_round_trips`]; issue #41).
//!
//! Environment: CLARION_BENCH_COUNTS (`only`: the counts and no timed runs;
//! `log`: also each call's SQL; `0`: no counts), CLARION_BENCH_BUNDLES (default 2000 per run, asked and
//! resolved), CLARION_BENCH_CONTENDED (default 100 contested bundles per
//! run), CLARION_BENCH_RUNS (default 5; the median run is reported),
//! CLARION_TEST_DATABASE_URL, CLARION_BENCH_POOLED (1: pooler mode, PROD-1).

mod common;

use std::time::Duration;

use clarion::test_hooks::{points, AnyConnection, Counts, FailAction, Gate};
use clarion::test_hooks::{RowsWritten, StatementCounter};
use clarion::{AnswerInput, ListRequest, ResolveRequest, TaskUpsert, WorkspaceUpsert};
use clarion::{Backend, Clarion, Principal, SessionUpsert};
use common::floors::{backend_of, by_hand, event, floor_ask, floor_ask_setup};
use common::{
    contend, digest_of, median, median_f64, ms, per_second, timed, two_answers, two_questions,
    Contended, Raced, Raw, ANSWER_Q1, ANSWER_Q2,
};
use diesel::connection::SimpleConnection;
use diesel::sql_types::Text;
use diesel::RunQueryDsl;

const RACERS: usize = 32;

fn new_session(clarion: &Clarion, id: &str) {
    clarion.upsert_session(SessionUpsert::new(id, "t")).unwrap();
}

/// How many bundles clarion resolves before the floor takes its turn.
const BLOCK: usize = 100;

/// Asks `n` bundles through clarion (untimed), with a progress bar.
fn ask_many(clarion: &Clarion, session: &str, n: usize, label: &str) -> Vec<String> {
    let mut progress = common::Progress::new(label, n as u64);
    let ids = (0..n)
        .map(|_| {
            progress.inc();
            clarion.ask(&two_questions(session)).unwrap().pending_id
        })
        .collect();
    progress.finish();
    ids
}

const ANSWER_ROW: &str = "UPDATE bundle_questions SET status = 'answered', response = ?
    WHERE pending_id = ? AND question_id = ? AND status = 'pending'";
const MARK_BUNDLE: &str = "UPDATE bundles SET reject_reason = '', responded_at = 1,
        response_delivery_pending = TRUE, may_be_active = FALSE,
        resolved_by_kind = 'user', resolved_by_id = 'alice'
    WHERE pending_id = ?";

/// AUD-2: one ledger entry, as clarion writes it.
const LEDGER_ENTRY: &str = "INSERT INTO attempts
    (pending_id, at, principal_kind, user_id, agent_id, channel, outcome, digest)
    VALUES (?, 1, 'user', 'alice', '', 'rust', ?, ?)";

/// A ledger entry of `outcome` for `pending_id`.
fn ledger_entry<'a>(pending_id: &'a str, outcome: &'a str, digest: &'a str) -> Raw<'a> {
    Raw::new(LEDGER_ENTRY)
        .text(pending_id)
        .text(outcome)
        .text(digest)
}

/// The distinct-resolve floor: the claim's row writes for one bundle and
/// the winner's ledger entry, in one transaction (AUD-2).
fn floor_resolve(conn: &mut AnyConnection, pending_id: &str) {
    let row = |answer, question| {
        Raw::new(ANSWER_ROW)
            .text(answer)
            .text(pending_id)
            .text(question)
    };
    let bundle = Raw::new(MARK_BUNDLE).text(pending_id);
    let digest = digest_of(&format!("{ANSWER_Q1}{ANSWER_Q2}"));
    let won = ledger_entry(pending_id, "won", &digest);
    let data = resolved_data(pending_id, ANSWER_Q1, ANSWER_Q2);
    let resolved = event("bundle.resolved", pending_id, &data);
    by_hand(
        conn,
        vec![
            row(ANSWER_Q1, "q1"),
            row(ANSWER_Q2, "q2"),
            bundle,
            won,
            resolved,
        ],
    );
}

/// A `bundle.resolved` event's data: the status and the response.
fn resolved_data(pending_id: &str, q1: &str, q2: &str) -> String {
    format!(
        r#"{{"status":"answered","response":{{"pending_id":"{pending_id}","status":"answered","answers":[{q1},{q2}],"reject_reason":""}}}}"#
    )
}

/// The guarded claim by hand: the question rows take the answers only
/// while still pending; whoever changed them won.
const CLAIM_ROWS: &str = "UPDATE bundle_questions SET status = 'answered',
        response = CASE question_id WHEN 'q1' THEN ? ELSE ? END
    WHERE pending_id = ? AND status = 'pending'";
/// PostgreSQL claims and marks in one statement (one round trip, its own
/// transaction); the count says whether this caller won.
const CLAIM_PG: &str = "WITH claimed AS (
        UPDATE bundle_questions SET status = 'answered',
            response = CASE question_id WHEN 'q1' THEN ? ELSE ? END
        WHERE pending_id = ? AND status = 'pending' RETURNING pending_id),
    marked AS (
        UPDATE bundles SET reject_reason = '', responded_at = 1,
            response_delivery_pending = TRUE, may_be_active = FALSE,
            resolved_by_kind = 'user', resolved_by_id = 'alice'
        WHERE pending_id = ? AND EXISTS (SELECT 1 FROM claimed)),
    logged AS (
        INSERT INTO attempts
            (pending_id, at, principal_kind, user_id, agent_id, channel, outcome, digest)
        SELECT ?, 1, 'user', 'alice', '', 'rust', 'won', ? WHERE EXISTS (SELECT 1 FROM claimed)),
    announced AS (
        INSERT INTO events
            (event_type, at, pending_id, task_id, workspace_id, task_exists, kind, data)
        SELECT 'bundle.resolved', 1, ?, 't', 'w', TRUE, 'question', ?
        WHERE EXISTS (SELECT 1 FROM claimed))
    SELECT count(*) AS n FROM claimed";
/// What a loser needs to rebuild the winner's response (REPLAY-2): each
/// row's status and answer, and the bundle's reason and claim time, in one
/// statement (one snapshot).
const REPLAY: &str = "SELECT q.question_id, q.status, q.response, b.reject_reason, b.responded_at
    FROM bundles b JOIN bundle_questions q ON q.pending_id = b.pending_id
    WHERE b.pending_id = ?";

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[derive(diesel::QueryableByName)]
#[allow(dead_code)]
struct Replayed {
    #[diesel(sql_type = Text)]
    question_id: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    status: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    response: Option<String>,
    #[diesel(sql_type = Text)]
    reject_reason: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    responded_at: Option<i64>,
}

/// Whether the rows show a winner (every row answered).
fn replay_floor(conn: &mut AnyConnection, pending_id: &str) -> bool {
    let rows: Vec<Replayed> = Raw::new(REPLAY).text(pending_id).load(conn).unwrap();
    rows.iter().all(|r| r.response.is_some())
}

/// Racer `n`'s answers: different for every racer.
fn racer_answers(n: usize) -> ResolveRequest {
    ResolveRequest {
        answers: vec![
            AnswerInput {
                question_id: "q1".into(),
                selected_options: vec![format!("q1_opt{}", 1 + n % 2)],
                custom_text: format!("racer {n}"),
            },
            AnswerInput {
                question_id: "q2".into(),
                selected_options: vec![format!("q2_opt{}", 1 + (n / 2) % 2)],
                custom_text: String::new(),
            },
        ],
        ..ResolveRequest::default()
    }
}

/// [`racer_answers`] as clarion stores them.
fn racer_stored(n: usize) -> (String, String) {
    (
        format!(
            r#"{{"question_id":"q1","selected_options":["q1_opt{}"],"custom_text":"racer {n}"}}"#,
            1 + n % 2
        ),
        format!(
            r#"{{"question_id":"q2","selected_options":["q2_opt{}"],"custom_text":""}}"#,
            1 + (n / 2) % 2
        ),
    )
}

/// Racer `n`'s hand-written claim of `pending_id`; true if it won. Like
/// clarion's, it first reads: a racer that already sees the winner is a
/// loser without taking any lock. Otherwise it claims; a loser of the
/// claim reads the winner's stored answers, as clarion's loser replays them.
fn floor_claim(
    conn: &mut AnyConnection,
    pending_id: &str,
    n: usize,
    lost: &mut Vec<String>,
    after_first_read: &mut dyn FnMut(),
) -> bool {
    let (q1, q2) = racer_stored(n);
    let digest = digest_of(&format!("{q1}{q2}"));
    let data = resolved_data(pending_id, &q1, &q2);
    // AUD-2: a loser's entry is written after its outcome, batched like
    // clarion's appender does (see [`write_lost`]).
    let mut lost = |_: &mut AnyConnection| {
        lost.push(pending_id.to_owned());
        false
    };
    if replay_floor(conn, pending_id) {
        return lost(conn);
    }
    // The round-trip count's loser under the lock (nothing, when timed).
    after_first_read();
    let claim = |sql| Raw::new(sql).text(&q1).text(&q2).text(pending_id);
    let won = if backend_of(conn) == Backend::Sqlite {
        // Like clarion, a racer does not queue in SQLite's busy handler
        // while another holds the write lock: it reads again after the
        // same pauses, and a read that shows the winner ends its race.
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
            if replay_floor(conn, pending_id) {
                return lost(conn);
            }
        }
        let won = claim(CLAIM_ROWS).execute(conn).unwrap() > 0;
        if won {
            Raw::new(MARK_BUNDLE)
                .text(pending_id)
                .execute(conn)
                .unwrap();
            ledger_entry(pending_id, "won", &digest)
                .execute(conn)
                .unwrap();
            event("bundle.resolved", pending_id, &data)
                .execute(conn)
                .unwrap();
        }
        conn.batch_execute("COMMIT").unwrap();
        won
    } else {
        let count: Count = claim(CLAIM_PG)
            .text(pending_id)
            .text(pending_id)
            .text(&digest)
            .text(pending_id)
            .text(&data)
            .get_result(conn)
            .unwrap();
        count.n > 0
    };
    if !won {
        assert!(replay_floor(conn, pending_id));
        return lost(conn);
    }
    won
}

/// AUD-2: a floor racer's losing entries, in one insert after its block,
/// as clarion's appender writes its batches outside the claim.
fn write_lost(conn: &mut AnyConnection, lost: &[String], n: usize) {
    if lost.is_empty() {
        return;
    }
    let (q1, q2) = racer_stored(n);
    let digest = digest_of(&format!("{q1}{q2}"));
    let tuples = vec!["(?, 1, 'user', 'alice', '', 'rust', 'lost', ?)"; lost.len()].join(", ");
    let sql = format!(
        "INSERT INTO attempts (pending_id, at, principal_kind, user_id, agent_id, channel, \
         outcome, digest) VALUES {tuples}"
    );
    let mut insert = Raw::new(&sql);
    for pending_id in lost {
        insert = insert.text(pending_id).text(&digest);
    }
    insert.execute(conn).unwrap();
}

/// Medians over runs of one contended measurement.
fn median_contended(runs: &[Contended]) -> Contended {
    Contended {
        settled_per_second: median_f64(runs.iter().map(|c| c.settled_per_second).collect()),
        p50: median(runs.iter().map(|c| c.p50).collect()),
        p99: median(runs.iter().map(|c| c.p99).collect()),
    }
}

/// How many contested bundles clarion's racers settle before the floor's
/// take their turn.
const RACE_BLOCK: usize = 10;

fn bench(name: &str, url: &str, bundles: usize, contended: usize, runs: usize) {
    // Every racer gets its own connection, through clarion or by hand.
    let clarion = Clarion::builder(url)
        .pool_size(RACERS as u32 + 2)
        .open()
        .expect("open");
    clarion
        .upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
        .unwrap();
    clarion
        .upsert_task(TaskUpsert::new("t").workspace("w"))
        .unwrap();
    let alice = Principal::user("alice");
    let (mut ask, mut ask_floor) = (Vec::new(), Vec::new());
    let (mut resolve, mut resolve_floor) = (Vec::new(), Vec::new());
    let (mut race, mut race_floor) = (Vec::new(), Vec::new());
    let mut ratios: Vec<[f64; 3]> = Vec::new();
    for run in 0..runs {
        eprintln!("{name}: run {}/{runs}", run + 1);
        // ask, clarion and the floor taking turns in blocks.
        let session = format!("c{run}");
        new_session(&clarion, &session);
        let floor_session = format!("f{run}");
        new_session(&clarion, &floor_session);
        let ask_one = || clarion.ask(&two_questions(&session)).unwrap().pending_id;
        let mut ids = vec![ask_one()];
        let (turn, handle) = floor_ask_setup(&clarion, &floor_session);
        let (mut ours, mut floor) = (Duration::ZERO, Duration::ZERO);
        let mut floor_ids = Vec::with_capacity(bundles);
        while ids.len() < bundles || floor_ids.len() < bundles {
            let n = BLOCK.min(bundles - ids.len());
            let (took, block) = timed(|| (0..n).map(|_| ask_one()).collect::<Vec<_>>());
            ours += took;
            ids.extend(block);
            let n = BLOCK.min(bundles - floor_ids.len());
            let (took, block) = floor_ask(&clarion, &floor_session, &turn, &handle, n);
            floor += took;
            floor_ids.extend(block);
        }
        // The first ask (untimed, it made the handle row the floor names)
        // is left out of clarion's count.
        let asked = bundles - 1;
        ask.push(per_second(ours, asked.max(1)));
        ask_floor.push(per_second(floor, bundles));
        let ask_ratio = per_second(ours, asked.max(1)) / per_second(floor, bundles);

        // Resolve what was asked, taking turns in blocks the same way.
        let (mut ours, mut floor) = (Duration::ZERO, Duration::ZERO);
        for (block, floor_block) in ids.chunks(BLOCK).zip(floor_ids.chunks(BLOCK)) {
            ours += timed(|| {
                for id in block {
                    let resolved = clarion.resolve_bundle(&alice, id, &two_answers()).unwrap();
                    assert!(resolved.claimed);
                }
            })
            .0;
            floor += clarion
                .with_raw_connection(|conn| {
                    timed(|| {
                        for id in floor_block {
                            floor_resolve(conn, id);
                        }
                    })
                    .0
                })
                .unwrap();
        }
        resolve.push(per_second(ours, bundles));
        resolve_floor.push(per_second(floor, bundles));
        let resolve_ratio = per_second(ours, bundles) / per_second(floor, bundles);

        // Contention: every racer on the same bundle, clarion and the floor
        // taking turns every RACE_BLOCK bundles.
        let session = format!("r{run}");
        new_session(&clarion, &session);
        let label = format!("{name}: asking {} contested bundles", 2 * contended);
        let ids = ask_many(&clarion, &session, 2 * contended, &label);
        let (ours, theirs) = ids.split_at(contended);
        let (mut raced, mut raced_floor) = (Raced::default(), Raced::default());
        for (block, floor_block) in ours.chunks(RACE_BLOCK).zip(theirs.chunks(RACE_BLOCK)) {
            raced.add(contend(block, RACERS, |race, n| {
                let answers = racer_answers(n);
                race.run(|id| {
                    let resolved = clarion.resolve_bundle(&alice, id, &answers);
                    resolved.expect("racer").claimed
                })
            }));
            // Each floor racer holds one raw connection for the block.
            raced_floor.add(contend(floor_block, RACERS, |race, n| {
                clarion
                    .with_raw_connection(|conn| {
                        let mut lost = Vec::new();
                        race.run(|id| floor_claim(conn, id, n, &mut lost, &mut || {}));
                        write_lost(conn, &lost, n);
                    })
                    .unwrap()
            }));
        }
        let (raced, raced_floor) = (raced.figures(), raced_floor.figures());
        let race_ratio = raced.settled_per_second / raced_floor.settled_per_second;
        race.push(raced);
        race_floor.push(raced_floor);
        eprintln!(
            "{name}: run {}: ratios ask {ask_ratio:.3}, resolve {resolve_ratio:.3}, racers settled {race_ratio:.3}",
            run + 1,
        );
        ratios.push([ask_ratio, resolve_ratio, race_ratio]);
    }
    let (ask, ask_floor) = (median_f64(ask), median_f64(ask_floor));
    let (resolve, resolve_floor) = (median_f64(resolve), median_f64(resolve_floor));
    let (race, race_floor) = (median_contended(&race), median_contended(&race_floor));
    let per_run = |which: usize| {
        ratios
            .iter()
            .map(|r| format!("{:.2}", r[which]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("\n{name}: median of {runs} runs (ratio: clarion / floor throughput)");
    println!(
        "  ask (2 questions), {bundles} bundles:        clarion {ask:>7.0}/s   floor {ask_floor:>7.0}/s   ratio {:.2}x   (per run: {})",
        ask / ask_floor,
        per_run(0)
    );
    println!(
        "  resolve, {bundles} distinct bundles:         clarion {resolve:>7.0}/s   floor {resolve_floor:>7.0}/s   ratio {:.2}x   (per run: {})",
        resolve / resolve_floor,
        per_run(1)
    );
    println!(
        "  resolve, {RACERS} racers x {contended} bundles, settled: clarion {:>7.0}/s   floor {:>7.0}/s   ratio {:.2}x   (per run: {})",
        race.settled_per_second,
        race_floor.settled_per_second,
        race.settled_per_second / race_floor.settled_per_second,
        per_run(2)
    );
    println!(
        "    per-call latency p50: clarion {:.2} ms   floor {:.2} ms   ratio {:.2}x (time)",
        ms(race.p50),
        ms(race_floor.p50),
        race.p50.as_secs_f64() / race_floor.p50.as_secs_f64()
    );
    println!(
        "    per-call latency p99: clarion {:.2} ms   floor {:.2} ms   ratio {:.2}x (time)",
        ms(race.p99),
        ms(race_floor.p99),
        race.p99.as_secs_f64() / race_floor.p99.as_secs_f64()
    );
}

/// #41: what one operation cost the database: statements, transactions,
/// round trips ([`StatementCounter`]) and rows written ([`RowsWritten`]).
struct Cost {
    counts: Counts,
    rows: RowsWritten,
    /// Each call's SQL, cut short.
    log: Vec<String>,
}

/// A handle whose one connection is counted: everything it does, and the
/// floors run on that connection, are counted the same way.
struct Counted {
    clarion: Clarion,
    counter: StatementCounter,
}

impl Counted {
    fn open(url: &str) -> Counted {
        let counter = StatementCounter::recording();
        let clarion = Clarion::builder(url)
            .pool_size(1)
            .count_statements(counter.clone())
            .open()
            .expect("open");
        Counted { clarion, counter }
    }

    /// What `work` cost; `others` are the rows other handles wrote
    /// meanwhile, which PostgreSQL's statistics count with ours.
    fn cost_beside(&self, work: impl FnOnce() -> RowsWritten) -> Cost {
        let rows = self.clarion.rows_written().unwrap();
        let before = self.counter.counts();
        self.counter.take_log();
        let others = work();
        let counts = self.counter.counts() - before;
        let log = self.counter.take_log();
        let mut rows = self.clarion.rows_written().unwrap() - rows;
        if rows.every_connection {
            rows = rows - others;
        }
        Cost { counts, rows, log }
    }

    fn cost(&self, work: impl FnOnce()) -> Cost {
        self.cost_beside(|| {
            work();
            none_by_others()
        })
    }

    /// A loser's cost, then its ledger entry's (AUD-2: written after the
    /// outcome by the appender, in a batch): the appender waits at its
    /// failpoint until the loser's own cost is read.
    fn cost_of_loser(&self, work: impl FnOnce() -> RowsWritten) -> (Cost, Cost) {
        let gate = Gate::new();
        let db = &self.clarion;
        db.arm_failpoint(points::LEDGER_APPEND, FailAction::Block(gate.clone()));
        let own = self.cost_beside(work);
        let entry = self.cost(|| {
            gate.open();
            db.flush_ledger();
        });
        db.disarm_failpoint(points::LEDGER_APPEND);
        (own, entry)
    }
}

/// Nothing written by another handle.
fn none_by_others() -> RowsWritten {
    RowsWritten {
        every_connection: true,
        ..zero_rows()
    }
}

fn zero_rows() -> RowsWritten {
    RowsWritten {
        inserted: Some(0),
        updated: Some(0),
        hot_updated: Some(0),
        deleted: Some(0),
        ..RowsWritten::default()
    }
}

/// What `work`, run by another handle, wrote (its statistics handed in
/// before and after, on PostgreSQL).
fn written_by(other: &Clarion, work: impl FnOnce()) -> RowsWritten {
    let before = other.rows_written().unwrap();
    work();
    let after = other.rows_written().unwrap();
    let mut rows = after - before;
    if !rows.every_connection {
        // SQLite: another connection's writes are not in ours.
        rows = zero_rows();
    }
    rows
}

/// `CLARION_BENCH_COUNTS=log`: each row is followed by its calls' SQL.
fn cost_row(what: &str, by: &str, cost: &Cost) {
    let c = &cost.counts;
    let rows = &cost.rows;
    let detail = match (rows.inserted, rows.updated, rows.hot_updated, rows.deleted) {
        (Some(i), Some(u), Some(h), Some(d)) => format!("ins {i} upd {u} (hot {h}) del {d}"),
        _ => "total_changes()".to_owned(),
    };
    println!(
        "  {what:<34} {by:<7} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5}   {:>3}  ({detail})",
        c.round_trips,
        c.calls,
        c.statements,
        c.transactions,
        c.outside_transactions,
        c.prepares,
        rows.total
    );
    if std::env::var("CLARION_BENCH_COUNTS").is_ok_and(|counts| counts == "log") {
        for call in &cost.log {
            println!("      {}", call.chars().take(110).collect::<String>());
        }
    }
}

/// #41 point 1: the round trips, statements, transactions and rows written
/// of each operation, clarion's and its floor's, once each in steady state
/// (every statement already prepared: each is run once before).
///
/// Clarion runs on a handle with one pooled connection, counted by the
/// test hook [`StatementCounter`]; the floors run on that same connection
/// (`with_raw_connection`), so they are counted the same way: the PostgreSQL
/// floors' one-batch transactions count as one round trip of several
/// statements. A loser under the lock is forced with the failpoint after
/// the claim's first read (clarion) or the floor's hook at the same place:
/// another handle wins meanwhile (its rows left out).
fn count_round_trips(name: &str, url: &str) {
    let us = Counted::open(url);
    let other = Clarion::builder(url).pool_size(1).open().expect("open");
    let db = &us.clarion;
    db.upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t").workspace("w")).unwrap();
    new_session(db, "c");
    new_session(db, "f");
    let alice = Principal::user("alice");
    let ask = || db.ask(&two_questions("c")).unwrap().pending_id;
    let list = || {
        let page = db
            .list_pending(
                &alice,
                &ListRequest {
                    limit: Some(50),
                    ..ListRequest::default()
                },
            )
            .unwrap();
        assert_eq!(page.bundles.len(), 50);
    };
    // Untimed warm-up: every statement measured below runs once first.
    let warm: Vec<String> = (0..60).map(|_| ask()).collect();
    db.get_bundle(&alice, &warm[0]).unwrap();
    list();
    assert!(
        db.resolve_bundle(&alice, &warm[0], &two_answers())
            .unwrap()
            .claimed
    );
    assert!(
        !db.resolve_bundle(&alice, &warm[0], &racer_answers(1))
            .unwrap()
            .claimed
    );
    assert!(db.cancel_bundle(&alice, &warm[1]).unwrap().claimed);
    db.flush_ledger();
    let lose_under_lock = |id: &str| {
        let gate = Gate::new();
        db.arm_failpoint(
            points::RESOLVE_AFTER_FIRST_READ,
            FailAction::Block(gate.clone()),
        );
        let costs = us.cost_of_loser(|| {
            std::thread::scope(|scope| {
                let loser = scope.spawn(|| db.resolve_bundle(&alice, id, &racer_answers(1)));
                assert!(gate.wait_arrival(Duration::from_secs(10)));
                let others = written_by(&other, || {
                    assert!(
                        other
                            .resolve_bundle(&alice, id, &two_answers())
                            .unwrap()
                            .claimed
                    );
                });
                gate.open();
                assert!(!loser.join().unwrap().unwrap().claimed);
                others
            })
        });
        db.disarm_failpoint(points::RESOLVE_AFTER_FIRST_READ);
        costs
    };
    lose_under_lock(&warm[2]);
    db.flush_ledger();

    // The floors' warm-up, on the counted connection.
    let (turn, handle) = floor_ask_setup(db, "f");
    let floor_ids = floor_ask(db, "f", &turn, &handle, 8).1;
    let raw = |work: &mut dyn FnMut(&mut AnyConnection)| db.with_raw_connection(work).unwrap();
    let floor_wins = |id: &str| {
        other
            .with_raw_connection(|conn| {
                assert!(floor_claim(conn, id, 2, &mut Vec::new(), &mut || {}))
            })
            .unwrap()
    };
    let floor_loses_under_lock = |id: &str| {
        let mut lost = Vec::new();
        let mut others = zero_rows();
        raw(&mut |conn| {
            let won = floor_claim(conn, id, 1, &mut lost, &mut || {
                others = written_by(&other, || floor_wins(id));
            });
            assert!(!won);
        });
        (lost, others)
    };
    raw(&mut |conn| floor_resolve(conn, &floor_ids[0]));
    raw(&mut |conn| {
        assert!(!floor_claim(
            conn,
            &floor_ids[0],
            1,
            &mut Vec::new(),
            &mut || {}
        ))
    });
    raw(&mut |conn| {
        assert!(floor_claim(
            conn,
            &floor_ids[1],
            1,
            &mut Vec::new(),
            &mut || {}
        ))
    });
    let (lost, _) = floor_loses_under_lock(&floor_ids[2]);
    raw(&mut |conn| write_lost(conn, &lost, 1));

    // Measured: each once, in steady state.
    let mut asked = String::new();
    let ask_cost = us.cost(|| asked = ask());
    let get_cost = us.cost(|| {
        db.get_bundle(&alice, &asked).unwrap();
    });
    let list_cost = us.cost(list);
    let won = us.cost(|| {
        assert!(
            db.resolve_bundle(&alice, &asked, &two_answers())
                .unwrap()
                .claimed
        );
    });
    let (settled, settled_ledger) = us.cost_of_loser(|| {
        assert!(
            !db.resolve_bundle(&alice, &asked, &racer_answers(1))
                .unwrap()
                .claimed
        );
        none_by_others()
    });
    let (under_lock, under_lock_ledger) = lose_under_lock(&warm[3]);
    let cancelled = us.cost(|| {
        assert!(db.cancel_bundle(&alice, &warm[4]).unwrap().claimed);
    });

    let floor_ask_cost = us.cost(|| {
        floor_ask(db, "f", &turn, &handle, 1);
    });
    let floor_won = us.cost(|| raw(&mut |conn| floor_resolve(conn, &floor_ids[3])));
    let floor_raced = us.cost(|| {
        raw(&mut |conn| {
            assert!(floor_claim(
                conn,
                &floor_ids[4],
                1,
                &mut Vec::new(),
                &mut || {}
            ))
        })
    });
    let mut lost = Vec::new();
    let floor_settled = us.cost(|| {
        raw(&mut |conn| assert!(!floor_claim(conn, &floor_ids[4], 1, &mut lost, &mut || {})))
    });
    let floor_settled_ledger = us.cost(|| raw(&mut |conn| write_lost(conn, &lost, 1)));
    let mut lost = Vec::new();
    let floor_under_lock = us.cost_beside(|| {
        let (lost_here, others) = floor_loses_under_lock(&floor_ids[5]);
        lost = lost_here;
        others
    });
    let floor_under_lock_ledger = us.cost(|| raw(&mut |conn| write_lost(conn, &lost, 1)));

    let pooled = url.contains("pooler=transaction");
    println!(
        "\n{name}{}: round trips per operation (#41), each once after a warm-up",
        if pooled { " (pooler mode)" } else { "" }
    );
    println!(
        "  {:<34} {:<7} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5}   {:>3}",
        "operation", "by", "trips", "calls", "stmts", "txs", "auto", "prep", "rows"
    );
    cost_row("ask (2 questions)", "clarion", &ask_cost);
    cost_row("", "floor", &floor_ask_cost);
    cost_row("resolve_bundle, winner", "clarion", &won);
    cost_row("", "floor", &floor_won);
    cost_row("  (racers' floor winner)", "floor", &floor_raced);
    cost_row("resolve, loser: first read settled", "clarion", &settled);
    cost_row(
        "  its ledger entry (appender batch)",
        "clarion",
        &settled_ledger,
    );
    cost_row("", "floor", &floor_settled);
    cost_row("  its ledger entry (batch)", "floor", &floor_settled_ledger);
    cost_row(
        "resolve, loser: lost under the lock",
        "clarion",
        &under_lock,
    );
    cost_row(
        "  its ledger entry (appender batch)",
        "clarion",
        &under_lock_ledger,
    );
    cost_row("", "floor", &floor_under_lock);
    cost_row(
        "  its ledger entry (batch)",
        "floor",
        &floor_under_lock_ledger,
    );
    cost_row("cancel_bundle", "clarion", &cancelled);
    cost_row("get_bundle", "clarion", &get_cost);
    cost_row("list_pending, 50, scoped user", "clarion", &list_cost);
    println!(
        "  (trips: round trips; calls: statements run or batches sent; stmts: statements;\n   \
         txs: BEGIN..COMMIT; auto: statements outside one; prep: statements prepared;\n   \
         rows: rows inserted, updated or deleted)"
    );
}

fn main() {
    let bundles = common::setting("CLARION_BENCH_BUNDLES", 2000).max(1);
    let contended = common::setting("CLARION_BENCH_CONTENDED", 100).max(1);
    let runs = common::runs(5);
    let counting = std::env::var("CLARION_BENCH_COUNTS").unwrap_or_default();
    for (name, place_for) in common::backends() {
        if counting != "0" {
            let place = place_for("counts");
            count_round_trips(name, &place.url);
        }
        if counting == "only" || counting == "log" {
            continue;
        }
        let place = place_for("resolve");
        bench(name, &place.url, bundles, contended, runs);
    }
    common::print_peak_memory();
}
