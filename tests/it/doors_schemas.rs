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

/// Requests generated per operation, and how many of them (the first, at
/// the schema's edges, and the next ones) are also broken in every way the
/// schema refuses.
const VALID: usize = 40;
const BROKEN_FROM: usize = 4;

const OPAQUE: [&str; 2] = ["cursor", "after"];

/// EXP-6's rules across fields are in the schema (one deadline, a default
/// only with one, no `answer` default on a permission bundle); two are not,
/// as no schema of the request can state them: an `expires_at` falls 1 s to
/// 30 days after the ask (the generated one becomes `expires_in_ms`), and an
/// `answer` default answers the questions being asked (VAL-1, VAL-2: the
/// generated one is replaced by the first option of each question).
/// `tests/it/deadlines_asking.rs` checks both refusals.
fn deadline_of_now(value: &mut Value) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    if map
        .get("expires_at")
        .is_some_and(|at| at.as_str().is_some_and(|at| !at.is_empty()))
    {
        map.remove("expires_at");
        if !map.get("expires_in_ms").is_some_and(Value::is_u64) {
            map.insert("expires_in_ms".into(), json!(60_000));
        }
    }
    let Some(questions) = map.get("questions").and_then(Value::as_array).cloned() else {
        return;
    };
    if let Some(default) = map.get_mut("on_expire").filter(|d| d["action"] == "answer") {
        default["answers"] = questions
            .iter()
            .enumerate()
            .map(|(q, question)| {
                let question_id = id_or(&question["question_id"], format!("q{}", q + 1));
                let option = id_or(
                    &question["options"][0]["option_id"],
                    format!("{question_id}_opt1"),
                );
                json!({"question_id": question_id, "selected_options": [option]})
            })
            .collect();
    }
}

/// ASK-3: an id as given, or its default when omitted or empty.
fn id_or(id: &Value, default: String) -> String {
    id.as_str()
        .filter(|id| !id.is_empty())
        .map_or(default, str::to_owned)
}

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

/// PPL-1, PPL-2: the rules of the people operations no schema of the
/// request states: an email's shape (exactly one `@`, 254 bytes rather
/// than characters; the generated one becomes an address), `clear` naming
/// no field also given (the generated list drops those), and distinct
/// members (the generated list keeps each once). `tests/it/people.rs`
/// checks each refusal.
fn people_rules(value: &mut Value) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    if let Some(Value::String(email)) = map.get_mut("email") {
        if !email.is_empty() {
            *email = "x@example.com".to_owned();
        }
    }
    let given: Vec<String> = ["name", "email"]
        .into_iter()
        .filter(|field| {
            map.get(*field)
                .and_then(Value::as_str)
                .is_some_and(|v| !v.is_empty())
        })
        .map(str::to_owned)
        .collect();
    if let Some(Value::Array(clear)) = map.get_mut("clear") {
        clear.retain(|word| {
            !word
                .as_str()
                .is_some_and(|word| given.iter().any(|g| g == word))
        });
    }
    if let Some(Value::Array(members)) = map.get_mut("members") {
        let mut seen = std::collections::HashSet::new();
        members.retain(|member| seen.insert(member.to_string()));
    }
}

/// QUO-1's rules between a quorum's keys, which the schema does not say:
/// `rejections` at most `approvals`, `approvals` reachable by the eligible
/// voters other than `requested_by` (else no `eligible` list), and no
/// `answer` default beside a quorum. `tests/it/quorum.rs` checks each
/// refusal.
fn quorum_rules(value: &mut Value) {
    if value.get("quorum").is_some_and(Value::is_object) && value["on_expire"]["action"] == "answer"
    {
        value["on_expire"] = json!({"action": "reject"});
    }
    let Some(quorum) = value.get_mut("quorum").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(Value::Array(eligible)) = quorum.get_mut("eligible") {
        let mut seen = std::collections::HashSet::new();
        eligible.retain(|id| seen.insert(id.to_string()));
    }
    let approvals = quorum.get("approvals").and_then(Value::as_u64).unwrap_or(2);
    let requested_by = quorum
        .get("requested_by")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let voters = quorum.get("eligible").and_then(Value::as_array).map(|ids| {
        ids.iter()
            .filter(|id| id.as_str() != Some(requested_by.as_str()))
            .count()
    });
    let approvals = match voters {
        Some(voters) if voters < 2 => {
            quorum.insert("eligible".into(), Value::Null);
            approvals
        }
        Some(voters) => approvals.min(voters as u64),
        None => approvals,
    };
    quorum.insert("approvals".into(), json!(approvals));
    if let Some(rejections) = quorum.get("rejections").and_then(Value::as_u64) {
        quorum.insert("rejections".into(), json!(rejections.min(approvals)));
    }
}

fn without_opaque(mut value: Value) -> Value {
    unique_ids(&mut value);
    people_rules(&mut value);
    quorum_rules(&mut value);
    deadline_of_now(&mut value);
    if let Some(map) = value.as_object_mut() {
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
    let mut conditions = std::collections::BTreeSet::new();
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
            if round > BROKEN_FROM {
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
                if change.how.starts_with("condition") {
                    conditions.insert(format!("{operation} {}", change.field));
                }
            }
        }
    }
    eprintln!("{checked} refusals checked");
    assert!(checked > 300, "only {checked} refusals were checked");
    // Every rule between arguments the schemas state was broken.
    let expected = [
        "ask expires_at",
        "ask on_expire.action",
        "ask on_expire.answers",
        "ask on_expire.reject_reason",
        "resolve_bundle answers",
    ];
    for rule in expected {
        assert!(
            conditions.contains(rule),
            "{rule} never broken: {conditions:?}"
        );
    }
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
