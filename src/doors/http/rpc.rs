//! `POST /api/v1/rpc/{op}` (HTTP-2): any WIRE-5 operation, its body
//! exactly the operation's `args`, its principal the authenticated one.

use axum::extract::State;
use serde_json::Value;

use crate::doors::envelope::{self, Envelope};
use crate::doors::http::caller::Caller;
use crate::doors::http::input::Input;
use crate::doors::http::state::AppState;
use crate::doors::http::wait;
use crate::error::{Error, ValidationError};
use crate::rules::capability::Operation;

/// The body as WIRE-5 `args`. The principal always comes from
/// authentication: a `principal` member is refused, never ignored.
fn args(input: &Input) -> Result<Value, ValidationError> {
    input.no_query()?;
    let value = input.value()?;
    if value.get("principal").is_some() {
        return Err(ValidationError::new(
            "principal",
            "not allowed in the body: the principal comes from authentication",
        ));
    }
    Ok(value)
}

/// Any WIRE-5 operation (WIRE-5's order of checks; waits as HTTP-5 says).
#[utoipa::path(
    post,
    path = "/api/v1/rpc/{op}",
    operation_id = "rpc",
    tag = "rpc",
    params(("op" = String, Path, description = "A WIRE-5 operation, e.g. `list_pending`, `resolve_bundle`, `ask`.")),
    request_body(content = Option<Object>, description = "Exactly the operation's WIRE-5 `args` (none means `{}`); no `principal`.", content_type = "application/json"),
    responses(
        (status = 200, description = "The operation's WIRE-1..3 body."),
        (status = 400, description = "Unknown operation, a `principal` member, or invalid arguments."),
        (status = 403, description = "Capability denied."),
    )
)]
pub(crate) async fn call(State(state): State<AppState>, caller: Caller, input: Input) -> Envelope {
    let op = match input.id("op") {
        Ok(op) => op,
        Err(error) => return envelope::error(&Error::Validation(error)),
    };
    // The request envelope before the capability (WIRE-5): an unknown op
    // is a 400 for everyone. `metrics` is no WIRE-5 operation.
    let Some(operation) = Operation::parse(&op).filter(|op| *op != Operation::Metrics) else {
        let error = ValidationError::new("op", format!("unknown operation {op:?}"));
        return envelope::error(&Error::Validation(error));
    };
    let args = args(&input);
    match operation {
        Operation::WaitBundle => wait::wait_bundle(&state, &caller.principal, args).await,
        Operation::Wait => wait::wait(&state, &caller.principal, args).await,
        _ => state.call(&caller.principal, operation, args).await,
    }
}
