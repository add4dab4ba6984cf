//! `/api/v1/summary` and `/api/v1/pending-actions` (HTTP-2): counts over
//! the caller's inbox.

use axum::extract::State;
use serde_json::Value;

use crate::doors::envelope::Envelope;
use crate::doors::http::caller::Caller;
use crate::doors::http::input::Input;
use crate::doors::http::state::AppState;
use crate::rules::capability::Operation;

/// SUM-1: the pending counts and the oldest age.
#[utoipa::path(
    get,
    path = "/api/v1/summary",
    tag = "inbox",
    responses((status = 200, description = "`{pending_bundles, pending_questions, oldest_age_seconds}`."))
)]
pub(crate) async fn summary(
    State(state): State<AppState>,
    caller: Caller,
    input: Input,
) -> Envelope {
    let args = input.no_query().map(|()| Value::Object(Default::default()));
    state
        .call(&caller.principal, Operation::Summary, args)
        .await
}

/// PA-1: what blocks each visible requested task.
#[utoipa::path(
    post,
    path = "/api/v1/pending-actions",
    tag = "inbox",
    request_body(content = Object, description = "`{task_ids}`.", content_type = "application/json"),
    responses((status = 200, description = "`{tasks: [...]}`."))
)]
pub(crate) async fn pending_actions(
    State(state): State<AppState>,
    caller: Caller,
    input: Input,
) -> Envelope {
    let args = input
        .no_query()
        .and_then(|()| input.object())
        .map(Value::Object);
    state
        .call(&caller.principal, Operation::PendingActions, args)
        .await
}
