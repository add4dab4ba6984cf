//! HTTP door benchmark (HTTP-1, HTTP-6; measured the OPS-2 way) — a
//! program, not a timed test:
//!
//!     cargo bench --bench http                      # SQLite
//!     cargo bench --bench http --features postgres  # SQLite and PostgreSQL
//!
//! The server is the library's own router and server loop
//! (`clarion::http::router`, `clarion::http::serve`) on `127.0.0.1:0`,
//! in this process, on a runtime built like `clarion serve`'s (two worker
//! threads, the router's blocking pool), over one `Clarion` handle opened
//! with the defaults (as `clarion serve` opens it). Clients speak real
//! HTTP/1.1 over loopback sockets (reqwest, keep-alive, one connection per
//! client): part 1's from a runtime of their own in this process, part
//! 2's event streams from another process.
//!
//! 1. Requests: `list` (`GET /api/v1/clarification`, a first page of 50
//!    of 100+ pending bundles), `get` (`GET /api/v1/clarification/{id}`)
//!    and `respond` (`POST …/{id}/respond` on distinct pending bundles,
//!    every one must be claimed). `CLARION_BENCH_CLIENTS` (default 8)
//!    clients at once, each taking the next request of a shared list.
//!    The door runs twice: behind a host authenticator that maps a fixed
//!    bearer to `user:alice` without touching the database (a host that
//!    mounts the router), and behind the built-in `TokenAuthenticator`
//!    (`clarion serve`: a token digest looked up per request).
//!
//!    **The floor** (#41) serves `get` and `respond` by hand: an axum
//!    router of the two routes and two handlers of this file, over the
//!    same handle (recording the `http` channel, as the door does),
//!    served by `axum::serve` on a loopback port of its own on the same
//!    server runtime, behind the same authenticator as the door it is
//!    compared with (the same `HostAuth`, or a `TokenAuthenticator` on
//!    the same handle: one token-digest lookup per request). Each
//!    request makes one trip to the blocking pool (`spawn_blocking`)
//!    that authenticates and calls `get_bundle` / `resolve_bundle`
//!    (`respond` reads its body first, at most the door's 1 MiB, and
//!    parses it with serde, unknown members refused); the result is
//!    serialized by serde_json with the door's status, `Content-Type`
//!    and `Cache-Control`. Its `GET` body is the door's byte for byte and
//!    its `respond` body has the door's shape (both checked before
//!    anything is timed; the benchmark stops if not). What it leaves
//!    out is what the door adds around the call: the middleware layers
//!    (trace span, request id, metrics, CORS, catch-panic), the
//!    cookie origin rule (its requests carry bearers, to which the rule
//!    does not apply), the capability check and the arguments built as
//!    WIRE-5 JSON before the call, the bound on library calls at once
//!    (the runtime's blocking pool bounds it instead), REL-6's logged
//!    references in a `500` and the coded body of a capability denial
//!    (no request here is refused), and the server loop's header and
//!    request deadlines and connection cap (`clarion::http::serve`).
//!    The Rust API (`list_pending`, `get_bundle`, `resolve_bundle` from
//!    as many long-lived threads on the same handle) is measured too,
//!    as a second figure. The sides (Rust API, door ×2, floor ×2; the
//!    floor has no `list`) take turns in blocks of `BLOCK` requests, the
//!    first side rotating, so a slow spell of the machine falls on all
//!    of them. Per side: requests per second (the blocks' requests over
//!    their summed wall time) and per-request latency p50/p99; each run
//!    prints its ratios door / floor behind the same authenticator and
//!    door / Rust API (throughput); the summary is the median of the
//!    per-run ratios.
//! 2. Server-Sent Events fan-out: `CLARION_BENCH_SUBSCRIBERS` (default
//!    100) clients hold `GET /api/v1/events` open, **from another
//!    process** (#41: this program re-run as a streams child, its own
//!    runtime of two worker threads, so the server's CPU in this process
//!    is the server's alone): it reads the streams' tokens on its stdin,
//!    connects, and writes a line per received `bundle.asked` event on
//!    its stdout with the wall-clock time the chunk arrived (comparable
//!    across processes on one machine); it is stopped when its streams
//!    are done. A writer asks bundles one at a time, each after a random
//!    0–25 ms pause (not in step with any watcher tick), and the next
//!    only once every subscriber has its `bundle.asked` event. Latency: from the start of the writer's `ask`
//!    call (the commit is inside it; its own duration is printed beside)
//!    to a subscriber's receipt of the chunk holding the event, wall
//!    clock on one machine; p50, p99 and max over all subscribers and
//!    events of a run, median of the runs. Two writers take turns each
//!    run: the library in this process (the server's own handle), and
//!    another process (this program re-run as an asker, a `Clarion`
//!    handle of its own on the same database: the cross-process path,
//!    WAIT-3a). The floor: as many threads following the log through the
//!    Rust API the way a stream does (woken by `subscribe_events`, each
//!    reads `events_after` its own position), on the server's handle.
//!    The streams and the floor take turns each run (the first
//!    alternating; each connects, and is live once all its subscribers
//!    received a first event); each run prints the ratio of the p50s. If
//!    the route is missing (a build without HTTP-6), the streams are
//!    skipped with a note and the floor still runs.
//!
//!    A receipt still missing 5 s after its ask is counted as missing
//!    (late if it comes with a later event) and left out of the
//!    percentiles.
//!
//!    With `CLARION_BENCH_STREAM_USERS` above 1 the streams belong to that
//!    many users (stream `n` to user `n % users`, each with a workspace of
//!    its own); each ask goes to the next user and is awaited by that
//!    user's streams only. Beside the HTTP streams two bystander clients
//!    list over HTTP; then the same asks at the same pace run without
//!    streams, and each run prints the bystanders' p50/p99 in both and
//!    the ratio of the p99s (OPS-7). Above 2,000 streams the floor is not
//!    run.
//!
//! Environment: CLARION_BENCH_RUNS (default 3), CLARION_BENCH_REQUESTS
//! (default 400 per operation, per side, per run; 0 skips part 1),
//! CLARION_BENCH_CLIENTS (default 8), CLARION_BENCH_SUBSCRIBERS (default
//! 100; 0 skips part 2), CLARION_BENCH_STREAM_USERS (default 1),
//! CLARION_BENCH_EVENTS (default 20 per writer per run),
//! CLARION_BENCH_BACKEND, CLARION_TEST_DATABASE_URL.

mod common;

use std::collections::HashMap;
use std::future::IntoFuture;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::routing::{get, post};
use clarion::http::{
    self, Authentication, Authenticator, HttpOptions, ServeOptions, Shutdown, TokenAuthenticator,
    STREAMS_PER_CREDENTIAL,
};
use clarion::{
    AnswerInput, BundleStatus, Channel, Clarion, ListRequest, Principal, ResolveRequest,
    SessionUpsert, TaskUpsert, WorkspaceUpsert,
};
use common::{median, ms, percentile, two_answers, two_questions, ANSWER_Q1, ANSWER_Q2};

/// Set in the asking child to the database URL.
const ASKER: &str = "CLARION_BENCH_HTTP_ASKER";

/// Set in the streams child to the server's base URL.
const STREAMS: &str = "CLARION_BENCH_HTTP_STREAMS";

/// How many requests one side makes before the next side takes its turn.
const BLOCK: usize = 50;

/// Pending bundles the listing pages over (never resolved).
const LISTED: usize = 100;

/// The fixed bearer the host authenticator accepts.
const HOST_BEARER: &str = "bench-alice";

/// What the body of `respond` says: [`two_answers`] as JSON.
fn respond_body() -> String {
    format!(r#"{{"answers":[{ANSWER_Q1},{ANSWER_Q2}]}}"#)
}

/// A host's own authentication (HTTP-1, `examples/mount.rs`): a fixed
/// bearer is `user:alice`; no database read.
struct HostAuth;

impl Authenticator for HostAuth {
    fn authenticate(&self, request: &Parts) -> Authentication {
        match request.headers.get(AUTHORIZATION) {
            None => Authentication::Missing,
            Some(value) if value.as_bytes() == format!("Bearer {HOST_BEARER}").as_bytes() => {
                Authentication::Bearer(Principal::user("alice"))
            }
            Some(_) => Authentication::Invalid,
        }
    }
}

fn alice() -> Principal {
    Principal::user("alice")
}

/// Wall-clock microseconds: comparable between two processes on one
/// machine.
fn wall_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// The two servers (host authenticator, token authenticator) on one
/// runtime; dropping it shuts both down.
struct Servers {
    host: String,
    token: String,
    /// The hand-served floor behind the host authenticator, and behind
    /// the token authenticator.
    floor_host: String,
    floor_token: String,
    shutdown: Shutdown,
    thread: Option<JoinHandle<()>>,
}

impl Servers {
    /// Serves the router over `inbox` twice, on two loopback ports, on a
    /// runtime like `clarion serve`'s.
    fn start(inbox: &Clarion) -> Servers {
        let shutdown = Shutdown::new();
        let options = HttpOptions::new().shutdown(shutdown.clone());
        let blocking = options.blocking_threads();
        let host = http::router(inbox.clone(), HostAuth, options.clone());
        let token = http::router(inbox.clone(), TokenAuthenticator::new(inbox), options);
        let floor_host = floor_router(inbox, Arc::new(HostAuth));
        let floor_token = floor_router(inbox, Arc::new(TokenAuthenticator::new(inbox)));
        let bind = || {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
            listener.set_nonblocking(true).expect("non-blocking");
            let base = format!("http://{}", listener.local_addr().unwrap());
            (listener, base)
        };
        let ((host_listener, host_base), (token_listener, token_base)) = (bind(), bind());
        let ((floor_host_listener, floor_host_base), (floor_token_listener, floor_token_base)) =
            (bind(), bind());
        let stop = shutdown.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                // Named apart from the clients' threads, for profiles.
                .thread_name("server")
                .max_blocking_threads(blocking + 8)
                .enable_all()
                .build()
                .expect("server runtime");
            runtime.block_on(async move {
                let serve = |listener, app| {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    http::serve(listener, app, stop.clone(), ServeOptions::new())
                };
                // The floor: axum's own server loop, as a hand-written
                // service would be served.
                let serve_floor = |listener, app| {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    let stop = stop.clone();
                    axum::serve(listener, app)
                        .with_graceful_shutdown(async move { stop.begun().await })
                        .into_future()
                };
                let (a, b, c, d) = tokio::join!(
                    serve(host_listener, host),
                    serve(token_listener, token),
                    serve_floor(floor_host_listener, floor_host),
                    serve_floor(floor_token_listener, floor_token),
                );
                for served in [a, b, c, d] {
                    served.expect("serve");
                }
            });
            runtime.shutdown_timeout(Duration::from_secs(1));
        });
        Servers {
            host: host_base,
            token: token_base,
            floor_host: floor_host_base,
            floor_token: floor_token_base,
            shutdown,
            thread: Some(thread),
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.shutdown.begin();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

// ---- the hand-served floor of the door (#41) ----

/// The body of a hand-served `respond`: what `resolve_bundle` takes,
/// read by serde (unknown members refused, as the door refuses them).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FloorRespond {
    #[serde(default)]
    answers: Vec<AnswerInput>,
    #[serde(default)]
    rejected: bool,
    #[serde(default)]
    reject_reason: String,
}

/// The body of a won or lost resolve, the door's key for key.
#[derive(serde::Serialize)]
struct FloorResolved<'a> {
    success: bool,
    claimed: bool,
    status: BundleStatus,
    response: &'a clarion::Response,
}

/// What the hand-served handlers share: the server's handle (recording
/// `http` in the ledger, as the door does) and the same authenticator
/// the door beside it uses.
#[derive(Clone)]
struct FloorState {
    inbox: Clarion,
    auth: Arc<dyn Authenticator>,
}

/// A JSON reply with the door's two headers.
fn floor_reply(status: u16, body: Vec<u8>) -> axum::response::Response {
    axum::response::Response::builder()
        .status(status)
        .header(CONTENT_TYPE, "application/json")
        .header(CACHE_CONTROL, "no-store")
        .body(axum::body::Body::from(body))
        .unwrap_or_default()
}

fn floor_error(status: u16, message: &str) -> axum::response::Response {
    floor_reply(
        status,
        serde_json::to_vec(&serde_json::json!({ "error": message })).unwrap_or_default(),
    )
}

/// The authenticated principal, or the door's status (and a message) for
/// a request without one.
fn floor_principal(
    auth: &dyn Authenticator,
    parts: &Parts,
) -> Result<Principal, (u16, &'static str)> {
    match auth.authenticate(parts) {
        Authentication::Bearer(principal) | Authentication::Cookie(principal) => Ok(principal),
        Authentication::Missing | Authentication::Invalid => Err((401, "authentication required")),
        Authentication::Failed(_) => Err((500, "internal error")),
        Authentication::Unavailable(_) => Err((503, "unavailable")),
    }
}

/// A library error as its status and message.
fn floor_failure(error: &clarion::Error) -> axum::response::Response {
    floor_error(error.http_status(), &error.to_string())
}

/// `GET /api/v1/clarification/{id}` by hand: one trip to the blocking
/// pool that authenticates and reads, the detail serialized by serde.
async fn floor_get(
    State(state): State<FloorState>,
    Path(id): Path<String>,
    request: axum::extract::Request,
) -> axum::response::Response {
    let (parts, _) = request.into_parts();
    tokio::task::spawn_blocking(move || {
        let principal = match floor_principal(state.auth.as_ref(), &parts) {
            Ok(principal) => principal,
            Err((status, message)) => return floor_error(status, message),
        };
        match state.inbox.get_bundle(&principal, &id) {
            Ok(detail) => match serde_json::to_vec(&detail) {
                Ok(body) => floor_reply(200, body),
                Err(error) => floor_error(500, &error.to_string()),
            },
            Err(error) => floor_failure(&error),
        }
    })
    .await
    .unwrap_or_else(|_| floor_error(500, "a blocking call failed"))
}

/// `POST /api/v1/clarification/{id}/respond` by hand: the body read
/// (at most the door's limit), then one trip to the blocking pool that
/// authenticates, parses and resolves.
async fn floor_respond(
    State(state): State<FloorState>,
    Path(id): Path<String>,
    request: axum::extract::Request,
) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, http::MAX_BODY_BYTES).await else {
        return floor_error(413, "body too large");
    };
    tokio::task::spawn_blocking(move || {
        let principal = match floor_principal(state.auth.as_ref(), &parts) {
            Ok(principal) => principal,
            Err((status, message)) => return floor_error(status, message),
        };
        let wanted: FloorRespond = match serde_json::from_slice(&body) {
            Ok(wanted) => wanted,
            Err(error) => return floor_error(400, &error.to_string()),
        };
        let request = ResolveRequest {
            answers: wanted.answers,
            rejected: wanted.rejected,
            reject_reason: wanted.reject_reason,
        };
        match state.inbox.resolve_bundle(&principal, &id, &request) {
            Ok(resolved) => {
                let body = FloorResolved {
                    success: true,
                    claimed: resolved.claimed,
                    status: resolved.status,
                    response: &resolved.response,
                };
                match serde_json::to_vec(&body) {
                    Ok(body) => floor_reply(200, body),
                    Err(error) => floor_error(500, &error.to_string()),
                }
            }
            Err(error) => floor_failure(&error),
        }
    })
    .await
    .unwrap_or_else(|_| floor_error(500, "a blocking call failed"))
}

/// The hand-served floor's router: the two routes, no layers.
fn floor_router(inbox: &Clarion, auth: Arc<dyn Authenticator>) -> axum::Router {
    axum::Router::new()
        .route("/api/v1/clarification/{id}", get(floor_get))
        .route("/api/v1/clarification/{id}/respond", post(floor_respond))
        .with_state(FloorState {
            inbox: inbox.via(Channel::Http),
            auth,
        })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    List,
    Get,
    Respond,
}

impl Op {
    const ALL: [Op; 3] = [Op::List, Op::Get, Op::Respond];

    fn name(self) -> &'static str {
        match self {
            Op::List => "list",
            Op::Get => "get",
            Op::Respond => "respond",
        }
    }
}

/// Who makes the calls.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The Rust API.
    Rust,
    /// HTTP behind the host authenticator.
    Host,
    /// HTTP behind the built-in token authenticator.
    Token,
    /// The hand-served floor behind the host authenticator.
    FloorHost,
    /// The hand-served floor behind the token authenticator.
    FloorToken,
}

const SIDES: [Side; 5] = [
    Side::Rust,
    Side::Host,
    Side::Token,
    Side::FloorHost,
    Side::FloorToken,
];

impl Side {
    /// Whether this side serves `op`: the hand-served floor has only
    /// `get` and `respond`.
    fn serves(self, op: Op) -> bool {
        !matches!((self, op), (Side::FloorHost | Side::FloorToken, Op::List))
    }
}

/// One block's wall time and each request's latency.
struct Block {
    took: Duration,
    latencies: Vec<Duration>,
}

/// One block of work for the Rust API's callers.
struct Job {
    op: Op,
    items: Arc<Vec<String>>,
    next: Arc<AtomicUsize>,
    done: mpsc::Sender<Vec<Duration>>,
}

/// The floor's callers: `clients` long-lived threads on the handle (so no
/// block pays for starting threads), each taking the next item of a block.
struct RustCallers {
    jobs: Vec<mpsc::Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl RustCallers {
    fn start(inbox: &Clarion, clients: usize) -> RustCallers {
        let (jobs, threads) = (0..clients)
            .map(|_| {
                let (send, receive) = mpsc::channel::<Job>();
                let inbox = inbox.clone();
                let thread = std::thread::spawn(move || {
                    let (principal, list, answers) =
                        (alice(), ListRequest::default(), two_answers());
                    for job in receive {
                        let mut mine = Vec::new();
                        loop {
                            let i = job.next.fetch_add(1, Ordering::Relaxed);
                            let Some(id) = job.items.get(i) else { break };
                            let started = Instant::now();
                            match job.op {
                                Op::List => {
                                    let page = inbox.list_pending(&principal, &list).unwrap();
                                    assert_eq!(page.bundles.len(), 50);
                                }
                                Op::Get => {
                                    inbox.get_bundle(&principal, id).unwrap();
                                }
                                Op::Respond => {
                                    let resolved =
                                        inbox.resolve_bundle(&principal, id, &answers).unwrap();
                                    assert!(resolved.claimed, "a distinct bundle is claimed");
                                }
                            }
                            mine.push(started.elapsed());
                        }
                        let _ = job.done.send(mine);
                    }
                });
                (send, thread)
            })
            .unzip();
        RustCallers { jobs, threads }
    }

    /// Every caller works through `items`; the block's time and latencies.
    fn block(&self, op: Op, items: &[String]) -> Block {
        let items = Arc::new(items.to_vec());
        let next = Arc::new(AtomicUsize::new(0));
        let (done, results) = mpsc::channel();
        let started = Instant::now();
        for jobs in &self.jobs {
            jobs.send(Job {
                op,
                items: items.clone(),
                next: next.clone(),
                done: done.clone(),
            })
            .expect("a caller thread");
        }
        drop(done);
        let latencies: Vec<Duration> = results.iter().flatten().collect();
        assert_eq!(latencies.len(), items.len(), "a caller thread failed");
        Block {
            took: started.elapsed(),
            latencies,
        }
    }
}

impl Drop for RustCallers {
    fn drop(&mut self) {
        self.jobs.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// One HTTP request of `op`; panics unless it is the expected 200.
async fn request(client: &reqwest::Client, base: &str, bearer: &str, op: Op, id: &str) {
    let builder = match op {
        Op::List => client.get(format!("{base}/api/v1/clarification")),
        Op::Get => client.get(format!("{base}/api/v1/clarification/{id}")),
        Op::Respond => client
            .post(format!("{base}/api/v1/clarification/{id}/respond"))
            .header("content-type", "application/json")
            .body(respond_body()),
    };
    let response = builder.bearer_auth(bearer).send().await.expect("request");
    let status = response.status().as_u16();
    let body = response.bytes().await.expect("body");
    assert_eq!(
        status,
        200,
        "{} {id}: {}",
        op.name(),
        String::from_utf8_lossy(&body)
    );
    if op == Op::Respond {
        let reply: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(reply["claimed"], true, "a distinct bundle is claimed");
    }
}

/// `clients` HTTP clients (one keep-alive connection each) make the
/// requests, each taking the next item.
fn http_block(
    runtime: &tokio::runtime::Runtime,
    clients: &[reqwest::Client],
    base: &str,
    bearer: &str,
    op: Op,
    items: &[String],
) -> Block {
    let items: Arc<Vec<String>> = Arc::new(items.to_vec());
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let latencies = runtime.block_on(async {
        let mut workers = tokio::task::JoinSet::new();
        for client in clients {
            let (client, items, next) = (client.clone(), items.clone(), next.clone());
            let (base, bearer) = (base.to_owned(), bearer.to_owned());
            workers.spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(id) = items.get(i) else { break };
                    let started = Instant::now();
                    request(&client, &base, &bearer, op, id).await;
                    mine.push(started.elapsed());
                }
                mine
            });
        }
        let mut all = Vec::new();
        while let Some(mine) = workers.join_next().await {
            all.extend(mine.expect("client task"));
        }
        all
    });
    Block {
        took: started.elapsed(),
        latencies,
    }
}

/// One side's figures in one run.
#[derive(Clone, Copy)]
struct Figures {
    per_second: f64,
    p50: Duration,
    p99: Duration,
}

fn figures(blocks: Vec<Block>) -> Figures {
    let took: Duration = blocks.iter().map(|b| b.took).sum();
    let mut latencies: Vec<Duration> = blocks.into_iter().flat_map(|b| b.latencies).collect();
    latencies.sort();
    Figures {
        per_second: latencies.len() as f64 / took.as_secs_f64(),
        p50: percentile(&latencies, 0.5),
        p99: percentile(&latencies, 0.99),
    }
}

fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// Per-run ratios: their median, and all of them as text.
fn summarized(ratios: Vec<f64>) -> (f64, String) {
    let text = ratios
        .iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(" ");
    (median_f64(ratios), text)
}

fn median_figures(runs: &[Figures]) -> Figures {
    Figures {
        per_second: median_f64(runs.iter().map(|f| f.per_second).collect()),
        p50: median(runs.iter().map(|f| f.p50).collect()),
        p99: median(runs.iter().map(|f| f.p99).collect()),
    }
}

/// Everything part 1 needs.
struct Requests<'a> {
    inbox: &'a Clarion,
    servers: &'a Servers,
    token: &'a str,
    runtime: &'a tokio::runtime::Runtime,
    clients: Vec<reqwest::Client>,
    callers: RustCallers,
    listed: Vec<String>,
    requests: usize,
}

impl Requests<'_> {
    fn block(&self, side: Side, op: Op, items: &[String]) -> Block {
        match side {
            Side::Rust => self.callers.block(op, items),
            Side::Host => http_block(
                self.runtime,
                &self.clients,
                &self.servers.host,
                HOST_BEARER,
                op,
                items,
            ),
            Side::Token => http_block(
                self.runtime,
                &self.clients,
                &self.servers.token,
                self.token,
                op,
                items,
            ),
            Side::FloorHost => http_block(
                self.runtime,
                &self.clients,
                &self.servers.floor_host,
                HOST_BEARER,
                op,
                items,
            ),
            Side::FloorToken => http_block(
                self.runtime,
                &self.clients,
                &self.servers.floor_token,
                self.token,
                op,
                items,
            ),
        }
    }

    /// One run of `op`: the sides that serve it in turns; each side's
    /// figures (`None` for a side that does not serve `op`).
    fn run(&self, op: Op, run: usize) -> [Option<Figures>; 5] {
        let n = self.requests;
        let sides: Vec<usize> = (0..SIDES.len()).filter(|&s| SIDES[s].serves(op)).collect();
        // The items each side goes through: ids to get, bundles to
        // answer (distinct, asked now, untimed), or nothing (list).
        let items: Vec<Vec<String>> = match op {
            Op::List => vec![vec![String::new(); n]; SIDES.len()],
            Op::Get => (0..SIDES.len())
                .map(|_| (0..n).map(|i| self.listed[i % LISTED].clone()).collect())
                .collect(),
            Op::Respond => {
                let session = format!("respond{run}");
                self.inbox
                    .upsert_session(SessionUpsert::new(&session, "t"))
                    .unwrap();
                (0..SIDES.len())
                    .map(|s| {
                        if !sides.contains(&s) {
                            return Vec::new();
                        }
                        (0..n)
                            .map(|_| self.inbox.ask(&two_questions(&session)).unwrap().pending_id)
                            .collect()
                    })
                    .collect()
            }
        };
        let mut blocks: [Vec<Block>; 5] = Default::default();
        for (b, start) in (0..n).step_by(BLOCK).enumerate() {
            let end = (start + BLOCK).min(n);
            for turn in 0..sides.len() {
                let s = sides[(b + turn) % sides.len()];
                blocks[s].push(self.block(SIDES[s], op, &items[s][start..end]));
            }
        }
        blocks.map(|side| (!side.is_empty()).then(|| figures(side)))
    }
}

fn print_figures(label: &str, f: &Figures) {
    println!(
        "    {label:<22} {:>8.0}/s   p50 {:>7.3} ms   p99 {:>7.3} ms",
        f.per_second,
        ms(f.p50),
        ms(f.p99)
    );
}

fn requests_bench(
    name: &str,
    inbox: &Clarion,
    servers: &Servers,
    runtime: &tokio::runtime::Runtime,
    runs: usize,
) {
    let requests = common::setting("CLARION_BENCH_REQUESTS", 400);
    if requests == 0 {
        return;
    }
    let clients = common::setting("CLARION_BENCH_CLIENTS", 8).max(1);
    let token = inbox.add_token(&alice(), "bench").unwrap().token;
    let listed = (0..LISTED)
        .map(|_| inbox.ask(&two_questions("s")).unwrap().pending_id)
        .collect();
    let bench = Requests {
        inbox,
        servers,
        token: &token,
        runtime,
        clients: (0..clients)
            .map(|_| {
                reqwest::Client::builder()
                    .pool_max_idle_per_host(1)
                    .timeout(Duration::from_secs(60))
                    .build()
                    .expect("client")
            })
            .collect(),
        callers: RustCallers::start(inbox, clients),
        listed,
        requests,
    };
    // Warm-up, untimed: every client opens its connections, every pooled
    // database connection is made.
    for side in SIDES {
        if side.serves(Op::List) {
            bench.block(side, Op::List, &vec![String::new(); clients * 4]);
        }
        bench.block(side, Op::Get, &bench.listed.clone());
    }
    same_bytes(inbox, runtime, servers, &token, &bench.listed[0]);
    // Per operation, per side, each run's figures.
    let mut results: Vec<[Vec<Figures>; 5]> = Op::ALL.iter().map(|_| Default::default()).collect();
    for run in 0..runs {
        eprintln!("{name}: requests, run {}/{runs}", run + 1);
        for (o, op) in Op::ALL.into_iter().enumerate() {
            let figures = bench.run(op, run);
            let per_second = |s: usize| figures[s].map_or(f64::NAN, |f| f.per_second);
            let mut line = format!(
                "{name:<10} run {}: {:<7} Rust {:>6.0}/s  HTTP host-auth {:>6.0}/s ({:.2}x Rust)  HTTP token {:>6.0}/s ({:.2}x Rust)",
                run + 1,
                op.name(),
                per_second(0),
                per_second(1),
                per_second(1) / per_second(0),
                per_second(2),
                per_second(2) / per_second(0),
            );
            if figures[3].is_some() {
                line.push_str(&format!(
                    "  floor host-auth {:>6.0}/s (door {:.2}x)  floor token {:>6.0}/s (door {:.2}x)",
                    per_second(3),
                    per_second(1) / per_second(3),
                    per_second(4),
                    per_second(2) / per_second(4),
                ));
            }
            println!("{line}");
            for (s, figures) in figures.into_iter().enumerate() {
                if let Some(figures) = figures {
                    results[o][s].push(figures);
                }
            }
        }
    }
    println!(
        "\n{name}: requests, median of {runs} runs; {clients} concurrent clients, {requests} requests per operation per side per run; ratios = throughput over the hand-served floor's behind the same authenticator, and over the Rust API's (median of the per-run ratios)"
    );
    // The median of the per-run ratios of `side` over `base`, and the
    // per-run ratios as text.
    let ratio = |side: &[Figures], base: &[Figures]| {
        summarized(
            side.iter()
                .zip(base)
                .map(|(h, r)| h.per_second / r.per_second)
                .collect(),
        )
    };
    for (o, op) in Op::ALL.into_iter().enumerate() {
        let [rust, host, token, floor_host, floor_token] = &results[o];
        println!("  {}:", op.name());
        print_figures("Rust API", &median_figures(rust));
        for (label, side) in [
            ("floor, host auth", floor_host),
            ("floor, token auth", floor_token),
        ] {
            if !side.is_empty() {
                print_figures(label, &median_figures(side));
            }
        }
        for (label, side, floor) in [
            ("HTTP, host auth", host, floor_host),
            ("HTTP, token auth", token, floor_token),
        ] {
            let f = median_figures(side);
            let (to_rust, to_rust_text) = ratio(side, rust);
            let to_floor = if floor.is_empty() {
                String::new()
            } else {
                let (r, text) = ratio(side, floor);
                format!("  floor ratio {r:.2}x (per run: {text});")
            };
            println!(
                "    {label:<22} {:>8.0}/s   p50 {:>7.3} ms   p99 {:>7.3} ms {to_floor}  Rust ratio {to_rust:.2}x  (per run: {to_rust_text})",
                f.per_second,
                ms(f.p50),
                ms(f.p99)
            );
        }
    }
}

/// The door and its hand-served floor answer a `GET` with the same body
/// bytes (behind either authenticator), and a `respond` with a body of
/// the same shape; the benchmark stops if not.
fn same_bytes(
    inbox: &Clarion,
    runtime: &tokio::runtime::Runtime,
    servers: &Servers,
    token: &str,
    id: &str,
) {
    let client = reqwest::Client::new();
    let body = |base: &str, bearer: &str| {
        let url = format!("{base}/api/v1/clarification/{id}");
        runtime.block_on(async {
            let response = client.get(url).bearer_auth(bearer).send().await.unwrap();
            (response.status().as_u16(), response.bytes().await.unwrap())
        })
    };
    let door = body(&servers.host, HOST_BEARER);
    assert_eq!(door.0, 200);
    for (base, bearer) in [
        (&servers.floor_host, HOST_BEARER),
        (&servers.token, token),
        (&servers.floor_token, token),
    ] {
        assert_eq!(body(base, bearer), door, "{base}: another GET body");
    }
    // `respond`: the same keys and kinds of values (two bundles, so the
    // times differ), both claimed.
    let respond = |base: &str, bearer: &str| {
        let id = inbox.ask(&two_questions("s")).unwrap().pending_id;
        let url = format!("{base}/api/v1/clarification/{id}/respond");
        runtime.block_on(async {
            let response = client
                .post(url)
                .bearer_auth(bearer)
                .header("content-type", "application/json")
                .body(respond_body())
                .send()
                .await
                .unwrap();
            assert_eq!(response.status().as_u16(), 200);
            response.json::<serde_json::Value>().await.unwrap()
        })
    };
    let (door, floor) = (
        respond(&servers.host, HOST_BEARER),
        respond(&servers.floor_host, HOST_BEARER),
    );
    assert_eq!(door["claimed"], true);
    assert_eq!(shape(&door), shape(&floor), "another respond body");
}

/// A JSON value with every leaf replaced by its kind: two bodies of one
/// shape compare equal.
fn shape(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::Null => Value::from("null"),
        Value::Bool(_) => Value::from("bool"),
        Value::Number(_) => Value::from("number"),
        Value::String(_) => Value::from("string"),
    }
}

// ---- part 2: Server-Sent Events fan-out ----

/// One subscriber's receipt of one `bundle.asked` event.
struct Receipt {
    subscriber: usize,
    pending_id: String,
    at: i64,
}

/// What a stream task tells the streams child's writer.
enum Note {
    Receipt(Receipt),
    /// A line as it is (`connected …`, `error …`).
    Said(String),
}

/// How long the streams child may take to connect all its streams.
const CONNECT_LIMIT: Duration = Duration::from_secs(300);

/// The streams child: reads one bearer token per line on stdin (stream
/// `n`'s on line `n`) up to an empty line, connects that many streams to
/// `{base}/api/v1/events`, says `connected <pid>` (or `error <why>`) on
/// stdout, then one line `r <stream> <pending_id> <wall µs>` per
/// `bundle.asked` event received; it ends when its stdin closes.
fn streams_child(base: &str) {
    raise_descriptor_limit();
    let mut tokens = Vec::new();
    let mut input = std::io::stdin().lock();
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        tokens.push(line.trim().to_owned());
    }
    let (notes, written) = mpsc::channel::<Note>();
    // One writer owns stdout, flushing whenever nothing more is waiting.
    let writer = std::thread::spawn(move || {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        while let Ok(note) = written.recv() {
            let mut next = Some(note);
            while let Some(note) = next {
                let _ = match note {
                    Note::Receipt(r) => {
                        writeln!(out, "r {} {} {}", r.subscriber, r.pending_id, r.at)
                    }
                    Note::Said(line) => writeln!(out, "{line}"),
                };
                next = written.try_recv().ok();
            }
            if out.flush().is_err() {
                break;
            }
        }
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("streams")
        .enable_all()
        .build()
        .expect("streams runtime");
    let url = format!("{base}/api/v1/events");
    let connected = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| e.to_string())?;
        for (n, token) in tokens.iter().enumerate() {
            let response = client
                .get(&url)
                .bearer_auth(token)
                .header("accept", "text/event-stream")
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let kind = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            if status != 200 || !kind.starts_with("text/event-stream") {
                let body = response.text().await.unwrap_or_default();
                return Err(format!("GET /api/v1/events: {status} {kind} {body}"));
            }
            tokio::spawn(subscriber(response, n, notes.clone()));
        }
        Ok::<_, String>(())
    });
    let said = match connected {
        Ok(()) => format!("connected {}", std::process::id()),
        Err(why) => format!("error {}", why.replace('\n', " ")),
    };
    let _ = notes.send(Note::Said(said));
    // Until the parent closes stdin (or kills this process).
    let mut rest = String::new();
    while input.read_line(&mut rest).unwrap_or(0) > 0 {
        rest.clear();
    }
    drop(notes);
    runtime.shutdown_background();
    let _ = writer.join();
}

/// The `pending_id` of an event's `data:` JSON (top level, or inside its
/// `data` member).
fn pending_id_of(data: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(data).ok()?;
    value
        .get("pending_id")
        .or_else(|| value.get("data").and_then(|d| d.get("pending_id")))
        .and_then(|id| id.as_str())
        .map(str::to_owned)
}

/// Reads one stream, sending a [`Receipt`] for each `bundle.asked`
/// event, stamped when the chunk that completed it arrived.
async fn subscriber(response: reqwest::Response, subscriber: usize, receipts: mpsc::Sender<Note>) {
    let mut response = response;
    let mut buffer: Vec<u8> = Vec::new();
    let (mut event, mut data) = (String::new(), String::new());
    while let Ok(Some(chunk)) = response.chunk().await {
        let at = wall_micros();
        buffer.extend_from_slice(&chunk);
        while let Some(end) = buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if event == "bundle.asked" {
                    if let Some(pending_id) = pending_id_of(&data) {
                        let _ = receipts.send(Note::Receipt(Receipt {
                            subscriber,
                            pending_id,
                            at,
                        }));
                    }
                }
                event.clear();
                data.clear();
            } else if let Some(value) = line.strip_prefix("event:") {
                event = value.strip_prefix(' ').unwrap_or(value).to_owned();
            } else if let Some(value) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(value.strip_prefix(' ').unwrap_or(value));
            }
            // `id:`, comments and anything else: not needed here.
        }
    }
}

/// The subscribers, connected; dropping it disconnects them.
struct Subscribers {
    receipts: mpsc::Receiver<Receipt>,
    count: usize,
    /// Stream `n` is user `n % users`'s.
    users: usize,
    /// Receipts that arrived while another event was awaited.
    early: HashMap<String, Vec<Receipt>>,
    /// Disconnects them.
    stop: Option<Box<dyn FnOnce()>>,
}

impl Drop for Subscribers {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop();
        }
    }
}

/// When a log follower reads again.
enum NextRead {
    Now,
    Soon,
    Woken,
}

impl Subscribers {
    /// Connects `count` streams to `GET /api/v1/events` from another
    /// process (this program re-run as [`streams_child`]), which reports
    /// each receipt on its stdout; `Err` says why the route is unusable.
    fn remote(base: &str, crowd: &Crowd) -> Result<Subscribers, String> {
        use std::process::{Command, Stdio};
        let count = crowd.streams;
        let mut child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
            .env(STREAMS, base)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let (Some(mut to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the streams child has no pipes".to_owned());
        };
        let tokens: String = (0..count)
            .map(|n| format!("{}\n", crowd.token_of(n)))
            .collect();
        let sent = to
            .write_all(tokens.as_bytes())
            .and_then(|()| to.write_all(b"\n"))
            .and_then(|()| to.flush());
        let (send, receipts) = mpsc::channel();
        let (said, status) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(from).lines() {
                let Ok(line) = line else { break };
                match line.strip_prefix("r ") {
                    Some(receipt) => {
                        let mut parts = receipt.split_whitespace();
                        let (Some(n), Some(pending_id), Some(at)) =
                            (parts.next(), parts.next(), parts.next())
                        else {
                            continue;
                        };
                        let (Ok(subscriber), Ok(at)) = (n.parse(), at.parse()) else {
                            continue;
                        };
                        let pending_id = pending_id.to_owned();
                        let _ = send.send(Receipt {
                            subscriber,
                            pending_id,
                            at,
                        });
                    }
                    None => {
                        let _ = said.send(line);
                    }
                }
            }
        });
        let stop = move || {
            drop(to);
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
        };
        let connected = sent.map_err(|e| e.to_string()).and_then(|()| {
            match status.recv_timeout(CONNECT_LIMIT) {
                Ok(line) if line.starts_with("connected ") => {
                    eprintln!("{count} streams connected, from process {}", &line[10..]);
                    Ok(())
                }
                Ok(line) => Err(line),
                Err(_) => Err(format!(
                    "the streams were not connected within {CONNECT_LIMIT:?}"
                )),
            }
        });
        if let Err(why) = connected {
            stop();
            return Err(why);
        }
        Ok(Subscribers {
            receipts,
            count,
            users: crowd.users.len(),
            early: HashMap::new(),
            stop: Some(Box::new(stop)),
        })
    }

    /// The floor: `count` threads follow the log through the Rust API,
    /// each as a stream would: woken by `subscribe_events`, it reads
    /// `events_after` its position (from the head, like a stream without
    /// `Last-Event-ID`).
    fn rust(inbox: &Clarion, crowd: &Crowd) -> Subscribers {
        let count = crowd.streams;
        let (send, receipts) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<JoinHandle<()>> = (0..count)
            .map(|n| {
                let (inbox, send, stop) = (inbox.clone(), send.clone(), stop.clone());
                let principal = crowd.user_of(n).principal.clone();
                let (woken, wakes) = mpsc::channel::<()>();
                // Subscribed before the head is read: nothing committed in
                // between is missed.
                let subscription = inbox.subscribe_events(move || {
                    let _ = woken.send(());
                });
                let mut position = inbox.events_head(&principal).unwrap();
                std::thread::spawn(move || {
                    let _subscription = subscription;
                    // As the stream does: a page that moved reads on at
                    // once, one held back by an open transaction (EVT-1a)
                    // reads again after 20 ms, else wait to be woken.
                    let mut next_read = NextRead::Woken;
                    while !stop.load(Ordering::Relaxed) {
                        match next_read {
                            NextRead::Now => {}
                            NextRead::Soon => std::thread::sleep(Duration::from_millis(20)),
                            NextRead::Woken => {
                                match wakes.recv_timeout(Duration::from_millis(50)) {
                                    Ok(()) => while wakes.try_recv().is_ok() {},
                                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                                }
                            }
                        }
                        let page = inbox
                            .events_after(&principal, &position, Some(1000))
                            .unwrap();
                        let at = wall_micros();
                        for event in page.events {
                            if event.event_type == "bundle.asked" {
                                let _ = send.send(Receipt {
                                    subscriber: n,
                                    pending_id: event.pending_id,
                                    at,
                                });
                            }
                        }
                        next_read = if page.next != position {
                            NextRead::Now
                        } else if page.held_back {
                            NextRead::Soon
                        } else {
                            NextRead::Woken
                        };
                        position = page.next;
                    }
                })
            })
            .collect();
        Subscribers {
            receipts,
            count,
            users: crowd.users.len(),
            early: HashMap::new(),
            stop: Some(Box::new(move || {
                stop.store(true, Ordering::Relaxed);
                for thread in threads {
                    let _ = thread.join();
                }
            })),
        }
    }

    /// None at all: the same flow without streams, for the bystanders'
    /// baseline.
    fn none() -> Subscribers {
        let (_, receipts) = mpsc::channel();
        Subscribers {
            receipts,
            count: 0,
            users: 1,
            early: HashMap::new(),
            stop: None,
        }
    }

    /// How many of the streams are user `user`'s.
    fn streams_of(&self, user: usize) -> usize {
        (0..self.count).filter(|n| n % self.users == user).count()
    }

    /// Waits until every subscriber holds a first event (one asked for
    /// each user, all asked first): the streams are live. `Err` says how
    /// many did not within 30 s.
    fn primed(mut self, inbox: &Clarion, crowd: &Crowd) -> Result<Subscribers, String> {
        let primers: Vec<String> = crowd
            .users
            .iter()
            .map(|user| inbox.ask(&two_questions(&user.session)).unwrap().pending_id)
            .collect();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut received = 0;
        for (user, primer) in primers.iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            received += self.collect(primer, user, left).0.len();
        }
        if received < self.count {
            return Err(format!(
                "only {received} of {} subscribers received the first event within 30 s",
                self.count
            ));
        }
        Ok(self)
    }

    /// Waits (at most `limit`) until every stream of `user` received
    /// `pending_id`'s event; the receipt times, and how many subscribers
    /// got it twice. Another user's stream receiving it is a visibility
    /// leak: the benchmark stops.
    fn collect(&mut self, pending_id: &str, user: usize, limit: Duration) -> (Vec<i64>, usize) {
        let deadline = Instant::now() + limit;
        let expected = self.streams_of(user);
        let users = self.users;
        let mut seen = vec![false; self.count];
        let (mut times, mut twice) = (Vec::with_capacity(expected), 0);
        let mut take = |receipt: Receipt, times: &mut Vec<i64>| {
            assert_eq!(
                receipt.subscriber % users,
                user,
                "stream {} of another user received {pending_id}",
                receipt.subscriber
            );
            if std::mem::replace(&mut seen[receipt.subscriber], true) {
                twice += 1;
            } else {
                times.push(receipt.at);
            }
        };
        for receipt in self.early.remove(pending_id).unwrap_or_default() {
            take(receipt, &mut times);
        }
        while times.len() < expected {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.receipts.recv_timeout(left) {
                Ok(receipt) if receipt.pending_id == pending_id => take(receipt, &mut times),
                Ok(receipt) => self
                    .early
                    .entry(receipt.pending_id.clone())
                    .or_default()
                    .push(receipt),
                Err(_) => break,
            }
        }
        (times, twice)
    }
}

/// Who holds the streams of part 2: `streams` of them over `users`,
/// stream `n` belonging to user `n % users`, each user with a session
/// of its own to ask on and a token per [`STREAMS_PER_CREDENTIAL`] of
/// its streams (HTTP-13).
struct Crowd {
    users: Vec<CrowdUser>,
    streams: usize,
}

struct CrowdUser {
    principal: Principal,
    session: String,
    tokens: Vec<String>,
}

impl Crowd {
    /// One user: alice, asking on session `events`. More: users `u0`,
    /// `u1`, … each owning a workspace of their own.
    fn new(inbox: &Clarion, users: usize, streams: usize) -> Crowd {
        let users = users.clamp(1, streams.max(1));
        let crowd_users = (0..users)
            .map(|user| {
                let (principal, session) = if users == 1 {
                    (alice(), "events".to_owned())
                } else {
                    let id = format!("u{user}");
                    let (workspace, task) = (format!("w-{id}"), format!("t-{id}"));
                    inbox
                        .upsert_workspace(WorkspaceUpsert::new(&workspace).owner(&id))
                        .unwrap();
                    inbox
                        .upsert_task(TaskUpsert::new(&task).workspace(&workspace))
                        .unwrap();
                    let session = format!("s-{id}");
                    inbox
                        .upsert_session(SessionUpsert::new(&session, &task))
                        .unwrap();
                    (Principal::user(&id), session)
                };
                if users == 1 {
                    inbox
                        .upsert_session(SessionUpsert::new(&session, "t"))
                        .unwrap();
                }
                let own = (0..streams).filter(|n| n % users == user).count();
                let tokens = (0..own.div_ceil(STREAMS_PER_CREDENTIAL).max(1))
                    .map(|_| inbox.add_token(&principal, "bench events").unwrap().token)
                    .collect();
                CrowdUser {
                    principal,
                    session,
                    tokens,
                }
            })
            .collect();
        Crowd {
            users: crowd_users,
            streams,
        }
    }

    fn user_of(&self, stream: usize) -> &CrowdUser {
        &self.users[stream % self.users.len()]
    }

    fn token_of(&self, stream: usize) -> &str {
        let user = self.user_of(stream);
        &user.tokens[(stream / self.users.len()) / STREAMS_PER_CREDENTIAL]
    }
}

/// Other requests beside the streams (OPS-7): `BYSTANDERS` threads list
/// the first user's pending bundles over HTTP, one request after another,
/// until stopped; their latencies.
struct Bystanders {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Vec<Duration>>>,
}

const BYSTANDERS: usize = 2;

impl Bystanders {
    fn start(base: &str, token: &str) -> Bystanders {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..BYSTANDERS)
            .map(|_| {
                let (stop, url, token) = (
                    stop.clone(),
                    format!("{base}/api/v1/clarification"),
                    token.to_owned(),
                );
                std::thread::spawn(move || {
                    let client = reqwest::blocking::Client::new();
                    let mut latencies = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        let response = client.get(&url).bearer_auth(&token).send();
                        let status = response.map(|r| r.status().as_u16()).unwrap_or(0);
                        assert_eq!(status, 200, "a bystander's list failed");
                        latencies.push(started.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        Bystanders { stop, threads }
    }

    /// Stops them; every latency, sorted.
    fn stop(self) -> Vec<Duration> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all: Vec<Duration> = self
            .threads
            .into_iter()
            .flat_map(|thread| thread.join().unwrap())
            .collect();
        all.sort();
        all
    }
}

/// This program re-run as the other process that asks.
struct Asker(common::Helper);

impl Asker {
    fn start(url: &str) -> Asker {
        Asker(common::Helper::start(ASKER, url))
    }

    /// Asks one bundle in the other process: when (wall clock) its ask
    /// call started, how long it took, and the new bundle's id.
    fn ask(&mut self, session: &str) -> (i64, Duration, String) {
        let line = self.0.request(&format!("ask {session}"));
        let mut parts = line.split_whitespace();
        let started = parts.next().unwrap().parse().unwrap();
        let took = Duration::from_micros(parts.next().unwrap().parse().unwrap());
        (started, took, parts.next().unwrap().to_owned())
    }
}

/// The asking child: for each line `ask <session>` on stdin, asks a
/// bundle on that session and prints the wall-clock start of the call,
/// its duration in microseconds and the bundle's id.
fn asker(url: &str) {
    let inbox = Clarion::open(url).unwrap();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            break;
        };
        let session = line.split_whitespace().nth(1).unwrap_or("events");
        let (started, clock) = (wall_micros(), Instant::now());
        let pending_id = inbox.ask(&two_questions(session)).unwrap().pending_id;
        let took = clock.elapsed().as_micros();
        writeln!(out, "{started} {took} {pending_id}").unwrap();
        out.flush().unwrap();
    }
}

/// One writer's run: latency p50, p99, max over all receipts, the ask
/// call's p50, and how many receipts were missing or doubled.
struct Fanout {
    p50: Duration,
    p99: Duration,
    max: Duration,
    ask_p50: Duration,
    /// Receipts that had not arrived within [`LATE`] (left out of the
    /// percentiles).
    missing: usize,
    twice: usize,
    /// Of the missing, how many arrived later, with a later event of the
    /// same writer.
    late: usize,
}

/// How long a writer waits for every subscriber to receive an event.
const LATE: Duration = Duration::from_secs(5);

/// `events` asks, each for the next user in turn (`ask` is given the
/// user's number), each awaited by that user's streams.
fn fanout(
    subscribers: &mut Subscribers,
    jitter: &mut common::Jitter,
    events: usize,
    mut ask: impl FnMut(usize) -> (i64, Duration, String),
) -> Fanout {
    let (mut latencies, mut asks) = (Vec::new(), Vec::new());
    let (mut missing, mut twice, mut late) = (0, 0, 0);
    let mut missed: Vec<String> = Vec::new();
    for event in 0..events {
        std::thread::sleep(jitter.below(Duration::from_millis(25)));
        let user = event % subscribers.users;
        let expected = subscribers.streams_of(user);
        let (started, took, pending_id) = ask(user);
        asks.push(took);
        // What is still held for this writer's earlier events arrived
        // after their wait ended: late.
        for (pending_id, receipts) in subscribers.early.drain() {
            if missed.contains(&pending_id) {
                late += receipts.len();
            }
        }
        let (times, doubled) = subscribers.collect(&pending_id, user, LATE);
        if times.len() < expected {
            eprintln!(
                "bundle {pending_id}: {} of {expected} subscribers had not received its event {LATE:?} after the ask started",
                expected - times.len(),
            );
        }
        missing += expected - times.len();
        if times.len() < expected {
            missed.push(pending_id.clone());
        }
        twice += doubled;
        latencies.extend(
            times
                .into_iter()
                .map(|at| Duration::from_micros(at.saturating_sub(started).max(0) as u64)),
        );
    }
    latencies.sort();
    asks.sort();
    let at = |p| {
        if latencies.is_empty() {
            Duration::ZERO
        } else {
            percentile(&latencies, p)
        }
    };
    Fanout {
        p50: at(0.5),
        p99: at(0.99),
        max: at(1.0),
        ask_p50: percentile(&asks, 0.5),
        missing,
        twice,
        late,
    }
}

/// Who follows the log in part 2.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Follower {
    Http,
    Rust,
}

/// One kind of subscribers' runs, in this process's writer's and the
/// other process's.
#[derive(Default)]
struct FanoutRuns {
    near: Vec<Fanout>,
    far: Vec<Fanout>,
}

/// Above this many streams the floor (a thread per stream) is not run:
/// thousands of threads measure the scheduler, not the log.
const FLOOR_MAX_THREADS: usize = 2_000;

/// Nor with more users than this: each of the floor's threads reads the
/// log at every commit, so priming one ask per user costs users × streams
/// reads (four million at 2,000 of each), which measures nothing.
const FLOOR_MAX_USERS: usize = 100;

fn events_bench(name: &str, url: &str, inbox: &Clarion, servers: &Servers, runs: usize) {
    let count = common::setting("CLARION_BENCH_SUBSCRIBERS", 100);
    if count == 0 {
        return;
    }
    let events = common::setting("CLARION_BENCH_EVENTS", 20).max(1);
    let crowd = Crowd::new(
        inbox,
        common::setting("CLARION_BENCH_STREAM_USERS", 1),
        count,
    );
    let users = crowd.users.len();
    let bystander = inbox
        .add_token(&crowd.users[0].principal, "bench bystander")
        .unwrap()
        .token;
    let floor = count <= FLOOR_MAX_THREADS && users <= FLOOR_MAX_USERS;
    let mut asker = Asker::start(url);
    let mut jitter = common::Jitter(0x9E37_79B9_7F4A_7C15);
    let (mut http, mut rust) = (FanoutRuns::default(), FanoutRuns::default());
    let (mut beside, mut alone) = (Vec::new(), Vec::new());
    let mut http_missing: Option<String> = None;
    let session_of = |user: usize| crowd.users[user].session.clone();
    // An ask by this process for `user`: when it started, how long it
    // took, the bundle.
    let ask_here = |user: usize| {
        let (started, clock) = (wall_micros(), Instant::now());
        let pending_id = inbox
            .ask(&two_questions(&session_of(user)))
            .unwrap()
            .pending_id;
        (started, clock.elapsed(), pending_id)
    };
    // How far apart the streams' flow asked, for the flow without them.
    let mut spacing = Duration::ZERO;
    for run in 0..runs {
        eprintln!("{name}: SSE fan-out, run {}/{runs}", run + 1);
        // The HTTP streams and the floor take turns, the first alternating.
        let order = if run % 2 == 0 {
            [Follower::Http, Follower::Rust]
        } else {
            [Follower::Rust, Follower::Http]
        };
        for follower in order {
            let connected = match follower {
                Follower::Http if http_missing.is_some() => continue,
                Follower::Rust if !floor => continue,
                Follower::Http => Subscribers::remote(&servers.token, &crowd),
                Follower::Rust => Ok(Subscribers::rust(inbox, &crowd)),
            };
            let mut subscribers = match connected.and_then(|s| s.primed(inbox, &crowd)) {
                Ok(subscribers) => subscribers,
                Err(why) if follower == Follower::Http => {
                    http_missing = Some(why);
                    continue;
                }
                Err(why) => panic!("{why}"),
            };
            eprintln!(
                "{name}: {count} {} primed; the asks begin (this process {})",
                if follower == Follower::Http {
                    "streams"
                } else {
                    "followers"
                },
                std::process::id()
            );
            let window = Instant::now();
            let bystanders =
                (follower == Follower::Http).then(|| Bystanders::start(&servers.token, &bystander));
            let here = fanout(&mut subscribers, &mut jitter, events, ask_here);
            let there = fanout(&mut subscribers, &mut jitter, events, |user| {
                asker.ask(&session_of(user))
            });
            if let Some(bystanders) = bystanders {
                beside.push(bystanders.stop());
                spacing = window.elapsed() / (2 * events) as u32;
            }
            drop(subscribers);
            let label = match follower {
                Follower::Http => "SSE streams",
                Follower::Rust => "Rust API (floor)",
            };
            for (writer, f) in [("this process", &here), ("another process", &there)] {
                println!(
                    "{name:<10} run {}: {count} {label:<16}, asked by {writer:<15}: p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  (ask call p50 {:.2} ms; missing {} (late {}), twice {})",
                    run + 1,
                    ms(f.p50),
                    ms(f.p99),
                    ms(f.max),
                    ms(f.ask_p50),
                    f.missing,
                    f.late,
                    f.twice
                );
            }
            let runs = match follower {
                Follower::Http => &mut http,
                Follower::Rust => &mut rust,
            };
            runs.near.push(here);
            runs.far.push(there);
        }
        // OPS-7: the same flow without streams, for the bystanders: the
        // same asks at the pace the streams' flow had, so both windows
        // are as long and see as many writes.
        let bystanders = Bystanders::start(&servers.token, &bystander);
        let mut nobody = Subscribers::none();
        let mut next_ask = Instant::now();
        let mut paced = |ask: &mut dyn FnMut() -> (i64, Duration, String)| {
            std::thread::sleep(next_ask.saturating_duration_since(Instant::now()));
            next_ask += spacing;
            ask()
        };
        fanout(&mut nobody, &mut jitter, events, |user| {
            paced(&mut || ask_here(user))
        });
        fanout(&mut nobody, &mut jitter, events, |user| {
            paced(&mut || asker.ask(&session_of(user)))
        });
        alone.push(bystanders.stop());
        if let (Some(b), Some(a)) = (beside.last(), alone.last()) {
            println!(
                "{name:<10} run {}: other requests (list, {BYSTANDERS} clients) beside {count} streams p50 {:.2} ms p99 {:.2} ms ({} requests); without streams p50 {:.2} ms p99 {:.2} ms ({} requests); p99 ratio {:.2}x",
                run + 1,
                ms(percentile(b, 0.5)),
                ms(percentile(b, 0.99)),
                b.len(),
                ms(percentile(a, 0.5)),
                ms(percentile(a, 0.99)),
                a.len(),
                percentile(b, 0.99).as_secs_f64() / percentile(a, 0.99).as_secs_f64()
            );
        }
        if let (Some(h), Some(r)) = (http.near.last(), rust.near.last()) {
            if http.near.len() == run + 1 && rust.near.len() == run + 1 {
                let (hf, rf) = (http.far.last().unwrap(), rust.far.last().unwrap());
                println!(
                    "{name:<10} run {}: SSE / Rust p50: asked here {:.2}x, asked by another process {:.2}x",
                    run + 1,
                    h.p50.as_secs_f64() / r.p50.as_secs_f64(),
                    hf.p50.as_secs_f64() / rf.p50.as_secs_f64()
                );
            }
        }
    }
    println!(
        "\n{name}: fan-out, median of {runs} runs; {count} subscribers of {users} user(s), {events} events per writer per run; latency from the start of the ask call to each subscriber's receipt (p50, p99, max over all receipts of a run)"
    );
    if !floor {
        println!("    Rust API (floor): not run above {FLOOR_MAX_THREADS} streams (a thread each) or {FLOOR_MAX_USERS} users");
    }
    if let Some(why) = &http_missing {
        println!(
            "    SSE streams: skipped, the events route is not usable in this build ({})",
            why.trim()
        );
    }
    for (label, kind) in [("SSE streams", &http), ("Rust API (floor)", &rust)] {
        for (writer, runs) in [
            ("asked here", &kind.near),
            ("asked by another process", &kind.far),
        ] {
            if runs.is_empty() {
                continue;
            }
            let pick = |f: fn(&Fanout) -> Duration| median(runs.iter().map(f).collect());
            println!(
                "    {label:<16} {writer:<25} p50 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   (ask call p50 {:.2} ms; missing {} (late {}), twice {})",
                ms(pick(|f| f.p50)),
                ms(pick(|f| f.p99)),
                ms(pick(|f| f.max)),
                ms(pick(|f| f.ask_p50)),
                runs.iter().map(|f| f.missing).sum::<usize>(),
                runs.iter().map(|f| f.late).sum::<usize>(),
                runs.iter().map(|f| f.twice).sum::<usize>(),
            );
        }
    }
    if !beside.is_empty() {
        let pick = |runs: &[Vec<Duration>], p: f64| {
            median(runs.iter().map(|l| percentile(l, p)).collect())
        };
        let ratios: Vec<f64> = beside
            .iter()
            .zip(&alone)
            .map(|(b, a)| percentile(b, 0.99).as_secs_f64() / percentile(a, 0.99).as_secs_f64())
            .collect();
        println!(
            "    other requests (list): beside the streams p50 {:.2} ms p99 {:.2} ms; without streams p50 {:.2} ms p99 {:.2} ms; p99 ratio {:.2}x (per run: {})",
            ms(pick(&beside, 0.5)),
            ms(pick(&beside, 0.99)),
            ms(pick(&alone, 0.5)),
            ms(pick(&alone, 0.99)),
            median_f64(ratios.clone()),
            ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(" ")
        );
    }
    if !http.near.is_empty() && !rust.near.is_empty() {
        let ratios = |h: &[Fanout], r: &[Fanout]| {
            summarized(
                h.iter()
                    .zip(r)
                    .map(|(h, r)| h.p50.as_secs_f64() / r.p50.as_secs_f64())
                    .collect(),
            )
        };
        let (near, near_text) = ratios(&http.near, &rust.near);
        let (far, far_text) = ratios(&http.far, &rust.far);
        println!(
            "    ratio SSE / Rust (p50 latency): asked here {near:.2}x (per run: {near_text}); asked by another process {far:.2}x (per run: {far_text})"
        );
    }
}

/// Thousands of streams hold a descriptor each in this process (the
/// server's end) and in the streams child (the client's): the soft limit
/// goes up to the hard one, as `clarion serve` does for itself.
fn raise_descriptor_limit() {
    let (soft, hard) = http::descriptor_limits();
    if soft < hard {
        let limit = libc::rlimit {
            rlim_cur: hard as libc::rlim_t,
            rlim_max: hard as libc::rlim_t,
        };
        // SAFETY: setrlimit reads the struct it is given, nothing else.
        let raised = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } == 0;
        eprintln!(
            "descriptor limit {soft} -> {hard}: {}",
            if raised { "raised" } else { "not raised" }
        );
    }
}

/// The machine and the command, printed first (OPS-2: results record
/// where they ran).
fn print_machine() {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|line| line.starts_with("model name"))
        .and_then(|line| line.split_once(':'))
        .map_or("unknown CPU", |(_, model)| model.trim());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "machine: {cpus} CPUs available, {model}; load average {}",
        load.trim()
    );
    let settings: Vec<String> = std::env::vars()
        .filter(|(key, _)| key.starts_with("CLARION_BENCH") || key == "CLARION_TEST_DATABASE_URL")
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    println!(
        "command: {}{} (features: postgres {})",
        settings.iter().map(|s| format!("{s} ")).collect::<String>(),
        std::env::args().collect::<Vec<_>>().join(" "),
        if cfg!(feature = "postgres") {
            "on"
        } else {
            "off"
        }
    );
}

fn main() {
    if let Ok(url) = std::env::var(ASKER) {
        asker(&url);
        return;
    }
    if let Ok(base) = std::env::var(STREAMS) {
        streams_child(&base);
        return;
    }
    print_machine();
    raise_descriptor_limit();
    let runs = common::runs(3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("client")
        .enable_all()
        .build()
        .expect("client runtime");
    for (name, place_for) in common::backends() {
        let place = place_for("http");
        // As `clarion serve` opens it: the defaults.
        let inbox = Clarion::open(&place.url).expect("open");
        inbox
            .upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))
            .unwrap();
        inbox
            .upsert_task(TaskUpsert::new("t").workspace("w"))
            .unwrap();
        inbox.upsert_session(SessionUpsert::new("s", "t")).unwrap();
        let servers = Servers::start(&inbox);
        requests_bench(name, &inbox, &servers, &runtime, runs);
        events_bench(name, &place.url, &inbox, &servers, runs);
        drop(servers);
        inbox.close();
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average at the end: {}", load.trim());
    common::print_peak_memory();
}
