//! The claim's decision `Voted` (QUO-3, QUO-4): a user's submission on a
//! quorum bundle, decided inside the claim's write transaction. Votes on
//! one bundle are serialized — on SQLite by `BEGIN IMMEDIATE`, on
//! PostgreSQL by locking the bundle's question rows first, in id order,
//! the rows every claim and settlement of the bundle writes — so each
//! vote counts every vote committed before it. The vote that meets a
//! threshold makes the one claim through the same guarded writes as any
//! other ([`claim::win`]).

use diesel::prelude::*;

use crate::domain::bundle::{self, BundleRecord, QuestionRecord};
use crate::domain::change::Changes;
use crate::domain::claim::target::Target;
use crate::domain::claim::{self, Claimed, Decision, Opened, Resolver};
use crate::domain::engine::ledger::{self, NewAttempt};
use crate::domain::events;
use crate::domain::quorum::{self, VoteRecord};
use crate::domain::views::QuorumView;
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::activeness;
use crate::rules::quorum::{deciding_group, Ballot, Policy};
use crate::rules::visibility::{self, Scope};
#[cfg(feature = "postgres")]
use crate::rules::vocabulary::EventType;
use crate::rules::vocabulary::{DecidedBy, QuestionStatus};
use crate::store::failpoints::Failpoints;
use crate::store::schema::votes;
#[cfg(feature = "postgres")]
use crate::store::schema::{self, bundle_questions};
#[cfg(feature = "postgres")]
use crate::store::Together;
use crate::store::{AnyConnection, Timestamp};

/// How a vote ended, when it did not refuse.
pub(crate) enum Voted {
    /// It met the threshold: this caller's transaction made the claim;
    /// the quorum as it commits (the deciding group's votes count).
    Won(Claimed, QuorumView),
    /// Recorded (or repeated); the quorum is not met yet.
    Recorded(QuorumView),
    /// No row is pending any more: the caller replays (REPLAY-1).
    Settled,
}

/// The ledger entries a vote may write in its transaction: the winner's
/// (`won`) or the vote's (`voted`), each at the claim's clock.
pub(crate) struct Entries {
    pub won: NewAttempt,
    pub voted: NewAttempt,
}

/// QUO-3 steps 2–6 for `user_id`, in the claim's write transaction, after
/// the caller settled a due bundle (step 1).
#[allow(clippy::too_many_arguments)]
pub(crate) fn vote(
    conn: &mut AnyConnection,
    scope: &Scope,
    user_id: &str,
    opened: &Opened,
    entries: &Entries,
    now: Timestamp,
    changes: &mut Changes,
    failpoints: &Failpoints,
) -> Result<Voted> {
    let pending_id = opened.record.pending_id.as_str();
    let locked = serialize_votes(conn, pending_id)?;
    let (record, rows, active) = read_under_lock(conn, scope, pending_id, locked, now.as_micros())?
        .ok_or(Error::NotFound(Entity::Bundle))?;
    if !rows
        .iter()
        .any(|row| row.status() == QuestionStatus::Pending)
    {
        return Ok(Voted::Settled);
    }
    if !active {
        return Err(Error::NoLongerActive);
    }
    let policy = quorum::load_policy(conn, record.quorum())?.ok_or_else(unreadable)?;
    if !policy.may_vote(user_id) {
        return Err(Error::NotEligible);
    }
    let decision = opened.decision();
    let digest = decision.digest();
    let mut votes = quorum::load_votes(conn, &[pending_id])?;
    // A new vote is counted as it will be written (vote order is (`at`,
    // id): a vote recorded now is the last), and written below with its
    // event and ledger entry.
    let (own, new) = match votes.iter().position(|vote| vote.user_id == user_id) {
        Some(index) if votes[index].digest != digest => return Err(Error::AlreadyVoted),
        Some(index) => (index, false),
        None => {
            // Vote order is (`at`, id) and a vote recorded now is the
            // last: never before one recorded earlier, even when this vote
            // read its clock before it waited for the lock (or on another
            // machine's clock).
            let latest = votes.iter().map(|vote| vote.at).max();
            let at =
                Timestamp::from_micros(latest.map_or(now.as_micros(), |l| l.max(now.as_micros())));
            votes.push(new_vote(pending_id, user_id, decision, &digest, at)?);
            (votes.len() - 1, true)
        }
    };
    // QUO-4: a claim's `responded_at` is the deciding vote's time.
    let now = Timestamp::from_micros(votes[own].at.max(now.as_micros()));
    let recorded = new.then(|| (&votes[own], votes.len()));
    let counts = quorum::counting_now(conn, &policy, &votes, Some(user_id), now.as_micros())?;
    let ballots: Vec<Ballot<'_>> = votes
        .iter()
        .zip(&counts)
        .map(|(vote, counts)| Ballot {
            user_id: &vote.user_id,
            rejected: vote.rejected,
            digest: &vote.digest,
            counts: *counts,
        })
        .collect();
    let Some(group) = deciding_group(&policy, &ballots, own) else {
        write_vote(conn, recorded, Some(&entries.voted), now, changes)?;
        return Ok(Voted::Recorded(quorum::view(&policy, &votes, &counts)));
    };
    // The deciding vote's ledger entry is the winner's, in its claim.
    write_vote(conn, recorded, None, now, changes)?;
    let claimed = claim_for_group(
        conn,
        scope,
        (record, rows),
        &votes,
        &group,
        own,
        entries,
        now,
        changes,
        failpoints,
    )?;
    // QUO-5: once resolved, a vote counts when it is among the voters.
    let counted: Vec<bool> = (0..votes.len()).map(|i| group.contains(&i)).collect();
    let quorum = quorum::view(&policy, &votes, &counted);
    Ok(Voted::Won(claimed, quorum))
}

/// QUO-2: a human-only bundle whose quorum columns cannot be read.
fn unreadable() -> Error {
    Error::Validation(ValidationError::new(
        "quorum",
        "this bundle's quorum cannot be read; only system may resolve or cancel it",
    ))
}

/// QUO-3: votes on one bundle are serialized. PostgreSQL locks the
/// bundle's question rows in id order (claims and settlements write them
/// too, so they queue behind a vote and a vote behind them), and the lock's
/// statement returns them as they are once locked (in DM-4 order); SQLite's
/// write lock is already held, and its rows are read with the bundle.
fn serialize_votes(
    conn: &mut AnyConnection,
    pending_id: &str,
) -> Result<Option<Vec<QuestionRecord>>> {
    match conn {
        AnyConnection::Sqlite(_) => {
            let _ = pending_id;
            Ok(None)
        }
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(pg) => {
            let mut rows: Vec<QuestionRecord> = bundle_questions::table
                .filter(bundle_questions::pending_id.eq(pending_id))
                .order(bundle_questions::id)
                .select(bundle::question_record_columns())
                .for_update()
                .load(pg)?;
            bundle::sort_dm4(&mut rows);
            Ok(Some(rows))
        }
    }
}

/// The bundle as the vote's transaction sees it under its lock: if the
/// scope may see it, with ACT-1 (`is_active`) and its rows (`locked`, when
/// the lock returned them).
fn read_under_lock(
    conn: &mut AnyConnection,
    scope: &Scope,
    pending_id: &str,
    locked: Option<Vec<QuestionRecord>>,
    now: i64,
) -> Result<Option<(BundleRecord, Vec<QuestionRecord>, bool)>> {
    let bundle = visibility::visible_bundle(scope, pending_id, now);
    let read: Option<(BundleRecord, Option<bool>)> = bundle
        .select((bundle::bundle_record_columns(), activeness::is_active(now)))
        .load(conn)?
        .pop();
    let Some((record, active)) = read else {
        return Ok(None);
    };
    let rows = match locked {
        Some(rows) => rows,
        None => bundle::load_bundle_rows(conn, pending_id)?,
    };
    Ok(Some((record, rows, active.unwrap_or(false))))
}

/// QUO-3 step 6: the caller's vote as it will be recorded, at the claim's
/// clock.
fn new_vote(
    pending_id: &str,
    user_id: &str,
    decision: &Decision,
    digest: &str,
    now: Timestamp,
) -> Result<VoteRecord> {
    let (rejected, answers, reject_reason) = match decision {
        Decision::Answered(answers) => (false, answers.clone(), String::new()),
        Decision::Rejected { reason } => (true, Vec::new(), reason.clone()),
        Decision::Cancelled => {
            return Err(Error::Internal("a cancel is never a vote".to_owned()));
        }
    };
    let answers = serde_json::to_string(&answers)
        .map_err(|error| Error::Internal(format!("a vote's answers: {error}")))?;
    Ok(VoteRecord {
        pending_id: pending_id.to_owned(),
        user_id: user_id.to_owned(),
        at: now.as_micros(),
        rejected,
        answers,
        reject_reason,
        digest: digest.to_owned(),
    })
}

/// QUO-3, QUO-7: a new vote (with how many votes the bundle then holds)
/// and its `bundle.voted` event, and `entry`, the vote's ledger entry
/// (`None` for the deciding vote, whose claim writes the winner's). On
/// PostgreSQL a new vote that does not decide is one statement.
fn write_vote(
    conn: &mut AnyConnection,
    recorded: Option<(&VoteRecord, usize)>,
    entry: Option<&NewAttempt>,
    now: Timestamp,
    changes: &mut Changes,
) -> Result<()> {
    let Some((vote, count)) = recorded else {
        return entry.map_or(Ok(()), |entry| {
            ledger::insert(conn, std::slice::from_ref(entry))
        });
    };
    let data = events::voted_data(&vote.user_id, vote.rejected, count);
    let values = (
        votes::pending_id.eq(&vote.pending_id),
        votes::user_id.eq(&vote.user_id),
        votes::at.eq(vote.at),
        votes::rejected.eq(vote.rejected),
        votes::answers.eq(&vote.answers),
        votes::reject_reason.eq(&vote.reject_reason),
        votes::digest.eq(&vote.digest),
    );
    let insert = diesel::insert_into(votes::table).values(values);
    match (conn, entry) {
        #[cfg(feature = "postgres")]
        (AnyConnection::Postgres(pg), Some(entry)) => {
            let pending_ids = [vote.pending_id.as_str()];
            let rows = events::rows_of_type(EventType::Voted, &pending_ids, now.as_micros(), &data);
            let event = diesel::insert_into(schema::events::table)
                .values(rows)
                .into_columns(events::event_columns());
            let logged = diesel::insert_into(schema::attempts::table).values(entry);
            Together(insert, event, logged).execute(pg)?;
            changes.appended_by_statement();
        }
        (conn, entry) => {
            per_backend!(conn, c => insert.execute(c))?;
            changes.append_voted(conn, &vote.pending_id, &data, now)?;
            if let Some(entry) = entry {
                ledger::insert(conn, std::slice::from_ref(entry))?;
            }
        }
    }
    Ok(())
}

/// QUO-4: the one claim for the deciding group: its submission (the
/// caller's vote when it is in the group, else the group's latest), at
/// the claim's clock, resolver `quorum` with the group's voters frozen.
#[allow(clippy::too_many_arguments)]
fn claim_for_group(
    conn: &mut AnyConnection,
    scope: &Scope,
    (record, rows): (BundleRecord, Vec<QuestionRecord>),
    votes: &[VoteRecord],
    group: &[usize],
    own: usize,
    entries: &Entries,
    now: Timestamp,
    changes: &mut Changes,
    failpoints: &Failpoints,
) -> Result<Claimed> {
    let deciding = if group.contains(&own) {
        own
    } else {
        *group.last().unwrap_or(&own)
    };
    let vote = &votes[deciding];
    let decision = if vote.rejected {
        Decision::Rejected {
            reason: vote.reject_reason.clone(),
        }
    } else {
        Decision::Answered(vote.answers())
    };
    let voters: Vec<&str> = group.iter().map(|&i| votes[i].user_id.as_str()).collect();
    let resolver = Resolver {
        kind: DecidedBy::Quorum.as_str(),
        id: String::new(),
        voters: serde_json::to_string(&voters)
            .map_err(|error| Error::Internal(format!("voters: {error}")))?,
    };
    let target = Target {
        record,
        active_when_read: true,
        rows,
    };
    claim::win(
        conn,
        scope,
        target,
        &decision,
        &resolver,
        &entries.won,
        now,
        changes,
        failpoints,
    )
}

/// QUO-6: a person cancels a quorum bundle only as its requester or one
/// who may vote (`system` is not asked); unreadable quorum columns refuse
/// every person (QUO-2).
pub(crate) fn check_cancel(
    conn: &mut AnyConnection,
    record: &BundleRecord,
    user_id: &str,
) -> Result<()> {
    let policy: Policy = quorum::load_policy(conn, record.quorum())?.ok_or_else(unreadable)?;
    if user_id == policy.requested_by || policy.may_vote(user_id) {
        return Ok(());
    }
    Err(Error::NotEligible)
}
