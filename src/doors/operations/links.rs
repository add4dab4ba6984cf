//! Answer links (LINK-1): minted and their key rotated by the host
//! (`system`, section 25) through every door; on the command line
//! `clarion link` and `clarion rotate-link-key`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::domain::engine::Engine;
use crate::domain::links::AnswerLink;
use crate::doors::args::{Id, Millis};
use crate::doors::envelope::bodies::{AnswerLinkBody, OkBody};
use crate::doors::operations::declare::{
    positional, CliArg, CliCommand, CliValue, Declared, Refusal,
};
use crate::error::Result;
use crate::rules::capability::{Access, Admitted, HOST};

/// `answer_link`'s arguments (LINK-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnswerLinkArgs {
    /// The bundle.
    pending_id: Id,
    /// The person the link answers as; they must see the bundle now.
    user_id: Id,
    /// How long the link lasts, in milliseconds: 60000 (a minute) to
    /// 604800000 (a week); default 86400000 (a day). Its POSTs end at the
    /// bundle's deadline if that comes first.
    #[schemars(range(min = 60_000_u64, max = 604_800_000_u64))]
    ttl_ms: Option<Millis>,
}

/// `answer_link` (LINK-1).
pub(crate) struct AnswerLinkOp;

impl Declared for AnswerLinkOp {
    const NAME: &'static str = "answer_link";
    // LINK-1.
    const SUMMARY: &'static str = "A signed link with which one person answers or votes on one \
        bundle they see, once: its URL and until when it answers.";
    const ACCESS: Access = HOST;
    type Args = AnswerLinkArgs;
    type Reply = AnswerLink;
    type Body<'a> = AnswerLinkBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[
            positional("pending_id"),
            CliArg {
                arg: "user_id",
                flag: "for",
                value: CliValue::AsTyped,
            },
            CliArg {
                arg: "ttl_ms",
                flag: "ttl",
                value: CliValue::Age,
            },
        ],
        ..CliCommand::new(
            "link",
            "Print an answer link for one person and one bundle (--qr: as a QR code too).",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: AnswerLinkArgs) -> Result<AnswerLink> {
        engine.answer_link(
            &args.pending_id.0,
            &args.user_id.0,
            args.ttl_ms.map(|ms| ms.0),
        )
    }
}

/// `rotate_link_key`'s arguments (LINK-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RotateLinkKeyArgs {
    /// End every outstanding link at once (the keys before the new one are
    /// deleted); default false: links signed before keep working for 7
    /// days.
    now: Option<bool>,
}

/// `rotate_link_key` (LINK-1).
pub(crate) struct RotateLinkKeyOp;

impl Declared for RotateLinkKeyOp {
    const NAME: &'static str = "rotate_link_key";
    // LINK-1.
    const SUMMARY: &'static str = "Signs answer links with a new key from now on; the old keys \
        verify for 7 more days, or, with now, never again.";
    const ACCESS: Access = HOST;
    type Args = RotateLinkKeyArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const CLI: &'static [CliCommand] = &[CliCommand {
        ..CliCommand::new(
            "rotate-link-key",
            "Sign answer links with a new key (--now: every earlier link stops at once).",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: RotateLinkKeyArgs) -> Result<()> {
        engine.rotate_link_key(args.now.unwrap_or(false))
    }
}
