//! The HTTP door (HTTP-1..9; feature `http`): an axum [`Router`] over the
//! synchronous library. The router is assembled here, in one place; each
//! resource has its own file with thin handlers; authentication is an
//! extractor ([`auth::Caller`]) so a handler cannot forget it; every body
//! comes from the envelope layer, and every refusal from one error type
//! ([`error::HttpError`]).
//!
//! Order of checks (HTTP-3): the route (404, 405) → authentication (401)
//! → the cookie origin rule (403) → body limits (413, 415) → WIRE-5's
//! order (400 envelope → 403 capability → 400 args → 404 → 409 → 400).
//! The first two are the router's; the next two are the extractors', in
//! argument order; the rest is the JSON door's, which every route calls.

mod auth;
mod bundles;
mod error;
mod events;
mod inbox;
mod input;
mod metrics;
mod ops;
mod pool;
mod rpc;
mod serve;
mod session;
pub(crate) mod wait;
mod web;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::Value;
use tokio::sync::{watch, Semaphore};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::domain::core::Core;
use crate::doors::envelope::{self, Envelope};
use crate::error::{Error, ValidationError};
use crate::rules::capability::{has_capability, Operation};
use crate::rules::principal::Principal;

pub use auth::{Authentication, Authenticator, SignedIn, TokenAuthenticator, SESSION_COOKIE};
pub use error::HttpError;
pub use serve::{serve, ServeOptions};
pub use web::InvalidOrigin;

use metrics::Metrics;

/// HTTP-3: the largest request body accepted (1 MiB); above it, `413`.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Tells a router (and [`serve`]) that the server is stopping (HTTP-8):
/// from [`Shutdown::begin`] on, open waits and new requests answer
/// `503 {"error": "server shutting down"}`. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Shutdown {
    sender: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown {
            sender: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl Shutdown {
    /// A signal that has not begun.
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Begins the shutdown; every clone sees it. Idempotent.
    pub fn begin(&self) {
        self.sender.send_replace(true);
    }

    /// Whether [`Shutdown::begin`] was called.
    pub fn is_begun(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once the shutdown has begun (at once if it already has).
    pub async fn begun(&self) {
        let mut receiver = self.sender.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = receiver.wait_for(|begun| *begun).await;
    }
}

/// How the router behaves; builder-style.
///
/// ```
/// let options = clarion::http::HttpOptions::new()
///     .allow_origin("https://inbox.example.com")
///     .max_calls(16)
///     .secure_cookies(true);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct HttpOptions {
    allowed_origins: Vec<String>,
    max_calls: usize,
    secure_cookies: bool,
    shutdown: Shutdown,
    wait_cap: Duration,
    keep_alive: Duration,
    inbox_api: Option<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_origins: Vec::new(),
            max_calls: 32,
            secure_cookies: false,
            shutdown: Shutdown::new(),
            wait_cap: wait::MAX_WAIT,
            keep_alive: events::KEEP_ALIVE,
            inbox_api: None,
        }
    }
}

impl HttpOptions {
    /// The defaults: no other origin, 32 concurrent library calls, waits
    /// cut at 55 s, cookies without `Secure`.
    pub fn new() -> HttpOptions {
        HttpOptions::default()
    }

    /// An origin (`https://host[:port]`) besides the server's own that may
    /// send cookie-authenticated unsafe requests (HTTP-4) and gets CORS with
    /// credentials (HTTP-8). May be given several times.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        let origin = origin.into().trim_end_matches('/').to_ascii_lowercase();
        if !self.allowed_origins.contains(&origin) {
            self.allowed_origins.push(origin);
        }
        self
    }

    /// How many synchronous library calls (and authentications, and the
    /// brief checks of waits) run at once on the blocking pool (HTTP-1);
    /// more wait for a free place. Waits hold no place between checks.
    pub fn max_calls(mut self, calls: usize) -> Self {
        self.max_calls = calls.max(1);
        self
    }

    /// Marks the session cookie `Secure` (HTTP-4): set it when the server
    /// is reached over TLS (behind a reverse proxy), or browsers would
    /// send the cookie over plain HTTP too.
    pub fn secure_cookies(mut self, secure: bool) -> Self {
        self.secure_cookies = secure;
        self
    }

    /// The shutdown signal the router obeys (HTTP-8); give the same one to
    /// [`serve`].
    pub fn shutdown(mut self, shutdown: Shutdown) -> Self {
        self.shutdown = shutdown;
        self
    }

    /// Cuts every wait at `cap` instead of HTTP-5's 55 s (never longer):
    /// for proxies with shorter read timeouts, and for tests.
    pub fn wait_cap(mut self, cap: Duration) -> Self {
        self.wait_cap = cap.min(wait::MAX_WAIT);
        self
    }

    /// How often an idle event stream sends a comment line (HTTP-6: 15 s),
    /// so proxies keep it open; at least 100 ms.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every.max(Duration::from_millis(100));
        self
    }

    /// The web inbox at `/` uses the API at `origin` (`https://host[:port]`)
    /// instead of its own origin's (UI-5): for a page served apart from
    /// the API. That server must allow this one's origin
    /// ([`HttpOptions::allow_origin`]); the page's Content-Security-Policy
    /// admits `origin` and nothing else besides its own.
    pub fn inbox_api(mut self, origin: &str) -> Result<Self, InvalidOrigin> {
        let origin = web::origin_of(origin).ok_or_else(|| InvalidOrigin(origin.to_owned()))?;
        self.inbox_api = Some(origin);
        Ok(self)
    }

    /// The blocking threads the router may occupy at most: a runtime
    /// serving it needs at least this many (`max_blocking_threads`).
    pub fn blocking_threads(&self) -> usize {
        self.max_calls
    }

    pub(crate) fn allows_origin(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        self.allowed_origins.contains(&origin)
    }
}

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct AppState(Arc<Inner>);

pub(crate) struct Inner {
    pub(crate) core: Arc<Core>,
    pub(crate) auth: Arc<dyn Authenticator>,
    pub(crate) options: HttpOptions,
    /// HTTP-1: the bound of the blocking pool.
    pub(crate) calls: Arc<Semaphore>,
    pub(crate) metrics: Metrics,
    /// The OpenAPI document, rendered once the routes are assembled.
    pub(crate) openapi: OnceLock<String>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// WIRE-5 for a route: the capability first (AUTH-2), then the
    /// arguments the door read, then the JSON door itself, which repeats
    /// the capability check and goes on in WIRE-5's order. So a route
    /// answers exactly what `/rpc` (and the C ABI) would.
    pub(crate) async fn call(
        &self,
        principal: &Principal,
        operation: Operation,
        args: Result<Value, ValidationError>,
    ) -> Envelope {
        if !has_capability(principal, operation) {
            return envelope::error(&Error::CapabilityDenied);
        }
        let args = match args {
            Ok(args) => args,
            Err(error) => return envelope::error(&Error::Validation(error)),
        };
        let request = serde_json::json!({
            "op": operation.to_string(),
            "principal": principal.to_wire(),
            "args": args,
        });
        let reply = self
            .blocking(move |core| crate::doors::json::call_value(core, &request))
            .await
            .unwrap_or_else(|error| error.envelope());
        if matches!(
            operation,
            Operation::ResolveBundle | Operation::CancelBundle
        ) {
            self.metrics.count_resolve(&reply);
        }
        reply
    }
}

/// OpenAPI's top: title, version, and the bearer scheme.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "clarion",
        description = "A durable \"ask a human\" inbox: list, read, wait for and answer \
                       clarification requests (HTTP-2). Bodies are clarion's WIRE-1..3 envelopes.",
        license(name = "MIT OR Apache-2.0")
    ),
    modifiers(&BearerScheme),
    security(("bearer" = []), ("cookie" = []))
)]
struct ApiDoc;

struct BearerScheme;

impl utoipa::Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::SecurityScheme;
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "cookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(SESSION_COOKIE))),
        );
    }
}

/// Request ids for requests that bring none (HTTP-7).
#[derive(Clone, Copy)]
struct NewRequestId;

impl MakeRequestId for NewRequestId {
    fn make_request_id<B>(&mut self, _request: &axum::http::Request<B>) -> Option<RequestId> {
        HeaderValue::from_str(&uuid::Uuid::now_v7().to_string())
            .ok()
            .map(RequestId::new)
    }
}

/// The matched route's template, carried from inside the router (where it
/// is known) to the metrics outside it.
#[derive(Clone)]
struct RouteName(String);

async fn mark_route(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned());
    let mut response = next.run(request).await;
    if let Some(route) = route {
        response.extensions_mut().insert(RouteName(route));
    }
    response
}

/// HTTP-7 counts and latencies by route; HTTP-8 refuses new requests
/// once the shutdown has begun.
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if state.options.shutdown.is_begun() {
        return HttpError::ShuttingDown.into_response();
    }
    let method = request.method().clone();
    let sends_body = request.headers().contains_key(TRANSFER_ENCODING)
        || request
            .headers()
            .get(CONTENT_LENGTH)
            .is_some_and(|length| length.as_bytes() != b"0");
    let started = std::time::Instant::now();
    let mut response = next.run(request).await;
    // A refusal may come before the body was read (401, 403, 413): the
    // connection cannot carry another request then, and says so, so no
    // client reuses it.
    if sends_body && (response.status().is_client_error() || response.status().is_server_error()) {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    let route = response
        .extensions()
        .get::<RouteName>()
        .map_or("unmatched", |route| route.0.as_str())
        .to_owned();
    state.metrics.observe(
        &route,
        &method,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

async fn route_not_found() -> HttpError {
    HttpError::RouteNotFound
}

async fn method_not_allowed() -> HttpError {
    HttpError::MethodNotAllowed
}

fn cors(options: &HttpOptions) -> Option<CorsLayer> {
    if options.allowed_origins.is_empty() {
        return None;
    }
    let origins: Vec<HeaderValue> = options
        .allowed_origins
        .iter()
        .filter_map(|origin| HeaderValue::from_str(origin).ok())
        .collect();
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_credentials(true)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                axum::http::header::CONTENT_TYPE,
                axum::http::header::AUTHORIZATION,
                HeaderName::from_static("last-event-id"),
                HeaderName::from_static("x-request-id"),
            ])
            .expose_headers([HeaderName::from_static("x-request-id")])
            .max_age(Duration::from_secs(600)),
    )
}

/// HTTP-1: the router over `core`, authenticating with `auth`.
pub(crate) fn router(
    core: Arc<Core>,
    auth: Arc<dyn Authenticator>,
    options: HttpOptions,
) -> Router {
    let state = AppState(Arc::new(Inner {
        core,
        auth,
        calls: Arc::new(Semaphore::new(options.max_calls)),
        metrics: Metrics::new(),
        openapi: OnceLock::new(),
        options: options.clone(),
    }));
    // HTTP-2: every route of the API, with its OpenAPI operation.
    let (routes, openapi) = OpenApiRouter::<AppState>::with_openapi(ApiDoc::openapi())
        .routes(routes!(bundles::list))
        .routes(routes!(bundles::ask))
        .routes(routes!(bundles::get))
        .routes(routes!(bundles::wait))
        .routes(routes!(bundles::respond))
        .routes(routes!(bundles::cancel))
        // ATTEMPTS (AUD-3): `GET /api/v1/clarification/{pending_id}/attempts`
        // is added here with the attempt ledger.
        .routes(routes!(inbox::summary))
        .routes(routes!(inbox::pending_actions))
        .routes(routes!(events::stream))
        .routes(routes!(
            session::current,
            session::sign_in,
            session::sign_out
        ))
        .routes(routes!(rpc::call))
        // HTTP-7: operations.
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        .routes(routes!(ops::metrics))
        .routes(routes!(ops::openapi))
        .split_for_parts();
    let document = openapi
        .to_pretty_json()
        .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"));
    let _ = state.openapi.set(document);
    // UI-1: the web inbox, beside the API (not part of its document).
    let routes = routes
        .merge(web::routes(&options))
        .route_layer(middleware::from_fn(mark_route))
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
        .layer(middleware::from_fn_with_state(state.clone(), observe));
    let routes = match cors(&options) {
        Some(cors) => routes.layer(cors),
        None => routes,
    };
    // HTTP-7: a request id for every request (kept when the client sent
    // one), in the trace span and echoed in `X-Request-Id`.
    routes
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
                let id = request
                    .headers()
                    .get("x-request-id")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or_default();
                tracing::info_span!(
                    "http",
                    method = %request.method(),
                    path = %request.uri().path(),
                    request_id = %id,
                )
            }),
        )
        .layer(SetRequestIdLayer::x_request_id(NewRequestId))
        .with_state(state)
}
