//! Quorum (QUO-1, QUO-3, QUO-4): the policy an ask fixes, who may vote,
//! and which group of votes decides. Plain data and pure functions: the
//! claim (`domain::claim::vote`) reads the votes in its transaction and
//! asks this module what they add up to.

use std::ops::RangeInclusive;

use crate::error::ValidationError;
use crate::rules::limits::{check_count, check_id};

/// QUO-1: how many identical approvals a quorum may ask for.
pub const APPROVALS: RangeInclusive<u32> = 2..=10;
/// QUO-1: how many distinct ids an `eligible` list holds when given.
pub const ELIGIBLE: RangeInclusive<usize> = 2..=100;

/// A quorum as the agent asked for it (QUO-1), before its checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuorumRequest {
    /// How many people must submit the same decision: 2 to 10.
    pub approvals: u32,
    /// How many rejections reject the bundle: 1 (the default, `None`) to
    /// `approvals`.
    pub rejections: Option<u32>,
    /// Who may vote; empty: every user who sees the bundle when voting.
    pub eligible: Vec<String>,
    /// The person the agent asks for, who never votes; `""` for nobody.
    pub requested_by: String,
}

/// A quorum policy as stored with its bundle, never changed (QUO-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Identical approvals that decide.
    pub approvals: u32,
    /// Rejections that decide.
    pub rejections: u32,
    /// Who may vote, in the order given; empty: whoever sees the bundle.
    pub eligible: Vec<String>,
    /// Who never votes; `""` for nobody.
    pub requested_by: String,
}

impl Policy {
    /// QUO-1: the request's checks, all without the database. Field paths
    /// name `quorum.…`.
    pub fn checked(request: &QuorumRequest) -> Result<Policy, ValidationError> {
        if !APPROVALS.contains(&request.approvals) {
            return Err(ValidationError::new(
                "quorum.approvals",
                format!(
                    "expected {} to {} approvals, got {}",
                    APPROVALS.start(),
                    APPROVALS.end(),
                    request.approvals
                ),
            ));
        }
        let rejections = request.rejections.unwrap_or(1);
        if !(1..=request.approvals).contains(&rejections) {
            return Err(ValidationError::new(
                "quorum.rejections",
                format!(
                    "expected 1 to {} rejections, got {rejections}",
                    request.approvals
                ),
            ));
        }
        if !request.requested_by.is_empty() {
            check_id("quorum.requested_by", &request.requested_by)?;
        }
        if !request.eligible.is_empty() {
            check_count("quorum.eligible", request.eligible.len(), &ELIGIBLE, "ids")?;
            for (i, id) in request.eligible.iter().enumerate() {
                let field = format!("quorum.eligible[{i}]");
                check_id(&field, id)?;
                if let Some(first) = request.eligible[..i].iter().position(|e| e == id) {
                    return Err(ValidationError::new(
                        field,
                        format!("duplicate of quorum.eligible[{first}]"),
                    ));
                }
            }
            let voters = request
                .eligible
                .iter()
                .filter(|id| **id != request.requested_by)
                .count();
            if request.approvals as usize > voters {
                return Err(ValidationError::new(
                    "quorum.approvals",
                    format!(
                        "{} approvals can never be reached by {voters} eligible voters \
                         (requested_by never votes)",
                        request.approvals
                    ),
                ));
            }
        }
        Ok(Policy {
            approvals: request.approvals,
            rejections,
            eligible: request.eligible.clone(),
            requested_by: request.requested_by.clone(),
        })
    }

    /// DM-1: the stored columns read back; `None` when they cannot make a
    /// policy (a bundle flagged human-only with unreadable quorum columns,
    /// whose users' submissions are then refused, QUO-2).
    pub fn from_stored(
        approvals: Option<i32>,
        rejections: Option<i32>,
        requested_by: Option<&str>,
        eligible: Vec<String>,
    ) -> Option<Policy> {
        let approvals = u32::try_from(approvals?).ok()?;
        let rejections = u32::try_from(rejections?).ok()?;
        if !APPROVALS.contains(&approvals) || !(1..=approvals).contains(&rejections) {
            return None;
        }
        Some(Policy {
            approvals,
            rejections,
            eligible,
            requested_by: requested_by.unwrap_or_default().to_owned(),
        })
    }

    /// QUO-3 step 4: whether `user_id` may vote at all — never the
    /// requester; with an `eligible` list, only those on it. Whether the
    /// user still sees the bundle is visibility's, read by the caller.
    pub fn may_vote(&self, user_id: &str) -> bool {
        !user_id.is_empty()
            && user_id != self.requested_by
            && (self.eligible.is_empty() || self.eligible.iter().any(|id| id == user_id))
    }
}

/// One recorded vote as counting sees it, in vote order (`at`, row id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ballot<'a> {
    /// The voter.
    pub user_id: &'a str,
    /// A rejection (they count together whatever their reasons).
    pub rejected: bool,
    /// AUD-5's digest of the vote: approvals count per identical digest.
    pub digest: &'a str,
    /// The voter may still vote and still sees the bundle (QUO-4).
    pub counts: bool,
}

/// QUO-4: the group of votes that decides, as indexes into the ballots in
/// vote order, or `None` while no threshold is met. The caller's own group
/// (`own`, an index) is looked at first; then every other group, the one
/// whose first vote came first first (a threshold met by a membership
/// change is claimed by the next submission).
pub fn deciding_group(policy: &Policy, ballots: &[Ballot<'_>], own: usize) -> Option<Vec<usize>> {
    let same_group = |a: &Ballot<'_>, b: &Ballot<'_>| {
        a.rejected == b.rejected && (a.rejected || a.digest == b.digest)
    };
    let group_of = |leader: &Ballot<'_>| -> Vec<usize> {
        ballots
            .iter()
            .enumerate()
            .filter(|(_, ballot)| ballot.counts && same_group(ballot, leader))
            .map(|(index, _)| index)
            .collect()
    };
    let met = |group: &Vec<usize>, leader: &Ballot<'_>| {
        let needed = if leader.rejected {
            policy.rejections
        } else {
            policy.approvals
        };
        group.len() >= needed as usize
    };
    let leaders = std::iter::once(own).chain(0..ballots.len());
    for leader in leaders.filter_map(|index| ballots.get(index)) {
        let group = group_of(leader);
        if met(&group, leader) {
            return Some(group);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(approvals: u32, rejections: u32) -> Policy {
        Policy {
            approvals,
            rejections,
            eligible: Vec::new(),
            requested_by: "req".into(),
        }
    }

    fn ballot<'a>(user_id: &'a str, rejected: bool, digest: &'a str) -> Ballot<'a> {
        Ballot {
            user_id,
            rejected,
            digest,
            counts: true,
        }
    }

    #[test]
    fn quo_4_identical_approvals_decide_and_different_ones_do_not_add_up() {
        let two = [ballot("a", false, "x"), ballot("b", false, "y")];
        assert_eq!(deciding_group(&policy(2, 1), &two, 1), None);
        let same = [ballot("a", false, "x"), ballot("b", false, "x")];
        assert_eq!(deciding_group(&policy(2, 1), &same, 1), Some(vec![0, 1]));
    }

    #[test]
    fn quo_4_rejections_count_together_and_a_vote_that_no_longer_counts_is_left_out() {
        let rejections = [ballot("a", true, "r1"), ballot("b", true, "r2")];
        assert_eq!(
            deciding_group(&policy(2, 2), &rejections, 1),
            Some(vec![0, 1])
        );
        let mut gone = rejections.clone();
        gone[0].counts = false;
        assert_eq!(deciding_group(&policy(2, 2), &gone, 1), None);
        assert_eq!(deciding_group(&policy(2, 1), &gone, 1), Some(vec![1]));
    }

    #[test]
    fn quo_1_the_requester_never_votes_and_an_unreachable_quorum_is_refused() {
        let request = QuorumRequest {
            approvals: 2,
            rejections: None,
            eligible: vec!["req".into(), "a".into()],
            requested_by: "req".into(),
        };
        assert_eq!(
            Policy::checked(&request).unwrap_err().field,
            "quorum.approvals"
        );
        let duplicate = QuorumRequest {
            eligible: vec!["a".into(), "b".into(), "a".into()],
            ..request.clone()
        };
        assert_eq!(
            Policy::checked(&duplicate).unwrap_err().field,
            "quorum.eligible[2]"
        );
        let fine = QuorumRequest {
            eligible: vec!["a".into(), "b".into(), "req".into()],
            ..request
        };
        let policy = Policy::checked(&fine).unwrap();
        assert!(policy.may_vote("a") && !policy.may_vote("req") && !policy.may_vote("c"));
    }
}
