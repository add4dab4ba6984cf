//! Serving a router on a listener (HTTP-8, HTTP-9): hyper's HTTP/1
//! connections with a header-read timeout (a client that never finishes its
//! headers is disconnected), and a graceful stop: on [`Shutdown::begin`]
//! no more connections are accepted, idle ones close, and requests in
//! flight get the grace period to finish.

use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use crate::doors::http::options::Shutdown;

/// How [`serve`] treats connections; builder-style.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    header_read_timeout: Duration,
    grace_period: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_read_timeout: Duration::from_secs(10),
            grace_period: Duration::from_secs(10),
        }
    }
}

impl ServeOptions {
    /// Defaults: 10 s to send a request's headers, 10 s of grace.
    pub fn new() -> ServeOptions {
        ServeOptions::default()
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
    loop {
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
                let service = TowerToHyperService::new(app.clone());
                let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
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
