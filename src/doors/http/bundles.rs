//! `/api/v1/clarification…` (HTTP-2): the inbox's bundles. Each handler
//! turns its path, query and body into WIRE-5 arguments and calls the one
//! JSON door, so the bytes are WIRE-1..3's. The four per-bundle paths are
//! the seed's, so clients written against them keep working.

use axum::extract::State;
use serde_json::Value;

use crate::doors::envelope::Envelope;
use crate::doors::http::caller::Caller;
use crate::doors::http::input::{Input, Kind};
use crate::doors::http::state::AppState;
use crate::doors::http::wait;
use crate::error::ValidationError;
use crate::rules::capability::Operation;

/// The bundle's id in the path, added to the body's arguments; the same
/// id in the body too is refused, so the path alone names the bundle.
fn with_path_id(input: &Input, body: bool) -> Result<Value, ValidationError> {
    input.no_query()?;
    let mut args = if body {
        input.object()?
    } else {
        Default::default()
    };
    if args.contains_key("pending_id") {
        return Err(ValidationError::new(
            "pending_id",
            "given in the path; not allowed in the body",
        ));
    }
    args.insert("pending_id".into(), input.id("pending_id")?.into());
    Ok(Value::Object(args))
}

/// LIST-1..10: one page of the caller's inbox, oldest first.
#[utoipa::path(
    get,
    path = "/api/v1/clarification",
    operation_id = "list_pending",
    tag = "clarification",
    params(
        ("workspace_id" = Option<String>, Query, description = "Only this workspace's bundles."),
        ("created_since" = Option<String>, Query, description = "RFC 3339; bundles created at or after it."),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page."),
        ("limit" = Option<i64>, Query, description = "Page size: default 50, at most 200."),
    ),
    responses(
        (status = 200, description = "LIST-5: `{bundles, count, next_cursor}`."),
        (status = 400, description = "An argument or query parameter is invalid, unknown or repeated."),
        (status = 401, description = "No valid credential."),
        (status = 403, description = "Capability denied."),
    )
)]
pub(crate) async fn list(State(state): State<AppState>, caller: Caller, input: Input) -> Envelope {
    let args = input
        .query(&[
            ("workspace_id", Kind::Text),
            ("created_since", Kind::Text),
            ("cursor", Kind::Text),
            ("limit", Kind::Integer),
        ])
        .map(Value::Object);
    state
        .call(&caller.principal, Operation::ListPending, args)
        .await
}

/// ASK-1..5: asks a bundle on a session (a host operation: `system` only).
#[utoipa::path(
    post,
    path = "/api/v1/clarification/request",
    tag = "clarification",
    request_body(content = Object, description = "The WIRE-5 `ask` arguments: `session_id`, `questions`, `context`, `kind`, `idempotency_key`.", content_type = "application/json"),
    responses(
        (status = 200, description = "WIRE-3: `{pending_id, created}`."),
        (status = 400, description = "Validation failure naming the field."),
        (status = 403, description = "Capability denied (not `system`)."),
        (status = 404, description = "Session not found."),
        (status = 409, description = "Session has ended."),
    )
)]
pub(crate) async fn ask(State(state): State<AppState>, caller: Caller, input: Input) -> Envelope {
    let args = input
        .no_query()
        .and_then(|()| input.object())
        .map(Value::Object);
    state.call(&caller.principal, Operation::Ask, args).await
}

/// WIRE-3 `get_bundle`: one bundle in any status, from durable state.
#[utoipa::path(
    get,
    path = "/api/v1/clarification/{pending_id}",
    operation_id = "get_bundle",
    tag = "clarification",
    params(("pending_id" = String, Path, description = "The bundle.")),
    responses(
        (status = 200, description = "The LIST-6 element with `status` and `response`."),
        (status = 404, description = "Unknown, foreign or hidden bundle (AUTH-5)."),
    )
)]
pub(crate) async fn get(State(state): State<AppState>, caller: Caller, input: Input) -> Envelope {
    let args = with_path_id(&input, false);
    state
        .call(&caller.principal, Operation::GetBundle, args)
        .await
}

/// WIRE-3 `wait_bundle`: waits for the bundle's resolution (HTTP-5:
/// default 25 s, at most 55 s).
#[utoipa::path(
    get,
    path = "/api/v1/clarification/{pending_id}/wait",
    operation_id = "wait_bundle",
    tag = "clarification",
    params(
        ("pending_id" = String, Path, description = "The bundle."),
        ("timeout_ms" = Option<i64>, Query, description = "Default 25000; above 55000 is 55000."),
    ),
    responses(
        (status = 200, description = "The resolved envelope, `claimed: false`."),
        (status = 404, description = "Unknown, foreign or hidden bundle."),
        (status = 409, description = "No longer active without a resolution."),
        (status = 503, description = "The server is shutting down."),
        (status = 504, description = "The timeout passed first."),
    )
)]
pub(crate) async fn wait(State(state): State<AppState>, caller: Caller, input: Input) -> Envelope {
    let args = input
        .query(&[("timeout_ms", Kind::Integer)])
        .and_then(|mut args| {
            args.insert("pending_id".into(), input.id("pending_id")?.into());
            Ok(Value::Object(args))
        });
    wait::wait_bundle(&state, &caller.principal, args).await
}

/// §8 `resolve_bundle`: answers or rejects. Exactly one caller claims it;
/// every other gets the winner's status and response, `claimed: false`.
#[utoipa::path(
    post,
    path = "/api/v1/clarification/{pending_id}/respond",
    operation_id = "resolve_bundle",
    tag = "clarification",
    params(("pending_id" = String, Path, description = "The bundle.")),
    request_body(content = Object, description = "`{answers, rejected, reject_reason}`.", content_type = "application/json"),
    responses(
        (status = 200, description = "WIRE-1: won (`claimed: true`) or lost to a winner (`claimed: false`)."),
        (status = 400, description = "Validation failure naming the field."),
        (status = 404, description = "Unknown, foreign or hidden bundle."),
        (status = 409, description = "No longer active, and nobody resolved it."),
    )
)]
pub(crate) async fn respond(
    State(state): State<AppState>,
    caller: Caller,
    input: Input,
) -> Envelope {
    let args = with_path_id(&input, true);
    state
        .call(&caller.principal, Operation::ResolveBundle, args)
        .await
}

/// LIFE-6 `cancel_bundle`: cancels through the same claim (humans only).
#[utoipa::path(
    post,
    path = "/api/v1/clarification/{pending_id}/cancel",
    operation_id = "cancel_bundle",
    tag = "clarification",
    params(("pending_id" = String, Path, description = "The bundle.")),
    request_body(content = Option<Object>, description = "None, or `{}`.", content_type = "application/json"),
    responses(
        (status = 200, description = "WIRE-1: won or lost to a winner."),
        (status = 404, description = "Unknown, foreign or hidden bundle."),
        (status = 409, description = "No longer active, and nobody resolved it."),
    )
)]
pub(crate) async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    input: Input,
) -> Envelope {
    let args = with_path_id(&input, true);
    state
        .call(&caller.principal, Operation::CancelBundle, args)
        .await
}
