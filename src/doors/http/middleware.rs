//! The layers around the router's routes: request ids (HTTP-7), the
//! matched route carried out to the metrics, counts and latencies, the
//! refusal during shutdown (HTTP-8), JSON bodies for unknown routes and
//! methods (HTTP-3), and CORS for `--allow-origin` (HTTP-8).

use std::time::Duration;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header::{CONNECTION, CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestId, RequestId};

use crate::doors::http::error::HttpError;
use crate::doors::http::options::HttpOptions;
use crate::doors::http::state::AppState;

/// Request ids for requests that bring none (HTTP-7).
#[derive(Clone, Copy)]
pub(super) struct NewRequestId;

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

pub(super) async fn mark_route(request: Request, next: Next) -> Response {
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

/// A request's path as logs show it: an answer link's token is a
/// credential, so `/a/<token>` is `/a/…` (LINK-2, LINK-5).
pub(super) fn logged_path(path: &str) -> &str {
    if path.starts_with(crate::rules::links::LINK_PATH) {
        "/a/…"
    } else {
        path
    }
}

/// HTTP-11: under [`HttpOptions::loopback_hosts_only`], a request not
/// addressed to a loopback name is refused before anything else.
pub(super) async fn loopback_hosts(request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(HOST)
        .and_then(|host| host.to_str().ok());
    if host.is_some_and(is_loopback_host) {
        next.run(request).await
    } else {
        HttpError::Misdirected.into_response()
    }
}

/// `localhost`, `127.0.0.1` or `[::1]`, in any letter case, with or
/// without a port (HTTP-11).
fn is_loopback_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inner, port)) => (format!("[{inner}]"), port.to_owned()),
            None => return false,
        },
        None => match host.split_once(':') {
            Some((name, port)) => (name.to_owned(), format!(":{port}")),
            None => (host.clone(), String::new()),
        },
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    port_ok && matches!(name.as_str(), "localhost" | "127.0.0.1" | "[::1]")
}

/// HTTP-7 counts and latencies by route; HTTP-8 refuses new requests
/// once the shutdown has begun.
pub(super) async fn observe(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
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

pub(super) async fn route_not_found() -> HttpError {
    HttpError::RouteNotFound
}

pub(super) async fn method_not_allowed() -> HttpError {
    HttpError::MethodNotAllowed
}

pub(super) fn cors(options: &HttpOptions) -> Option<CorsLayer> {
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
            // The page reads Retry-After of a refused stream (HTTP-13).
            .expose_headers([
                HeaderName::from_static("x-request-id"),
                axum::http::header::RETRY_AFTER,
            ])
            .max_age(Duration::from_secs(600)),
    )
}

#[cfg(test)]
mod tests {
    use super::{is_loopback_host, logged_path};

    #[test]
    fn link_2_request_logs_show_a_link_as_a_dots() {
        assert_eq!(logged_path("/a/v1.payload.mac"), "/a/…");
        assert_eq!(logged_path("/a/"), "/a/…");
        assert_eq!(logged_path("/api/v1/link/bundle"), "/api/v1/link/bundle");
        assert_eq!(logged_path("/a"), "/a");
    }

    #[test]
    fn http_11_loopback_names_in_any_case_with_any_port() {
        for host in [
            "localhost",
            "LocalHost:7878",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]",
            "[::1]:7878",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "",
            "rebind.example",
            "rebind.example:7878",
            "localhost.rebind.example",
            "127.0.0.2",
            "127.0.0.1.nip.io:7878",
            "[::2]:7878",
            "[::1",
            "localhost:",
            "localhost:78x",
            "::1",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
