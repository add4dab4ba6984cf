//! Every wait the HTTP door serves (HTTP-5): `GET …/wait` and the `/rpc`
//! operations `wait_bundle` and `wait`, one async function per kind. A
//! wait defaults to 25 s and is cut at 55 s, answers `503` as soon as the
//! server begins shutting down (HTTP-8), and counts as a wait in flight
//! (HTTP-7).
//!
//! For now each wait holds one blocking thread running the library's
//! synchronous wait, bounded by `max_waits`; a client that goes away does
//! not end it before its timeout. The insides of [`wait_bundle`] and
//! [`wait`] are meant to be swapped for a wait that holds no thread; their
//! signatures stay.

use std::time::Duration;

use serde_json::Value;

use crate::domain::delivery::waiters::AgentWait;
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::error::HttpError;
use crate::doors::http::AppState;
use crate::doors::json::Fields;
use crate::error::{Error, ValidationError};
use crate::rules::capability::{has_capability, Operation};
use crate::rules::limits::wait_time;
use crate::rules::principal::Principal;

/// HTTP-5: a wait over HTTP when the caller names no timeout.
pub const DEFAULT_WAIT: Duration = Duration::from_millis(25_000);
/// HTTP-5: the longest wait over HTTP; longer ones are cut to it.
pub const MAX_WAIT: Duration = Duration::from_millis(55_000);

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
        None => DEFAULT_WAIT.min(cap),
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

/// Runs a blocking wait of at most `timeout`, holding a place of
/// `max_waits`; ends with `503` when the shutdown begins first, and with
/// `timed_out()` when no place frees up within the timeout.
async fn blocking_wait(
    state: &AppState,
    timeout: Duration,
    timed_out: impl FnOnce() -> Envelope,
    body: impl FnOnce() -> Envelope + Send + 'static,
) -> Envelope {
    let shutdown = state.options.shutdown.clone();
    let place = tokio::select! {
        place = tokio::time::timeout(timeout, state.waits.clone().acquire_owned()) => place,
        () = shutdown.begun() => return HttpError::ShuttingDown.envelope(),
    };
    let place = match place {
        Ok(Ok(place)) => place,
        Ok(Err(_)) => return HttpError::ShuttingDown.envelope(),
        Err(_elapsed) => return timed_out(),
    };
    let _in_flight = state.metrics.wait_started();
    let waiting = tokio::task::spawn_blocking(move || {
        let _place = place;
        body()
    });
    tokio::select! {
        joined = waiting => joined.unwrap_or_else(|error| {
            HttpError::internal(format!("a wait failed: {error}")).envelope()
        }),
        () = shutdown.begun() => HttpError::ShuttingDown.envelope(),
    }
}

/// WIRE-3 `wait_bundle` over HTTP (`GET …/wait`, `/rpc/wait_bundle`).
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
    let core = state.core.clone();
    let principal = principal.clone();
    blocking_wait(
        state,
        timeout,
        || envelope::error(&Error::TimedOut),
        move || match core.wait_bundle(&principal, &pending_id, timeout) {
            Ok(resolved) => envelope::resolved(&resolved),
            Err(error) => envelope::error(&error),
        },
    )
    .await
}

/// WAIT-1, the agent side, over `/rpc/wait` (a host operation).
///
/// WAIT-1b: only the caller's own timeout detaches. When the caller asked
/// for more than HTTP-5's 55 s, the wait is cut at 55 s and must leave the
/// bundle attached, so for the length of the cut wait the door counts one
/// more agent waiting on the bundle: the library's wait then never finds
/// itself the last one, and does not detach. (A side effect: an agent of
/// this process whose own timeout ends during those 55 s does not detach
/// either; the attachment lease, DEL-3, then decides.) A client that goes
/// away does not end the wait before its timeout yet.
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
    let core = state.core.clone();
    blocking_wait(
        state,
        timeout,
        || envelope::waited(&crate::domain::model::WaitOutcome::TimedOut),
        move || {
            let held = cut.then(|| AgentWait::arrive(&core.database, &pending_id));
            let outcome = core.wait(&pending_id, timeout);
            if let Some(held) = held {
                held.depart();
            }
            match outcome {
                Ok(outcome) => envelope::waited(&outcome),
                Err(error) => envelope::error(&error),
            }
        },
    )
    .await
}
