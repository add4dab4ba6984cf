//! WIRE-5 requests: `{"op", "principal", "args"}` in, an [`Envelope`] out.
//! The C ABI and the command line go through it; the operation's own
//! declaration (`doors/operations/`) reads its arguments and performs it.
//!
//! Order of checks (WIRE-5): the request envelope (400) → the capability
//! (403), before `args` is read → everything checkable without the database:
//! types, required fields, enum values, formats, ASK-2/3 (400) → the
//! operation itself: lookups (404), state (409), then the rules that need
//! stored data (VAL-1, 2, 6, 8; 400).

use serde::Deserialize;
use serde_json::Value;

use crate::domain::engine::Engine;
use crate::doors::args::{self, Id};
use crate::doors::envelope::{self, Envelope};
use crate::doors::operations::{Entry, Operation};
use crate::error::{Error, ValidationError};
use crate::rules::limits::MAX_REQUEST_BYTES;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;

type Checked<T> = std::result::Result<T, ValidationError>;

/// A WIRE-5 principal as written (AUTH-1); [`Principal::from_parts`] is
/// the one parser, its errors prefixed `principal.`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PrincipalArgs {
    kind: Id,
    /// `""` is kept: a user or agent without one is refused by the parser.
    user_id: Option<String>,
    agent_id: Option<String>,
    grants: Option<Vec<String>>,
}

/// WIRE-5 principals (a `user_id` of `""` is refused as empty).
pub(crate) fn principal(value: &Value) -> Checked<Principal> {
    let parts: PrincipalArgs = args::read_at(value, "principal")?;
    let grants = parts.grants.unwrap_or_default();
    Principal::from_parts(
        &parts.kind,
        parts.user_id.as_deref(),
        args::given(parts.agent_id).as_deref(),
        grants.iter().map(String::as_str),
    )
    .map_err(|error| ValidationError::new(format!("principal.{}", error.field), error.message))
}

/// The request envelope. `args` is never looked at here: it is read only
/// after the capability check.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // `args` is taken from the request itself, unread
struct Request {
    op: Id,
    principal: Option<Value>,
    args: Option<serde::de::IgnoredAny>,
}

/// The request envelope: which operation, by whom, with which arguments.
fn envelope_parts(request: &Value) -> Checked<(&'static Entry, Principal, &Value)> {
    let head: Request = args::read(request, "request")?;
    let entry = Operation::callable(&head.op)
        .ok_or_else(|| ValidationError::new("op", format!("unknown operation {:?}", head.op.0)))?;
    let principal_value = head
        .principal
        .ok_or_else(|| ValidationError::new("principal", "required"))?;
    let principal = principal(&principal_value)?;
    let args = request.get("args").unwrap_or(&Value::Null);
    Ok((entry, principal, args))
}

/// WIRE-5: performs one JSON request and returns its envelope. Never
/// panics on input: malformed, oversized or too deeply nested text is a
/// 400 naming the problem.
pub(crate) fn call(engine: &Engine, channel: Channel, request: &str) -> Envelope {
    if request.len() > MAX_REQUEST_BYTES {
        return envelope::bad_request("request", format!("larger than {MAX_REQUEST_BYTES} bytes"));
    }
    match serde_json::from_str::<Value>(request) {
        Ok(value) => call_value(engine, channel, &value),
        Err(error) => envelope::bad_request("request", format!("not valid JSON: {error}")),
    }
}

/// [`call`] on raw bytes, which must be UTF-8.
pub(crate) fn call_bytes(engine: &Engine, channel: Channel, request: &[u8]) -> Envelope {
    match std::str::from_utf8(request) {
        Ok(text) => call(engine, channel, text),
        Err(_) => envelope::bad_request("request", "not valid UTF-8"),
    }
}

/// [`call`] on an already parsed request.
pub(crate) fn call_value(engine: &Engine, channel: Channel, request: &Value) -> Envelope {
    match envelope_parts(request) {
        Ok((entry, principal, args)) => perform(engine, entry, &principal, channel, args),
        Err(error) => envelope::error(&Error::Validation(error)),
    }
}

/// One operation, its principal already known (the HTTP door's `/rpc`),
/// recording `channel` (AUD-4).
pub(crate) fn perform(
    engine: &Engine,
    entry: &Entry,
    principal: &Principal,
    channel: Channel,
    args: &Value,
) -> Envelope {
    match entry.call {
        Some(call) => call(engine, principal, channel, args),
        None => envelope::error(&Error::Validation(ValidationError::new(
            "op",
            format!("unknown operation {:?}", entry.name),
        ))),
    }
}
