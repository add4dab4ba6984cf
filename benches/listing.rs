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
//! clarion fetches) with their question rows — through the same partial
//! index, on one raw connection. The page ids are checked to be the same.
//! Each figure is the median of several runs.
//!
//! Environment: CLARION_BENCH_SIZES (default "10000,1000000"),
//! CLARION_BENCH_RUNS (default 21), CLARION_TEST_DATABASE_URL.

mod common;

use std::time::{Duration, Instant};

use clarion::test_hooks::AnyConnection;
use clarion::test_hooks::{populate, WorldSpec};
use clarion::Cursor;
use clarion::{Backend, Clarion, ListRequest, Principal};
use common::{median, ms, Raw};
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::RunQueryDsl;

/// The floor: LIST-1's membership written by hand for one principal —
/// each check once, as a per-row test while walking the partial index
/// `bundles_listing_order` in page order, visibility (which rejects most
/// candidates of a scoped principal) first — then the page's question rows
/// joined in DM-4 order. `{fence}` is `OFFSET 0` on PostgreSQL, which keeps
/// the tests per-row instead of flattening them into joins that sort every
/// candidate; `{rows}` fetches the question rows by index, per page row
/// (a lateral subquery on PostgreSQL, whose planner otherwise expects one
/// page row and may scan the whole table for it); `{visible}` holds the
/// scoped principal's AUTH-3 rule.
const FLOOR_PAGE: &str = "
SELECT page.*, q.id AS row_id, q.question_id, q.question_index, q.payload, q.status,
       q.response, q.created_at AS row_created_at
FROM (
    SELECT b.pending_id, b.session_id, b.kind, b.context, b.created_at,
           b.reject_reason, b.responded_at,
           (SELECT t.id FROM tasks t WHERE t.id = {task}) AS task_id
    FROM bundles b
    WHERE b.may_be_active
      AND b.created_at >= ? AND (b.created_at > ? OR b.pending_id > ?)
      AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = {task} {visible} {fence})
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
{rows}
ORDER BY page.created_at, page.pending_id, q.question_index, q.created_at, q.id";

/// AUTH-4: the bundle's own task, else its session's.
const TASK_OF_BUNDLE: &str = "CASE WHEN b.task_id <> '' THEN b.task_id
    ELSE (SELECT s.task_id FROM sessions s WHERE s.id = b.session_id) END";

fn floor_sql(backend: Backend, scoped: bool) -> String {
    let (fence, rows) = if backend == Backend::Sqlite {
        (
            "",
            "JOIN bundle_questions q ON q.pending_id = page.pending_id",
        )
    } else {
        (
            "OFFSET 0",
            "CROSS JOIN LATERAL (SELECT * FROM bundle_questions q
                WHERE q.pending_id = page.pending_id OFFSET 0) q",
        )
    };
    let visible = if scoped {
        "AND (t.workspace_id = '' OR NOT EXISTS (SELECT 1 FROM workspaces w
             WHERE w.id = t.workspace_id AND w.owner_id <> '' AND w.owner_id <> ? {fence}))"
    } else {
        ""
    };
    FLOOR_PAGE
        .replace("{rows}", rows)
        .replace("{visible}", visible)
        .replace("{task}", TASK_OF_BUNDLE)
        .replace("{fence}", fence)
}

/// One row of the floor's page: a bundle row beside one of its question rows.
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
    #[diesel(sql_type = Text)]
    task_id: String,
    #[diesel(sql_type = Integer)]
    row_id: i32,
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

fn floor_page(
    conn: &mut AnyConnection,
    sql: &str,
    user: Option<&str>,
    after: &Option<Cursor>,
) -> Vec<FloorRow> {
    let (at, id) = after.as_ref().map_or((i64::MIN, ""), Cursor::position);
    let mut query = Raw::new(sql).int(at).int(at).text(id);
    if let Some(user) = user {
        query = query.text(user);
    }
    query.load(conn).expect("floor page")
}

/// Times the page through clarion and through the floor; checks both
/// return the same bundles. Returns (clarion, floor, bundles returned).
fn time_page(
    clarion: &Clarion,
    principal: &Principal,
    after: Option<Cursor>,
    runs: usize,
) -> (Duration, Duration, usize) {
    let request = ListRequest {
        cursor: after.clone(),
        ..ListRequest::default()
    };
    let list = || clarion.list_pending(principal, &request).expect("list");
    for _ in 0..3 {
        list();
    }
    let ours = (0..runs)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(list());
            start.elapsed()
        })
        .collect();
    let page: Vec<String> = list().bundles.into_iter().map(|b| b.pending_id).collect();

    let user = match principal {
        Principal::User { user_id } => Some(user_id.as_str()),
        _ => None,
    };
    let sql = floor_sql(clarion.backend(), user.is_some());
    let floor = clarion
        .with_raw_connection(|conn| {
            let rows = floor_page(conn, &sql, user, &after);
            let mut ids: Vec<String> = rows.iter().map(|r| r.pending_id.clone()).collect();
            ids.dedup();
            ids.truncate(50);
            assert_eq!(ids, page, "the floor returns a different page");
            for _ in 0..2 {
                floor_page(conn, &sql, user, &after);
            }
            (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(floor_page(conn, &sql, user, &after));
                    start.elapsed()
                })
                .collect()
        })
        .expect("raw connection");
    (median(ours), median(floor), page.len())
}

struct Row {
    size: u64,
    who: &'static str,
    page: &'static str,
    ours: Duration,
    floor: Duration,
    returned: usize,
}

fn bench_backend(name: &str, place_for: common::Place, sizes: &[u64], runs: usize) {
    let mut rows: Vec<Row> = Vec::new();
    for &size in sizes {
        let place = place_for(&format!("listing_{size}"));
        let clarion = Clarion::open(&place.url).expect("open");
        let spec = WorldSpec::new(size, 2_000);
        common::with_spinner(
            &format!(
                "{name}: generating {size} bundles ({} active)",
                spec.active_bundles()
            ),
            || populate(&clarion, &spec).expect("populate"),
        );
        let deep_index = (size * 9 / 10) / spec.active_every * spec.active_every;
        let deep = Cursor::at(
            spec.base_micros + deep_index as i64 * 1000,
            &format!("b{deep_index}"),
        );
        for (who, principal) in [
            ("unscoped", Principal::System),
            ("scoped", Principal::user("user3")),
        ] {
            for (page, after) in [("first", None), ("deep", Some(deep.clone()))] {
                eprintln!("{name}: timing {size} bundles, {who} {page} page");
                let (ours, floor, returned) = time_page(&clarion, &principal, after, runs);
                rows.push(Row {
                    size,
                    who,
                    page,
                    ours,
                    floor,
                    returned,
                });
            }
        }
    }
    println!("\n{name}: list_pending, limit 50, median of {runs} runs");
    println!("(ratio: clarion time / floor time)");
    println!(
        "{:>9}  {:<9} {:<6} {:>10} {:>10} {:>7} {:>8}",
        "bundles", "principal", "page", "clarion", "floor", "ratio", "returned"
    );
    for r in &rows {
        println!(
            "{:>9}  {:<9} {:<6} {:>8.3}ms {:>8.3}ms {:>6.2}x {:>8}",
            r.size,
            r.who,
            r.page,
            ms(r.ours),
            ms(r.floor),
            r.ours.as_secs_f64() / r.floor.as_secs_f64(),
            r.returned
        );
    }
    let (Some(&small), Some(&large)) = (sizes.first(), sizes.last()) else {
        return;
    };
    if small == large {
        return;
    }
    println!("page at {large} / page at {small} bundles (OPS-3):");
    for r in rows.iter().filter(|r| r.size == large) {
        if let Some(s) = rows
            .iter()
            .find(|s| s.size == small && s.who == r.who && s.page == r.page)
        {
            println!(
                "  {:<9} {:<6} clarion {:.2}x   floor {:.2}x",
                r.who,
                r.page,
                r.ours.as_secs_f64() / s.ours.as_secs_f64(),
                r.floor.as_secs_f64() / s.floor.as_secs_f64()
            );
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; this program takes no arguments.
    let sizes: Vec<u64> = std::env::var("CLARION_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,1000000".to_owned())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let runs = common::runs(21);
    for (name, place_for) in common::backends() {
        bench_backend(name, place_for, &sizes, runs);
    }
    common::print_peak_memory();
}
