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

use std::future::Future;

use serde_json::Value;

use crate::domain::engine::waiters::Wake;
use crate::doors::drive::{BlockingPool, Driver};
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::caller::Caller;
use crate::doors::http::error::HttpError;
use crate::doors::http::state::AppState;
use crate::doors::operations::Entry;
use crate::error::Error;
use crate::rules::vocabulary::Channel;

/// Drives one wait to its end: `begin` registers it on the blocking gate,
/// then [`Driver::run`] checks it there whenever its callback fires, its
/// poll interval passes (only when the handle's watcher could not start),
/// a keep-alive interval passes, the credential ends, or WAIT-5's check is
/// due; the deadline ends it, the shutdown answers `503`. Before each
/// check after the first, the credential must still name the caller
/// (HTTP-10), else the wait answers `401`.
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
    let driver = Driver::new(state);
    let (principal, wake) = (caller.principal.clone(), Wake::new(driver.waker()));
    let (engine, bounds) = (state.engine.clone(), state.options.wait_bounds());
    let begun = state
        .blocking(move |_| begin(&engine, &principal, Channel::Http, &args, bounds, wake))
        .await;
    let pending = match begun {
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
    let shutdown = state.options.shutdown.clone();
    let _in_flight = state.metrics.wait_started();
    // A failed blocking call answers as its envelope would: the gate's
    // errors (503, 500) carry no header of their own.
    driver
        .cap_at(deadline)
        .stop_when(async move {
            shutdown.begun().await;
            HttpError::ShuttingDown
        })
        // HTTP-10: the credential was checked as the request came in; again
        // before each later check, at least once per keep-alive interval,
        // and at its end (a session's expiry).
        .before_recheck(move || still_signed_in(state, caller))
        .recheck_every(state.options.keep_alive)
        .wake_at(ends)
        .run(pending)
        .await
}

/// HTTP-10: `401` once the request's credential no longer names the caller.
async fn still_signed_in(state: &AppState, caller: &Caller) -> Result<(), HttpError> {
    match caller.still_signed_in(state).await? {
        true => Ok(()),
        false => Err(HttpError::AuthenticationRequired),
    }
}

/// The door's bounded gate is where a wait's reads run.
impl BlockingPool for AppState {
    type Error = HttpError;

    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> impl Future<Output = Result<T, HttpError>> + Send {
        self.blocking(move |_| work())
    }
}
