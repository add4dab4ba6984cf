//! The bodies of WIRE-1..3, WIRE-5 and WIRE-4 that are not a domain view
//! as it is: wrappers around the views, each a struct whose derived
//! `Serialize` writes its keys in field order, every key always (never an
//! `Option`-skipping derive: key presence never depends on values), and
//! whose derived `JsonSchema` is the schema every door publishes for it.
//! Each is built from the domain's result by `From`, so an operation's
//! declaration names its body type and nothing else.

use schemars::JsonSchema;
use serde::Serialize;

use crate::domain::deadline::Swept;
use crate::domain::events::{Event, EventPage};
use crate::domain::history::{SettledCursor, SettledPage};
use crate::domain::links::AnswerLink;
use crate::domain::listing::{Cursor, ListPage, TaskPendingActions};
use crate::domain::mail::MailStatus;
use crate::domain::people::{Caller, Person, User, UserCursor, UserPage};
use crate::domain::resume::Delivery;
use crate::domain::views::{AttemptView, QuorumView, Resolved, Response, WaitOutcome};
use crate::domain::webhooks::{WebhookSecret, WebhookView};
use crate::error::ErrorCode;
use crate::rules::capability::Authorization;
use crate::rules::vocabulary::{BundleStatus, Resolution};
use crate::store::Timestamp;

/// LIST-5: one page; `count` always equals the length of `bundles`, and
/// `next_cursor` is `""` when no more bundles exist.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "ListPage")]
pub(crate) struct PageBody<'a> {
    /// The bundles, oldest first (LIST-3).
    bundles: &'a [crate::domain::views::BundleView],
    /// How many bundles this page holds.
    count: usize,
    /// Pass it back as `cursor` for the next page; `""` at the end.
    next_cursor: String,
}

impl<'a> From<&'a ListPage> for PageBody<'a> {
    fn from(page: &'a ListPage) -> Self {
        PageBody {
            bundles: &page.bundles,
            count: page.bundles.len(),
            next_cursor: page
                .next_cursor
                .as_ref()
                .map(Cursor::encode)
                .unwrap_or_default(),
        }
    }
}

/// LIST-13: one page of what was decided, in the inbox listing's envelope
/// (LIST-5); each element
/// is the `get_bundle` body the same caller gets.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "SettledPage")]
pub(crate) struct SettledPageBody<'a> {
    /// The bundles, newest resolution first (LIST-12).
    bundles: &'a [crate::domain::views::BundleDetail],
    /// How many bundles this page holds.
    count: usize,
    /// Pass it back as `cursor` for the next page; `""` at the end.
    next_cursor: String,
}

impl<'a> From<&'a SettledPage> for SettledPageBody<'a> {
    fn from(page: &'a SettledPage) -> Self {
        SettledPageBody {
            bundles: &page.bundles,
            count: page.bundles.len(),
            next_cursor: page
                .next_cursor
                .as_ref()
                .map(SettledCursor::encode)
                .unwrap_or_default(),
        }
    }
}

/// HOOK-1, HOOK-3: a new endpoint's, or a rotated one's, id and secret.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "WebhookSecret")]
pub(crate) struct WebhookSecretBody<'a> {
    /// The endpoint.
    id: &'a str,
    /// `whsec_` and the standard base64 of 32 random bytes; shown once.
    secret: &'a str,
}

impl<'a> From<&'a WebhookSecret> for WebhookSecretBody<'a> {
    fn from(made: &'a WebhookSecret) -> Self {
        WebhookSecretBody {
            id: &made.id,
            secret: &made.secret,
        }
    }
}

/// HOOK-6: `webhook_list`'s body.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Webhooks")]
pub(crate) struct WebhooksBody<'a> {
    /// Every endpoint, oldest first.
    webhooks: &'a [WebhookView],
}

impl<'a> From<&'a Vec<WebhookView>> for WebhooksBody<'a> {
    fn from(webhooks: &'a Vec<WebhookView>) -> Self {
        WebhooksBody { webhooks }
    }
}

/// The statuses a resolve or cancel answers with: the winner's
/// resolution, or `pending` for a vote recorded (QUO-3).
#[derive(JsonSchema)]
#[schemars(rename = "ResolvedStatusWord")]
#[allow(dead_code)] // only its schema is used; the word comes from `BundleStatus`
#[serde(rename_all = "snake_case")]
enum ResolvedStatusWord {
    Answered,
    Rejected,
    Cancelled,
    Pending,
}

/// WIRE-1: a resolve or cancel that met a winner, this caller
/// (`claimed: true`) or an earlier one (`claimed: false`, the winner's
/// status and response byte for byte), or a vote recorded on a quorum
/// bundle (`claimed: false`, `pending`, `response` null, QUO-3); also
/// `wait_bundle`'s answer.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Resolved")]
pub(crate) struct ResolvedBody<'a> {
    /// Always `true`.
    #[schemars(extend("const" = true))]
    success: bool,
    /// True for the one caller whose claim won.
    claimed: bool,
    /// The winner's resolution; `pending` for a vote recorded.
    #[schemars(with = "ResolvedStatusWord")]
    status: BundleStatus,
    /// The winner's response (WIRE-2); `null` for a vote recorded.
    response: Option<&'a Response>,
    /// QUO-5: the bundle's quorum with every vote, `null` without one.
    quorum: Option<&'a QuorumView>,
}

impl<'a> From<&'a Resolved> for ResolvedBody<'a> {
    fn from(resolved: &'a Resolved) -> Self {
        ResolvedBody {
            success: true,
            claimed: resolved.claimed,
            status: resolved.status,
            response: resolved.winner(),
            quorum: resolved.quorum.as_ref(),
        }
    }
}

/// `answer_question`'s result (WIRE-4): a resolve's, without `success`
/// (WIRE-1).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Answered")]
pub(crate) struct AnsweredBody<'a> {
    /// True for the one caller whose claim won.
    claimed: bool,
    /// The winner's resolution; `pending` for a vote recorded.
    #[schemars(with = "ResolvedStatusWord")]
    status: BundleStatus,
    /// The winner's response (WIRE-2); `null` for a vote recorded.
    response: Option<&'a Response>,
    /// QUO-5: the bundle's quorum with every vote, `null` without one.
    quorum: Option<&'a QuorumView>,
}

impl<'a> From<&'a Resolved> for AnsweredBody<'a> {
    fn from(resolved: &'a Resolved) -> Self {
        AnsweredBody {
            claimed: resolved.claimed,
            status: resolved.status,
            response: resolved.winner(),
            quorum: resolved.quorum.as_ref(),
        }
    }
}

/// The words of a wait's outcome (WAIT-1).
#[derive(JsonSchema)]
#[schemars(rename = "WaitOutcomeWord")]
#[allow(dead_code)] // only its schema is used; the word comes from `WaitOutcome`
#[serde(rename_all = "snake_case")]
enum OutcomeWord {
    Answered,
    Rejected,
    Cancelled,
    Expired,
    Superseded,
    Detached,
    TimedOut,
}

/// `wait` (WIRE-5): always `200`, how the wait ended (WAIT-1) and, for a resolution,
/// its response (else `null`).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Waited")]
pub(crate) struct WaitedBody<'a> {
    /// How the wait ended.
    #[schemars(with = "OutcomeWord")]
    outcome: &'static str,
    /// The response of an answer, rejection or cancellation; else `null`.
    response: Option<&'a Response>,
}

impl<'a> From<&'a WaitOutcome> for WaitedBody<'a> {
    fn from(outcome: &'a WaitOutcome) -> Self {
        WaitedBody {
            outcome: outcome.as_str(),
            response: outcome.response(),
        }
    }
}

/// The statuses an asking call ends with (MCPA-5).
#[derive(JsonSchema)]
#[schemars(rename = "AskStatusWord")]
#[allow(dead_code)] // only its schema is used; the word comes from `BundleStatus`
#[serde(rename_all = "snake_case")]
enum AskStatusWord {
    Answered,
    Rejected,
    Cancelled,
    Expired,
    Superseded,
    Pending,
}

/// MCPA-5: where a bundle stands when `ask_human` or `wait_for_answer`
/// returns.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "AskResult")]
pub(crate) struct AskResultBody<'a> {
    /// The bundle.
    pending_id: &'a str,
    /// `answered`, `rejected` or `cancelled` with the response; `expired`
    /// or `superseded`; or `pending`: call `wait_for_answer` again.
    #[schemars(with = "AskStatusWord")]
    status: BundleStatus,
    /// With a resolution: the response (WIRE-2; `decided_by` shows a
    /// deadline's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<&'a Response>,
    /// With `pending`: how long to wait before `wait_for_answer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_ms: Option<u64>,
}

impl<'a> AskResultBody<'a> {
    /// An asking call's wait on `pending_id` ended with `outcome`.
    pub(crate) fn of(pending_id: &'a str, outcome: &'a WaitOutcome) -> AskResultBody<'a> {
        let status = match outcome {
            WaitOutcome::Answered(_) => BundleStatus::Answered,
            WaitOutcome::Rejected(_) => BundleStatus::Rejected,
            WaitOutcome::Cancelled(_) => BundleStatus::Cancelled,
            WaitOutcome::Expired => BundleStatus::Expired,
            WaitOutcome::Superseded => BundleStatus::Superseded,
            // The wait was cut, or the host detached the session.
            WaitOutcome::Detached | WaitOutcome::TimedOut => BundleStatus::Pending,
        };
        AskResultBody {
            pending_id,
            status,
            response: outcome.response(),
            retry_after_ms: (status == BundleStatus::Pending).then_some(0),
        }
    }
}

/// `cancel_question`'s result (MCPA-5): the cancel's outcome (LIFE-6,
/// REPLAY-1).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "CancelQuestionResult")]
pub(crate) struct CancelQuestionBody<'a> {
    /// The bundle.
    pending_id: &'a str,
    /// True when this call cancelled it; false when someone settled it
    /// first (its status and response are theirs).
    claimed: bool,
    /// The bundle's resolution.
    #[schemars(with = "Resolution")]
    status: BundleStatus,
    /// The winner's response (WIRE-2).
    response: &'a Response,
    /// QUO-5: the bundle's quorum with every vote, `null` without one.
    quorum: Option<&'a QuorumView>,
}

impl<'a> CancelQuestionBody<'a> {
    pub(crate) fn of(pending_id: &'a str, resolved: &'a Resolved) -> CancelQuestionBody<'a> {
        CancelQuestionBody {
            pending_id,
            claimed: resolved.claimed,
            status: resolved.status,
            response: &resolved.response,
            quorum: resolved.quorum.as_ref(),
        }
    }
}

/// PA-1: one object per visible requested task, in request order.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "PendingActions")]
pub(crate) struct TasksBody<'a> {
    /// The visible requested tasks.
    tasks: &'a [TaskPendingActions],
}

impl<'a> From<&'a Vec<TaskPendingActions>> for TasksBody<'a> {
    fn from(tasks: &'a Vec<TaskPendingActions>) -> Self {
        TasksBody { tasks }
    }
}

/// Why `authorize` said no; `""` when it said yes.
#[derive(JsonSchema)]
#[schemars(rename = "DenialWord")]
#[allow(dead_code)] // only its schema is used
enum ReasonWord {
    #[serde(rename = "")]
    None,
    #[serde(rename = "capability_denied")]
    CapabilityDenied,
    #[serde(rename = "not_found")]
    NotFound,
}

/// `authorize`'s answer (WIRE-3).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Authorization")]
pub(crate) struct AuthorizationBody {
    /// Whether the principal may.
    allowed: bool,
    /// `""` when allowed, else why not.
    #[schemars(with = "ReasonWord")]
    reason: &'static str,
}

impl From<&Authorization> for AuthorizationBody {
    fn from(authorization: &Authorization) -> Self {
        let (allowed, reason) = match authorization {
            Authorization::Allowed => (true, ""),
            Authorization::Denied(denial) => (false, denial.as_str()),
        };
        AuthorizationBody { allowed, reason }
    }
}

/// `pending_deliveries` (LIFE-8): the outbox, oldest resolution first.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Deliveries")]
pub(crate) struct DeliveriesBody<'a> {
    /// The outbox's entries (DEL-3).
    deliveries: &'a [Delivery],
}

impl<'a> From<&'a Vec<Delivery>> for DeliveriesBody<'a> {
    fn from(deliveries: &'a Vec<Delivery>) -> Self {
        DeliveriesBody { deliveries }
    }
}

/// Mirror operations and other acknowledgements.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Ok")]
pub(crate) struct OkBody {
    /// Always `true`.
    #[schemars(extend("const" = true))]
    ok: bool,
}

impl From<&()> for OkBody {
    fn from(_: &()) -> Self {
        OkBody { ok: true }
    }
}

/// `begin_turn`'s result (WIRE-5).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "TurnStarted")]
pub(crate) struct TurnBody<'a> {
    /// The new turn's id.
    turn_id: &'a str,
}

impl<'a> From<&'a String> for TurnBody<'a> {
    fn from(turn_id: &'a String) -> Self {
        TurnBody { turn_id }
    }
}

/// `has_pending_clarification`'s result (WIRE-5).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "HasPending")]
pub(crate) struct HasPendingBody {
    /// True iff the session has an active bundle (LIFE-7).
    has_pending: bool,
}

impl From<&bool> for HasPendingBody {
    fn from(has_pending: &bool) -> Self {
        HasPendingBody {
            has_pending: *has_pending,
        }
    }
}

/// `prune`'s result (REL-8).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Pruned")]
pub(crate) struct PrunedBody {
    /// How many bundles it deleted.
    pruned: u64,
}

impl From<&u64> for PrunedBody {
    fn from(pruned: &u64) -> Self {
        PrunedBody { pruned: *pruned }
    }
}

/// `attempts` (AUD-3): a bundle's ledger entries, oldest first.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Attempts")]
pub(crate) struct AttemptsBody<'a> {
    /// Every recorded attempt, in (`at`, entry) order.
    attempts: &'a [AttemptView],
}

impl<'a> From<&'a Vec<AttemptView>> for AttemptsBody<'a> {
    fn from(attempts: &'a Vec<AttemptView>) -> Self {
        AttemptsBody { attempts }
    }
}

/// `expire_due`'s result (EXP-4, NUDGE-2).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Swept")]
pub(crate) struct SweptBody {
    /// How many due bundles this call settled.
    settled: u64,
    /// How many reminders and escalations this call took.
    nudged: u64,
}

impl From<&Swept> for SweptBody {
    fn from(swept: &Swept) -> Self {
        SweptBody {
            settled: swept.settled,
            nudged: swept.nudged,
        }
    }
}

/// `events_after` (EVT-2): the visible events, the position to go on from,
/// and whether events were pruned in between.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Events")]
pub(crate) struct EventsBody<'a> {
    /// The events the principal may see now, oldest first.
    events: &'a [Event],
    /// The last position examined, visible or not: the next `after`.
    next: &'a str,
    /// Events after `after` were pruned (EVT-3), or `after` is past the
    /// head (EVT-4, `next` is then the head): list again.
    reset: bool,
}

impl<'a> From<&'a EventPage> for EventsBody<'a> {
    fn from(page: &'a EventPage) -> Self {
        EventsBody {
            events: &page.events,
            next: &page.next,
            reset: page.reset,
        }
    }
}

/// WIRE-1: the body of every error but a capability denial.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Error")]
pub(crate) struct ErrorBody {
    /// What went wrong, naming the field for a validation error; an
    /// internal error shows only a reference (REL-6).
    pub(crate) error: String,
}

/// WIRE-1: a capability denial, and the MCP tools' error results (WIRE-4),
/// which carry
/// the error's code word too.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "CodedError")]
pub(crate) struct CodedErrorBody {
    /// What went wrong.
    pub(crate) error: String,
    /// The error's code word.
    #[schemars(with = "CodeWord")]
    pub(crate) code: &'static str,
}

/// The error code words (WIRE-4), as [`ErrorCode`] says them.
struct CodeWord;

impl JsonSchema for CodeWord {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorCode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let words: Vec<&str> = ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": words,
            "description": "The error code words.",
        })
    }
}

impl CodedErrorBody {
    pub(crate) fn new(error: String, code: ErrorCode) -> CodedErrorBody {
        CodedErrorBody {
            error,
            code: code.as_str(),
        }
    }
}

/// PPL-1: `list_users`'s page; `count` is the length of `users`, and
/// `next_cursor` is `""` when nothing follows.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "UserPage")]
pub(crate) struct UserPageBody<'a> {
    /// The entries, by `user_id`.
    users: &'a [User],
    /// How many entries this page holds.
    count: usize,
    /// Pass it back as `cursor` for the next page; `""` at the end.
    next_cursor: String,
}

impl<'a> From<&'a UserPage> for UserPageBody<'a> {
    fn from(page: &'a UserPage) -> Self {
        UserPageBody {
            users: &page.users,
            count: page.users.len(),
            next_cursor: page
                .next_cursor
                .as_ref()
                .map(UserCursor::encode)
                .unwrap_or_default(),
        }
    }
}

/// PPL-1a: `people`'s body: names, in the order asked, never an email.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "People")]
pub(crate) struct PeopleBody<'a> {
    /// The ids the caller may read that are in the directory.
    people: &'a [Person],
}

impl<'a> From<&'a Vec<Person>> for PeopleBody<'a> {
    fn from(people: &'a Vec<Person>) -> Self {
        PeopleBody { people }
    }
}

/// PPL-1a: `whoami`'s body.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Caller")]
pub(crate) struct CallerBody<'a> {
    /// `system`, `user` or `agent`.
    kind: &'a str,
    /// The user (an agent's too); `""` for `system`.
    user_id: &'a str,
    /// The agent; `""` unless the caller is one.
    agent_id: &'a str,
    /// The user's name in the directory; `""` if none.
    name: &'a str,
}

impl<'a> From<&'a Caller> for CallerBody<'a> {
    fn from(caller: &'a Caller) -> Self {
        CallerBody {
            kind: &caller.kind,
            user_id: &caller.user_id,
            agent_id: &caller.agent_id,
            name: &caller.name,
        }
    }
}

/// PPL-2: `members`'s body.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Members")]
pub(crate) struct MembersBody<'a> {
    /// The workspace's members, sorted.
    members: &'a [String],
}

impl<'a> From<&'a Vec<String>> for MembersBody<'a> {
    fn from(members: &'a Vec<String>) -> Self {
        MembersBody { members }
    }
}

/// LINK-1: `answer_link`'s body.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "AnswerLink")]
pub(crate) struct AnswerLinkBody<'a> {
    /// Where the person opens it: `<public_url>/a/<token>`, or the
    /// relative `/a/<token>` without a public URL. A credential: send it
    /// to that person only.
    url: &'a str,
    /// Until when it answers: the earlier of its end and the bundle's
    /// deadline (its page opens until its end).
    expires_at: Timestamp,
}

impl<'a> From<&'a AnswerLink> for AnswerLinkBody<'a> {
    fn from(link: &'a AnswerLink) -> Self {
        AnswerLinkBody {
            url: &link.url,
            expires_at: link.expires_at,
        }
    }
}

/// MAIL-1a: `mail_status`'s body.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "MailStatusBody")]
pub(crate) struct MailStatusBody<'a> {
    /// How mail stands.
    mail: &'a MailStatus,
}

impl<'a> From<&'a MailStatus> for MailStatusBody<'a> {
    fn from(mail: &'a MailStatus) -> Self {
        MailStatusBody { mail }
    }
}
