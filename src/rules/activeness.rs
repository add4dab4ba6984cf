//! The one activeness rule (ACT-1..4), written once as typed query fragments
//! over the `bundles` table. Every consumer — the claim, the listing, the
//! summary, pending actions, the workflow guard, expiry and detach — builds
//! its query from these functions and restates none of it (ACT-3). Those
//! that ask about the deadline take `now` from the handle's clock, bound as
//! a parameter (DM-2): the statements' text stays fixed.
//!
//! All fragments are correlated subqueries on `bundles`, so any query whose
//! FROM clause is `bundles` can use them, and the listing can walk its index
//! in order and stop after `limit` rows.

use diesel::dsl::{self, exists, not};
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};

use crate::rules::vocabulary::{QuestionStatus, Resolution, SessionState};
use crate::store::schema::{bundle_questions, bundles, sessions, turns};

/// The type of [`status_is_pending`], for `auto_type` callers.
#[allow(non_camel_case_types)]
pub type status_is_pending<S> =
    dsl::Or<dsl::Or<dsl::IsNull<S>, dsl::Eq<S, &'static str>>, dsl::Eq<S, &'static str>>;

/// The type of [`question_is_pending`], for `auto_type` callers.
#[allow(non_camel_case_types)]
pub type question_is_pending = status_is_pending<bundle_questions::status>;

/// ACT-1.1 for any status column (the table's own, or an alias of it): NULL,
/// empty or `pending`. Written with `=` rather than `IN (…)` so statements
/// that contain it have a fixed shape and stay in the prepared-statement cache.
pub fn status_is_pending<S>(status: S) -> status_is_pending<S>
where
    S: Expression<SqlType = Nullable<Text>> + ExpressionMethods + Copy,
{
    let [empty, pending] = QuestionStatus::PENDING_WORDS;
    status.is_null().or(status.eq(empty)).or(status.eq(pending))
}

/// ACT-1.1 for one question row: its status is NULL, empty or `pending`.
pub fn question_is_pending() -> question_is_pending {
    status_is_pending(bundle_questions::status)
}

/// The type of [`exists_per_row`], for `auto_type` callers.
#[allow(non_camel_case_types)]
pub type exists_per_row<Q> = dsl::exists<dsl::Offset<Q>>;

/// `EXISTS (… OFFSET 0)`: a correlated existence test that the planner keeps
/// as a per-row check. PostgreSQL would otherwise flatten a plain EXISTS into
/// a join, losing the listing index's order and sorting every candidate; a
/// per-row check lets a page stop after `limit` matches. SQLite plans both
/// forms alike.
pub fn exists_per_row<Q>(query: Q) -> exists_per_row<Q>
where
    Q: diesel::query_dsl::methods::OffsetDsl,
{
    exists(query.offset(0))
}

/// The question rows of the bundle in the enclosing query (ids only: the
/// subquery is only ever tested for existence).
#[diesel::dsl::auto_type]
fn rows_of_bundle() -> _ {
    bundle_questions::table
        .filter(bundle_questions::pending_id.eq(bundles::pending_id))
        .select(bundle_questions::id)
}

/// ACT-1.1: at least one question row of the bundle is pending.
#[diesel::dsl::auto_type]
pub fn has_pending_question() -> _ {
    exists_per_row(rows_of_bundle().filter(question_is_pending()))
}

/// The type of [`status_is_resolution`], for `auto_type` callers.
#[allow(non_camel_case_types)]
pub type status_is_resolution<S> =
    dsl::Or<dsl::Or<dsl::Eq<S, &'static str>, dsl::Eq<S, &'static str>>, dsl::Eq<S, &'static str>>;

/// A status column holds a resolution (`answered`, `rejected` or
/// `cancelled`), written with `=` like [`status_is_pending`] so the
/// statement's shape stays fixed.
pub fn status_is_resolution<S>(status: S) -> status_is_resolution<S>
where
    S: Expression<SqlType = Nullable<Text>> + ExpressionMethods + Copy,
{
    let [answered, rejected, cancelled] = Resolution::ALL.map(Resolution::as_str);
    status
        .eq(answered)
        .or(status.eq(rejected))
        .or(status.eq(cancelled))
}

/// LIST-12: at least one question row of the bundle carries a resolution.
#[diesel::dsl::auto_type]
pub fn has_resolved_question() -> _ {
    let resolved: status_is_resolution<bundle_questions::status> =
        status_is_resolution(bundle_questions::status);
    exists_per_row(rows_of_bundle().filter(resolved))
}

/// ACT-2: the newest turn first — latest `started_at`, then latest creation
/// (`seq`), then greatest id.
#[diesel::dsl::auto_type]
pub fn newest_turn_first() -> _ {
    (
        turns::started_at.desc(),
        turns::seq.desc(),
        turns::id.desc(),
    )
}

/// ACT-2: the id of the current turn of the session row in the enclosing
/// query (NULL when it has none).
#[diesel::dsl::auto_type]
pub fn current_turn_of_session_row() -> _ {
    turns::table
        .filter(turns::session_id.eq(sessions::id))
        .order_by(newest_turn_first())
        .select(turns::id)
        .limit(1_i64)
        .single_value()
}

/// ACT-2: the id of the current turn of the enclosing bundle's session.
#[diesel::dsl::auto_type]
pub fn current_turn_of_bundle_session() -> _ {
    turns::table
        .filter(turns::session_id.eq(bundles::session_id))
        .order_by(newest_turn_first())
        .select(turns::id)
        .limit(1_i64)
        .single_value()
}

/// ACT-1.2: the bundle belongs to its session's current turn.
#[diesel::dsl::auto_type]
pub fn in_current_turn() -> _ {
    bundles::turn_id
        .nullable()
        .eq(current_turn_of_bundle_session())
}

/// ACT-1.3: the bundle's session exists and is not in a terminal state.
#[diesel::dsl::auto_type]
pub fn session_is_live() -> _ {
    // The three terminal states, from the vocabulary's one list.
    let completed: &'static str = SessionState::TERMINAL[0].as_str();
    let failed: &'static str = SessionState::TERMINAL[1].as_str();
    let cancelled: &'static str = SessionState::TERMINAL[2].as_str();
    exists_per_row(
        sessions::table
            .filter(sessions::id.eq(bundles::session_id))
            .filter(sessions::state.ne(completed))
            .filter(sessions::state.ne(failed))
            .filter(sessions::state.ne(cancelled))
            .select(sessions::id),
    )
}

/// ACT-1.4: every question row belongs to the bundle's session and turn.
#[diesel::dsl::auto_type]
pub fn is_well_formed() -> _ {
    not(exists_per_row(
        rows_of_bundle().filter(
            bundle_questions::session_id
                .ne(bundles::session_id)
                .or(bundle_questions::turn_id.ne(bundles::turn_id)),
        ),
    ))
}

/// ACT-1.1–4: the bundle is live. This is the rule; everything else asks
/// it, with the deadline or without.
#[diesel::dsl::auto_type]
pub fn is_live() -> _ {
    has_pending_question()
        .and(in_current_turn())
        .and(session_is_live())
        .and(is_well_formed())
}

/// The deadline column as a plain `BigInt`, for comparisons guarded by a
/// NULL test: the fragments below stay `Bool` (never NULL), so they can be
/// selected as columns as well as filtered on.
#[diesel::dsl::auto_type]
fn deadline() -> _ {
    bundles::expires_at.assume_not_null()
}

/// ACT-1.5 (EXP-1): no deadline, or `now` is before it. `now` is the
/// handle's clock, bound (DM-2). Written first in [`is_active`]: a column
/// test is cheaper than the subqueries.
#[diesel::dsl::auto_type]
pub fn before_deadline(now: i64) -> _ {
    let deadline: deadline = deadline();
    bundles::expires_at.is_null().or(deadline.gt(now))
}

/// ACT-1: live and before its deadline.
#[diesel::dsl::auto_type]
pub fn is_active(now: i64) -> _ {
    let before: before_deadline = before_deadline(now);
    before.and(is_live())
}

/// ACT-1, EXP-2: live and past its deadline (`now` at or after it):
/// nothing has settled it yet. A bundle without a deadline is never due.
#[diesel::dsl::auto_type]
pub fn is_due(now: i64) -> _ {
    let deadline: deadline = deadline();
    bundles::expires_at
        .is_not_null()
        .and(deadline.le(now))
        .and(is_live())
}

/// LIST-9, VAL-6: no question row has an empty `question_id`. A bundle that
/// breaks this cannot be answered, so it is never listed.
#[diesel::dsl::auto_type]
pub fn is_answerable() -> _ {
    let empty: &'static str = "";
    not(exists_per_row(
        rows_of_bundle().filter(bundle_questions::question_id.eq(empty)),
    ))
}

/// True once the bundle can never be active again through the API: it has no
/// pending row (statuses never return to pending, LIFE-10) or a newer turn
/// exists (turns only get newer, LIFE-2). Only these clear the
/// `may_be_active` index hint, so the hint can never hide an active bundle
/// (ACT-4). A terminal session is not permanent (states may change in any
/// direction), which is why expiry writes `expired` rather than relying on it.
#[diesel::dsl::auto_type]
pub fn permanently_inactive() -> _ {
    not(has_pending_question()).or(not(in_current_turn()))
}

/// The ids of bundles active at `now`, as a subquery for statements on
/// other tables.
#[diesel::dsl::auto_type]
pub fn active_bundle_ids(now: i64) -> _ {
    let active: is_active = is_active(now);
    bundles::table.filter(active).select(bundles::pending_id)
}

/// The ids of bundles due at `now` (EXP-2): live, their deadline passed.
#[diesel::dsl::auto_type]
pub fn due_bundle_ids(now: i64) -> _ {
    let due: is_due = is_due(now);
    bundles::table.filter(due).select(bundles::pending_id)
}

/// EXP-3: one bundle is due at `now` — the guard of a deadline's
/// settlement, which asks no visibility (whoever meets it settles it).
#[diesel::dsl::auto_type]
pub fn bundle_is_due<'a>(pending_id: &'a str, now: i64) -> _ {
    let due: due_bundle_ids = due_bundle_ids(now);
    exists(due.filter(bundles::pending_id.eq(pending_id)))
}
