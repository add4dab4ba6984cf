//! The bundle as callers see it: plain data, no queries. Views (LIST-6),
//! responses (WIRE-2), the result of a resolve (REPLAY-1) and the outcome
//! of a wait (WAIT-1). The views are written as their JSON by their
//! derived `Serialize` (field order is key order, every key always
//! present, LIST-7), the same bytes for the doors and the event log, and
//! publish their schema by their derived `JsonSchema`.

use schemars::JsonSchema;
use serde::Serialize;

use crate::rules::vocabulary::{
    BundleKind, BundleStatus, DecidedBy, ExpiryAction, QuestionStatus, Resolution,
};
use crate::store::clock::or_empty;
use crate::store::Timestamp;

/// An option as shown to a caller (LIST-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OptionView {
    /// What an answer selects.
    pub option_id: String,
    /// A short label.
    pub label: String,
    /// What choosing it means.
    pub description: String,
}

/// A question as shown to a caller (LIST-6, LIST-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct QuestionView {
    /// The question's id within its bundle (empty in a degraded row).
    pub question_id: String,
    /// A short title.
    pub title: String,
    /// The question itself.
    pub prompt: String,
    /// `pending` for an absent or empty status; any other as stored.
    pub status: QuestionStatus,
    /// ASK-6: false when an answer may select at most one option (VAL-9).
    pub multi_select: bool,
    /// The choices, in their order.
    pub options: Vec<OptionView>,
}

/// What people call a bundle's task and workspace (LIST-11): each `""`
/// when unknown (no task, no such workspace, never named).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TaskNames {
    /// The task's title (LIFE-12).
    pub task_title: String,
    /// The workspace id the task carries, as stored (may dangle).
    pub workspace_id: String,
    /// That workspace's name (LIFE-12).
    pub workspace_name: String,
}

/// A bundle as shown to a caller (LIST-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BundleView {
    /// The bundle's id.
    pub pending_id: String,
    /// The bundle's task (AUTH-4); empty when it cannot be resolved.
    pub task_id: String,
    /// The task's title (LIST-11); `""` when unknown.
    pub task_title: String,
    /// The workspace id the task carries, as stored (it may be empty or
    /// name no workspace).
    pub workspace_id: String,
    /// That workspace's name (LIST-11); `""` when unknown.
    pub workspace_name: String,
    /// The session that asked.
    pub session_id: String,
    /// Who may answer it (AUTH-6).
    pub kind: BundleKind,
    /// When it was asked (DM-3).
    pub created_at: Timestamp,
    /// Whole seconds since it was asked, floored at zero.
    pub age_seconds: i64,
    /// Its deadline (EXP-1, EXP-5); `""` when it has none.
    #[serde(with = "or_empty")]
    #[schemars(schema_with = "or_empty::schema")]
    pub expires_at: Option<Timestamp>,
    /// What its deadline does: `expire`, `answer` or `reject`; `""`
    /// without a deadline.
    pub on_expire: ExpiryAction,
    /// QUO-5: its quorum and every vote recorded, `null` without one.
    pub quorum: Option<QuorumView>,
    /// NUDGE-5: where its reminders and escalation stand, `null` when it
    /// was asked with neither.
    pub nudges: Option<NudgesView>,
    /// What the agent wrote around its questions.
    pub context: String,
    /// Its questions, in question order (DM-4).
    pub questions: Vec<QuestionView>,
}

/// A bundle's quorum as shown (QUO-5): the policy fixed at ask and every
/// recorded vote in vote order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct QuorumView {
    /// Identical approvals that decide.
    pub approvals: u32,
    /// Rejections that decide.
    pub rejections: u32,
    /// Who may vote; `[]`: every user who sees the bundle.
    pub eligible: Vec<String>,
    /// The person asked for, who never votes; `""` for nobody.
    pub requested_by: String,
    /// Every recorded vote, in vote order (`at`, then as recorded).
    pub votes: Vec<VoteView>,
}

/// A bundle's reminders and escalation as shown (NUDGE-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct NudgesView {
    /// How many reminders were taken (missed ones count).
    pub reminders_sent: u32,
    /// When the next reminder falls; `""` when none remains before the
    /// deadline.
    #[serde(with = "or_empty")]
    #[schemars(schema_with = "or_empty::schema")]
    pub next_reminder_at: Option<Timestamp>,
    /// When the escalation took effect, once it has; else `""`.
    #[serde(with = "or_empty")]
    #[schemars(schema_with = "or_empty::schema")]
    pub escalated_at: Option<Timestamp>,
}

/// One recorded vote (QUO-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VoteView {
    /// The voter.
    pub user_id: String,
    /// When it was recorded.
    pub at: Timestamp,
    /// True for a rejection.
    pub rejected: bool,
    /// Its answers, shaped as a response's; empty for a rejection.
    pub answers: Vec<Answer>,
    /// Its reason, trimmed; empty unless rejected.
    pub reject_reason: String,
    /// The SHA-256 digest of the vote as submitted (as the attempt ledger
    /// records it): approvals count together only when their digests are
    /// equal.
    pub digest: String,
    /// Pending: whether it counts now (its voter still sees the bundle
    /// and may vote); resolved: whether it is among `voters`.
    pub counts: bool,
}

/// One answered question of a response (WIRE-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Answer {
    /// Which question.
    pub question_id: String,
    /// The chosen option ids, in the question's order.
    pub selected_options: Vec<String>,
    /// Free text, trimmed.
    pub custom_text: String,
}

/// A resolution as submitted, normalized (NORM-1..3): the answers in
/// question order, or a rejection and its trimmed reason. A deadline's default is
/// stored and shown in this form (EXP-5), byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Submission {
    /// One answer per question, in question order (DM-4); empty for a rejection.
    pub answers: Vec<Answer>,
    /// True for a rejection.
    pub rejected: bool,
    /// The rejection's reason, trimmed; empty otherwise.
    pub reject_reason: String,
}

/// The stored resolution of a bundle (WIRE-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Response {
    /// The bundle's id.
    pub pending_id: String,
    /// One answer per question, in question order (DM-4); empty for a rejection or a
    /// cancellation.
    pub answers: Vec<Answer>,
    /// True iff the bundle was rejected.
    pub rejected: bool,
    /// The winner's reason, trimmed; empty unless rejected.
    pub reject_reason: String,
    /// The claim time; `None` only for degraded imported rows.
    #[serde(with = "or_empty")]
    #[schemars(schema_with = "or_empty::schema")]
    pub responded_at: Option<Timestamp>,
    /// Who decided (WIRE-2): the winner's kind, `deadline` for a default,
    /// `""` where none was recorded (DM-1).
    pub decided_by: DecidedBy,
    /// QUO-4: for `decided_by` `quorum`, the user ids of the deciding
    /// votes in vote order; `[]` for every other resolution.
    pub voters: Vec<String>,
}

impl Response {
    /// The placeholder a recorded vote carries (QUO-3): shown as `null`.
    pub(crate) fn none(pending_id: &str) -> Response {
        Response {
            pending_id: pending_id.to_owned(),
            answers: Vec::new(),
            rejected: false,
            reject_reason: String::new(),
            responded_at: None,
            decided_by: DecidedBy::Unrecorded,
            voters: Vec::new(),
        }
    }
}

/// The result of `get_bundle` (WIRE-3): the bundle as the inbox lists it
/// (LIST-6), then `status` and `response`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BundleDetail {
    /// The bundle as listed.
    #[serde(flatten)]
    pub bundle: BundleView,
    /// Where it stands.
    pub status: BundleStatus,
    /// Present once the bundle is resolved, else `null`.
    pub response: Option<Response>,
    /// The deadline's stored default for `answer` and `reject` (EXP-5),
    /// else `null`.
    pub default_response: Option<Submission>,
    /// WIRE-6: true iff the caller itself decided it (the stored resolver
    /// is the calling principal); false for a deadline's, another's, an
    /// unresolved bundle and a resolver not recorded.
    pub decided_by_caller: bool,
    /// QUO-3b: true iff the bundle is an active quorum bundle and the
    /// caller is a user who may vote on it and has not voted.
    pub may_vote: bool,
}

/// One entry of the attempt ledger (AUD-1, AUD-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AttemptView {
    /// When it was recorded, by the handle's clock.
    pub at: Timestamp,
    /// `system`, `user`, `agent`, or `deadline` for a settlement.
    pub principal_kind: String,
    /// The user's id, `""` where the kind has none.
    pub user_id: String,
    /// The agent's id, `""` where the kind has none.
    pub agent_id: String,
    /// The door it came through (AUD-4): `rust`, `c_abi`, `mcp`, `http`,
    /// `cli`, or `deadline`.
    pub channel: String,
    /// `won`, `lost`, `no_longer_active`, `invalid` or `expired`.
    pub outcome: String,
    /// Lowercase hex SHA-256 of what was submitted (AUD-5).
    pub digest: String,
}

/// A ledger entry as `clarion audit export` writes it: its bundle, then
/// the entry (AUD-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerEntry {
    /// The bundle attempted.
    pub pending_id: String,
    /// The entry.
    #[serde(flatten)]
    pub attempt: AttemptView,
}

/// The outcome of a resolve or cancel that reached a winner: this caller's
/// (`claimed`) or an earlier one's, replayed byte for byte (REPLAY-1/2);
/// or, on a quorum bundle, a vote recorded while the quorum is not met
/// (QUO-3): `claimed` false, status `pending`, and a `response` that is
/// shown as `null` (its `pending_id` alone is filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// True for the one caller whose claim won.
    pub claimed: bool,
    /// The winner's resolution; `pending` for a vote recorded.
    pub status: BundleStatus,
    /// The winner's response.
    pub response: Response,
    /// QUO-5: the bundle's quorum with its votes, `None` without one.
    pub quorum: Option<QuorumView>,
}

impl Resolved {
    /// The winner's response, `None` for a vote recorded (QUO-3).
    pub fn winner(&self) -> Option<&Response> {
        (self.status != BundleStatus::Pending).then_some(&self.response)
    }
}

/// How `wait` ended (WAIT-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Answered, with the response.
    Answered(Response),
    /// Rejected, with the response (and its reason).
    Rejected(Response),
    /// Cancelled, with the response.
    Cancelled(Response),
    /// Its session ended while it waited.
    Expired,
    /// A newer turn replaced its turn.
    Superseded,
    /// The host detached the session while the agent waited (LIFE-5).
    Detached,
    /// The caller's timeout passed first.
    TimedOut,
}

impl WaitOutcome {
    /// A resolution received by a waiter.
    pub(crate) fn resolved(status: BundleStatus, response: Response) -> WaitOutcome {
        match status.resolution() {
            Some(Resolution::Rejected) => WaitOutcome::Rejected(response),
            Some(Resolution::Cancelled) => WaitOutcome::Cancelled(response),
            _ => WaitOutcome::Answered(response),
        }
    }

    /// The outcome's word on the wire.
    pub fn as_str(&self) -> &'static str {
        match self {
            WaitOutcome::Answered(_) => Resolution::Answered.as_str(),
            WaitOutcome::Rejected(_) => Resolution::Rejected.as_str(),
            WaitOutcome::Cancelled(_) => Resolution::Cancelled.as_str(),
            WaitOutcome::Expired => BundleStatus::Expired.as_str(),
            WaitOutcome::Superseded => BundleStatus::Superseded.as_str(),
            WaitOutcome::Detached => "detached",
            WaitOutcome::TimedOut => "timed_out",
        }
    }

    /// The WIRE-2 response, for the three resolutions.
    pub fn response(&self) -> Option<&Response> {
        match self {
            WaitOutcome::Answered(r) | WaitOutcome::Rejected(r) | WaitOutcome::Cancelled(r) => {
                Some(r)
            }
            _ => None,
        }
    }
}
