//! Every wait the HTTP door serves (HTTP-5): `GET …/wait` and the `/rpc`
//! operations `wait_bundle` and `wait`, one async function per kind. A
//! wait defaults to 25 s and is cut at 55 s, answers `503` as soon as the
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

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

use crate::domain::delivery::wait::{Checked, PendingWait, Waiter};
use crate::domain::engine::waiters::Wake;
use crate::domain::engine::Engine;
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::error::HttpError;
use crate::doors::http::state::AppState;
use crate::doors::json::Fields;
use crate::error::{Error, ValidationError};
use crate::rules::capability::{has_capability, Operation};
use crate::rules::limits::{wait_time, HTTP_WAIT};
use crate::rules::principal::Principal;

/// `{pending_id, timeout_ms}`, checked as the JSON door checks them
/// (WIRE-5); returns the id and the timeout the caller asked for (WAIT-1's
/// cap applied, not yet HTTP-5's; the default never beyond the door's cap).
fn arguments(args: &Value, cap: Duration) -> Result<(String, Duration), ValidationError> {
    let no_args = Value::Object(Default::default());
    let args = if args.is_null() { &no_args } else { args };
    let fields = Fields::top(args, "args")?;
    fields.only(&["pending_id", "timeout_ms"])?;
    let pending_id = fields.id("pending_id")?.to_owned();
    let asked = match fields.integer("timeout_ms")? {
        None => HTTP_WAIT.default.min(cap),
        Some(ms) if ms < 0 => {
            return Err(ValidationError::new("timeout_ms", "must not be negative"))
        }
        Some(ms) => wait_time(Duration::from_millis(ms as u64)),
    };
    Ok((pending_id, asked))
}

/// The capability, then the arguments (WIRE-5's order).
fn admitted(
    state: &AppState,
    principal: &Principal,
    operation: Operation,
    args: Result<Value, ValidationError>,
) -> Result<(String, Duration), Envelope> {
    if !has_capability(principal, operation) {
        return Err(envelope::error(&Error::CapabilityDenied));
    }
    args.and_then(|args| arguments(&args, state.options.wait_cap))
        .map_err(|error| envelope::error(&Error::Validation(error)))
}

/// Drives one wait to its end: `begin` registers it (on the blocking
/// pool), then each `check` runs there too, and between checks the task
/// sleeps until the wait's callback fires, its poll interval passes (only
/// when the handle's watcher could not start), the deadline comes, or the
/// shutdown begins. `cut`: the deadline is the door's cap, not the
/// caller's own timeout.
async fn drive<T: Send + 'static>(
    state: &AppState,
    timeout: Duration,
    cut: bool,
    begin: impl FnOnce(&Engine, Arc<Wake>) -> Result<Waiter<T>, Error> + Send + 'static,
) -> Result<T, HttpError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let shutdown = state.options.shutdown.clone();
    let woken = Arc::new(Notify::new());
    // `notify_one` keeps a wake that comes while a check runs, so the next
    // wait for it returns at once and the change is read (WAIT-3).
    let wake = {
        let woken = woken.clone();
        Wake::new(move || woken.notify_one())
    };
    let engine = state.engine.clone();
    let mut pending = state
        .blocking(move |_| {
            begin(&engine, wake).map(|waiter| PendingWait::new(engine.clone(), waiter))
        })
        .await??;
    let _in_flight = state.metrics.wait_started();
    loop {
        pending = match state.blocking(move |_| pending.check()).await?? {
            Checked::Over(outcome) => return Ok(outcome),
            Checked::Waiting(pending) => pending,
        };
        let poll = pending.poll_interval().unwrap_or(timeout);
        tokio::select! {
            biased;
            () = shutdown.begun() => return Err(HttpError::ShuttingDown),
            () = tokio::time::sleep_until(deadline) => {
                let ended = state
                    .blocking(move |_| if cut { pending.capped() } else { pending.timed_out() })
                    .await??;
                return Ok(ended);
            }
            () = woken.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
    }
}

/// WIRE-3 `wait_bundle` over HTTP (`GET …/wait`, `/rpc/wait_bundle`). Its
/// cap and the caller's timeout end it alike (504): an external wait
/// detaches nothing either way.
pub(crate) async fn wait_bundle(
    state: &AppState,
    principal: &Principal,
    args: Result<Value, ValidationError>,
) -> Envelope {
    let (pending_id, asked) = match admitted(state, principal, Operation::WaitBundle, args) {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let timeout = asked.min(state.options.wait_cap);
    let principal = principal.clone();
    let waited = drive(state, timeout, false, move |engine, wake| {
        engine.begin_wait_bundle(&principal, &pending_id, Some(wake))
    })
    .await;
    match waited {
        Ok(resolved) => envelope::resolved(&resolved),
        Err(error) => error.envelope(),
    }
}

/// WAIT-1, the agent side, over `/rpc/wait` (a host operation). WAIT-1b:
/// when the caller asked for more than the door's cap, the cap ends the
/// wait with `timed_out` and the bundle stays attached; only a wait that
/// reaches the caller's own timeout may detach it.
pub(crate) async fn wait(
    state: &AppState,
    principal: &Principal,
    args: Result<Value, ValidationError>,
) -> Envelope {
    let (pending_id, asked) = match admitted(state, principal, Operation::Wait, args) {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let timeout = asked.min(state.options.wait_cap);
    let cut = asked > timeout;
    let waited = drive(state, timeout, cut, move |engine, wake| {
        engine.begin_wait(&pending_id, Some(wake))
    })
    .await;
    match waited {
        Ok(outcome) => envelope::waited(&outcome),
        Err(error) => error.envelope(),
    }
}
