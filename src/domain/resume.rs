//! What the outbox hands a host (DEL-3..5): an entry, the dispatcher that
//! resumes an agent with it, and what a delivery run did.

use schemars::JsonSchema;
use serde::Serialize;

use crate::domain::views::{QuestionView, Response};
use crate::rules::vocabulary::BundleStatus;

/// One outbox entry (DEL-3): everything a host needs to resume the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Delivery {
    /// The bundle's id: the idempotency key of the resumption (DEL-5).
    pub pending_id: String,
    /// The bundle's task.
    pub task_id: String,
    /// The session to resume.
    pub session_id: String,
    /// The resolution.
    pub status: BundleStatus,
    /// What was asked.
    pub questions: Vec<QuestionView>,
    /// What was answered.
    pub response: Response,
}

/// Why a dispatch failed; the entry stays in the outbox (DEL-4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DispatchError(pub String);

impl DispatchError {
    /// A failure described by `message`.
    pub fn new(message: impl std::fmt::Display) -> Self {
        DispatchError(message.to_string())
    }
}

/// A Rust host's way to resume a detached agent with its answer (DEL-3).
/// Called right after the claim commits, outside its transaction, with a
/// bounded timeout; success acknowledges the entry. The `pending_id` is the
/// idempotency key: delivery is at least once (DEL-5).
///
/// ```
/// use clarion::{Delivery, DispatchError, ResumeDispatcher};
///
/// struct Resume;
/// impl ResumeDispatcher for Resume {
///     fn resume(&self, delivery: &Delivery) -> Result<(), DispatchError> {
///         println!("resume session {} with {}", delivery.session_id, delivery.status.as_str());
///         Ok(())
///     }
/// }
/// ```
pub trait ResumeDispatcher: Send + Sync + 'static {
    /// Resumes the agent of `delivery.session_id` with its answer.
    fn resume(&self, delivery: &Delivery) -> Result<(), DispatchError>;
}

/// What `deliver_pending` did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryReport {
    /// Entries the dispatcher took (and that are now acknowledged).
    pub delivered: usize,
    /// Entries whose dispatch failed or timed out; they stay in the outbox.
    pub failed: usize,
    /// Entries another process was dispatching (leased).
    pub skipped: usize,
}
