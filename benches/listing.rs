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
//! indexes, on one raw connection. The page ids are checked to be the same.
//! Clarion and the floor run alternately; each run's ratio is printed, and
//! each figure is the median of the runs.
//!
//! Then the crowded-tenant worlds (OPS-3a): `user0` owns one workspace with
//! 100 active bundles, alone in the database, and again among 999 other
//! workspaces of 100 active bundles each (100k active), owned by other users
//! ("crowded") or by nobody, so that `user0` sees them all ("crowded,
//! public"). Its first and second pages, summary and pending actions are
//! timed in all three worlds alternately, with per-run ratios to "alone".
//!
//! Before anything is measured, every generated world is checked: each
//! bundle's `may_be_active` hint and visibility keys must equal what the
//! library's own rules derive (`test_hooks::drift`).
//!
//! Environment: CLARION_BENCH_SIZES (default "10000,1000000"; "0" skips),
//! CLARION_BENCH_RUNS (default 21), CLARION_BENCH_CROWDED (default 1; 0
//! skips), CLARION_TEST_DATABASE_URL.

mod common;

use std::time::{Duration, Instant};

use clarion::test_hooks::AnyConnection;
use clarion::test_hooks::{drift, populate, WorldSpec};
use clarion::Cursor;
use clarion::{Backend, Clarion, ListRequest, Principal, WorkspaceUpsert};
use common::{median, ms, Raw};
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::RunQueryDsl;

/// The floor: LIST-1's membership written by hand for one principal —
/// each check once, as a per-row test while walking a partial index in page
/// order (`bundles_listing_order`, or for a scoped principal
/// `bundles_by_owner` over its two owner keys, OPS-3a) — then the page's
/// question rows joined in DM-4 order. `{fence}` is `OFFSET 0` on PostgreSQL, which keeps
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
           b.task_key AS task_id
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
{rows}
ORDER BY page.created_at, page.pending_id, q.question_index, q.created_at, q.id";

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
    // AUTH-3 through the stored keys (OPS-3a).
    let visible = if scoped {
        "AND b.owner_key IN ('', ?)"
    } else {
        ""
    };
    FLOOR_PAGE
        .replace("{rows}", rows)
        .replace("{visible}", visible)
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

/// Times the page through clarion and through the floor, alternately;
/// checks both return the same bundles.
fn time_page(clarion: &Clarion, principal: &Principal, after: Option<Cursor>, runs: usize) -> Row {
    let request = ListRequest {
        cursor: after.clone(),
        ..ListRequest::default()
    };
    let list = || clarion.list_pending(principal, &request).expect("list");
    let page: Vec<String> = list().bundles.into_iter().map(|b| b.pending_id).collect();
    let user = match principal {
        Principal::User { user_id } => Some(user_id.as_str()),
        _ => None,
    };
    let sql = floor_sql(clarion.backend(), user.is_some());
    let [ours, floor] = clarion
        .with_raw_connection(|conn| {
            let rows = floor_page(conn, &sql, user, &after);
            let mut ids: Vec<String> = rows.iter().map(|r| r.pending_id.clone()).collect();
            ids.dedup();
            ids.truncate(50);
            assert_eq!(ids, page, "the floor returns a different page");
            alternate(
                runs,
                [
                    &mut || {
                        std::hint::black_box(list());
                    },
                    &mut || {
                        std::hint::black_box(floor_page(conn, &sql, user, &after));
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

fn bench_backend(name: &str, place_for: common::Place, sizes: &[u64], runs: usize) {
    let mut rows: Vec<Row> = Vec::new();
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
        for (who, principal) in [
            ("unscoped", Principal::System),
            ("scoped", Principal::user("user3")),
        ] {
            for (page, after) in [("first", None), ("deep", Some(deep.clone()))] {
                eprintln!("{name}: timing {size} bundles, {who} {page} page");
                rows.push(Row {
                    size,
                    who,
                    page,
                    ..time_page(&clarion, &principal, after, runs)
                });
            }
        }
    }
    println!("\n{name}: list_pending, limit 50, clarion and floor alternately, {runs} runs");
    println!("(ratio: clarion time / floor time; figures are medians)");
    println!(
        "{:>9}  {:<9} {:<6} {:>10} {:>10} {:>7} {:>8}  per-run ratios",
        "bundles", "principal", "page", "clarion", "floor", "ratio", "returned"
    );
    for r in &rows {
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

/// The crowded-tenant worlds (OPS-3a): `user0`'s workspace `w0` holds 100
/// active bundles; `tenants - 1` other workspaces hold as many each.
fn tenant_world(tenants: u64) -> WorldSpec {
    WorldSpec {
        bundles: 100 * tenants,
        sessions: tenants,
        owners: tenants,
        active_every: 1,
        base_micros: 1_795_982_400_000_000,
        analyze: true,
        deadlines: false,
    }
}

/// One world of the crowded-tenant benchmark, opened and checked.
struct TenantWorld {
    label: &'static str,
    clarion: Clarion,
    _place: common::Scratch,
}

fn open_tenant_world(
    name: &str,
    place_for: common::Place,
    label: &'static str,
    tenants: u64,
    public: bool,
) -> TenantWorld {
    let place = place_for(&format!("tenants_{}", label.replace([' ', ','], "_")));
    let clarion = Clarion::open(&place.url).expect("open");
    let spec = tenant_world(tenants);
    common::with_spinner(&format!("{name}: generating \"{label}\""), || {
        populate(&clarion, &spec).expect("populate");
        if public {
            // Through the library, so its own key maintenance runs.
            for w in 1..tenants {
                clarion
                    .upsert_workspace(WorkspaceUpsert::new(&format!("w{w}")).owner(""))
                    .expect("unown workspace");
            }
        }
    });
    check_world(name, &clarion);
    TenantWorld {
        label,
        clarion,
        _place: place,
    }
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
    for (name, place_for) in common::backends() {
        if crowded {
            bench_tenants(name, place_for, runs);
        }
        bench_backend(name, place_for, &sizes, runs);
    }
    common::print_peak_memory();
}
