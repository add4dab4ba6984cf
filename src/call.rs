//! WIRE-5 requests: `{"op", "principal", "args"}` in, an [`Envelope`] out.
//! This is the one place that turns JSON into operation arguments; the C
//! ABI, the MCP tools and the command line all go through it.
//!
//! Order of checks (WIRE-5): the request envelope (400) → the capability
//! (403), before `args` is read → everything checkable without the database:
//! types, required fields, enum values, formats, ASK-2/3 (400) → the
//! operation itself: lookups (404), state (409), then the rules that need
//! stored data (VAL-1, 2, 6, 8; 400).

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::authz::{has_capability, Operation, Principal, Target};
use crate::envelope::{self, Envelope};
use crate::error::{Error, Result, ValidationError};
use crate::{
    AnswerInput, AskRequest, BundleKind, Clarion, Grant, ListRequest, OptionSpec, QuestionSpec,
    ResolveRequest, SessionState, SessionUpsert,
};

/// Longest request text accepted; larger requests are a 400 before parsing.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// Deepest nesting accepted: serde_json's parser refuses anything deeper
/// with an error (no recursion past it), which becomes a 400.
pub const MAX_NESTING: usize = 128;
/// `wait.timeout_ms` and `wait_bundle.timeout_ms` when not given.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// Longest wait anyone may ask for; larger values are capped.
pub const MAX_WAIT_MS: u64 = 600_000;

type Checked<T> = std::result::Result<T, ValidationError>;

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong_type(field: String, expected: &str, value: &Value) -> ValidationError {
    ValidationError::new(
        field,
        format!("expected {expected}, got {}", type_name(value)),
    )
}

/// An integer literal too long for u64: serde_json hands it over as a
/// float. Written with a fraction or an exponent, a number that large is
/// indistinguishable here, and is taken as the integer it equals.
fn beyond_u64(value: &Value) -> bool {
    value
        .as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && f >= 18_446_744_073_709_551_616.0)
}

/// A JSON object read field by field; every error names the field by its
/// full path (`questions[1].options[0].label`).
pub(crate) struct Fields<'v> {
    prefix: String,
    map: &'v Map<String, Value>,
}

impl<'v> Fields<'v> {
    /// A nested object; `name` is its own path.
    pub(crate) fn of(value: &'v Value, name: &str) -> Checked<Fields<'v>> {
        let Value::Object(map) = value else {
            return Err(wrong_type(name.to_owned(), "an object", value));
        };
        Ok(Fields {
            prefix: format!("{name}."),
            map,
        })
    }

    /// A top-level object (the request, or an operation's arguments):
    /// errors name the field alone (`pending_id: required`), as the
    /// library's own errors do.
    pub(crate) fn top(value: &'v Value, name: &str) -> Checked<Fields<'v>> {
        let Value::Object(map) = value else {
            return Err(wrong_type(name.to_owned(), "an object", value));
        };
        Ok(Fields {
            prefix: String::new(),
            map,
        })
    }

    fn field(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Refuses keys outside `allowed`: a misspelt argument is never
    /// silently ignored (LIST-4).
    pub(crate) fn only(&self, allowed: &[&str]) -> Checked<()> {
        match self.map.keys().find(|key| !allowed.contains(&key.as_str())) {
            None => Ok(()),
            Some(key) => Err(ValidationError::new(self.field(key), "unknown argument")),
        }
    }

    /// The value, `None` when absent or `null` ("not given").
    fn given(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key).filter(|value| !value.is_null())
    }

    /// An optional string; `""` means not given (WIRE-5).
    pub(crate) fn text(&self, key: &str) -> Checked<Option<&'v str>> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::String(text)) if text.is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(wrong_type(self.field(key), "a string", other)),
        }
    }

    fn text_or_empty(&self, key: &str) -> Checked<String> {
        Ok(self.text(key)?.unwrap_or_default().to_owned())
    }

    /// A required id: absent, `null` or `""` is a 400.
    pub(crate) fn id(&self, key: &str) -> Checked<&'v str> {
        match self.given(key) {
            None => Err(ValidationError::new(self.field(key), "required")),
            Some(Value::String(text)) if text.is_empty() => {
                Err(ValidationError::new(self.field(key), "must not be empty"))
            }
            Some(Value::String(text)) => Ok(text),
            Some(other) => Err(wrong_type(self.field(key), "a string", other)),
        }
    }

    fn boolean(&self, key: &str) -> Checked<Option<bool>> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(other) => Err(wrong_type(self.field(key), "a boolean", other)),
        }
    }

    fn integer(&self, key: &str) -> Checked<Option<i64>> {
        match self.given(key) {
            None => Ok(None),
            // An integer beyond i64 is still an integer: saturate, and let
            // the caps (limit, timeout_ms) apply.
            Some(value) => value
                .as_i64()
                .or_else(|| value.as_u64().map(|_| i64::MAX))
                .or_else(|| beyond_u64(value).then_some(i64::MAX))
                .map(Some)
                .ok_or_else(|| wrong_type(self.field(key), "an integer", value)),
        }
    }

    fn array(&self, key: &str) -> Checked<Option<&'v Vec<Value>>> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(other) => Err(wrong_type(self.field(key), "an array", other)),
        }
    }

    fn required_array(&self, key: &str) -> Checked<&'v Vec<Value>> {
        self.array(key)?
            .ok_or_else(|| ValidationError::new(self.field(key), "required"))
    }

    /// An array of strings, each element checked.
    fn strings(&self, key: &str, items: &[Value]) -> Checked<Vec<String>> {
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Value::String(text) => Ok(text.clone()),
                other => Err(wrong_type(
                    format!("{}[{index}]", self.field(key)),
                    "a string",
                    other,
                )),
            })
            .collect()
    }

    /// Each element of an array of objects, with its path.
    fn objects(&self, key: &str, items: &'v [Value]) -> Checked<Vec<Fields<'v>>> {
        items
            .iter()
            .enumerate()
            .map(|(index, item)| Fields::of(item, &format!("{}[{index}]", self.field(key))))
            .collect()
    }

    /// `timeout_ms`: default 30 s, capped at ten minutes, never negative.
    fn timeout(&self, key: &str) -> Checked<Duration> {
        let millis = match self.integer(key)? {
            None => DEFAULT_WAIT_MS,
            Some(ms) if ms < 0 => {
                return Err(ValidationError::new(
                    self.field(key),
                    "must not be negative",
                ))
            }
            Some(ms) => (ms as u64).min(MAX_WAIT_MS),
        };
        Ok(Duration::from_millis(millis))
    }
}

/// WIRE-5 principals. An unknown `kind`, or a user or agent without
/// `user_id`, is malformed; an agent without `grants` holds none.
pub(crate) fn principal(value: &Value) -> Checked<Principal> {
    let fields = Fields::of(value, "principal")?;
    // One shape for every kind, so a host may always send all four keys;
    // a key that means nothing for the kind (a user's grants) is unused.
    fields.only(&["kind", "user_id", "agent_id", "grants"])?;
    let kind = fields.id("kind")?;
    match kind {
        "system" => Ok(Principal::System),
        "unclassified" => Ok(Principal::Unclassified),
        "user" => Ok(Principal::user(fields.id("user_id")?)),
        "agent" => {
            let user_id = fields.id("user_id")?;
            let agent_id = fields.text("agent_id")?.unwrap_or_default();
            let grants = match fields.array("grants")? {
                None => Vec::new(),
                Some(items) => fields
                    .strings("grants", items)?
                    .iter()
                    .enumerate()
                    .map(|(index, text)| {
                        Grant::parse(text).ok_or_else(|| {
                            ValidationError::new(
                                format!("principal.grants[{index}]"),
                                format!(
                                    "unknown grant {text:?} (expected questions:read or \
                                     questions:answer)"
                                ),
                            )
                        })
                    })
                    .collect::<Checked<Vec<_>>>()?,
            };
            Ok(Principal::agent(user_id, agent_id, grants))
        }
        other => Err(ValidationError::new(
            "principal.kind",
            format!("unknown kind {other:?} (expected system, user, agent or unclassified)"),
        )),
    }
}

impl Principal {
    /// The WIRE-5 JSON form, which [`principal`] reads back.
    pub fn to_wire(&self) -> Value {
        match self {
            Principal::System => json!({"kind": "system"}),
            Principal::Unclassified => json!({"kind": "unclassified"}),
            Principal::User { user_id } => json!({"kind": "user", "user_id": user_id}),
            Principal::Agent {
                user_id,
                agent_id,
                grants,
            } => json!({
                "kind": "agent",
                "user_id": user_id,
                "agent_id": agent_id,
                "grants": grants.iter().map(|grant| grant.as_str()).collect::<Vec<_>>(),
            }),
        }
    }
}

/// The request envelope: which operation, by whom, with which arguments.
fn envelope_parts(request: &Value) -> Checked<(Operation, Principal, Option<&Value>)> {
    let fields = Fields::top(request, "request")?;
    fields.only(&["op", "principal", "args"])?;
    let op = fields.id("op")?;
    let operation = Operation::parse(op)
        .ok_or_else(|| ValidationError::new("op", format!("unknown operation {op:?}")))?;
    let principal_value = fields
        .given("principal")
        .ok_or_else(|| ValidationError::new("principal", "required"))?;
    let principal = principal(principal_value)?;
    Ok((operation, principal, fields.given("args")))
}

pub(crate) const LIST_ARGS: [&str; 4] = ["workspace_id", "created_since", "cursor", "limit"];

/// LIST-4 arguments; formats are checked by the listing itself, before any
/// read.
pub(crate) fn list_request(args: &Fields<'_>) -> Checked<ListRequest> {
    args.only(&LIST_ARGS)?;
    Ok(ListRequest {
        workspace_id: args.text("workspace_id")?.map(str::to_owned),
        created_since: args.text("created_since")?.map(str::to_owned),
        cursor: args.text("cursor")?.map(str::to_owned),
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
        Some(text) => BundleKind::parse("kind", text).map_err(into_validation)?,
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
        .map(|text| SessionState::parse(key, text).map_err(into_validation))
        .transpose()
}

/// The library's parsers report `Error::Validation`; here only that variant
/// can occur.
fn into_validation(error: Error) -> ValidationError {
    match error {
        Error::Validation(validation) => validation,
        other => ValidationError::new("request", other.to_string()),
    }
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

impl Clarion {
    /// WIRE-5: performs one JSON request and returns its envelope. Never
    /// panics on input: malformed, oversized or too deeply nested text is a
    /// 400 naming the problem.
    pub fn call(&self, request: &str) -> Envelope {
        if request.len() > MAX_REQUEST_BYTES {
            return envelope::bad_request(format!(
                "request: larger than {MAX_REQUEST_BYTES} bytes"
            ));
        }
        match serde_json::from_str::<Value>(request) {
            Ok(value) => self.call_value(&value),
            Err(error) => envelope::bad_request(format!("request: not valid JSON: {error}")),
        }
    }

    /// [`Clarion::call`] on raw bytes, which must be UTF-8.
    pub fn call_bytes(&self, request: &[u8]) -> Envelope {
        match std::str::from_utf8(request) {
            Ok(text) => self.call(text),
            Err(_) => envelope::bad_request("request: not valid UTF-8"),
        }
    }

    /// [`Clarion::call`] on an already parsed request.
    pub fn call_value(&self, request: &Value) -> Envelope {
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
            .and_then(|args| self.perform(operation, &principal, &args))
            .unwrap_or_else(|error| envelope::error(&error))
    }

    fn perform(
        &self,
        operation: Operation,
        principal: &Principal,
        args: &Fields<'_>,
    ) -> Result<Envelope> {
        use Operation as Op;
        Ok(match operation {
            Op::ListPending => {
                envelope::list_page(&self.list_pending(principal, &list_request(args)?)?)
            }
            Op::GetBundle => {
                args.only(&["pending_id"])?;
                envelope::bundle_detail(&self.get_bundle(principal, args.id("pending_id")?)?)
            }
            Op::WaitBundle => {
                args.only(&["pending_id", "timeout_ms"])?;
                let (pending_id, timeout) = (args.id("pending_id")?, args.timeout("timeout_ms")?);
                envelope::resolved(&self.wait_bundle(principal, pending_id, timeout)?)
            }
            Op::Summary => {
                args.only(&[])?;
                envelope::summary(&self.summary(principal)?)
            }
            Op::PendingActions => {
                args.only(&["task_ids"])?;
                let task_ids = args.strings("task_ids", args.required_array("task_ids")?)?;
                envelope::pending_actions(&self.pending_actions(principal, &task_ids)?)
            }
            Op::ResolveBundle => {
                let (pending_id, request) = resolve_request(args)?;
                envelope::resolved(&self.resolve_bundle(principal, pending_id, &request)?)
            }
            Op::CancelBundle => {
                args.only(&["pending_id"])?;
                envelope::resolved(&self.cancel_bundle(principal, args.id("pending_id")?)?)
            }
            Op::Authorize => {
                let (operation, target) = authorize_target(args)?;
                envelope::authorization(self.authorize(principal, operation, target)?)
            }
            _ => self.perform_host(operation, args)?,
        })
    }

    /// Host operations (AUTH-2): the capability check already admitted only
    /// `system`.
    fn perform_host(&self, operation: Operation, args: &Fields<'_>) -> Result<Envelope> {
        use Operation as Op;
        Ok(match operation {
            Op::UpsertWorkspace => {
                args.only(&["id", "owner_id"])?;
                self.upsert_workspace(args.id("id")?, args.text("owner_id")?)?;
                envelope::ok()
            }
            Op::DeleteWorkspace => {
                args.only(&["id"])?;
                self.delete_workspace(args.id("id")?)?;
                envelope::ok()
            }
            Op::UpsertTask => {
                args.only(&["id", "workspace_id"])?;
                self.upsert_task(args.id("id")?, args.text("workspace_id")?)?;
                envelope::ok()
            }
            Op::DeleteTask => {
                args.only(&["id"])?;
                self.delete_task(args.id("id")?)?;
                envelope::ok()
            }
            Op::UpsertSession => {
                args.only(&["id", "task_id", "state", "is_primary"])?;
                self.upsert_session(SessionUpsert {
                    id: args.id("id")?,
                    task_id: args.id("task_id")?,
                    state: session_state(args, "state")?,
                    is_primary: args.boolean("is_primary")?,
                })?;
                envelope::ok()
            }
            Op::DeleteSession => {
                args.only(&["id"])?;
                self.delete_session(args.id("id")?)?;
                envelope::ok()
            }
            Op::BeginTurn => {
                args.only(&["session_id"])?;
                envelope::turn_started(&self.begin_turn(args.id("session_id")?)?)
            }
            Op::SetSessionState => {
                args.only(&["session_id", "state"])?;
                let session_id = args.id("session_id")?;
                let state = session_state(args, "state")?
                    .ok_or_else(|| ValidationError::new("state", "required"))?;
                self.set_session_state(session_id, state)?;
                envelope::ok()
            }
            Op::DetachSession => {
                args.only(&["session_id"])?;
                self.detach_session(args.id("session_id")?)?;
                envelope::ok()
            }
            Op::HasPendingClarification => {
                args.only(&["session_id"])?;
                envelope::has_pending(self.has_pending_clarification(args.id("session_id")?)?)
            }
            Op::Ask => envelope::asked(&self.ask(&ask_request(args)?)?),
            Op::Wait => {
                args.only(&["pending_id", "timeout_ms"])?;
                let (pending_id, timeout) = (args.id("pending_id")?, args.timeout("timeout_ms")?);
                envelope::waited(&self.wait(pending_id, timeout)?)
            }
            Op::PendingDeliveries => {
                args.only(&["limit"])?;
                envelope::deliveries(&self.pending_deliveries(args.integer("limit")?)?)
            }
            Op::AckDelivery => {
                args.only(&["pending_id"])?;
                self.ack_delivery(args.id("pending_id")?)?;
                envelope::ok()
            }
            Op::ListPending
            | Op::GetBundle
            | Op::WaitBundle
            | Op::Summary
            | Op::PendingActions
            | Op::ResolveBundle
            | Op::CancelBundle
            | Op::Authorize => unreachable_external(operation)?,
        })
    }
}

/// `perform` handles the external operations before it gets here.
fn unreachable_external(operation: Operation) -> Result<Envelope> {
    Err(Error::Internal(format!(
        "{operation} reached the host dispatcher"
    )))
}
