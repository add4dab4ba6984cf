//! CLAIM-1..5, REL-1: any number of racers, one winner; the claim
//! serializes with session-state changes and new turns; no code path but
//! the claim writes a resolution.

use std::sync::{Arc, Barrier};

use clarion::{
    envelope, AnswerInput, BundleStatus, Clarion, Principal, ResolveRequest, Resolved, TaskUpsert,
    WorkspaceUpsert,
};

use crate::support::*;

/// Thread `n`'s answer to a two-question bundle: different for every n.
fn answer_for(n: usize) -> ResolveRequest {
    ResolveRequest {
        answers: vec![
            AnswerInput {
                question_id: "q1".into(),
                selected_options: vec![format!("q1_opt{}", 1 + n % 2)],
                custom_text: format!("racer {n}"),
            },
            AnswerInput {
                question_id: "q2".into(),
                selected_options: vec![],
                custom_text: String::new(),
            },
        ],
        ..ResolveRequest::default()
    }
}

/// Resolves one bundle from `racers` threads at once, spread over the given
/// handles; returns every result.
fn race(handles: &[Clarion], pending_id: &str, racers: usize) -> Vec<Resolved> {
    let start = Arc::new(Barrier::new(racers));
    let threads: Vec<_> = (0..racers)
        .map(|n| {
            let handle = handles[n % handles.len()].clone();
            let start = start.clone();
            let pending_id = pending_id.to_owned();
            std::thread::spawn(move || {
                start.wait();
                handle.resolve_bundle(&alice(), &pending_id, &answer_for(n))
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect()
}

dual_backend!(claim_5_thirty_two_racers_one_winner);

/// CLAIM-5, REL-1: 32 threads on two handles, 50 bundles: exactly one
/// claim each, and every result carries the stored response byte for byte.
fn claim_5_thirty_two_racers_one_winner(db: &TestDb) {
    let second = db.reopen();
    let handles = [db.clarion.clone(), second];
    let session = mirror(db, "race", "alice");
    for round in 0..50 {
        let pending_id = ask(db, &session, 2);
        let results = race(&handles, &pending_id, 32);
        let winners = results.iter().filter(|r| r.claimed).count();
        assert_eq!(winners, 1, "round {round}");
        let stored = db
            .get_bundle(&Principal::System, &pending_id)
            .unwrap()
            .response
            .unwrap();
        let stored_json = envelope::response(&stored).to_string();
        for result in &results {
            assert_eq!(
                envelope::response(&result.response).to_string(),
                stored_json,
                "round {round}"
            );
        }
        // The stored answer is exactly what the winning racer submitted:
        // each racer's text names it, and its option follows from it.
        let winner = results.iter().find(|r| r.claimed).unwrap();
        let text = &winner.response.answers[0].custom_text;
        let n: usize = text
            .strip_prefix("racer ")
            .and_then(|n| n.parse().ok())
            .unwrap();
        let submitted = answer_for(n);
        assert_eq!(stored.answers.len(), 2, "round {round}");
        for (stored, sent) in stored.answers.iter().zip(&submitted.answers) {
            assert_eq!(
                (
                    &stored.question_id,
                    &stored.selected_options,
                    &stored.custom_text
                ),
                (&sent.question_id, &sent.selected_options, &sent.custom_text),
                "round {round}: the stored answer is not racer {n}'s submission"
            );
        }
    }
}

/// Runs the claim's row statement by hand on a raw connection; returns
/// the ids it changed.
fn run_claim_rows(db: &TestDb, pending_id: &str) -> Vec<i64> {
    use clarion::test_hooks::schema::bundle_questions;
    use clarion::test_hooks::AnyConnection;
    use clarion::test_hooks::{active_in_the_write, claim_rows_statement, RowWrite};
    use diesel::prelude::*;
    let row_ids: Vec<i64> = db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .select(bundle_questions::id)
            .load(conn)
            .unwrap()
    });
    assert!(row_ids.len() <= 4);
    let writes: clarion::test_hooks::RowSlots =
        std::array::from_fn(|place| match row_ids.get(place) {
            Some(&row_id) => RowWrite {
                row_id,
                response: Some(format!("{{\"row\":{row_id}}}")),
            },
            None => RowWrite {
                row_id: 0,
                response: None,
            },
        });
    // The guard evaluated by the write itself, as PostgreSQL's claim runs it.
    let system = clarion::test_hooks::Scope::of(&clarion::Principal::System).unwrap();
    let statement = clarion::test_hooks::returning(
        claim_rows_statement(
            pending_id,
            "answered",
            &writes,
            active_in_the_write(
                &system,
                pending_id,
                clarion::Clock::now(&*db.clock).as_micros(),
            ),
        ),
        clarion::test_hooks::schema::bundle_questions::id,
    );
    db.raw(|conn| match conn {
        AnyConnection::Sqlite(c) => statement.load::<i64>(c).unwrap(),
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(c) => statement.load::<i64>(c).unwrap(),
    })
}

dual_backend!(claim_1_the_write_itself_is_guarded);

/// CLAIM-1: with the guard PostgreSQL's claim puts in its write, the one
/// statement that writes a resolution changes nothing once ACT-1 fails
/// for the bundle (its turn superseded, its session ended), and changes
/// exactly the pending rows while ACT-1 holds. (SQLite's claim checks
/// ACT-1 in its read under the write lock; the fragment is the same.)
fn claim_1_the_write_itself_is_guarded(db: &TestDb) {
    let session = mirror(db, "s", "alice");
    let superseded = ask(db, &session, 2);
    db.begin_turn(&session).unwrap();
    assert_eq!(run_claim_rows(db, &superseded), Vec::<i64>::new());
    assert_eq!(
        rows::statuses(db, &superseded),
        [Some("pending".to_owned()), Some("pending".to_owned())]
    );

    let ended = ask(db, &session, 1);
    rows::force_state(db, &session, "completed");
    assert_eq!(run_claim_rows(db, &ended), Vec::<i64>::new());
    assert_eq!(rows::statuses(db, &ended), [Some("pending".to_owned())]);

    rows::force_state(db, &session, "running");
    let claimed = run_claim_rows(db, &ended);
    assert_eq!(claimed.len(), 1);
    assert_eq!(rows::statuses(db, &ended), [Some("answered".to_owned())]);
    assert_eq!(
        run_claim_rows(db, &ended),
        Vec::<i64>::new(),
        "a second claim finds nothing pending"
    );
}

dual_backend!(claim_3_more_rows_than_one_statement_names);

/// CLAIM-3: a bundle written by hand with more rows than one claim
/// statement names (ROWS_PER_STATEMENT) is still claimed whole: every
/// pending row takes the resolution, and a row already terminal stays
/// as it was, wherever it sits.
fn claim_3_more_rows_than_one_statement_names(db: &TestDb) {
    use rows::Row;
    let session = mirror(db, "many", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "wide", &session, &turn, "t-many");
    let ids = ["q1", "q2", "q3", "q4", "q5", "q6"];
    for (index, question_id) in ids.iter().enumerate() {
        let status = if index == 1 {
            Some("expired")
        } else {
            Some("pending")
        };
        Row::new("wide", &session, &turn)
            .question_id(question_id)
            .index(Some(index as i32))
            .status(status)
            .insert(db);
    }
    let cancelled = db.cancel_bundle(&Principal::System, "wide").unwrap();
    assert!(cancelled.claimed);
    let mut expected = vec![Some("cancelled".to_owned()); 6];
    expected[1] = Some("expired".to_owned());
    assert_eq!(rows::statuses(db, "wide"), expected);
    let again = db.cancel_bundle(&Principal::System, "wide").unwrap();
    assert!(!again.claimed);
}

/// CLAIM-1: the structural guard. A resolution status is written in exactly
/// one place: `claim_rows_statement` in src/domain/claim/statements.rs. Every other write of
/// `bundle_questions::status` writes `pending` (ask) or `expired` (expiry).
#[test]
fn claim_1_only_the_claim_writes_a_resolution_status() {
    let src = root().join("src");
    let mut writers = Vec::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (line_no, line) in text.lines().enumerate() {
                // Filters read a status; only a `set` writes one.
                if line.contains("bundle_questions::status.eq(") && !line.contains(".filter(") {
                    writers.push(format!(
                        "{}:{}: {}",
                        path.file_name().unwrap().to_string_lossy(),
                        line_no + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    let expected = [
        "ask.rs",
        "bundle_questions::status.eq(QuestionStatus::PENDING_WORD)",
        "lifecycle.rs",
        "bundle_questions::status.eq(expired)",
        "statements.rs",
        "bundle_questions::status.eq(status)",
    ];
    assert_eq!(
        writers.len(),
        3,
        "unexpected status writers:\n{}",
        writers.join("\n")
    );
    for pair in expected.chunks(2) {
        assert!(
            writers
                .iter()
                .any(|w| w.starts_with(pair[0]) && w.contains(pair[1])),
            "missing {pair:?} in:\n{}",
            writers.join("\n")
        );
    }
    let claim = ["statements.rs", "sqlite.rs", "postgres.rs"]
        .map(|file| std::fs::read_to_string(root().join("src/domain/claim").join(file)).unwrap())
        .concat();
    assert_eq!(
        claim.matches("pub fn claim_rows_statement<").count(),
        1,
        "defined once"
    );
    // Called by the claim module only: SQLite's one row writer (claims
    // and deadline settlements alike), PostgreSQL's claim and its
    // settlement (EXP-3: the claim guarded by "due").
    assert_eq!(
        claim.matches("claim_rows_statement(").count(),
        3,
        "called three times in the claim module"
    );
    assert_eq!(
        claim
            .matches("claim_rows_statement(pending_id, status, &")
            .count()
            + claim
                .matches("claim_rows_statement(marks.pending_id, marks.status, &")
                .count(),
        3,
        "called by the claim and the settlement only"
    );
    for file in ["domain", "doors"] {
        let mut stack = vec![root().join("src").join(file)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if !path.ends_with("claim") {
                        stack.push(path);
                    }
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    !text.contains("claim_rows_statement("),
                    "{} writes a resolution outside the claim",
                    path.display()
                );
            }
        }
    }
    // The raw-SQL fixtures write statuses too, but only behind the test-hooks feature.
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    assert!(lib.contains("#[cfg(feature = \"test-hooks\")]\n#[doc(hidden)]\npub mod test_hooks;"));
}

#[cfg(feature = "postgres")]
mod postgres_serialization {
    use super::*;
    use clarion::test_hooks::{points, FailAction, Gate};
    use diesel::prelude::*;
    use diesel::sql_types::BigInt;
    use std::time::Duration;

    #[derive(QueryableByName)]
    struct Waiting {
        #[diesel(sql_type = BigInt)]
        waiting: i64,
    }

    /// Opens the gate even when an assertion fails, so a paused claim ends
    /// and the schema can be dropped.
    struct OpenOnDrop(Arc<Gate>);
    impl Drop for OpenOnDrop {
        fn drop(&mut self) {
            self.0.open();
        }
    }

    /// A handle whose connections carry `application_name`, so a test can
    /// tell its backends from those of every other test sharing the server.
    fn named_handle(db: &TestDb, application_name: &str) -> Clarion {
        Clarion::builder(&format!("{}&application_name={application_name}", db.url))
            .clock(db.clock.clone())
            .ids(db.ids.clone())
            .open()
            .unwrap()
    }

    /// Waits until a backend of the handle named `application_name` (the
    /// competitor, and no other test's connection) is blocked on a lock.
    fn wait_for_lock_waiter(db: &TestDb, application_name: &str) {
        eventually(
            Duration::from_secs(30),
            "the competing transaction blocked on the session lock",
            || {
                let waiting = db.raw(|conn| {
                    diesel::sql_query(
                        "SELECT count(*) AS waiting FROM pg_stat_activity \
                         WHERE datname = current_database() AND wait_event_type = 'Lock' \
                         AND application_name = $1",
                    )
                    .bind::<diesel::sql_types::Text, _>(application_name)
                    .get_result::<Waiting>(conn)
                    .unwrap()
                    .waiting
                });
                waiting > 0
            },
        );
    }

    /// A claim of a fresh two-question bundle, running on its own thread and
    /// paused after its read found the bundle active: it holds the session
    /// lock and has written nothing yet.
    struct PausedClaim {
        session: String,
        pending_id: String,
        gate: Arc<Gate>,
        claimer: std::thread::JoinHandle<clarion::Result<Resolved>>,
        _open_on_drop: OpenOnDrop,
    }

    fn pause_claim(db: &TestDb) -> PausedClaim {
        let session = mirror(db, "s", "alice");
        let pending_id = ask(db, &session, 2);
        let gate = Gate::new();
        db.arm_failpoint(points::CLAIM_BEFORE_WRITES, FailAction::Block(gate.clone()));
        let claimer = {
            let db = db.clarion.clone();
            let pending_id = pending_id.clone();
            std::thread::spawn(move || db.resolve_bundle(&alice(), &pending_id, &answer_for(0)))
        };
        assert!(
            gate.wait_arrival(Duration::from_secs(10)),
            "claim never finished its read"
        );
        PausedClaim {
            session,
            pending_id,
            _open_on_drop: OpenOnDrop(gate.clone()),
            gate,
            claimer,
        }
    }

    /// Pauses a claim before its writes, starts `competitor` on another
    /// thread, and checks it waits for the claim to commit.
    fn claim_paused_while(
        db: &TestDb,
        competitor: impl FnOnce(Clarion, String) + Send + 'static,
    ) -> String {
        let paused = pause_claim(db);
        static COMPETITORS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let name = format!(
            "competitor_{}_{}",
            std::process::id(),
            COMPETITORS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let other = named_handle(db, &name);
        let session = paused.session.clone();
        let competing = std::thread::spawn(move || competitor(other, session));
        wait_for_lock_waiter(db, &name);
        assert!(
            !competing.is_finished(),
            "the competitor committed while the claim was open"
        );
        paused.gate.open();
        let resolved = paused.claimer.join().unwrap().unwrap();
        competing.join().unwrap();
        assert!(resolved.claimed);
        paused.pending_id
    }

    /// CLAIM-1: the guard in PostgreSQL's write re-checks ACT-1 after the
    /// read. A writer that takes no session lock (here the host corrupting a
    /// row by hand: a question moved to another turn, ACT-1.4) changes the
    /// bundle while the claim is paused between its read and its writes:
    /// nothing is claimed, the rows stay pending, and the caller is told the
    /// bundle is no longer active.
    #[test]
    fn claim_1_the_write_rechecks_activeness_after_the_read() {
        use clarion::test_hooks::schema::bundle_questions;
        let Some(db) = crate::support::postgres() else {
            return;
        };
        let paused = pause_claim(&db);
        let pending_id = paused.pending_id.clone();
        let moved = db.raw(|conn| {
            diesel::update(
                bundle_questions::table
                    .filter(bundle_questions::pending_id.eq(&pending_id))
                    .filter(bundle_questions::question_id.eq("q2")),
            )
            .set(bundle_questions::turn_id.eq("elsewhere"))
            .execute(conn)
            .unwrap()
        });
        assert_eq!(moved, 1);
        paused.gate.open();
        let outcome = paused.claimer.join().unwrap();
        assert!(
            matches!(outcome, Err(clarion::Error::NoLongerActive)),
            "{outcome:?}"
        );
        assert_eq!(
            rows::statuses(&db, &pending_id),
            [Some("pending".to_owned()), Some("pending".to_owned())]
        );
    }

    /// CLAIM-4: a transaction making the session terminal waits for an open
    /// claim; the resolution is never committed against an ended session,
    /// and expiry then finds nothing pending.
    #[test]
    fn claim_4_claim_serializes_with_session_ending() {
        let Some(db) = crate::support::postgres() else {
            return;
        };
        let pending_id = claim_paused_while(&db, |other, session| {
            other
                .set_session_state(&session, clarion::SessionState::Completed)
                .unwrap();
        });
        assert_eq!(
            rows::statuses(&db, &pending_id),
            [Some("answered".to_owned()), Some("answered".to_owned())]
        );
    }

    /// CLAIM-4: `begin_turn` waits for an open claim, so a resolution is
    /// never committed against a turn that was superseded meanwhile.
    #[test]
    fn claim_4_claim_serializes_with_begin_turn() {
        let Some(db) = crate::support::postgres() else {
            return;
        };
        let pending_id = claim_paused_while(&db, |other, session| {
            other.begin_turn(&session).unwrap();
        });
        let detail = db.get_bundle(&Principal::System, &pending_id).unwrap();
        assert_eq!(detail.status, clarion::BundleStatus::Answered);
    }
}

dual_backend!(
    claim_4_racers_settle_under_a_serializable_server_default,
    claim_4_a_move_waits_for_a_claim_in_flight,
    claim_4_an_owner_change_waits_for_a_claim_in_flight
);

/// CLAIM-4: write transactions state READ COMMITTED. With the server's
/// default isolation set to SERIALIZABLE (PostgreSQL; SQLite has one
/// isolation), 32 racers still give one winner and byte-identical
/// replays, and none fails with an internal error.
fn claim_4_racers_settle_under_a_serializable_server_default(db: &TestDb) {
    let url = match db.backend() {
        clarion::Backend::Postgres => {
            format!(
                "{}%20-c%20default_transaction_isolation%3Dserializable",
                db.url
            )
        }
        clarion::Backend::Sqlite => db.url.clone(),
    };
    let strict = Clarion::builder(&url)
        .clock(db.clock.clone())
        .ids(db.ids.clone())
        .open()
        .unwrap();
    let handles = [
        strict.clone(),
        Clarion::builder(&url)
            .clock(db.clock.clone())
            .ids(db.ids.clone())
            .open()
            .unwrap(),
    ];
    let session = mirror(db, "strict", "alice");
    for round in 0..10 {
        let pending_id = ask(&strict, &session, 2);
        let results = race(&handles, &pending_id, 32);
        assert_eq!(
            results.iter().filter(|r| r.claimed).count(),
            1,
            "round {round}"
        );
        let winner = results.iter().find(|r| r.claimed).unwrap();
        for result in &results {
            assert_eq!(
                envelope::response(&result.response).to_string(),
                envelope::response(&winner.response).to_string()
            );
        }
    }
}

/// CLAIM-4: a task move serializes with a claim in flight. A claim
/// paused before its writes (holding its session's lock on PostgreSQL,
/// the write lock on SQLite) keeps the move waiting until it commits;
/// the move then takes effect, and a later claim by the old owner is
/// not-found.
fn claim_4_a_move_waits_for_a_claim_in_flight(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 1);
    db.upsert_workspace(WorkspaceUpsert::new("w-bob").owner("bob"))
        .unwrap();
    a_change_waits_for_a_claim_in_flight(
        db,
        [&first, &second],
        "the move committed while a claim on its task was in flight",
        |mover| mover.upsert_task(TaskUpsert::new("t-a").workspace("w-bob")),
    );
}

/// CLAIM-4: a workspace owner change serializes with a claim in flight
/// the same way: it waits for the paused claim, then takes effect.
fn claim_4_an_owner_change_waits_for_a_claim_in_flight(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 1);
    a_change_waits_for_a_claim_in_flight(
        db,
        [&first, &second],
        "the owner change committed while a claim in its workspace was in flight",
        |mover| mover.upsert_workspace(WorkspaceUpsert::new("w-a").owner("bob")),
    );
}

/// CLAIM-4's race, for a `change` that takes alice's bundles `first` and
/// `second` away from her and gives them to bob: alice's claim of `first`,
/// paused before its writes, keeps `change` (on a handle of its own)
/// waiting until the claim commits and wins; `change` then takes effect,
/// so alice's later claim of `second` is not-found and bob sees it
/// pending. `committed_early` is the failure when `change` did not wait.
fn a_change_waits_for_a_claim_in_flight(
    db: &TestDb,
    [first, second]: [&str; 2],
    committed_early: &str,
    change: impl FnOnce(&Clarion) -> clarion::Result<()> + Send + 'static,
) {
    use clarion::test_hooks::{points, FailAction, Gate};
    let claimer = db.reopen();
    // Opened before the claim holds any lock (opening migrates).
    let mover = db.reopen();
    let gate = Gate::new();
    claimer.arm_failpoint(points::CLAIM_BEFORE_WRITES, FailAction::Block(gate.clone()));
    let claim = {
        let (claimer, first) = (claimer.clone(), first.to_owned());
        std::thread::spawn(move || claimer.resolve_bundle(&alice(), &first, &one_answer("mine")))
    };
    assert!(
        gate.wait_arrival(std::time::Duration::from_secs(10)),
        "the claim reached its writes"
    );
    let (moved_tx, moved) = std::sync::mpsc::channel();
    let move_thread = std::thread::spawn(move || {
        let outcome = change(&mover);
        let _ = moved_tx.send(());
        outcome
    });
    let move_waited = moved
        .recv_timeout(std::time::Duration::from_millis(500))
        .is_err();
    gate.open();
    assert!(move_waited, "{committed_early}");
    let claimed = claim.join().unwrap().unwrap();
    assert!(claimed.claimed, "the claim that held the lock wins");
    move_thread.join().unwrap().unwrap();
    claimer.disarm_failpoint(points::CLAIM_BEFORE_WRITES);
    let late = db.resolve_bundle(&alice(), second, &one_answer("too late"));
    assert!(matches!(late, Err(clarion::Error::NotFound(_))), "{late:?}");
    assert_eq!(
        db.get_bundle(&bob(), second).unwrap().status,
        BundleStatus::Pending
    );
}

/// Holds, on a connection of its own, the lock a claim queues for: on
/// SQLite the database's write lock (`BEGIN IMMEDIATE` on another
/// connection to the same file), on PostgreSQL the session row's lock
/// (`SELECT … FOR UPDATE` in an open transaction). Runs `body` while it is
/// held, then releases it.
fn holding_the_claim_lock<T>(db: &TestDb, session: &str, body: impl FnOnce() -> T) -> T {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    match db.backend() {
        clarion::Backend::Sqlite => {
            let path = db.url.strip_prefix("sqlite://").unwrap();
            let mut holder = diesel::SqliteConnection::establish(path).unwrap();
            holder.batch_execute("BEGIN IMMEDIATE").unwrap();
            let value = body();
            holder.batch_execute("ROLLBACK").unwrap();
            value
        }
        #[cfg(feature = "postgres")]
        clarion::Backend::Postgres => {
            let mut holder = diesel::PgConnection::establish(db.server_url()).unwrap();
            holder
                .batch_execute(&format!(
                    "BEGIN; SELECT id FROM sessions WHERE id = '{session}' FOR UPDATE"
                ))
                .unwrap();
            let value = body();
            holder.batch_execute("ROLLBACK").unwrap();
            value
        }
        #[cfg(not(feature = "postgres"))]
        _ => unreachable!("{session}"),
    }
}

/// Runs `call` on another thread and returns its result, or `None` if it
/// did not return within `limit` (the thread is then left to finish).
fn within<T: Send + 'static>(
    limit: std::time::Duration,
    call: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sent.send(call());
    });
    received.recv_timeout(limit).ok()
}

dual_backend!(
    ops_4_a_loser_learns_the_winner_without_the_write_lock,
    ops_4_an_active_bundle_is_claimed_only_under_the_lock
);

/// OPS-4, REPLAY-1: a resolve of a bundle that is already resolved
/// learns the winner from a plain read. While another connection holds
/// the lock every claim queues for (SQLite's write lock, PostgreSQL's
/// session row lock), a loser still returns at once, with
/// `claimed: false` and the winner's response byte for byte; and the
/// checks before the loser branch keep their order: an invisible bundle
/// is not-found byte-identically to an absent one (AUTH-5), and a
/// malformed request is a validation error, not the winner (VAL-8).
fn ops_4_a_loser_learns_the_winner_without_the_write_lock(db: &TestDb) {
    use std::time::Duration;
    let session = mirror(db, "fast", "alice");
    let pending_id = ask(db, &session, 2);
    let winner = db
        .resolve_bundle(&alice(), &pending_id, &answer_for(7))
        .unwrap();
    assert!(winner.claimed);
    let winner_json = envelope::response(&winner.response).to_string();
    let limit = Duration::from_secs(2);
    let (loser, foreign, absent, malformed, cancelled) =
        holding_the_claim_lock(db, &session, || {
            let call = |principal: Principal, pending_id: &str, request: ResolveRequest| {
                let (handle, pending_id) = (db.clarion.clone(), pending_id.to_owned());
                within(limit, move || {
                    handle.resolve_bundle(&principal, &pending_id, &request)
                })
                .expect("a resolve of a settled bundle waited for the claim lock")
            };
            let cancel = {
                let (handle, pending_id) = (db.clarion.clone(), pending_id.clone());
                within(limit, move || handle.cancel_bundle(&alice(), &pending_id))
                    .expect("a cancel of a settled bundle waited for the claim lock")
            };
            (
                call(alice(), &pending_id, answer_for(8)),
                call(bob(), &pending_id, answer_for(8)),
                call(alice(), "no-such-bundle", answer_for(8)),
                call(alice(), &pending_id, one_answer("only one of two")),
                cancel,
            )
        });
    let loser = loser.unwrap();
    assert!(!loser.claimed);
    assert_eq!(loser.status, winner.status);
    assert_eq!(envelope::response(&loser.response).to_string(), winner_json);
    let cancelled = cancelled.unwrap();
    assert!(!cancelled.claimed);
    assert_eq!(
        envelope::response(&cancelled.response).to_string(),
        winner_json
    );
    let (foreign, absent) = (foreign.unwrap_err(), absent.unwrap_err());
    assert!(
        matches!(foreign, clarion::Error::NotFound(_)),
        "{foreign:?}"
    );
    assert!(matches!(absent, clarion::Error::NotFound(_)), "{absent:?}");
    let (foreign, absent) = (envelope::error(&foreign), envelope::error(&absent));
    assert_eq!(
        (foreign.status, foreign.body_text()),
        (absent.status, absent.body_text())
    );
    let malformed = malformed.unwrap_err();
    assert!(
        matches!(malformed, clarion::Error::Validation(_)),
        "{malformed:?}"
    );
    // The stored answer is still the winner's.
    let stored = db
        .get_bundle(&Principal::System, &pending_id)
        .unwrap()
        .response
        .unwrap();
    assert_eq!(envelope::response(&stored).to_string(), winner_json);
}

/// OPS-4, CLAIM-2: the first read only ever sends a caller to the
/// replay. A bundle still active when read goes to the claim, which
/// waits for the lock and decides under it: while another connection
/// holds the claim lock, a resolve of an active bundle does not return
/// (it neither claims nor gives up), and once the lock is released it
/// claims the bundle.
fn ops_4_an_active_bundle_is_claimed_only_under_the_lock(db: &TestDb) {
    use std::time::Duration;
    let session = mirror(db, "slow", "alice");
    let pending_id = ask(db, &session, 2);
    let (sent, received) = std::sync::mpsc::channel();
    let claimer = holding_the_claim_lock(db, &session, || {
        let (handle, pending_id) = (db.clarion.clone(), pending_id.clone());
        let claimer = std::thread::spawn(move || {
            let outcome = handle.resolve_bundle(&alice(), &pending_id, &answer_for(3));
            let _ = sent.send(());
            outcome
        });
        assert!(
            received.recv_timeout(Duration::from_millis(500)).is_err(),
            "an active bundle was settled without the claim lock"
        );
        claimer
    });
    let claimed = claimer.join().unwrap().unwrap();
    assert!(claimed.claimed);
}

dual_backend!(claim_4_the_session_lock_takes_any_session_id_literally);

/// CLAIM-4, REL-3: the claim's transaction names the bundle's session
/// in the statement that locks it (PostgreSQL sends it with `BEGIN`);
/// quotes and backslashes in the session id are inert there, and the
/// claim locks that session, not another.
fn claim_4_the_session_lock_takes_any_session_id_literally(db: &TestDb) {
    let session = mirror(db, r"o'b\'; DROP TABLE bundles; --\", "alice");
    let pending_id = ask(db, &session, 2);
    let won = db
        .resolve_bundle(&alice(), &pending_id, &answer_for(1))
        .unwrap();
    assert!(won.claimed);
    let again = db
        .resolve_bundle(&alice(), &pending_id, &answer_for(2))
        .unwrap();
    assert!(!again.claimed);
    assert_eq!(
        envelope::response(&again.response),
        envelope::response(&won.response)
    );
    assert_eq!(
        rows::statuses(db, &pending_id),
        [Some("answered".to_owned()), Some("answered".to_owned())]
    );
}
