//! Mounting clarion's HTTP API (HTTP-1) under `/inbox` in a host's own
//! axum application, with the host's own authentication.
//!
//! ```text
//! cargo run --example mount --features http
//! curl -H 'x-demo-user: alice' http://127.0.0.1:3000/inbox/api/v1/summary
//! ```
//!
//! The host decides who is calling (here, naively, from a header its own
//! proxy would set); clarion decides what that principal may see and do.

use axum::http::request::Parts;
use axum::response::Redirect;
use axum::routing::get;
use axum::Router;
use clarion::http::{self, Authentication, Authenticator, HttpOptions, ServeOptions, Shutdown};
use clarion::{Clarion, Principal, WorkspaceUpsert};

/// The host's authentication: its session layer already knows the user.
/// A real host would check its own session cookie or API key here; this
/// runs on clarion's blocking pool, so it may read a database.
struct HostAuth;

impl Authenticator for HostAuth {
    fn authenticate(&self, request: &Parts) -> Authentication {
        match request
            .headers
            .get("x-demo-user")
            .and_then(|value| value.to_str().ok())
        {
            Some("") => Authentication::Invalid,
            Some(user) => Authentication::Bearer(Principal::user(user)),
            None => Authentication::Missing,
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join("clarion-mount-example");
    std::fs::create_dir_all(&dir)?;
    // EXP-4: a host that mounts the router turns the deadline sweeper on,
    // as `clarion serve` does, so deadlines settle with nobody calling.
    let inbox = Clarion::builder(&dir.join("inbox.db").display().to_string())
        .sweep_deadlines(std::time::Duration::from_millis(250))
        .open()?;
    inbox.upsert_workspace(WorkspaceUpsert::new("w").owner("alice"))?;

    let shutdown = Shutdown::new();
    let options = HttpOptions::new().shutdown(shutdown.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // The router runs library calls (and the brief checks of waits) on
        // blocking threads, at most `max_calls` at once.
        .max_blocking_threads(options.blocking_threads() + 8)
        .enable_all()
        .build()?;
    let app = Router::new()
        .route("/", get(|| async { "the host's own page" }))
        // The slash puts the page at `/inbox/`, where its modules'
        // relative paths resolve (axum nests `/` at exactly the prefix).
        .nest("/inbox/", http::router(inbox, HostAuth, options))
        .route("/inbox", get(|| async { Redirect::permanent("/inbox/") }));

    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
        println!("listening on http://{}", listener.local_addr()?);
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.begin();
        });
        // axum::serve works as well; clarion's own loop adds the
        // header-read timeout and the graceful stop of HTTP-8.
        http::serve(listener, app, shutdown, ServeOptions::new()).await?;
        Ok(())
    })
}
