//! WIRE-4: the MCP tool definitions, `tools_for`, `call_tool` with every
//! result kind pinned byte for byte under `snapshots/`, argument checks
//! against the declared schemas, and REL-1 across entry points.

use std::sync::{Arc, Barrier};

use clarion::ffi::{clarion_close, Handle};
use clarion::mcp::{self, Tool, UnknownTool};
use clarion::test_hooks::{points, FailAction};
use clarion::{envelope, AnswerInput, Grant, Principal, ResolveRequest};
use serde_json::{json, Value};

use crate::support::abi::{abi_open, abi_resolve_as_alice};
use crate::support::*;

fn snapshot(name: &str, text: &str) {
    let mut settings = snapshot_settings();
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(format!("mcp_{name}"), redact_references(text)));
}

fn tool(db: &TestDb, principal: &Principal, name: &str, arguments: Value) -> String {
    db.call_tool(principal, name, &arguments)
        .unwrap()
        .to_string()
}

fn answer_args(pending_id: &str, text: &str) -> Value {
    json!({
        "pending_id": pending_id,
        "answers": [
            {"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": text},
            {"question_id": "q2", "selected_options": ["q2_opt2"]},
        ],
    })
}

/// The JSON of a result: a success's `structuredContent`, checked to
/// equal its text content; an error's text content, `{"error", "code"}`,
/// with no `structuredContent` (which must match the tool's
/// `outputSchema`, docs/mcp.md).
fn structured(result: &str) -> Value {
    let value: Value = serde_json::from_str(result).unwrap();
    let text = value["content"][0]["text"].as_str().unwrap();
    let text: Value = serde_json::from_str(text).unwrap();
    assert_eq!(value["content"][0]["type"], json!("text"));
    if value["isError"] == json!(true) {
        assert!(value.get("structuredContent").is_none(), "{value}");
        assert_eq!(
            text.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["error", "code"]
        );
        return text;
    }
    assert_eq!(value["isError"], json!(false), "{value}");
    assert_eq!(text, value["structuredContent"]);
    text
}

#[test]
fn wire_4_tool_definitions_are_pinned() {
    let definitions = mcp::tool_definitions();
    for definition in &definitions {
        let name = definition["name"].as_str().unwrap();
        snapshot(&format!("tool_{name}"), &definition.to_string());
    }
    assert_eq!(definitions.len(), 3);
}

/// WIRE-4: every error a tool can end with has its own code word; asking
/// on an ended session (ASK-5) is `session_ended`, not `internal`.
#[test]
fn wire_4_session_ended_has_its_own_code() {
    assert_eq!(
        envelope::tool_error(&clarion::Error::SessionEnded),
        json!({"error": "session has ended", "code": "session_ended"})
    );
    assert_eq!(
        envelope::tool_error(&clarion::Error::NoLongerActive)["code"],
        "no_longer_active"
    );
}

/// MCPA-3: the asking tools' definitions, pinned; `ask_human` takes `ask`'s
/// arguments without `session_id`, plus `wait_ms`.
#[test]
fn mcpa_3_ask_tool_definitions_are_pinned() {
    let definitions = mcp::ask_tool_definitions();
    let names: Vec<&str> = definitions
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ask_human", "wait_for_answer", "cancel_question"]);
    for definition in &definitions {
        let name = definition["name"].as_str().unwrap();
        snapshot(&format!("ask_tool_{name}"), &definition.to_string());
    }
    let ask_human = &definitions[0]["inputSchema"];
    assert!(ask_human["properties"].get("session_id").is_none());
    assert!(ask_human["properties"].get("wait_ms").is_some());
    assert!(ask_human["properties"].get("expires_in_ms").is_some());
    assert_eq!(ask_human["required"], json!(["questions"]));
    for tool in mcp::AskTool::ALL {
        assert_eq!(mcp::AskTool::parse(tool.name()), Some(tool));
    }
}

#[test]
fn wire_4_tools_for_lists_only_callable_tools() {
    let names = |principal: &Principal| {
        mcp::tools_for(principal)
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let all = vec![
        "list_pending_questions",
        "answer_question",
        "list_settled_questions",
    ];
    assert_eq!(names(&Principal::System), all);
    assert_eq!(names(&alice()), all);
    assert_eq!(names(&alice_bot()), all);
    assert_eq!(
        names(&alice_bot_with([Grant::QuestionsRead])),
        ["list_pending_questions", "list_settled_questions"]
    );
    assert_eq!(
        names(&alice_bot_with([Grant::QuestionsAnswer])),
        ["answer_question"]
    );
    assert!(names(&alice_bot_with([])).is_empty());
    assert!(names(&Principal::Unclassified).is_empty());
}

dual_backend!(
    wire_4_arguments_are_checked_against_the_schema,
    wire_4_unknown_tool_is_not_a_tool_result
);

/// A property's JSON type, `null` aside (an optional argument may be
/// `null`: not given).
fn first_type(property: &Value) -> &str {
    let kinds = match &property["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => property["anyOf"][0]["type"].as_str().into_iter().collect(),
    };
    kinds
        .into_iter()
        .find(|kind| *kind != "null")
        .unwrap_or("none")
}

/// WIRE-4: the schema's properties, `required` and `additionalProperties:
/// false` agree with what `call_tool` accepts.
fn wire_4_arguments_are_checked_against_the_schema(db: &TestDb) {
    for tool in Tool::ALL {
        let definition = tool.definition();
        let schema = &definition["inputSchema"];
        assert_eq!(schema["additionalProperties"], json!(false));
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        let base: Value = required
            .iter()
            .map(|name| (name.to_string(), json!("p")))
            .collect::<serde_json::Map<_, _>>()
            .into();
        for (name, property) in schema["properties"].as_object().unwrap() {
            let wrong = match first_type(property) {
                "string" => json!(1),
                "integer" | "boolean" | "array" => json!("text"),
                other => panic!("untested schema type {other}"),
            };
            let mut arguments = base.clone();
            arguments[name] = wrong;
            let error = structured(&tool_call(db, tool, arguments));
            assert_eq!(error["code"], json!("validation"), "{name}");
            assert!(
                error["error"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{name}: expected")),
                "{error}"
            );
        }
        for name in &required {
            let error = structured(&tool_call(db, tool, json!({})));
            assert_eq!(error["error"], json!(format!("{name}: required")));
        }
        let mut extra = base.clone();
        extra["surprise"] = json!(true);
        let error = structured(&tool_call(db, tool, extra));
        assert_eq!(error["error"], json!("surprise: unknown argument"));
        let error = structured(&tool_call(db, tool, json!([1])));
        assert_eq!(
            error["error"],
            json!("arguments: expected an object, got an array")
        );
    }
    let item = &Tool::AnswerQuestion.definition()["inputSchema"]["properties"]["answers"]["items"];
    assert_eq!(item["additionalProperties"], json!(false));
    let error = structured(&tool_call(
        db,
        Tool::AnswerQuestion,
        json!({"pending_id": "p", "answers": [{"question_id": "q1", "selected_options": [1]}]}),
    ));
    assert_eq!(
        error["error"],
        json!("answers[0].selected_options[0]: expected a string, got a number")
    );
}

/// WIRE-4: the in-session ask tool is not on the external surface; an
/// unknown tool is a protocol error, not a tool result.
fn wire_4_unknown_tool_is_not_a_tool_result(db: &TestDb) {
    assert_eq!(
        db.call_tool(&alice(), "ask", &json!({})),
        Err(UnknownTool("ask".into())),
    );
}

fn tool_call(db: &TestDb, tool: Tool, arguments: Value) -> String {
    db.call_tool(&alice(), tool.name(), &arguments)
        .unwrap()
        .to_string()
}

dual_backend!(
    wire_4_every_result_kind_is_pinned,
    rel_1_entry_points_race_for_one_bundle
);

/// WIRE-4: every result kind, byte for byte, the same on both backends:
/// a page, a won answer, an answer beaten by a winner (a success with
/// `claimed: false`), and the errors not_found, no_longer_active,
/// validation, capability_denied and internal.
fn wire_4_every_result_kind_is_pinned(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(1_000_000);
    let first = ask(db, &session, 2);
    let second = ask(db, &session, 2);
    db.clock.advance_micros(5_000_000);

    let page = tool(db, &alice(), "list_pending_questions", json!({"limit": 1}));
    assert!(structured(&page)["next_cursor"]
        .as_str()
        .is_some_and(|c| !c.is_empty()));
    snapshot("result_list_pending_questions", &page);
    let won = tool(
        db,
        &alice(),
        "answer_question",
        answer_args(&first, "  first  "),
    );
    snapshot("result_answer_won", &won);
    let lost = tool(
        db,
        &alice_bot(),
        "answer_question",
        answer_args(&first, "late"),
    );
    snapshot("result_answer_beaten", &lost);
    assert_eq!(structured(&lost)["response"], structured(&won)["response"]);
    // LIST-13, WIRE-6: what was decided, alice's own decision marked hers.
    let settled = tool(db, &alice(), "list_settled_questions", json!({"limit": 10}));
    snapshot("result_list_settled_questions", &settled);
    assert_eq!(
        structured(&settled)["bundles"][0]["decided_by_caller"],
        json!(true)
    );
    let raw: Value = serde_json::from_str(&won).unwrap();
    assert_eq!(
        raw.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["content", "structuredContent", "isError"]
    );
    assert_eq!(
        raw["structuredContent"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["claimed", "status", "response", "quorum"]
    );

    snapshot(
        "result_not_found",
        &tool(db, &bob(), "answer_question", answer_args(&first, "x")),
    );
    snapshot(
        "result_validation",
        &tool(
            db,
            &alice(),
            "answer_question",
            json!({"pending_id": second, "answers": []}),
        ),
    );
    snapshot(
        "result_capability_denied",
        &tool(
            db,
            &alice_bot_with([Grant::QuestionsRead]),
            "answer_question",
            answer_args(&second, "x"),
        ),
    );
    db.arm_failpoint(points::CLAIM_AFTER_ROWS, FailAction::Error);
    snapshot(
        "result_internal",
        &tool(db, &alice(), "answer_question", answer_args(&second, "x")),
    );
    db.disarm_failpoint(points::CLAIM_AFTER_ROWS);
    db.begin_turn(&session).unwrap();
    let gone = tool(db, &alice(), "answer_question", answer_args(&second, "x"));
    snapshot("result_no_longer_active", &gone);
    assert_eq!(
        serde_json::from_str::<Value>(&gone).unwrap()["isError"],
        json!(true)
    );
    let empty = tool(db, &alice(), "list_pending_questions", Value::Null);
    assert_eq!(
        structured(&empty),
        json!({"bundles": [], "count": 0, "next_cursor": ""})
    );
}

/// REL-1 across entry points: the Rust API, the MCP dispatcher and the
/// C ABI (`clarion_call` on its own handle) race for each bundle with
/// different answers: one `claimed: true`, every response
/// byte-identical to the stored one.
fn rel_1_entry_points_race_for_one_bundle(db: &TestDb) {
    let session = mirror(db, "race", "alice");
    let abi_handle = abi_open(&db.url);
    for round in 0..20 {
        let pending_id = ask(db, &session, 2);
        let racers = 33;
        let start = Arc::new(Barrier::new(racers));
        let threads: Vec<_> = (0..racers)
            .map(|n| {
                let handle = db.clarion.clone();
                let start = start.clone();
                let pending_id = pending_id.clone();
                std::thread::spawn(move || -> (bool, String) {
                    let text = format!("racer {n}");
                    start.wait();
                    match n % 3 {
                        0 => {
                            let request = ResolveRequest {
                                answers: vec![
                                    AnswerInput {
                                        question_id: "q1".into(),
                                        selected_options: vec!["q1_opt1".into()],
                                        custom_text: text,
                                    },
                                    AnswerInput {
                                        question_id: "q2".into(),
                                        selected_options: vec!["q2_opt2".into()],
                                        custom_text: String::new(),
                                    },
                                ],
                                ..ResolveRequest::default()
                            };
                            let resolved = handle
                                .resolve_bundle(&alice(), &pending_id, &request)
                                .unwrap();
                            (
                                resolved.claimed,
                                envelope::response(&resolved.response).to_string(),
                            )
                        }
                        1 => {
                            let result: Value = handle
                                .call_tool(
                                    &alice(),
                                    "answer_question",
                                    &answer_args(&pending_id, &text),
                                )
                                .unwrap();
                            let body = &result["structuredContent"];
                            (
                                body["claimed"].as_bool().unwrap(),
                                body["response"].to_string(),
                            )
                        }
                        _ => {
                            let reply =
                                abi_resolve_as_alice(abi_handle, answer_args(&pending_id, &text));
                            (
                                reply["body"]["claimed"].as_bool().unwrap(),
                                reply["body"]["response"].to_string(),
                            )
                        }
                    }
                })
            })
            .collect();
        let results: Vec<(bool, String)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_one_winner_and_the_stored_response(
            db,
            &pending_id,
            results
                .iter()
                .map(|(claimed, response)| (*claimed, response)),
            round,
        );
    }
    clarion_close(abi_handle as *mut Handle);
}

dual_backend!(val_8_every_door_refuses_too_few_answers_on_a_settled_bundle);

/// VAL-8: validation runs before the loser branch, so answering a bundle
/// someone already answered, with fewer answers than it has questions, is
/// the validation error (`400`, naming `answers`), not the winner's
/// result, through every door alike: the JSON door, the C ABI, HTTP's
/// `respond` and MCP's `answer_question`.
fn val_8_every_door_refuses_too_few_answers_on_a_settled_bundle(db: &TestDb) {
    use crate::support::abi::abi_call;
    use crate::support::server::{client, send, start, tokens};

    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    let won = tool(db, &alice(), "answer_question", answer_args(&id, "first"));
    assert_eq!(structured(&won)["claimed"], json!(true));
    let too_few = json!({
        "pending_id": id,
        "answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}],
    });
    let refusal = json!({"error": "answers: expected 2 answers (one per question), got 1"});

    let request = json!({
        "op": "resolve_bundle",
        "principal": {"kind": "user", "user_id": "alice"},
        "args": too_few,
    });
    let json_door = db.call(&request.to_string());
    assert_eq!(json_door.status, 400);
    assert_eq!(json_door.body, refusal);

    let abi = abi_call(abi_open(&db.url), &request);
    assert_eq!(
        abi,
        json!({"status": 400, "body": refusal, "code": "validation", "field": "answers"})
    );

    let server = start(db);
    let reply = send(
        client()
            .post(server.url(&format!("/api/v1/clarification/{id}/respond")))
            .bearer_auth(tokens(db).alice)
            .json(&json!({"answers": too_few["answers"]})),
    );
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json(), refusal);

    let mcp = structured(&tool(db, &alice(), "answer_question", too_few));
    assert_eq!(
        mcp,
        json!({"error": refusal["error"], "code": "validation"})
    );
}
