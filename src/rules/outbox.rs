//! The outbox and detachment as typed fragments (DEL-3, LIFE-5): which
//! bundles hold an entry, in which order the outbox is read, and which
//! bundles detaching marks.

use diesel::dsl::{exists, not, update};
use diesel::prelude::*;

use crate::rules::activeness::{self, exists_per_row};
use crate::store::schema::{attachments, bundles, handles};

/// The attachment of the enclosing bundle's to a handle whose heartbeat is
/// alive at `now`.
#[diesel::dsl::auto_type]
fn live_attachment(now: i64) -> _ {
    let alive = exists(
        handles::table
            .filter(handles::id.eq(attachments::handle_id))
            .filter(handles::alive_until.ge(now))
            .select(handles::id),
    );
    attachments::table
        .filter(attachments::pending_id.eq(bundles::pending_id))
        .filter(alive)
        .select(attachments::pending_id)
}

/// DEL-3: the bundle's attachment lease has lapsed at `now`: no handle
/// whose heartbeat is still alive holds it (its waiting process died, or
/// nobody has waited on it for a lease). A bundle attached to no handle
/// counts as lapsed.
#[diesel::dsl::auto_type]
pub fn attachment_lapsed(now: i64) -> _ {
    let live: live_attachment = live_attachment(now);
    not(exists_per_row(live))
}

/// DEL-3: the bundle's agent is gone — detached by the host or a timeout
/// (LIFE-5), or its attachment lease lapsed.
#[diesel::dsl::auto_type]
pub fn detached(now: i64) -> _ {
    let lapsed: attachment_lapsed = attachment_lapsed(now);
    bundles::agent_disconnected.or(lapsed)
}

/// DEL-3: the bundle's resolution is an outbox entry at `now` —
/// undelivered, and its agent gone. The one definition every outbox reader
/// uses.
#[diesel::dsl::auto_type]
pub fn in_outbox(now: i64) -> _ {
    let gone: detached = detached(now);
    bundles::response_delivery_pending.and(gone)
}

/// The outbox entries in their order: oldest resolution first (DEL-3).
#[diesel::dsl::auto_type]
pub fn outbox_entries(now: i64) -> _ {
    let entry: in_outbox = in_outbox(now);
    bundles::table
        .filter(entry)
        .order_by((bundles::responded_at.asc(), bundles::pending_id.asc()))
        .select(bundles::pending_id)
}

/// One page of the outbox (DEL-3).
#[diesel::dsl::auto_type]
pub fn outbox_query(now: i64, limit: i64) -> _ {
    let entries: outbox_entries = outbox_entries(now);
    entries.limit(limit)
}

/// LIFE-5: which bundles detaching marks at `now` — in their session's
/// current turn, active or holding an undelivered resolution, and not yet
/// detached. A due bundle is neither until it is settled (EXP-3).
#[diesel::dsl::auto_type]
pub fn detachable(now: i64) -> _ {
    let attached: bool = false;
    let active: activeness::is_active = activeness::is_active(now);
    activeness::in_current_turn()
        .and(active.or(bundles::response_delivery_pending))
        .and(bundles::agent_disconnected.eq(attached))
}

/// LIFE-5: detach a session's detachable bundles.
#[diesel::dsl::auto_type]
pub fn detach_statement<'a>(session_id: &'a str, now: i64) -> _ {
    let detached: bool = true;
    let detachable: detachable = detachable(now);
    update(
        bundles::table
            .filter(bundles::session_id.eq(session_id))
            .filter(detachable),
    )
    .set(bundles::agent_disconnected.eq(detached))
}

/// LIFE-5 for one bundle whose last waiter timed out.
#[diesel::dsl::auto_type]
pub fn detach_bundle_statement<'a>(pending_id: &'a str, now: i64) -> _ {
    let detached: bool = true;
    let detachable: detachable = detachable(now);
    update(
        bundles::table
            .filter(bundles::pending_id.eq(pending_id))
            .filter(detachable),
    )
    .set(bundles::agent_disconnected.eq(detached))
}
