//! The HTTP door (HTTP-1..9; feature `http`): an axum [`Router`] over the
//! synchronous library. The router is assembled here, in one place; the
//! declared operations' routes come from their declarations (`routes.rs`);
//! authentication is an extractor ([`caller::Caller`]) so a handler cannot
//! forget it; every body
//! comes from the envelope layer, and every refusal from one error type
//! ([`error::HttpError`]).
//!
//! Order of checks (HTTP-3): the route (404, 405) → authentication (401)
//! → the cookie origin rule (403) → body limits (413, 415) → WIRE-5's
//! order (400 envelope → 403 capability → 400 args → 404 → 409 → 400).
//! The first two are the router's; the next two are the extractors', in
//! argument order; the rest is the JSON door's, which every route calls.

mod auth;
mod caller;
mod deadline;
mod error;
mod events;
mod fanout;
mod gate;
mod input;
mod link;
mod metrics;
mod middleware;
mod openapi;
mod ops;
mod options;
mod places;
mod routes;
mod serve;
mod session;
mod state;
pub(crate) mod wait;
mod web;

use std::sync::{Arc, OnceLock};

use axum::middleware::from_fn;
use axum::middleware::from_fn_with_state;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use tokio::sync::Semaphore;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::domain::engine::Engine;

pub use auth::{Authentication, Authenticator, SignedIn, TokenAuthenticator, SESSION_COOKIE};
pub use error::HttpError;
pub use options::{HttpOptions, InvalidOrigin, Shutdown, MAX_BODY_BYTES, STREAMS_PER_CREDENTIAL};
pub use serve::{
    connections_allowed, descriptor_limits, serve, ServeOptions, RESERVED_DESCRIPTORS,
};

use metrics::Metrics;
use middleware::{
    cors, logged_path, loopback_hosts, mark_route, method_not_allowed, observe, route_not_found,
    NewRequestId,
};
use places::Fanout;
use state::{AppState, Inner};

/// HTTP-1: the router over `engine`, authenticating with `auth`.
pub(crate) fn router(
    engine: Arc<Engine>,
    auth: Arc<dyn Authenticator>,
    options: HttpOptions,
) -> Router {
    let state = AppState(Arc::new(Inner {
        engine,
        auth,
        calls: Arc::new(Semaphore::new(options.max_calls)),
        metrics: Metrics::new(),
        openapi: OnceLock::new(),
        stream_reads: Arc::new(Semaphore::new(options.stream_reads)),
        stream_places: Arc::default(),
        fanout: Fanout::default(),
        options: options.clone(),
    }));
    // HTTP-2: the declared operations' routes, `/rpc/{op}`, and the
    // door's own routes; the OpenAPI document is made from the same
    // declarations.
    let routes = routes::routes()
        .route("/api/v1/events", get(events::stream))
        .route(
            "/api/v1/session",
            get(session::current)
                .post(session::sign_in)
                .delete(session::sign_out),
        )
        // HTTP-7: operations.
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .route("/api/v1/openapi.json", get(ops::openapi));
    let _ = state.openapi.set(openapi::document());
    // UI-1: the web inbox, beside the API (not part of its document).
    let routes = routes
        .merge(web::routes(&options))
        // LINK-2, LINK-3: the answer links' page and API.
        .merge(link::routes())
        .route_layer(from_fn(link::refuse_elsewhere))
        .route_layer(from_fn(mark_route))
        // No panic crosses into the server: a handler that panics answers
        // a 500 with a logged reference (REL-6), like any internal error.
        .route_layer(CatchPanicLayer::custom(
            |panic: Box<dyn std::any::Any + Send>| {
                let cause = panic
                    .downcast_ref::<&str>()
                    .map(|text| text.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                HttpError::internal(format!("a handler panicked: {cause}")).into_response()
            },
        ))
        // HTTP-3: JSON bodies for unknown routes and methods; no
        // trailing-slash redirects (axum makes none).
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(state.clone(), observe));
    let routes = match cors(&options) {
        Some(cors) => routes.layer(cors),
        None => routes,
    };
    // HTTP-11: an open server's host rule comes before everything else.
    let routes = if options.loopback_hosts_only {
        routes.layer(from_fn(loopback_hosts))
    } else {
        routes
    };
    // HTTP-7: a request id for every request (kept when the client sent
    // one), in the trace span and echoed in `X-Request-Id`.
    routes
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|request: &axum::http::Request<_>| {
                    let id = request
                        .headers()
                        .get("x-request-id")
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default();
                    tracing::info_span!(
                        "http",
                        method = %request.method(),
                        // LINK-2: a link's token never reaches a log line.
                        path = %logged_path(request.uri().path()),
                        request_id = %id,
                    )
                })
                .on_failure(log_failure),
        )
        .layer(SetRequestIdLayer::x_request_id(NewRequestId))
        .with_state(state)
}

/// How a response that failed is logged. Two server statuses are
/// documented outcomes, not faults, and log at `info`: a `503` (the server
/// is shutting down, or the handle was closed, HTTP-8) and a `504` (a wait
/// whose timeout passed first, WIRE-1). Every other server error logs at
/// `error`.
fn log_failure(
    failure: tower_http::classify::ServerErrorsFailureClass,
    latency: std::time::Duration,
    _span: &tracing::Span,
) {
    use axum::http::StatusCode;
    use tower_http::classify::ServerErrorsFailureClass;
    let latency_ms = latency.as_millis();
    match failure {
        ServerErrorsFailureClass::StatusCode(status @ StatusCode::SERVICE_UNAVAILABLE) => {
            tracing::info!(%status, latency_ms, "service unavailable");
        }
        ServerErrorsFailureClass::StatusCode(status @ StatusCode::GATEWAY_TIMEOUT) => {
            tracing::info!(%status, latency_ms, "wait timed out");
        }
        failure => tracing::error!(%failure, latency_ms, "response failed"),
    }
}
