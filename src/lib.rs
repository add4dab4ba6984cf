//! clarion: a durable, embeddable "ask a human" inbox for agent backends.
//!
//! A coding agent parks on a *bundle* of one to four clarification questions;
//! humans and external agents discover the bundles they may see and answer
//! each one exactly once. The library is synchronous and runs on SQLite
//! (bundled, the default) or PostgreSQL (cargo feature `postgres`).
//!
//! ```
//! use clarion::{AskRequest, Clarion, OptionSpec, Principal, QuestionSpec, ResolveRequest, AnswerInput, SessionUpsert, TaskUpsert, WorkspaceUpsert};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let url = format!("sqlite://{}", dir.path().join("inbox.db").display());
//! let inbox = Clarion::open(&url)?;
//! inbox.upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))?;
//! inbox.upsert_task(TaskUpsert::new("t").workspace("w"))?;
//! inbox.upsert_session(SessionUpsert::new("s", "t"))?;
//! let option = |label: &str| OptionSpec { label: label.into(), description: format!("{label}, please"), ..Default::default() };
//! let asked = inbox.ask(&AskRequest {
//!     session_id: "s".into(),
//!     questions: vec![QuestionSpec { prompt: "Ship it?".into(), options: vec![option("Yes"), option("No")], ..Default::default() }],
//!     ..Default::default()
//! })?;
//! let alice = Principal::user("alice");
//! let answer = ResolveRequest {
//!     answers: vec![AnswerInput { question_id: "q1".into(), selected_options: vec!["q1_opt1".into()], ..Default::default() }],
//!     ..Default::default()
//! };
//! let resolved = inbox.resolve_bundle(&alice, &asked.pending_id, &answer)?;
//! assert!(resolved.claimed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The code is layered, and imports only point downwards:
//! `store` (databases) → `error` → `rules` (decisions as typed fragments,
//! no I/O) → `domain` (the operations, the one claim, the one change path)
//! → `doors` (envelopes, the JSON calls, MCP) → this handle and the C ABI.
//! `docs/architecture.md` draws it; `docs/rules.md` defines every
//! requirement id (ACT-1, LIFE-3, …) cited where a rule is enforced.

// The public surface is documented in full; `test-hooks` exposes internals
// (generated query types among them) that are not part of it.
#![cfg_attr(not(feature = "test-hooks"), warn(missing_docs))]

#[macro_use]
mod store;
mod domain;
mod doors;
mod error;
pub mod ffi;
mod handle;
mod rules;
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod test_hooks;

pub use domain::ask::{AskRequest, Asked, Expiry, OnExpire, OptionSpec, QuestionSpec};
pub use domain::deadline::Swept;
pub use domain::delivery::wait::{Checked, PendingWait};
pub use domain::engine::signal::EventSubscription;
pub use domain::events::{Event, EventPage};
pub use domain::history::{SettledCursor, SettledPage, SettledRequest};
pub use domain::lifecycle::{SessionUpsert, TaskUpsert, WorkspaceUpsert};
pub use domain::links::AnswerLink;
pub use domain::listing::{
    Cursor, ListPage, ListRequest, PendingAction, Summary, TaskPendingActions,
};
#[cfg(feature = "mail")]
pub use domain::mail::worker::MailOptions;
pub use domain::mail::MailStatus;
pub use domain::people::{Caller, Person, User, UserCursor, UserField, UserPage, UserUpsert};
pub use domain::resolve::{AnswerInput, ResolveRequest};
pub use domain::resume::{Delivery, DeliveryReport, DispatchError, ResumeDispatcher};
#[cfg(feature = "http")]
pub use domain::tokens::{NewToken, TokenInfo, WebSession};
pub use domain::views::{
    Answer, AttemptView, BundleDetail, BundleView, LedgerEntry, OptionView, QuestionView,
    QuorumView, Resolved, Response, Submission, VoteView, WaitOutcome,
};
#[cfg(feature = "webhooks")]
pub use domain::webhooks::worker::{TestDelivery, WebhookOptions};
pub use domain::webhooks::{WebhookAdd, WebhookFigures, WebhookSecret, WebhookView};
pub use doors::envelope;
pub use doors::mcp;
pub use doors::operations::{
    capabilities, has_capability, CliArg, CliCommand, CliValue, Operation, Property, PropertyKind,
};
pub use error::{Entity, Error, ErrorCode, OpenError, Result, ValidationError};
pub use handle::{Builder, Clarion, LeaseHold};
pub use rules::capability::{Access, AgentAccess, Authorization, Denial, Target};
pub use rules::limits;
pub use rules::nudges::{EscalateRequest, RemindersRequest};
pub use rules::principal::{Grant, Principal};
pub use rules::quorum::QuorumRequest;
pub use rules::vocabulary::{
    BundleKind, BundleStatus, Channel, DecidedBy, ExpiryAction, QuestionStatus, Resolution,
    SessionState,
};
pub use store::{
    Backend, Clock, DbError, IdKind, IdSource, ManualClock, Outage, SequentialIds, Synchronous,
    SystemClock, Timestamp, UuidV7Ids,
};

/// The HTTP door (HTTP-1..9; feature `http`): an axum router over a
/// [`Clarion`] handle, mountable under any prefix of a host's own server,
/// and the server loop `clarion serve` runs it with. See
/// `examples/mount.rs`.
#[cfg(feature = "http")]
pub mod http {
    pub use crate::doors::http::{
        connections_allowed, descriptor_limits, serve, Authentication, Authenticator, HttpError,
        HttpOptions, InvalidOrigin, ServeOptions, Shutdown, SignedIn, TokenAuthenticator,
        MAX_BODY_BYTES, RESERVED_DESCRIPTORS, SESSION_COOKIE, STREAMS_PER_CREDENTIAL,
    };
    pub use crate::handle::router;
}

/// One async driver of a [`PendingWait`] (feature `http`): checked on a
/// blocking pool, asleep on its callback in between; the HTTP door's waits
/// and `clarion mcp`'s run it.
#[cfg(feature = "http")]
pub mod drive {
    pub use crate::doors::drive::{BlockingPool, DrivenWait, Driver};
}

/// Compiles the README's Rust examples as doctests, so they cannot rot.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The webhook guide's Rust example, compiled as a doctest.
#[doc = include_str!("../docs/webhooks.md")]
#[cfg(doctest)]
pub struct WebhooksDocDoctests;
