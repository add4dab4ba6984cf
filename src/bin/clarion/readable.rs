//! `--text`: the reply bodies as readable text, for people at a terminal,
//! one rendering per body type (an operation's body names its type: a new
//! operation with a known body reads as text at once; an unknown body is
//! shown as its JSON). The JSON output is the contract; this is a view of
//! it.

use clarion::{BundleView, Operation, Response};
use serde_json::Value;

/// A response in words (OPS-1a, OPS-1b): each question's title with the
/// labels of the options chosen and its note, or the reason of a
/// rejection.
pub(crate) fn answers_in_words(view: &BundleView, response: &Response) -> String {
    if response.rejected {
        return match response.reject_reason.as_str() {
            "" => "rejected, no reason given".to_owned(),
            reason => format!("rejected: \"{}\"", clean(reason)),
        };
    }
    let mut parts = Vec::new();
    for answer in &response.answers {
        let Some(question) = view
            .questions
            .iter()
            .find(|question| question.question_id == answer.question_id)
        else {
            continue;
        };
        let labels: Vec<String> = answer
            .selected_options
            .iter()
            .map(|id| {
                question
                    .options
                    .iter()
                    .find(|option| &option.option_id == id)
                    .map_or_else(|| clean(id), |option| clean(&option.label))
            })
            .collect();
        let chosen = if labels.is_empty() {
            "no choice".to_owned()
        } else {
            labels.join(" and ")
        };
        let mut part = format!("{}: {chosen}", clean(&question.title));
        if !answer.custom_text.is_empty() {
            part.push_str(&format!(" (\"{}\")", clean(&answer.custom_text)));
        }
        parts.push(part);
    }
    if parts.is_empty() {
        "cancelled, no answer".to_owned()
    } else {
        parts.join("; ")
    }
}

/// A string of the reply, safe to print ([`clean`]).
fn s(value: &Value) -> String {
    clean(value.as_str().unwrap_or_default())
}

/// Text safe to print: agent-written text may hold control characters (an
/// escape sequence could rewrite the operator's terminal, a newline could
/// forge a line), so each is shown escaped (`\u{1b}`, `\n`); everything
/// else prints as written.
pub(crate) fn clean(text: &str) -> String {
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

/// A name for people (LIST-11), else the id it names.
fn named(bundle: &Value, name: &str, id: &str) -> String {
    let name = s(&bundle[name]);
    if name.is_empty() {
        s(&bundle[id])
    } else {
        format!("\"{name}\"")
    }
}

fn bundle(out: &mut Vec<String>, bundle: &Value) {
    let mut place = named(bundle, "task_title", "task_id");
    let workspace = named(bundle, "workspace_name", "workspace_id");
    if !workspace.is_empty() {
        place = format!("{place} in {workspace}");
    }
    out.push(format!(
        "{}  {}  {}  asked {}",
        s(&bundle["pending_id"]),
        s(&bundle["kind"]),
        place,
        s(&bundle["created_at"]),
    ));
    if !s(&bundle["context"]).is_empty() {
        out.push(format!("  context: {}", s(&bundle["context"])));
    }
    for question in bundle["questions"].as_array().into_iter().flatten() {
        let how = if question["multi_select"] == Value::Bool(false) {
            "choose one"
        } else {
            "choose any"
        };
        out.push(format!(
            "  [{}] {}: {} ({how})",
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
    out.push(format!(
        "  at {}, decided by {}",
        s(&response["responded_at"]),
        decider(&response["decided_by"])
    ));
}

/// WIRE-2's `decided_by` in words.
fn decider(word: &Value) -> String {
    match word.as_str().unwrap_or_default() {
        "user" => "a user".to_owned(),
        "agent" => "an agent".to_owned(),
        "system" => "the host system".to_owned(),
        "deadline" => "its deadline".to_owned(),
        "" => "nobody recorded".to_owned(),
        other => clean(other),
    }
}

/// A bundle as `get_bundle` shows it, and the history's elements.
fn detail(out: &mut Vec<String>, body: &Value) {
    bundle(out, body);
    let mine = if body["decided_by_caller"] == Value::Bool(true) {
        " (by you)"
    } else {
        ""
    };
    out.push(format!("status: {}{mine}", s(&body["status"])));
    if body["response"].is_object() {
        response(out, &body["response"]);
    }
}

/// HOOK-6: one endpoint and how its delivery stands.
fn webhook_lines(out: &mut Vec<String>, webhook: &Value) {
    let events: Vec<String> = webhook["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(s)
        .collect();
    out.push(format!(
        "{}  {}  {}",
        s(&webhook["id"]),
        s(&webhook["state"]),
        s(&webhook["url"])
    ));
    out.push(format!(
        "  events: {}; workspace: {}",
        if events.is_empty() {
            "all".to_owned()
        } else {
            events.join(", ")
        },
        match s(&webhook["workspace_id"]).as_str() {
            "" => "every".to_owned(),
            workspace => workspace.to_owned(),
        }
    ));
    out.push(format!(
        "  cursor {:?}, {} event(s) after it; last attempt {}, next {}",
        s(&webhook["cursor"]),
        webhook["backlog"],
        or_never(&webhook["last_attempt_at"]),
        or_never(&webhook["next_attempt_at"])
    ));
    if !s(&webhook["last_error"]).is_empty() {
        out.push(format!("  last error: {}", s(&webhook["last_error"])));
    }
    if !s(&webhook["skipped_through"]).is_empty() {
        out.push(format!(
            "  skipped (pruned while disabled): after {:?} through {:?}",
            s(&webhook["skipped_after"]),
            s(&webhook["skipped_through"])
        ));
    }
}

fn or_never(value: &Value) -> String {
    match s(value).as_str() {
        "" => "never".to_owned(),
        time => time.to_owned(),
    }
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
        "BundleDetail" => detail(&mut out, body),
        "SettledPage" => {
            out.push(format!("{} settled bundle(s), newest first", body["count"]));
            for each in body["bundles"].as_array().into_iter().flatten() {
                detail(&mut out, each);
            }
            if !s(&body["next_cursor"]).is_empty() {
                out.push(format!("more: --cursor {}", s(&body["next_cursor"])));
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
        // HOOK-1: the secret, once, as the last line.
        "WebhookSecret" => {
            out.push(format!(
                "webhook {}: receivers verify its deliveries with this secret, shown only now:",
                s(&body["id"])
            ));
            out.push(s(&body["secret"]));
        }
        "Webhooks" => {
            let webhooks = body["webhooks"].as_array().cloned().unwrap_or_default();
            out.push(format!("{} webhook endpoint(s)", webhooks.len()));
            for webhook in &webhooks {
                webhook_lines(&mut out, webhook);
            }
        }
        "Ok" => out.push("ok".to_owned()),
        _ => out.push(serde_json::to_string_pretty(body).unwrap_or_default()),
    }
    out.join("\n")
}
