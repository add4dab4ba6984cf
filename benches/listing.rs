//! OPS-2/3 listing benchmark (a program, not a timed test):
//!
//!     cargo bench --bench listing                      # SQLite
//!     cargo bench --bench listing --features postgres  # SQLite and PostgreSQL
//!
//! Builds worlds of 10k and 1M bundles holding the same inbox of 2,000
//! active bundles (the rest half answered, half superseded), then times
//! `list_pending` pages of 50: the first page and a deep page (cursor 90% of
//! the way through), for an unscoped (`system`) and a scoped (`user3`, owner
//! of a tenth of the workspaces) principal.
//!
//! Beside each figure is the floor: one hand-written SQL statement returning
//! the same page — the same 51 bundle rows (one more than the page, as
//! clarion fetches) with their question rows and their names (LIST-11: the
//! task's title, its workspace's id and name) — through the same partial
//! indexes, on one raw connection. The page ids and names are checked to be
//! the same. Clarion and the floor run alternately; each run's ratio is
//! printed, and each figure is the median of the runs.
//!
//! In the same worlds (nothing is generated twice), `list_settled` pages of
//! 50 (LIST-14): the newest resolutions first and a deep page (cursor 90% of
//! the way through the history, newest first), for `system` and `user3`,
//! each beside its floor — the same history membership (resolved, visible,
//! task resolvable, a resolved row and no pending row) walking the
//! `bundles_settled` index backwards, or for `user3` each of its owner keys'
//! ranges of `bundles_settled_by_owner` merged, with the page's question
//! rows and names.
//!
//! Then the crowded-tenant worlds (OPS-3a): `user0` owns one workspace with
//! 100 active bundles, alone in the database, and again among 999 other
//! workspaces of 100 active bundles each (100k active), owned by other users
//! ("crowded") or by nobody, so that `user0` sees them all ("crowded,
//! public"). These are built through the library (asks, not generated
//! rows), with no `ANALYZE` after the tables were empty and autovacuum off
//! on PostgreSQL: the plans must hold without statistics. Its first and
//! second pages, summary and pending actions are timed in all three worlds
//! alternately, with per-run ratios to "alone".
//!
//! PPL-5, members: in each generated world `member` (owning nothing)
//! belongs to 50 workspaces spread over the positions; its pending and
//! history pages (first and deep) are timed alternately with `user3`'s
//! (one owner key), and at 1M against 10k. In the crowded world `member`
//! belongs to `w1`…`w50` (5,000 active bundles) and is timed against
//! `user0` alone, then against `owner50`, given `w51`…`w100` (the same
//! inbox through one key). And one generated workspace of 10,000 active
//! and 990,000 settled bundles has its members replaced, ten at a time,
//! while another thread pages its owner's inbox.
//!
//! Before anything is measured, every generated world is checked: each
//! bundle's `may_be_active` hint and visibility keys must equal what the
//! library's own rules derive (`test_hooks::drift`).
//!
//! Environment: CLARION_BENCH_SIZES (default "10000,1000000"; "0" skips),
//! CLARION_BENCH_RUNS (default 21), CLARION_BENCH_CROWDED (default 1; 0
//! skips), CLARION_BENCH_SETTLED (default 1; 0 skips the `list_settled`
//! pages), CLARION_BENCH_BACKEND, CLARION_TEST_DATABASE_URL,
//! CLARION_BENCH_POOLED (1: pooler mode, PROD-1), CLARION_BENCH_SET_MEMBERS
//! (default 1; 0 skips the one-workspace world of 1M bundles).

mod common;

use std::time::{Duration, Instant};

use clarion::test_hooks::AnyConnection;
use clarion::test_hooks::{drift, populate, WorldSpec};
use clarion::{
    Backend, BundleView, Clarion, Cursor, ListPage, ListRequest, Principal, SessionUpsert,
    SettledCursor, SettledPage, SettledRequest, TaskUpsert, WorkspaceUpsert,
};
use common::{median, ms, Raw};
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::RunQueryDsl;

/// The bundle columns every floor reads: what clarion reads of a bundle row
/// (its `BundleRecord`). Every floor requires a resolvable task
/// (`owner_key` not NULL), so the task key is the bundle's task as clarion
/// shows it.
const BUNDLE_COLUMNS: &str = "b.pending_id, b.session_id, b.kind, b.context, b.created_at,
           b.reject_reason, b.responded_at, b.task_key AS task_id, b.resolved_by_kind,
           b.resolved_by_id, b.expires_at, b.on_expire, b.default_response";

/// The question rows and names beside each page row, as every floor selects
/// them.
const ROW_COLUMNS: &str = "{names_columns},
       q.id AS row_id, q.question_id, q.question_index, q.payload, q.status,
       q.response, q.created_at AS row_created_at";

/// The floor: LIST-1's membership written by hand for one principal —
/// each check once, as a per-row test while walking a partial index in page
/// order (`bundles_listing_order`, or for a scoped principal
/// `bundles_by_owner` over its two owner keys, OPS-3a) — then the page's
/// names (LIST-11) and question rows joined in DM-4 order. `{fence}` is
/// `OFFSET 0` on PostgreSQL, which keeps the tests per-row instead of
/// flattening them into joins that sort every candidate; `{names}` and
/// `{rows}` fetch each page row's names and question rows by index (lateral
/// subqueries on PostgreSQL, whose planner otherwise expects one page row
/// and may scan a whole table for it); `{visible}` holds the scoped
/// principal's AUTH-3 rule.
const FLOOR_PAGE: &str = "
SELECT page.*, {row_columns}
FROM (
    SELECT {bundle_columns}
    FROM bundles b
    WHERE b.may_be_active
      AND (b.expires_at IS NULL OR b.expires_at > ?)
      AND b.created_at >= ? AND (b.created_at > ? OR b.pending_id > ?)
      AND b.owner_key IS NOT NULL {visible}
      AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = b.session_id
                  AND s.state NOT IN ('completed', 'failed', 'cancelled') {fence})
      AND b.turn_id = (SELECT u.id FROM turns u WHERE u.session_id = b.session_id
                       ORDER BY u.started_at DESC, u.seq DESC, u.id DESC LIMIT 1)
      AND EXISTS (SELECT 1 FROM bundle_questions q WHERE q.pending_id = b.pending_id
                  AND (q.status IS NULL OR q.status IN ('', 'pending')) {fence})
      AND NOT EXISTS (SELECT 1 FROM bundle_questions q WHERE q.pending_id = b.pending_id
                      AND (q.session_id <> b.session_id OR q.turn_id <> b.turn_id
                           OR q.question_id = '') {fence})
    ORDER BY b.created_at, b.pending_id
    LIMIT 51
) page
{names}
{rows}
ORDER BY page.created_at, page.pending_id, q.question_index, q.created_at, q.id";

/// The history floor (LIST-12): one walk down the resolution-time index —
/// `bundles_settled` for `system`, `bundles_settled_by_owner` once per owner
/// key for a scoped principal ([`FLOOR_SETTLED_WALK`]) — then the page's
/// names and question rows, newest resolution first, rows in DM-4 order.
const FLOOR_SETTLED: &str = "
SELECT page.*, {row_columns}
FROM ({walk}) page
{names}
{rows}
ORDER BY page.responded_at DESC, page.pending_id DESC, q.question_index, q.created_at, q.id";

/// One walk of the history floor: LIST-12's membership, each check once
/// per candidate — resolved (the partial indexes' own predicate), before
/// the cursor, visible (`{visible}`: a resolvable task for `system`, the
/// owner key for a scoped principal), a row with a resolution and none
/// pending — newest first, cut at 51. The cursor is one row-value
/// comparison, which both backends take as the index range itself and
/// PostgreSQL estimates as one range (measured on the 1M world with the
/// values written in: the equivalent `<= AND (< OR <)` made it read the
/// owner's whole range past the deep cursor by bitmap and sort it, 29 ms,
/// where the row value walks 51 rows in order, 1.1 ms). Binds: the
/// cursor's time and id, and for a scoped walk the owner key.
const FLOOR_SETTLED_WALK: &str = "
    SELECT {bundle_columns}
    FROM bundles b
    WHERE b.responded_at IS NOT NULL
      AND (b.responded_at, b.pending_id) < (?, ?)
      {visible}
      AND EXISTS (SELECT 1 FROM bundle_questions q WHERE q.pending_id = b.pending_id
                  AND q.status IN ('answered', 'rejected', 'cancelled') {fence})
      AND NOT EXISTS (SELECT 1 FROM bundle_questions q WHERE q.pending_id = b.pending_id
                      AND (q.status IS NULL OR q.status IN ('', 'pending')) {fence})
    ORDER BY b.responded_at DESC, b.pending_id DESC
    LIMIT 51";

/// Fills in a floor's per-backend fragments.
fn per_backend(backend: Backend, sql: &str) -> String {
    let (fence, names_columns, names, rows) = if backend == Backend::Sqlite {
        (
            "",
            "t.title AS task_title, t.workspace_id AS workspace_id, w.name AS workspace_name",
            "LEFT JOIN tasks t ON t.id = page.task_id
             LEFT JOIN workspaces w ON w.id = t.workspace_id",
            "JOIN bundle_questions q ON q.pending_id = page.pending_id",
        )
    } else {
        (
            "OFFSET 0",
            "n.task_title, n.workspace_id, n.workspace_name",
            "LEFT JOIN LATERAL (SELECT t.title AS task_title, t.workspace_id,
                                      w.name AS workspace_name
                               FROM tasks t LEFT JOIN workspaces w ON w.id = t.workspace_id
                               WHERE t.id = page.task_id OFFSET 0) n ON TRUE",
            "CROSS JOIN LATERAL (SELECT * FROM bundle_questions q
                WHERE q.pending_id = page.pending_id OFFSET 0) q",
        )
    };
    sql.replace("{row_columns}", ROW_COLUMNS)
        .replace("{names_columns}", names_columns)
        .replace("{bundle_columns}", BUNDLE_COLUMNS)
        .replace("{names}", names)
        .replace("{rows}", rows)
        .replace("{fence}", fence)
}

fn floor_sql(backend: Backend, scoped: bool) -> String {
    // AUTH-3 through the stored keys (OPS-3a).
    let visible = if scoped {
        "AND b.owner_key IN ('', ?)"
    } else {
        ""
    };
    per_backend(backend, &FLOOR_PAGE.replace("{visible}", visible))
}

/// The history floor's statement: for a scoped principal the merge of one
/// ordered walk per owner key (`''` and the user's, AUTH-3) — each walk
/// reads at most 51 rows in index order, where `owner_key IN ('', ?)` would
/// read the whole of both ranges and sort them.
fn settled_floor_sql(backend: Backend, scoped: bool) -> String {
    let walk = if scoped {
        let one = FLOOR_SETTLED_WALK.replace("{visible}", "AND b.owner_key = ?");
        format!(
            "SELECT * FROM (SELECT * FROM ({one}) AS everyone
                            UNION ALL SELECT * FROM ({one}) AS own) AS merged
             ORDER BY merged.responded_at DESC, merged.pending_id DESC
             LIMIT 51"
        )
    } else {
        FLOOR_SETTLED_WALK.replace("{visible}", "AND b.owner_key IS NOT NULL")
    };
    per_backend(backend, &FLOOR_SETTLED.replace("{walk}", &walk))
}

/// One row of a floor's page: a bundle row with its names beside one of its
/// question rows.
#[derive(diesel::QueryableByName)]
#[allow(dead_code)]
struct FloorRow {
    #[diesel(sql_type = Text)]
    pending_id: String,
    #[diesel(sql_type = Text)]
    session_id: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    context: String,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = Text)]
    reject_reason: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    responded_at: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    task_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resolved_by_kind: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resolved_by_id: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    expires_at: Option<i64>,
    #[diesel(sql_type = Text)]
    on_expire: String,
    #[diesel(sql_type = Nullable<Text>)]
    default_response: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    task_title: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    workspace_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    workspace_name: Option<String>,
    #[diesel(sql_type = BigInt)]
    row_id: i64,
    #[diesel(sql_type = Text)]
    question_id: String,
    #[diesel(sql_type = Nullable<Integer>)]
    question_index: Option<i32>,
    #[diesel(sql_type = Text)]
    payload: String,
    #[diesel(sql_type = Nullable<Text>)]
    status: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    response: Option<String>,
    #[diesel(sql_type = BigInt)]
    row_created_at: i64,
}

/// What the programs compare of a page: each bundle's id and names, in page
/// order.
type Shown = (String, String, String, String);

/// The first 50 bundles of a floor's page, as [`Shown`] (a missing task or
/// workspace shows `""`, as clarion shows it).
fn floor_shown(rows: &[FloorRow]) -> Vec<Shown> {
    let mut shown: Vec<Shown> = rows
        .iter()
        .map(|r| {
            (
                r.pending_id.clone(),
                r.task_title.clone().unwrap_or_default(),
                r.workspace_id.clone().unwrap_or_default(),
                r.workspace_name.clone().unwrap_or_default(),
            )
        })
        .collect();
    shown.dedup();
    shown.truncate(50);
    shown
}

fn floor_page(
    conn: &mut AnyConnection,
    sql: &str,
    user: Option<&str>,
    after: &Option<Cursor>,
) -> Vec<FloorRow> {
    let (at, id) = after.as_ref().map_or((i64::MIN, ""), Cursor::position);
    let now = clarion::Clock::now(&clarion::SystemClock).as_micros();
    let mut query = Raw::new(sql).int(now).int(at).int(at).text(id);
    if let Some(user) = user {
        query = query.text(user);
    }
    query.load(conn).expect("floor page")
}

/// The history floor's page: each walk binds the cursor (the first page
/// starts after the largest position there is, as clarion's does) and, for
/// a scoped principal, its owner key: `''`, then the user's.
fn settled_floor_page(
    conn: &mut AnyConnection,
    sql: &str,
    user: Option<&str>,
    after: &Option<SettledCursor>,
) -> Vec<FloorRow> {
    let (at, id) = after
        .as_ref()
        .map_or((i64::MAX, ""), SettledCursor::position);
    let mut query = Raw::new(sql);
    match user {
        None => query = query.int(at).text(id),
        Some(user) => {
            for key in ["", user] {
                query = query.int(at).text(id).text(key);
            }
        }
    }
    query.load(conn).expect("settled floor page")
}

/// Runs each closure once per round, in turn, after two rounds of warm-up;
/// returns each closure's durations in round order.
fn alternate<const N: usize>(runs: usize, mut work: [&mut dyn FnMut(); N]) -> [Vec<Duration>; N] {
    for _ in 0..2 {
        for w in work.iter_mut() {
            w();
        }
    }
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(runs));
    for _ in 0..runs {
        for (w, t) in work.iter_mut().zip(times.iter_mut()) {
            let start = Instant::now();
            w();
            t.push(start.elapsed());
        }
    }
    times
}

/// Per-run ratios `a[i] / b[i]`.
fn ratios(a: &[Duration], b: &[Duration]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect()
}

fn median_ratio(mut ratios: Vec<f64>) -> f64 {
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn show_ratios(ratios: &[f64]) -> String {
    ratios
        .iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Times `list` (clarion) and `floor` alternately on one raw connection;
/// first checks that both return the same bundles with the same names.
fn time_against_floor<T>(
    clarion: &Clarion,
    list: impl Fn() -> T,
    shown: impl Fn(&T) -> Vec<Shown>,
    floor: impl Fn(&mut AnyConnection) -> Vec<FloorRow>,
    runs: usize,
) -> Row {
    let page = shown(&list());
    let [ours, floor] = clarion
        .with_raw_connection(|conn| {
            assert_eq!(
                floor_shown(&floor(conn)),
                page,
                "the floor returns a different page"
            );
            alternate(
                runs,
                [
                    &mut || {
                        std::hint::black_box(list());
                    },
                    &mut || {
                        std::hint::black_box(floor(conn));
                    },
                ],
            )
        })
        .expect("raw connection");
    Row {
        size: 0,
        who: "",
        page: "",
        ratios: ratios(&ours, &floor),
        ours: median(ours),
        floor: median(floor),
        returned: page.len(),
    }
}

fn user_of(principal: &Principal) -> Option<&str> {
    match principal {
        Principal::User { user_id } => Some(user_id.as_str()),
        _ => None,
    }
}

/// Times a `list_pending` page through clarion and through the floor,
/// alternately; checks both return the same bundles.
fn time_page(clarion: &Clarion, principal: &Principal, after: Option<Cursor>, runs: usize) -> Row {
    let request = ListRequest {
        cursor: after.clone(),
        ..ListRequest::default()
    };
    let user = user_of(principal);
    let sql = floor_sql(clarion.backend(), user.is_some());
    time_against_floor(
        clarion,
        || clarion.list_pending(principal, &request).expect("list"),
        |page: &ListPage| page.bundles.iter().map(shown).collect(),
        |conn| floor_page(conn, &sql, user, &after),
        runs,
    )
}

/// Times a `list_settled` page through clarion and through the history
/// floor, alternately; checks both return the same bundles.
fn time_settled_page(
    clarion: &Clarion,
    principal: &Principal,
    after: Option<SettledCursor>,
    runs: usize,
) -> Row {
    let request = SettledRequest {
        cursor: after.clone(),
        ..SettledRequest::default()
    };
    let user = user_of(principal);
    let sql = settled_floor_sql(clarion.backend(), user.is_some());
    time_against_floor(
        clarion,
        || clarion.list_settled(principal, &request).expect("history"),
        |page: &SettledPage| page.bundles.iter().map(|b| shown(&b.bundle)).collect(),
        |conn| settled_floor_page(conn, &sql, user, &after),
        runs,
    )
}

/// Times `ours` and `theirs` alternately (each returns its page's length);
/// the row's `floor` is `theirs`.
fn time_beside(ours: impl Fn() -> usize, theirs: impl Fn() -> usize, runs: usize) -> Row {
    let returned = ours();
    let [a, b] = alternate(
        runs,
        [
            &mut || {
                std::hint::black_box(ours());
            },
            &mut || {
                std::hint::black_box(theirs());
            },
        ],
    );
    Row {
        size: 0,
        who: "",
        page: "",
        ratios: ratios(&a, &b),
        ours: median(a),
        floor: median(b),
        returned,
    }
}

/// PPL-5 in a generated world: `member` (owning nothing) joins 50 of the
/// workspaces that hold bundles, spread evenly over the positions, so its
/// walk has 50 ranges across the whole index.
fn member_of_spread(clarion: &Clarion, spec: &WorldSpec) -> Principal {
    let holding = spec.sessions.min(spec.bundles.div_ceil(spec.active_every));
    let stride = (holding / MEMBER_OF).max(1);
    for j in 0..MEMBER_OF {
        let workspace = format!("w{}", (j * stride) % spec.sessions);
        clarion
            .set_members(&workspace, &["member".to_owned()])
            .expect("members");
    }
    Principal::user("member")
}

fn shown(bundle: &BundleView) -> Shown {
    (
        bundle.pending_id.clone(),
        bundle.task_title.clone(),
        bundle.workspace_id.clone(),
        bundle.workspace_name.clone(),
    )
}

struct Row {
    size: u64,
    who: &'static str,
    page: &'static str,
    ours: Duration,
    floor: Duration,
    ratios: Vec<f64>,
    returned: usize,
}

/// ACT-4, OPS-3a: a generated world must hold exactly the derived columns
/// the library itself would write, or the figures measure another world.
fn check_world(name: &str, clarion: &Clarion) {
    let drift = common::with_spinner(
        &format!("{name}: checking generated hints and keys"),
        || drift(clarion).expect("drift"),
    );
    assert!(
        drift.is_empty(),
        "{name}: {} generated bundles disagree with the library's rules, e.g. {:?}",
        drift.len(),
        drift.first()
    );
}

fn bench_backend(name: &str, place_for: common::Place, sizes: &[u64], runs: usize, settled: bool) {
    let mut pending_rows: Vec<Row> = Vec::new();
    let mut settled_rows: Vec<Row> = Vec::new();
    let mut member_rows: Vec<Row> = Vec::new();
    let mut member_settled_rows: Vec<Row> = Vec::new();
    for &size in sizes {
        let place = place_for(&format!("listing_{size}"));
        let clarion = Clarion::open(&place.url).expect("open");
        // EXP-2: half the inbox has a deadline ahead, checked on every page.
        let spec = WorldSpec {
            deadlines: true,
            ..WorldSpec::new(size, 2_000)
        };
        common::with_spinner(
            &format!(
                "{name}: generating {size} bundles ({} active)",
                spec.active_bundles()
            ),
            || populate(&clarion, &spec).expect("populate"),
        );
        check_world(name, &clarion);
        let deep_index = (size * 9 / 10) / spec.active_every * spec.active_every;
        let deep = Cursor::at(
            spec.base_micros + deep_index as i64 * 1000,
            &format!("b{deep_index}"),
        );
        // LIST-12 order is newest resolution first, and bundle `i` is
        // answered at `created_at + 500`: 90% of the way through is about
        // bundle `size / 10` (a position, whether or not that bundle is
        // answered).
        let settled_index = size / 10;
        let settled_deep = SettledCursor::at(
            spec.base_micros + settled_index as i64 * 1000 + 500,
            &format!("b{settled_index}"),
        );
        let principals = [
            ("unscoped", Principal::System),
            ("scoped", Principal::user("user3")),
        ];
        for (who, principal) in &principals {
            for (page, after) in [("first", None), ("deep", Some(deep.clone()))] {
                eprintln!("{name}: timing {size} bundles, {who} {page} page");
                pending_rows.push(Row {
                    size,
                    who,
                    page,
                    ..time_page(&clarion, principal, after, runs)
                });
            }
        }
        let member = member_of_spread(&clarion, &spec);
        let owner = &principals[1].1;
        for (page, after) in [("first", None), ("deep", Some(deep.clone()))] {
            eprintln!("{name}: timing {size} bundles, member {page} page");
            let request = ListRequest {
                cursor: after,
                ..ListRequest::default()
            };
            let list = |p: &Principal| {
                clarion
                    .list_pending(p, &request)
                    .expect("list")
                    .bundles
                    .len()
            };
            member_rows.push(Row {
                size,
                who: "member",
                page,
                ..time_beside(|| list(&member), || list(owner), runs)
            });
        }
        if !settled {
            continue;
        }
        for (who, principal) in &principals {
            for (page, after) in [("first", None), ("deep", Some(settled_deep.clone()))] {
                eprintln!("{name}: timing {size} bundles, {who} {page} history page");
                settled_rows.push(Row {
                    size,
                    who,
                    page,
                    ..time_settled_page(&clarion, principal, after, runs)
                });
            }
        }
        for (page, after) in [("first", None), ("deep", Some(settled_deep.clone()))] {
            eprintln!("{name}: timing {size} bundles, member {page} history page");
            let request = SettledRequest {
                cursor: after,
                ..SettledRequest::default()
            };
            let list = |p: &Principal| {
                let page = clarion.list_settled(p, &request).expect("history");
                page.bundles.len()
            };
            member_settled_rows.push(Row {
                size,
                who: "member",
                page,
                ..time_beside(|| list(&member), || list(owner), runs)
            });
        }
    }
    let floor = "floor";
    print_pages(
        name,
        "list_pending",
        ("OPS-3", floor),
        &pending_rows,
        sizes,
        runs,
    );
    if settled {
        print_pages(
            name,
            "list_settled",
            ("LIST-14", floor),
            &settled_rows,
            sizes,
            runs,
        );
    }
    let owner = "user3";
    let goal = ("PPL-5, OPS-3", owner);
    let operation = "list_pending, member of 50 workspaces";
    print_pages(name, operation, goal, &member_rows, sizes, runs);
    if settled {
        let operation = "list_settled, member of 50 workspaces";
        print_pages(name, operation, goal, &member_settled_rows, sizes, runs);
    }
}

/// One table of pages beside their floors, then each page at the largest
/// size against the same page at the smallest (the O(limit) goal `goal`).
/// `against` names what the second column times (the floor, or another
/// principal's same page).
fn print_pages(
    name: &str,
    operation: &str,
    (goal, against): (&str, &str),
    rows: &[Row],
    sizes: &[u64],
    runs: usize,
) {
    println!("\n{name}: {operation}, limit 50, clarion and {against} alternately, {runs} runs");
    println!("(ratio: clarion time / {against} time; figures are medians)");
    println!(
        "{:>9}  {:<9} {:<6} {:>10} {:>10} {:>7} {:>8}  per-run ratios",
        "bundles", "principal", "page", "clarion", against, "ratio", "returned"
    );
    for r in rows {
        println!(
            "{:>9}  {:<9} {:<6} {:>8.3}ms {:>8.3}ms {:>6.2}x {:>8}  {}",
            r.size,
            r.who,
            r.page,
            ms(r.ours),
            ms(r.floor),
            median_ratio(r.ratios.clone()),
            r.returned,
            show_ratios(&r.ratios)
        );
    }
    let (Some(&small), Some(&large)) = (sizes.first(), sizes.last()) else {
        return;
    };
    if small == large {
        return;
    }
    println!("{operation}: page at {large} / page at {small} bundles ({goal}):");
    for r in rows.iter().filter(|r| r.size == large) {
        if let Some(s) = rows
            .iter()
            .find(|s| s.size == small && s.who == r.who && s.page == r.page)
        {
            println!(
                "  {:<9} {:<6} clarion {:.2}x   {against} {:.2}x",
                r.who,
                r.page,
                r.ours.as_secs_f64() / s.ours.as_secs_f64(),
                r.floor.as_secs_f64() / s.floor.as_secs_f64()
            );
        }
    }
}

/// Bundles each tenant of the crowded-tenant worlds holds.
const TENANT_BUNDLES: usize = 100;

/// One world of the crowded-tenant benchmark, opened and checked.
struct TenantWorld {
    label: &'static str,
    clarion: Clarion,
    _place: common::Scratch,
}

/// The crowded-tenant worlds (OPS-3a), built through the library as users
/// build them, with no `ANALYZE` since the tables were empty and, on
/// PostgreSQL, autovacuum off (the planner sees no statistics of the
/// grown tables): `user0`'s workspace `w0` holds 100 active bundles of one
/// question; `tenants - 1` other workspaces hold as many each, owned by
/// their own users, or by nobody where `public`.
fn open_tenant_world(
    name: &str,
    place_for: common::Place,
    label: &'static str,
    tenants: u64,
    public: bool,
) -> TenantWorld {
    let place = place_for(&format!("tenants_{}", label.replace([' ', ','], "_")));
    let clarion = Clarion::open(&place.url).expect("open");
    without_statistics(&clarion);
    let mut progress = common::Progress::new(format!("{name}: asking \"{label}\""), tenants);
    for w in 0..tenants {
        let owner = if public && w > 0 {
            String::new()
        } else {
            format!("user{w}")
        };
        clarion
            .upsert_workspace(WorkspaceUpsert::new(&format!("w{w}")).owner(&owner))
            .expect("workspace");
        clarion
            .upsert_task(TaskUpsert::new(&format!("t{w}")).workspace(&format!("w{w}")))
            .expect("task");
        let session = format!("s{w}");
        clarion
            .upsert_session(SessionUpsert::new(&session, &format!("t{w}")).primary(true))
            .expect("session");
        let mut ask = common::two_questions(&session);
        ask.questions.truncate(1);
        for _ in 0..TENANT_BUNDLES {
            clarion.ask(&ask).expect("ask");
        }
        progress.inc();
    }
    progress.finish();
    check_world(name, &clarion);
    TenantWorld {
        label,
        clarion,
        _place: place,
    }
}

/// Statistics from when the tables were empty, and none after: SQLite
/// gathers none unless asked; PostgreSQL's autovacuum is turned off for
/// the tables that grow.
fn without_statistics(clarion: &Clarion) {
    clarion
        .with_raw_connection(|conn| {
            if let AnyConnection::Postgres(_) = conn {
                for table in [
                    "workspaces",
                    "tasks",
                    "sessions",
                    "turns",
                    "bundles",
                    "bundle_questions",
                ] {
                    let sql = format!("ALTER TABLE {table} SET (autovacuum_enabled = false)");
                    Raw::new(&sql).execute(conn).expect("autovacuum off");
                }
            }
        })
        .expect("statistics");
}

fn bench_tenants(name: &str, place_for: common::Place, runs: usize) {
    let worlds = [
        open_tenant_world(name, place_for, "alone", 1, false),
        open_tenant_world(name, place_for, "crowded", 1_000, false),
        open_tenant_world(name, place_for, "crowded, public", 1_000, true),
    ];
    let user = Principal::user("user0");
    let first = ListRequest::default();
    let second = ListRequest {
        cursor: worlds[0]
            .clarion
            .list_pending(&user, &first)
            .expect("list")
            .next_cursor,
        ..ListRequest::default()
    };
    let task = ["t0".to_owned()];
    type Operation<'a> = (&'static str, Box<dyn Fn(&Clarion) + 'a>);
    let operations: [Operation; 4] = [
        (
            "first page",
            Box::new(|c| {
                std::hint::black_box(c.list_pending(&user, &first).expect("list"));
            }),
        ),
        (
            "second page",
            Box::new(|c| {
                std::hint::black_box(c.list_pending(&user, &second).expect("list"));
            }),
        ),
        (
            "summary",
            Box::new(|c| {
                std::hint::black_box(c.summary(&user).expect("summary"));
            }),
        ),
        (
            "pending actions",
            Box::new(|c| {
                std::hint::black_box(c.pending_actions(&user, &task).expect("pending actions"));
            }),
        ),
    ];
    println!("\n{name}: user0 (100 active bundles of its own), alone and among 999 other tenants");
    println!(
        "(each world in turn per run, {runs} runs; ratio: world / alone, median of per-run ratios)"
    );
    println!(
        "{:<16} {:<16} {:>9} {:>7}  per-run ratios",
        "operation", "world", "median", "ratio"
    );
    for (operation, run) in &operations {
        let [a, b, c] = &worlds;
        let times = alternate(
            runs,
            [
                &mut || run(&a.clarion),
                &mut || run(&b.clarion),
                &mut || run(&c.clarion),
            ],
        );
        for (world, t) in worlds.iter().zip(&times) {
            let per_run = ratios(t, &times[0]);
            println!(
                "{:<16} {:<16} {:>7.3}ms {:>6.2}x  {}",
                operation,
                world.label,
                ms(median(t.clone())),
                median_ratio(per_run.clone()),
                show_ratios(&per_run)
            );
        }
    }
    let crowded = &worlds[1].clarion;
    bench_member(name, &worlds[0].clarion, crowded, runs);
    let page = crowded.list_pending(&user, &first).expect("list");
    assert_eq!(page.bundles.len(), 50, "user0 sees its own bundles");
    let everyone = worlds[2].clarion.summary(&user).expect("summary");
    assert_eq!(
        everyone.pending_bundles, 100_000,
        "public tenants are visible"
    );
    println!("crowded page beside its floor:");
    let row = time_page(crowded, &user, None, runs);
    println!(
        "  clarion {:.3}ms  floor {:.3}ms  ratio {:.2}x  per run: {}",
        ms(row.ours),
        ms(row.floor),
        median_ratio(row.ratios.clone()),
        show_ratios(&row.ratios)
    );
}

/// Workspaces the member of the crowded world belongs to (PPL-5).
const MEMBER_OF: u64 = 50;

/// PPL-5: `member`, who owns nothing and belongs to 50 of the crowded
/// world's workspaces (5,000 active bundles), beside `user0` alone with
/// its one workspace (100); and `set_members` itself, which rewrites no
/// bundle row whatever the workspace holds.
fn bench_member(name: &str, alone: &Clarion, crowded: &Clarion, runs: usize) {
    let member = Principal::user("member");
    let owner = Principal::user("user0");
    for w in 1..=MEMBER_OF {
        crowded
            .set_members(&format!("w{w}"), &["member".to_owned()])
            .expect("members");
    }
    let first = ListRequest::default();
    let page = crowded.list_pending(&member, &first).expect("list");
    assert_eq!(page.bundles.len(), 50, "the member sees its workspaces");
    let second = ListRequest {
        cursor: page.next_cursor.clone(),
        ..ListRequest::default()
    };
    let owner_second = ListRequest {
        cursor: alone
            .list_pending(&owner, &first)
            .expect("list")
            .next_cursor,
        ..ListRequest::default()
    };
    let seen = crowded.summary(&member).expect("summary");
    assert_eq!(
        seen.pending_bundles,
        (MEMBER_OF as i64) * TENANT_BUNDLES as i64
    );
    println!(
        "\n{name}: PPL-5, a member of {MEMBER_OF} workspaces in the crowded world vs user0 alone"
    );
    println!(
        "{:<16} {:>12} {:>12} {:>7}  per-run ratios",
        "operation", "member", "owner alone", "ratio"
    );
    type Timed<'a> = Box<dyn Fn() + 'a>;
    let operations: [(&str, Timed, Timed); 3] = [
        (
            "first page",
            Box::new(|| drop(std::hint::black_box(crowded.list_pending(&member, &first)))),
            Box::new(|| drop(std::hint::black_box(alone.list_pending(&owner, &first)))),
        ),
        (
            "second page",
            Box::new(|| drop(std::hint::black_box(crowded.list_pending(&member, &second)))),
            Box::new(|| {
                drop(std::hint::black_box(
                    alone.list_pending(&owner, &owner_second),
                ))
            }),
        ),
        (
            "summary (5,000)",
            Box::new(|| drop(std::hint::black_box(crowded.summary(&member)))),
            Box::new(|| drop(std::hint::black_box(alone.summary(&owner)))),
        ),
    ];
    for (operation, ours, theirs) in &operations {
        let [m, o] = alternate(runs, [&mut || ours(), &mut || theirs()]);
        let per_run = ratios(&m, &o);
        println!(
            "{:<16} {:>10.3}ms {:>10.3}ms {:>6.2}x  {}",
            operation,
            ms(median(m.clone())),
            ms(median(o.clone())),
            median_ratio(per_run.clone()),
            show_ratios(&per_run)
        );
    }
    same_inbox(crowded, &member, runs);
    let mut times = Vec::new();
    for run in 0..runs {
        let members: Vec<String> = (0..10).map(|i| format!("u{run}-{i}")).collect();
        let start = std::time::Instant::now();
        crowded.set_members("w0", &members).expect("set_members");
        times.push(start.elapsed());
    }
    println!(
        "set_members of 10 on a workspace of {TENANT_BUNDLES} active bundles: median {:.3}ms, max {:.3}ms",
        ms(median(times.clone())),
        ms(times.iter().max().copied().unwrap_or_default())
    );
}

/// PPL-5 with the inbox held equal: `owner50` is given the 50 workspaces
/// after the member's (`w51`…`w100`, 5,000 active bundles, one owner key),
/// so the member's 50 ranges are timed against one range of the same size.
fn same_inbox(crowded: &Clarion, member: &Principal, runs: usize) {
    for w in MEMBER_OF + 1..=2 * MEMBER_OF {
        crowded
            .upsert_workspace(WorkspaceUpsert::new(&format!("w{w}")).owner("owner50"))
            .expect("owner");
    }
    let owner = Principal::user("owner50");
    let first = ListRequest::default();
    let list = |p: &Principal| crowded.list_pending(p, &first).expect("list").bundles.len();
    let count = |p: &Principal| crowded.summary(p).expect("summary").pending_bundles as usize;
    assert_eq!(count(&owner), count(member), "the same inbox");
    println!("the same inbox: the member's 50 workspaces vs owner50's 50 (5,000 active each)");
    for (operation, row) in [
        (
            "first page",
            time_beside(|| list(member), || list(&owner), runs),
        ),
        (
            "summary",
            time_beside(|| count(member), || count(&owner), runs),
        ),
    ] {
        println!(
            "{:<16} {:>10.3}ms {:>10.3}ms {:>6.2}x  {}",
            operation,
            ms(row.ours),
            ms(row.floor),
            median_ratio(row.ratios.clone()),
            show_ratios(&row.ratios)
        );
    }
}

/// PPL-5's `set_members` goal: one workspace holding 10,000 active and
/// 990,000 settled bundles (generated), members replaced ten at a time
/// while a reader pages the workspace's owner's inbox on another thread;
/// the reader's latencies alone and during the writes show whether it was
/// ever blocked.
fn bench_set_members(name: &str, place_for: common::Place, runs: usize) {
    const READS: usize = 300;
    let place = place_for("set_members");
    let clarion = Clarion::open(&place.url).expect("open");
    let spec = WorldSpec {
        sessions: 1,
        owners: 1,
        analyze: false,
        ..WorldSpec::new(1_000_000, 10_000)
    };
    common::with_spinner(&format!("{name}: generating one workspace of 1M"), || {
        populate(&clarion, &spec).expect("populate")
    });
    let owner = Principal::user("user0");
    let first = ListRequest::default();
    let read = || {
        let start = Instant::now();
        std::hint::black_box(clarion.list_pending(&owner, &first).expect("list"));
        start.elapsed()
    };
    let alone: Vec<Duration> = (0..READS).map(|_| read()).collect();
    // The reader pages on while members are replaced, ten at a time, over
    // and over, until it has read as often as it did alone.
    let reading = std::sync::atomic::AtomicBool::new(true);
    let (during, writes) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            // Its first read opens the pool's second connection.
            read();
            let during: Vec<Duration> = (0..READS).map(|_| read()).collect();
            reading.store(false, std::sync::atomic::Ordering::Relaxed);
            during
        });
        let mut writes = Vec::new();
        while reading.load(std::sync::atomic::Ordering::Relaxed) || writes.len() < runs {
            let run = writes.len();
            let members: Vec<String> = (0..10).map(|i| format!("m{run}-{i}")).collect();
            let start = Instant::now();
            clarion.set_members("w0", &members).expect("set_members");
            writes.push(start.elapsed());
        }
        (reader.join().expect("reader"), writes)
    });
    let summary = |mut t: Vec<Duration>| {
        t.sort();
        format!(
            "p50 {:.3}ms, p99 {:.3}ms, max {:.3}ms ({} reads)",
            ms(common::percentile(&t, 0.5)),
            ms(common::percentile(&t, 0.99)),
            ms(*t.last().expect("reads")),
            t.len()
        )
    };
    println!("\n{name}: PPL-5, set_members of 10 on a workspace of 10,000 active and 990,000 settled bundles");
    println!(
        "  set_members: median {:.3}ms, max {:.3}ms ({} runs)",
        ms(median(writes.clone())),
        ms(writes.iter().max().copied().unwrap_or_default()),
        writes.len()
    );
    println!("  owner's first page alone:             {}", summary(alone));
    println!(
        "  owner's first page during set_members: {}",
        summary(during)
    );
}

fn main() {
    // `cargo bench` passes `--bench`; this program takes no arguments.
    let sizes: Vec<u64> = std::env::var("CLARION_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,1000000".to_owned())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .collect();
    let runs = common::runs(21);
    let crowded = common::setting("CLARION_BENCH_CROWDED", 1) > 0;
    let settled = common::setting("CLARION_BENCH_SETTLED", 1) > 0;
    let set_members = common::setting("CLARION_BENCH_SET_MEMBERS", 1) > 0;
    for (name, place_for) in common::backends() {
        if set_members {
            bench_set_members(name, place_for, runs);
        }
        if crowded {
            bench_tenants(name, place_for, runs);
        }
        bench_backend(name, place_for, &sizes, runs, settled);
    }
    common::print_peak_memory();
}
