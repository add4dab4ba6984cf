//! Webhook endpoints (HOOK-1, HOOK-3, HOOK-6): managed by the host
//! (`system`, section 13a) through every door; on the command line under
//! `clarion webhook`.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use crate::domain::engine::Engine;
use crate::domain::webhooks::{WebhookAdd, WebhookSecret, WebhookView};
use crate::doors::args::{given, Id, Millis};
use crate::doors::envelope::bodies::{OkBody, WebhookSecretBody, WebhooksBody};
use crate::doors::operations::declare::{
    positional, CliArg, CliCommand, CliValue, Declared, Refusal,
};
use crate::error::Result;
use crate::rules::capability::{Access, Admitted, HOST};
use crate::rules::limits::{webhook_url_pattern, MAX_WEBHOOK_URL, WEBHOOK_OVERLAP};
use crate::rules::vocabulary::EventType;

/// The group the webhook subcommands are under: `clarion webhook …`.
const GROUP: &str = "webhook";

/// `webhook_add`'s arguments (HOOK-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookAddArgs {
    /// Where to deliver: an absolute http or https URL.
    #[schemars(schema_with = "url_schema")]
    url: Id,
    /// The event types to deliver (`bundle.asked`, `bundle.resolved`,
    /// `bundle.closed`); omitted or empty: all of them.
    #[serde(default)]
    #[schemars(schema_with = "events_schema")]
    events: Option<Vec<String>>,
    /// Only events of bundles in this workspace; `""` or omitted: every
    /// workspace.
    workspace_id: Option<String>,
    /// Deliver even to a loopback, private, link-local or cloud-metadata
    /// address, and allow a user name and password in the URL (a relay on
    /// this machine or network); default false: such a URL is refused.
    allow_private: Option<bool>,
    /// Put in each `bundle.asked`, `bundle.reminded` and `bundle.escalated`
    /// payload, as `links`, an answer link for each person the bundle
    /// reaches (an escalation: its `to` only). Links are credentials: for
    /// a relay that messages each person privately. Default false.
    links: Option<bool>,
}

/// HOOK-1: an absolute http or https URL of at most 2,000 characters.
fn url_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_WEBHOOK_URL,
        "pattern": webhook_url_pattern(),
    })
}

/// HOOK-1: EVT-1's event types, or `null`.
fn events_schema(_: &mut SchemaGenerator) -> Schema {
    let words: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
    json_schema!({
        "type": ["array", "null"],
        "items": {"type": "string", "enum": words},
    })
}

/// `webhook_add` (HOOK-1).
pub(crate) struct WebhookAddOp;

impl Declared for WebhookAddOp {
    const NAME: &'static str = "webhook_add";
    // HOOK-1.
    const SUMMARY: &'static str = "Adds a webhook endpoint, enabled, receiving the events \
        appended from now on; returns its secret, shown once.";
    const ACCESS: Access = HOST;
    type Args = WebhookAddArgs;
    type Reply = WebhookSecret;
    type Body<'a> = WebhookSecretBody<'a>;
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: GROUP,
        args: &[
            positional("url"),
            CliArg {
                arg: "events",
                flag: "events",
                value: CliValue::List,
            },
            CliArg {
                arg: "workspace_id",
                flag: "workspace",
                value: CliValue::AsTyped,
            },
        ],
        ..CliCommand::new(
            "add",
            "Add a webhook endpoint (its secret prints once, as the last line).",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: WebhookAddArgs) -> Result<WebhookSecret> {
        engine.webhook_add(&WebhookAdd {
            url: args.url.0,
            events: args.events.unwrap_or_default(),
            workspace_id: given(args.workspace_id).unwrap_or_default(),
            allow_private: args.allow_private.unwrap_or(false),
            links: args.links.unwrap_or(false),
        })
    }
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// `webhook_list` (HOOK-6).
pub(crate) struct WebhookListOp;

impl Declared for WebhookListOp {
    const NAME: &'static str = "webhook_list";
    // HOOK-6.
    const SUMMARY: &'static str = "Every webhook endpoint, oldest first, with its state, \
        cursor, backlog, last error and attempts; never its secret.";
    const ACCESS: Access = HOST;
    type Args = NoArgs;
    type Reply = Vec<WebhookView>;
    type Body<'a> = WebhooksBody<'a>;
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: GROUP,
        ..CliCommand::new(
            "list",
            "List the webhook endpoints and how their delivery stands.",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, _: NoArgs) -> Result<Vec<WebhookView>> {
        engine.webhook_list()
    }
}

/// An endpoint, by id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookIdArgs {
    /// The endpoint.
    id: Id,
}

/// Declares an operation on one endpoint by id, answering `{"ok": true}`.
macro_rules! by_id {
    ($op:ident, $name:literal, $command:literal, $summary:literal, $about:literal, $method:ident) => {
        #[doc = concat!("`", $name, "` (HOOK-1).")]
        pub(crate) struct $op;

        impl Declared for $op {
            const NAME: &'static str = $name;
            const SUMMARY: &'static str = $summary;
            const ACCESS: Access = HOST;
            type Args = WebhookIdArgs;
            type Reply = ();
            type Body<'a> = OkBody;
            const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];
            const CLI: &'static [CliCommand] = &[CliCommand {
                group: GROUP,
                args: &[positional("id")],
                ..CliCommand::new($command, $about)
            }];

            fn perform(engine: &Engine, _: &Admitted<'_>, args: WebhookIdArgs) -> Result<()> {
                engine.$method(&args.id)
            }
        }
    };
}

by_id!(
    WebhookEnableOp,
    "webhook_enable",
    "enable",
    // HOOK-5.
    "Delivers to the endpoint again: from its cursor, or from the head of the log if events \
     after it were pruned.",
    "Enable an endpoint (a failing one is tried again).",
    webhook_enable
);
by_id!(
    WebhookDisableOp,
    "webhook_disable",
    "disable",
    // HOOK-5.
    "Stops delivering to the endpoint; its events are no longer kept for it.",
    "Disable an endpoint.",
    webhook_disable
);
by_id!(
    WebhookRemoveOp,
    "webhook_remove",
    "remove",
    // HOOK-1.
    "Removes the endpoint and its secret.",
    "Remove an endpoint.",
    webhook_remove
);

/// `webhook_rotate`'s arguments (HOOK-3).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebhookRotateArgs {
    /// The endpoint.
    id: Id,
    /// How long, in milliseconds, the old secret signs beside the new
    /// one: default 86400000 (24 h).
    overlap_ms: Option<Millis>,
}

/// `webhook_rotate` (HOOK-3).
pub(crate) struct WebhookRotateOp;

impl Declared for WebhookRotateOp {
    const NAME: &'static str = "webhook_rotate";
    // HOOK-3.
    const SUMMARY: &'static str = "Gives the endpoint a new secret; during the overlap both \
        sign each delivery. Returns the new secret, shown once.";
    const ACCESS: Access = HOST;
    type Args = WebhookRotateArgs;
    type Reply = WebhookSecret;
    type Body<'a> = WebhookSecretBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: GROUP,
        args: &[
            positional("id"),
            CliArg {
                arg: "overlap_ms",
                flag: "overlap",
                value: CliValue::Age,
            },
        ],
        ..CliCommand::new(
            "rotate",
            "Give an endpoint a new secret (the old one signs too during --overlap, 24h by default).",
        )
    }];

    fn perform(
        engine: &Engine,
        _: &Admitted<'_>,
        args: WebhookRotateArgs,
    ) -> Result<WebhookSecret> {
        let overlap = args.overlap_ms.map_or(WEBHOOK_OVERLAP, |ms| ms.0);
        engine.webhook_rotate(&args.id, overlap)
    }
}
