//! The one claim (CLAIM-1..4): the only transition of an active bundle to a
//! resolution (`answered`, `rejected`, `cancelled`). Resolve and cancel
//! both end here; nothing else writes a resolution status.
//!
//! [`read_first`] reads the bundle (visibility, its rows) outside any write
//! transaction and lets the caller validate against the stored rows; a
//! bundle with no pending row goes to the replay. Otherwise [`claim`]
//! runs in the claim's write transaction. The statements are typed once in
//! `statements.rs`; each backend assembles them in its own file, where the
//! SQL really differs:
//! - `sqlite.rs`: `BEGIN IMMEDIATE` has held the write lock since before
//!   the claim's read, so the read is the guard and each row's write adds
//!   none.
//! - `postgres.rs`: the transaction begins by locking the session row
//!   (`FOR SHARE`, in the `BEGIN`'s round trip), and one statement writes
//!   the rows and the bundle row, guarded by ACT-1 in the statement itself.

#[cfg(any(feature = "postgres", feature = "test-hooks"))]
pub(crate) mod guard;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod sqlite;
pub(crate) mod statements;
pub(crate) mod target;

pub(crate) use statements::{Resolver, NO_VOTERS};
use target::{Marks, Target};

use crate::domain::bundle::{self, BundleRecord, QuestionRecord};
use crate::domain::change::Changes;
use crate::domain::engine::ledger::{self, NewAttempt};
#[cfg(feature = "postgres")]
use crate::domain::events;
use crate::domain::views::{Answer, Submission};
use crate::error::{Error, Result};
use crate::rules::digest;
use crate::rules::visibility::Scope;
use crate::rules::vocabulary::{DecidedBy, QuestionStatus, Resolution};
use crate::store::failpoints::{points, Failpoints};
use crate::store::{read_snapshot, AnyConnection, Timestamp};

/// What the caller decided, after validation and normalization: what the
/// claim writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// One normalized answer per question, in DM-4 order (NORM-1).
    Answered(Vec<Answer>),
    /// A rejection with its trimmed reason (NORM-3).
    Rejected { reason: String },
    /// A cancellation (LIFE-6).
    Cancelled,
}

impl Decision {
    fn resolution(&self) -> Resolution {
        match self {
            Decision::Answered(_) => Resolution::Answered,
            Decision::Rejected { .. } => Resolution::Rejected,
            Decision::Cancelled => Resolution::Cancelled,
        }
    }

    /// AUD-5: the digest of the decision as submitted after NORM-1..3
    /// (equal submissions share one), or of a cancel.
    pub(crate) fn digest(&self) -> String {
        let submission = match self {
            Decision::Cancelled => return digest::sha256_hex(digest::CANCEL.as_bytes()),
            Decision::Answered(answers) => Submission {
                answers: answers.clone(),
                rejected: false,
                reject_reason: String::new(),
            },
            Decision::Rejected { reason } => Submission {
                answers: Vec::new(),
                rejected: true,
                reject_reason: reason.clone(),
            },
        };
        digest::of_json(&submission)
    }

    fn reject_reason(&self) -> &str {
        match self {
            Decision::Rejected { reason } => reason,
            _ => "",
        }
    }

    /// The stored answer object of one row (REPLAY-2: every answered row
    /// stores one, even an empty "no answer").
    fn stored_answer(&self, question_id: &str) -> Result<Option<String>> {
        let Decision::Answered(answers) = self else {
            return Ok(None);
        };
        answers
            .iter()
            .find(|answer| answer.question_id == question_id)
            .map(|answer| {
                serde_json::to_string(answer)
                    .map_err(|e| Error::Internal(format!("answer of {question_id}: {e}")))
            })
            .transpose()
    }
}

/// How a claim ended.
pub(crate) enum Claimed {
    /// This caller won: the bundle and its rows as they will commit.
    Won {
        record: Box<BundleRecord>,
        rows: Vec<QuestionRecord>,
    },
    /// The bundle was not active (another caller won, or nothing can):
    /// the caller replays (REPLAY-1).
    NotWon,
}

/// The claim's first step (OPS-4, CLAIM-5): the bundle and its rows, read
/// through the same visibility as the claim's read but outside any write
/// transaction and without any lock — on SQLite in a read snapshot (WAL
/// readers never wait for the writer), on PostgreSQL in one statement of
/// its own. Returns `true` when no row is pending any more: then ACT-1
/// cannot hold (ACT-1.1 needs a pending row), now or ever — a row never
/// returns to pending, and a resolution is never taken back (DEL-1) — so
/// the caller replays (REPLAY-1) without opening a write transaction, and
/// racers arriving after a winner committed never queue for the write
/// lock or the session lock to learn they lost.
///
/// The checks come in the claim's order: an invisible or absent bundle is
/// `NotFound` (AUTH-5), then `decide` validates against the stored rows
/// (VAL-1, 2, 6, 8; VAL-8: before any loser branch), and only then do the
/// rows' statuses count. `false` means only "maybe claimable": the claim
/// ([`claim`]) decides under its lock, with ACT-1 in full, and is the only
/// place that decides a bundle *is* claimable (CLAIM-2). This read writes
/// nothing and decides only what no later moment could change.
pub(crate) fn read_first(
    conn: &mut AnyConnection,
    scope: &Scope,
    pending_id: &str,
    now: i64,
    decide: impl FnOnce(&[QuestionRecord]) -> Result<Decision>,
) -> Result<FirstRead> {
    let (record, rows) = read_again(conn, scope, pending_id, now)?
        .ok_or(Error::NotFound(crate::error::Entity::Bundle))?;
    let decision = decide(&rows)?;
    if !rows
        .iter()
        .any(|row| matches!(row.status(), QuestionStatus::Pending))
    {
        return Ok(FirstRead::Settled(Box::new((record, rows))));
    }
    Ok(FirstRead::Open(Box::new(Opened {
        record,
        rows,
        decision,
    })))
}

/// What the claim's first read found.
pub(crate) enum FirstRead {
    /// No row is pending: the caller replays (REPLAY-1) from this very
    /// read, which is the replay's read (OPS-4: no second round trip).
    Settled(Box<(BundleRecord, Vec<QuestionRecord>)>),
    /// A row is pending: the claim decides, under its lock.
    Open(Box<Opened>),
}

impl Opened {
    /// The caller cancels (LIFE-6) rather than answers or rejects.
    pub(crate) fn cancels(&self) -> bool {
        self.decision == Decision::Cancelled
    }

    /// What the caller decided on the rows the first read found.
    pub(crate) fn decision(&self) -> &Decision {
        &self.decision
    }
}

/// A bundle the first read found with a pending row, and the caller's
/// decision on its rows.
pub(crate) struct Opened {
    pub record: BundleRecord,
    /// What PostgreSQL's claim writes from (SQLite reads again under its lock).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    rows: Vec<QuestionRecord>,
    decision: Decision,
}

/// REPLAY-1: a loser reads the bundle once more, through the scope again
/// (a bundle moved out of sight since is not-found, AUTH-5), in one
/// snapshot: on SQLite a read transaction, on PostgreSQL one statement.
/// The claim's first read is the same read.
pub(crate) fn read_again(
    conn: &mut AnyConnection,
    scope: &Scope,
    pending_id: &str,
    now: i64,
) -> Result<Option<(BundleRecord, Vec<QuestionRecord>)>> {
    match conn {
        AnyConnection::Sqlite(_) => read_snapshot(conn, |conn| {
            crate::domain::bundle::load_visible(conn, scope, pending_id, now)
        }),
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => postgres::read_first(conn, scope, pending_id, now),
    }
}

/// CLAIM-1: the one transition of an active bundle to a resolution, inside
/// the caller's write transaction (`store::claim_transaction`), after the
/// first read found the bundle `opened`.
///
/// On SQLite the transaction holds the write lock since `BEGIN IMMEDIATE`:
/// the claim reads the bundle again (an invisible or absent one is
/// `NotFound`, AUTH-5), hands its stored rows to `decide` (VAL-1, 2, 6, 8,
/// before anything is written), and writes only if that read, evaluating
/// ACT-1 under the lock, found the bundle active; the writes add no guard.
///
/// On PostgreSQL the transaction's first statement, sent with its `BEGIN`,
/// locked the bundle's session row `FOR SHARE` (CLAIM-4): every
/// session-state change, new turn, ask, task move and owner change of that
/// session locks it `FOR UPDATE`, so it is serialized with the claim. The
/// claim writes at once, with the rows and the decision of the first read
/// (a bundle's rows, their ids and options never change; their statuses
/// may): its one write statement starts after the lock was granted and
/// re-checks ACT-1 and visibility itself, so it sees every change committed
/// before, and changes only rows still pending. An inactive bundle changes
/// nothing and is not won. Claims share the lock with each other (OPS-4);
/// two claims of one bundle meet at its question rows, where the second's
/// guarded write waits for the first's row locks, then re-checks the
/// committed rows and changes nothing (CLAIM-5).
///
/// REPLAY-3: a failure of the writes is an internal error, logged with the
/// bundle; nothing is retried.
#[allow(clippy::too_many_arguments)]
pub(crate) fn claim(
    conn: &mut AnyConnection,
    scope: &Scope,
    pending_id: &str,
    opened: &Opened,
    decide: impl FnOnce(&[QuestionRecord]) -> Result<Decision>,
    resolver: &Resolver<'_>,
    winner: &NewAttempt,
    now: Timestamp,
    changes: &mut Changes,
    failpoints: &Failpoints,
) -> Result<Claimed> {
    let (target, decision) = match conn {
        AnyConnection::Sqlite(conn) => {
            let target = sqlite::read(conn, scope, pending_id, now.as_micros())?
                .ok_or(Error::NotFound(crate::error::Entity::Bundle))?;
            let decision = decide(&target.rows)?;
            if !target.active_when_read || target.rows.is_empty() {
                return Ok(Claimed::NotWon);
            }
            (target, decision)
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(_) => {
            let target = Target {
                record: opened.record.clone(),
                active_when_read: true,
                rows: opened.rows.clone(),
            };
            (target, opened.decision.clone())
        }
    };
    #[cfg(not(feature = "postgres"))]
    let _ = opened;
    win(
        conn, scope, target, &decision, resolver, winner, now, changes, failpoints,
    )
}

/// The claim's writes for `target` ([`write_won`]) and how they ended:
/// won, with the bundle and its rows as they will commit, or not won.
/// REPLAY-3: a failure is an internal error, logged with the bundle.
#[allow(clippy::too_many_arguments)]
pub(crate) fn win(
    conn: &mut AnyConnection,
    scope: &Scope,
    mut target: Target,
    decision: &Decision,
    resolver: &Resolver<'_>,
    winner: &NewAttempt,
    now: Timestamp,
    changes: &mut Changes,
    failpoints: &Failpoints,
) -> Result<Claimed> {
    let committed = write_won(
        conn,
        scope,
        &mut target,
        decision,
        resolver,
        winner,
        now,
        changes,
        failpoints,
    )
    .map_err(|error| {
        let pending_id = &target.record.pending_id;
        tracing::error!(pending_id, %error, "claim failed");
        Error::Internal(format!("claim of {pending_id} failed: {error}"))
    })?;
    Ok(match committed {
        Some(rows) => Claimed::Won {
            record: Box::new(target.record),
            rows,
        },
        None => Claimed::NotWon,
    })
}

/// The claim's writes, with the winner's ledger entry (AUD-2) and its
/// `bundle.resolved` event (EVT-1), both in the same transaction; on
/// PostgreSQL all in the same statement. Returns the bundle's rows as they
/// will commit when this call claimed it, `None` when it did not.
///
/// What a win commits is known before the writes: every row of `target`
/// still pending takes the decision (CLAIM-1), so the event's data is
/// frozen from that. A claim that changed some other set of rows (a row
/// settled between the read and the write by something other than a
/// claim, which no path does) fails instead, and nothing commits.
#[allow(clippy::too_many_arguments)]
fn write_won(
    conn: &mut AnyConnection,
    scope: &Scope,
    target: &mut Target,
    decision: &Decision,
    resolver: &Resolver<'_>,
    winner: &NewAttempt,
    now: Timestamp,
    changes: &mut Changes,
    failpoints: &Failpoints,
) -> Result<Option<Vec<QuestionRecord>>> {
    failpoints.check(points::CLAIM_BEFORE_WRITES)?;
    let writes = target
        .rows
        .iter()
        .map(|row| {
            Ok(statements::RowWrite {
                row_id: row.id,
                response: decision.stored_answer(&row.question_id)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let status = decision.resolution().as_str();
    let reason = decision.reject_reason();
    let responded_at = now.as_micros();
    let Won {
        record: won,
        rows: committed,
        mut expected,
    } = as_won(target, &writes, status, reason, responded_at, resolver);
    let (resolved, response) = bundle::stored_response(&won, &committed).ok_or_else(|| {
        Error::Internal(format!("a claim of {} resolves nothing", won.pending_id))
    })?;
    let marks = Marks {
        scope,
        pending_id: &target.record.pending_id,
        status,
        reason,
        responded_at,
        resolver,
        now: now.as_micros(),
    };
    let mut claimed = match conn {
        AnyConnection::Sqlite(sqlite) => {
            let claimed = sqlite::write(sqlite, &marks, &writes, failpoints)?;
            if !claimed.is_empty() {
                ledger::insert(conn, std::slice::from_ref(winner))?;
                changes.append_resolved(conn, resolved, &response, now)?;
            }
            claimed
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => {
            let data = events::resolved_data(resolved, &response)?;
            let announced = postgres::Announced {
                at: now.as_micros(),
                data: &data,
            };
            let claimed = postgres::write(conn, &marks, &writes, winner, &announced, failpoints)?;
            if !claimed.is_empty() {
                changes.appended_by_statement();
            }
            claimed
        }
    };
    if claimed.is_empty() {
        return Ok(None);
    }
    claimed.sort_unstable();
    expected.sort_unstable();
    if claimed != expected {
        return Err(Error::Internal(format!(
            "the claim of {} changed rows {claimed:?}, not the pending {expected:?}",
            won.pending_id
        )));
    }
    failpoints.check(points::CLAIM_BEFORE_COMMIT)?;
    target.record = won;
    Ok(Some(committed))
}

/// What a claim commits if it wins: the bundle row with its marks
/// (CLAIM-3), its rows with every row still pending answered, and the ids
/// of those rows.
struct Won {
    record: BundleRecord,
    rows: Vec<QuestionRecord>,
    expected: Vec<i64>,
}

/// [`Won`] for `target`, each row taking its write.
fn as_won(
    target: &Target,
    writes: &[statements::RowWrite],
    status: &str,
    reason: &str,
    responded_at: i64,
    resolver: &Resolver<'_>,
) -> Won {
    let expected: Vec<i64> = target
        .rows
        .iter()
        .filter(|row| row.status() == QuestionStatus::Pending)
        .map(|row| row.id)
        .collect();
    let mut record = target.record.clone();
    record.reject_reason = reason.to_owned();
    record.responded_at = Some(responded_at);
    record.resolved_by_kind = Some(resolver.kind.to_owned());
    record.resolved_by_id = Some(resolver.id.clone());
    record.voters = resolver.voters.clone();
    let rows = target
        .rows
        .iter()
        .zip(writes)
        .map(|(row, write)| {
            let mut row = row.clone();
            if expected.contains(&row.id) {
                row.status = Some(status.to_owned());
                row.response = write.response.clone();
            }
            row
        })
        .collect();
    Won {
        record,
        rows,
        expected,
    }
}

/// How a deadline's settlement ended (EXP-3).
pub(crate) enum Settled {
    /// `expire`: the pending rows are `expired` (`expired_at` the
    /// deadline); no resolution, no outbox entry.
    Expired,
    /// `answer` or `reject`: the stored default is the resolution; the
    /// bundle and its rows as they will commit.
    Resolved {
        record: Box<BundleRecord>,
        rows: Vec<QuestionRecord>,
    },
}

/// EXP-3: the claim guarded by "due at `now`", inside the caller's write
/// transaction (`store::claim_transaction` on the bundle's session, as a
/// claim's). It writes what [`bundle::settled_by_deadline`] says —
/// exactly what a reader was shown before — with resolver `deadline`,
/// `responded_at` the deadline. On SQLite the due test is read under the
/// write lock; on PostgreSQL the row statement evaluates it itself, and
/// the rows' own pending test decides between this and any other writer
/// (CLAIM-5). `None`: not due (never had a deadline, not yet, or settled
/// or resolved by someone else first).
pub(crate) fn settle(
    conn: &mut AnyConnection,
    pending_id: &str,
    now: Timestamp,
    failpoints: &Failpoints,
) -> Result<Option<Settled>> {
    let Some((record, rows)) = bundle::load_stored(conn, pending_id)? else {
        return Ok(None);
    };
    let now = now.as_micros();
    let Some(expires_at) = record.expires_at.filter(|at| *at <= now) else {
        return Ok(None);
    };
    let Some((settled, settled_rows)) = bundle::settled_by_deadline(&record, &rows) else {
        return Ok(None);
    };
    let pending: Vec<(&QuestionRecord, &QuestionRecord)> = rows
        .iter()
        .zip(&settled_rows)
        .filter(|(before, _)| before.status() == QuestionStatus::Pending)
        .collect();
    let Some(status) = pending.first().and_then(|(_, after)| after.status.clone()) else {
        return Ok(None);
    };
    let writes: Vec<statements::RowWrite> = pending
        .iter()
        .map(|(_, after)| statements::RowWrite {
            row_id: after.id,
            response: after.response.clone(),
        })
        .collect();
    failpoints.check(points::CLAIM_BEFORE_WRITES)?;
    let claimed = match conn {
        AnyConnection::Sqlite(conn) => {
            if !sqlite::is_due(conn, pending_id, now)? {
                return Ok(None);
            }
            sqlite::write_rows(conn, pending_id, &status, &writes)?
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => {
            postgres::settle_rows(conn, pending_id, &status, &writes, now)?
        }
    };
    if claimed.is_empty() {
        return Ok(None);
    }
    let expired = status == QuestionStatus::EXPIRED_WORD;
    settlement_marks(conn, pending_id, expired, &claimed, &settled, expires_at)?;
    failpoints.check(points::CLAIM_BEFORE_COMMIT)?;
    if expired {
        return Ok(Some(Settled::Expired));
    }
    let rows = rows
        .into_iter()
        .zip(settled_rows)
        .map(|(before, after)| {
            if claimed.contains(&before.id) {
                after
            } else {
                before
            }
        })
        .collect();
    Ok(Some(Settled::Resolved {
        record: Box::new(settled),
        rows,
    }))
}

/// EXP-3: after the rows, the marks of a settlement. `expire`: the rows'
/// `expired_at` is the deadline (REL-8's clock) and the listing hint goes
/// (ACT-4); nothing else — no `responded_at`, resolver or undelivered
/// mark, so no outbox entry. `answer`/`reject`: the claim's bundle marks
/// (CLAIM-3), with the deadline as resolver and time.
fn settlement_marks(
    conn: &mut AnyConnection,
    pending_id: &str,
    expired: bool,
    claimed: &[i64],
    settled: &BundleRecord,
    expires_at: i64,
) -> Result<()> {
    use crate::store::schema::{bundle_questions, bundles};
    use diesel::prelude::*;
    let bundle = bundles::table.filter(bundles::pending_id.eq(pending_id));
    if expired {
        diesel::update(bundle_questions::table.filter(bundle_questions::id.eq_any(claimed)))
            .set(bundle_questions::expired_at.eq(Some(expires_at)))
            .execute(conn)?;
        diesel::update(bundle)
            .set(bundles::may_be_active.eq(false))
            .execute(conn)?;
    } else {
        let marks = statements::bundle_marks(
            &settled.reject_reason,
            expires_at,
            DecidedBy::Deadline.as_str(),
            "",
            statements::NO_VOTERS,
        );
        diesel::update(bundle).set(marks).execute(conn)?;
    }
    Ok(())
}
