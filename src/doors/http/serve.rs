//! Serving a router on a listener (HTTP-8, HTTP-9, HTTP-12, PROD-5):
//! hyper's HTTP/1 connections with a header-read timeout (a client that
//! never finishes its headers is disconnected), a deadline for receiving
//! each request, headers and body, from its first byte (late headers get
//! `408`, see `deadline.rs`), a cap on open connections, and a graceful
//! stop: on [`Shutdown::begin`] no more connections are accepted, idle
//! ones close, and requests in flight get the grace period to finish.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::doors::http::deadline::{Clock, ClockedStream, Tracked};
use crate::doors::http::options::Shutdown;

/// Descriptors kept free beside the connections (HTTP-12): the database,
/// the watcher, logs and files.
pub const RESERVED_DESCRIPTORS: u64 = 256;

/// How [`serve`] treats connections; builder-style.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    header_read_timeout: Duration,
    request_timeout: Duration,
    max_connections: Option<usize>,
    grace_period: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_connections: None,
            grace_period: Duration::from_secs(10),
        }
    }
}

impl ServeOptions {
    /// Defaults: 10 s to send a request's headers, 30 s to receive it
    /// whole, as many connections as the descriptor limit allows less
    /// 256, 10 s of grace.
    pub fn new() -> ServeOptions {
        ServeOptions::default()
    }

    /// How long receiving a request may take, headers and body, counted
    /// from its first byte (HTTP-12, PROD-5): past it the server answers
    /// `408` and closes the connection. A connection that sends nothing
    /// for as long (after it opened or after a response) is closed. It
    /// never cuts an operation that has begun, a wait or an event stream.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How many connections may be open at once (HTTP-12); at the cap the
    /// server accepts nothing until one closes (new clients wait in the
    /// listen backlog). Idle keep-alive connections count, and close after
    /// the header timeout or the request timeout, whichever is shorter. Default: the soft descriptor limit less 256;
    /// this library never changes a process limit.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = Some(connections.max(1));
        self
    }

    /// How long a client may take to send a request's headers before its
    /// connection is closed (HTTP-9, slow clients).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long requests in flight may take to finish once the shutdown
    /// began (HTTP-8).
    pub fn grace_period(mut self, grace: Duration) -> Self {
        self.grace_period = grace;
        self
    }
}

/// The process's soft and hard limits on open descriptors
/// (`RLIMIT_NOFILE`); very large when unknown.
pub fn descriptor_limits() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return (u64::MAX, u64::MAX);
    }
    // `rlim_t` is u64 on Linux, not on every platform.
    #[allow(clippy::useless_conversion)]
    let limits = (u64::from(limit.rlim_cur), u64::from(limit.rlim_max));
    limits
}

/// HTTP-12: how many connections a descriptor limit leaves room for.
pub fn connections_allowed(limit: u64) -> usize {
    usize::try_from(limit.saturating_sub(RESERVED_DESCRIPTORS).max(1))
        .unwrap_or(usize::MAX)
        .min(Semaphore::MAX_PERMITS)
}

/// Serves `app` on `listener` until `shutdown` begins, then stops
/// accepting and waits up to the grace period for requests in flight.
/// Give the router the same `shutdown` ([`super::HttpOptions::shutdown`]),
/// so open waits answer `503` at once instead of holding the grace period.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: Shutdown,
    options: ServeOptions,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    let cap = options
        .max_connections
        .unwrap_or_else(|| connections_allowed(descriptor_limits().0));
    let places = Arc::new(Semaphore::new(cap));
    let request_timeout = options.request_timeout;
    loop {
        // HTTP-12: at the cap, accept nothing until a connection closes.
        let place = tokio::select! {
            place = places.clone().acquire_owned() => match place {
                Ok(place) => place,
                Err(_) => break,
            },
            () = shutdown.begun() => break,
        };
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _peer)) => stream,
                    Err(error) => {
                        // Out of descriptors and the like: pause instead of
                        // spinning, then accept again.
                        tracing::warn!(%error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                // PROD-5: the stream counts each request's deadline from
                // its first byte; the service tells it when the headers
                // are in and when the response is over.
                let clock = Arc::new(Clock::default());
                let service = Tracked::new(
                    TowerToHyperService::new(app.clone()),
                    clock.clone(),
                    request_timeout,
                );
                let stream = ClockedStream::new(stream, clock, request_timeout);
                let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    let _place = place;
                    if let Err(error) = connection.await {
                        tracing::debug!(%error, "connection ended");
                    }
                });
            }
            () = shutdown.begun() => break,
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(options.grace_period) => {
            tracing::warn!("grace period over; closing the connections left");
        }
    }
    Ok(())
}
