//! `--text`: the reply bodies as readable text, for people at a terminal,
//! one rendering per body type (an operation's body names its type: a new
//! operation with a known body reads as text at once; an unknown body is
//! shown as its JSON). The JSON output is the contract; this is a view of
//! it.

use clarion::Operation;
use serde_json::Value;

/// A string of the reply, safe to print: agent-written text may hold
/// control characters (an escape sequence could rewrite the operator's
/// terminal, a newline could forge a line), so each is shown escaped
/// (`\u{1b}`, `\n`); everything else prints as written.
fn s(value: &Value) -> String {
    let text = value.as_str().unwrap_or_default();
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    shown
}

fn bundle(out: &mut Vec<String>, bundle: &Value) {
    out.push(format!(
        "{}  task {}  {} s old  {}",
        s(&bundle["pending_id"]),
        s(&bundle["task_id"]),
        bundle["age_seconds"],
        s(&bundle["kind"]),
    ));
    if !s(&bundle["context"]).is_empty() {
        out.push(format!("  context: {}", s(&bundle["context"])));
    }
    for question in bundle["questions"].as_array().into_iter().flatten() {
        out.push(format!(
            "  [{}] {}: {}",
            s(&question["question_id"]),
            s(&question["title"]),
            s(&question["prompt"])
        ));
        for option in question["options"].as_array().into_iter().flatten() {
            out.push(format!(
                "      {}  {} — {}",
                s(&option["option_id"]),
                s(&option["label"]),
                s(&option["description"])
            ));
        }
    }
}

fn response(out: &mut Vec<String>, response: &Value) {
    if response["rejected"] == Value::Bool(true) {
        out.push(format!("  rejected: {}", s(&response["reject_reason"])));
    }
    for answer in response["answers"].as_array().into_iter().flatten() {
        let picked = answer["selected_options"]
            .as_array()
            .into_iter()
            .flatten()
            .map(s)
            .collect::<Vec<String>>();
        out.push(format!(
            "  {}: {} {}",
            s(&answer["question_id"]),
            picked.join(", "),
            s(&answer["custom_text"])
        ));
    }
    out.push(format!("  at {}", s(&response["responded_at"])));
}

/// The body of a successful reply to `operation`, as lines of text.
pub fn render(operation: Operation, body: &Value) -> String {
    let mut out = Vec::new();
    match operation.body_name().unwrap_or_default().as_str() {
        "ListPage" => {
            out.push(format!("{} bundle(s)", body["count"]));
            for each in body["bundles"].as_array().into_iter().flatten() {
                bundle(&mut out, each);
            }
            if !s(&body["next_cursor"]).is_empty() {
                out.push(format!("more: --cursor {}", s(&body["next_cursor"])));
            }
        }
        "BundleDetail" => {
            bundle(&mut out, body);
            out.push(format!("status: {}", s(&body["status"])));
            if body["response"].is_object() {
                response(&mut out, &body["response"]);
            }
        }
        "Resolved" => {
            let who = if body["claimed"] == Value::Bool(true) {
                "you resolved it"
            } else {
                "someone resolved it first"
            };
            out.push(format!("{}: {who}", s(&body["status"])));
            response(&mut out, &body["response"]);
        }
        "Summary" => out.push(format!(
            "{} bundle(s), {} question(s) waiting; oldest {} s",
            body["pending_bundles"], body["pending_questions"], body["oldest_age_seconds"]
        )),
        "Asked" => out.push(format!(
            "{} ({})",
            s(&body["pending_id"]),
            if body["created"] == Value::Bool(true) {
                "created"
            } else {
                "already asked"
            }
        )),
        "Deliveries" => {
            let deliveries = body["deliveries"].as_array().cloned().unwrap_or_default();
            out.push(format!("{} undelivered resolution(s)", deliveries.len()));
            for delivery in &deliveries {
                out.push(format!(
                    "{}  session {}  {}",
                    s(&delivery["pending_id"]),
                    s(&delivery["session_id"]),
                    s(&delivery["status"])
                ));
                response(&mut out, &delivery["response"]);
            }
        }
        "Pruned" => out.push(format!("{} bundle(s) pruned", body["pruned"])),
        "Ok" => out.push("ok".to_owned()),
        _ => out.push(serde_json::to_string_pretty(body).unwrap_or_default()),
    }
    out.join("\n")
}
