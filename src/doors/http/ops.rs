//! HTTP-7 operations: liveness, readiness, metrics and the OpenAPI
//! document. Only `/metrics` needs a credential (`system`, section 13a).

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};

use crate::doors::envelope::{self, Envelope};
use crate::doors::http::caller::Caller;
use crate::doors::http::error::HttpError;
use crate::doors::http::state::AppState;
use crate::error::Error;
use crate::rules::capability::{has_capability, Operation};
use crate::rules::principal::Principal;

fn text(content_type: &'static str, body: String) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The process is alive.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    security(()),
    responses((status = 200, description = "`{\"ok\": true}`."))
)]
pub(crate) async fn healthz() -> Envelope {
    envelope::ok()
}

/// The database answers (one trivial statement).
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    security(()),
    responses(
        (status = 200, description = "`{\"ok\": true}`."),
        (status = 503, description = "`{\"error\": \"database unreachable\"}`."),
    )
)]
pub(crate) async fn readyz(State(state): State<AppState>) -> Envelope {
    match state.blocking(|engine| engine.ping()).await {
        Ok(Ok(())) => envelope::ok(),
        Ok(Err(error)) => {
            tracing::warn!(%error, "readiness check failed");
            envelope::refused(503, "database unreachable")
        }
        Err(error) => error.envelope(),
    }
}

/// Prometheus text (OpenMetrics) for `system` only (section 13a).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses(
        (status = 200, description = "Prometheus text: pending bundles, resolves by outcome, losers, waits in flight, requests and latencies by route."),
        (status = 401, description = "No valid credential."),
        (status = 403, description = "Capability denied: `system` only."),
    )
)]
pub(crate) async fn metrics(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Response, HttpError> {
    // AUTH-2, section 13a: the matrix's `metrics` row (system only).
    if !has_capability(&caller.principal, Operation::Metrics) {
        return Err(Error::CapabilityDenied.into());
    }
    let pending = state
        .blocking(|engine| engine.summary(&Principal::System))
        .await??
        .pending_bundles;
    Ok(text(
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
        state.metrics.render(pending),
    ))
}

/// This document: OpenAPI 3.1, generated from the route definitions.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "operations",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document of every route."))
)]
pub(crate) async fn openapi(State(state): State<AppState>) -> Response {
    text(
        "application/json",
        state.openapi.get().cloned().unwrap_or_default(),
    )
}
