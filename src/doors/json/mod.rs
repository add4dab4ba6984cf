//! WIRE-5 requests: `{"op", "principal", "args"}` in, an [`Envelope`] out.
//! This is the one place that turns JSON into operation arguments; the C
//! ABI, the MCP tools and the command line all go through it.
//!
//! Order of checks (WIRE-5): the request envelope (400) → the capability
//! (403), before `args` is read → everything checkable without the database:
//! types, required fields, enum values, formats, ASK-2/3 (400) → the
//! operation itself: lookups (404), state (409), then the rules that need
//! stored data (VAL-1, 2, 6, 8; 400).

pub(crate) mod fields;

use serde_json::{Map, Value};

pub(crate) use fields::Fields;

use crate::domain::ask::{AskRequest, OptionSpec, QuestionSpec};
use crate::domain::engine::Engine;
use crate::domain::lifecycle::SessionUpsert;
use crate::domain::listing::{Cursor, ListRequest};
use crate::domain::resolve::{AnswerInput, ResolveRequest};
use crate::doors::envelope::{self, Envelope};
use crate::error::{Error, Result, ValidationError};
use crate::rules::capability::{has_capability, Operation, Target};
use crate::rules::limits::MAX_REQUEST_BYTES;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::{BundleKind, SessionState};
use crate::store::Timestamp;

type Checked<T> = std::result::Result<T, ValidationError>;

/// WIRE-5 principals, read into parts for the one principal parser
/// ([`Principal::from_parts`]); its errors gain the `principal.` prefix.
pub(crate) fn principal(value: &Value) -> Checked<Principal> {
    let fields = Fields::of(value, "principal")?;
    // One shape for every kind, so a host may always send all four keys;
    // a key that means nothing for the kind (a user's grants) is unused.
    fields.only(&["kind", "user_id", "agent_id", "grants"])?;
    let kind = fields.id("kind")?;
    let user_id = fields.text_as_given("user_id")?;
    let grants = match fields.array("grants")? {
        None => Vec::new(),
        Some(items) => fields.strings("grants", items)?,
    };
    Principal::from_parts(
        kind,
        user_id,
        fields.text("agent_id")?,
        grants.iter().map(String::as_str),
    )
    .map_err(|error| ValidationError::new(format!("principal.{}", error.field), error.message))
}

/// The request envelope: which operation, by whom, with which arguments.
fn envelope_parts(request: &Value) -> Checked<(Operation, Principal, Option<&Value>)> {
    let fields = Fields::top(request, "request")?;
    fields.only(&["op", "principal", "args"])?;
    let op = fields.id("op")?;
    let operation = Operation::parse(op)
        // HTTP-7: reading metrics is in the matrix but is no JSON call.
        .filter(|operation| *operation != Operation::Metrics)
        .ok_or_else(|| ValidationError::new("op", format!("unknown operation {op:?}")))?;
    let principal_value = fields
        .given("principal")
        .ok_or_else(|| ValidationError::new("principal", "required"))?;
    let principal = principal(principal_value)?;
    Ok((operation, principal, fields.given("args")))
}

pub(crate) const LIST_ARGS: [&str; 4] = ["workspace_id", "created_since", "cursor", "limit"];

/// LIST-4 arguments, every one checked before any read: a malformed time
/// or cursor is a 400 naming it, never silently ignored.
pub(crate) fn list_request(args: &Fields<'_>) -> Checked<ListRequest> {
    args.only(&LIST_ARGS)?;
    let created_since = args
        .text("created_since")?
        .map(|text| {
            Timestamp::parse_rfc3339_ceil(text).ok_or_else(|| {
                ValidationError::new(
                    "created_since",
                    format!("not an RFC 3339 timestamp: {text:?}"),
                )
            })
        })
        .transpose()?;
    Ok(ListRequest {
        workspace_id: args.text("workspace_id")?.map(str::to_owned),
        created_since,
        cursor: args.text("cursor")?.map(Cursor::parse).transpose()?,
        limit: args.integer("limit")?,
    })
}

pub(crate) const RESOLVE_ARGS: [&str; 4] = ["pending_id", "answers", "rejected", "reject_reason"];

/// `resolve_bundle` arguments: the bundle and what to store.
pub(crate) fn resolve_request<'v>(args: &Fields<'v>) -> Checked<(&'v str, ResolveRequest)> {
    args.only(&RESOLVE_ARGS)?;
    let pending_id = args.id("pending_id")?;
    let answers = match args.array("answers")? {
        None => Vec::new(),
        Some(items) => args
            .objects("answers", items)?
            .iter()
            .map(answer)
            .collect::<Checked<_>>()?,
    };
    let request = ResolveRequest {
        answers,
        rejected: args.boolean("rejected")?.unwrap_or(false),
        reject_reason: args.text_or_empty("reject_reason")?,
    };
    Ok((pending_id, request))
}

fn answer(fields: &Fields<'_>) -> Checked<AnswerInput> {
    fields.only(&["question_id", "selected_options", "custom_text"])?;
    let selected_options = match fields.array("selected_options")? {
        None => Vec::new(),
        Some(items) => fields.strings("selected_options", items)?,
    };
    Ok(AnswerInput {
        question_id: fields.id("question_id")?.to_owned(),
        selected_options,
        custom_text: fields.text_or_empty("custom_text")?,
    })
}

fn ask_request(args: &Fields<'_>) -> Checked<AskRequest> {
    args.only(&[
        "session_id",
        "questions",
        "context",
        "kind",
        "idempotency_key",
    ])?;
    let session_id = args.id("session_id")?.to_owned();
    let questions = args
        .objects("questions", args.required_array("questions")?)?
        .iter()
        .map(question)
        .collect::<Checked<_>>()?;
    let kind = match args.text("kind")? {
        None => BundleKind::default(),
        Some(text) => BundleKind::parse("kind", text)?,
    };
    Ok(AskRequest {
        session_id,
        questions,
        context: args.text_or_empty("context")?,
        kind,
        idempotency_key: args.text("idempotency_key")?.map(str::to_owned),
    })
}

fn question(fields: &Fields<'_>) -> Checked<QuestionSpec> {
    fields.only(&["question_id", "title", "prompt", "options"])?;
    let options = match fields.array("options")? {
        None => Vec::new(),
        Some(items) => fields
            .objects("options", items)?
            .iter()
            .map(|option| {
                option.only(&["option_id", "label", "description"])?;
                Ok(OptionSpec {
                    option_id: option.text("option_id")?.map(str::to_owned),
                    label: option.text_or_empty("label")?,
                    description: option.text_or_empty("description")?,
                })
            })
            .collect::<Checked<_>>()?,
    };
    Ok(QuestionSpec {
        question_id: fields.text("question_id")?.map(str::to_owned),
        title: fields.text_or_empty("title")?,
        prompt: fields.text_or_empty("prompt")?,
        options,
    })
}

fn session_state(args: &Fields<'_>, key: &str) -> Checked<Option<SessionState>> {
    args.text(key)?
        .map(|text| SessionState::parse(key, text))
        .transpose()
}

fn authorize_target<'v>(args: &Fields<'v>) -> Checked<(Operation, Target<'v>)> {
    args.only(&["operation", "pending_id", "task_id"])?;
    let name = args.id("operation")?;
    let operation = Operation::parse(name)
        .ok_or_else(|| ValidationError::new("operation", format!("unknown operation {name:?}")))?;
    let target = match (args.text("pending_id")?, args.text("task_id")?) {
        (Some(pending_id), None) => Target::Bundle(pending_id),
        (None, Some(task_id)) => Target::Task(task_id),
        _ => {
            return Err(ValidationError::new(
                "pending_id",
                "give exactly one of pending_id and task_id",
            ))
        }
    };
    Ok((operation, target))
}

/// WIRE-5: performs one JSON request and returns its envelope. Never
/// panics on input: malformed, oversized or too deeply nested text is a
/// 400 naming the problem.
pub(crate) fn call(engine: &Engine, request: &str) -> Envelope {
    if request.len() > MAX_REQUEST_BYTES {
        return envelope::bad_request(format!("request: larger than {MAX_REQUEST_BYTES} bytes"));
    }
    match serde_json::from_str::<Value>(request) {
        Ok(value) => call_value(engine, &value),
        Err(error) => envelope::bad_request(format!("request: not valid JSON: {error}")),
    }
}

/// [`call`] on raw bytes, which must be UTF-8.
pub(crate) fn call_bytes(engine: &Engine, request: &[u8]) -> Envelope {
    match std::str::from_utf8(request) {
        Ok(text) => call(engine, text),
        Err(_) => envelope::bad_request("request: not valid UTF-8"),
    }
}

/// [`call`] on an already parsed request.
pub(crate) fn call_value(engine: &Engine, request: &Value) -> Envelope {
    let (operation, principal, args) = match envelope_parts(request) {
        Ok(parts) => parts,
        Err(error) => return envelope::error(&Error::Validation(error)),
    };
    // AUTH-2 before `args` is even read.
    if !has_capability(&principal, operation) {
        return envelope::error(&Error::CapabilityDenied);
    }
    let no_args = Value::Object(Map::new());
    Fields::top(args.unwrap_or(&no_args), "args")
        .map_err(Error::from)
        .and_then(|args| perform(engine, operation, &principal, &args))
        .unwrap_or_else(|error| envelope::error(&error))
}

fn perform(
    engine: &Engine,
    operation: Operation,
    principal: &Principal,
    args: &Fields<'_>,
) -> Result<Envelope> {
    use Operation as Op;
    Ok(match operation {
        Op::ListPending => {
            envelope::list_page(&engine.list_pending(principal, &list_request(args)?)?)
        }
        Op::GetBundle => {
            args.only(&["pending_id"])?;
            envelope::bundle_detail(&engine.get_bundle(principal, args.id("pending_id")?)?)
        }
        Op::WaitBundle => {
            args.only(&["pending_id", "timeout_ms"])?;
            let (pending_id, timeout) = (args.id("pending_id")?, args.timeout("timeout_ms")?);
            envelope::resolved(&engine.wait_bundle(principal, pending_id, timeout)?)
        }
        Op::Summary => {
            args.only(&[])?;
            envelope::summary(&engine.summary(principal)?)
        }
        Op::PendingActions => {
            args.only(&["task_ids"])?;
            let task_ids = args.strings("task_ids", args.required_array("task_ids")?)?;
            envelope::pending_actions(&engine.pending_actions(principal, &task_ids)?)
        }
        Op::ResolveBundle => {
            let (pending_id, request) = resolve_request(args)?;
            envelope::resolved(&engine.resolve_bundle(principal, pending_id, &request)?)
        }
        Op::CancelBundle => {
            args.only(&["pending_id"])?;
            envelope::resolved(&engine.cancel_bundle(principal, args.id("pending_id")?)?)
        }
        Op::Authorize => {
            let (operation, target) = authorize_target(args)?;
            envelope::authorization(engine.authorize(principal, operation, target)?)
        }
        Op::EventsAfter => {
            args.only(&["after", "limit"])?;
            let after = args.text("after")?.unwrap_or_default();
            envelope::events(&engine.events_after(principal, after, args.integer("limit")?)?)
        }
        _ => perform_host(engine, operation, args)?,
    })
}

/// Host operations (AUTH-2): the capability check already admitted only
/// `system`.
fn perform_host(engine: &Engine, operation: Operation, args: &Fields<'_>) -> Result<Envelope> {
    use Operation as Op;
    Ok(match operation {
        Op::UpsertWorkspace => {
            args.only(&["id", "owner_id"])?;
            engine.upsert_workspace(args.id("id")?, args.text("owner_id")?)?;
            envelope::ok()
        }
        Op::DeleteWorkspace => {
            args.only(&["id"])?;
            engine.delete_workspace(args.id("id")?)?;
            envelope::ok()
        }
        Op::UpsertTask => {
            args.only(&["id", "workspace_id"])?;
            engine.upsert_task(args.id("id")?, args.text("workspace_id")?)?;
            envelope::ok()
        }
        Op::DeleteTask => {
            args.only(&["id"])?;
            engine.delete_task(args.id("id")?)?;
            envelope::ok()
        }
        Op::UpsertSession => {
            args.only(&["id", "task_id", "state", "is_primary"])?;
            let mut upsert = SessionUpsert::new(args.id("id")?, args.id("task_id")?);
            if let Some(state) = session_state(args, "state")? {
                upsert = upsert.state(state);
            }
            if let Some(is_primary) = args.boolean("is_primary")? {
                upsert = upsert.primary(is_primary);
            }
            engine.upsert_session(upsert)?;
            envelope::ok()
        }
        Op::DeleteSession => {
            args.only(&["id"])?;
            engine.delete_session(args.id("id")?)?;
            envelope::ok()
        }
        Op::BeginTurn => {
            args.only(&["session_id"])?;
            envelope::turn_started(&engine.begin_turn(args.id("session_id")?)?)
        }
        Op::SetSessionState => {
            args.only(&["session_id", "state"])?;
            let session_id = args.id("session_id")?;
            let state = session_state(args, "state")?
                .ok_or_else(|| ValidationError::new("state", "required"))?;
            engine.set_session_state(session_id, state)?;
            envelope::ok()
        }
        Op::DetachSession => {
            args.only(&["session_id"])?;
            engine.detach_session(args.id("session_id")?)?;
            envelope::ok()
        }
        Op::HasPendingClarification => {
            args.only(&["session_id"])?;
            envelope::has_pending(engine.has_pending_clarification(args.id("session_id")?)?)
        }
        Op::Ask => envelope::asked(&engine.ask(&ask_request(args)?)?),
        Op::Wait => {
            args.only(&["pending_id", "timeout_ms"])?;
            let (pending_id, timeout) = (args.id("pending_id")?, args.timeout("timeout_ms")?);
            envelope::waited(&engine.wait(pending_id, timeout)?)
        }
        Op::PendingDeliveries => {
            args.only(&["limit"])?;
            envelope::deliveries(&engine.pending_deliveries(args.integer("limit")?)?)
        }
        Op::AckDelivery => {
            args.only(&["pending_id"])?;
            engine.ack_delivery(args.id("pending_id")?)?;
            envelope::ok()
        }
        Op::Prune => {
            args.only(&["older_than_ms"])?;
            let older_than = args
                .integer("older_than_ms")?
                .ok_or_else(|| ValidationError::new("older_than_ms", "required"))?;
            if older_than < 0 {
                return Err(ValidationError::new("older_than_ms", "must not be negative").into());
            }
            envelope::pruned(engine.prune(std::time::Duration::from_millis(older_than as u64))?)
        }
        Op::ListPending
        | Op::GetBundle
        | Op::WaitBundle
        | Op::Summary
        | Op::PendingActions
        | Op::ResolveBundle
        | Op::CancelBundle
        | Op::Authorize
        | Op::EventsAfter
        | Op::Metrics => unreachable_external(operation)?,
    })
}

/// `perform` handles the external operations before it gets here.
fn unreachable_external(operation: Operation) -> Result<Envelope> {
    Err(Error::Internal(format!(
        "{operation} reached the host dispatcher"
    )))
}
