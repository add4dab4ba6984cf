//! The agent side, run by the host (ASK-*, WAIT-*, LIFE-7, LIFE-8, REL-8):
//! asking, the agent's wait, the workflow guard, the outbox and retention.
//! Host operations: `system` only (AUTH-2).

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::domain::ask::{AskRequest, Asked, Expiry, OnExpire, OptionSpec, QuestionSpec};
use crate::domain::deadline::Swept;
use crate::domain::delivery::wait::Waiter;
use crate::domain::engine::waiters::Wake;
use crate::domain::engine::Engine;
use crate::domain::resume::Delivery;
use crate::domain::views::WaitOutcome;
use crate::doors::args::{given, optional_word, word, Id, Millis};
use crate::doors::envelope::bodies::{
    DeliveriesBody, HasPendingBody, OkBody, PrunedBody, SweptBody, WaitedBody,
};
use crate::doors::operations::answering::{timestamp_or_empty, AnswerArgs};
use crate::doors::operations::declare::{
    flag, positional, CliArg, CliCommand, CliValue, Declared, Method, Refusal, Route, Waits,
};
use crate::doors::operations::mirror::SessionIdArgs;
use crate::error::{Result, ValidationError};
use crate::rules::capability::{Access, Admitted, HOST};
use crate::rules::limits::{
    not_blank_pattern, MAX_CONTEXT_RUNES, MAX_DESCRIPTION_RUNES, MAX_FREE_TEXT_RUNES,
    MAX_LABEL_RUNES, MAX_PROMPT_RUNES, MAX_TITLE_RUNES, WIRE_WAIT,
};
use crate::rules::nudges::{EscalateRequest, RemindersRequest};
use crate::rules::quorum::QuorumRequest;
use crate::rules::vocabulary::{BundleKind, ExpiryAction};
use crate::store::Timestamp;

/// `has_pending_clarification` (LIFE-7).
pub(crate) struct HasPendingClarification;

impl Declared for HasPendingClarification {
    const NAME: &'static str = "has_pending_clarification";
    // LIFE-7.
    const SUMMARY: &'static str = "The workflow guard: whether the session has an active bundle.";
    const ACCESS: Access = HOST;
    type Args = SessionIdArgs;
    type Reply = bool;
    type Body<'a> = HasPendingBody;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: SessionIdArgs) -> Result<bool> {
        engine.has_pending_clarification(&args.session_id)
    }
}

/// A non-blank text of at most `max` characters: ASK-2's prompt, label
/// and description.
fn not_blank(generator: &mut schemars::SchemaGenerator, max: usize) -> schemars::Schema {
    let _ = generator;
    schemars::json_schema!({
        "type": "string",
        "minLength": 1,
        "maxLength": max,
        "pattern": not_blank_pattern(),
    })
}

fn prompt_text(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    not_blank(generator, MAX_PROMPT_RUNES)
}

fn label_text(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    not_blank(generator, MAX_LABEL_RUNES)
}

fn description_text(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    not_blank(generator, MAX_DESCRIPTION_RUNES)
}

/// One option of a question, as the agent writes it (ASK-2, ASK-3).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct OptionArgs {
    /// Unique within its question; omitted or `""`:
    /// `<question_id>_opt<N>` by position.
    option_id: Option<String>,
    /// A short label, at most 200 characters.
    #[schemars(required, schema_with = "label_text")]
    label: Option<String>,
    /// What choosing it means, at most 1000 characters.
    #[schemars(required, schema_with = "description_text")]
    description: Option<String>,
}

/// One question, as the agent writes it (ASK-2, ASK-3).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuestionArgs {
    /// Unique within the bundle; omitted or `""`: `q<N>` by position.
    question_id: Option<String>,
    /// A short title, at most 120 characters.
    #[schemars(length(max = MAX_TITLE_RUNES))]
    title: Option<String>,
    /// The question itself, at most 4000 characters.
    #[schemars(required, schema_with = "prompt_text")]
    prompt: Option<String>,
    /// `false`: an answer selects at most one option (single choice);
    /// omitted, `null` or `true`: any number of them (ASK-6).
    multi_select: Option<bool>,
    /// Two to six options.
    #[schemars(required, length(min = 2, max = 6))]
    options: Option<Vec<OptionArgs>>,
}

/// `ask`'s arguments (ASK-1..4). Question and option ids must be unique
/// after the defaults are filled in, which a schema cannot say.
// EXP-1, EXP-6: what the schema can say between arguments, it says (the
// checks in `expiry` and `prepare_deadline` make the same refusals; `null`
// and `""` are "not given"): a deadline is `expires_in_ms` or `expires_at`,
// not both; an `answer` or `reject` default needs one; a `permission`
// bundle never takes an `answer` default.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = ask_rules)]
pub(crate) struct AskArgs {
    /// The asking session.
    session_id: Id,
    /// One to four questions.
    #[schemars(required, length(min = 1, max = 4))]
    questions: Option<Vec<QuestionArgs>>,
    /// What the agent writes around its questions, at most 4000 characters.
    #[schemars(length(max = MAX_CONTEXT_RUNES))]
    context: Option<String>,
    /// `question` (default) or `permission` (humans only, AUTH-6).
    #[serde(default)]
    #[schemars(schema_with = "optional_word::<BundleKind>")]
    kind: Option<String>,
    /// Unique per session: a second ask with it returns the first bundle
    /// (ASK-4).
    idempotency_key: Option<String>,
    /// A deadline this many milliseconds after the ask (EXP-1): 1,000 to
    /// 2,592,000,000 (1 s to 30 days). Not with `expires_at`.
    #[schemars(range(min = 1_000_u64, max = 2_592_000_000_u64))]
    expires_in_ms: Option<Millis>,
    /// A deadline at this instant (EXP-1), RFC 3339 with at most six
    /// fractional digits, 1 s to 30 days after the ask. Not with
    /// `expires_in_ms`.
    #[serde(default)]
    #[schemars(schema_with = "timestamp_or_empty")]
    expires_at: Option<String>,
    /// What the deadline does (EXP-1): `{"action": "expire"}` (the
    /// default), `{"action": "answer", "answers": [...]}` or `{"action":
    /// "reject", "reject_reason": "..."}`; `answer` and `reject` need a
    /// deadline, and a `permission` bundle never takes `answer`.
    on_expire: Option<OnExpireArgs>,
    /// QUO-1: several people must agree, `null` for one answer. A quorum
    /// bundle is for people only and never approved by default.
    quorum: Option<QuorumArgs>,
    /// NUDGE-1: remind the people who see the bundle while it waits,
    /// `null` for no reminders.
    reminders: Option<RemindersArgs>,
    /// NUDGE-1, PPL-6: more people see the bundle this long after the ask,
    /// `null` for no escalation.
    escalate: Option<EscalateArgs>,
}

/// `ask`'s `reminders` (NUDGE-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RemindersArgs {
    /// The first reminder, this many milliseconds after the ask: 60,000
    /// to 2,592,000,000 (1 minute to 30 days).
    #[schemars(range(min = 60_000_u64, max = 2_592_000_000_u64))]
    first_after_ms: Millis,
    /// Milliseconds between reminders, in the same range; default
    /// `first_after_ms`.
    #[schemars(range(min = 60_000_u64, max = 2_592_000_000_u64))]
    every_ms: Option<Millis>,
    /// How many reminders at most: 1 to 20, default 3. None falls at or
    /// after the deadline.
    #[schemars(range(min = 1, max = 20))]
    max: Option<u32>,
}

impl RemindersArgs {
    fn request(self) -> RemindersRequest {
        RemindersRequest {
            first_after: self.first_after_ms.0,
            every: self.every_ms.map(|every| every.0),
            max: self.max,
        }
    }
}

/// `ask`'s `escalate` (NUDGE-1, PPL-6).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EscalateArgs {
    /// When they see it, this many milliseconds after the ask: 60,000 to
    /// 2,592,000,000 (1 minute to 30 days); never if that is at or after
    /// the deadline.
    #[schemars(range(min = 60_000_u64, max = 2_592_000_000_u64))]
    after_ms: Millis,
    /// Who sees it then: 1 to 20 distinct user ids.
    #[schemars(length(min = 1, max = 20), extend("uniqueItems" = true))]
    to: Vec<Id>,
}

impl EscalateArgs {
    fn request(self) -> EscalateRequest {
        EscalateRequest {
            after: self.after_ms.0,
            to: self.to.into_iter().map(|id| id.0).collect(),
        }
    }
}

/// `ask`'s `quorum` (QUO-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuorumArgs {
    /// How many people must submit the same decision (identical answers
    /// and text): 2 to 10.
    #[schemars(range(min = 2, max = 10))]
    approvals: u32,
    /// How many rejections reject the bundle: 1 (the default: one reject
    /// vetoes) to `approvals`.
    #[schemars(range(min = 1, max = 10))]
    rejections: Option<u32>,
    /// Who may vote: 2 to 100 distinct user ids; omitted, every user who
    /// sees the bundle when voting.
    #[schemars(length(min = 2, max = 100), extend("uniqueItems" = true))]
    eligible: Option<Vec<Id>>,
    /// The person the agent asks for, who never votes.
    requested_by: Option<String>,
}

impl QuorumArgs {
    fn request(self) -> QuorumRequest {
        QuorumRequest {
            approvals: self.approvals,
            rejections: self.rejections,
            eligible: self
                .eligible
                .unwrap_or_default()
                .into_iter()
                .map(|id| id.0)
                .collect(),
            requested_by: self.requested_by.unwrap_or_default(),
        }
    }
}

/// `ask`'s `on_expire` (EXP-1): an action and only that action's keys.
// EXP-6: the schema says which keys each action takes (as `on_expire`
// below refuses the others): `answers` for `answer` (required), a
// `reject_reason` for `reject`, neither for `expire`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = on_expire_rules)]
pub(crate) struct OnExpireArgs {
    /// `expire`, `answer` or `reject`.
    #[schemars(schema_with = "expiry_action_schema")]
    action: Id,
    /// For `answer`: one answer per question, checked like a resolve's
    /// against the questions being asked (their ids after the defaults are
    /// filled in, ASK-3).
    answers: Option<Vec<AnswerArgs>>,
    /// For `reject`: why, at most 2000 characters (trimmed when stored).
    #[schemars(length(max = MAX_FREE_TEXT_RUNES))]
    reject_reason: Option<String>,
}

/// `null` or `""`: the argument is not given.
fn not_given() -> serde_json::Value {
    json!({"anyOf": [{"const": ""}, {"type": "null"}]})
}

/// A condition: each named property given and matching its schema.
fn given_as(properties: serde_json::Value) -> serde_json::Value {
    let names: Vec<_> = properties
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, _)| name.clone())
        .collect();
    json!({"required": names, "properties": properties})
}

/// `ask`'s rules between arguments (above), as `allOf` conditions.
fn ask_rules(schema: &mut schemars::Schema) {
    let (answer, reject) = (ExpiryAction::Answer.as_str(), ExpiryAction::Reject.as_str());
    let in_ms = given_as(json!({"expires_in_ms": {"type": "integer"}}));
    let at = given_as(json!({"expires_at": {"type": "string", "minLength": 1}}));
    let with_default = given_as(json!({"on_expire": {
        "type": "object",
        "required": ["action"],
        "properties": {"action": {"enum": [answer, reject]}},
    }}));
    let permission = given_as(json!({"kind": {"const": BundleKind::Permission.as_str()}}));
    let never_approved = json!({"properties": {"on_expire": {"properties": {"action": {
        "enum": [ExpiryAction::Expire.as_str(), reject],
    }}}}});
    schema.insert(
        "allOf".into(),
        json!([
            {"if": in_ms.clone(), "then": {"properties": {"expires_at": not_given()}}},
            {"if": with_default, "then": {"anyOf": [in_ms, at]}},
            {"if": permission, "then": never_approved},
        ]),
    );
}

/// `on_expire`'s keys by action (above), as `allOf` conditions.
fn on_expire_rules(schema: &mut schemars::Schema) {
    let action = |word: ExpiryAction| given_as(json!({"action": {"const": word.as_str()}}));
    let absent = json!({"type": "null"});
    schema.insert(
        "allOf".into(),
        json!([
            {
                "if": action(ExpiryAction::Answer),
                "then": {
                    "required": ["answers"],
                    "properties": {"answers": {"type": "array"}, "reject_reason": absent},
                },
            },
            {"if": action(ExpiryAction::Reject), "then": {"properties": {"answers": absent}}},
            {
                "if": action(ExpiryAction::Expire),
                "then": {"properties": {"answers": absent, "reject_reason": absent}},
            },
        ]),
    );
}

/// The actions a caller may name: every `ExpiryAction` word but `""`.
fn expiry_action_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let words = [
        ExpiryAction::Expire.as_str(),
        ExpiryAction::Answer.as_str(),
        ExpiryAction::Reject.as_str(),
    ];
    schemars::json_schema!({"type": "string", "enum": words})
}

impl OnExpireArgs {
    /// EXP-6: a known action, and no key of another action.
    fn on_expire(self) -> std::result::Result<OnExpire, ValidationError> {
        let action = ExpiryAction::parse("on_expire.action", &self.action.0)?;
        let refuse = |key: &str| {
            Err(ValidationError::new(
                format!("on_expire.{key}"),
                format!("not allowed with action {:?}", action.as_str()),
            ))
        };
        let (answers, reason) = (self.answers, self.reject_reason);
        match action {
            ExpiryAction::Answer if reason.is_some() => refuse("reject_reason"),
            ExpiryAction::Answer => Ok(OnExpire::Answer(
                answers
                    .ok_or_else(|| ValidationError::new("on_expire.answers", "required"))?
                    .into_iter()
                    .map(AnswerArgs::input)
                    .collect(),
            )),
            _ if answers.is_some() => refuse("answers"),
            ExpiryAction::Reject => Ok(OnExpire::Reject {
                reject_reason: reason.unwrap_or_default(),
            }),
            _ if reason.is_some() => refuse("reject_reason"),
            ExpiryAction::Expire | ExpiryAction::None => Ok(OnExpire::Expire),
        }
    }
}

/// EXP-1, EXP-6: `expires_in_ms` or `expires_at`, not both; the instant
/// strictly RFC 3339 with at most six fractional digits, never rounded.
fn expiry(
    expires_in_ms: Option<Millis>,
    expires_at: Option<String>,
) -> std::result::Result<Option<Expiry>, ValidationError> {
    match (expires_in_ms, given(expires_at)) {
        (Some(_), Some(_)) => Err(ValidationError::new(
            "expires_at",
            "give expires_in_ms or expires_at, not both",
        )),
        (Some(after), None) => Ok(Some(Expiry::In(after.0))),
        (None, Some(text)) => Timestamp::parse_rfc3339_exact(&text)
            .map(|at| Some(Expiry::At(at)))
            .ok_or_else(|| {
                ValidationError::new(
                    "expires_at",
                    "not an RFC 3339 time with at most six fractional digits",
                )
            }),
        (None, None) => Ok(None),
    }
}

impl AskArgs {
    fn request(self) -> std::result::Result<AskRequest, ValidationError> {
        let questions = self
            .questions
            .ok_or_else(|| ValidationError::new("questions", "required"))?
            .into_iter()
            .map(|question| QuestionSpec {
                question_id: given(question.question_id),
                title: question.title.unwrap_or_default(),
                prompt: question.prompt.unwrap_or_default(),
                multi_select: question.multi_select,
                options: question
                    .options
                    .unwrap_or_default()
                    .into_iter()
                    .map(|option| OptionSpec {
                        option_id: given(option.option_id),
                        label: option.label.unwrap_or_default(),
                        description: option.description.unwrap_or_default(),
                    })
                    .collect(),
            })
            .collect();
        Ok(AskRequest {
            session_id: self.session_id.0,
            questions,
            context: self.context.unwrap_or_default(),
            kind: word("kind", self.kind, BundleKind::parse)?.unwrap_or_default(),
            idempotency_key: given(self.idempotency_key),
            expires: expiry(self.expires_in_ms, self.expires_at)?,
            on_expire: self
                .on_expire
                .map(OnExpireArgs::on_expire)
                .transpose()?
                .unwrap_or_default(),
            quorum: self.quorum.map(QuorumArgs::request),
            reminders: self.reminders.map(RemindersArgs::request),
            escalate: self.escalate.map(EscalateArgs::request),
        })
    }
}

/// `ask` (ASK-1..5).
pub(crate) struct Ask;

impl Declared for Ask {
    const NAME: &'static str = "ask";
    // ASK-1..5.
    const SUMMARY: &'static str =
        "Asks a bundle on a session, in its current turn (a host operation).";
    const ACCESS: Access = HOST;
    type Args = AskArgs;
    type Reply = Asked;
    type Body<'a> = &'a Asked;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound, Refusal::Conflict];
    const HTTP: Option<Route> = Some(Route {
        method: Method::Post,
        path: "/api/v1/clarification/request",
        tag: "clarification",
    });
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[
            positional("session_id"),
            CliArg {
                arg: "expires_in_ms",
                flag: "expires-in",
                value: CliValue::Age,
            },
            flag("expires_at", "expires-at"),
            flag("on_expire", "on-expire"),
        ],
        // QUO-1, NUDGE-1: the binary spells `quorum`, `reminders` and
        // `escalate` as flat flags (`--quorum N --eligible U,U`,
        // `--remind-after AGE`, `--escalate-to U,U`) that build these
        // same arguments.
        skip: &["quorum", "reminders", "escalate"],
        ..CliCommand::new("ask", "Ask a bundle on a session (a host operation).")
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: AskArgs) -> Result<Asked> {
        engine.ask(&args.request()?)
    }
}

/// The agent's wait's arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentWaitArgs {
    /// The bundle.
    pending_id: Id,
    /// How long to wait, in milliseconds: default 30000 (25000 over
    /// HTTP); longer waits are cut at 600000 (55000 over HTTP).
    timeout_ms: Option<Millis>,
    /// Whether the timeout's end detaches the bundle (WAIT-1), default
    /// `true`; `false` leaves it attached, for a caller that waits in
    /// slices and detaches only when its own timeout ends (WAIT-1b).
    detach_on_timeout: Option<bool>,
}

impl AgentWaitArgs {
    fn asked(&self) -> Option<Duration> {
        self.timeout_ms.map(|ms| ms.0)
    }

    fn detaches(&self) -> bool {
        self.detach_on_timeout.unwrap_or(true)
    }
}

/// `wait` (WAIT-1..4): the agent side.
pub(crate) struct Wait;

impl Declared for Wait {
    const NAME: &'static str = "wait";
    // WAIT-1, WAIT-1b.
    const SUMMARY: &'static str = "The asking agent's wait: always 200 with how the wait ended; \
        the caller's own timeout may detach the bundle.";
    const ACCESS: Access = HOST;
    type Args = AgentWaitArgs;
    type Reply = WaitOutcome;
    type Body<'a> = WaitedBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: AgentWaitArgs) -> Result<WaitOutcome> {
        let timeout = WIRE_WAIT.serve(args.asked());
        engine.wait(&args.pending_id, timeout, args.detaches())
    }
}

impl Waits for Wait {
    type Outcome = WaitOutcome;

    fn asked(args: &AgentWaitArgs) -> Option<Duration> {
        args.asked()
    }

    fn detaches(args: &AgentWaitArgs) -> bool {
        args.detaches()
    }

    fn begin(
        engine: &Engine,
        _: &Admitted<'_>,
        args: AgentWaitArgs,
        wake: Arc<Wake>,
    ) -> Result<Waiter<WaitOutcome>> {
        engine.begin_wait(&args.pending_id, Some(wake))
    }

    fn reply(outcome: WaitOutcome) -> WaitOutcome {
        outcome
    }
}

/// An outbox page's size.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitArgs {
    /// Entries at most: default 50; below 1 means 50; above 200 is 200.
    limit: Option<i64>,
}

/// `pending_deliveries` (LIFE-8, DEL-3).
pub(crate) struct PendingDeliveries;

impl Declared for PendingDeliveries {
    const NAME: &'static str = "pending_deliveries";
    // LIFE-8, DEL-3.
    const SUMMARY: &'static str =
        "The outbox: undelivered resolutions of detached bundles, oldest first.";
    const ACCESS: Access = HOST;
    type Args = LimitArgs;
    type Reply = Vec<Delivery>;
    type Body<'a> = DeliveriesBody<'a>;
    const CLI: &'static [CliCommand] = &[CliCommand::new(
        "deliveries",
        "Read the outbox of undelivered resolutions.",
    )];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: LimitArgs) -> Result<Vec<Delivery>> {
        engine.pending_deliveries(args.limit)
    }
}

/// The bundle whose delivery is acknowledged.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AckArgs {
    /// The bundle.
    pending_id: Id,
}

/// `ack_delivery` (LIFE-8).
pub(crate) struct AckDelivery;

impl Declared for AckDelivery {
    const NAME: &'static str = "ack_delivery";
    // LIFE-8.
    const SUMMARY: &'static str = "Removes an entry from the outbox; idempotent.";
    const ACCESS: Access = HOST;
    type Args = AckArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[positional("pending_id")],
        ..CliCommand::new(
            "ack",
            "Acknowledge a bundle's delivery: it leaves the outbox.",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: AckArgs) -> Result<()> {
        engine.ack_delivery(&args.pending_id)
    }
}

/// `expire_due`'s arguments (EXP-4).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpireDueArgs {
    /// How many due bundles to settle, and how many bundles to take steps
    /// of, at most: default 100, clamped to 1..1,000.
    limit: Option<i64>,
}

/// `expire_due` (EXP-4): one sweep.
pub(crate) struct ExpireDue;

impl Declared for ExpireDue {
    const NAME: &'static str = "expire_due";
    // EXP-4.
    const SUMMARY: &'static str = "Settles up to `limit` due bundles in deadline order, each \
        with its deadline's outcome, then takes the due reminders and escalations of up to \
        `limit` bundles; returns how many it settled and how many steps it took.";
    const ACCESS: Access = HOST;
    type Args = ExpireDueArgs;
    type Reply = Swept;
    type Body<'a> = SweptBody;
    const CLI: &'static [CliCommand] = &[CliCommand::new(
        "expire-due",
        "Settle due bundles now, in deadline order (what the sweeper does).",
    )];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: ExpireDueArgs) -> Result<Swept> {
        engine.expire_due(args.limit)
    }
}

/// `prune`'s arguments (REL-8).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PruneArgs {
    /// How long ago, in milliseconds, a bundle must have stopped being
    /// active to be deleted.
    #[schemars(required)]
    older_than_ms: Option<Millis>,
}

/// `prune` (REL-8).
pub(crate) struct Prune;

impl Declared for Prune {
    const NAME: &'static str = "prune";
    // REL-8.
    const SUMMARY: &'static str = "Deletes bundles that stopped being active long ago, and old \
        events; never an active bundle or an undelivered resolution.";
    const ACCESS: Access = HOST;
    type Args = PruneArgs;
    type Reply = u64;
    type Body<'a> = PrunedBody;
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[CliArg {
            arg: "older_than_ms",
            flag: "older-than",
            value: CliValue::Age,
        }],
        ..CliCommand::new(
            "prune",
            "Delete bundles that stopped being active long ago.",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: PruneArgs) -> Result<u64> {
        let older_than = args
            .older_than_ms
            .ok_or_else(|| ValidationError::new("older_than_ms", "required"))?;
        engine.prune(older_than.0)
    }
}
