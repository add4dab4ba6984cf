//! The door's one error type, and how every body becomes a response: one
//! `IntoResponse` for [`Envelope`] (status, the envelope layer's bytes,
//! `application/json`, `Cache-Control: no-store`: HTTP-3) and one for
//! [`HttpError`], which turns into an envelope first.

use axum::http::header::{CACHE_CONTROL, CONNECTION, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::doors::envelope::{self, Envelope};
use crate::error::{outage_status, Error, ValidationError};
use crate::store::Outage;

/// A request the door refuses before (or instead of) an operation, in the
/// order of HTTP-3, or an operation's own error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// HTTP-3: `404`, no route has this path.
    #[error("route not found")]
    RouteNotFound,
    /// HTTP-3: `405`, the route exists but not with this method.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// HTTP-3: `401`, no credential, or one that is unknown, revoked or
    /// expired (never taken as `unclassified`).
    #[error("authentication required")]
    AuthenticationRequired,
    /// HTTP-4: `403`, a cookie-authenticated unsafe request from another
    /// origin.
    #[error("cross-site request refused")]
    CrossSite,
    /// HTTP-3: `413`, a body above 1 MiB.
    #[error("request body too large")]
    BodyTooLarge,
    /// HTTP-3: `415`, a POST body that is not `application/json`.
    #[error("content type must be application/json")]
    UnsupportedMediaType,
    /// PROD-2: the credential could not be checked, the database being
    /// unreachable, full or read-only.
    #[error("{}", .0.message())]
    Outage(Outage),
    /// HTTP-12: `408`, the request did not arrive whole by its deadline;
    /// the connection closes.
    #[error("request timed out")]
    RequestTimeout,
    /// HTTP-11: `421`, an open server (`--open-as`) was addressed by a
    /// name that is not loopback, or by none.
    #[error("misdirected request: this server answers only to localhost, 127.0.0.1 and [::1]")]
    Misdirected,
    /// HTTP-13: `429`, the credential holds as many event streams as it
    /// may; `Retry-After: 5`.
    #[error("too many event streams for this credential")]
    TooManyStreams,
    /// HTTP-8: `503`, the server is stopping.
    #[error("server shutting down")]
    ShuttingDown,
    /// An operation's error, reported exactly as WIRE-1 says.
    #[error(transparent)]
    Library(#[from] Error),
}

impl From<ValidationError> for HttpError {
    fn from(error: ValidationError) -> Self {
        HttpError::Library(Error::Validation(error))
    }
}

impl HttpError {
    /// The status of a door refusal; an operation's error has its own.
    fn status(&self) -> u16 {
        match self {
            HttpError::RouteNotFound => 404,
            HttpError::MethodNotAllowed => 405,
            HttpError::AuthenticationRequired => 401,
            HttpError::CrossSite => 403,
            HttpError::BodyTooLarge => 413,
            HttpError::UnsupportedMediaType => 415,
            HttpError::RequestTimeout => 408,
            HttpError::Misdirected => 421,
            HttpError::TooManyStreams => 429,
            HttpError::ShuttingDown => 503,
            HttpError::Outage(outage) => outage_status(*outage),
            HttpError::Library(error) => error.http_status(),
        }
    }

    /// The envelope: WIRE-1 for an operation's error (an internal one
    /// logged under a reference, REL-6), `{"error": <message>}` for the
    /// door's own refusals.
    pub(crate) fn envelope(&self) -> Envelope {
        match self {
            HttpError::Library(error) => envelope::error(error),
            refusal => envelope::refused(refusal.status(), refusal.to_string()),
        }
    }

    /// A broken invariant in the door (a panicked blocking call): a 500
    /// whose cause is logged, never shown.
    pub(crate) fn internal(cause: impl Into<String>) -> HttpError {
        HttpError::Library(Error::Internal(cause.into()))
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let mut response = self.envelope().into_response();
        match self {
            // HTTP-3: a 401 names the scheme that would work.
            HttpError::AuthenticationRequired => {
                response
                    .headers_mut()
                    .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            // HTTP-11: nothing more on a connection made to the wrong name;
            // HTTP-12: nor on one whose request came too slowly.
            HttpError::Misdirected | HttpError::RequestTimeout => {
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
            }
            HttpError::TooManyStreams => {
                response
                    .headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("5"));
            }
            _ => {}
        }
        response
    }
}

impl IntoResponse for Envelope {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, self.body_text()).into_response();
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}
