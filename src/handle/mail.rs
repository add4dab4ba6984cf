//! Email (MAIL-1, MAIL-1a): the status of the mail worker, and (feature
//! `mail`) starting it on a handle.

use crate::domain::mail::MailStatus;
use crate::error::Result;
use crate::handle::clarion::Clarion;

impl Clarion {
    /// MAIL-1a: the mail worker's cursor, backlog, last error and its sent
    /// and failed counts (`configured: false` before mail was ever
    /// turned on for this database).
    pub fn mail_status(&self) -> Result<MailStatus> {
        self.engine.mail_status()
    }

    /// MAIL-1: emails the people each bundle reaches, on a thread of this
    /// handle until it is closed (a second call leaves the first worker
    /// running); [`Builder::mail`](crate::Builder::mail) does it at open.
    /// Several handles and processes may run one each: one sends at a
    /// time. The links in the mail are under the handle's public URL,
    /// which mail needs.
    #[cfg(feature = "mail")]
    pub fn start_mail(&self, options: &crate::domain::mail::worker::MailOptions) -> Result<()> {
        if self.engine.public_url.is_none() {
            return Err(crate::error::Error::Internal(
                "mail needs a public URL (Builder::public_url) for its answer links".into(),
            ));
        }
        self.engine
            .start_mail(options)
            .map_err(crate::error::Error::Internal)
    }
}
