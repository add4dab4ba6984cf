//! Every wait the HTTP door serves (HTTP-5): `GET …/wait` and the `/rpc`
//! operations `wait_bundle` and `wait` — any operation whose declaration
//! waits. A wait takes the door's bounds (25 s by default, cut at 55 s:
//! `HTTP_WAIT`, or [`HttpOptions::wait_cap`]), answers `503` as soon as the
//! server begins shutting down (HTTP-8), and counts as a wait in flight
//! (HTTP-7).
//!
//! A wait holds no thread: it is the library's `PendingWait`, checked on
//! the blocking pool at once and again whenever its callback fires (a
//! commit of this handle, the watcher seeing another process's), and in
//! between it is only a sleeping task. A client that goes away drops the
//! task and with it the wait, which detaches nothing (WAIT-1b); so does a
//! wait the door cuts at its cap (`capped`). Only the caller's own timeout
//! ends an agent-side wait with `timed_out`, which may detach (WAIT-1).
//!
//! [`HttpOptions::wait_cap`]: crate::doors::http::HttpOptions::wait_cap

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Notify;

use crate::domain::engine::waiters::Wake;
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::caller::Caller;
use crate::doors::http::error::HttpError;
use crate::doors::http::state::AppState;
use crate::doors::operations::{Entry, Step};
use crate::error::Error;
use crate::rules::vocabulary::Channel;

/// Drives one wait to its end: `begin` registers it (on the blocking
/// pool), then each check runs there too, and between checks the task
/// sleeps until the wait's callback fires, its poll interval passes (only
/// when the handle's watcher could not start), a keep-alive interval
/// passes, the credential ends, the deadline comes, or the shutdown
/// begins. Before each check after the first, the credential must still
/// name the caller (HTTP-10), else the wait answers `401`.
pub(crate) async fn drive(
    state: &AppState,
    entry: &'static Entry,
    caller: &Caller,
    args: Value,
) -> Result<Envelope, HttpError> {
    let Some(begin) = entry.begin_wait else {
        return Ok(envelope::error(&Error::Internal(format!(
            "{} does not wait",
            entry.name
        ))));
    };
    let principal = caller.principal.clone();
    let shutdown = state.options.shutdown.clone();
    let woken = Arc::new(Notify::new());
    // `notify_one` keeps a wake that comes while a check runs, so the next
    // wait for it returns at once and the change is read (WAIT-3).
    let wake = {
        let woken = woken.clone();
        Wake::new(move || woken.notify_one())
    };
    let engine = state.engine.clone();
    let bounds = state.options.wait_bounds();
    let begun = state
        .blocking(move |_| begin(&engine, &principal, Channel::Http, &args, bounds, wake))
        .await;
    let mut pending = match begun {
        Ok(Ok(pending)) => pending,
        Ok(Err(refused)) => return Ok(refused),
        Err(error) => return Ok(error.envelope()),
    };
    let deadline = tokio::time::Instant::now() + pending.timeout;
    let ends = caller
        .lasts(state)
        .await?
        .map(|left| tokio::time::Instant::now() + left)
        .filter(|ends| *ends < deadline);
    let keep_alive = state.options.keep_alive;
    let _in_flight = state.metrics.wait_started();
    // The credential was checked as the request came in.
    let mut checked = true;
    loop {
        if !checked && !caller.still_signed_in(state).await? {
            return Err(HttpError::AuthenticationRequired);
        }
        checked = false;
        pending = match state.blocking(move |_| pending.check()).await {
            Ok(Step::Over(over)) => return Ok(over),
            Ok(Step::Waiting(pending)) => pending,
            Err(error) => return Ok(error.envelope()),
        };
        let poll = pending.poll_interval().unwrap_or(pending.timeout);
        let ends = ends.filter(|at| *at > tokio::time::Instant::now());
        // WAIT-5: a check at the bundle's deadline, which settles it.
        let due = pending.next_check().map(tokio::time::Instant::from_std);
        tokio::select! {
            biased;
            () = shutdown.begun() => return Err(HttpError::ShuttingDown),
            () = tokio::time::sleep_until(deadline) => {
                return Ok(state
                    .blocking(move |_| pending.end())
                    .await
                    .unwrap_or_else(|error| error.envelope()));
            }
            () = woken.notified() => {}
            () = tokio::time::sleep(poll) => {}
            // HTTP-10: a check at least once per keep-alive interval, and
            // at the credential's end.
            () = tokio::time::sleep(keep_alive) => {}
            () = sleep_until(ends), if ends.is_some() => {}
            () = sleep_until(due), if due.is_some() => {}
        }
    }
}

/// Sleeps until `at`; never wakes when there is no `at`.
pub(crate) async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
