//! The [`Caller`] extractor every authenticated route takes, so no handler
//! can forget authentication (HTTP-3), and the cookie origin rule it
//! applies (HTTP-4).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::header::{HOST, ORIGIN};
use axum::http::request::Parts;
use axum::http::{Method, Request};

use crate::doors::http::auth::Authentication;
use crate::doors::http::error::HttpError;
use crate::doors::http::options::HttpOptions;
use crate::doors::http::state::AppState;
use crate::rules::principal::Principal;

/// How the caller authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    Bearer,
    Cookie,
}

/// The authenticated caller of a route: the first extractor of every
/// authenticated handler. Its rejection is the `401` (HTTP-3) or the
/// cookie origin rule's `403` (HTTP-4), before any body is read.
pub(crate) struct Caller {
    pub(crate) principal: Principal,
    pub(crate) via: Via,
    /// The credential the request carries, as the authenticator names it
    /// (HTTP-13: event streams are counted by it).
    pub(crate) credential: String,
    /// The request's method, target and headers, kept so a stream or a
    /// wait can ask the authenticator about them again (HTTP-10).
    request: Arc<Parts>,
}

impl Caller {
    /// The request that authenticated, to be asked about again (HTTP-10).
    pub(crate) fn request(&self) -> Arc<Parts> {
        self.request.clone()
    }

    /// HTTP-10: whether the request's credential still names this caller's
    /// principal (a token revoked, a web session signed out or expired, by
    /// any process, no longer does). Asked on the blocking pool.
    pub(crate) async fn still_signed_in(&self, state: &AppState) -> Result<bool, HttpError> {
        let (auth, request) = (state.auth.clone(), self.request.clone());
        let principal = self.principal.clone();
        let authentication = state.blocking(move |_| auth.authenticate(&request)).await?;
        match authentication {
            Authentication::Bearer(now) | Authentication::Cookie(now) => Ok(now == principal),
            Authentication::Missing | Authentication::Invalid => Ok(false),
            Authentication::Failed(cause) => Err(HttpError::internal(format!(
                "authentication failed: {cause}"
            ))),
            Authentication::Unavailable(outage) => Err(HttpError::Outage(outage)),
        }
    }

    /// HTTP-10: how long until the credential ends by itself (a web
    /// session's expiry), if it does; a stream or a wait asks again then.
    pub(crate) async fn lasts(&self, state: &AppState) -> Result<Option<Duration>, HttpError> {
        let (auth, request) = (state.auth.clone(), self.request.clone());
        state
            .blocking(move |engine| {
                auth.ends_at(&request).map(|ends| {
                    let left = ends.as_micros().saturating_sub(engine.now().as_micros());
                    Duration::from_micros(u64::try_from(left).unwrap_or(0))
                })
            })
            .await
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let copy = copy_of(parts);
        let request = Arc::new(copy_of(parts));
        let auth = state.auth.clone();
        let authentication = state.blocking(move |_| auth.authenticate(&copy)).await?;
        let (principal, via) = admitted(authentication, parts, &state.options)?;
        Ok(Caller {
            principal,
            via,
            credential: state.auth.credential(parts),
            request,
        })
    }
}

/// HTTP-3, HTTP-4: who an authentication admits, and how: a missing or
/// invalid credential is the `401`, a cookie the origin rule applies to.
/// The one reading of an [`Authentication`] for a request, whether the
/// extractor asked or a bodiless route did, in its one trip (HTTP-15).
pub(crate) fn admitted(
    authentication: Authentication,
    parts: &Parts,
    options: &HttpOptions,
) -> Result<(Principal, Via), HttpError> {
    match authentication {
        Authentication::Bearer(principal) => Ok((principal, Via::Bearer)),
        Authentication::Cookie(principal) => {
            check_origin(parts, options)?;
            Ok((principal, Via::Cookie))
        }
        Authentication::Missing | Authentication::Invalid => Err(HttpError::AuthenticationRequired),
        Authentication::Failed(cause) => Err(HttpError::internal(format!(
            "authentication failed: {cause}"
        ))),
        Authentication::Unavailable(outage) => Err(HttpError::Outage(outage)),
    }
}

/// The request's method, target and headers, owned, for the blocking pool
/// (`Parts` itself does not clone: its extensions may not).
pub(crate) fn copy_of(parts: &Parts) -> Parts {
    let mut request = Request::new(());
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers.clone();
    request.into_parts().0
}

/// HTTP-4, the cookie origin rule: an unsafe request carrying an ambient
/// credential must come from the server's own origin or an allowed one.
/// Checked with `Origin`, falling back to `Sec-Fetch-Site`; a request
/// with neither comes from no browser, which is what the rule guards.
/// "Own origin" compares the origin's host and port with `Host` (a
/// reverse proxy must pass `Host` through).
pub(crate) fn check_origin(parts: &Parts, options: &HttpOptions) -> Result<(), HttpError> {
    if matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let allowed = match header(ORIGIN.as_str()) {
        Some(origin) => {
            let own = origin
                .split_once("://")
                .map(|(_, authority)| authority.trim_end_matches('/'))
                .zip(header(HOST.as_str()))
                .is_some_and(|(authority, host)| authority.eq_ignore_ascii_case(host));
            own || options.allows_origin(origin)
        }
        None => match header("sec-fetch-site") {
            Some(site) => matches!(site, "same-origin" | "none"),
            None => true,
        },
    };
    if allowed {
        Ok(())
    } else {
        Err(HttpError::CrossSite)
    }
}
