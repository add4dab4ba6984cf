//! `--text`: the reply bodies as readable text, for people at a terminal,
//! one rendering per body type (an operation's body names its type: a new
//! operation with a known body reads as text at once; an unknown body is
//! shown as its JSON). The JSON output is the contract; this is a view of
//! it, in the words the web inbox uses: options by their labels, who
//! decided ("you", "another person", "its deadline"), deadlines with what
//! they do. Ids are shown only where a command takes them, marked as ids
//! (`bundle pending-…`, `question id`, `option id` while it can be
//! answered). No line ends in a space.

use clarion::{BundleView, Operation, Principal, Response, Timestamp};
use serde_json::Value;

/// What a view needs besides the body: the time to count from, who is
/// calling (their own decisions read "you"), and the bundle a reply is
/// about where the body does not carry it (`answer`, `attempts`).
pub(crate) struct Seen<'a> {
    pub now: Timestamp,
    pub caller: &'a Principal,
    pub bundle: Option<&'a Value>,
}

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

/// `n` things, the word in the singular for one: "1 bundle", "0 bundles".
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn count_of(value: &Value, one: &str, many: &str) -> String {
    count(value.as_u64().unwrap_or_default(), one, many)
}

/// An instant to the second, in UTC: `2026-11-29 20:00:08 UTC`; `""` for
/// none.
pub(crate) fn when(value: &Value) -> String {
    let text = s(value);
    match Timestamp::parse_rfc3339(&text) {
        Some(at) => when_at(at),
        None => text,
    }
}

pub(crate) fn when_at(at: Timestamp) -> String {
    let text = at.to_rfc3339();
    match (text.get(..10), text.get(11..19)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => text,
    }
}

/// A span of seconds as a person says it: `45 s`, `9 min 59 s`, `2 h 5
/// min`, `3 d 4 h` (to the second under an hour).
pub(crate) fn span(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3_600 => match (s / 60, s % 60) {
            (m, 0) => format!("{m} min"),
            (m, s) => format!("{m} min {s} s"),
        },
        s if s < 86_400 => match (s / 3_600, s % 3_600 / 60) {
            (h, 0) => format!("{h} h"),
            (h, m) => format!("{h} h {m} min"),
        },
        s => match (s / 86_400, s % 86_400 / 3_600) {
            (d, 0) => format!("{d} d"),
            (d, h) => format!("{d} d {h} h"),
        },
    }
}

/// How far `at` is from now: "in 9 min", "8 s ago", "now".
fn relative(at: Timestamp, now: Timestamp) -> String {
    let micros = at.as_micros() - now.as_micros();
    let seconds = micros.unsigned_abs() / 1_000_000;
    match micros {
        _ if seconds == 0 => "now".to_owned(),
        m if m > 0 => format!("in {}", span(seconds)),
        _ => format!("{} ago", span(seconds)),
    }
}

fn relative_of(value: &Value, now: Timestamp) -> Option<String> {
    Timestamp::parse_rfc3339(value.as_str()?).map(|at| relative(at, now))
}

/// A name for people (LIST-11) with its id, else the id it names.
fn named(bundle: &Value, name: &str, id: &str) -> String {
    match (s(&bundle[name]), s(&bundle[id])) {
        (name, id) if name.is_empty() => id,
        (name, id) if id.is_empty() => format!("\"{name}\""),
        (name, id) => format!("\"{name}\" ({id})"),
    }
}

/// An option's label from its id, in `question`, else the id.
fn label(question: Option<&Value>, option_id: &str) -> String {
    question
        .and_then(|question| question["options"].as_array())
        .into_iter()
        .flatten()
        .find(|option| option["option_id"] == option_id)
        .map_or_else(|| clean(option_id), |option| s(&option["label"]))
}

fn question_of<'b>(bundle: Option<&'b Value>, question_id: &Value) -> Option<&'b Value> {
    bundle?["questions"]
        .as_array()?
        .iter()
        .find(|question| &question["question_id"] == question_id)
}

/// What a response (or a deadline's default) decides, one line per
/// answer, in labels: `Target: Staging ("ship it")`; a rejection with its
/// reason.
fn decision(bundle: Option<&Value>, response: &Value) -> Vec<String> {
    if response["rejected"] == Value::Bool(true) {
        return vec![match s(&response["reject_reason"]).as_str() {
            "" => "rejected, no reason given".to_owned(),
            reason => format!("rejected: \"{reason}\""),
        }];
    }
    let mut lines = Vec::new();
    for answer in response["answers"].as_array().into_iter().flatten() {
        let question = question_of(bundle, &answer["question_id"]);
        let title = match question.map(|question| s(&question["title"])) {
            Some(title) if !title.is_empty() => title,
            _ => s(&answer["question_id"]),
        };
        let labels: Vec<String> = answer["selected_options"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|id| label(question, id.as_str().unwrap_or_default()))
            .collect();
        let mut line = format!(
            "{title}: {}",
            if labels.is_empty() {
                "no option chosen".to_owned()
            } else {
                labels.join(", ")
            }
        );
        if !s(&answer["custom_text"]).is_empty() {
            line.push_str(&format!(" (\"{}\")", s(&answer["custom_text"])));
        }
        lines.push(line);
    }
    lines
}

/// WIRE-2's `decided_by` in the web inbox's words, "you" for the caller's
/// own decision (WIRE-6); a quorum by its voters (QUO-4), the caller maybe
/// among them.
fn decider(response: &Value, mine: bool) -> String {
    let word = &response["decided_by"];
    if word == "quorum" {
        let voters: Vec<String> = response["voters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(s)
            .collect();
        return match voters.as_slice() {
            [one] => format!("{one}, for the quorum"),
            _ => format!("a quorum of {}", and_list(&voters)),
        };
    }
    if mine {
        return "you".to_owned();
    }
    match word.as_str().unwrap_or_default() {
        "user" => "another person".to_owned(),
        "agent" => "an agent".to_owned(),
        "system" => "the host system".to_owned(),
        "deadline" => "its deadline".to_owned(),
        "" => "someone (not recorded)".to_owned(),
        other => clean(other),
    }
}

/// A bundle's status in words.
fn status_words(status: &str) -> String {
    match status {
        "pending" => "waiting for an answer".to_owned(),
        "answered" => "answered".to_owned(),
        "rejected" => "rejected".to_owned(),
        "cancelled" => "cancelled".to_owned(),
        "expired" => "expired".to_owned(),
        "superseded" => "superseded by a newer turn".to_owned(),
        "inactive" => "no longer active".to_owned(),
        other => clean(other),
    }
}

/// What the deadline does if nobody answers (EXP-1), in words.
fn default_words(detail: &Value) -> String {
    let given = &detail["default_response"];
    match s(&detail["on_expire"]).as_str() {
        "reject" if !given.is_object() => "the agent is told: rejected".to_owned(),
        "reject" => {
            let reason = s(&given["reject_reason"]);
            if reason.is_empty() {
                "the agent is told: rejected, no reason given".to_owned()
            } else {
                format!("the agent is told: rejected: \"{reason}\"")
            }
        }
        "answer" if given.is_object() => format!(
            "the agent is told: {}",
            decision(Some(detail), given).join("; ")
        ),
        // A listing's bundles carry the action, not the default itself.
        "answer" => "the agent is told its default answer (clarion get shows it)".to_owned(),
        _ => "the question is withdrawn".to_owned(),
    }
}

/// Names as a sentence lists them: "alice", "alice and bob", "alice, bob
/// and carol".
fn and_list(names: &[String]) -> String {
    match names {
        [] => "nobody".to_owned(),
        [one] => one.clone(),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    }
}

/// What a quorum bundle needs (QUO-1), in words: `Needs 2 identical
/// approvals from alice, bob and carol; one rejection decides` while it
/// waits, `Quorum of 2 identical approvals from …, or one rejection` once
/// settled; `None` without a quorum.
pub(crate) fn quorum_needs(detail: &Value) -> Option<String> {
    let quorum = detail["quorum"].as_object()?;
    let requested_by = s(&quorum["requested_by"]);
    let voters: Vec<String> = quorum["eligible"]
        .as_array()
        .into_iter()
        .flatten()
        .map(s)
        .filter(|user| *user != requested_by)
        .collect();
    let from = if voters.is_empty() {
        "anyone who sees it".to_owned()
    } else {
        and_list(&voters)
    };
    let approvals = quorum["approvals"].as_u64().unwrap_or_default();
    let rejections = match quorum["rejections"].as_u64().unwrap_or(1) {
        1 => "one rejection".to_owned(),
        n => format!("{n} rejections"),
    };
    let waiting = matches!(s(&detail["status"]).as_str(), "" | "pending");
    let mut line = if waiting {
        let decide = if rejections == "one rejection" {
            "decides"
        } else {
            "decide"
        };
        format!("Needs {approvals} identical approvals from {from}; {rejections} {decide}")
    } else {
        format!("Quorum of {approvals} identical approvals from {from}, or {rejections}")
    };
    if !requested_by.is_empty() {
        line.push_str(&format!("; asked for {requested_by}, who does not vote"));
    }
    Some(line)
}

/// A bundle's reminders and escalation (NUDGE-5), in words: `Reminded
/// twice; next reminder 2026-11-29 20:10:00 UTC (in 10 min); escalated at
/// 2026-11-29 20:05:00 UTC`; the next reminder only while the bundle
/// waits. `None` without nudges, or before anything is sent or due (an
/// escalation to come is not in the listing, so it is not said).
pub(crate) fn nudges_line(detail: &Value, now: Timestamp) -> Option<String> {
    let nudges = detail["nudges"].as_object()?;
    let waiting = matches!(s(&detail["status"]).as_str(), "" | "pending");
    let mut parts = Vec::new();
    match nudges["reminders_sent"].as_u64().unwrap_or_default() {
        0 => {}
        1 => parts.push("reminded once".to_owned()),
        2 => parts.push("reminded twice".to_owned()),
        n => parts.push(format!("reminded {n} times")),
    }
    let next = &nudges["next_reminder_at"];
    if waiting && !s(next).is_empty() {
        let how_far = relative_of(next, now).unwrap_or_default();
        let which = if parts.is_empty() { "first" } else { "next" };
        parts.push(format!("{which} reminder {} ({how_far})", when(next)));
    }
    if !s(&nudges["escalated_at"]).is_empty() {
        parts.push(format!("escalated at {}", when(&nudges["escalated_at"])));
    }
    let line = parts.join("; ");
    let mut letters = line.chars();
    let first = letters.next()?;
    Some(first.to_uppercase().chain(letters).collect())
}

/// A quorum bundle's votes (QUO-5), one line each in vote order: who, when,
/// what, and whether it counts (while pending) or decided (once settled).
fn votes(out: &mut Vec<String>, bundle: &Value, seen: &Seen, waiting: bool) {
    for vote in bundle["quorum"]["votes"].as_array().into_iter().flatten() {
        let verb = if vote["rejected"] == Value::Bool(true) {
            "rejected"
        } else {
            "approved"
        };
        let ago = match relative_of(&vote["at"], seen.now).as_deref() {
            Some("now") | None => "just now".to_owned(),
            Some(ago) => ago.to_owned(),
        };
        let what = match decision(Some(bundle), vote).join("; ") {
            what if vote["rejected"] == Value::Bool(true) => what.replacen("rejected", "", 1),
            what => format!(": {what}"),
        };
        let counts = match (waiting, vote["counts"] == Value::Bool(true)) {
            (true, true) | (false, false) => "",
            (true, false) => " (does not count)",
            (false, true) => " (decided)",
        };
        out.push(format!(
            "    {} {verb} {ago}{what}{counts}",
            s(&vote["user_id"])
        ));
    }
}

/// A waiting bundle's deadline, how far it is, and what it does: `Deadline
/// 2026-11-29 20:10:00 UTC (in 10 min): if nobody answers by then, the
/// question is withdrawn`; `None` without one.
pub(crate) fn deadline(detail: &Value, now: Timestamp) -> Option<String> {
    let at = when(&detail["expires_at"]);
    if at.is_empty() {
        return None;
    }
    let how_far = relative_of(&detail["expires_at"], now).unwrap_or_default();
    Some(format!(
        "Deadline {at} ({how_far}): if nobody answers by then, {}",
        default_words(detail)
    ))
}

/// The bundle's head and questions; ids of questions and options only
/// while it can be answered (`clarion answer` names them).
fn bundle(out: &mut Vec<String>, bundle: &Value, seen: &Seen) {
    let status = s(&bundle["status"]);
    let waiting = status.is_empty() || status == "pending";
    let kind = match s(&bundle["kind"]).as_str() {
        "permission" => "permission request",
        _ => "question",
    };
    out.push(format!(
        "Bundle {} ({kind}): {}",
        s(&bundle["pending_id"]),
        status_words(if status.is_empty() {
            "pending"
        } else {
            &status
        })
    ));
    let mut place = format!("Task {}", named(bundle, "task_title", "task_id"));
    let workspace = named(bundle, "workspace_name", "workspace_id");
    if !workspace.is_empty() {
        place = format!("{place} in workspace {workspace}");
    }
    out.push(format!("  {place}"));
    let mut asked = format!("  Asked {}", when(&bundle["created_at"]));
    match relative_of(&bundle["created_at"], seen.now).as_deref() {
        Some("now") => asked.push_str(" (just now)"),
        Some(ago) => asked = format!("{asked} ({ago})"),
        None => {}
    }
    out.push(asked);
    if let Some(line) = deadline(bundle, seen.now).filter(|_| waiting) {
        out.push(format!("  {line}"));
    } else if !s(&bundle["expires_at"]).is_empty() {
        let at = when(&bundle["expires_at"]);
        out.push(if bundle["response"]["decided_by"] == "deadline" {
            format!("  Deadline {at}: reached")
        } else if status == "expired" {
            format!("  Deadline {at}: reached, the question was withdrawn")
        } else if bundle["response"].is_object() {
            format!("  Deadline {at}: decided before it")
        } else {
            format!("  Deadline {at}")
        });
    }
    if let Some(line) = quorum_needs(bundle) {
        out.push(format!("  {line}"));
        votes(out, bundle, seen, waiting);
    }
    if let Some(line) = nudges_line(bundle, seen.now) {
        out.push(format!("  {line}"));
    }
    if !s(&bundle["context"]).is_empty() {
        out.push(format!("  Context: {}", s(&bundle["context"])));
    }
    for question in bundle["questions"].as_array().into_iter().flatten() {
        let how = if question["multi_select"] == Value::Bool(false) {
            "choose one"
        } else {
            "choose any"
        };
        let id = if waiting {
            format!("; question id {}", s(&question["question_id"]))
        } else {
            String::new()
        };
        out.push(format!("  {} ({how}{id})", s(&question["title"])));
        if !s(&question["prompt"]).is_empty() {
            out.push(format!("    {}", s(&question["prompt"])));
        }
        for option in question["options"].as_array().into_iter().flatten() {
            let mut line = format!("    - {}", s(&option["label"]));
            if !s(&option["description"]).is_empty() {
                line.push_str(&format!(": {}", s(&option["description"])));
            }
            if waiting {
                line.push_str(&format!(" (option id {})", s(&option["option_id"])));
            }
            out.push(line);
        }
    }
}

/// Who decided what, and when: "Answered by you at …:" and the answers in
/// labels, one per line; `subject` names the bundle in the first line.
fn settled(
    out: &mut Vec<String>,
    subject: Option<&str>,
    detail: Option<&Value>,
    status: &str,
    response: &Value,
    mine: bool,
) {
    let who = decider(response, mine);
    let at = when(&response["responded_at"]);
    let rejected = status == "rejected" || response["rejected"] == Value::Bool(true);
    let verb = match status {
        "cancelled" => "cancelled",
        _ if rejected => "rejected",
        _ => "answered",
    };
    let head = match subject {
        Some(id) => format!("Bundle {id} {verb} by {who} at {at}"),
        None => format!(
            "{}{} by {who} at {at}",
            verb[..1].to_uppercase(),
            &verb[1..]
        ),
    };
    if verb == "cancelled" {
        out.push(head);
    } else if rejected {
        out.push(match s(&response["reject_reason"]).as_str() {
            "" => format!("{head}, no reason given"),
            reason => format!("{head}: \"{reason}\""),
        });
    } else {
        out.push(format!("{head}:"));
        out.extend(
            decision(detail, response)
                .into_iter()
                .map(|line| format!("  {line}")),
        );
    }
}

/// A bundle as `get_bundle` shows it, and the history's elements.
fn detail(out: &mut Vec<String>, body: &Value, seen: &Seen) {
    bundle(out, body, seen);
    if body["response"].is_object() {
        settled(
            out,
            None,
            Some(body),
            &s(&body["status"]),
            &body["response"],
            body["decided_by_caller"] == Value::Bool(true),
        );
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
    if webhook["allow_private"] == true {
        out.push("  may deliver to private and loopback addresses".to_owned());
    }
    if webhook["links"] == true {
        out.push("  receives answer links (for a relay to each person)".to_owned());
    }
    out.push(format!(
        "  cursor {:?}, {} after it; last attempt {}, next {}",
        s(&webhook["cursor"]),
        count_of(&webhook["backlog"], "event", "events"),
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
    match when(value).as_str() {
        "" => "never".to_owned(),
        time => time.to_owned(),
    }
}

/// A door (AUD-4) in words.
fn door(channel: &str) -> String {
    match channel {
        "rust" => "the Rust API".to_owned(),
        "c_abi" => "the C ABI".to_owned(),
        "mcp" => "MCP".to_owned(),
        "http" => "the web page or HTTP".to_owned(),
        "cli" => "the command line".to_owned(),
        "link" => "an answer link".to_owned(),
        other => clean(other),
    }
}

/// Who made an attempt, in words.
fn attempter(attempt: &Value) -> String {
    match s(&attempt["principal_kind"]).as_str() {
        "deadline" => "the deadline".to_owned(),
        "system" => "the host system".to_owned(),
        "agent" => format!(
            "agent {} of user {}",
            s(&attempt["agent_id"]),
            s(&attempt["user_id"])
        ),
        "user" => format!("user {}", s(&attempt["user_id"])),
        other => other.to_owned(),
    }
}

fn same_principal(a: &Value, b: &Value) -> bool {
    a["principal_kind"] == b["principal_kind"]
        && a["user_id"] == b["user_id"]
        && a["agent_id"] == b["agent_id"]
        && a["principal_kind"] != "deadline"
}

fn is_callers(attempt: &Value, caller: &Principal) -> bool {
    let kind = s(&attempt["principal_kind"]);
    match caller {
        Principal::System => kind == "system",
        Principal::User { user_id } => kind == "user" && attempt["user_id"] == user_id.as_str(),
        Principal::Agent {
            user_id, agent_id, ..
        } => {
            kind == "agent"
                && attempt["user_id"] == user_id.as_str()
                && attempt["agent_id"] == agent_id.as_str()
        }
        Principal::Unclassified => false,
    }
}

/// AUD-3: one line per attempt: when (to the second), who and through
/// which door, its outcome, and what it sent as far as the ledger tells
/// (the winner's answer is the bundle's response; any other attempt is
/// known only by its digest: the same answer as the winner's or another).
fn attempts(out: &mut Vec<String>, body: &Value, seen: &Seen) {
    let attempts = body["attempts"].as_array().cloned().unwrap_or_default();
    let winner = attempts.iter().find(|attempt| attempt["outcome"] == "won");
    let id = seen
        .bundle
        .map(|bundle| s(&bundle["pending_id"]))
        .unwrap_or_default();
    let mut head = count(attempts.len() as u64, "attempt", "attempts");
    if !id.is_empty() {
        head = format!("{head} on bundle {id}");
    }
    out.push(format!("{head}, oldest first"));
    for attempt in &attempts {
        let mine = is_callers(attempt, seen.caller);
        let mut who = attempter(attempt);
        if mine {
            who.push_str(" (you)");
        }
        let channel = s(&attempt["channel"]);
        if channel != "deadline" {
            who = format!("{who} through {}", door(&channel));
        }
        let outcome = match (s(&attempt["outcome"]).as_str(), winner) {
            ("won", _) => {
                let sent = match seen.bundle {
                    Some(bundle) if bundle["response"].is_object() => {
                        let status = s(&bundle["status"]);
                        match status.as_str() {
                            "cancelled" => "cancelled it".to_owned(),
                            _ => {
                                let lines = decision(Some(bundle), &bundle["response"]);
                                if lines.is_empty() {
                                    status
                                } else {
                                    lines.join("; ")
                                }
                            }
                        }
                    }
                    _ => "its decision".to_owned(),
                };
                format!("won: {sent}")
            }
            ("lost", Some(winner)) => {
                let first = if same_principal(attempt, winner) {
                    let whose = if mine {
                        "your".to_owned()
                    } else {
                        "the same person's".to_owned()
                    };
                    let through = if winner["channel"] != attempt["channel"] {
                        format!(" through {}", door(&s(&winner["channel"])))
                    } else {
                        String::new()
                    };
                    format!("{whose} earlier answer{through} was first")
                } else {
                    format!("{} was first", attempter(winner))
                };
                let same = if attempt["digest"] == winner["digest"] {
                    "the same answer"
                } else {
                    "a different answer"
                };
                format!("lost, {first}; it sent {same}")
            }
            ("lost", None) => "lost: someone else was first".to_owned(),
            ("no_longer_active", _) => "too late: no longer active".to_owned(),
            ("invalid", _) => "refused as invalid".to_owned(),
            ("expired", _) => "withdrawn at the deadline".to_owned(),
            (other, _) => other.to_owned(),
        };
        out.push(format!("{}  {who}: {outcome}", when(&attempt["at"])));
    }
}

/// The body of a successful reply to `operation`, as lines of text.
pub fn render(operation: Operation, body: &Value, seen: &Seen) -> String {
    let mut out = Vec::new();
    match operation.body_name().unwrap_or_default().as_str() {
        "ListPage" => {
            out.push(format!(
                "{} waiting, oldest first",
                count_of(&body["count"], "bundle", "bundles")
            ));
            for each in body["bundles"].as_array().into_iter().flatten() {
                out.push(String::new());
                bundle(&mut out, each, seen);
            }
            more(&mut out, body);
        }
        "BundleDetail" => detail(&mut out, body, seen),
        "SettledPage" => {
            out.push(format!(
                "{}, newest first",
                count_of(&body["count"], "settled bundle", "settled bundles")
            ));
            for each in body["bundles"].as_array().into_iter().flatten() {
                out.push(String::new());
                detail(&mut out, each, seen);
            }
            more(&mut out, body);
        }
        "Resolved" => resolved(&mut out, body, seen),
        "Summary" => {
            let mut line = format!(
                "{} waiting, {}",
                count_of(&body["pending_bundles"], "bundle", "bundles"),
                count_of(&body["pending_questions"], "question", "questions")
            );
            if body["pending_bundles"].as_u64().unwrap_or_default() > 0 {
                line.push_str(&format!(
                    "; the oldest asked {} ago",
                    span(body["oldest_age_seconds"].as_u64().unwrap_or_default())
                ));
            }
            out.push(line);
        }
        "Asked" => out.push(format!(
            "Bundle {} ({})",
            s(&body["pending_id"]),
            if body["created"] == Value::Bool(true) {
                "asked"
            } else {
                "already asked with this idempotency key"
            }
        )),
        "Deliveries" => {
            let deliveries = body["deliveries"].as_array().cloned().unwrap_or_default();
            out.push(count(
                deliveries.len() as u64,
                "undelivered resolution",
                "undelivered resolutions",
            ));
            for delivery in &deliveries {
                out.push(format!(
                    "Bundle {} of session {}: {}",
                    s(&delivery["pending_id"]),
                    s(&delivery["session_id"]),
                    status_words(&s(&delivery["status"]))
                ));
                let response = &delivery["response"];
                if response.is_object() {
                    for line in decision(None, response) {
                        out.push(format!("  {line}"));
                    }
                    out.push(format!(
                        "  decided by {} at {}",
                        decider(response, false),
                        when(&response["responded_at"])
                    ));
                }
            }
        }
        // EXP-4, NUDGE-2: what one sweep did.
        "Swept" => out.push(format!(
            "{} settled, {} sent",
            count_of(&body["settled"], "bundle", "bundles"),
            count_of(
                &body["nudged"],
                "reminder or escalation",
                "reminders or escalations"
            )
        )),
        "Pruned" => out.push(format!(
            "{} pruned",
            count_of(&body["pruned"], "bundle", "bundles")
        )),
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
            out.push(count(
                webhooks.len() as u64,
                "webhook endpoint",
                "webhook endpoints",
            ));
            for webhook in &webhooks {
                webhook_lines(&mut out, webhook);
            }
        }
        "Ok" => out.push("ok".to_owned()),
        // PPL-1: the directory, one person a line.
        "UserPage" => {
            out.push(count_of(&body["count"], "person", "people"));
            for user in body["users"].as_array().into_iter().flatten() {
                let mut line = format!("  {}", s(&user["user_id"]));
                if !s(&user["name"]).is_empty() {
                    line.push_str(&format!("  {}", s(&user["name"])));
                }
                if !s(&user["email"]).is_empty() {
                    line.push_str(&format!("  <{}>", s(&user["email"])));
                }
                out.push(line);
            }
            more(&mut out, body);
        }
        // PPL-2: the members, one a line.
        "Members" => {
            let members: Vec<&Value> = body["members"].as_array().into_iter().flatten().collect();
            if members.is_empty() {
                out.push("no members".to_owned());
            }
            out.extend(members.into_iter().map(s));
        }
        // PPL-1a: who the caller is.
        "Caller" => {
            let mut line = s(&body["kind"]);
            if !s(&body["user_id"]).is_empty() {
                line.push_str(&format!(" {}", s(&body["user_id"])));
            }
            if !s(&body["agent_id"]).is_empty() {
                line.push_str(&format!(" (agent {})", s(&body["agent_id"])));
            }
            if !s(&body["name"]).is_empty() {
                line.push_str(&format!(": {}", s(&body["name"])));
            }
            out.push(line);
        }
        _ if operation == Operation::Attempts => attempts(&mut out, body, seen),
        _ => out.push(serde_json::to_string_pretty(body).unwrap_or_default()),
    }
    let lines: Vec<&str> = out.iter().map(|line| line.trim_end()).collect();
    lines.join("\n")
}

/// The next page's command, when there is one.
fn more(out: &mut Vec<String>, body: &Value) {
    if !s(&body["next_cursor"]).is_empty() {
        out.push(String::new());
        out.push(format!("More: --cursor {}", s(&body["next_cursor"])));
    }
}

/// `answer`, `reject`, `cancel`: whether this call decided, then what was
/// decided, by whom, in labels (from the bundle, read after).
fn resolved(out: &mut Vec<String>, body: &Value, seen: &Seen) {
    let status = s(&body["status"]);
    if body["claimed"] == Value::Bool(false) && status == "pending" {
        return vote_recorded(out, body, seen);
    }
    let id = s(&body["response"]["pending_id"]);
    let mine = body["claimed"] == Value::Bool(true)
        || seen
            .bundle
            .is_some_and(|bundle| bundle["decided_by_caller"] == Value::Bool(true));
    if body["claimed"] == Value::Bool(true) {
        settled(
            out,
            Some(&id),
            seen.bundle,
            &status,
            &body["response"],
            mine,
        );
    } else {
        out.push(format!(
            "Too late: bundle {id} was already {}, so this changed nothing",
            status_words(&status)
        ));
        settled(out, None, seen.bundle, &status, &body["response"], mine);
    }
    if let Some(bundle) = seen.bundle {
        if !s(&bundle["expires_at"]).is_empty() && bundle["response"]["decided_by"] != "deadline" {
            out.push(format!(
                "Its deadline, {}, no longer applies",
                when(&bundle["expires_at"])
            ));
        }
    }
}

/// QUO-3: the caller's vote was recorded and the quorum is not met yet: how
/// many more votes like it decide, and what the caller voted.
fn vote_recorded(out: &mut Vec<String>, body: &Value, seen: &Seen) {
    let id = seen
        .bundle
        .map(|bundle| s(&bundle["pending_id"]))
        .unwrap_or_default();
    let quorum = &body["quorum"];
    let votes: Vec<&Value> = quorum["votes"].as_array().into_iter().flatten().collect();
    let caller = match seen.caller {
        Principal::User { user_id } => user_id.as_str(),
        _ => "",
    };
    let Some(mine) = votes.iter().rev().find(|vote| vote["user_id"] == caller) else {
        out.push(format!("Vote recorded on bundle {id}"));
        return;
    };
    let rejected = mine["rejected"] == Value::Bool(true);
    // QUO-4: rejections count together; approvals only with the same digest.
    let alike = votes
        .iter()
        .filter(|vote| vote["counts"] == Value::Bool(true) && vote["rejected"] == mine["rejected"])
        .filter(|vote| rejected || vote["digest"] == mine["digest"])
        .count() as u64;
    let needed = if rejected {
        quorum["rejections"].as_u64().unwrap_or(1)
    } else {
        quorum["approvals"].as_u64().unwrap_or_default()
    };
    out.push(format!(
        "Vote recorded on bundle {id}; {} more needed",
        needed.saturating_sub(alike)
    ));
    let what = decision(seen.bundle, mine).join("; ");
    out.push(format!("  Your vote: {what}"));
    if !rejected {
        out.push("  Only identical answers count together, notes included".to_owned());
    }
}
