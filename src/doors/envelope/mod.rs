//! Every JSON body and status clarion returns (WIRE-1..3, LIST-5..7), made
//! in one place: each body is a type with a derived `Serialize` — a domain
//! view as it is, or a wrapper in `bodies` — so keys are always present
//! whatever their values (`[]`, `""`, `false`, and `null` only where the
//! spec says so), in field order. The snapshot tests pin the exact bytes;
//! the same types publish the schemas.

pub(crate) mod bodies;

use serde::Serialize;
use serde_json::{json, Value};

use crate::domain::ask::Asked;
use crate::domain::events::{Event, EventPage};
use crate::domain::history::SettledPage;
use crate::domain::listing::{ListPage, Summary, TaskPendingActions};
use crate::domain::resume::Delivery;
use crate::domain::views::{BundleDetail, BundleView, Resolved, Response, WaitOutcome};
use crate::error::{Error, ErrorCode, ValidationError};
use crate::rules::capability::Authorization;

use bodies::{
    AnsweredBody, AuthorizationBody, CodedErrorBody, DeliveriesBody, ErrorBody, EventsBody,
    HasPendingBody, OkBody, PageBody, PrunedBody, ResolvedBody, SettledPageBody, TasksBody,
    TurnBody, WaitedBody,
};

/// An operation's result: the HTTP-shaped pair of WIRE-1 and, for an
/// error, what WIRE-5's reply says of it beside the body.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The HTTP status (WIRE-1).
    pub status: u16,
    /// The JSON body.
    pub body: Value,
    /// The error's code word (WIRE-4); `None` on a success and on a
    /// door's own refusal (the HTTP door's 401, 413, …), which no reply
    /// carries.
    pub code: Option<ErrorCode>,
    /// A validation error's field path; `""` otherwise.
    pub field: String,
}

impl Envelope {
    /// A `200` with `body`.
    pub fn ok(body: Value) -> Envelope {
        Envelope {
            status: 200,
            body,
            code: None,
            field: String::new(),
        }
    }

    /// The body as compact JSON text.
    pub fn body_text(&self) -> String {
        self.body.to_string()
    }

    /// `{"status": <int>, "body": <json>, "code": "...", "field": "..."}`
    /// (WIRE-5): the code `""` on a success, the field `""` but on a
    /// validation error, so a caller branches on words, never on message
    /// text.
    pub fn to_reply(&self) -> String {
        let code = self.code.map_or("", ErrorCode::as_str);
        json!({"status": self.status, "body": self.body, "code": code, "field": self.field})
            .to_string()
    }
}

/// The JSON of a body. The bodies hold strings, numbers, booleans and
/// arrays of them only, which always serialize; a failure would be a bug
/// of clarion's, answered as the internal error it is, never a panic.
pub(crate) fn to_json(body: &impl Serialize) -> Value {
    serde_json::to_value(body).unwrap_or_else(
        |error| json!({"error": internal_error(&format!("a body did not serialize: {error}"))}),
    )
}

/// A `200` with `body`'s JSON.
pub(crate) fn ok_with(body: &impl Serialize) -> Envelope {
    Envelope::ok(to_json(body))
}

/// WIRE-1: the status and body of every error. The message is the
/// error's own text; a capability denial also carries its code. An
/// internal error (500) shows only a reference (REL-6).
pub fn error(error: &Error) -> Envelope {
    let body = match error.code() {
        // A denial and QUO-3's two refusals say which by their code.
        code @ (ErrorCode::CapabilityDenied | ErrorCode::NotEligible | ErrorCode::AlreadyVoted) => {
            to_json(&CodedErrorBody::new(error.to_string(), code))
        }
        _ => to_json(&ErrorBody {
            error: message(error),
        }),
    };
    Envelope {
        status: error.http_status(),
        body,
        code: Some(error.code()),
        field: error.field().to_owned(),
    }
}

/// What an external caller reads of an error. An internal one (a database
/// failure, a broken invariant) is logged with its cause under a fresh
/// reference, and only `internal error (ref <id>)` leaves the process
/// (REL-6): database messages never reach a caller.
fn message(error: &Error) -> String {
    if error.http_status() != 500 {
        return error.to_string();
    }
    internal_error(&error.to_string())
}

/// Logs `cause` under a fresh reference and returns the message a caller
/// sees instead of it (REL-6).
pub fn internal_error(cause: &str) -> String {
    let reference = uuid::Uuid::now_v7().simple().to_string();
    // The last 16 hex digits are random; enough to find the log line.
    let reference = &reference[reference.len() - 16..];
    tracing::error!(reference, cause, "internal error");
    format!("internal error (ref {reference})")
}

/// WIRE-3 ask.
pub fn asked(asked: &Asked) -> Envelope {
    ok_with(asked)
}

/// LIST-6: one bundle element (the shape the event log freezes too).
pub fn bundle(view: &BundleView) -> Value {
    to_json(view)
}

/// WIRE-2: the response object; every key always present.
pub fn response(value: &Response) -> Value {
    to_json(value)
}

/// WIRE-3 get_bundle: the LIST-6 element plus `status` and `response`
/// (`null` until resolved).
pub fn bundle_detail(detail: &BundleDetail) -> Envelope {
    ok_with(detail)
}

/// LIST-5: one page of the inbox, `count` always equal to its length.
pub fn list_page(page: &ListPage) -> Envelope {
    ok_with(&PageBody::from(page))
}

/// LIST-13: one page of what was decided, each element a `get_bundle` body.
pub fn settled_page(page: &SettledPage) -> Envelope {
    ok_with(&SettledPageBody::from(page))
}

/// SUM-1: the pending counts and the oldest age.
pub fn summary(summary: &Summary) -> Envelope {
    ok_with(summary)
}

/// PA-1: `null` when nothing is pending.
pub fn pending_actions(tasks: &[TaskPendingActions]) -> Envelope {
    ok_with(&TasksBody::from(&tasks.to_vec()))
}

/// WIRE-3 authorize: `reason` is empty when allowed.
pub fn authorization(authorization: Authorization) -> Envelope {
    ok_with(&AuthorizationBody::from(&authorization))
}

/// WIRE-1: a won or lost resolve/cancel; both are 200.
pub fn resolved(resolved: &Resolved) -> Envelope {
    ok_with(&ResolvedBody::from(resolved))
}

/// LIFE-8 `pending_deliveries`: DEL-3 entries, keys in the specified order.
pub fn deliveries(deliveries: &[Delivery]) -> Envelope {
    ok_with(&DeliveriesBody::from(&deliveries.to_vec()))
}

/// Mirror operations and other acknowledgements: `{"ok": true}`.
pub fn ok() -> Envelope {
    ok_with(&OkBody::from(&()))
}

/// WIRE-5 `wait`: always 200, the WAIT-1 outcome and the response or `null`.
pub fn waited(outcome: &WaitOutcome) -> Envelope {
    ok_with(&WaitedBody::from(outcome))
}

/// EVT-2 `events_after`: the visible events, the position to continue
/// from, and whether events were pruned in between.
pub fn events(page: &EventPage) -> Envelope {
    ok_with(&EventsBody::from(page))
}

/// EVT-2: one event, keys in the specified order (also the `data:` of an
/// SSE message, HTTP-6).
pub fn event(event: &Event) -> Value {
    to_json(event)
}

/// REL-8 `prune`: how many bundles it deleted.
pub fn pruned(count: u64) -> Envelope {
    ok_with(&PrunedBody::from(&count))
}

/// WIRE-5 `begin_turn`.
pub fn turn_started(turn_id: &str) -> Envelope {
    ok_with(&TurnBody::from(&turn_id.to_owned()))
}

/// WIRE-5 `has_pending_clarification`.
pub fn has_pending(has_pending: bool) -> Envelope {
    ok_with(&HasPendingBody::from(&has_pending))
}

/// A request refused before it reached an operation (WIRE-5): a 400
/// about `field` (`request`, `handle`), its message naming it.
pub fn bad_request(field: &str, message: impl Into<String>) -> Envelope {
    error(&Error::Validation(ValidationError::new(field, message)))
}

/// A request a door refused before any operation (HTTP-3: unknown route,
/// missing credential, body too large, …): `{"error": message}` with the
/// door's status.
pub fn refused(status: u16, message: impl Into<String>) -> Envelope {
    Envelope {
        status,
        body: to_json(&ErrorBody {
            error: message.into(),
        }),
        code: None,
        field: String::new(),
    }
}

/// WIRE-4 `answer_question` success: won or beaten by a winner.
pub fn tool_answered(resolved: &Resolved) -> Value {
    to_json(&AnsweredBody::from(resolved))
}

/// WIRE-4: an MCP tool error, `{"error", "code"}`. "No longer active" is
/// distinct from not-found; everything unexpected is `internal`.
pub fn tool_error(error: &Error) -> Value {
    to_json(&CodedErrorBody::new(message(error), error.code()))
}

/// The MCP `CallToolResult` shape: the JSON as text content and, for a
/// success, again as `structuredContent` (which matches the tool's
/// `outputSchema`). An error (`isError: true`) carries its
/// `{"error", "code"}` in the text content only: MCP wants structured
/// content to conform to the output schema, and the official TypeScript
/// SDK checks it even on errors (docs/mcp.md).
pub fn tool_result(structured: Value, is_error: bool) -> Value {
    let text = json!([{"type": "text", "text": structured.to_string()}]);
    if is_error {
        json!({"content": text, "isError": true})
    } else {
        json!({"content": text, "structuredContent": structured, "isError": false})
    }
}
