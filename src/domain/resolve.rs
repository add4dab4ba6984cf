//! Resolving a bundle (§8): validation (VAL-*), normalization (NORM-*), the
//! call into the one claim (CLAIM-*, in [`crate::claim`]), and the loser's
//! replay (REPLAY-*). `cancel_bundle` (LIFE-6) goes through the same claim.
//!
//! Steps, in order: capability → shape rules that need no database (VAL-4,
//! VAL-5) → the bundle's durable rows and visibility (not-found) → rules on
//! the stored bundle (VAL-1, 2, 6, 8) → normalization → claim → winner or
//! loser. Nothing decides claimability outside the claim (CLAIM-2): the
//! claim's first read, outside the write transaction, only ever sends a
//! caller to the replay (OPS-4); the write transaction decides a win.

use std::cell::RefCell;
use std::time::{Duration, Instant};

pub use crate::domain::answers::AnswerInput;
use crate::domain::answers::{check_answer_texts, normalize_answers, Answerable};
use crate::domain::bundle::{self, QuestionRecord};
use crate::domain::change::{Change, Changes};
use crate::domain::claim::{self, Claimed, Decision, FirstRead, Opened, Resolver};
use crate::domain::deadline;
use crate::domain::engine::ledger::NewAttempt;
use crate::domain::engine::Engine;
use crate::domain::links;
use crate::domain::views::{QuorumView, Resolved, Response};
use crate::domain::vote::{self, Voted};
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::capability::Admitted;
use crate::rules::digest;
use crate::rules::limits::{check_runes, check_text, MAX_FREE_TEXT_RUNES};
use crate::rules::visibility::Scope;
use crate::rules::vocabulary::{BundleStatus, DecidedBy, Outcome};
use crate::store::failpoints::points;
use crate::store::{AnyConnection, Timestamp};

/// How long a claim polls (reads, then tries the lock) while another
/// connection holds SQLite's write lock, before it queues for the lock in
/// SQLite's busy handler like any writer (OPS-4).
const QUEUE_AFTER: Duration = Duration::from_millis(250);
/// The first pause between two polls; each pause doubles, up to
/// `LONGEST_PAUSE`.
const FIRST_PAUSE: Duration = Duration::from_micros(250);
const LONGEST_PAUSE: Duration = Duration::from_millis(2);

/// Arguments of `resolve_bundle`: answers, or a rejection. Serialized in
/// this field order for AUD-5's digest of an invalid attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ResolveRequest {
    /// One answer per question, in any order; empty for a rejection.
    pub answers: Vec<AnswerInput>,
    /// Decline to answer.
    pub rejected: bool,
    /// Why, at most 2000 runes; trimmed when stored.
    pub reject_reason: String,
}

/// VAL-4, VAL-5: what can be checked without the bundle.
fn check_shape(request: &ResolveRequest) -> Result<(), ValidationError> {
    if request.rejected && !request.answers.is_empty() {
        return Err(ValidationError::new(
            "answers",
            "must be empty when rejected is true",
        ));
    }
    check_runes("reject_reason", &request.reject_reason, MAX_FREE_TEXT_RUNES)?;
    check_answer_texts("", &request.answers)
}

/// VAL-6: a row without a question id makes the bundle unanswerable.
fn check_answerable(rows: &[QuestionRecord]) -> Result<(), ValidationError> {
    if rows.iter().any(|row| row.question_id.is_empty()) {
        return Err(ValidationError::new(
            "pending_id",
            "this clarification request has a question without a question_id and cannot be \
             answered or rejected; cancel it instead",
        ));
    }
    Ok(())
}

/// Steps 4–5 for a resolve request: the rules that need the stored bundle,
/// then the canonical form.
fn prepare(request: &ResolveRequest, rows: &[QuestionRecord]) -> Result<Decision, ValidationError> {
    check_answerable(rows)?;
    if request.rejected {
        return Ok(Decision::Rejected {
            reason: request.reject_reason.trim().to_owned(),
        });
    }
    let choices: Vec<(Vec<String>, bool)> = rows.iter().map(bundle::choices).collect();
    let questions: Vec<Answerable<'_>> = rows
        .iter()
        .zip(&choices)
        .map(|(row, (options, multi_select))| Answerable {
            question_id: &row.question_id,
            multi_select: *multi_select,
            option_ids: options.iter().map(String::as_str).collect(),
        })
        .collect();
    Ok(Decision::Answered(normalize_answers(
        "",
        &request.answers,
        &questions,
    )?))
}

/// REPLAY-1/2: the loser reads the rows once more; a resolution there is the
/// winner's. Without one, nothing won.
///
/// The read goes through the principal's scope again: a bundle deleted,
/// or moved out of the principal's sight, since the claim's read is
/// not-found (AUTH-5), and its winner is never revealed.
fn replay(conn: &mut AnyConnection, scope: &Scope, pending_id: &str, now: i64) -> Result<Resolved> {
    let (fresh, rows) =
        claim::read_again(conn, scope, pending_id, now)?.ok_or(Error::NotFound(Entity::Bundle))?;
    replayed(conn, &fresh, &rows, now)
}

/// REPLAY-1/2 from one read of a bundle with no pending row, with its
/// quorum (QUO-5; read only for a quorum bundle).
fn replayed(
    conn: &mut AnyConnection,
    record: &bundle::BundleRecord,
    rows: &[QuestionRecord],
    now: i64,
) -> Result<Resolved> {
    let (status, response) = bundle::stored_response(record, rows).ok_or(Error::NoLongerActive)?;
    Ok(Resolved {
        claimed: false,
        status,
        response,
        quorum: settled_quorum(conn, record, now)?,
    })
}

/// QUO-5: the quorum of a bundle no longer active, with its votes.
fn settled_quorum(
    conn: &mut AnyConnection,
    record: &bundle::BundleRecord,
    now: i64,
) -> Result<Option<QuorumView>> {
    Ok(bundle::shown_quorum(conn, record, false, now)?.map(|shown| shown.view))
}

/// AUD-1: one attempt's ledger entry.
fn attempt(
    caller: &Admitted<'_>,
    pending_id: &str,
    at: Timestamp,
    outcome: Outcome,
    digest: String,
) -> NewAttempt {
    let principal = caller.principal();
    let (user_id, agent_id) = principal.ledger_ids();
    NewAttempt {
        pending_id: pending_id.to_owned(),
        at: at.as_micros(),
        principal_kind: principal.kind(),
        user_id: user_id.to_owned(),
        agent_id: agent_id.to_owned(),
        channel: caller.channel().as_str(),
        outcome: outcome.as_str(),
        digest,
    }
}

/// LINK-3: the link a win or a vote came through is used up in its
/// transaction.
fn use_link(
    conn: &mut AnyConnection,
    caller: &Admitted<'_>,
    pending_id: &str,
    now: Timestamp,
) -> Result<()> {
    match caller.link() {
        Some(link) => links::use_up(conn, link, pending_id, now),
        None => Ok(()),
    }
}

/// How one try at the claim's write transaction ended.
enum Attempt {
    /// This caller's claim committed.
    Won(Resolved),
    /// The bundle was not claimable: the caller replays (REPLAY-1).
    Lost,
    /// A vote was recorded on a quorum bundle not decided yet (QUO-3).
    Voted(Resolved),
    /// Another connection held SQLite's write lock; nothing ran, and the
    /// caller reads again before it tries the lock once more (OPS-4).
    LockBusy,
}

impl Engine {
    /// §8: answer or reject a bundle. Exactly one caller claims it; every
    /// other gets the winner's status and response with `claimed: false`,
    /// or `NoLongerActive` when nothing won (superseded, ended, expired).
    pub(crate) fn resolve_bundle(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
        request: &ResolveRequest,
    ) -> Result<Resolved> {
        check_text("pending_id", pending_id)?;
        check_shape(request)?;
        let as_parsed = || digest::of_json(request);
        self.settle(caller, pending_id, &as_parsed, |rows| {
            Ok(prepare(request, rows)?)
        })
    }

    /// LIFE-6: cancel a bundle through the same claim. Humans and `system`
    /// only; needs no waiter; clears even a bundle VAL-6 makes unanswerable.
    pub(crate) fn cancel_bundle(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
    ) -> Result<Resolved> {
        check_text("pending_id", pending_id)?;
        // A cancel is never invalid: it has no parsed form to hash.
        let as_parsed = || Decision::Cancelled.digest();
        self.settle(caller, pending_id, &as_parsed, |_| Ok(Decision::Cancelled))
    }

    /// Steps 3, 6 and 7 shared by resolve and cancel, and the attempt's
    /// ledger entry (AUD-1): the winner's is written in the claim's
    /// transaction; a loser's, a `409`'s and an invalid attempt's after
    /// the outcome, by the appender. Capability-denied and not-found
    /// attempts are logged, never recorded. `as_parsed` is the digest of
    /// the request before normalization (AUD-5, for an invalid one).
    fn settle(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
        as_parsed: &dyn Fn() -> String,
        decide: impl Fn(&[QuestionRecord]) -> Result<Decision>,
    ) -> Result<Resolved> {
        // AUD-5: the digest of what the caller decided, once validated.
        let decided: RefCell<Option<String>> = RefCell::new(None);
        let decide = |rows: &[QuestionRecord]| {
            let decision = decide(rows)?;
            decided.replace(Some(decision.digest()));
            Ok(decision)
        };
        // LINK-3: a used link is told so before any loser branch.
        let result = match caller.link() {
            Some(link) => self.read(|conn| links::check_unused(conn, link)),
            None => Ok(()),
        }
        .and_then(|()| self.claim_or_replay(caller, pending_id, &decided, decide));
        let outcome = match &result {
            // The winner's and a vote's entries are in their transaction.
            Ok(resolved) if resolved.claimed || resolved.winner().is_none() => None,
            Ok(_) => Some(Outcome::Lost),
            Err(Error::NoLongerActive) => Some(Outcome::NoLongerActive),
            Err(Error::NotEligible) => Some(Outcome::NotEligible),
            Err(Error::AlreadyVoted) => Some(Outcome::AlreadyVoted),
            Err(Error::LinkUsed) => Some(Outcome::LinkUsed),
            Err(Error::Validation(_)) => Some(Outcome::Invalid),
            Err(error) => {
                tracing::info!(
                    pending_id,
                    code = error.code().as_str(),
                    "attempt not recorded"
                );
                None
            }
        };
        if let Some(outcome) = outcome {
            let digest = match outcome {
                Outcome::Invalid => as_parsed(),
                _ => decided.take().unwrap_or_else(as_parsed),
            };
            let entry = attempt(caller, pending_id, self.now(), outcome, digest);
            self.ledger.append(entry);
        }
        result
    }

    /// The claim's first read (no lock) finds the bundle (not-found) and
    /// validates it; if it shows the bundle already settled, the caller
    /// replays from that read. Otherwise one write transaction reads,
    /// validates and claims again, under its lock. Nothing is written
    /// unless the claim is won; a loser replays (REPLAY-1).
    fn claim_or_replay(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
        decided: &RefCell<Option<String>>,
        decide: impl Fn(&[QuestionRecord]) -> Result<Decision>,
    ) -> Result<Resolved> {
        let scope = caller.scope()?;
        // OPS-4: a bundle already settled is learned from a plain read,
        // without queueing for the write lock (see `claim::read_first`).
        // While another connection holds SQLite's write lock — most often
        // a racer's claim, about to commit — the caller does not queue in
        // SQLite's busy handler: it reads again after a short pause, and
        // only a read that still shows the bundle active sends it back to
        // the lock. After `QUEUE_AFTER` it queues like any writer.
        let polling_until = Instant::now() + QUEUE_AFTER;
        let mut pause = FIRST_PAUSE;
        loop {
            let first = self.conn()?.run(|conn| {
                claim::read_first(conn, scope, pending_id, self.now().as_micros(), &decide)
            })?;
            let opened = match first {
                FirstRead::Open(opened) => opened,
                // Already settled: this read is the replay's (REPLAY-1).
                FirstRead::Settled(settled) => {
                    let now = self.now().as_micros();
                    return self
                        .conn()?
                        .run(|conn| replayed(conn, &settled.0, &settled.1, now));
                }
            };
            self.failpoint(points::RESOLVE_AFTER_FIRST_READ)?;
            let queue = Instant::now() >= polling_until;
            let winner = |at: Timestamp, outcome: Outcome| {
                let digest = decided.borrow().clone().unwrap_or_default();
                attempt(caller, pending_id, at, outcome, digest)
            };
            match self.claim_in_transaction(caller, pending_id, &opened, &decide, &winner, queue)? {
                Attempt::Won(resolved) | Attempt::Voted(resolved) => return Ok(resolved),
                Attempt::Lost => break,
                Attempt::LockBusy => {}
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
        self.failpoint(points::RESOLVE_BEFORE_REPLAY)?;
        let now = self.now().as_micros();
        self.conn()?
            .run(|conn| replay(conn, scope, pending_id, now))
    }

    /// The claim in its write transaction: won, lost (the caller
    /// replays), or, unless `queue`, not tried because another connection
    /// holds SQLite's write lock.
    fn claim_in_transaction(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
        opened: &Opened,
        decide: impl FnOnce(&[QuestionRecord]) -> Result<Decision>,
        winner: &dyn Fn(Timestamp, Outcome) -> NewAttempt,
        queue: bool,
    ) -> Result<Attempt> {
        let (principal, scope) = (caller.principal(), caller.scope()?);
        let resolver = Resolver {
            kind: principal.decides_as().map_or("", DecidedBy::as_str),
            id: principal.audit_id(),
            voters: claim::NO_VOTERS.to_owned(),
        };
        let body = |conn: &mut AnyConnection, changes: &mut Changes| {
            // The clock is read under the transaction's lock: a claim that
            // reads `now < expires_at` here wins as usual (EXP-3).
            let now = self.now();
            // LINK-3: under the lock, before any loser branch.
            if let Some(link) = caller.link() {
                links::check_unused(conn, link)?;
            }
            // EXP-3: whoever meets a due bundle settles it first, in this
            // transaction; this caller then replays the deadline's outcome.
            let due = opened
                .record
                .expires_at
                .is_some_and(|at| at <= now.as_micros());
            if due {
                let session = &opened.record.session_id;
                deadline::settle_due_in(self, conn, changes, pending_id, session, now)?;
                return Ok(Attempt::Lost);
            }
            // QUO-2, QUO-3, QUO-6: a person's submission on a quorum
            // bundle is a vote, a person's cancel needs a say in it;
            // `system` claims at once, as on any bundle.
            let voter = principal
                .voting_id()
                .filter(|_| opened.record.quorum().human_only());
            // The quorum a vote's claim commits, known without a read.
            let mut decided_quorum = None;
            let claimed = match voter {
                Some(user) if !opened.cancels() => {
                    let entries = vote::Entries {
                        won: winner(now, Outcome::Won),
                        voted: winner(now, Outcome::Voted),
                    };
                    let voted = vote::vote(
                        conn,
                        scope,
                        user,
                        opened,
                        &entries,
                        now,
                        changes,
                        &self.failpoints,
                    )?;
                    match voted {
                        Voted::Won(claimed, quorum) => {
                            decided_quorum = Some(quorum);
                            claimed
                        }
                        Voted::Settled => return Ok(Attempt::Lost),
                        Voted::Recorded(quorum) => {
                            use_link(conn, caller, pending_id, now)?;
                            return Ok(Attempt::Voted(Resolved {
                                claimed: false,
                                status: BundleStatus::Pending,
                                response: Response::none(pending_id),
                                quorum: Some(quorum),
                            }));
                        }
                    }
                }
                _ => {
                    if let Some(user) = voter {
                        vote::check_cancel(conn, &opened.record, user)?;
                    }
                    claim::claim(
                        conn,
                        scope,
                        pending_id,
                        opened,
                        decide,
                        &resolver,
                        &winner(now, Outcome::Won),
                        now,
                        changes,
                        &self.failpoints,
                    )?
                }
            };
            let Claimed::Won { record, rows } = claimed else {
                return Ok(Attempt::Lost);
            };
            use_link(conn, caller, pending_id, now)?;
            // The winner's response is rebuilt from exactly what is
            // committed, by the same function a loser's replay uses (NORM-4).
            let (status, response) = bundle::stored_response(&record, &rows).ok_or_else(|| {
                Error::Internal(format!("claimed bundle {pending_id} has no resolution"))
            })?;
            changes.push(Change::Resolved {
                pending_id: pending_id.to_owned(),
                status,
                response: response.clone(),
            });
            Ok(Attempt::Won(Resolved {
                claimed: true,
                status,
                response,
                quorum: match decided_quorum {
                    Some(quorum) => Some(quorum),
                    None => settled_quorum(conn, &record, now.as_micros())?,
                },
            }))
        };
        Ok(self
            .change_claiming(&opened.record.session_id, pending_id, queue, body)?
            .unwrap_or(Attempt::LockBusy))
    }
}
