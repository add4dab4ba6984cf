//! Authentication (HTTP-3, HTTP-4): the host's [`Authenticator`], the
//! [`Caller`] extractor every authenticated route takes (so no handler can
//! forget it), the cookie origin rule, and the built-in
//! [`TokenAuthenticator`] of `clarion serve`.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::http::{Method, Request};

use crate::domain::core::Core;
use crate::domain::tokens::SESSION_LIFETIME;
use crate::doors::http::error::HttpError;
use crate::doors::http::{AppState, HttpOptions};
use crate::rules::principal::Principal;

/// The cookie that names a web session (HTTP-4).
pub const SESSION_COOKIE: &str = "clarion_session";

/// Who a request comes from, as the host's [`Authenticator`] classifies
/// its credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authentication {
    /// A credential the client sends deliberately (`Authorization:
    /// Bearer …`): no origin rule applies.
    Bearer(Principal),
    /// An ambient credential the browser attaches by itself (a session
    /// cookie): unsafe methods must come from an allowed origin (HTTP-4).
    Cookie(Principal),
    /// No credential at all: `401`.
    Missing,
    /// A credential that names nobody (unknown, revoked, expired): `401`,
    /// never `unclassified` (HTTP-3).
    Invalid,
    /// The credential could not be checked (the database failed): `500`
    /// with a logged reference (REL-6). The message is logged, never shown.
    Failed(String),
}

/// A web session that [`Authenticator::sign_in`] opened: the cookie's
/// value and how long the browser should keep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The value of the `clarion_session` cookie.
    pub cookie: String,
    /// The cookie's `Max-Age`.
    pub max_age: Duration,
}

/// What the host tells the router about credentials (HTTP-1). The methods
/// are synchronous (they may read a database); the router calls them on
/// its bounded blocking pool.
pub trait Authenticator: Send + Sync + 'static {
    /// Classifies the request's credential.
    fn authenticate(&self, request: &Parts) -> Authentication;

    /// `POST /api/v1/session {"token"}`: a new web session if `token` is
    /// valid. The default supports no sessions: every sign-in is a `401`.
    fn sign_in(&self, token: &str) -> Option<SignedIn> {
        let _ = token;
        None
    }

    /// `DELETE /api/v1/session`: ends the request's web session, if any.
    fn sign_out(&self, request: &Parts) {
        let _ = request;
    }
}

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
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let copy = copy_of(parts);
        let auth = state.auth.clone();
        let authentication = state.blocking(move |_| auth.authenticate(&copy)).await?;
        match authentication {
            Authentication::Bearer(principal) => Ok(Caller {
                principal,
                via: Via::Bearer,
            }),
            Authentication::Cookie(principal) => {
                check_origin(parts, &state.options)?;
                Ok(Caller {
                    principal,
                    via: Via::Cookie,
                })
            }
            Authentication::Missing | Authentication::Invalid => {
                Err(HttpError::AuthenticationRequired)
            }
            Authentication::Failed(cause) => Err(HttpError::internal(format!(
                "authentication failed: {cause}"
            ))),
        }
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

/// The value of cookie `name`, from every `Cookie` header.
pub(crate) fn cookie<'p>(parts: &'p Parts, name: &str) -> Option<&'p str> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim())
}

/// The token of an `Authorization: Bearer <token>` header; `Err` for an
/// `Authorization` header of another shape (a credential that names
/// nobody).
fn bearer(parts: &Parts) -> Option<Result<&str, ()>> {
    let value = parts.headers.get(AUTHORIZATION)?;
    Some(
        value
            .to_str()
            .ok()
            .and_then(|text| text.split_once(' '))
            .filter(|(scheme, token)| scheme.eq_ignore_ascii_case("bearer") && !token.is_empty())
            .map(|(_, token)| token.trim())
            .ok_or(()),
    )
}

/// `clarion serve`'s authenticator (HTTP-4): bearer tokens and web
/// sessions from the database (`clarion token add`), and optionally a
/// principal for requests with no credential at all (`--open-as`).
#[derive(Clone)]
pub struct TokenAuthenticator {
    core: Arc<Core>,
    open_as: Option<Principal>,
}

impl std::fmt::Debug for TokenAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAuthenticator")
            .field("open_as", &self.open_as)
            .finish_non_exhaustive()
    }
}

impl TokenAuthenticator {
    pub(crate) fn with_core(core: Arc<Core>) -> TokenAuthenticator {
        TokenAuthenticator {
            core,
            open_as: None,
        }
    }

    /// Requests with no credential act as `principal` (`--open-as`).
    /// Such a request is treated like a cookie one: the origin rule
    /// applies, since any page the browser shows could send it. A
    /// credential that is given must still be valid.
    pub fn open_as(mut self, principal: Principal) -> TokenAuthenticator {
        self.open_as = Some(principal);
        self
    }
}

impl Authenticator for TokenAuthenticator {
    fn authenticate(&self, request: &Parts) -> Authentication {
        let found =
            |looked_up: crate::error::Result<Option<Principal>>, as_cookie: bool| match looked_up {
                Ok(Some(principal)) if as_cookie => Authentication::Cookie(principal),
                Ok(Some(principal)) => Authentication::Bearer(principal),
                Ok(None) => Authentication::Invalid,
                Err(error) => Authentication::Failed(error.to_string()),
            };
        match bearer(request) {
            Some(Ok(token)) => return found(self.core.token_principal(token), false),
            Some(Err(())) => return Authentication::Invalid,
            None => {}
        }
        if let Some(session) = cookie(request, SESSION_COOKIE) {
            return found(self.core.web_session_principal(session), true);
        }
        match &self.open_as {
            Some(principal) => Authentication::Cookie(principal.clone()),
            None => Authentication::Missing,
        }
    }

    fn sign_in(&self, token: &str) -> Option<SignedIn> {
        match self.core.open_web_session(token) {
            Ok(session) => session.map(|session| SignedIn {
                cookie: session.id,
                max_age: SESSION_LIFETIME,
            }),
            Err(error) => {
                tracing::error!(%error, "sign-in failed");
                None
            }
        }
    }

    fn sign_out(&self, request: &Parts) {
        if let Some(session) = cookie(request, SESSION_COOKIE) {
            if let Err(error) = self.core.close_web_session(session) {
                tracing::error!(%error, "sign-out failed");
            }
        }
    }
}
