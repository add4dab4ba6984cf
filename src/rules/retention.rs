//! REL-8: which bundles retention may delete, written once as a typed
//! fragment. A bundle is prunable only once it stopped being active before
//! the cutoff — resolved (by `responded_at`), expired (by when its rows
//! were expired), or superseded (by when its session's current turn
//! started, never later than the superseding turn) — and never while it
//! is active (ACT-1) or holds an undelivered resolution (DEL-1).

use diesel::dsl::not;
use diesel::prelude::*;

use crate::rules::activeness::{self, exists_per_row};
use crate::rules::vocabulary::QuestionStatus;
use crate::store::schema::{bundle_questions, bundles, turns};

/// A row of the enclosing bundle was expired before `cutoff`.
#[diesel::dsl::auto_type]
fn expired_before(cutoff: i64) -> _ {
    let expired: &'static str = QuestionStatus::EXPIRED_WORD;
    exists_per_row(
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(bundles::pending_id))
            .filter(bundle_questions::status.eq(expired))
            .filter(bundle_questions::expired_at.lt(cutoff))
            .select(bundle_questions::id),
    )
}

/// The enclosing bundle is not in its session's current turn, and no turn
/// of the session started at or after `cutoff` — so the current turn (the
/// latest started, ACT-2), and with it the superseding one, started
/// before then.
#[diesel::dsl::auto_type]
fn superseded_before(cutoff: i64) -> _ {
    not(activeness::in_current_turn()).and(not(exists_per_row(
        turns::table
            .filter(turns::session_id.eq(bundles::session_id))
            .filter(turns::started_at.ge(cutoff))
            .select(turns::id),
    )))
}

/// REL-8: the enclosing bundle may be deleted by a prune with this cutoff.
/// Never a live bundle: one neither active nor due at any `now` (a due
/// bundle is kept until it is settled), so this one needs no clock.
#[diesel::dsl::auto_type]
pub fn prunable(cutoff: i64) -> _ {
    let expired: expired_before = expired_before(cutoff);
    let superseded: superseded_before = superseded_before(cutoff);
    not(bundles::response_delivery_pending)
        .and(not(activeness::is_live()))
        .and(bundles::responded_at.lt(cutoff).or(expired).or(superseded))
}

/// One batch of prunable bundles.
#[diesel::dsl::auto_type]
pub fn prunable_batch(cutoff: i64, batch: i64) -> _ {
    let member: prunable = prunable(cutoff);
    bundles::table
        .filter(member)
        .select(bundles::pending_id)
        .limit(batch)
}
