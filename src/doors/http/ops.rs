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
use crate::doors::operations::Operation;
use crate::error::Error;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;
use crate::store::Outage;

fn text(content_type: &'static str, body: String) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The process is alive.
pub(crate) async fn healthz() -> Envelope {
    envelope::ok()
}

/// The database answers (one trivial statement). PROD-2: while the pool
/// knows it does not, `503` at once, queueing behind nothing.
pub(crate) async fn readyz(State(state): State<AppState>) -> Envelope {
    if !state.engine.database_answers() {
        return envelope::refused(503, Outage::Unavailable.message());
    }
    match state.blocking(|engine| engine.ping()).await {
        Ok(Ok(())) => envelope::ok(),
        Ok(Err(error)) => {
            tracing::info!(%error, "readiness check failed");
            envelope::refused(503, Outage::Unavailable.message())
        }
        Err(error) => error.envelope(),
    }
}

/// Prometheus text (OpenMetrics) for `system` only (section 13a).
pub(crate) async fn metrics(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Response, HttpError> {
    // AUTH-2, section 13a: the matrix's `metrics` row (system only).
    if !Operation::Metrics.access().admits(&caller.principal) {
        return Err(Error::CapabilityDenied.into());
    }
    let (pending, webhooks, mail) = state
        .blocking(|engine| {
            let summary =
                engine.summary(&Operation::Summary.admit(&Principal::System, Channel::Http)?)?;
            Ok::<_, Error>((
                summary.pending_bundles,
                engine.webhook_figures()?,
                engine.mail_status()?,
            ))
        })
        .await??;
    Ok(text(
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
        state.metrics.render(pending, &webhooks, &mail),
    ))
}

/// This document: OpenAPI 3.1, generated from the route definitions.
pub(crate) async fn openapi(State(state): State<AppState>) -> Response {
    text(
        "application/json",
        state.openapi.get().cloned().unwrap_or_default(),
    )
}
