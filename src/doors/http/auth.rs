//! Authentication (HTTP-3, HTTP-4): the host's [`Authenticator`], how a
//! request names its credential (a bearer token, the session cookie), and
//! the built-in [`TokenAuthenticator`] of `clarion serve`.

use std::sync::Arc;
use std::time::Duration;

use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;

use crate::domain::engine::Engine;
use crate::domain::tokens::SESSION_LIFETIME;
use crate::rules::principal::Principal;
use crate::store::Outage;
use crate::store::Timestamp;

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
    /// PROD-2: the credential could not be checked because the database is
    /// unreachable, full or read-only: `503` (or `507`) with its word.
    Unavailable(Outage),
}

impl Authentication {
    /// The authentication a failed lookup gives: an outage said as one,
    /// anything else a failure.
    pub fn failed(error: &crate::error::Error) -> Authentication {
        match error {
            crate::error::Error::Unavailable { outage, .. } => Authentication::Unavailable(*outage),
            other => Authentication::Failed(other.to_string()),
        }
    }
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

    /// HTTP-10, HTTP-14: classifies several requests' credentials at once,
    /// one request per distinct credential: the checks of one wake-up of
    /// the event streams, answered in the requests' order. The default
    /// asks [`Authenticator::authenticate`] for each.
    fn authenticate_all(&self, requests: &[&Parts]) -> Vec<Authentication> {
        requests
            .iter()
            .map(|request| self.authenticate(request))
            .collect()
    }

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

    /// HTTP-10: when the request's credential ends by itself (a web
    /// session's expiry), so an event stream or a wait that uses it ends
    /// then at the latest. The default: never.
    fn ends_at(&self, request: &Parts) -> Option<Timestamp> {
        let _ = request;
        None
    }

    /// HTTP-13: the credential the request carries, whose event streams
    /// are counted together. The default: the `Authorization` header, else
    /// the `Cookie` header, else none (`""`: the requests of an open
    /// principal, which carry no credential, count as one).
    fn credential(&self, request: &Parts) -> String {
        [AUTHORIZATION, COOKIE]
            .iter()
            .find_map(|name| request.headers.get(name))
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .unwrap_or_default()
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
    engine: Arc<Engine>,
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
    pub(crate) fn with_engine(engine: Arc<Engine>) -> TokenAuthenticator {
        TokenAuthenticator {
            engine,
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

impl TokenAuthenticator {
    /// The one classification of a request's credential, whichever way
    /// tokens and sessions are looked up (one at a time, or all of a
    /// wake-up's at once).
    fn classify(
        &self,
        request: &Parts,
        token: impl FnOnce(&str) -> crate::error::Result<Option<Principal>>,
        session: impl FnOnce(&str) -> crate::error::Result<Option<Principal>>,
    ) -> Authentication {
        let found =
            |looked_up: crate::error::Result<Option<Principal>>, as_cookie: bool| match looked_up {
                Ok(Some(principal)) if as_cookie => Authentication::Cookie(principal),
                Ok(Some(principal)) => Authentication::Bearer(principal),
                Ok(None) => Authentication::Invalid,
                Err(error) => Authentication::failed(&error),
            };
        match bearer(request) {
            Some(Ok(bearer_token)) => return found(token(bearer_token), false),
            Some(Err(())) => return Authentication::Invalid,
            None => {}
        }
        if let Some(session_id) = cookie(request, SESSION_COOKIE) {
            return found(session(session_id), true);
        }
        match &self.open_as {
            Some(principal) => Authentication::Cookie(principal.clone()),
            None => Authentication::Missing,
        }
    }
}

impl Authenticator for TokenAuthenticator {
    fn authenticate(&self, request: &Parts) -> Authentication {
        self.classify(
            request,
            |token| self.engine.token_principal(token),
            |session| self.engine.web_session_principal(session),
        )
    }

    /// HTTP-10: every token and session of the batch in one statement.
    fn authenticate_all(&self, requests: &[&Parts]) -> Vec<Authentication> {
        let tokens: Vec<&str> = requests
            .iter()
            .filter_map(|request| bearer(request)?.ok())
            .collect();
        let sessions: Vec<&str> = requests
            .iter()
            .filter(|request| bearer(request).is_none())
            .filter_map(|request| cookie(request, SESSION_COOKIE))
            .collect();
        let live = match self.engine.live_credentials(&tokens, &sessions) {
            Ok(live) => live,
            Err(error) => {
                let failed = Authentication::failed(&error);
                return vec![failed; requests.len()];
            }
        };
        requests
            .iter()
            .map(|request| {
                self.classify(
                    request,
                    |token| Ok(live.tokens.get(token).cloned()),
                    |session| Ok(live.sessions.get(session).cloned()),
                )
            })
            .collect()
    }

    fn sign_in(&self, token: &str) -> Option<SignedIn> {
        match self.engine.open_web_session(token) {
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

    /// HTTP-10: a web session ends at its expiry; a token, when revoked.
    fn ends_at(&self, request: &Parts) -> Option<Timestamp> {
        if bearer(request).is_some() {
            return None;
        }
        let session = cookie(request, SESSION_COOKIE)?;
        match self.engine.web_session_expires_at(session) {
            Ok(ends) => ends,
            Err(error) => {
                tracing::warn!(%error, "a web session's expiry could not be read");
                None
            }
        }
    }

    /// HTTP-13: the bearer token, else the web session (whatever other
    /// cookies come with it), else none (the open principal).
    fn credential(&self, request: &Parts) -> String {
        match bearer(request) {
            Some(Ok(token)) => format!("bearer {token}"),
            _ => cookie(request, SESSION_COOKIE)
                .map(|session| format!("session {session}"))
                .unwrap_or_default(),
        }
    }

    fn sign_out(&self, request: &Parts) {
        if let Some(session) = cookie(request, SESSION_COOKIE) {
            if let Err(error) = self.engine.close_web_session(session) {
                tracing::error!(%error, "sign-out failed");
            }
        }
    }
}
