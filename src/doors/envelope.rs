//! Every JSON body and status clarion returns (WIRE-1..3, LIST-5..7), made
//! in one place. Keys are always present whatever their values: `[]`, `""`,
//! `false`, and `null` only where the spec says so. Key order is the order
//! written here (serde_json's `preserve_order`), and the snapshot tests pin
//! the exact bytes.

use serde_json::{json, Value};

use crate::domain::ask::Asked;
use crate::domain::events::{Event, EventPage};
use crate::domain::listing::{Cursor, ListPage, PendingAction, Summary, TaskPendingActions};
use crate::domain::model::{
    BundleDetail, BundleView, Delivery, QuestionView, Resolved, Response, WaitOutcome,
};
use crate::domain::wire;
use crate::error::{Error, ErrorCode};
use crate::rules::capability::Authorization;

/// An operation's result as an HTTP-shaped pair (WIRE-1).
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The HTTP status (WIRE-1).
    pub status: u16,
    /// The JSON body.
    pub body: Value,
}

impl Envelope {
    /// A `200` with `body`.
    pub fn ok(body: Value) -> Envelope {
        Envelope { status: 200, body }
    }

    /// The body as compact JSON text.
    pub fn body_text(&self) -> String {
        self.body.to_string()
    }

    /// `{"status": <int>, "body": <json>}` (WIRE-5).
    pub fn to_reply(&self) -> String {
        json!({"status": self.status, "body": self.body}).to_string()
    }
}

/// WIRE-1: the status and body of every error. The message is the
/// error's own text; a capability denial also carries its code. An
/// internal error (500) shows only a reference (REL-6).
pub fn error(error: &Error) -> Envelope {
    let body = match error.code() {
        ErrorCode::CapabilityDenied => {
            json!({"error": error.to_string(), "code": ErrorCode::CapabilityDenied.as_str()})
        }
        _ => json!({"error": message(error)}),
    };
    Envelope {
        status: error.http_status(),
        body,
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
    Envelope::ok(json!({"pending_id": asked.pending_id, "created": asked.created}))
}

fn question(view: &QuestionView) -> Value {
    wire::question(view)
}

/// LIST-6: one bundle element (the shape the event log freezes too).
pub fn bundle(view: &BundleView) -> Value {
    wire::bundle(view)
}

/// WIRE-2: the response object; every key always present.
pub fn response(value: &Response) -> Value {
    wire::response(value)
}

/// WIRE-3 get_bundle: the LIST-6 element plus `status` and `response`
/// (`null` until resolved).
pub fn bundle_detail(detail: &BundleDetail) -> Envelope {
    let mut body = bundle(&detail.bundle);
    if let Value::Object(map) = &mut body {
        map.insert("status".into(), json!(detail.status.as_str()));
        map.insert(
            "response".into(),
            detail.response.as_ref().map_or(Value::Null, response),
        );
    }
    Envelope::ok(body)
}

/// LIST-5: one page of the inbox, `count` always equal to its length.
pub fn list_page(page: &ListPage) -> Envelope {
    Envelope::ok(json!({
        "bundles": page.bundles.iter().map(bundle).collect::<Vec<_>>(),
        "count": page.bundles.len(),
        "next_cursor": page.next_cursor.as_ref().map(Cursor::encode).unwrap_or_default(),
    }))
}

/// SUM-1: the pending counts and the oldest age.
pub fn summary(summary: &Summary) -> Envelope {
    Envelope::ok(json!({
        "pending_bundles": summary.pending_bundles,
        "pending_questions": summary.pending_questions,
        "oldest_age_seconds": summary.oldest_age_seconds,
    }))
}

fn action(action: Option<PendingAction>) -> Value {
    action.map_or(Value::Null, |action| json!(action.as_str()))
}

/// PA-1: `null` when nothing is pending.
pub fn pending_actions(tasks: &[TaskPendingActions]) -> Envelope {
    Envelope::ok(json!({
        "tasks": tasks.iter().map(|task| json!({
            "task_id": task.task_id,
            "task_pending_action": action(task.task_pending_action),
            "primary_session_pending_action": action(task.primary_session_pending_action),
        })).collect::<Vec<_>>(),
    }))
}

/// WIRE-3 authorize: `reason` is empty when allowed.
pub fn authorization(authorization: Authorization) -> Envelope {
    let (allowed, reason) = match authorization {
        Authorization::Allowed => (true, ""),
        Authorization::Denied(denial) => (false, denial.as_str()),
    };
    Envelope::ok(json!({"allowed": allowed, "reason": reason}))
}

/// WIRE-1: a won or lost resolve/cancel; both are 200.
pub fn resolved(resolved: &Resolved) -> Envelope {
    Envelope::ok(json!({
        "success": true,
        "claimed": resolved.claimed,
        "status": resolved.status.as_str(),
        "response": response(&resolved.response),
    }))
}

/// LIFE-8 `pending_deliveries`: DEL-3 entries, keys in the specified order.
pub fn deliveries(deliveries: &[Delivery]) -> Envelope {
    Envelope::ok(json!({
        "deliveries": deliveries.iter().map(|delivery| json!({
            "pending_id": delivery.pending_id,
            "task_id": delivery.task_id,
            "session_id": delivery.session_id,
            "status": delivery.status.as_str(),
            "questions": delivery.questions.iter().map(question).collect::<Vec<_>>(),
            "response": response(&delivery.response),
        })).collect::<Vec<_>>(),
    }))
}

/// Mirror operations and other acknowledgements: `{"ok": true}`.
pub fn ok() -> Envelope {
    Envelope::ok(json!({"ok": true}))
}

/// WIRE-5 `wait`: always 200, the WAIT-1 outcome and the response or `null`.
pub fn waited(outcome: &WaitOutcome) -> Envelope {
    Envelope::ok(json!({
        "outcome": outcome.as_str(),
        "response": outcome.response().map_or(Value::Null, response),
    }))
}

/// EVT-2 `events_after`: the visible events, the position to continue
/// from, and whether events were pruned in between.
pub fn events(page: &EventPage) -> Envelope {
    Envelope::ok(json!({
        "events": page.events.iter().map(event).collect::<Vec<_>>(),
        "next": page.next,
        "reset": page.reset,
    }))
}

/// EVT-2: one event, keys in the specified order (also the `data:` of an
/// SSE message, HTTP-6).
pub fn event(event: &Event) -> Value {
    json!({
        "position": event.position,
        "type": event.event_type,
        "at": event.at.to_rfc3339(),
        "pending_id": event.pending_id,
        "task_id": event.task_id,
        "data": event.data,
    })
}

/// REL-8 `prune`: how many bundles it deleted.
pub fn pruned(count: u64) -> Envelope {
    Envelope::ok(json!({"pruned": count}))
}

/// WIRE-5 `begin_turn`.
pub fn turn_started(turn_id: &str) -> Envelope {
    Envelope::ok(json!({"turn_id": turn_id}))
}

/// WIRE-5 `has_pending_clarification`.
pub fn has_pending(has_pending: bool) -> Envelope {
    Envelope::ok(json!({"has_pending": has_pending}))
}

/// A request refused before it reached an operation (WIRE-5): 400 naming
/// the problem.
pub fn bad_request(message: impl Into<String>) -> Envelope {
    Envelope {
        status: 400,
        body: json!({"error": message.into()}),
    }
}

/// A request a door refused before any operation (HTTP-3: unknown route,
/// missing credential, body too large, …): `{"error": message}` with the
/// door's status.
pub fn refused(status: u16, message: impl Into<String>) -> Envelope {
    Envelope {
        status,
        body: json!({"error": message.into()}),
    }
}

/// WIRE-4 `answer_question` success: won or beaten by a winner.
pub fn tool_answered(resolved: &Resolved) -> Value {
    json!({
        "claimed": resolved.claimed,
        "status": resolved.status.as_str(),
        "response": response(&resolved.response),
    })
}

/// WIRE-4: an MCP tool error, `{"error", "code"}`. "No longer active" is
/// distinct from not-found; everything unexpected is `internal`.
pub fn tool_error(error: &Error) -> Value {
    json!({"error": message(error), "code": error.code().as_str()})
}

/// The MCP `CallToolResult` shape: the JSON as text content, and again as
/// `structuredContent`.
pub fn tool_result(structured: Value, is_error: bool) -> Value {
    json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
        "isError": is_error,
    })
}
