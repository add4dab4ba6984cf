//! HOOK-2 delivery benchmark (a program, not a timed test):
//!
//!     cargo bench --bench webhooks                      # SQLite
//!     cargo bench --bench webhooks --features postgres  # SQLite and PostgreSQL
//!
//! A receiver on loopback: a plain HTTP/1.1 responder, a thread per
//! connection, answering `204` at once and noting when each delivery
//! arrived and which bundle it carried.
//!
//! Throughput: `CLARION_BENCH_EVENTS` bundles are asked first (one
//! `bundle.asked` event each), then a worker starts on a handle of its own;
//! the time until every endpoint has received every event, for 1 and for
//! 10 endpoints. Beside it, the floor: the same number of signed `POST`s of
//! bodies of the same size, sent one after another from a plain loop with
//! the same client (no database: what one-at-a-time delivery costs at
//! least). Clarion and the floor alternate; each run's ratio is printed,
//! and the figures are medians.
//!
//! Latency: with the worker running and one endpoint, a bundle is asked
//! and the time from the ask's return to the receiver holding its
//! delivery is taken, `CLARION_BENCH_ROUNDS` times (p50, p99).
//!
//! Environment: CLARION_BENCH_EVENTS (default 300), CLARION_BENCH_ROUNDS
//! (default 100), CLARION_BENCH_RUNS (default 3), CLARION_BENCH_BACKEND,
//! CLARION_TEST_DATABASE_URL.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use clarion::{
    Clarion, Principal, SessionUpsert, TaskUpsert, WebhookAdd, WebhookOptions, WorkspaceUpsert,
};
use common::{median, ms, percentile, setting, two_questions};
use hmac::{Hmac, KeyInit, Mac};

/// What the receiver saw: per path, how many deliveries; per bundle, when
/// its first delivery arrived.
#[derive(Default)]
struct Seen {
    per_path: HashMap<String, usize>,
    first: HashMap<String, Instant>,
}

#[derive(Default)]
struct Receiver {
    seen: Mutex<Seen>,
    changed: Condvar,
}

impl Receiver {
    /// Listens on a free loopback port; returns it.
    fn start() -> (Arc<Receiver>, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let receiver = Arc::new(Receiver::default());
        let shared = receiver.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let receiver = shared.clone();
                std::thread::spawn(move || receiver.serve(stream));
            }
        });
        (receiver, port)
    }

    /// One keep-alive connection: request after request, each answered
    /// `204` as soon as its body is read.
    fn serve(&self, stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let mut writer = stream.try_clone().expect("clone the stream");
        let mut reader = BufReader::new(stream);
        loop {
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                return;
            }
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            let arrived = Instant::now();
            if writer
                .write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                .is_err()
            {
                return;
            }
            let pending_id = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|body| body["data"]["pending_id"].as_str().map(str::to_owned))
                .unwrap_or_default();
            let mut seen = self.seen.lock().unwrap();
            *seen.per_path.entry(path).or_default() += 1;
            seen.first.entry(pending_id).or_insert(arrived);
            self.changed.notify_all();
        }
    }

    /// Waits until every path in `paths` has received `count`.
    fn await_counts(&self, paths: &[String], count: usize) {
        let deadline = Instant::now() + Duration::from_secs(600);
        let mut seen = self.seen.lock().unwrap();
        while !paths
            .iter()
            .all(|path| seen.per_path.get(path).copied().unwrap_or(0) >= count)
        {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "deliveries did not all arrive");
            seen = self.changed.wait_timeout(seen, left).unwrap().0;
        }
    }

    /// Waits for `pending_id`'s first delivery; when it arrived.
    fn await_bundle(&self, pending_id: &str) -> Instant {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = self.seen.lock().unwrap();
        loop {
            if let Some(arrived) = seen.first.get(pending_id) {
                return *arrived;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "{pending_id} was not delivered");
            seen = self.changed.wait_timeout(seen, left).unwrap().0;
        }
    }

    fn reset(&self) {
        *self.seen.lock().unwrap() = Seen::default();
    }
}

fn mirror(clarion: &Clarion) -> String {
    clarion
        .upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
        .unwrap();
    clarion
        .upsert_task(TaskUpsert::new("t").workspace("w"))
        .unwrap();
    clarion
        .upsert_session(SessionUpsert::new("s", "t").primary(true))
        .unwrap();
    "s".to_owned()
}

/// The bodies the worker will send, as `events_after` shows the events:
/// the floor sends bodies of the same size.
fn bodies(clarion: &Clarion) -> Vec<(String, String)> {
    let page = clarion
        .events_after(&Principal::System, "", Some(1000))
        .unwrap();
    let mut out = Vec::new();
    let mut after = String::new();
    let mut page = page;
    loop {
        for event in &page.events {
            let body = serde_json::json!({
                "type": event.event_type,
                "timestamp": event.at,
                "data": {
                    "position": event.position,
                    "pending_id": event.pending_id,
                    "task_id": event.task_id,
                    "workspace_id": "w",
                    "kind": "question",
                    "event": event.data,
                },
            });
            out.push((format!("evt_{}", event.position), body.to_string()));
        }
        if page.next == after {
            return out;
        }
        after = page.next.clone();
        page = clarion
            .events_after(&Principal::System, &after, Some(1000))
            .unwrap();
    }
}

/// The floor: each body signed (HMAC-SHA256, as HOOK-3 says) and posted,
/// one after another, to each path.
fn floor(port: u16, paths: &[String], secret: &str, bodies: &[(String, String)]) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .into();
    let key = STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap();
    for path in paths {
        for (id, body) in bodies {
            let timestamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
            mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
            let signature = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
            let response = agent
                .post(&format!("http://127.0.0.1:{port}{path}"))
                .header("content-type", "application/json")
                .header("webhook-id", id)
                .header("webhook-timestamp", timestamp.to_string())
                .header("webhook-signature", signature)
                .send(body.as_bytes())
                .expect("the floor's post");
            assert_eq!(response.status().as_u16(), 204);
        }
    }
}

/// One throughput run for `endpoints` endpoints: clarion's time and the
/// floor's.
fn throughput(place: common::Place, events: usize, endpoints: usize) -> (Duration, Duration) {
    let scratch = place(&format!("webhooks_{endpoints}"));
    let clarion = Clarion::open(&scratch.url).expect("open");
    let session = mirror(&clarion);
    let (receiver, port) = Receiver::start();
    let mut paths = Vec::new();
    let mut secret = String::new();
    for index in 0..endpoints {
        let path = format!("/e{index}");
        secret = clarion
            .webhook_add(&WebhookAdd {
                url: format!("http://127.0.0.1:{port}{path}"),
                // The receiver is on loopback.
                allow_private: true,
                ..WebhookAdd::default()
            })
            .unwrap()
            .secret;
        paths.push(path);
    }
    for _ in 0..events {
        clarion.ask(&two_questions(&session)).unwrap();
    }
    let bodies = bodies(&clarion);
    assert_eq!(bodies.len(), events);

    let worker = Clarion::open(&scratch.url).expect("open the worker's handle");
    let started = Instant::now();
    worker.start_webhooks(WebhookOptions::new()).unwrap();
    receiver.await_counts(&paths, events);
    let delivered = started.elapsed();
    worker.close();

    receiver.reset();
    let floor_paths: Vec<String> = paths.iter().map(|p| format!("{p}/floor")).collect();
    let started = Instant::now();
    floor(port, &floor_paths, &secret, &bodies);
    receiver.await_counts(&floor_paths, events);
    let floor_time = started.elapsed();
    clarion.close();
    (delivered, floor_time)
}

/// Latency: ask, then the time until the receiver holds the delivery.
fn latency(place: common::Place, rounds: usize) -> Vec<Duration> {
    let scratch = place("webhooks_latency");
    let clarion = Clarion::open(&scratch.url).expect("open");
    let session = mirror(&clarion);
    let (receiver, port) = Receiver::start();
    clarion
        .webhook_add(&WebhookAdd {
            url: format!("http://127.0.0.1:{port}/hook"),
            events: vec!["bundle.asked".into()],
            allow_private: true,
            ..WebhookAdd::default()
        })
        .unwrap();
    let worker = Clarion::open(&scratch.url).expect("open the worker's handle");
    worker.start_webhooks(WebhookOptions::new()).unwrap();
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let asked = clarion.ask(&two_questions(&session)).unwrap();
        let returned = Instant::now();
        let arrived = receiver.await_bundle(&asked.pending_id);
        samples.push(arrived.saturating_duration_since(returned));
    }
    worker.close();
    clarion.close();
    samples
}

fn main() {
    let events = setting("CLARION_BENCH_EVENTS", 300);
    let rounds = setting("CLARION_BENCH_ROUNDS", 100);
    let runs = common::runs(3);
    for (backend, place) in common::backends() {
        for endpoints in [1, 10] {
            println!(
                "\n{backend}: {events} events to {endpoints} endpoint(s), clarion and the floor \
                 alternately, {runs} runs (ratio: clarion time / floor time)"
            );
            let mut clarion_times = Vec::new();
            let mut floor_times = Vec::new();
            let mut ratios = Vec::new();
            for _ in 0..runs {
                let (delivered, floor_time) = throughput(place, events, endpoints);
                ratios.push(delivered.as_secs_f64() / floor_time.as_secs_f64());
                clarion_times.push(delivered);
                floor_times.push(floor_time);
            }
            let deliveries = (events * endpoints) as f64;
            let clarion_time = median(clarion_times);
            let floor_time = median(floor_times);
            let ratio_text: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            println!(
                "  clarion {:.0} ms ({:.0} deliveries/s)   floor {:.0} ms ({:.0}/s)   ratio {:.2}x   per run: {}",
                ms(clarion_time),
                deliveries / clarion_time.as_secs_f64(),
                ms(floor_time),
                deliveries / floor_time.as_secs_f64(),
                clarion_time.as_secs_f64() / floor_time.as_secs_f64(),
                ratio_text.join(" ")
            );
        }
        let mut p50s = Vec::new();
        let mut p99s = Vec::new();
        for _ in 0..runs {
            let mut samples = latency(place, rounds);
            samples.sort();
            p50s.push(percentile(&samples, 0.50));
            p99s.push(percentile(&samples, 0.99));
        }
        let per_run: Vec<String> = p50s
            .iter()
            .zip(&p99s)
            .map(|(p50, p99)| format!("{:.1}/{:.1}", ms(*p50), ms(*p99)))
            .collect();
        println!(
            "{backend}: ask returned → delivery arrived, {rounds} rounds: p50 {:.1} ms, p99 {:.1} ms (median of runs; per run p50/p99: {})",
            ms(median(p50s)),
            ms(median(p99s)),
            per_run.join(" ")
        );
    }
    common::print_peak_memory();
}
