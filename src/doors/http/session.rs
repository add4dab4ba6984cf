//! `POST /api/v1/session` and `DELETE /api/v1/session` (HTTP-4): the web
//! inbox signs in with a token and gets a session cookie (`HttpOnly`,
//! `SameSite=Strict`, `Path=/`, `Secure` when configured), and signs out.

use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::request::Parts;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};

use crate::doors::envelope::{self, Envelope};
use crate::doors::http::auth::{cookie, SESSION_COOKIE};
use crate::doors::http::caller::{check_origin, copy_of, Caller, Via};
use crate::doors::http::error::HttpError;
use crate::doors::http::input::Input;
use crate::doors::http::state::AppState;
use crate::doors::json::Fields;
use crate::error::ValidationError;

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
#[utoipa::path(
    post,
    path = "/api/v1/session",
    tag = "session",
    security(()),
    request_body(content = Object, description = "`{\"token\": \"clr_…\"}`.", content_type = "application/json"),
    responses(
        (status = 200, description = "`{\"ok\": true}`; sets the `clarion_session` cookie."),
        (status = 401, description = "The token is unknown or revoked."),
        (status = 403, description = "Cross-site request refused."),
    )
)]
pub(crate) async fn sign_in(
    State(state): State<AppState>,
    RequestParts(parts): RequestParts,
    input: Input,
) -> Result<Response, HttpError> {
    check_origin(&parts, &state.options)?;
    input.no_query()?;
    let body = serde_json::Value::Object(input.object()?);
    let token = {
        let fields = Fields::top(&body, "body")?;
        fields.only(&["token"])?;
        fields.id("token").map(str::to_owned)?
    };
    if token.contains('\0') {
        return Err(ValidationError::new("token", "must not contain a NUL character").into());
    }
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
#[utoipa::path(
    get,
    path = "/api/v1/session",
    operation_id = "current_session",
    tag = "session",
    responses(
        (status = 200, description = "`{\"principal\": {\"kind\", …}, \"via\": \"session\" | \"bearer\" | \"open\"}`."),
        (status = 401, description = "No valid credential."),
    )
)]
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
    Ok(Envelope::ok(serde_json::json!({
        "principal": caller.principal.to_wire(),
        "via": via,
    })))
}

/// Signs out: the session ends and the cookie is cleared.
#[utoipa::path(
    delete,
    path = "/api/v1/session",
    tag = "session",
    responses(
        (status = 200, description = "`{\"ok\": true}`; clears the cookie."),
        (status = 401, description = "No valid credential."),
    )
)]
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
