//! Email (MAIL-1, MAIL-1a): the mail worker's one row in the database —
//! its cursor in the event log, its lease, its progress through the
//! current event's recipients, its counts — read by `mail_status`, by
//! `/metrics` and by `prune`. The worker (`worker.rs`) and the messages
//! it sends (`message.rs`) need the feature `mail`; the status does not.

#[cfg(feature = "mail")]
pub(crate) mod message;
pub(crate) mod status;
#[cfg(feature = "mail")]
pub(crate) mod worker;

pub(crate) use status::retained_from;
pub use status::MailStatus;
