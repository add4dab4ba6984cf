//! The outbox and detachment as typed fragments (DEL-3, LIFE-5): which
//! bundles hold an entry, in which order the outbox is read, and which
//! bundles detaching marks.

use diesel::dsl::update;
use diesel::prelude::*;

use crate::rules::activeness;
use crate::store::schema::bundles;

/// DEL-3: the bundle's resolution is an outbox entry — undelivered, and its
/// agent detached. The one definition every outbox reader uses.
#[diesel::dsl::auto_type]
pub fn in_outbox() -> _ {
    bundles::response_delivery_pending.and(bundles::agent_disconnected)
}

/// The outbox entries in their order: oldest resolution first (DEL-3).
#[diesel::dsl::auto_type]
pub fn outbox_entries() -> _ {
    bundles::table
        .filter(in_outbox())
        .order_by((bundles::responded_at.asc(), bundles::pending_id.asc()))
        .select(bundles::pending_id)
}

/// One page of the outbox (DEL-3).
#[diesel::dsl::auto_type]
pub fn outbox_query(limit: i64) -> _ {
    outbox_entries().limit(limit)
}

/// LIFE-5: which bundles detaching marks — in their session's current turn,
/// active or holding an undelivered resolution, and not yet detached.
#[diesel::dsl::auto_type]
pub fn detachable() -> _ {
    let attached: bool = false;
    activeness::in_current_turn()
        .and(activeness::is_active().or(bundles::response_delivery_pending))
        .and(bundles::agent_disconnected.eq(attached))
}

/// LIFE-5: detach a session's detachable bundles.
#[diesel::dsl::auto_type]
pub fn detach_statement<'a>(session_id: &'a str) -> _ {
    let detached: bool = true;
    update(
        bundles::table
            .filter(bundles::session_id.eq(session_id))
            .filter(detachable()),
    )
    .set(bundles::agent_disconnected.eq(detached))
}

/// LIFE-5 for one bundle whose last waiter timed out.
#[diesel::dsl::auto_type]
pub fn detach_bundle_statement<'a>(pending_id: &'a str) -> _ {
    let detached: bool = true;
    update(
        bundles::table
            .filter(bundles::pending_id.eq(pending_id))
            .filter(detachable()),
    )
    .set(bundles::agent_disconnected.eq(detached))
}
