//! The words clarion stores and shows, each written once as an enum: the
//! states of a session, the kinds of a bundle, the statuses of a question
//! row, the three resolutions, and where a bundle stands. Stored text is
//! read through these types; degraded rows (DM-1) keep their unknown word
//! in an `Unknown` case instead of failing.

use crate::error::ValidationError;

/// The state of an agent session. The host owns it; clarion only reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionState {
    /// Created, not started.
    Created,
    /// Starting up.
    Starting,
    /// Working.
    Running,
    /// Waiting for a human.
    WaitingForInput,
    /// Between turns.
    Idle,
    /// Finished (terminal).
    Completed,
    /// Failed (terminal).
    Failed,
    /// Cancelled (terminal).
    Cancelled,
}

impl SessionState {
    /// Every state, in lifecycle order.
    pub const ALL: [SessionState; 8] = [
        SessionState::Created,
        SessionState::Starting,
        SessionState::Running,
        SessionState::WaitingForInput,
        SessionState::Idle,
        SessionState::Completed,
        SessionState::Failed,
        SessionState::Cancelled,
    ];

    /// The terminal states: a session in one can no longer be answered (ACT-1.3).
    pub const TERMINAL: [SessionState; 3] = [
        SessionState::Completed,
        SessionState::Failed,
        SessionState::Cancelled,
    ];

    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Created => "created",
            SessionState::Starting => "starting",
            SessionState::Running => "running",
            SessionState::WaitingForInput => "waiting_for_input",
            SessionState::Idle => "idle",
            SessionState::Completed => "completed",
            SessionState::Failed => "failed",
            SessionState::Cancelled => "cancelled",
        }
    }

    /// Parses a state name; the error names `field`.
    pub fn parse(field: &str, text: &str) -> Result<SessionState, ValidationError> {
        SessionState::ALL
            .into_iter()
            .find(|state| state.as_str() == text)
            .ok_or_else(|| {
                ValidationError::new(
                    field,
                    format!(
                        "unknown session state {text:?} (expected one of {})",
                        SessionState::ALL.map(SessionState::as_str).join(", ")
                    ),
                )
            })
    }

    /// `completed`, `failed` and `cancelled` end a session.
    pub fn is_terminal(self) -> bool {
        SessionState::TERMINAL.contains(&self)
    }
}

/// Who may answer a bundle (AUTH-6).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum BundleKind {
    /// Answerable by humans and by permitted agents.
    #[default]
    Question,
    /// An approval request: humans only.
    Permission,
    /// A kind word clarion does not know, as stored in a degraded row
    /// (DM-1). `ask` refuses it.
    Unknown(String),
}

impl BundleKind {
    const QUESTION: &'static str = "question";
    const PERMISSION: &'static str = "permission";

    /// The word `permission`, as the visibility fragments bind it (AUTH-6).
    pub(crate) const PERMISSION_WORD: &'static str = Self::PERMISSION;

    /// The stored word.
    pub fn as_str(&self) -> &str {
        match self {
            BundleKind::Question => Self::QUESTION,
            BundleKind::Permission => Self::PERMISSION,
            BundleKind::Unknown(word) => word,
        }
    }

    /// A stored kind word; unknown words are kept.
    pub fn from_stored(text: &str) -> BundleKind {
        match text {
            Self::QUESTION => BundleKind::Question,
            Self::PERMISSION => BundleKind::Permission,
            other => BundleKind::Unknown(other.to_owned()),
        }
    }

    /// Parses a kind given by a caller; the error names `field`.
    pub fn parse(field: &str, text: &str) -> Result<BundleKind, ValidationError> {
        match BundleKind::from_stored(text) {
            BundleKind::Unknown(other) => Err(ValidationError::new(
                field,
                format!("unknown kind {other:?} (expected question or permission)"),
            )),
            known => Ok(known),
        }
    }
}

/// The three ways a claim resolves a bundle (CLAIM-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// Answered, with one answer per question.
    Answered,
    /// Declined, with an optional reason.
    Rejected,
    /// Withdrawn by a human or the host (LIFE-6).
    Cancelled,
}

impl Resolution {
    /// Every resolution.
    pub const ALL: [Resolution; 3] = [
        Resolution::Answered,
        Resolution::Rejected,
        Resolution::Cancelled,
    ];

    /// The stored and wire word.
    pub const fn as_str(self) -> &'static str {
        match self {
            Resolution::Answered => "answered",
            Resolution::Rejected => "rejected",
            Resolution::Cancelled => "cancelled",
        }
    }

    /// The resolution a stored word names, if any.
    pub fn from_word(text: &str) -> Option<Resolution> {
        Resolution::ALL
            .into_iter()
            .find(|resolution| resolution.as_str() == text)
    }
}

/// The status of one question row as stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QuestionStatus {
    /// NULL, empty or `pending`: still waiting (ACT-1.1).
    Pending,
    /// Resolved by the claim.
    Resolved(Resolution),
    /// Its session ended while it waited (LIFE-3, LIFE-4).
    Expired,
    /// Any other stored word (DM-1): not pending, not a resolution.
    Unknown(String),
}

impl QuestionStatus {
    /// The stored word of a pending row.
    pub(crate) const PENDING_WORD: &'static str = "pending";
    /// The stored word of an expired row.
    pub(crate) const EXPIRED_WORD: &'static str = "expired";
    /// What counts as pending besides NULL (ACT-1.1); an unrecognized word
    /// does not.
    pub(crate) const PENDING_WORDS: [&'static str; 2] = ["", Self::PENDING_WORD];

    /// A stored status: NULL and empty read as pending (LIST-7).
    pub fn from_stored(text: Option<&str>) -> QuestionStatus {
        match text {
            None => QuestionStatus::Pending,
            Some(word) if Self::PENDING_WORDS.contains(&word) => QuestionStatus::Pending,
            Some(Self::EXPIRED_WORD) => QuestionStatus::Expired,
            Some(word) => Resolution::from_word(word).map_or_else(
                || QuestionStatus::Unknown(word.to_owned()),
                QuestionStatus::Resolved,
            ),
        }
    }

    /// The word shown to callers: `pending` for an absent or empty status,
    /// any other as stored (LIST-7).
    pub fn as_str(&self) -> &str {
        match self {
            QuestionStatus::Pending => Self::PENDING_WORD,
            QuestionStatus::Resolved(resolution) => resolution.as_str(),
            QuestionStatus::Expired => Self::EXPIRED_WORD,
            QuestionStatus::Unknown(word) => word,
        }
    }

    /// The resolution, for a resolved row.
    pub fn resolution(&self) -> Option<Resolution> {
        match self {
            QuestionStatus::Resolved(resolution) => Some(*resolution),
            _ => None,
        }
    }
}

/// Where a bundle stands (WIRE-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleStatus {
    /// Active: it can be answered (ACT-1).
    Pending,
    /// Resolved with answers.
    Answered,
    /// Resolved as declined.
    Rejected,
    /// Resolved as withdrawn.
    Cancelled,
    /// Its session ended while it waited.
    Expired,
    /// A newer turn replaced its turn (LIFE-2).
    Superseded,
    /// Not active for another reason (an ended session without expiry, a
    /// malformed bundle).
    Inactive,
}

impl BundleStatus {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            BundleStatus::Pending => QuestionStatus::PENDING_WORD,
            BundleStatus::Expired => QuestionStatus::EXPIRED_WORD,
            BundleStatus::Superseded => "superseded",
            BundleStatus::Inactive => "inactive",
            resolved => resolved.resolution().map_or("", Resolution::as_str),
        }
    }

    /// The resolution, for a resolved bundle.
    pub fn resolution(self) -> Option<Resolution> {
        match self {
            BundleStatus::Answered => Some(Resolution::Answered),
            BundleStatus::Rejected => Some(Resolution::Rejected),
            BundleStatus::Cancelled => Some(Resolution::Cancelled),
            _ => None,
        }
    }
}

impl From<Resolution> for BundleStatus {
    fn from(resolution: Resolution) -> Self {
        match resolution {
            Resolution::Answered => BundleStatus::Answered,
            Resolution::Rejected => BundleStatus::Rejected,
            Resolution::Cancelled => BundleStatus::Cancelled,
        }
    }
}

/// What an event of the log says happened to a bundle (EVT-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// A bundle was asked.
    Asked,
    /// A bundle was answered, rejected or cancelled.
    Resolved,
    /// An active bundle stopped being active without a resolution.
    Closed,
    /// A workspace's member set was replaced (PPL-2).
    Members,
    /// A vote on a quorum bundle was recorded (QUO-7).
    Voted,
    /// A reminder of an active bundle was taken (NUDGE-2).
    Reminded,
    /// An active bundle's escalation took effect (NUDGE-3).
    Escalated,
}

impl EventType {
    /// The stored and shown word, also the SSE `event:` name (HTTP-6).
    pub const fn as_str(self) -> &'static str {
        match self {
            EventType::Asked => "bundle.asked",
            EventType::Resolved => "bundle.resolved",
            EventType::Closed => "bundle.closed",
            EventType::Members => "workspace.members",
            EventType::Voted => "bundle.voted",
            EventType::Reminded => "bundle.reminded",
            EventType::Escalated => "bundle.escalated",
        }
    }
}

impl EventType {
    /// Every type of the log, the words a webhook may subscribe to
    /// (HOOK-1).
    pub const ALL: [EventType; 7] = [
        EventType::Asked,
        EventType::Resolved,
        EventType::Closed,
        EventType::Members,
        EventType::Voted,
        EventType::Reminded,
        EventType::Escalated,
    ];

    /// The type this word names, if any.
    pub fn from_word(word: &str) -> Option<EventType> {
        EventType::ALL
            .into_iter()
            .find(|kind| kind.as_str() == word)
    }
}

/// Where a webhook endpoint stands (HOOK-1, HOOK-2, HOOK-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WebhookState {
    /// Delivered to as events come.
    Enabled,
    /// An event kept failing for the give-up time: not tried again until
    /// `enable`; its events are kept (HOOK-5).
    Failing,
    /// Turned off (or it answered `410 Gone`): its events are not kept.
    Disabled,
}

impl WebhookState {
    /// The stored and shown word.
    pub const fn as_str(self) -> &'static str {
        match self {
            WebhookState::Enabled => "enabled",
            WebhookState::Failing => "failing",
            WebhookState::Disabled => "disabled",
        }
    }

    /// The state a stored word names; an unknown word reads as disabled,
    /// so nothing is delivered to an endpoint clarion cannot read.
    pub fn from_stored(word: &str) -> WebhookState {
        [WebhookState::Enabled, WebhookState::Failing]
            .into_iter()
            .find(|state| state.as_str() == word)
            .unwrap_or(WebhookState::Disabled)
    }
}

/// Why a `bundle.closed` event was appended (EVT-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseReason {
    /// Its session ended (LIFE-3).
    Expired,
    /// A new turn replaced its turn (LIFE-2).
    Superseded,
    /// It was deleted with its session or task (LIFE-1).
    Deleted,
    /// Its deadline passed and its action was `expire` (EXP-3).
    Deadline,
}

impl CloseReason {
    /// The word in the event's `data`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CloseReason::Expired => "expired",
            CloseReason::Superseded => "superseded",
            CloseReason::Deleted => "deleted",
            CloseReason::Deadline => "deadline",
        }
    }
}

/// What a deadline does to a bundle nobody settled (EXP-1, EXP-3), as
/// stored and shown (EXP-5): the action word, `""` without a deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExpiryAction {
    /// No deadline.
    #[default]
    None,
    /// The bundle expires, unanswered.
    Expire,
    /// The stored default answers become the resolution.
    Answer,
    /// The stored default rejection becomes the resolution.
    Reject,
}

impl ExpiryAction {
    const ALL: [ExpiryAction; 4] = [
        ExpiryAction::None,
        ExpiryAction::Expire,
        ExpiryAction::Answer,
        ExpiryAction::Reject,
    ];

    /// The word.
    pub const fn as_str(self) -> &'static str {
        match self {
            ExpiryAction::None => "",
            ExpiryAction::Expire => "expire",
            ExpiryAction::Answer => "answer",
            ExpiryAction::Reject => "reject",
        }
    }

    /// An action a caller names (`on_expire.action`): any word but `""`.
    pub(crate) fn parse(field: &str, word: &str) -> Result<ExpiryAction, ValidationError> {
        ExpiryAction::ALL
            .into_iter()
            .filter(|action| *action != ExpiryAction::None)
            .find(|action| action.as_str() == word)
            .ok_or_else(|| {
                ValidationError::new(
                    field,
                    format!("unknown action {word:?}: expected expire, answer or reject"),
                )
            })
    }

    /// The stored word read back; a word this version does not know is
    /// treated as no deadline's.
    pub(crate) fn from_stored(word: &str) -> ExpiryAction {
        ExpiryAction::ALL
            .into_iter()
            .find(|action| action.as_str() == word)
            .unwrap_or_default()
    }
}

/// The door an attempt came through (AUD-4). A handle records the
/// channel it was made for ([`crate::Clarion::via`]); settlements record
/// [`Channel::DEADLINE_WORD`], which no caller can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Channel {
    /// The Rust API (`Clarion::open`, the builder).
    #[default]
    Rust,
    /// The C ABI (`clarion_open`).
    CAbi,
    /// `clarion mcp`.
    Mcp,
    /// The router of `clarion::http::router`, `/rpc` included.
    Http,
    /// The command line's commands.
    Cli,
    /// An answer link's routes (LINK-3). Only they record it: a handle
    /// cannot be made for it ([`crate::Clarion::via`] keeps its own).
    Link,
}

impl Channel {
    /// The channel word of a deadline's settlement (AUD-1).
    pub const DEADLINE_WORD: &'static str = "deadline";

    /// The word on the wire and in the ledger.
    pub const fn as_str(self) -> &'static str {
        match self {
            Channel::Rust => "rust",
            Channel::CAbi => "c_abi",
            Channel::Mcp => "mcp",
            Channel::Http => "http",
            Channel::Cli => "cli",
            Channel::Link => "link",
        }
    }
}

/// How an attempt ended (AUD-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// This attempt's claim committed, or a deadline's default did.
    Won,
    /// A winner's resolution was replayed (REPLAY-1).
    Lost,
    /// Nothing won and nothing can (the `409`).
    NoLongerActive,
    /// Refused by a rule on the stored bundle (VAL-1, 2, 6, 8).
    Invalid,
    /// A deadline's `expire` settlement.
    Expired,
    /// A vote on a quorum bundle was recorded (or repeated) and the quorum
    /// is not met yet (QUO-3).
    Voted,
    /// The caller may not vote on this quorum bundle (QUO-3).
    NotEligible,
    /// The caller already voted otherwise on this quorum bundle (QUO-3).
    AlreadyVoted,
    /// The answer link was used already (LINK-3).
    LinkUsed,
}

impl Outcome {
    /// The word in the ledger.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Won => "won",
            Outcome::Lost => "lost",
            Outcome::NoLongerActive => "no_longer_active",
            Outcome::Invalid => "invalid",
            Outcome::Expired => "expired",
            Outcome::Voted => "voted",
            Outcome::NotEligible => "not_eligible",
            Outcome::AlreadyVoted => "already_voted",
            Outcome::LinkUsed => "link_used",
        }
    }
}

/// Who decided a bundle (WIRE-2): the winner's principal kind, or the
/// deadline's default (EXP-3). The claim stores this word as the bundle's
/// resolver kind, so what is shown is what was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecidedBy {
    /// A user answered, rejected or cancelled.
    User,
    /// An agent did.
    Agent,
    /// `system` did.
    System,
    /// The deadline's default was applied (EXP-3).
    Deadline,
    /// A quorum of votes decided it (QUO-4); the response names the voters.
    Quorum,
    /// No resolver was recorded (a degraded row, DM-1): written `""`.
    Unrecorded,
}

impl DecidedBy {
    const RECORDED: [DecidedBy; 5] = [
        DecidedBy::User,
        DecidedBy::Agent,
        DecidedBy::System,
        DecidedBy::Deadline,
        DecidedBy::Quorum,
    ];

    /// The word on the wire and in the database.
    pub const fn as_str(self) -> &'static str {
        match self {
            DecidedBy::User => "user",
            DecidedBy::Agent => "agent",
            DecidedBy::System => "system",
            DecidedBy::Deadline => "deadline",
            DecidedBy::Quorum => "quorum",
            DecidedBy::Unrecorded => "",
        }
    }

    /// The stored resolver kind read back; anything else is unrecorded.
    pub(crate) fn from_stored(kind: Option<&str>) -> DecidedBy {
        DecidedBy::RECORDED
            .into_iter()
            .find(|decided| Some(decided.as_str()) == kind)
            .unwrap_or(DecidedBy::Unrecorded)
    }
}

/// The words on the wire: each word type is written as its word, and its
/// published schema lists the words. `open`: a degraded row (DM-1) may
/// show a word outside the list, so a body's schema says only "a string"
/// (an argument's still lists the words it accepts).
macro_rules! words_on_the_wire {
    ($($type:ty => $name:literal, open: $open:literal, [$($word:expr),* $(,)?];)*) => {
        $(
            impl serde::Serialize for $type {
                fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    serializer.serialize_str(self.as_str())
                }
            }

            impl schemars::JsonSchema for $type {
                fn schema_name() -> std::borrow::Cow<'static, str> {
                    $name.into()
                }

                fn inline_schema() -> bool {
                    true
                }

                fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                    let words: Vec<&str> = vec![$($word),*];
                    if $open && generator.contract().is_serialize() {
                        schemars::json_schema!({
                            "type": "string",
                            "description": format!("One of {}; a degraded row shows its stored word.", words.join(", ")),
                        })
                    } else {
                        schemars::json_schema!({"type": "string", "enum": words})
                    }
                }
            }
        )*
    };
}

words_on_the_wire! {
    SessionState => "SessionState", open: false, [
        SessionState::Created.as_str(), SessionState::Starting.as_str(),
        SessionState::Running.as_str(), SessionState::WaitingForInput.as_str(),
        SessionState::Idle.as_str(), SessionState::Completed.as_str(),
        SessionState::Failed.as_str(), SessionState::Cancelled.as_str(),
    ];
    BundleKind => "BundleKind", open: true, [BundleKind::QUESTION, BundleKind::PERMISSION];
    ExpiryAction => "ExpiryAction", open: false, [
        ExpiryAction::Expire.as_str(), ExpiryAction::Answer.as_str(),
        ExpiryAction::Reject.as_str(), ExpiryAction::None.as_str(),
    ];
    DecidedBy => "DecidedBy", open: false, [
        DecidedBy::User.as_str(), DecidedBy::Agent.as_str(), DecidedBy::System.as_str(),
        DecidedBy::Deadline.as_str(), DecidedBy::Quorum.as_str(), DecidedBy::Unrecorded.as_str(),
    ];
    Resolution => "Resolution", open: false, [
        Resolution::Answered.as_str(), Resolution::Rejected.as_str(), Resolution::Cancelled.as_str(),
    ];
    QuestionStatus => "QuestionStatus", open: true, [
        QuestionStatus::PENDING_WORD, Resolution::Answered.as_str(), Resolution::Rejected.as_str(),
        Resolution::Cancelled.as_str(), QuestionStatus::EXPIRED_WORD,
    ];
    BundleStatus => "BundleStatus", open: false, [
        BundleStatus::Pending.as_str(), BundleStatus::Answered.as_str(),
        BundleStatus::Rejected.as_str(), BundleStatus::Cancelled.as_str(),
        BundleStatus::Expired.as_str(), BundleStatus::Superseded.as_str(),
        BundleStatus::Inactive.as_str(),
    ];
}
