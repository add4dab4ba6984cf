//! #41 (OPS-2, OPS-4: where a write's time goes): the test hook that counts
//! what an operation sends to the database — round trips, statements,
//! transactions — and the rows it writes (`StatementCounter`,
//! `Clarion::rows_written`), checked against statements whose cost is
//! known; then the counts of a read, an ask and a resolve's winner and losers,
//! pinned, so that a change that adds a round trip fails here.

use clarion::test_hooks::schema::bundles;
use clarion::test_hooks::UNCOUNTED;
use clarion::test_hooks::{points, Counts, FailAction, Gate, RowsWritten, StatementCounter};
use clarion::{Backend, Clarion};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use crate::resolve_support::two_answers;
use crate::support::*;

dual_backend!(
    ops_4_counts_a_batch_is_one_round_trip,
    ops_4_counts_a_prepared_statement,
    ops_4_counts_get_bundle_is_one_statement,
    ops_4_counts_ask,
    ops_4_counts_resolve_winner_and_losers
);

/// A handle on `db`'s database whose one connection is counted.
struct Counted {
    clarion: Clarion,
    counter: StatementCounter,
}

fn counted(db: &TestDb) -> Counted {
    let counter = StatementCounter::recording();
    let clarion = db
        .builder()
        .pool_size(1)
        .count_statements(counter.clone())
        .open()
        .unwrap();
    Counted { clarion, counter }
}

impl Counted {
    /// What `work` sent and wrote.
    fn cost(&self, work: impl FnOnce(&Clarion)) -> (Counts, RowsWritten) {
        let rows = self.clarion.rows_written().unwrap();
        let before = self.counter.counts();
        self.counter.take_log();
        work(&self.clarion);
        let counts = self.counter.counts() - before;
        for line in self.counter.take_log() {
            eprintln!("    {line}");
        }
        (counts, self.clarion.rows_written().unwrap() - rows)
    }

    fn postgres(&self) -> bool {
        self.clarion.backend() == Backend::Postgres
    }
}

/// PROD-1: behind a pooler no statement is prepared.
fn prepares(db: &TestDb) -> bool {
    db.direct_url.is_none()
}

/// Rows written: `total`, and on PostgreSQL `updated` and `inserted` of them.
fn assert_rows(rows: RowsWritten, postgres: bool, total: u64, inserted: u64, updated: u64) {
    assert_eq!(rows.total, total, "{rows:?}");
    if postgres {
        assert_eq!(rows.inserted, Some(inserted), "{rows:?}");
        assert_eq!(rows.updated, Some(updated), "{rows:?}");
        assert_eq!(rows.deleted, Some(0), "{rows:?}");
    } else {
        assert_eq!(rows.inserted, None);
    }
}

/// A batch of several statements is one call and one round trip; each of
/// its statements counts, `BEGIN` opens the one transaction, and the
/// database counts the rows its updates changed. Statements marked
/// uncounted, and the pool's `SELECT 1`, are not counted.
fn ops_4_counts_a_batch_is_one_round_trip(db: &TestDb) {
    let us = counted(db);
    let id = ask(&us.clarion, &mirror(db, "a", "alice"), 2);
    let batch = format!(
        "BEGIN; UPDATE bundles SET context = 'one; two' WHERE pending_id = '{id}'; \
         UPDATE bundle_questions SET payload = payload WHERE pending_id = '{id}'; COMMIT"
    );
    let (counts, rows) = us.cost(|db| {
        db.with_raw_connection(|conn| conn.batch_execute(&batch).unwrap())
            .unwrap()
    });
    assert_eq!(
        counts,
        Counts {
            calls: 1,
            statements: 4,
            transactions: 1,
            outside_transactions: 0,
            prepares: 0,
            round_trips: 1,
        }
    );
    assert_rows(rows, us.postgres(), 3, 0, 3);

    let (counts, rows) = us.cost(|db| {
        db.with_raw_connection(|conn| {
            conn.batch_execute("SELECT 1").unwrap();
            conn.batch_execute(&format!("{UNCOUNTED} SELECT 2"))
                .unwrap();
        })
        .unwrap()
    });
    assert_eq!(counts, Counts::default());
    assert_rows(rows, us.postgres(), 0, 0, 0);
}

/// A statement outside a transaction is one call and its own transaction.
/// A statement diesel caches is prepared on its first run on a connection,
/// which on PostgreSQL is a round trip more; later runs are one round trip.
/// Diesel never caches its own `UPDATE` (clarion's claim uses cached
/// `fixed_update`s instead): each run is one round trip that prepares
/// nothing for later.
fn ops_4_counts_a_prepared_statement(db: &TestDb) {
    let us = counted(db);
    let id = ask(&us.clarion, &mirror(db, "a", "alice"), 2);
    let read = |db: &Clarion| {
        let contexts: Vec<String> = db
            .with_raw_connection(|conn| {
                bundles::table
                    .filter(bundles::pending_id.eq(&id))
                    .select(bundles::context)
                    .load(conn)
            })
            .unwrap()
            .unwrap();
        assert_eq!(contexts.len(), 1);
    };
    let prepared = u64::from(prepares(db));
    let (first, rows) = us.cost(read);
    let one = Counts {
        calls: 1,
        statements: 1,
        transactions: 0,
        outside_transactions: 1,
        prepares: 0,
        round_trips: 1,
    };
    assert_eq!(
        first,
        Counts {
            prepares: prepared,
            round_trips: 1 + if us.postgres() { prepared } else { 0 },
            ..one
        }
    );
    assert_rows(rows, us.postgres(), 0, 0, 0);
    assert_eq!(us.cost(read).0, one);

    let update = |context: &'static str| {
        let id = id.clone();
        move |db: &Clarion| {
            let changed = db
                .with_raw_connection(|conn| {
                    diesel::update(bundles::table.filter(bundles::pending_id.eq(&id)))
                        .set(bundles::context.eq(context))
                        .execute(conn)
                })
                .unwrap()
                .unwrap();
            assert_eq!(changed, 1);
        }
    };
    for context in ["first", "again"] {
        let (counts, rows) = us.cost(update(context));
        assert_eq!(counts, one);
        assert_rows(rows, us.postgres(), 1, 0, 1);
    }
}

/// `get_bundle` reads in one statement (one snapshot, no transaction) and
/// writes nothing; once prepared, it is one round trip.
fn ops_4_counts_get_bundle_is_one_statement(db: &TestDb) {
    let us = counted(db);
    let id = ask(&us.clarion, &mirror(db, "a", "alice"), 2);
    let get = |db: &Clarion| {
        db.get_bundle(&alice(), &id).unwrap();
    };
    us.cost(get);
    let (counts, rows) = us.cost(get);
    // The bundle, its standing, its names and its questions, joined.
    assert_eq!(
        counts,
        Counts {
            calls: 1,
            statements: 1,
            transactions: 0,
            outside_transactions: 1,
            prepares: 0,
            round_trips: 1,
        }
    );
    assert_rows(rows, us.postgres(), 0, 0, 0);
}

/// `ask` in steady state: one write transaction; on PostgreSQL the
/// session's lock goes with its BEGIN and the bundle, its attachment and
/// its rows are one statement.
fn ops_4_counts_ask(db: &TestDb) {
    let us = counted(db);
    let session = mirror(db, "a", "alice");
    ask(&us.clarion, &session, 2);
    let (counts, rows) = us.cost(|db| {
        ask(db, &session, 2);
    });
    let expected = if us.postgres() {
        // BEGIN with the session's FOR UPDATE (one batch); the session's
        // state, task, turn and names; the bundle, attachment and rows;
        // the event; COMMIT.
        Counts {
            calls: 5,
            statements: 6,
            transactions: 1,
            outside_transactions: 0,
            prepares: 0,
            round_trips: 5,
        }
    } else {
        // BEGIN IMMEDIATE; the session; the bundle; the attachment; each
        // row (2); the event; COMMIT.
        Counts {
            calls: 8,
            statements: 8,
            transactions: 1,
            outside_transactions: 0,
            prepares: 0,
            round_trips: 8,
        }
    };
    assert_eq!(counts, expected);
    // The bundle, its attachment, its two rows and its event.
    assert_rows(rows, us.postgres(), 5, 5, 0);
}

/// The resolve's winner, a loser whose first read sees the bundle settled
/// and a loser that loses under the claim's lock (another handle wins
/// between its first read and its claim), each with its ledger entry
/// (AUD-2: a loser's is written by the appender, flushed here), in
/// steady state.
fn ops_4_counts_resolve_winner_and_losers(db: &TestDb) {
    let us = counted(db);
    let other = db.builder().pool_size(1).open().unwrap();
    let session = mirror(db, "a", "alice");
    let ids: Vec<String> = (0..4).map(|_| ask(&us.clarion, &session, 2)).collect();
    let resolve = |id: &str| {
        let resolved = us.clarion.resolve_bundle(&alice(), id, &two_answers());
        us.clarion.flush_ledger();
        resolved.unwrap().claimed
    };
    let lose_under_lock = |id: &str| {
        let gate = Gate::new();
        let db = &us.clarion;
        db.arm_failpoint(
            points::RESOLVE_AFTER_FIRST_READ,
            FailAction::Block(gate.clone()),
        );
        let mut others = RowsWritten::default();
        let (counts, rows) = us.cost(|db| {
            std::thread::scope(|scope| {
                let loser = scope.spawn(|| resolve(id));
                assert!(gate.wait_arrival(std::time::Duration::from_secs(10)));
                // The winner's rows, which PostgreSQL counts with the
                // loser's once its handle handed its statistics in.
                let before = other.rows_written().unwrap();
                assert!(
                    other
                        .resolve_bundle(&alice(), id, &two_answers())
                        .unwrap()
                        .claimed
                );
                others = other.rows_written().unwrap() - before;
                gate.open();
                assert!(!loser.join().unwrap());
            });
            db.disarm_failpoint(points::RESOLVE_AFTER_FIRST_READ);
        });
        (
            counts,
            if rows.every_connection {
                rows - others
            } else {
                rows
            },
        )
    };
    // Warm: every statement prepared once.
    assert!(resolve(&ids[0]));
    assert!(!resolve(&ids[0]));
    lose_under_lock(&ids[1]);

    let postgres = us.postgres();
    let (won, won_rows) = us.cost(|_| assert!(resolve(&ids[2])));
    let (settled, settled_rows) = us.cost(|_| assert!(!resolve(&ids[2])));
    let (locked, locked_rows) = lose_under_lock(&ids[3]);
    let counts = |calls, statements, transactions, outside_transactions| Counts {
        calls,
        statements,
        transactions,
        outside_transactions,
        prepares: 0,
        round_trips: calls,
    };
    if postgres {
        // The first read; BEGIN with the session's and the workspace's
        // locks (one batch); the claim, which writes the rows, the bundle,
        // the ledger entry and the event; COMMIT.
        assert_eq!(won, counts(4, 6, 1, 1));
        // The first read, then the appender's entry, a statement alone.
        assert_eq!(settled, counts(2, 2, 0, 2));
        // The first read; the claim's BEGIN batch, its claim (no row) and
        // COMMIT; the replay's read; the appender's entry.
        assert_eq!(locked, counts(6, 8, 1, 3));
    } else {
        // The first read (BEGIN, bundle, questions, COMMIT); the busy
        // timeout read, set to 0, BEGIN IMMEDIATE, set back; the claim's
        // read (bundle, questions), each row's answer, the bundle, the
        // ledger entry, the event; COMMIT.
        assert_eq!(won, counts(16, 16, 2, 0));
        // The first read (four), then the appender's BEGIN, entry, COMMIT.
        assert_eq!(settled, counts(7, 7, 2, 0));
        // The first read (four); the lock (four), the claim's read (two)
        // and COMMIT; the replay (four); the appender's three.
        assert_eq!(locked, counts(18, 18, 4, 0));
    }
    // The winner: each row, the bundle; its ledger entry and event.
    assert_rows(won_rows, postgres, 5, 2, 3);
    // A loser: its ledger entry only.
    assert_rows(settled_rows, postgres, 1, 1, 0);
    assert_rows(locked_rows, postgres, 1, 1, 0);
}
