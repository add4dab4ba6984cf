//! Reading the attempt ledger (AUD-3): one bundle's entries for a caller
//! who may see it, every entry in keyset pages for an export, and prune by
//! `at` (REL-8). The writing side is `engine/ledger.rs`.

use diesel::prelude::*;

use crate::domain::bundle::visible_bundle_query;
use crate::domain::engine::ledger::entry_columns;
use crate::domain::engine::Engine;
use crate::domain::views::{AttemptView, LedgerEntry};
use crate::error::{Entity, Error, Result};
use crate::rules::capability::Admitted;
use crate::rules::limits::check_text;
use crate::rules::principal::Principal;
use crate::store::schema::attempts;
use crate::store::{at_most_one, AnyConnection, Timestamp};

/// An entry's columns after its id, in [`AttemptView`]'s order.
type Columns = (String, i64, String, String, String, String, String, String);

/// AUD-3: one bundle's entries, in (`at`, id) order, on the
/// `attempts_by_bundle` index.
#[diesel::dsl::auto_type]
pub fn attempts_of_bundle_query<'a>(pending_id: &'a str) -> _ {
    attempts::table
        .filter(attempts::pending_id.eq(pending_id))
        .order_by((attempts::at.asc(), attempts::id.asc()))
        .select(entry_columns())
}

/// (`at`, `id`) after a keyset position.
type Later = diesel::dsl::Or<
    diesel::dsl::Gt<attempts::at, i64>,
    diesel::dsl::And<diesel::dsl::Eq<attempts::at, i64>, diesel::dsl::Gt<attempts::id, i64>>,
>;

/// AUD-3's export: the next page after (`at`, `id`), from `since`
/// (inclusive) to `until` (exclusive), on the `attempts_by_time` index.
#[diesel::dsl::auto_type]
pub fn attempts_page_query(after: (i64, i64), since: i64, until: i64, limit: i64) -> _ {
    let (at, id) = after;
    let later: Later = attempts::at
        .gt(at)
        .or(attempts::at.eq(at).and(attempts::id.gt(id)));
    attempts::table
        .filter(attempts::at.ge(since))
        .filter(attempts::at.lt(until))
        .filter(later)
        .order_by((attempts::at.asc(), attempts::id.asc()))
        .select((attempts::id, entry_columns()))
        .limit(limit)
}

/// How many entries an export reads at once: its memory stays constant.
const EXPORT_PAGE: i64 = 1_000;

fn entry(columns: Columns) -> LedgerEntry {
    let (pending_id, at, principal_kind, user_id, agent_id, channel, outcome, digest) = columns;
    LedgerEntry {
        pending_id,
        attempt: AttemptView {
            at: Timestamp::from_micros(at),
            principal_kind,
            user_id,
            agent_id,
            channel,
            outcome,
            digest,
        },
    }
}

/// REL-8: deletes up to `limit` entries recorded before `cutoff`, whether
/// or not their bundle still exists; returns how many.
pub(crate) fn prune_attempts(conn: &mut AnyConnection, cutoff: i64, limit: i64) -> Result<usize> {
    let oldest = attempts::table
        .filter(attempts::at.lt(cutoff))
        .order_by((attempts::at.asc(), attempts::id.asc()))
        .select(attempts::id)
        .limit(limit);
    let ids: Vec<i64> = oldest.load(conn)?;
    if ids.is_empty() {
        return Ok(0);
    }
    Ok(diesel::delete(attempts::table.filter(attempts::id.eq_any(&ids))).execute(conn)?)
}

impl Engine {
    /// AUD-3: the entries of one bundle, oldest first. A user needs to see
    /// the bundle (an invisible or absent one is the one not-found,
    /// AUTH-5); `system` also reads the entries of a deleted bundle. The
    /// appender is flushed first, so a handle reads its own attempts.
    pub(crate) fn attempts(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
    ) -> Result<Vec<AttemptView>> {
        check_text("pending_id", pending_id)?;
        let scope = caller.scope()?;
        self.ledger.flush();
        let (visible, entries) = self.read(|conn| {
            let bundle: Option<crate::domain::bundle::BundleRecord> = at_most_one(
                visible_bundle_query(scope, pending_id, self.now().as_micros()),
                conn,
            )?;
            let entries: Vec<Columns> = attempts_of_bundle_query(pending_id).load(conn)?;
            Ok((bundle.is_some(), entries))
        })?;
        let deleted_for_system =
            matches!(caller.principal(), Principal::System) && !entries.is_empty();
        if !visible && !deleted_for_system {
            return Err(Error::NotFound(Entity::Bundle));
        }
        Ok(entries.into_iter().map(|c| entry(c).attempt).collect())
    }

    /// AUD-3: every entry from `since` (inclusive) to `until` (exclusive),
    /// in (`at`, id) order, read in keyset pages and handed to `sink` one
    /// by one; returns how many. On PostgreSQL an entry committed during
    /// the export with an id below one already read may be missed (ids
    /// are taken before commit).
    pub(crate) fn export_attempts(
        &self,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        sink: &mut dyn FnMut(&LedgerEntry) -> std::io::Result<()>,
    ) -> Result<u64> {
        self.ledger.flush();
        let since = since.map_or(i64::MIN, Timestamp::as_micros);
        let until = until.map_or(i64::MAX, Timestamp::as_micros);
        let mut after = (i64::MIN, i64::MIN);
        let mut written = 0;
        loop {
            let page: Vec<(i64, Columns)> = self.read_one(|conn| {
                Ok(attempts_page_query(after, since, until, EXPORT_PAGE).load(conn)?)
            })?;
            let Some(last) = page.last().map(|(id, columns)| (columns.1, *id)) else {
                return Ok(written);
            };
            for (_, columns) in page {
                sink(&entry(columns))
                    .map_err(|error| Error::Internal(format!("export: {error}")))?;
                written += 1;
            }
            after = last;
        }
    }
}
