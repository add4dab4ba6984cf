//! The answering side: what humans and external agents do with the
//! bundles they may see — list, read, wait for, answer, reject, cancel,
//! count, ask about, and follow the event log.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::domain::delivery::wait::Waiter;
use crate::domain::engine::waiters::Wake;
use crate::domain::engine::Engine;
use crate::domain::events::EventPage;
use crate::domain::history::{SettledCursor, SettledPage, SettledRequest};
use crate::domain::listing::{
    Cursor, ListPage, ListRequest, Summary as Counts, TaskPendingActions,
};
use crate::domain::resolve::{AnswerInput, ResolveRequest};
use crate::domain::views::{AttemptView, BundleDetail, Resolved};
use crate::doors::args::{given, Id, Millis};
use crate::doors::envelope::bodies::{
    AnsweredBody, AttemptsBody, EventsBody, PageBody, ResolvedBody, SettledPageBody, TasksBody,
};
use crate::doors::operations::declare::{
    flag, positional, CliCommand, Counted, Declared, Method, Refusal, Route, Tooled, Waits,
};
use crate::error::{Result, ValidationError};
use crate::rules::capability::{Admitted, ANSWER, HUMANS, READ};
use crate::rules::limits::{MAX_FREE_TEXT_RUNES, MAX_TASK_IDS, WIRE_WAIT};
use crate::store::Timestamp;

/// `list_pending`'s arguments (LIST-4).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {
    /// Only bundles whose task is in this workspace (`""`: every workspace
    /// the caller may see).
    workspace_id: Option<String>,
    /// RFC 3339: only bundles created at or after it (`""`: not given).
    #[serde(default)]
    #[schemars(schema_with = "timestamp_or_empty")]
    created_since: Option<String>,
    /// `next_cursor` of the previous page (`""`: the first page).
    cursor: Option<String>,
    /// Page size: default 50; below 1 means 50; above 200 is 200.
    limit: Option<i64>,
}

/// An optional RFC 3339 time: `null`, `""` (not given) or a time.
pub(crate) fn timestamp_or_empty(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            {"type": "string", "format": "date-time"},
            {"const": ""},
            {"type": "null"},
        ]
    })
}

impl ListArgs {
    /// LIST-4: a malformed time or cursor is a 400 naming it, never
    /// silently ignored.
    fn request(self) -> std::result::Result<ListRequest, ValidationError> {
        let created_since = given(self.created_since)
            .map(|text| {
                Timestamp::parse_rfc3339_ceil(&text).ok_or_else(|| {
                    ValidationError::new(
                        "created_since",
                        format!("not an RFC 3339 timestamp: {text:?}"),
                    )
                })
            })
            .transpose()?;
        Ok(ListRequest {
            workspace_id: given(self.workspace_id),
            created_since,
            cursor: given(self.cursor)
                .map(|text| Cursor::parse(&text))
                .transpose()?,
            limit: self.limit,
        })
    }
}

/// `list_pending` (LIST-1..10).
pub(crate) struct ListPending;

impl Declared for ListPending {
    const NAME: &'static str = "list_pending";
    // LIST-1..10.
    const SUMMARY: &'static str =
        "One page of the active bundles the caller may see, oldest first.";
    const ACCESS: crate::rules::capability::Access = READ;
    type Args = ListArgs;
    type Reply = ListPage;
    type Body<'a> = PageBody<'a>;
    const HTTP: Option<Route> = Some(Route {
        method: Method::Get,
        path: "/api/v1/clarification",
        tag: "clarification",
    });
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[
            flag("workspace_id", "workspace"),
            flag("created_since", "since"),
        ],
        ..CliCommand::new("list", "List the bundles waiting for an answer.")
    }];

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: ListArgs) -> Result<ListPage> {
        engine.list_pending(caller, &args.request()?)
    }
}

impl Tooled for ListPending {
    const TOOL: &'static str = "list_pending_questions";
    const LISTED: usize = 0;
    const DESCRIPTION: &'static str = "List the clarification requests waiting for an answer \
        that you may see, oldest first. Each bundle holds one to four questions with their \
        options; a question whose multi_select is false takes at most one option, one whose \
        multi_select is true any number. Pass next_cursor back as cursor to read the next page.";
    type Result<'a> = PageBody<'a>;
}

/// `list_settled`'s arguments (LIST-13).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SettledArgs {
    /// Only bundles whose task is in this workspace (`""`: every workspace
    /// the caller may see).
    workspace_id: Option<String>,
    /// `next_cursor` of the previous history page (`""`: the first page);
    /// a `list_pending` cursor is refused.
    cursor: Option<String>,
    /// Page size: default 50; below 1 means 50; above 200 is 200.
    limit: Option<i64>,
}

impl SettledArgs {
    /// LIST-13: a malformed cursor is a 400 naming it.
    fn request(self) -> std::result::Result<SettledRequest, ValidationError> {
        Ok(SettledRequest {
            workspace_id: given(self.workspace_id),
            cursor: given(self.cursor)
                .map(|text| SettledCursor::parse(&text))
                .transpose()?,
            limit: self.limit,
        })
    }
}

/// `list_settled` (LIST-12..14).
pub(crate) struct ListSettled;

impl Declared for ListSettled {
    const NAME: &'static str = "list_settled";
    // LIST-12..14.
    const SUMMARY: &'static str = "One page of the settled bundles the caller may see, newest \
        resolution first, each as get_bundle shows it.";
    const ACCESS: crate::rules::capability::Access = READ;
    type Args = SettledArgs;
    type Reply = SettledPage;
    type Body<'a> = SettledPageBody<'a>;
    const HTTP: Option<Route> = Some(Route {
        method: Method::Get,
        path: "/api/v1/history",
        tag: "inbox",
    });
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[flag("workspace_id", "workspace")],
        ..CliCommand::new("history", "List what was decided, newest first.")
    }];

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: SettledArgs) -> Result<SettledPage> {
        engine.list_settled(caller, &args.request()?)
    }
}

impl Tooled for ListSettled {
    const TOOL: &'static str = "list_settled_questions";
    const LISTED: usize = 2;
    const DESCRIPTION: &'static str = "List the clarification requests that were settled \
        (answered, rejected or cancelled, by a person, an agent, the host or a deadline's \
        default) that you may see, newest first. Each shows its questions and options (a \
        question whose multi_select is false took at most one option), its status and \
        response with decided_by, and decided_by_caller: true when you decided it. Pass \
        next_cursor back as cursor to read the next page.";
    type Result<'a> = SettledPageBody<'a>;
}

/// The bundle an operation is about.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BundleArgs {
    /// The bundle.
    pending_id: Id,
}

/// `get_bundle` (WIRE-3).
pub(crate) struct GetBundle;

impl Declared for GetBundle {
    const NAME: &'static str = "get_bundle";
    // WIRE-3.
    const SUMMARY: &'static str =
        "One bundle in any status, with its status and response, from durable state.";
    const ACCESS: crate::rules::capability::Access = READ;
    type Args = BundleArgs;
    type Reply = BundleDetail;
    type Body<'a> = &'a BundleDetail;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];
    const HTTP: Option<Route> = Some(Route {
        method: Method::Get,
        path: "/api/v1/clarification/{pending_id}",
        tag: "clarification",
    });
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[positional("pending_id")],
        ..CliCommand::new("get", "Show one bundle, in any status.")
    }];

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: BundleArgs) -> Result<BundleDetail> {
        engine.get_bundle(caller, &args.pending_id)
    }
}

/// `attempts` (AUD-3).
pub(crate) struct Attempts;

impl Declared for Attempts {
    const NAME: &'static str = "attempts";
    // AUD-3.
    const SUMMARY: &'static str = "Every recorded attempt to answer, reject or cancel a bundle, \
        with who, when, through which door, its outcome and digest.";
    const ACCESS: crate::rules::capability::Access = HUMANS;
    type Args = BundleArgs;
    type Reply = Vec<AttemptView>;
    type Body<'a> = AttemptsBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];
    const HTTP: Option<Route> = Some(Route {
        method: Method::Get,
        path: "/api/v1/clarification/{pending_id}/attempts",
        tag: "clarification",
    });
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[positional("pending_id")],
        // AUD-3.
        ..CliCommand::new("attempts", "Show a bundle's attempt ledger.")
    }];

    fn perform(
        engine: &Engine,
        caller: &Admitted<'_>,
        args: BundleArgs,
    ) -> Result<Vec<AttemptView>> {
        engine.attempts(caller, &args.pending_id)
    }
}

/// A wait's arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitArgs {
    /// The bundle.
    pub(crate) pending_id: Id,
    /// How long to wait, in milliseconds: default 30000 (25000 over
    /// HTTP); longer waits are cut at 600000 (55000 over HTTP).
    pub(crate) timeout_ms: Option<Millis>,
}

impl WaitArgs {
    pub(crate) fn asked(&self) -> Option<Duration> {
        self.timeout_ms.map(|ms| ms.0)
    }
}

/// `wait_bundle` (WIRE-3): the external wait.
pub(crate) struct WaitBundle;

impl Declared for WaitBundle {
    const NAME: &'static str = "wait_bundle";
    // WIRE-3, HTTP-5.
    const SUMMARY: &'static str = "Waits for the bundle's resolution (`claimed: false`): 409 if \
        it stops being active without one, 504 when the timeout passes first.";
    const ACCESS: crate::rules::capability::Access = READ;
    type Args = WaitArgs;
    type Reply = Resolved;
    type Body<'a> = ResolvedBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound, Refusal::Conflict, Refusal::TimedOut];
    const HTTP: Option<Route> = Some(Route {
        method: Method::Get,
        path: "/api/v1/clarification/{pending_id}/wait",
        tag: "clarification",
    });

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: WaitArgs) -> Result<Resolved> {
        let timeout = WIRE_WAIT.serve(args.asked());
        engine.wait_bundle(caller, &args.pending_id, timeout)
    }
}

impl Waits for WaitBundle {
    type Outcome = Resolved;

    fn asked(args: &WaitArgs) -> Option<Duration> {
        args.asked()
    }

    fn begin(
        engine: &Engine,
        caller: &Admitted<'_>,
        args: WaitArgs,
        wake: Arc<Wake>,
    ) -> Result<Waiter<Resolved>> {
        engine.begin_wait_bundle(caller, &args.pending_id, Some(wake))
    }

    fn reply(outcome: Resolved) -> Resolved {
        outcome
    }
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// `summary` (SUM-1).
pub(crate) struct Summary;

impl Declared for Summary {
    const NAME: &'static str = "summary";
    // SUM-1.
    const SUMMARY: &'static str =
        "The caller's pending bundles and questions and the oldest one's age, always equal to \
         what paging the listing would collect.";
    const ACCESS: crate::rules::capability::Access = READ;
    type Args = NoArgs;
    type Reply = Counts;
    type Body<'a> = &'a Counts;
    const HTTP: Option<Route> = Some(Route {
        method: Method::Get,
        path: "/api/v1/summary",
        tag: "inbox",
    });
    const CLI: &'static [CliCommand] = &[CliCommand::new(
        "summary",
        "Count the bundles and questions waiting.",
    )];

    fn perform(engine: &Engine, caller: &Admitted<'_>, _: NoArgs) -> Result<Counts> {
        engine.summary(caller)
    }
}

/// `pending_actions`' arguments (PA-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TasksArgs {
    /// The tasks to report on, at most 1000; invisible and unknown ones
    /// are left out.
    #[schemars(required, length(max = MAX_TASK_IDS))]
    task_ids: Option<Vec<String>>,
}

/// `pending_actions` (PA-1).
pub(crate) struct PendingActions;

impl Declared for PendingActions {
    const NAME: &'static str = "pending_actions";
    // PA-1.
    const SUMMARY: &'static str =
        "For each visible requested task, what blocks it and its primary session.";
    const ACCESS: crate::rules::capability::Access = READ;
    type Args = TasksArgs;
    type Reply = Vec<TaskPendingActions>;
    type Body<'a> = TasksBody<'a>;
    const HTTP: Option<Route> = Some(Route {
        method: Method::Post,
        path: "/api/v1/pending-actions",
        tag: "inbox",
    });

    fn perform(
        engine: &Engine,
        caller: &Admitted<'_>,
        args: TasksArgs,
    ) -> Result<Vec<TaskPendingActions>> {
        let task_ids = args
            .task_ids
            .ok_or_else(|| ValidationError::new("task_ids", "required"))?;
        engine.pending_actions(caller, &task_ids)
    }
}

/// One answer of a resolve (WIRE-5).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnswerArgs {
    /// Which question this answers.
    question_id: Id,
    /// Option ids of that question; their order and repeats do not
    /// matter. At most one id where the question's `multi_select` is
    /// `false` (VAL-9).
    selected_options: Option<Vec<String>>,
    /// Free text, at most 2000 characters (trimmed when stored).
    #[schemars(length(max = MAX_FREE_TEXT_RUNES))]
    custom_text: Option<String>,
}

impl AnswerArgs {
    /// The answer with WIRE-5's defaults (`[]`, `""`) filled in.
    pub(crate) fn input(self) -> AnswerInput {
        AnswerInput {
            question_id: self.question_id.0,
            selected_options: self.selected_options.unwrap_or_default(),
            custom_text: self.custom_text.unwrap_or_default(),
        }
    }
}

/// `resolve_bundle`'s arguments (§8).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("if" = {"properties": {"rejected": {"const": true}}, "required": ["rejected"]},
    "then" = {"properties": {"answers": {"maxItems": 0}}}))]
pub(crate) struct ResolveArgs {
    /// The bundle.
    pending_id: Id,
    /// One entry per question of the bundle; empty for a rejection.
    answers: Option<Vec<AnswerArgs>>,
    /// Decline to answer; then give no answers.
    rejected: Option<bool>,
    /// Why, at most 2000 characters (trimmed when stored).
    #[schemars(length(max = MAX_FREE_TEXT_RUNES))]
    reject_reason: Option<String>,
}

impl ResolveArgs {
    fn request(self) -> (Id, ResolveRequest) {
        let answers = self
            .answers
            .unwrap_or_default()
            .into_iter()
            .map(AnswerArgs::input)
            .collect();
        let request = ResolveRequest {
            answers,
            rejected: self.rejected.unwrap_or(false),
            reject_reason: self.reject_reason.unwrap_or_default(),
        };
        (self.pending_id, request)
    }
}

/// `resolve_bundle` (§8): answer or reject.
pub(crate) struct ResolveBundle;

impl Declared for ResolveBundle {
    const NAME: &'static str = "resolve_bundle";
    // §8.
    const SUMMARY: &'static str = "Answers or rejects a bundle. Exactly one caller claims it; \
        every other gets the winner's status and response with `claimed: false`.";
    const ACCESS: crate::rules::capability::Access = ANSWER;
    type Args = ResolveArgs;
    type Reply = Resolved;
    type Body<'a> = ResolvedBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound, Refusal::Conflict];
    const COUNTED: Counted = Counted::Resolves;
    const HTTP: Option<Route> = Some(Route {
        method: Method::Post,
        path: "/api/v1/clarification/{pending_id}/respond",
        tag: "clarification",
    });
    const CLI: &'static [CliCommand] = &[
        CliCommand {
            args: &[positional("pending_id")],
            fixed: &[("rejected", false)],
            skip: &["reject_reason"],
            ..CliCommand::new("answer", "Answer a bundle.")
        },
        CliCommand {
            args: &[positional("pending_id"), flag("reject_reason", "reason")],
            fixed: &[("rejected", true)],
            skip: &["answers"],
            ..CliCommand::new("reject", "Reject a bundle (decline to answer).")
        },
    ];

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: ResolveArgs) -> Result<Resolved> {
        let (pending_id, request) = args.request();
        engine.resolve_bundle(caller, &pending_id, &request)
    }
}

impl Tooled for ResolveBundle {
    const TOOL: &'static str = "answer_question";
    const LISTED: usize = 1;
    const DESCRIPTION: &'static str = "Answer or reject one clarification request. Give one \
        answer per question, or rejected=true with an optional reason. Exactly one caller \
        wins; if someone answered first you get claimed=false and their answer.";
    type Result<'a> = AnsweredBody<'a>;
}

/// `cancel_bundle` (LIFE-6).
pub(crate) struct CancelBundle;

impl Declared for CancelBundle {
    const NAME: &'static str = "cancel_bundle";
    // LIFE-6.
    const SUMMARY: &'static str =
        "Cancels a bundle through the same claim (humans and the host only).";
    const ACCESS: crate::rules::capability::Access = HUMANS;
    type Args = BundleArgs;
    type Reply = Resolved;
    type Body<'a> = ResolvedBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound, Refusal::Conflict];
    const COUNTED: Counted = Counted::Resolves;
    const HTTP: Option<Route> = Some(Route {
        method: Method::Post,
        path: "/api/v1/clarification/{pending_id}/cancel",
        tag: "clarification",
    });
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[positional("pending_id")],
        ..CliCommand::new("cancel", "Cancel a bundle (humans and system only).")
    }];

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: BundleArgs) -> Result<Resolved> {
        engine.cancel_bundle(caller, &args.pending_id)
    }
}

/// `events_after`'s arguments (EVT-2).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsArgs {
    /// A position from an earlier page's `next` (`""`: from the oldest
    /// kept event).
    after: Option<String>,
    /// Events examined at most: default 100; below 1 means 100; above
    /// 1000 is 1000.
    limit: Option<i64>,
}

/// `events_after` (EVT-2).
pub(crate) struct EventsAfter;

impl Declared for EventsAfter {
    const NAME: &'static str = "events_after";
    // EVT-2.
    const SUMMARY: &'static str = "The events after a position that the caller may see now, \
        oldest first; `next` goes on from the last one examined.";
    const ACCESS: crate::rules::capability::Access = READ;
    type Args = EventsArgs;
    type Reply = EventPage;
    type Body<'a> = EventsBody<'a>;

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: EventsArgs) -> Result<EventPage> {
        let after = args.after.unwrap_or_default();
        engine.events_after(caller, &after, args.limit)
    }
}
