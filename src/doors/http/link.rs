//! The answer links' routes (LINK-2, LINK-3, LINK-5): `GET`/`HEAD
//! /a/<token>`, the page in one-bundle mode or its one `404` page, and
//! `/api/v1/link/{bundle,respond,cancel}`, which take `Authorization:
//! Link <token>` and nothing else. What each does is `doors::link`'s;
//! this is the HTTP around it. A link credential anywhere else is a
//! `401` ([`refuse_elsewhere`]).

use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::domain::links::LinkPurpose;
use crate::domain::resolve::ResolveRequest;
use crate::doors::args;
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::error::HttpError;
use crate::doors::http::input::Input;
use crate::doors::http::state::AppState;
use crate::doors::http::web;
use crate::doors::link;
use crate::doors::operations::AnswerArgs;
use crate::error::{Error, Result};

/// The link API's paths (LINK-3): the only ones a `Link` credential opens.
pub(crate) const BUNDLE_PATH: &str = "/api/v1/link/bundle";
pub(crate) const RESPOND_PATH: &str = "/api/v1/link/respond";
pub(crate) const CANCEL_PATH: &str = "/api/v1/link/cancel";
/// The page's routes (LINK-2): `/a/` (the empty token) and `/a/<anything>`.
const PAGE_PATHS: [&str; 2] = ["/a/", "/a/{*token}"];

/// The link routes, merged into the router beside the others.
pub(crate) fn routes() -> Router<AppState> {
    let router = PAGE_PATHS
        .iter()
        .fold(Router::new(), |router, path| router.route(path, get(page)));
    router
        .route(BUNDLE_PATH, get(bundle))
        .route(RESPOND_PATH, post(respond))
        .route(CANCEL_PATH, post(cancel))
}

/// The token of `Authorization: Link <token>`, if the request has one.
fn link_token(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("link").then(|| token.trim())
}

/// Whether the request carries a `Link` credential (of any shape).
fn carries_link(parts: &Parts) -> bool {
    parts.headers.get_all(AUTHORIZATION).iter().any(|value| {
        let scheme = value.as_bytes().split(|byte| *byte == b' ').next();
        scheme.is_some_and(|scheme| scheme.eq_ignore_ascii_case(b"link"))
    })
}

/// LINK-3: a `Link` credential is a `401` on every route but the link
/// API's (the page, which reads no credential, ignores it). A route
/// layer, so an unknown path is still HTTP-3's `404`.
pub(crate) async fn refuse_elsewhere(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let route = parts
        .extensions
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    let link_route = route.is_some_and(|route| {
        [BUNDLE_PATH, RESPOND_PATH, CANCEL_PATH].contains(&route) || PAGE_PATHS.contains(&route)
    });
    if !link_route && carries_link(&parts) {
        return HttpError::AuthenticationRequired.into_response();
    }
    next.run(Request::from_parts(parts, body)).await
}

/// The verified link credential of a link API route: the extractor that
/// comes first, so HTTP-3's `401` (no `Link` token, or one that does not
/// verify) precedes the body's checks. Cookies, bearer tokens and
/// `--open-as` are never consulted here (LINK-3).
pub(crate) struct LinkToken(String);

impl FromRequestParts<AppState> for LinkToken {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let token = link_token(parts)
            .filter(|token| !token.is_empty())
            .ok_or(HttpError::AuthenticationRequired)?
            .to_owned();
        let checked = token.clone();
        // The route's operation checks it again for its own purpose (an
        // answer's time ends sooner); this check only orders the 401.
        let verifies = state
            .blocking(move |engine| engine.link_caller(&checked, LinkPurpose::Open))
            .await??
            .is_some();
        if verifies {
            Ok(LinkToken(token))
        } else {
            Err(HttpError::AuthenticationRequired)
        }
    }
}

/// `POST /api/v1/link/respond`'s body: `resolve_bundle`'s arguments but
/// the bundle, which the link names (LINK-3).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinkRespondArgs {
    /// One entry per question of the bundle; empty for a rejection.
    answers: Option<Vec<AnswerArgs>>,
    /// Decline to answer; then give no answers.
    rejected: Option<bool>,
    /// Why, at most 2000 characters (trimmed when stored).
    reject_reason: Option<String>,
}

impl LinkRespondArgs {
    fn request(self) -> ResolveRequest {
        ResolveRequest {
            answers: self
                .answers
                .unwrap_or_default()
                .into_iter()
                .map(AnswerArgs::input)
                .collect(),
            rejected: self.rejected.unwrap_or(false),
            reject_reason: self.reject_reason.unwrap_or_default(),
        }
    }
}

/// `POST /api/v1/link/cancel`'s body: nothing (`{}` or empty).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinkCancelArgs {}

/// A link operation's outcome as the door's reply: `None` (the token no
/// longer verifies for this use) is HTTP-3's `401`.
fn reply<T>(outcome: Result<Option<Result<T>>>, body: impl FnOnce(&T) -> Envelope) -> Response {
    match outcome {
        Ok(Some(Ok(value))) => body(&value).into_response(),
        Ok(Some(Err(error))) | Err(error) => envelope::error(&error).into_response(),
        Ok(None) => HttpError::AuthenticationRequired.into_response(),
    }
}

/// The request's arguments in WIRE-5's order: the body an object, then
/// its fields.
fn body_args<T: serde::de::DeserializeOwned>(input: &Input) -> Result<T, Error> {
    input.no_query()?;
    let body = Value::Object(input.object()?);
    Ok(args::read(&body, "body")?)
}

/// `GET /api/v1/link/bundle` (LINK-3): `{"bundle", "as", "people"}`.
async fn bundle(
    State(state): State<AppState>,
    LinkToken(token): LinkToken,
    input: Input,
) -> Response {
    if let Err(error) = input.no_query() {
        return envelope::error(&Error::Validation(error)).into_response();
    }
    match state
        .blocking(move |engine| link::bundle(engine, &token))
        .await
    {
        Ok(outcome) => reply(outcome, envelope::ok_with),
        Err(refused) => refused.into_response(),
    }
}

/// `POST /api/v1/link/respond` (LINK-3): answers, rejects or votes once.
async fn respond(
    State(state): State<AppState>,
    LinkToken(token): LinkToken,
    input: Input,
) -> Response {
    let request = match body_args::<LinkRespondArgs>(&input) {
        Ok(args) => args.request(),
        Err(error) => return envelope::error(&error).into_response(),
    };
    settled(&state, move |engine| {
        link::respond(engine, &token, &request)
    })
    .await
}

/// `POST /api/v1/link/cancel` (LINK-3): cancels through the same claim.
async fn cancel(
    State(state): State<AppState>,
    LinkToken(token): LinkToken,
    input: Input,
) -> Response {
    if let Err(error) = body_args::<LinkCancelArgs>(&input) {
        return envelope::error(&error).into_response();
    }
    settled(&state, move |engine| link::cancel(engine, &token)).await
}

/// A respond's or cancel's reply, WIRE-1's envelope as the bundle's own
/// routes give it, counted as theirs are (HTTP-7).
async fn settled(
    state: &AppState,
    body: impl FnOnce(
            &crate::domain::engine::Engine,
        ) -> Result<Option<Result<crate::domain::views::Resolved>>>
        + Send
        + 'static,
) -> Response {
    let outcome = match state.blocking(body).await {
        Ok(outcome) => outcome,
        Err(refused) => return refused.into_response(),
    };
    if let Ok(Some(done)) = &outcome {
        let envelope = match done {
            Ok(resolved) => envelope::resolved(resolved),
            Err(error) => envelope::error(error),
        };
        state.metrics.count_resolve(&envelope);
        return envelope.into_response();
    }
    reply(outcome, envelope::resolved)
}

/// LINK-2: `GET`/`HEAD /a/<token>`: the page in one-bundle mode when the
/// token opens it, else the one `404` page, the same bytes whatever the
/// reason. The token is read from the raw path (no decoding, so no path
/// rule refuses it first: a token is base64url, and anything else fails
/// to verify); the query is ignored. Nothing changes.
async fn page(State(state): State<AppState>, request: Request) -> Response {
    let path = request.uri().path();
    let token = path
        .find(crate::rules::links::LINK_PATH)
        .map(|at| path[at + crate::rules::links::LINK_PATH.len()..].to_owned())
        .unwrap_or_default();
    let opens = if token.is_empty() || token.len() > crate::rules::links::MAX_TOKEN_BYTES {
        Ok(false)
    } else {
        match state
            .blocking(move |engine| link::page_opens(engine, &token))
            .await
        {
            Ok(opens) => opens,
            Err(refused) => return refused.into_response(),
        }
    };
    match opens {
        Ok(opens) => web::link_page(&state.options, opens),
        Err(error) => HttpError::from(error).into_response(),
    }
}
