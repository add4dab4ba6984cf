//! `POST /api/v1/session` and `DELETE /api/v1/session` (HTTP-4): the web
//! inbox signs in with a token and gets a session cookie (`HttpOnly`,
//! `SameSite=Strict`, `Path=/`, `Secure` when configured), and signs out.

use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::request::Parts;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};

use crate::doors::args::{self, Id};
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::auth::{cookie, SESSION_COOKIE};
use crate::doors::http::caller::{check_origin, copy_of, Caller, Via};
use crate::doors::http::error::HttpError;
use crate::doors::http::input::Input;
use crate::doors::http::state::AppState;
use crate::rules::principal::Principal;

fn set_cookie(state: &AppState, value: &str, max_age_secs: u64) -> Option<HeaderValue> {
    let secure = if state.options.secure_cookies {
        "; Secure"
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "{SESSION_COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age_secs}{secure}"
    ))
    .ok()
}

/// `POST /api/v1/session`'s body.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SignIn")]
pub(crate) struct SignInArgs {
    /// An API token (`clarion token add`).
    token: Id,
}

/// How a request authenticated (UI-2).
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
#[serde(rename_all = "snake_case")]
enum ViaWord {
    /// A web session's cookie.
    Session,
    /// A bearer token.
    Bearer,
    /// No credential: `clarion serve --open-as`.
    Open,
}

/// `GET /api/v1/session`: who the request authenticates as, and how.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "Session")]
pub(crate) struct SessionBody {
    /// The principal, in its written form (WIRE-5).
    principal: Principal,
    /// `session`, `bearer` or `open`.
    #[schemars(with = "ViaWord")]
    via: &'static str,
}

/// The request's parts, as the route saw them (for the origin rule and
/// the authenticator).
pub(crate) struct RequestParts(Parts);

impl axum::extract::FromRequestParts<AppState> for RequestParts {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, Self::Rejection> {
        Ok(RequestParts(copy_of(parts)))
    }
}

/// Signs in with `{"token"}`: `200 {"ok": true}` and the session cookie,
/// or `401` when the token names nobody (or the authenticator supports no
/// sessions). A sign-in from another origin is refused like any cookie
/// request (HTTP-4), so no page can sign a browser in behind its back.
pub(crate) async fn sign_in(
    State(state): State<AppState>,
    RequestParts(parts): RequestParts,
    input: Input,
) -> Result<Response, HttpError> {
    check_origin(&parts, &state.options)?;
    input.no_query()?;
    let body = serde_json::Value::Object(input.object()?);
    let SignInArgs { token } = args::read(&body, "body")?;
    let token = token.0;
    let auth = state.auth.clone();
    let signed_in = state
        .blocking(move |_| auth.sign_in(&token))
        .await?
        .ok_or(HttpError::AuthenticationRequired)?;
    let mut response = envelope::ok().into_response();
    if let Some(cookie) = set_cookie(&state, &signed_in.cookie, signed_in.max_age.as_secs()) {
        response.headers_mut().insert(SET_COOKIE, cookie);
    }
    Ok(response)
}

/// Who the request authenticates as (UI-2: the page shows it, and offers
/// sign-out only to a web session): `{"principal": {…}, "via":
/// "session" | "bearer" | "open"}`; `open` is an ambient credential
/// without a session cookie (`clarion serve --open-as`).
pub(crate) async fn current(
    caller: Caller,
    RequestParts(parts): RequestParts,
    input: Input,
) -> Result<Envelope, HttpError> {
    input.no_query()?;
    let via = match caller.via {
        Via::Bearer => "bearer",
        Via::Cookie if cookie(&parts, SESSION_COOKIE).is_some() => "session",
        Via::Cookie => "open",
    };
    Ok(envelope::ok_with(&SessionBody {
        principal: caller.principal,
        via,
    }))
}

/// Signs out: the session ends and the cookie is cleared.
pub(crate) async fn sign_out(
    State(state): State<AppState>,
    _caller: Caller,
    RequestParts(parts): RequestParts,
    input: Input,
) -> Result<Response, HttpError> {
    input.no_query()?;
    let auth = state.auth.clone();
    state.blocking(move |_| auth.sign_out(&parts)).await?;
    let mut response = envelope::ok().into_response();
    if let Some(cookie) = set_cookie(&state, "", 0) {
        response.headers_mut().insert(SET_COOKIE, cookie);
    }
    Ok(response)
}
