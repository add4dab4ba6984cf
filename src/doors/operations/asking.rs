//! MCPA-3: the asking tools of `clarion mcp --ask-in <session>`, declared
//! once each like every other door's operations and registered beside
//! them. An agent asks (`ask_human`), waits again (`wait_for_answer`) or
//! withdraws its own question (`cancel_question`), always as the host
//! (`system`) of its one session and recording channel `mcp`.
//! `ask_human`'s arguments are `ask`'s, read from `ask`'s one
//! declaration, so a new argument of `ask` reaches it with nothing
//! written here.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::domain::engine::Engine;
use crate::doors::args::schema::{self, Side};
use crate::doors::args::{self, Id, Millis};
use crate::doors::envelope;
use crate::doors::envelope::bodies::{AskResultBody, CancelQuestionBody};
use crate::doors::operations::agent::Ask;
use crate::doors::operations::declare::{AskStep, Asking, Declared};
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::capability::{admit, HOST};
use crate::rules::limits::MCP_WAIT;
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;
use crate::store::Timestamp;

/// `ask_human`: asks on the server's session, then waits.
pub(crate) struct AskHuman;

/// `wait_for_answer`: waits again on one of the session's bundles.
pub(crate) struct WaitForAnswer;

/// `cancel_question`: withdraws one of the session's pending bundles.
pub(crate) struct CancelQuestion;

/// `wait_for_answer`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForAnswerArgs {
    /// The bundle `ask_human` returned.
    pending_id: Id,
    /// How long to wait, in milliseconds: default 45000; longer waits are
    /// cut at 50000, so a call ends before common 60 s client timeouts.
    wait_ms: Option<Millis>,
}

/// `cancel_question`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CancelQuestionArgs {
    /// The bundle to withdraw.
    pending_id: Id,
}

/// `ask_human`'s own argument beside `ask`'s (MCPA-3).
#[derive(Deserialize, JsonSchema)]
pub(crate) struct WaitMs {
    /// How long to wait for the answer, in milliseconds: default 45000;
    /// longer waits are cut at 50000.
    wait_ms: Option<Millis>,
}

impl Asking for AskHuman {
    const NAME: &'static str = "ask_human";
    const DESCRIPTION: &'static str = "Ask a human one to four questions and wait for the \
        answer (at most wait_ms). Returns the answer, or status pending with the pending_id: \
        then call wait_for_answer. A deadline (expires_in_ms or expires_at) with on_expire \
        decides what you are told if nobody answers in time.";
    type Result = AskResultBody<'static>;

    /// `ask`'s arguments without `session_id` (the server's), with `wait_ms`.
    fn input_schema() -> Value {
        let mut ask = schema::inline::<<Ask as Declared>::Args>(Side::Arguments);
        let wait = schema::inline::<WaitMs>(Side::Arguments);
        if let Some(properties) = ask.get_mut("properties").and_then(Value::as_object_mut) {
            properties.remove("session_id");
            if let Some(wait_ms) = wait.pointer("/properties/wait_ms") {
                properties.insert("wait_ms".to_owned(), wait_ms.clone());
            }
        }
        if let Some(required) = ask.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|name| name != "session_id");
        }
        ask
    }

    /// ASK-1..5 (a retry with the same idempotency key finds the same
    /// bundle), then the wait.
    fn start(engine: &Engine, session_id: &str, arguments: &Value) -> Result<AskStep> {
        let (ask, wait) = ask_arguments(arguments, session_id)?;
        let asked = Ask::run(engine, &Principal::System, Channel::Mcp, &ask)?;
        Ok(AskStep::Wait {
            pending_id: asked.pending_id,
            wait,
        })
    }
}

impl Asking for WaitForAnswer {
    const NAME: &'static str = "wait_for_answer";
    const DESCRIPTION: &'static str =
        "Wait again for the answer to a question asked with ask_human (at most wait_ms).";
    type Result = AskResultBody<'static>;

    fn input_schema() -> Value {
        schema::inline::<WaitForAnswerArgs>(Side::Arguments)
    }

    fn start(engine: &Engine, session_id: &str, arguments: &Value) -> Result<AskStep> {
        let args: WaitForAnswerArgs = args::read(arguments, "arguments")?;
        session_bundle(engine, session_id, &args.pending_id.0)?;
        Ok(AskStep::Wait {
            pending_id: args.pending_id.0,
            wait: clamped(args.wait_ms),
        })
    }
}

impl Asking for CancelQuestion {
    const NAME: &'static str = "cancel_question";
    const DESCRIPTION: &'static str = "Withdraw a question you asked that nobody has answered yet.";
    type Result = CancelQuestionBody<'static>;

    fn input_schema() -> Value {
        schema::inline::<CancelQuestionArgs>(Side::Arguments)
    }

    /// `cancel_bundle` as the session's host (LIFE-6).
    fn start(engine: &Engine, session_id: &str, arguments: &Value) -> Result<AskStep> {
        let args: CancelQuestionArgs = args::read(arguments, "arguments")?;
        let pending_id = args.pending_id.0;
        session_bundle(engine, session_id, &pending_id)?;
        let host = admit(&Principal::System, HOST, Channel::Mcp)?;
        let resolved = engine.cancel_bundle(&host, &pending_id)?;
        Ok(AskStep::Done(ok_result(&CancelQuestionBody::of(
            &pending_id,
            &resolved,
        ))))
    }
}

/// MCPA-4: the wait a call asked for, clamped.
fn clamped(wait_ms: Option<Millis>) -> Duration {
    MCP_WAIT.serve(wait_ms.map(|ms| ms.0))
}

/// An asking call's error result (WIRE-4's error with `isError`).
pub(crate) fn error_result(error: &Error) -> Value {
    envelope::tool_result(envelope::tool_error(error), true)
}

/// An asking call's success result.
pub(crate) fn ok_result(structured: &impl Serialize) -> Value {
    envelope::tool_result(envelope::to_json(structured), false)
}

/// `ask_human`'s arguments as `ask`'s (with the server's session) and its
/// wait; `session_id` is not one of them.
fn ask_arguments(arguments: &Value, session_id: &str) -> Result<(Value, Duration)> {
    let Some(given) = arguments.as_object() else {
        return Err(ValidationError::new(
            "arguments",
            format!("expected an object, got {}", args::type_name(arguments)),
        )
        .into());
    };
    if given.contains_key("session_id") {
        return Err(ValidationError::new(
            "arguments.session_id",
            "not an argument of ask_human: the question goes to this server's session",
        )
        .into());
    }
    let mut ask = given.clone();
    let wait = ask.remove("wait_ms").map_or(Ok(None), |value| {
        args::read::<WaitMs>(&json!({ "wait_ms": value }), "arguments").map(|w| w.wait_ms)
    })?;
    ask.insert(
        "session_id".to_owned(),
        Value::String(session_id.to_owned()),
    );
    Ok((Value::Object(ask), clamped(wait)))
}

/// The bundle's `created_at`, if it is one of `session_id`'s; else the
/// one not-found.
pub(crate) fn session_bundle(
    engine: &Engine,
    session_id: &str,
    pending_id: &str,
) -> Result<Timestamp> {
    let host = admit(&Principal::System, HOST, Channel::Mcp)?;
    let detail = engine.get_bundle(&host, pending_id)?;
    if detail.bundle.session_id != session_id {
        return Err(Error::NotFound(Entity::Bundle));
    }
    Ok(detail.bundle.created_at)
}
