//! What a route reads from a request besides its credential: the body
//! (the last extractor, so it runs after authentication: HTTP-3's 413 and
//! 415 come after 401 and 403), the path ids and the query. Path and query
//! are only collected here; they are checked when the route builds its
//! WIRE-5 arguments, after the capability (WIRE-5's order).

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::Method;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{Map, Value};

use crate::doors::args::type_name;
use crate::doors::http::error::HttpError;
use crate::doors::http::options::MAX_BODY_BYTES;
use crate::doors::http::state::AppState;
use crate::error::ValidationError;
use crate::rules::limits::check_id;

type Checked<T> = Result<T, ValidationError>;

/// The request's path ids, query and body, read within HTTP-3's limits.
pub(crate) struct Input {
    /// Path ids, percent-decoded once; `Err` when one is not UTF-8.
    params: Checked<Vec<(String, String)>>,
    query: Option<String>,
    body: Bytes,
}

/// HTTP-12: when receiving the request must be over, set by the server
/// loop as the request arrives.
#[derive(Clone, Copy)]
pub(crate) struct RequestDeadline(pub(crate) tokio::time::Instant);

/// How a query parameter's text becomes a JSON argument.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Text,
    Integer,
}

impl FromRequest<AppState> for Input {
    type Rejection = HttpError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, HttpError> {
        let (mut parts, body) = request.into_parts();
        let Input { params, query, .. } = Input::of_target(&mut parts, state).await;
        // HTTP-3: above 1 MiB is a 413, told by the length when the client
        // gives one, else found while reading (never read past the limit).
        let declared = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
            return Err(HttpError::BodyTooLarge);
        }
        // HTTP-12: the body must arrive by the request's deadline, which
        // the server loop sets (a router served otherwise has none).
        let deadline = parts.extensions.get::<RequestDeadline>().map(|d| d.0);
        let body = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, read_limited(body))
                .await
                .map_err(|_| HttpError::RequestTimeout)??,
            None => read_limited(body).await?,
        };
        // HTTP-3: a POST body must be JSON (an empty one needs no type).
        if parts.method == Method::POST && !body.is_empty() && !is_json(&parts) {
            return Err(HttpError::UnsupportedMediaType);
        }
        Ok(Input {
            params,
            query,
            body,
        })
    }
}

impl Input {
    /// The path ids and the query alone: a bodiless route's input
    /// (HTTP-15), which never reads a body.
    pub(crate) async fn of_target(parts: &mut Parts, state: &AppState) -> Input {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map(|params| {
                params
                    .iter()
                    .map(|(key, value)| (key.to_owned(), value.to_owned()))
                    .collect()
            })
            .map_err(|_| ValidationError::new("path", "not valid UTF-8 once percent-decoded"));
        Input {
            params,
            query: parts.uri.query().map(str::to_owned),
            body: Bytes::new(),
        }
    }
}

async fn read_limited(body: Body) -> Result<Bytes, HttpError> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            Err(HttpError::BodyTooLarge)
        }
        // The client stopped sending mid-body: nobody is left to answer,
        // and this is no server failure.
        Err(_) => Err(ValidationError::new("body", "could not be read").into()),
    }
}

fn is_json(parts: &axum::http::request::Parts) -> bool {
    parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

impl Input {
    /// A path id, percent-decoded once: empty or holding a NUL is a 400
    /// naming it (HTTP-3, REL-6).
    pub(crate) fn id(&self, name: &str) -> Checked<String> {
        let params = self.params.as_ref().map_err(Clone::clone)?;
        let value = params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_default();
        check_id(name, &value)?;
        Ok(value)
    }

    /// The query as WIRE-5 arguments: only `allowed` names, each at most
    /// once (else a 400 naming it); an empty value is not given (HTTP-3).
    pub(crate) fn query(&self, allowed: &[(&str, Kind)]) -> Checked<Map<String, Value>> {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(self.query.as_deref().unwrap_or_default())
                .map_err(|_| ValidationError::new("query", "not a valid query string"))?;
        let mut args = Map::new();
        let mut seen: Vec<&str> = Vec::new();
        for (name, value) in &pairs {
            let Some((_, kind)) = allowed.iter().find(|(known, _)| known == name) else {
                return Err(ValidationError::new(
                    name.clone(),
                    "unknown query parameter",
                ));
            };
            if seen.contains(&name.as_str()) {
                return Err(ValidationError::new(
                    name.clone(),
                    "repeated query parameter",
                ));
            }
            seen.push(name);
            if value.is_empty() {
                continue;
            }
            let value = match kind {
                Kind::Text => Value::from(value.clone()),
                Kind::Integer => integer(value)
                    .ok_or_else(|| ValidationError::new(name.clone(), "expected an integer"))?,
            };
            args.insert(name.clone(), value);
        }
        Ok(args)
    }

    /// No query at all: a route without parameters refuses any (HTTP-3).
    pub(crate) fn no_query(&self) -> Checked<()> {
        self.query(&[]).map(|_| ())
    }

    /// The body as a JSON object; an empty body is `{}`. Not JSON, or not
    /// an object (`null` included: a body that is there says something), is
    /// a 400 naming the body.
    pub(crate) fn object(&self) -> Checked<Map<String, Value>> {
        if self.body.is_empty() {
            return Ok(Map::new());
        }
        let value: Value = serde_json::from_slice(&self.body)
            .map_err(|error| ValidationError::new("body", format!("not valid JSON: {error}")))?;
        match value {
            Value::Object(map) => Ok(map),
            other => Err(ValidationError::new(
                "body",
                format!("expected an object, got {}", type_name(&other)),
            )),
        }
    }
}

/// A query integer, as JSON would read it: digits with an optional sign,
/// saturating like the JSON door does for huge ones.
fn integer(text: &str) -> Option<Value> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Value::from(text.parse::<i64>().unwrap_or(
        if text.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        },
    )))
}
