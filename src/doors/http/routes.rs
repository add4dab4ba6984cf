//! HTTP-2: the routes of the declared operations. Each declaration with a
//! route (`doors/operations/`) gets it here, and every operation is at
//! `POST /api/v1/rpc/{op}` with exactly its WIRE-5 arguments as the body.
//! A route turns its path ids, its query (each parameter read as the
//! argument's schema types it) and its body into the operation's
//! arguments; the operation then reads them in WIRE-5's order, so the
//! bytes are WIRE-1..3's and the same as `/rpc` and the C ABI answer. The
//! four per-bundle paths are the seed's, so clients written against them
//! keep working.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use serde_json::Value;

use crate::domain::engine::Engine;
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::caller::{admitted, copy_of, Caller};
use crate::doors::http::error::HttpError;
use crate::doors::http::input::{Input, Kind};
use crate::doors::http::state::AppState;
use crate::doors::http::wait;
use crate::doors::json;
use crate::doors::operations::{Entry, Method, Operation, PropertyKind, ENTRIES};
use crate::error::{Error, ValidationError};
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;

/// How a route reads its arguments, worked out once from the declaration.
struct Reading {
    /// The path's `{names}`, each an argument.
    path: Vec<String>,
    /// The query parameters a `GET` takes, each read as its type.
    query: Vec<(String, Kind)>,
    /// A `POST` reads the other arguments from its JSON body.
    body: bool,
}

/// The names inside `{…}` of a route's path.
pub(crate) fn path_names(path: &str) -> Vec<String> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(str::to_owned)
        .collect()
}

/// The arguments' properties and whether each is an integer, from the
/// operation's own schema (its one reader, [`Operation::properties`]).
///
/// [`Operation::properties`]: crate::Operation::properties
pub(crate) fn properties(entry: &Entry) -> Vec<(String, Kind)> {
    entry
        .operation
        .properties()
        .into_iter()
        .map(|property| {
            let kind = match property.kind {
                PropertyKind::Integer => Kind::Integer,
                _ => Kind::Text,
            };
            (property.name, kind)
        })
        .collect()
}

impl Reading {
    fn of(entry: &Entry, path: &str, method: Method) -> Reading {
        let path = path_names(path);
        let query = match method {
            Method::Get => properties(entry)
                .into_iter()
                .filter(|(name, _)| !path.contains(name))
                .collect(),
            Method::Post => Vec::new(),
        };
        Reading {
            path,
            query,
            body: method == Method::Post,
        }
    }

    /// The operation's arguments from the request. A path id given in the
    /// body too is refused, so the path alone names the bundle.
    fn args(&self, input: &Input) -> Result<Value, ValidationError> {
        let query: Vec<(&str, Kind)> = self
            .query
            .iter()
            .map(|(name, kind)| (name.as_str(), *kind))
            .collect();
        let mut args = input.query(&query)?;
        if self.body {
            let body = input.object()?;
            if let Some(name) = self
                .path
                .iter()
                .find(|name| body.contains_key(name.as_str()))
            {
                return Err(ValidationError::new(
                    name.clone(),
                    "given in the path; not allowed in the body",
                ));
            }
            args.extend(body);
        }
        for name in &self.path {
            args.insert(name.clone(), input.id(name)?.into());
        }
        Ok(Value::Object(args))
    }
}

/// Performs `entry` with `args` for the caller: a wait is driven without
/// a thread (HTTP-5), anything else runs on the blocking pool.
async fn perform(
    state: &AppState,
    entry: &'static Entry,
    caller: Caller,
    args: Result<Value, ValidationError>,
) -> Response {
    let args = match admitted_args(entry, &caller.principal, args) {
        Ok(args) => args,
        Err(refused) => return refused.into_response(),
    };
    match entry.begin_wait {
        Some(_) => match wait::drive(state, entry, &caller, args).await {
            Ok(over) => over.into_response(),
            Err(refused) => refused.into_response(),
        },
        None => state
            .perform(entry, caller.principal, args)
            .await
            .into_response(),
    }
}

fn handler(entry: &'static Entry, reading: Reading) -> MethodRouter<AppState> {
    let reading = Arc::new(reading);
    if !reading.body && entry.begin_wait.is_none() {
        return get(move |State(state): State<AppState>, request: Request| {
            let reading = reading.clone();
            async move { in_one_trip(&state, entry, &reading, request).await }
        });
    }
    let body = reading.body;
    let handle = move |State(state): State<AppState>, caller: Caller, input: Input| {
        let reading = reading.clone();
        async move {
            let args = reading.args(&input);
            perform(&state, entry, caller, args).await
        }
    };
    if body {
        post(handle)
    } else {
        get(handle)
    }
}

/// HTTP-15: a request without a body is authenticated and performed in
/// one trip to the blocking pool, in the order the two trips would take:
/// authentication (401, the origin rule), the capability, the arguments,
/// the operation. No body is read at all.
async fn in_one_trip(
    state: &AppState,
    entry: &'static Entry,
    reading: &Reading,
    request: Request,
) -> Response {
    let (mut parts, _unread) = request.into_parts();
    let args = reading.args(&Input::of_target(&mut parts, state).await);
    let request = copy_of(&parts);
    let shared = state.clone();
    let performed = state
        .blocking(move |engine| {
            let authentication = shared.auth.authenticate(&request);
            let (principal, _) = admitted(authentication, &request, &shared.options)?;
            Ok::<_, HttpError>(checked_call(engine, entry, &principal, args))
        })
        .await;
    match performed {
        Ok(Ok(reply)) => reply.into_response(),
        Ok(Err(refused)) | Err(refused) => refused.into_response(),
    }
}

/// WIRE-5 from the capability on, then the operation as the JSON door
/// performs it.
fn checked_call(
    engine: &Engine,
    entry: &'static Entry,
    principal: &Principal,
    args: Result<Value, ValidationError>,
) -> Envelope {
    match admitted_args(entry, principal, args) {
        Ok(args) => json::perform(engine, entry, principal, Channel::Http, &args),
        Err(refused) => refused,
    }
}

/// WIRE-5: the capability before the arguments are even looked at, then
/// the arguments' own refusal.
fn admitted_args(
    entry: &Entry,
    principal: &Principal,
    args: Result<Value, ValidationError>,
) -> Result<Value, Envelope> {
    if !entry.access.admits(principal) {
        return Err(envelope::error(&Error::CapabilityDenied));
    }
    args.map_err(|error| envelope::error(&Error::Validation(error)))
}

/// `POST /api/v1/rpc/{op}`: any WIRE-5 operation, its body exactly the
/// operation's arguments. The principal always comes from
/// authentication: a `principal` member is refused, never ignored.
async fn rpc(State(state): State<AppState>, caller: Caller, input: Input) -> Response {
    let op = match input.id("op") {
        Ok(op) => op,
        Err(error) => return envelope::error(&Error::Validation(error)).into_response(),
    };
    // The request envelope before the capability (WIRE-5): an unknown op
    // is a 400 for everyone. `metrics` is no WIRE-5 operation.
    let Some(entry) = Operation::callable(&op) else {
        let error = ValidationError::new("op", format!("unknown operation {op:?}"));
        return envelope::error(&Error::Validation(error)).into_response();
    };
    let args = input
        .no_query()
        .and_then(|()| input.object())
        .and_then(|body| {
            if body.contains_key("principal") {
                return Err(ValidationError::new(
                    "principal",
                    "not allowed in the body: the principal comes from authentication",
                ));
            }
            Ok(Value::Object(body))
        });
    perform(&state, entry, caller, args).await
}

/// The `/rpc` path of an operation, as the OpenAPI document lists it.
pub(crate) fn rpc_path(name: &str) -> String {
    format!("/api/v1/rpc/{name}")
}

/// Every declared operation's route, and `/rpc/{op}`.
pub(crate) fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for entry in ENTRIES {
        if let Some(route) = entry.http {
            let reading = Reading::of(entry, route.path, route.method);
            router = router.route(route.path, handler(entry, reading));
        }
    }
    router.route("/api/v1/rpc/{op}", post(rpc))
}
