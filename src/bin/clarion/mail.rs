//! `clarion serve`'s mail flags (MAIL-1): where mail goes out and whom it
//! is from. `clarion mail status` is the declared `mail_status`.

use clarion::MailOptions;

/// MAIL-1: email the people each bundle reaches, with their own answer
/// links (which need `--public-url`).
#[derive(clap::Args, Debug, Clone)]
pub struct MailFlags {
    /// Send mail through this SMTP server: `smtp://[user:password@]host[:port]`
    /// (`?tls=required` for STARTTLS) or `smtps://…`; user and password
    /// percent-encoded. Needs --mail-from and --public-url.
    #[arg(
        long,
        value_name = "URL",
        env = "CLARION_SMTP_URL",
        requires = "mail_from"
    )]
    smtp: Option<String>,
    /// The mails' From address, such as `Clarion <inbox@example.com>`.
    #[arg(long = "mail-from", value_name = "ADDRESS", requires = "smtp")]
    mail_from: Option<String>,
}

impl MailFlags {
    /// The worker's options, when mail was asked for.
    pub fn options(&self) -> Option<MailOptions> {
        let smtp = self.smtp.as_ref()?;
        Some(MailOptions::new(
            smtp,
            self.mail_from.clone().unwrap_or_default(),
        ))
    }
}
