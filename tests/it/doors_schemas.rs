//! WIRE-5 and its published schemas cannot drift: for every operation,
//! requests generated from the JSON Schema it publishes (the one in the
//! OpenAPI document, an MCP tool's `inputSchema`, the command line's
//! flags) go through the JSON door. Every request the schema accepts
//! passes the argument checks (its answer is anything but a 400: a 404
//! for the unknown ids it names, a 200 otherwise), and every single change
//! the schema refuses is a 400 whose message starts with the field it
//! breaks (`answers[1].selected_options: …`).
//!
//! Opaque positions (`cursor`, `after`) are valid only as the server
//! wrote them, which no schema can say: the generated requests leave them
//! empty.

use clarion::{mcp, Operation};
use serde_json::{json, Value};

use crate::support::schema_gen::{broken, valid, Rng};
use crate::support::*;

/// Requests generated per operation, and how many of them are also
/// broken in every way the schema refuses.
const VALID: usize = 40;
const BROKEN_FROM: usize = 4;

const OPAQUE: [&str; 2] = ["cursor", "after"];

/// EXP-6's rules across fields, which no schema states: a deadline given
/// once (`expires_in_ms` or `expires_at`), a default only with a deadline
/// and answering the questions asked. The generated requests leave
/// `expires_at` and `on_expire` out; `tests/it/deadlines_asking.rs` checks
/// their refusals.
const CROSS_FIELD: [&str; 2] = ["expires_at", "on_expire"];

fn call(db: &TestDb, operation: Operation, args: &Value) -> (u16, Value) {
    let reply = db.call_value(&json!({
        "op": operation.as_str(),
        "principal": {"kind": "system"},
        "args": args,
    }));
    (reply.status, reply.body)
}

/// ASK-2: question ids unique in the bundle, option ids in their
/// question — the one rule of `ask` a schema cannot state. Generated ids
/// get a suffix that makes them so.
fn unique_ids(value: &mut Value) {
    let Some(questions) = value.get_mut("questions").and_then(Value::as_array_mut) else {
        return;
    };
    for (q, question) in questions.iter_mut().enumerate() {
        if let Some(Value::String(id)) = question.get_mut("question_id") {
            id.push_str(&format!("~{q}"));
        }
        for (o, option) in question["options"]
            .as_array_mut()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(Value::String(id)) = option.get_mut("option_id") {
                id.push_str(&format!("~{o}"));
            }
        }
    }
}

fn without_opaque(mut value: Value) -> Value {
    unique_ids(&mut value);
    if let Some(map) = value.as_object_mut() {
        for name in CROSS_FIELD {
            map.remove(name);
        }
        for name in OPAQUE {
            if map.contains_key(name) {
                map.insert(name.into(), json!(""));
            }
        }
    }
    value
}

dual_backend!(wire_5_every_schema_agrees_with_its_parser);

fn wire_5_every_schema_agrees_with_its_parser(db: &TestDb) {
    let mut checked = 0;
    for (seed, operation) in Operation::all().filter(|op| op.is_call()).enumerate() {
        let schema = operation
            .args_schema()
            .unwrap_or_else(|| panic!("{operation} publishes no schema"));
        let mut rng = Rng::new(seed as u64 + 1);
        for round in 0..VALID {
            let args = if round == 0 {
                valid(&mut Rng::at_the_edges(seed as u64), &schema)
            } else {
                valid(&mut rng, &schema)
            };
            let args = without_opaque(args);
            let (status, body) = call(db, operation, &args);
            assert_ne!(
                status, 400,
                "{operation} refused what its schema accepts: {args} → {body}"
            );
            assert!(status < 500, "{operation}: {args} → {status} {body}");
            if round == 0 || round > BROKEN_FROM {
                continue;
            }
            for mut change in broken(&schema, &args, "") {
                if change.field.is_empty() {
                    // The arguments themselves are named `args` (WIRE-5).
                    change.field = "args".into();
                }
                let (status, body) = call(db, operation, &change.value);
                let message = body["error"].as_str().unwrap_or_default();
                assert_eq!(
                    status, 400,
                    "{operation} accepted what its schema refuses ({}, {}): {} → {body}",
                    change.how, change.field, change.value
                );
                assert!(
                    message.starts_with(&format!("{}: ", change.field)),
                    "{operation} ({}): the refusal names another field than {}: {message} (for {})",
                    change.how,
                    change.field,
                    change.value
                );
                checked += 1;
            }
        }
    }
    eprintln!("{checked} refusals checked");
    assert!(checked > 300, "only {checked} refusals were checked");
}

/// WIRE-4: each tool publishes exactly its operation's argument schema.
#[test]
fn wire_4_tool_schemas_are_their_operations() {
    for tool in mcp::Tool::ALL {
        let definition = tool.definition();
        assert_eq!(
            Some(definition["inputSchema"].clone()),
            tool.operation().args_schema(),
            "{}",
            tool.name()
        );
        assert_eq!(definition["outputSchema"]["type"], json!("object"));
    }
}
