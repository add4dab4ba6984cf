//! The HTTP door's part of the handle (feature `http`): API tokens and
//! web sessions (HTTP-4), and the router over a handle (HTTP-1).

use std::sync::Arc;

#[cfg(feature = "http")]
use crate::domain::tokens::{NewToken, TokenInfo, WebSession};

use crate::error::Result;

use crate::rules::principal::Principal;

use crate::handle::clarion::Clarion;

#[cfg(feature = "http")]
impl Clarion {
    // ---- API tokens and web sessions (HTTP-4) ----

    /// Makes a bearer token for `principal`; only its SHA-256 is stored,
    /// so the returned text is the only copy.
    pub fn add_token(&self, principal: &Principal, label: &str) -> Result<NewToken> {
        self.engine.add_token(principal, label)
    }

    /// Every token, oldest first, revoked ones included; never their text.
    pub fn list_tokens(&self) -> Result<Vec<TokenInfo>> {
        self.engine.list_tokens()
    }

    /// Revokes a token, named by its text or by at least 6 hex digits of
    /// its id; its web sessions end with it.
    pub fn revoke_token(&self, id_or_token: &str) -> Result<TokenInfo> {
        self.engine.revoke_token(id_or_token)
    }

    /// Whether any token is not revoked.
    pub fn has_live_tokens(&self) -> Result<bool> {
        self.engine.has_live_tokens()
    }

    /// The principal of a live token, `None` for an unknown or revoked one.
    pub fn token_principal(&self, token: &str) -> Result<Option<Principal>> {
        self.engine.token_principal(token)
    }

    /// Opens a 12-hour web session with a live token.
    pub fn open_web_session(&self, token: &str) -> Result<Option<WebSession>> {
        self.engine.open_web_session(token)
    }

    /// The principal of a live web session.
    pub fn web_session_principal(&self, session_id: &str) -> Result<Option<Principal>> {
        self.engine.web_session_principal(session_id)
    }

    /// Ends a web session.
    pub fn close_web_session(&self, session_id: &str) -> Result<()> {
        self.engine.close_web_session(session_id)
    }
}

/// HTTP-1: the router of every route of HTTP-2 and HTTP-7 over
/// `inbox`, authenticating with `auth`. Library calls run on the
/// blocking pool of the runtime that serves it, at most
/// [`HttpOptions::max_calls`](crate::http::HttpOptions::max_calls) at once; waits hold no thread between
/// their checks (HTTP-5).
#[cfg(feature = "http")]
pub fn router(
    inbox: Clarion,
    auth: impl crate::doors::http::Authenticator,
    options: crate::doors::http::HttpOptions,
) -> axum::Router {
    crate::doors::http::router(inbox.engine, Arc::new(auth), options)
}

#[cfg(feature = "http")]
impl crate::doors::http::TokenAuthenticator {
    /// HTTP-4: bearer tokens and web sessions of `inbox`'s database
    /// ([`Clarion::add_token`]).
    pub fn new(inbox: &Clarion) -> crate::doors::http::TokenAuthenticator {
        crate::doors::http::TokenAuthenticator::with_engine(inbox.engine.clone())
    }
}
