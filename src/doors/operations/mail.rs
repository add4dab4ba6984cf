//! Email (MAIL-1a): how the mail worker stands, for the host (`system`,
//! section 25) through every door; on the command line `clarion mail
//! status`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::domain::engine::Engine;
use crate::domain::mail::MailStatus;
use crate::doors::envelope::bodies::MailStatusBody;
use crate::doors::operations::declare::{CliCommand, Declared};
use crate::error::Result;
use crate::rules::capability::{Access, Admitted, HOST};

/// `mail_status` takes no arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MailStatusArgs {}

/// `mail_status` (MAIL-1a).
pub(crate) struct MailStatusOp;

impl Declared for MailStatusOp {
    const NAME: &'static str = "mail_status";
    // MAIL-1a.
    const SUMMARY: &'static str = "How the mail worker stands: its cursor in the event log, \
        the events after it, its last error, and the mails sent and dropped.";
    const ACCESS: Access = HOST;
    type Args = MailStatusArgs;
    type Reply = MailStatus;
    type Body<'a> = MailStatusBody<'a>;
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: "mail",
        ..CliCommand::new(
            "status",
            "Show the mail worker's cursor, backlog, last error and counts.",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, _: MailStatusArgs) -> Result<MailStatus> {
        engine.mail_status()
    }
}
