//! Text for people: no requirement id in the MCP tool definitions, the
//! OpenAPI document or error messages; what the schema can state, it does.

use std::path::Path;

use clarion::mcp;
use serde_json::{json, Value};

use crate::support::server::*;
use crate::support::*;

dual_backend!(
    openapi_document_names_no_requirement_and_has_a_server,
    error_messages_name_no_requirement
);

/// Words that look like a requirement id and are not one.
const NOT_IDS: &[&str] = &["UTF-8", "SHA-256"];

/// The requirement ids (`WIRE-4`, `WAIT-1b`) and section references
/// (`§8`) in `text`.
fn requirement_ids(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let boundary = |i: usize| i >= chars.len() || (!chars[i].is_alphanumeric() && chars[i] != '_');
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '§' {
            let mut end = i + 1;
            while end < chars.len() && chars[end] == ' ' {
                end += 1;
            }
            if end < chars.len() && chars[end].is_ascii_digit() {
                found.push(chars[i..=end].iter().collect());
            }
            i += 1;
            continue;
        }
        let starts = chars[i].is_ascii_uppercase() && (i == 0 || boundary(i - 1));
        if starts {
            let mut letters = i;
            while letters < chars.len() && chars[letters].is_ascii_uppercase() {
                letters += 1;
            }
            let count = letters - i;
            if (2..=6).contains(&count)
                && letters + 1 < chars.len()
                && chars[letters] == '-'
                && chars[letters + 1].is_ascii_digit()
            {
                let mut end = letters + 1;
                while end < chars.len() && chars[end].is_ascii_digit() {
                    end += 1;
                }
                if end < chars.len() && chars[end].is_ascii_lowercase() && boundary(end + 1) {
                    end += 1;
                }
                if boundary(end) {
                    let id: String = chars[i..end].iter().collect();
                    if !NOT_IDS.contains(&id.as_str()) {
                        found.push(id);
                    }
                }
            }
            i = letters.max(i + 1);
            continue;
        }
        i += 1;
    }
    found
}

#[test]
fn the_id_pattern_finds_ids_and_only_ids() {
    assert_eq!(
        requirement_ids("see WIRE-4, WAIT-1b and §8; UTF-8, X-1, ABCDEFG-1, A1-2, MCPA-5x1"),
        ["WIRE-4", "WAIT-1b", "§8"]
    );
}

/// Every string in `value` that names a requirement, with where it is.
fn ids_in(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::String(text) => {
            for id in requirement_ids(text) {
                found.push(format!("{at}: {id} in {text:?}"));
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                ids_in(item, &format!("{at}[{index}]"), found);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                ids_in(item, &format!("{at}.{key}"), found);
            }
        }
        _ => {}
    }
}

/// What a model reads of every tool, on both servers: names,
/// descriptions and every schema.
#[test]
fn mcp_tool_definitions_name_no_requirement() {
    let mut found = Vec::new();
    for definition in mcp::tool_definitions()
        .iter()
        .chain(&mcp::ask_tool_definitions())
    {
        let name = definition["name"].as_str().unwrap();
        ids_in(definition, name, &mut found);
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// JSON Schema 2020-12 defines no format for numbers: the tools' schemas
/// name none (an MCP client warns about `uint64`).
#[test]
fn mcp_tool_schemas_use_standard_formats_only() {
    fn formats(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(format)) = map.get("format") {
                    found.push(format.clone());
                }
                map.values().for_each(|item| formats(item, found));
            }
            Value::Array(items) => items.iter().for_each(|item| formats(item, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    for definition in mcp::tool_definitions()
        .iter()
        .chain(&mcp::ask_tool_definitions())
    {
        formats(definition, &mut found);
    }
    found.sort();
    found.dedup();
    assert_eq!(found, ["date-time"]);
}

/// What JSON Schema can say between `ask_human`'s arguments, it says:
/// `expires_in_ms` and `expires_at` exclude each other, an `answer` or
/// `reject` default needs one of them, a permission bundle takes no
/// `answer` default, and each `on_expire` action takes only its own keys.
/// (`doors_schemas.rs` checks that the server refuses what they refuse.)
#[test]
fn ask_human_schema_states_the_deadline_rules() {
    let definition = mcp::ask_tool_definitions()
        .into_iter()
        .find(|definition| definition["name"] == "ask_human")
        .unwrap();
    let schema = &definition["inputSchema"];
    assert!(states_the_deadline_rules(schema), "{schema}");
    let on_expire = &schema["properties"]["on_expire"]["anyOf"][0];
    assert!(states_the_action_keys(on_expire), "{schema}");
}

/// The `then` of the condition in `schema`'s `allOf` whose `if` is `when`.
fn then_of<'a>(schema: &'a Value, when: &Value) -> Option<&'a Value> {
    schema["allOf"]
        .as_array()?
        .iter()
        .find(|condition| &condition["if"] == when)
        .map(|condition| &condition["then"])
}

/// `ask`'s three rules between arguments, as `allOf` conditions.
fn states_the_deadline_rules(schema: &Value) -> bool {
    let in_ms = json!({"required": ["expires_in_ms"], "properties": {"expires_in_ms": {"type": "integer"}}});
    let with_default = json!({"required": ["on_expire"], "properties": {"on_expire": {
        "type": "object", "required": ["action"], "properties": {"action": {"enum": ["answer", "reject"]}},
    }}});
    let permission = json!({"required": ["kind"], "properties": {"kind": {"const": "permission"}}});
    then_of(schema, &in_ms).is_some_and(|then| {
        then["properties"]["expires_at"] == json!({"anyOf": [{"const": ""}, {"type": "null"}]})
    }) && then_of(schema, &with_default).is_some_and(|then| {
        then["anyOf"][0] == in_ms && then["anyOf"][1]["required"] == json!(["expires_at"])
    }) && then_of(schema, &permission).is_some_and(|then| {
        then["properties"]["on_expire"]["properties"]["action"]["enum"]
            == json!(["expire", "reject"])
    })
}

/// `on_expire`'s keys by action, as `allOf` conditions.
fn states_the_action_keys(schema: &Value) -> bool {
    let action =
        |word: &str| json!({"required": ["action"], "properties": {"action": {"const": word}}});
    let absent = json!({"type": "null"});
    then_of(schema, &action("answer")).is_some_and(|then| {
        then["required"] == json!(["answers"]) && then["properties"]["reject_reason"] == absent
    }) && then_of(schema, &action("reject"))
        .is_some_and(|then| then["properties"]["answers"] == absent)
        && then_of(schema, &action("expire")).is_some_and(|then| {
            then["properties"]["answers"] == absent && then["properties"]["reject_reason"] == absent
        })
}

/// The OpenAPI document a generated client reads: no requirement id in
/// its descriptions and summaries, and a base URL relative to where it
/// was served.
fn openapi_document_names_no_requirement_and_has_a_server(db: &TestDb) {
    let server = start(db);
    let reply = send(client().get(server.url("/api/v1/openapi.json")));
    assert_eq!(reply.status, 200);
    let document = reply.json();
    assert_eq!(document["servers"], json!([{"url": "/"}]));
    let mut found = Vec::new();
    ids_in(&document, "", &mut found);
    assert!(found.is_empty(), "{found:#?}");
    let ask = &document["paths"]["/api/v1/clarification/request"]["post"]["requestBody"]["content"]
        ["application/json"]["schema"];
    let resolve = |schema: &Value| match schema["$ref"].as_str() {
        Some(reference) => document
            .pointer(reference.trim_start_matches('#'))
            .unwrap()
            .clone(),
        None => schema.clone(),
    };
    assert!(states_the_deadline_rules(&resolve(ask)), "{ask}");
    let on_expire = resolve(&resolve(ask)["properties"]["on_expire"]["anyOf"][0]);
    assert!(states_the_action_keys(&on_expire), "{on_expire}");
}

/// The string literals of a Rust source, outside comments and doc
/// attributes: every message a caller can read starts as one. Each with
/// its line and whether it is the value of a `"description"` key.
fn string_literals(source: &str) -> Vec<(usize, String, bool)> {
    let mut literals = Vec::new();
    let mut line = 1;
    let bytes: Vec<char> = source.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if (c == '/' && bytes.get(i + 1) == Some(&'/'))
            || (c == '#' && bytes.get(i + 1) == Some(&'[') && source_at(&bytes, i + 2, "doc"))
        {
            // A comment or a doc attribute: to the end of the line.
            while i < bytes.len() && bytes[i] != '\n' {
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('"', '\'') or a lifetime: skip what it holds.
            if bytes.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < bytes.len() && bytes[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if bytes.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c == 'r' && matches!(bytes.get(i + 1), Some('#' | '"')) {
            let mut hashes = 0;
            let mut j = i + 1;
            while bytes.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if bytes.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let rest: String = bytes[j + 1..].iter().collect();
            let end = rest.find(&close).unwrap_or(rest.len());
            let text = &rest[..end];
            literals.push((line, text.to_owned(), false));
            line += text.matches('\n').count();
            i = j + 1 + text.chars().count() + close.len();
        } else if c == '"' {
            let start = line;
            let before: String = bytes[i.saturating_sub(40)..i].iter().collect();
            let described = before.trim_end().ends_with("\"description\":");
            let mut text = String::new();
            i += 1;
            while i < bytes.len() && bytes[i] != '"' {
                if bytes[i] == '\\' {
                    text.push(bytes[i]);
                    i += 1;
                }
                if bytes[i] == '\n' {
                    line += 1;
                }
                text.push(bytes[i]);
                i += 1;
            }
            i += 1;
            literals.push((start, text, described));
        } else {
            i += 1;
        }
    }
    literals
}

fn source_at(chars: &[char], at: usize, word: &str) -> bool {
    let mut at = at;
    while chars.get(at) == Some(&' ') {
        at += 1;
    }
    word.chars()
        .enumerate()
        .all(|(offset, c)| chars.get(at + offset) == Some(&c))
}

fn rust_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// Error messages reach callers through every door (WIRE-1's `error`,
/// an MCP tool error's text): no requirement id in one. A message starts
/// as a string literal in the library (its errors, its validation, the
/// doors' refusals) or in `clarion mcp`, so every literal there is read;
/// the web inbox's page and the command line's help are checked with
/// them.
fn error_messages_name_no_requirement(db: &TestDb) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let own_text = relative.starts_with("src/bin/clarion/mcp/")
            || !(relative.starts_with("src/bin/") || relative.starts_with("src/doors/http/web/"));
        if !own_text {
            continue;
        }
        let source = std::fs::read_to_string(file).unwrap();
        // A unit test's literals reach nobody.
        let source = source.split("#[cfg(test)]").next().unwrap();
        for (line, text, described) in string_literals(source) {
            // A schema's description reaches callers through the tool
            // definitions and the document, checked above as they read it.
            if described {
                continue;
            }
            for id in requirement_ids(&text) {
                found.push(format!("{relative}:{line}: {id} in {text:?}"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    // And the messages themselves, as a caller reads them.
    let refusals = [
        db.get_bundle(&alice(), "nope").unwrap_err(),
        db.resolve_bundle(&alice(), "nope", &one_answer("x"))
            .unwrap_err(),
        clarion::Error::NoLongerActive,
        clarion::Error::SessionEnded,
        clarion::Error::CapabilityDenied,
        clarion::Error::TimedOut,
        clarion::Error::HandleClosed,
    ];
    for error in refusals {
        let envelope = clarion::envelope::error(&error);
        let message = envelope.body["error"].as_str().unwrap().to_owned();
        assert!(requirement_ids(&message).is_empty(), "{message}");
    }
    let both = db.call_tool(
        &clarion::Principal::System,
        "list_pending_questions",
        &json!({"limit": "ten"}),
    );
    let text = both.unwrap()["content"][0]["text"].to_string();
    assert!(requirement_ids(&text).is_empty(), "{text}");
}
