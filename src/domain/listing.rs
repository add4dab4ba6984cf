//! The inbox (LIST-1..10), its count (SUM-1) and which tasks are blocked
//! (PA-1). Membership is one typed predicate, [`listable`], built from the
//! activeness and visibility fragments; the page, the summary and pending
//! actions all filter by it, so they can never disagree.

use std::collections::{BTreeMap, HashMap};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use diesel::dsl::{count_star, min, sum};
use diesel::prelude::*;
use diesel::query_source::{Alias, AliasedField};

use crate::domain::bundle::{self, bundle_record_columns, BundleRecord};
use crate::domain::engine::Engine;
use crate::domain::names;
use crate::domain::quorum;
use crate::domain::views::BundleView;
use crate::domain::walk;
use crate::error::{Result, ValidationError};
use crate::rules::activeness;
use crate::rules::capability::Admitted;
use crate::rules::limits::{check_text, page_size, MAX_TASK_IDS};
use crate::rules::visibility::{self, Scope};
use crate::rules::vocabulary::BundleKind;
use crate::store::schema::{bundle_questions, bundles, tasks};
use crate::store::{among, at_most_one, AnyConnection, AsInteger, Timestamp};

/// Arguments of `list_pending` (LIST-4), all optional. The wire's strings
/// are parsed at the door ([`Cursor::parse`], RFC 3339 for the time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListRequest {
    /// Narrows to bundles whose task (AUTH-4) is in this workspace; empty
    /// means not given.
    pub workspace_id: Option<String>,
    /// Keeps bundles created at or after it.
    pub created_since: Option<Timestamp>,
    /// Returns bundles strictly after this position (an earlier page's
    /// `next_cursor`).
    pub cursor: Option<Cursor>,
    /// Default 50; below 1 means 50; above 200 is clamped to 200.
    pub limit: Option<i64>,
}

/// One page of the inbox (LIST-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPage {
    /// The bundles, oldest first (LIST-3).
    pub bundles: Vec<BundleView>,
    /// The position of the next page; `None` when no more bundles exist.
    pub next_cursor: Option<Cursor>,
}

/// SUM-1: what waits for the principal, counted set-wise with the listing's predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// The bundles paging `list_pending` to the end would collect.
    pub pending_bundles: i64,
    /// Their still-pending question rows.
    pub pending_questions: i64,
    /// Age of the oldest of them; 0 when there are none.
    pub oldest_age_seconds: i64,
}

/// What blocks a task (PA-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingAction {
    /// An active `question` bundle.
    Clarification,
    /// An active `permission` bundle (takes precedence).
    Permission,
}

impl serde::Serialize for PendingAction {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl schemars::JsonSchema for PendingAction {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PendingAction".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "enum": ["clarification", "permission"]})
    }
}

impl PendingAction {
    /// The word on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            PendingAction::Clarification => "clarification",
            PendingAction::Permission => "permission",
        }
    }

    fn of_kind(kind: &str) -> PendingAction {
        if BundleKind::from_stored(kind) == BundleKind::Permission {
            PendingAction::Permission
        } else {
            PendingAction::Clarification
        }
    }

    /// `permission` takes precedence over `clarification`.
    fn strongest(a: Option<PendingAction>, b: PendingAction) -> Option<PendingAction> {
        Some(match (a, b) {
            (Some(PendingAction::Permission), _) | (_, PendingAction::Permission) => {
                PendingAction::Permission
            }
            _ => PendingAction::Clarification,
        })
    }
}

/// What blocks one task (PA-1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct TaskPendingActions {
    /// The requested task.
    pub task_id: String,
    /// What blocks the task, if anything.
    pub task_pending_action: Option<PendingAction>,
    /// What blocks its primary session, if anything.
    pub primary_session_pending_action: Option<PendingAction>,
}

/// A position in LIST-3 order: `created_at`, then `pending_id`. Opaque on
/// the wire ([`Cursor::encode`], [`Cursor::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub(crate) created_at: i64,
    pub(crate) pending_id: String,
}

const CURSOR_VERSION: &str = "v1";

impl Cursor {
    /// A cursor at a raw position (tests build pages at known places).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn at(created_at_micros: i64, pending_id: &str) -> Cursor {
        Cursor {
            created_at: created_at_micros,
            pending_id: pending_id.to_owned(),
        }
    }

    /// The raw position (benchmarks bind it in their hand-written floor).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn position(&self) -> (i64, &str) {
        (self.created_at, &self.pending_id)
    }

    /// The wire form. Opaque and versioned: base64url of
    /// `v1:<micros>:<pending_id>`.
    pub fn encode(&self) -> String {
        encode_position(CURSOR_VERSION, self.created_at, &self.pending_id)
    }

    /// Reads a cursor from its wire form; anything else, a `list_settled`
    /// cursor included (LIST-13), is a validation error naming `cursor`
    /// (LIST-4).
    pub fn parse(text: &str) -> Result<Cursor, ValidationError> {
        let (created_at, pending_id) = parse_position(CURSOR_VERSION, text)?;
        Ok(Cursor {
            created_at,
            pending_id,
        })
    }
}

/// A listing's position on the wire: base64url of
/// `<version>:<micros>:<pending_id>`. Each listing has its own version, so
/// one listing's cursor is malformed for the other (LIST-13).
pub(crate) fn encode_position(version: &str, at: i64, pending_id: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{version}:{at}:{pending_id}"))
}

/// Reads a position of `version`; anything else is the validation error
/// naming `cursor` (LIST-4, LIST-13).
pub(crate) fn parse_position(version: &str, text: &str) -> Result<(i64, String), ValidationError> {
    let malformed = || ValidationError::new("cursor", "malformed cursor");
    let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| malformed())?;
    let text = String::from_utf8(bytes).map_err(|_| malformed())?;
    let mut parts = text.splitn(3, ':');
    let (Some(given), Some(at), Some(pending_id)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed());
    };
    if given != version {
        return Err(malformed());
    }
    let at = at.parse::<i64>().map_err(|_| malformed())?;
    if pending_id.is_empty() || pending_id.contains('\0') {
        return Err(malformed());
    }
    Ok((at, pending_id.to_owned()))
}

impl std::fmt::Display for Cursor {
    /// The wire form ([`Cursor::encode`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.encode())
    }
}

impl std::str::FromStr for Cursor {
    type Err = ValidationError;

    fn from_str(text: &str) -> Result<Cursor, ValidationError> {
        Cursor::parse(text)
    }
}

/// A [`ListRequest`] in the form the page query binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFilter {
    /// LIST-4's workspace filter; empty for none.
    pub workspace_id: String,
    /// The lower bound of `created_at`, in microseconds.
    pub created_since: i64,
    /// The page starts strictly after this position.
    pub after: Option<Cursor>,
    /// The page size, clamped.
    pub limit: i64,
    /// The handle's clock (ACT-1.5), in microseconds.
    pub now: i64,
}

impl ListFilter {
    /// LIST-4: defaults and the page clamp applied.
    pub fn from_request(request: &ListRequest, now: Timestamp) -> ListFilter {
        ListFilter {
            workspace_id: request.workspace_id.clone().unwrap_or_default(),
            created_since: request.created_since.map_or(i64::MIN, Timestamp::as_micros),
            after: request.cursor.clone(),
            limit: page_size(request.limit),
            now: now.as_micros(),
        }
    }

    /// The index range starts at the later of `created_since` and the cursor.
    fn lower_bound(&self) -> i64 {
        self.after.as_ref().map_or(self.created_since, |after| {
            after.created_at.max(self.created_since)
        })
    }
}

/// Inbox membership (LIST-1, LIST-9, AUTH-3/4/6, ACT-1): the bundle is
/// active, answerable, has a resolvable task, is visible to the scope, and
/// lies in the requested workspace (empty: any). `may_be_active` is the index
/// hint that lets the page walk a partial index; it is never true for fewer
/// bundles than ACT-1 (ACT-4).
#[diesel::dsl::auto_type]
pub fn listable<'a>(scope: &'a Scope, workspace_id: &'a str, now: i64) -> _ {
    let visible: visibility::bundle_visible<'a> = visibility::bundle_visible(scope, now);
    let active: activeness::is_active = activeness::is_active(now);
    let in_workspace: visibility::bundle_in_workspace<'a> =
        visibility::bundle_in_workspace(workspace_id);
    // Cheapest rejections first: for a scoped principal most candidates fail
    // visibility, and both engines evaluate these terms in order.
    bundles::may_be_active
        .and(visible)
        .and(in_workspace)
        .and(visibility::bundle_task_resolves())
        .and(active)
        .and(activeness::is_answerable())
}

/// LIST-2/3: one page in one query, at most `fetch` rows (`limit + 1` tell
/// whether more exist).
#[diesel::dsl::auto_type]
pub fn page_query<'a>(scope: &'a Scope, filter: &'a ListFilter, fetch: i64) -> _ {
    let member: listable<'a> = listable(scope, &filter.workspace_id, filter.now);
    let from: i64 = filter.lower_bound();
    let after_created_at: i64 = filter.after.as_ref().map_or(i64::MIN, |c| c.created_at);
    let after_pending_id: &'a str = filter.after.as_ref().map_or("", |c| c.pending_id.as_str());
    bundles::table
        .filter(bundles::created_at.ge(from))
        .filter(
            bundles::created_at
                .gt(after_created_at)
                .or(bundles::pending_id.gt(after_pending_id)),
        )
        .filter(member)
        .order_by((bundles::created_at.asc(), bundles::pending_id.asc()))
        .select(bundle_record_columns())
        .limit(fetch)
}

/// OPS-3a: one arm of a scoped page, the index range of one owner key (see
/// [`walk`]).
#[diesel::dsl::auto_type]
pub fn owner_page_query<'a>(
    scope: &'a Scope,
    filter: &'a ListFilter,
    owner_key: &'a str,
    fetch: i64,
) -> _ {
    let page: page_query<'a> = page_query(scope, filter, fetch);
    page.filter(bundles::owner_key.eq(owner_key))
}

/// PPL-5: one arm of a scoped page, the index range of one workspace key:
/// the bundles of a workspace its user belongs to.
#[diesel::dsl::auto_type]
pub fn workspace_page_query<'a>(
    scope: &'a Scope,
    filter: &'a ListFilter,
    workspace_key: &'a str,
    fetch: i64,
) -> _ {
    let page: page_query<'a> = page_query(scope, filter, fetch);
    page.filter(bundles::workspace_key.eq(workspace_key))
}

/// PPL-6: the arm of a scoped page that reads the bundles granted to its
/// user whose time has come.
#[diesel::dsl::auto_type]
pub fn granted_page_query<'a>(scope: &'a Scope, filter: &'a ListFilter, fetch: i64) -> _ {
    let page: page_query<'a> = page_query(scope, filter, fetch);
    let granted: visibility::granted_bundles<'a> =
        visibility::granted_bundles(&scope.user_id, filter.now);
    page.filter(bundles::pending_id.eq_any(granted))
}

diesel::alias!(bundle_questions as counted_rows: CountedRows);

/// SUM-1, OPS-3a: the pending questions of the bundle at hand, counted by
/// a lookup of its own rows: a correlated subquery runs once per bundle
/// the walk keeps, by the index on `pending_id`, so no plan (fresh
/// statistics or none, custom or generic) can turn it into a join over
/// every question row. Through an alias, because the membership predicate
/// itself looks at `bundle_questions`.
#[diesel::dsl::auto_type]
fn pending_questions_of_bundle() -> _ {
    let rows: Alias<CountedRows> = counted_rows;
    let status: AliasedField<CountedRows, bundle_questions::status> =
        rows.field(bundle_questions::status);
    let pending_id: AliasedField<CountedRows, bundle_questions::pending_id> =
        rows.field(bundle_questions::pending_id);
    let pending: activeness::status_is_pending<
        AliasedField<CountedRows, bundle_questions::status>,
    > = activeness::status_is_pending(status);
    let count = rows
        .filter(pending)
        .filter(pending_id.eq(bundles::pending_id))
        .select(count_star())
        .single_value();
    AsInteger(count)
}

/// SUM-1: in one walk of the listable bundles, how many there are, their
/// pending questions and the oldest creation time.
#[diesel::dsl::auto_type]
pub fn summary_query<'a>(scope: &'a Scope, now: i64) -> _ {
    let empty: &'static str = "";
    let member: listable<'a> = listable(scope, empty, now);
    let oldest: diesel::helper_types::min<bundles::created_at> = min(bundles::created_at);
    let questions: diesel::helper_types::sum<pending_questions_of_bundle> =
        sum(pending_questions_of_bundle());
    bundles::table
        .filter(member)
        .select((count_star(), oldest, questions))
}

/// SUM-1, OPS-3a: the summary of a scoped principal over its owner keys'
/// index ranges.
#[diesel::dsl::auto_type]
pub fn owner_summary_query<'a>(scope: &'a Scope, owner_keys: &'a [String], now: i64) -> _ {
    let summary: summary_query<'a> = summary_query(scope, now);
    summary.filter(bundles::owner_key.eq_any(owner_keys))
}

/// SUM-1, PPL-5: the summary over the workspace keys' ranges of the
/// workspaces a scoped principal belongs to (none of which its owner keys
/// reach: [`visibility::joined_workspaces`]).
#[diesel::dsl::auto_type]
pub fn member_summary_query<'a>(scope: &'a Scope, workspace_keys: &'a [String], now: i64) -> _ {
    let summary: summary_query<'a> = summary_query(scope, now);
    summary.filter(bundles::workspace_key.eq_any(workspace_keys))
}

/// SUM-1, PPL-6: the summary of the bundles granted to a scoped principal
/// that neither its owner keys nor its workspace keys already cover.
#[diesel::dsl::auto_type]
pub fn granted_summary_query<'a>(
    scope: &'a Scope,
    owner_keys: &'a [String],
    workspace_keys: &'a [String],
    now: i64,
) -> _ {
    let summary: summary_query<'a> = summary_query(scope, now);
    let granted: visibility::granted_bundles<'a> = visibility::granted_bundles(&scope.user_id, now);
    summary
        .filter(bundles::pending_id.eq_any(granted))
        .filter(bundles::owner_key.ne_all(owner_keys))
        .filter(bundles::workspace_key.ne_all(workspace_keys))
}

/// ACT-4's index hint as a per-row test only, never an index's way in.
/// PostgreSQL proves the partial indexes' `WHERE may_be_active` from the
/// bare column and, without statistics, ANDs a bitmap of every active
/// bundle in the database (all of `bundles_listing_order`) with the task
/// key's few (measured in the crowded world: 100k index entries read for a
/// task's 100 bundles, 4.5x the cost alone). Compared as an integer it
/// implies no index's predicate, in a custom plan or a generic one, and
/// still rejects a settled bundle before its subqueries run.
#[diesel::dsl::auto_type]
fn may_be_active_per_row() -> _ {
    let yes: i32 = 1;
    AsInteger(bundles::may_be_active).eq(yes)
}

/// PA-1: for the requested tasks, the kind of each active bundle the scope
/// sees and whether its session is the task's primary one.
#[diesel::dsl::auto_type]
pub fn pending_actions_query<'a>(scope: &'a Scope, task_ids: &'a [String], now: i64) -> _ {
    // ACT-1 and visibility: what blocks a task, answerable or not (the
    // same rule as LIFE-7's workflow guard, seen through the principal).
    let visible: visibility::bundle_visible<'a> = visibility::bundle_visible(scope, now);
    let task_id: visibility::resolved_task_id = visibility::resolved_task_id();
    let primary: visibility::session_is_primary = visibility::session_is_primary();
    let active: activeness::is_active = activeness::is_active(now);
    let hint: may_be_active_per_row = may_be_active_per_row();
    // OPS-3a, PROD-3: the task key's index finds the requested tasks'
    // bundles, and is the only index the statement gives a way in.
    bundles::table
        .filter(bundles::task_key.eq_any(task_ids))
        .filter(hint)
        .filter(visibility::bundle_task_resolves())
        .filter(visible)
        .filter(active)
        .select((task_id, bundles::kind, primary))
        .distinct()
}

/// PA-1: the requested task ids the scope may see.
#[diesel::dsl::auto_type]
pub fn visible_tasks_query<'a>(scope: &'a Scope, task_ids: &'a [String]) -> _ {
    let visible: visibility::task_visible<'a> = visibility::task_visible(scope);
    tasks::table
        .filter(tasks::id.eq_any(task_ids))
        .filter(visible)
        .select(tasks::id)
}

/// REL-6: at most [`MAX_TASK_IDS`] ids, each text clarion can bind.
fn check_task_ids(task_ids: &[String]) -> Result<(), ValidationError> {
    if task_ids.len() > MAX_TASK_IDS {
        return Err(ValidationError::new(
            "task_ids",
            format!("at most {MAX_TASK_IDS} task ids, got {}", task_ids.len()),
        ));
    }
    for (index, task_id) in task_ids.iter().enumerate() {
        check_text(format!("task_ids[{index}]"), task_id)?;
    }
    Ok(())
}

/// PPL-5: where a member's walk goes through the index ranges — the
/// positions only (the partial index's own columns, no fragment), at most
/// `fetch` of them, after `filter`'s start.
#[diesel::dsl::auto_type]
fn walk_positions<'a>(filter: &'a ListFilter, fetch: i64) -> _ {
    let from: i64 = filter.lower_bound();
    let after_created_at: i64 = filter.after.as_ref().map_or(i64::MIN, |c| c.created_at);
    let after_pending_id: &'a str = filter.after.as_ref().map_or("", |c| c.pending_id.as_str());
    bundles::table
        .filter(bundles::may_be_active)
        .filter(bundles::created_at.ge(from))
        .filter(
            bundles::created_at
                .gt(after_created_at)
                .or(bundles::pending_id.gt(after_pending_id)),
        )
        .order_by((bundles::created_at.asc(), bundles::pending_id.asc()))
        .select((bundles::created_at, bundles::pending_id))
        .limit(fetch)
}

/// PPL-5: a member's arm over one owner key's range (positions only).
#[diesel::dsl::auto_type]
pub fn owner_walk_query<'a>(filter: &'a ListFilter, owner_key: &'a str, fetch: i64) -> _ {
    let walk: walk_positions<'a> = walk_positions(filter, fetch);
    walk.filter(bundles::owner_key.eq(owner_key))
}

/// PPL-5: a member's arm over one workspace's range (positions only).
#[diesel::dsl::auto_type]
pub fn workspace_walk_query<'a>(filter: &'a ListFilter, workspace_key: &'a str, fetch: i64) -> _ {
    let walk: walk_positions<'a> = walk_positions(filter, fetch);
    walk.filter(bundles::workspace_key.eq(workspace_key))
}

/// PPL-5, PPL-6: a member's arm over its grants (positions only).
#[diesel::dsl::auto_type]
pub fn granted_walk_query<'a>(scope: &'a Scope, filter: &'a ListFilter, fetch: i64) -> _ {
    let walk: walk_positions<'a> = walk_positions(filter, fetch);
    let granted: visibility::granted_bundles<'a> =
        visibility::granted_bundles(&scope.user_id, filter.now);
    walk.filter(bundles::pending_id.eq_any(granted))
}

/// LIST-2/3, OPS-3a, PPL-5: the page's records, `limit + 1` at most.
/// `system` walks the listing index; a scoped principal merges the walks
/// of its owner keys, its workspaces and its grants ([`walk::merge`]).
fn load_page(
    conn: &mut AnyConnection,
    scope: &Scope,
    filter: &ListFilter,
) -> Result<Vec<BundleRecord>> {
    let fetch = filter.limit + 1;
    if scope.unscoped {
        return Ok(page_query(scope, filter, fetch).load(conn)?);
    }
    let arms = walk::Arms::of(conn, scope)?;
    if arms.count() > walk::OWNER_ARMS {
        return load_member_page(conn, scope, filter, &arms);
    }
    walk::merge(
        arms.count(),
        fetch as usize,
        |asked| {
            let round = arms.round(
                asked,
                |key, budget| owner_page_query(scope, filter, key, budget),
                |key, budget| workspace_page_query(scope, filter, key, budget),
                |budget| granted_page_query(scope, filter, budget),
            );
            Ok(round.load::<(i32, BundleRecord)>(conn)?)
        },
        |record| (record.created_at, record.pending_id.clone()),
    )
}

/// PPL-5: a member's page. Arms that each carried the whole membership
/// predicate made one statement of some 3 KB per arm (160 KB for fifty
/// workspaces, rendered and bound on every call); here the arms walk
/// positions only, and the page's candidates go through [`listable`] in
/// one statement. A candidate the predicate refuses (a hint not yet
/// cleared, ACT-4) makes the walk go on after the last candidate.
fn load_member_page(
    conn: &mut AnyConnection,
    scope: &Scope,
    filter: &ListFilter,
    arms: &walk::Arms,
) -> Result<Vec<BundleRecord>> {
    let fetch = filter.limit + 1;
    let mut records: Vec<BundleRecord> = Vec::new();
    let mut at = filter.clone();
    loop {
        let mut candidates: Vec<(i64, String)> = walk::merge(
            arms.count(),
            fetch as usize,
            |asked| {
                let round = arms.round(
                    asked,
                    |key, budget| owner_walk_query(&at, key, budget),
                    |key, budget| workspace_walk_query(&at, key, budget),
                    |budget| granted_walk_query(scope, &at, budget),
                );
                Ok(round.load::<(i32, (i64, String))>(conn)?)
            },
            Clone::clone,
        )?;
        candidates.truncate(fetch as usize);
        let ids: Vec<&str> = candidates.iter().map(|(_, id)| id.as_str()).collect();
        let found: Vec<BundleRecord> = page_query(scope, &at, fetch)
            .filter(among(bundles::pending_id, ids.iter().copied()))
            .load(conn)?;
        records.extend(found);
        let (Some((created_at, pending_id)), true) =
            (candidates.last(), candidates.len() as i64 == fetch)
        else {
            break;
        };
        if records.len() as i64 >= fetch {
            break;
        }
        at.after = Some(Cursor {
            created_at: *created_at,
            pending_id: pending_id.clone(),
        });
    }
    records.truncate(fetch as usize);
    Ok(records)
}

/// Groups DM-4-ordered rows by bundle.
pub(crate) fn rows_by_bundle(
    rows: Vec<bundle::QuestionRecord>,
) -> HashMap<String, Vec<bundle::QuestionRecord>> {
    let mut grouped: HashMap<String, Vec<bundle::QuestionRecord>> = HashMap::new();
    for row in rows {
        grouped.entry(row.pending_id.clone()).or_default().push(row);
    }
    grouped
}

impl Engine {
    /// LIST-1..10: the active, answerable bundles the principal may see, in
    /// `created_at`, `pending_id` order, read from the database in one query.
    pub(crate) fn list_pending(
        &self,
        caller: &Admitted<'_>,
        request: &ListRequest,
    ) -> Result<ListPage> {
        let scope = caller.scope()?;
        check_text(
            "workspace_id",
            request.workspace_id.as_deref().unwrap_or_default(),
        )?;
        // One clock for the page and its ages (ACT-1.5).
        let now = self.now();
        let filter = ListFilter::from_request(request, now);
        let (mut records, rows, names, mut quorums) = self.read(|conn| {
            let mut records = load_page(conn, scope, &filter)?;
            records.truncate(filter.limit as usize + 1);
            let page = &records[..records.len().min(filter.limit as usize)];
            let ids: Vec<String> = page.iter().map(|r| r.pending_id.clone()).collect();
            let rows = bundle::load_rows(conn, &ids)?;
            // LIST-11: one statement for the page's names.
            let names = names::load_names(conn, page.iter().filter_map(|r| r.task_id.as_deref()))?;
            // QUO-5: every listed bundle is active; none without a quorum
            // costs a statement.
            let quorums: Vec<_> = page.iter().map(|r| (r.quorum(), true)).collect();
            let quorums = quorum::shown(conn, &quorums, now.as_micros())?;
            Ok((records, rows, names, quorums))
        })?;
        let more = records.len() as i64 > filter.limit;
        records.truncate(filter.limit as usize);
        let next_cursor = match (more, records.last()) {
            (true, Some(last)) => Some(Cursor {
                created_at: last.created_at,
                pending_id: last.pending_id.clone(),
            }),
            _ => None,
        };
        let mut grouped = rows_by_bundle(rows);
        let bundles = records
            .iter()
            .map(|record| {
                let rows = grouped.remove(&record.pending_id).unwrap_or_default();
                let names = record
                    .task_id
                    .as_ref()
                    .and_then(|task_id| names.get(task_id).cloned())
                    .unwrap_or_default();
                let quorum = quorums.remove(&record.pending_id).map(|shown| shown.view);
                bundle::bundle_view(record, &rows, names, quorum, now)
            })
            .collect();
        Ok(ListPage {
            bundles,
            next_cursor,
        })
    }

    /// SUM-1: counts computed set-wise with the same membership predicate as
    /// the listing, so `pending_bundles` equals what paging would collect.
    pub(crate) fn summary(&self, caller: &Admitted<'_>) -> Result<Summary> {
        let scope = caller.scope()?;
        let now = self.now();
        let at = now.as_micros();
        let (bundles, oldest, questions) = self.read(|conn| {
            // An aggregate returns exactly one row.
            if scope.unscoped {
                let summary = at_most_one(summary_query(scope, at), conn)?;
                return Ok(summary.unwrap_or((0, None, None)));
            }
            let arms = walk::Arms::of(conn, scope)?;
            let (owners, workspaces) = (&arms.owners, &arms.workspaces);
            type Part = (i64, Option<i64>, Option<i64>);
            let mut parts: Vec<Option<Part>> =
                vec![at_most_one(owner_summary_query(scope, owners, at), conn)?];
            if !workspaces.is_empty() {
                parts.push(at_most_one(
                    member_summary_query(scope, workspaces, at),
                    conn,
                )?);
            }
            let granted = granted_summary_query(scope, owners, workspaces, at);
            parts.push(at_most_one(granted, conn)?);
            // The three ranges are disjoint: their counts add up.
            Ok(parts.into_iter().flatten().fold(
                (0, None, None),
                |(bundles, oldest, questions): Part, part: Part| {
                    (
                        bundles + part.0,
                        oldest.into_iter().chain(part.1).min(),
                        questions.into_iter().chain(part.2).reduce(|x, y| x + y),
                    )
                },
            ))
        })?;
        Ok(Summary {
            pending_bundles: bundles,
            pending_questions: questions.unwrap_or(0),
            oldest_age_seconds: oldest.map_or(0, |created| {
                Timestamp::from_micros(created).whole_seconds_until(now)
            }),
        })
    }

    /// PA-1: for each visible requested task (request order, first
    /// occurrence only), what blocks it and what blocks its primary session.
    pub(crate) fn pending_actions(
        &self,
        caller: &Admitted<'_>,
        task_ids: &[String],
    ) -> Result<Vec<TaskPendingActions>> {
        let scope = caller.scope()?;
        check_task_ids(task_ids)?;
        let (visible, pending) = self.read(|conn| {
            let visible: Vec<String> = visible_tasks_query(scope, task_ids).load(conn)?;
            let pending: Vec<(Option<String>, String, Option<bool>)> =
                pending_actions_query(scope, task_ids, self.now().as_micros()).load(conn)?;
            Ok((visible, pending))
        })?;
        let mut actions: BTreeMap<&str, (Option<PendingAction>, Option<PendingAction>)> =
            BTreeMap::new();
        for (task_id, kind, primary) in &pending {
            let Some(task_id) = task_id.as_deref() else {
                continue;
            };
            let action = PendingAction::of_kind(kind);
            let entry = actions.entry(task_id).or_default();
            entry.0 = PendingAction::strongest(entry.0, action);
            if *primary == Some(true) {
                entry.1 = PendingAction::strongest(entry.1, action);
            }
        }
        let mut seen = std::collections::HashSet::new();
        Ok(task_ids
            .iter()
            .filter(|id| visible.contains(id) && seen.insert(id.as_str()))
            .map(|id| {
                let (task, primary) = actions.get(id.as_str()).copied().unwrap_or_default();
                TaskPendingActions {
                    task_id: id.clone(),
                    task_pending_action: task,
                    primary_session_pending_action: primary,
                }
            })
            .collect())
    }
}
