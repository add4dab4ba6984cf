//! What was decided (LIST-12..14): the settled bundles a principal may
//! see, newest resolution first. Membership is one typed predicate,
//! [`settled`], built from the same visibility fragments as the inbox;
//! each element is the bundle exactly as `get_bundle` shows it to the same
//! principal ([`bundle::detail_of`]).

use diesel::backend::Backend;
use diesel::dsl::not;
use diesel::expression::{is_aggregate, ValidGrouping};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, Bool, HasSqlType, Text};

use crate::domain::bundle::{self, bundle_record_columns, BundleRecord, Standing};
use crate::domain::engine::Engine;
use crate::domain::listing::{encode_position, parse_position, rows_by_bundle};
use crate::domain::names;
use crate::domain::quorum;
use crate::domain::views::BundleDetail;
use crate::domain::walk;
use crate::error::{Result, ValidationError};
use crate::rules::activeness;
use crate::rules::capability::Admitted;
use crate::rules::limits::{check_text, page_size};
use crate::rules::visibility::{self, Scope};
use crate::store::schema::bundles;
use crate::store::{among, AnyConnection, Timestamp};

/// Arguments of `list_settled` (LIST-13), all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettledRequest {
    /// Narrows to bundles whose task (AUTH-4) is in this workspace, as
    /// LIST-4's filter does; empty means not given.
    pub workspace_id: Option<String>,
    /// Returns bundles strictly after this position (an earlier page's
    /// `next_cursor`).
    pub cursor: Option<SettledCursor>,
    /// Default 50; below 1 means 50; above 200 is clamped to 200.
    pub limit: Option<i64>,
}

/// One page of what was decided (LIST-13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledPage {
    /// The bundles, newest resolution first, each as `get_bundle` shows it.
    pub bundles: Vec<BundleDetail>,
    /// The position of the next page; `None` when no more bundles exist.
    pub next_cursor: Option<SettledCursor>,
}

/// A position in LIST-12 order: `responded_at` descending, then
/// `pending_id` descending. Opaque on the wire, and versioned apart from
/// `list_pending`'s [`Cursor`](crate::Cursor): neither listing reads the
/// other's (LIST-13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledCursor {
    pub(crate) responded_at: i64,
    pub(crate) pending_id: String,
}

const SETTLED_CURSOR_VERSION: &str = "h1";

impl SettledCursor {
    /// A cursor at a raw position (benchmarks start deep pages there).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn at(responded_at_micros: i64, pending_id: &str) -> SettledCursor {
        SettledCursor {
            responded_at: responded_at_micros,
            pending_id: pending_id.to_owned(),
        }
    }

    /// The raw position (benchmarks bind it in their hand-written floor).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn position(&self) -> (i64, &str) {
        (self.responded_at, &self.pending_id)
    }

    /// The wire form: base64url of `h1:<micros>:<pending_id>`.
    pub fn encode(&self) -> String {
        encode_position(SETTLED_CURSOR_VERSION, self.responded_at, &self.pending_id)
    }

    /// Reads a cursor from its wire form; anything else, a `list_pending`
    /// cursor included, is a validation error naming `cursor` (LIST-13).
    pub fn parse(text: &str) -> Result<SettledCursor, ValidationError> {
        let (responded_at, pending_id) = parse_position(SETTLED_CURSOR_VERSION, text)?;
        Ok(SettledCursor {
            responded_at,
            pending_id,
        })
    }
}

impl std::fmt::Display for SettledCursor {
    /// The wire form ([`SettledCursor::encode`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.encode())
    }
}

/// A [`SettledRequest`] in the form the page query binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledFilter {
    /// LIST-4's workspace filter; empty for none.
    pub workspace_id: String,
    /// The page starts strictly after this position.
    pub after: Option<SettledCursor>,
    /// The page size, clamped.
    pub limit: i64,
    /// The handle's clock, in microseconds: escalation grants count from
    /// their time (PPL-6).
    pub now: i64,
}

impl SettledFilter {
    /// LIST-13: defaults and the page clamp applied.
    pub fn from_request(request: &SettledRequest, now: Timestamp) -> SettledFilter {
        SettledFilter {
            workspace_id: request.workspace_id.clone().unwrap_or_default(),
            after: request.cursor.clone(),
            limit: page_size(request.limit),
            now: now.as_micros(),
        }
    }
}

/// History membership (LIST-12, LIST-9, AUTH-3/4/6): the bundle carries a
/// resolution — it has a resolution time (only a resolution writes one,
/// CLAIM-3; the partial indexes' own predicate, stated), a question row
/// with a resolution status and no pending row, so `get_bundle` reads its
/// status as that resolution whatever its turn — and has a resolvable
/// task, visible to the scope, in the requested workspace (empty: any).
/// Expired, superseded and due-but-unsettled bundles carry none. The clock
/// `now` only decides which escalation grants count (PPL-6): a settled
/// bundle stays settled.
#[diesel::dsl::auto_type]
pub fn settled<'a>(scope: &'a Scope, workspace_id: &'a str, now: i64) -> _ {
    let visible: visibility::bundle_visible<'a> = visibility::bundle_visible(scope, now);
    let in_workspace: visibility::bundle_in_workspace<'a> =
        visibility::bundle_in_workspace(workspace_id);
    // Cheapest rejections first, as in the inbox's predicate.
    bundles::responded_at
        .is_not_null()
        .and(visible)
        .and(in_workspace)
        .and(visibility::bundle_task_resolves())
        .and(activeness::has_resolved_question())
        .and(not(activeness::has_pending_question()))
}

/// LIST-13, LIST-14: a bundle strictly before a position in resolution
/// order, as one row-value comparison, `(responded_at, pending_id) <
/// (?, ?)`: both backends take all of it as the range of the
/// resolution-time index walked (the equivalent `responded_at <= ? AND
/// (responded_at < ? OR pending_id < ?)` bounds the walk by its first
/// part only and tests the rest on every row).
#[derive(Debug, Clone, Copy)]
pub struct ResolvedBefore<'a> {
    responded_at: i64,
    pending_id: &'a str,
}

impl<'a> ResolvedBefore<'a> {
    /// Where a page starts: after its cursor, or after the largest
    /// position there is.
    fn start_of(filter: &'a SettledFilter) -> ResolvedBefore<'a> {
        match &filter.after {
            Some(cursor) => ResolvedBefore {
                responded_at: cursor.responded_at,
                pending_id: &cursor.pending_id,
            },
            None => ResolvedBefore {
                responded_at: i64::MAX,
                pending_id: "",
            },
        }
    }
}

impl Expression for ResolvedBefore<'_> {
    type SqlType = Bool;
}

impl AppearsOnTable<bundles::table> for ResolvedBefore<'_> {}

impl SelectableExpression<bundles::table> for ResolvedBefore<'_> {}

impl ValidGrouping<()> for ResolvedBefore<'_> {
    type IsAggregate = is_aggregate::Never;
}

/// Its SQL is the same whatever it binds, so its statement is prepared once.
pub struct ResolvedBeforeId;

impl QueryId for ResolvedBefore<'_> {
    type QueryId = ResolvedBeforeId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<DB> QueryFragment<DB> for ResolvedBefore<'_>
where
    DB: Backend + HasSqlType<BigInt> + HasSqlType<Text>,
    i64: ToSql<BigInt, DB>,
    str: ToSql<Text, DB>,
    bundles::responded_at: QueryFragment<DB>,
    bundles::pending_id: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("(");
        bundles::responded_at.walk_ast(out.reborrow())?;
        out.push_sql(", ");
        bundles::pending_id.walk_ast(out.reborrow())?;
        out.push_sql(") < (");
        out.push_bind_param::<BigInt, _>(&self.responded_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(self.pending_id)?;
        out.push_sql(")");
        Ok(())
    }
}

/// LIST-12/13: one page, newest resolution first, strictly after the
/// cursor, at most `fetch` rows (`limit + 1` tell whether more exist). The
/// first page starts after the largest position there is.
#[diesel::dsl::auto_type]
pub fn settled_page_query<'a>(scope: &'a Scope, filter: &'a SettledFilter, fetch: i64) -> _ {
    let member: settled<'a> = settled(scope, &filter.workspace_id, filter.now);
    let before: ResolvedBefore<'a> = ResolvedBefore::start_of(filter);
    bundles::table
        .filter(before)
        .filter(member)
        .order_by((bundles::responded_at.desc(), bundles::pending_id.desc()))
        .select(bundle_record_columns())
        .limit(fetch)
}

/// LIST-14, OPS-3a: one arm of a scoped history page, the resolution-time
/// index range of one owner key (see [`walk`]).
#[diesel::dsl::auto_type]
pub fn owner_settled_page_query<'a>(
    scope: &'a Scope,
    filter: &'a SettledFilter,
    owner_key: &'a str,
    fetch: i64,
) -> _ {
    let page: settled_page_query<'a> = settled_page_query(scope, filter, fetch);
    page.filter(bundles::owner_key.eq(owner_key))
}

/// LIST-14, PPL-5: one arm of a scoped history page, the resolution-time
/// index range of one workspace key (a workspace its user belongs to).
#[diesel::dsl::auto_type]
pub fn workspace_settled_page_query<'a>(
    scope: &'a Scope,
    filter: &'a SettledFilter,
    workspace_key: &'a str,
    fetch: i64,
) -> _ {
    let page: settled_page_query<'a> = settled_page_query(scope, filter, fetch);
    page.filter(bundles::workspace_key.eq(workspace_key))
}

/// PPL-6: the arm of a scoped history page that reads the bundles granted
/// to its user whose time has come.
#[diesel::dsl::auto_type]
pub fn granted_settled_page_query<'a>(
    scope: &'a Scope,
    filter: &'a SettledFilter,
    fetch: i64,
) -> _ {
    let page: settled_page_query<'a> = settled_page_query(scope, filter, fetch);
    let granted: visibility::granted_bundles<'a> =
        visibility::granted_bundles(&scope.user_id, filter.now);
    page.filter(bundles::pending_id.eq_any(granted))
}

/// PPL-5: where a member's history walk goes through the index ranges —
/// the positions only, newest first, at most `fetch` of them.
#[diesel::dsl::auto_type]
fn settled_walk_positions<'a>(filter: &'a SettledFilter, fetch: i64) -> _ {
    let before: ResolvedBefore<'a> = ResolvedBefore::start_of(filter);
    bundles::table
        .filter(bundles::responded_at.is_not_null())
        .filter(before)
        .order_by((bundles::responded_at.desc(), bundles::pending_id.desc()))
        .select((bundles::responded_at, bundles::pending_id))
        .limit(fetch)
}

/// PPL-5: a member's history arm over one owner key's range.
#[diesel::dsl::auto_type]
pub fn owner_settled_walk_query<'a>(
    filter: &'a SettledFilter,
    owner_key: &'a str,
    fetch: i64,
) -> _ {
    let walk: settled_walk_positions<'a> = settled_walk_positions(filter, fetch);
    walk.filter(bundles::owner_key.eq(owner_key))
}

/// PPL-5: a member's history arm over one workspace's range.
#[diesel::dsl::auto_type]
pub fn workspace_settled_walk_query<'a>(
    filter: &'a SettledFilter,
    workspace_key: &'a str,
    fetch: i64,
) -> _ {
    let walk: settled_walk_positions<'a> = settled_walk_positions(filter, fetch);
    walk.filter(bundles::workspace_key.eq(workspace_key))
}

/// PPL-5, PPL-6: a member's history arm over its grants.
#[diesel::dsl::auto_type]
pub fn granted_settled_walk_query<'a>(
    scope: &'a Scope,
    filter: &'a SettledFilter,
    fetch: i64,
) -> _ {
    let walk: settled_walk_positions<'a> = settled_walk_positions(filter, fetch);
    let granted: visibility::granted_bundles<'a> =
        visibility::granted_bundles(&scope.user_id, filter.now);
    walk.filter(bundles::pending_id.eq_any(granted))
}

/// LIST-14, PPL-5: the page's records, `limit + 1` at most: `system` walks
/// one range, a scoped principal merges the walks of its owner keys, its
/// workspaces and its grants ([`walk::merge`]), newest first.
fn load_settled_page(
    conn: &mut AnyConnection,
    scope: &Scope,
    filter: &SettledFilter,
) -> Result<Vec<BundleRecord>> {
    let fetch = filter.limit + 1;
    if scope.unscoped {
        return Ok(settled_page_query(scope, filter, fetch).load(conn)?);
    }
    let arms = walk::Arms::of(conn, scope)?;
    if arms.count() > walk::OWNER_ARMS {
        return load_member_settled_page(conn, scope, filter, &arms);
    }
    walk::merge(
        arms.count(),
        fetch as usize,
        |asked| {
            let round = arms.round(
                asked,
                |key, budget| owner_settled_page_query(scope, filter, key, budget),
                |key, budget| workspace_settled_page_query(scope, filter, key, budget),
                |budget| granted_settled_page_query(scope, filter, budget),
            );
            Ok(round.load::<(i32, BundleRecord)>(conn)?)
        },
        |record| std::cmp::Reverse((record.responded_at, record.pending_id.clone())),
    )
}

/// PPL-5: a member's history page, as `listing`'s member page: the arms
/// walk positions only, and the candidates go through [`settled`] in one
/// statement; a refused candidate makes the walk go on after the last one.
fn load_member_settled_page(
    conn: &mut AnyConnection,
    scope: &Scope,
    filter: &SettledFilter,
    arms: &walk::Arms,
) -> Result<Vec<BundleRecord>> {
    let fetch = filter.limit + 1;
    let mut records: Vec<BundleRecord> = Vec::new();
    let mut at = filter.clone();
    loop {
        let mut candidates: Vec<(Option<i64>, String)> = walk::merge(
            arms.count(),
            fetch as usize,
            |asked| {
                let round = arms.round(
                    asked,
                    |key, budget| owner_settled_walk_query(&at, key, budget),
                    |key, budget| workspace_settled_walk_query(&at, key, budget),
                    |budget| granted_settled_walk_query(scope, &at, budget),
                );
                Ok(round.load::<(i32, (Option<i64>, String))>(conn)?)
            },
            |position| std::cmp::Reverse(position.clone()),
        )?;
        candidates.truncate(fetch as usize);
        let ids: Vec<&str> = candidates.iter().map(|(_, id)| id.as_str()).collect();
        let found: Vec<BundleRecord> = settled_page_query(scope, &at, fetch)
            .filter(among(bundles::pending_id, ids.iter().copied()))
            .load(conn)?;
        records.extend(found);
        let (Some((Some(responded_at), pending_id)), true) =
            (candidates.last(), candidates.len() as i64 == fetch)
        else {
            break;
        };
        if records.len() as i64 >= fetch {
            break;
        }
        at.after = Some(SettledCursor {
            responded_at: *responded_at,
            pending_id: pending_id.clone(),
        });
    }
    records.truncate(fetch as usize);
    Ok(records)
}

/// Where a settled bundle stands: [`settled`] admits only bundles without
/// a pending row, which are neither active nor due (ACT-1.1), so their
/// status is their resolution whatever their turn (WIRE-3).
const SETTLED: Standing = Standing {
    is_active: Some(false),
    is_due: Some(false),
    in_current_turn: None,
    agent_disconnected: false,
};

impl Engine {
    /// LIST-12..14: the settled bundles the principal may see, newest
    /// resolution first, each byte for byte its `get_bundle` body; read in
    /// three statements whatever the page's size (the page, its rows, its
    /// names).
    pub(crate) fn list_settled(
        &self,
        caller: &Admitted<'_>,
        request: &SettledRequest,
    ) -> Result<SettledPage> {
        let scope = caller.scope()?;
        check_text(
            "workspace_id",
            request.workspace_id.as_deref().unwrap_or_default(),
        )?;
        let now = self.now();
        let filter = SettledFilter::from_request(request, now);
        let page = filter.limit as usize;
        let (mut records, rows, names, mut quorums) = self.read(|conn| {
            let records = load_settled_page(conn, scope, &filter)?;
            let shown = &records[..records.len().min(page)];
            let ids: Vec<String> = shown.iter().map(|r| r.pending_id.clone()).collect();
            let rows = bundle::load_rows(conn, &ids)?;
            let names = names::load_names(conn, shown.iter().filter_map(|r| r.task_id.as_deref()))?;
            // QUO-5: settled bundles count no vote but their voters.
            let quorums: Vec<_> = shown.iter().map(|r| (r.quorum(), false)).collect();
            let quorums = quorum::shown(conn, &quorums, now.as_micros())?;
            Ok((records, rows, names, quorums))
        })?;
        let more = records.len() > page;
        records.truncate(page);
        let next_cursor = match (more, records.last()) {
            (true, Some(last)) => last.responded_at.map(|responded_at| SettledCursor {
                responded_at,
                pending_id: last.pending_id.clone(),
            }),
            _ => None,
        };
        let mut grouped = rows_by_bundle(rows);
        let bundles = records
            .into_iter()
            .map(|record| {
                let rows = grouped.remove(&record.pending_id).unwrap_or_default();
                let names = record
                    .task_id
                    .as_ref()
                    .and_then(|task_id| names.get(task_id).cloned())
                    .unwrap_or_default();
                let quorum = quorums.remove(&record.pending_id);
                bundle::detail_of(
                    record,
                    SETTLED,
                    rows,
                    names,
                    quorum,
                    now,
                    caller.principal(),
                )
            })
            .collect();
        Ok(SettledPage {
            bundles,
            next_cursor,
        })
    }
}
