//! Quorum bundles as stored and shown (QUO-1, QUO-4, QUO-5): the policy's
//! rows written at ask, the votes read back, and the `quorum` object every
//! LIST-6 element carries. What a vote decides is the claim's
//! (`claim::vote`); what votes add up to is `rules::quorum`'s.

use std::collections::HashMap;

use diesel::prelude::*;

use crate::domain::views::{Answer, QuorumView, VoteView};
use crate::error::{Error, Result};
use crate::rules::principal::Principal;
use crate::rules::quorum::Policy;
use crate::rules::visibility::{self, Scope};
use crate::store::schema::{quorum_eligible, votes};
use crate::store::{among, AnyConnection, Timestamp};

/// One vote as stored (QUO-3).
#[derive(Debug, Clone, Queryable)]
pub(crate) struct VoteRecord {
    pub pending_id: String,
    pub user_id: String,
    pub at: i64,
    pub rejected: bool,
    /// The answers as WIRE-2's, a JSON array (`[]` for a rejection).
    pub answers: String,
    pub reject_reason: String,
    pub digest: String,
}

impl VoteRecord {
    /// The vote's answers read back (DM-1: unreadable text shows none).
    pub(crate) fn answers(&self) -> Vec<Answer> {
        serde_json::from_str(&self.answers).unwrap_or_default()
    }
}

/// The columns of a [`VoteRecord`].
#[diesel::dsl::auto_type]
fn vote_columns() -> _ {
    (
        votes::pending_id,
        votes::user_id,
        votes::at,
        votes::rejected,
        votes::answers,
        votes::reject_reason,
        votes::digest,
    )
}

/// The votes of the given bundles, each bundle's in vote order (`at`, id).
pub(crate) fn load_votes(
    conn: &mut AnyConnection,
    pending_ids: &[&str],
) -> Result<Vec<VoteRecord>> {
    Ok(votes::table
        .filter(among(votes::pending_id, pending_ids.iter().copied()))
        .order((votes::pending_id, votes::at, votes::id))
        .select(vote_columns())
        .load(conn)?)
}

/// The `eligible` lists of the given bundles, in the order given at ask.
fn load_eligible(
    conn: &mut AnyConnection,
    pending_ids: &[&str],
) -> Result<HashMap<String, Vec<String>>> {
    let rows: Vec<(String, String)> = quorum_eligible::table
        .filter(among(
            quorum_eligible::pending_id,
            pending_ids.iter().copied(),
        ))
        .order((quorum_eligible::pending_id, quorum_eligible::position))
        .select((quorum_eligible::pending_id, quorum_eligible::user_id))
        .load(conn)?;
    let mut lists: HashMap<String, Vec<String>> = HashMap::new();
    for (pending_id, user_id) in rows {
        lists.entry(pending_id).or_default().push(user_id);
    }
    Ok(lists)
}

/// QUO-1: the policy's `eligible` rows, written with the bundle at ask.
pub(crate) fn insert_eligible(
    conn: &mut AnyConnection,
    pending_id: &str,
    eligible: &[String],
) -> Result<()> {
    if eligible.is_empty() {
        return Ok(());
    }
    let rows: Vec<_> = eligible
        .iter()
        .enumerate()
        .map(|(position, user_id)| {
            (
                quorum_eligible::pending_id.eq(pending_id),
                quorum_eligible::position.eq(position as i64),
                quorum_eligible::user_id.eq(user_id),
            )
        })
        .collect();
    per_backend!(conn, c => diesel::insert_into(quorum_eligible::table)
        .values(&rows)
        .execute(c))?;
    Ok(())
}

/// A bundle's quorum columns as stored (QUO-1, QUO-2, QUO-4).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stored<'a> {
    pub pending_id: &'a str,
    pub human_only: bool,
    pub approvals: Option<i32>,
    pub rejections: Option<i32>,
    pub requested_by: Option<&'a str>,
    /// The deciding voters' ids, a JSON array.
    pub voters: &'a str,
}

impl Stored<'_> {
    /// QUO-2: the bundle is for people only — its flag, or policy columns
    /// of any kind (unreadable ones fail closed).
    pub(crate) fn human_only(&self) -> bool {
        self.human_only || self.approvals.is_some()
    }

    /// The stored policy; `None` when the bundle has none or its columns
    /// cannot be read (QUO-2).
    pub(crate) fn policy(&self, eligible: Vec<String>) -> Option<Policy> {
        Policy::from_stored(self.approvals, self.rejections, self.requested_by, eligible)
    }

    /// The deciding voters a quorum froze (QUO-4), `[]` for every other.
    pub(crate) fn voters(&self) -> Vec<String> {
        serde_json::from_str(self.voters).unwrap_or_default()
    }
}

/// The stored policy of one quorum bundle with its `eligible` rows.
pub(crate) fn load_policy(conn: &mut AnyConnection, stored: Stored<'_>) -> Result<Option<Policy>> {
    let mut eligible = load_eligible(conn, &[stored.pending_id])?;
    Ok(stored.policy(eligible.remove(stored.pending_id).unwrap_or_default()))
}

/// QUO-4: does `user_id` see the bundle now, by the one visibility rule?
pub(crate) fn user_sees(
    conn: &mut AnyConnection,
    user_id: &str,
    pending_id: &str,
    now: i64,
) -> Result<bool> {
    let user = Principal::User {
        user_id: user_id.to_owned(),
    };
    let scope = Scope::of(&user)
        .ok_or_else(|| Error::Internal(format!("user {user_id:?} has no scope")))?;
    Ok(visibility::bundle_visibility_query(&scope, pending_id, now).get_result(conn)?)
}

/// QUO-4: whether each vote counts now: its voter may vote and still sees
/// the bundle. One visibility read per distinct voter, but `seeing`, who
/// is known to see it (the voter whose read under the lock found it).
pub(crate) fn counting_now(
    conn: &mut AnyConnection,
    policy: &Policy,
    votes: &[VoteRecord],
    seeing: Option<&str>,
    now: i64,
) -> Result<Vec<bool>> {
    let mut seen: HashMap<&str, bool> = HashMap::new();
    if let Some(user) = seeing {
        seen.insert(user, policy.may_vote(user));
    }
    let mut counts = Vec::with_capacity(votes.len());
    for vote in votes {
        let sees = match seen.get(vote.user_id.as_str()) {
            Some(sees) => *sees,
            None => {
                let sees = policy.may_vote(&vote.user_id)
                    && user_sees(conn, &vote.user_id, &vote.pending_id, now)?;
                seen.insert(&vote.user_id, sees);
                sees
            }
        };
        counts.push(sees);
    }
    Ok(counts)
}

/// QUO-5: the `quorum` object of a bundle with its policy, its votes in
/// vote order and whether each counts.
pub(crate) fn view(policy: &Policy, votes: &[VoteRecord], counts: &[bool]) -> QuorumView {
    QuorumView {
        approvals: policy.approvals,
        rejections: policy.rejections,
        eligible: policy.eligible.clone(),
        requested_by: policy.requested_by.clone(),
        votes: votes
            .iter()
            .zip(counts)
            .map(|(vote, counts)| VoteView {
                user_id: vote.user_id.clone(),
                at: Timestamp::from_micros(vote.at),
                rejected: vote.rejected,
                answers: vote.answers(),
                reject_reason: vote.reject_reason.clone(),
                digest: vote.digest.clone(),
                counts: *counts,
            })
            .collect(),
    }
}

/// A quorum bundle read for showing: its policy, its votes, and which of
/// them count.
pub(crate) struct Shown {
    pub view: QuorumView,
    pub policy: Policy,
    votes: Vec<VoteRecord>,
}

impl Shown {
    /// QUO-3b: `user_id` has a recorded vote.
    pub(crate) fn has_voted(&self, user_id: &str) -> bool {
        self.votes.iter().any(|vote| vote.user_id == user_id)
    }
}

/// QUO-5: the `quorum` objects of the given bundles (each with whether it
/// is active now), keyed by bundle; none for a bundle without a quorum or
/// whose policy cannot be read. No statement at all when none has one.
/// A vote counts, while its bundle is active, when its voter may vote and
/// still sees the bundle; once resolved, when it is among `voters`; on an
/// inactive bundle never again.
pub(crate) fn shown(
    conn: &mut AnyConnection,
    bundles: &[(Stored<'_>, bool)],
    now: i64,
) -> Result<HashMap<String, Shown>> {
    let with_quorum: Vec<&str> = bundles
        .iter()
        .filter(|(stored, _)| stored.approvals.is_some())
        .map(|(stored, _)| stored.pending_id)
        .collect();
    let mut shown = HashMap::new();
    if with_quorum.is_empty() {
        return Ok(shown);
    }
    let mut eligible = load_eligible(conn, &with_quorum)?;
    let mut votes: HashMap<String, Vec<VoteRecord>> = HashMap::new();
    for vote in load_votes(conn, &with_quorum)? {
        votes.entry(vote.pending_id.clone()).or_default().push(vote);
    }
    for (stored, active) in bundles {
        let id = stored.pending_id;
        let Some(policy) = stored.policy(eligible.remove(id).unwrap_or_default()) else {
            continue;
        };
        let votes = votes.remove(id).unwrap_or_default();
        let counts = if *active {
            counting_now(conn, &policy, &votes, None, now)?
        } else {
            let voters = stored.voters();
            votes
                .iter()
                .map(|vote| voters.contains(&vote.user_id))
                .collect()
        };
        let view = view(&policy, &votes, &counts);
        shown.insert(
            id.to_owned(),
            Shown {
                view,
                policy,
                votes,
            },
        );
    }
    Ok(shown)
}
