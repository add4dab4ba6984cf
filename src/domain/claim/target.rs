//! What one claim is about — the bundle as its read found it — and what
//! it writes besides each row's answer: shared by both backends' files.

use crate::domain::bundle::{BundleRecord, QuestionRecord};
use crate::domain::claim::statements::Resolver;
use crate::rules::visibility::Scope;

/// The bundle a claim is about: on SQLite as its read found it under the
/// write lock; on PostgreSQL as the first read found it.
pub(crate) struct Target {
    pub record: BundleRecord,
    /// ACT-1 as evaluated by SQLite's read under the lock.
    pub active_when_read: bool,
    /// The bundle's rows in DM-4 order.
    pub rows: Vec<QuestionRecord>,
}

/// What a claim writes besides each row's answer.
pub(crate) struct Marks<'a> {
    /// Who claims: PostgreSQL's write re-checks what it may see.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub scope: &'a Scope,
    pub pending_id: &'a str,
    pub status: &'static str,
    pub reason: &'a str,
    pub responded_at: i64,
    pub resolver: &'a Resolver<'a>,
    /// The claim's clock (ACT-1.5): PostgreSQL's write re-checks the
    /// deadline with it.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub now: i64,
}
