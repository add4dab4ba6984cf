//! OPS-2/3 listing benchmark (a program, not a timed test):
//!
//!     cargo bench --bench listing                      # SQLite
//!     cargo bench --bench listing --features postgres  # SQLite and PostgreSQL
//!
//! Builds worlds of 10k and 1M bundles holding the same inbox of 2,000
//! active bundles (the rest half answered, half superseded), then times `list_pending` pages of 50: the first page
//! and a deep page (cursor 90% of the way through), for an unscoped
//! (`system`) and a scoped (`user3`, owner of a tenth of the workspaces)
//! principal. Each figure is the median of several runs.
//!
//! Environment: CLARION_BENCH_SIZES (default "10000,1000000"),
//! CLARION_BENCH_RUNS (default 21), CLARION_TEST_DATABASE_URL.

use std::time::{Duration, Instant};

use clarion::fixtures::{populate, WorldSpec};
use clarion::listing::Cursor;
use clarion::{Clarion, ListRequest, Principal};
use common::median;

mod common;

fn time_page(
    clarion: &Clarion,
    principal: &Principal,
    cursor: Option<String>,
    runs: usize,
) -> (Duration, usize) {
    let request = ListRequest {
        cursor,
        ..ListRequest::default()
    };
    let mut returned = 0;
    for _ in 0..3 {
        returned = clarion
            .list_pending(principal, &request)
            .expect("list")
            .bundles
            .len();
    }
    let samples = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let page = clarion.list_pending(principal, &request).expect("list");
            std::hint::black_box(page);
            start.elapsed()
        })
        .collect();
    (median(samples), returned)
}

fn bench_backend(
    name: &str,
    place_for: &dyn Fn(&str) -> common::Scratch,
    sizes: &[u64],
    runs: usize,
) {
    let mut rows: Vec<(u64, &str, &str, Duration, usize)> = Vec::new();
    for &size in sizes {
        let place = place_for(&format!("listing_{size}"));
        let clarion = Clarion::open(&place.url).expect("open");
        let spec = WorldSpec::new(size, 2_000);
        let started = Instant::now();
        populate(&clarion, &spec).expect("populate");
        eprintln!(
            "{name}: generated {size} bundles ({} active) in {:.1?}",
            spec.active_bundles(),
            started.elapsed()
        );
        let deep_index = (size * 9 / 10) / spec.active_every * spec.active_every;
        let deep = Cursor {
            created_at: spec.base_micros + deep_index as i64 * 1000,
            pending_id: format!("b{deep_index}"),
        }
        .encode();
        for (who, principal) in [
            ("unscoped", Principal::System),
            ("scoped", Principal::user("user3")),
        ] {
            let (first, n_first) = time_page(&clarion, &principal, None, runs);
            rows.push((size, who, "first page", first, n_first));
            let (deep_time, n_deep) = time_page(&clarion, &principal, Some(deep.clone()), runs);
            rows.push((size, who, "deep page", deep_time, n_deep));
        }
        drop(clarion);
        drop(place);
    }
    println!("\n{name}: list_pending, limit 50, median of {runs} runs");
    println!(
        "{:>9}  {:<9} {:<10} {:>10} {:>8}",
        "bundles", "principal", "page", "latency", "returned"
    );
    for (size, who, page, latency, returned) in &rows {
        println!(
            "{size:>9}  {who:<9} {page:<10} {:>8.3}ms {returned:>8}",
            latency.as_secs_f64() * 1e3
        );
    }
    if let (Some(&small), Some(&large)) = (sizes.first(), sizes.last()) {
        if small != large {
            println!("ratio {large} / {small}:");
            for (who, page) in [
                ("unscoped", "first page"),
                ("unscoped", "deep page"),
                ("scoped", "first page"),
                ("scoped", "deep page"),
            ] {
                let find = |size: u64| {
                    rows.iter()
                        .find(|r| r.0 == size && r.1 == who && r.2 == page)
                        .map(|r| r.3)
                };
                if let (Some(a), Some(b)) = (find(small), find(large)) {
                    println!(
                        "  {who:<9} {page:<10} {:.2}x",
                        b.as_secs_f64() / a.as_secs_f64()
                    );
                }
            }
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
    let runs: usize = std::env::var("CLARION_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(21);
    bench_backend("SQLite", &common::sqlite, &sizes, runs);
    #[cfg(feature = "postgres")]
    bench_backend("PostgreSQL", &common::postgres, &sizes, runs);
}
