//! MAIL-1: one email to one person about one event: a plain-text part
//! and a small HTML part naming the workspace and the task, the questions
//! with their options, the deadline and its default, and that person's
//! own answer link. Every string an agent or a host wrote is escaped in
//! the HTML, which holds no script, no remote resource and no link but
//! the answer link; headers are built by lettre's typed headers (encoded;
//! what goes in them is stripped of control characters first).

use lettre::message::{Mailbox, MultiPart};
use lettre::{Address, Message};

use crate::domain::views::{Answer, BundleDetail, QuestionView};
use crate::rules::vocabulary::{EventType, ExpiryAction};

/// Why a mail was sent: the event it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Occasion {
    Asked,
    Reminded,
    Escalated,
}

impl Occasion {
    /// MAIL-1: the events a mail follows.
    pub(crate) fn of(event_type: &str) -> Option<Occasion> {
        match EventType::from_word(event_type)? {
            EventType::Asked => Some(Occasion::Asked),
            EventType::Reminded => Some(Occasion::Reminded),
            EventType::Escalated => Some(Occasion::Escalated),
            _ => None,
        }
    }

    fn subject_prefix(self) -> &'static str {
        match self {
            Occasion::Asked => "Question",
            Occasion::Reminded => "Reminder",
            Occasion::Escalated => "Escalated to you",
        }
    }

    fn intro(self) -> &'static str {
        match self {
            Occasion::Asked => "An agent is asking for your answer.",
            Occasion::Reminded => "A reminder: this still waits for an answer.",
            Occasion::Escalated => "This was escalated to you: it waits for an answer.",
        }
    }
}

/// The longest subject line's title, in characters.
const SUBJECT_TITLE: usize = 120;

/// One mail's content, before it is addressed.
pub(crate) struct Content<'a> {
    pub(crate) occasion: Occasion,
    pub(crate) detail: &'a BundleDetail,
    /// The recipient's name (may be empty).
    pub(crate) name: &'a str,
    /// Their answer link.
    pub(crate) link: &'a str,
}

/// Why a message could not be built: the address is no address (a
/// permanent failure of that one message).
#[derive(Debug)]
pub(crate) struct Unaddressable(pub(crate) String);

/// MAIL-1: the message, addressed from `from` to `email`, with
/// `message_id`.
pub(crate) fn compose(
    content: &Content<'_>,
    from: &Mailbox,
    email: &str,
    message_id: &str,
) -> Result<Message, Unaddressable> {
    let address: Address = email
        .trim()
        .parse()
        .map_err(|error| Unaddressable(format!("not an email address: {error}")))?;
    let name = one_line(content.name, 200);
    let to = Mailbox::new((!name.is_empty()).then_some(name), address);
    Message::builder()
        .from(from.clone())
        .to(to)
        .subject(subject(content))
        .message_id(Some(message_id.to_owned()))
        .multipart(MultiPart::alternative_plain_html(
            plain_text(content),
            html(content),
        ))
        .map_err(|error| Unaddressable(format!("the message could not be built: {error}")))
}

/// MAIL-1: "Question: …", "Reminder: …" or "Escalated to you: …" and the
/// first question's title, on one line.
pub(crate) fn subject(content: &Content<'_>) -> String {
    let title = content
        .detail
        .bundle
        .questions
        .first()
        .map(|question| one_line(&question.title, SUBJECT_TITLE))
        .unwrap_or_default();
    format!("{}: {title}", content.occasion.subject_prefix())
}

/// Control characters (CR and LF among them) become spaces, runs of
/// whitespace one space, and the text is cut at `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The workspace's and the task's names, or their ids without one.
fn place(detail: &BundleDetail) -> (String, String) {
    let bundle = &detail.bundle;
    let or = |name: &str, id: &str| {
        if !name.is_empty() {
            name.to_owned()
        } else if !id.is_empty() {
            id.to_owned()
        } else {
            "(none)".to_owned()
        }
    };
    (
        or(&bundle.workspace_name, &bundle.workspace_id),
        or(&bundle.task_title, &bundle.task_id),
    )
}

/// EXP-5: what happens at the deadline, in words (`None`: no deadline).
fn deadline(detail: &BundleDetail) -> Option<(String, String)> {
    let at = detail.bundle.expires_at?;
    let default = match detail.bundle.on_expire {
        ExpiryAction::None | ExpiryAction::Expire => "it expires unanswered".to_owned(),
        ExpiryAction::Reject => match &detail.default_response {
            Some(default) if !default.reject_reason.is_empty() => {
                format!("it is rejected ({})", default.reject_reason)
            }
            _ => "it is rejected".to_owned(),
        },
        ExpiryAction::Answer => match &detail.default_response {
            Some(default) => format!(
                "it is answered with the default: {}",
                default
                    .answers
                    .iter()
                    .map(|answer| default_answer(&detail.bundle.questions, answer))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            None => "it is answered with the default".to_owned(),
        },
    };
    Some((at.to_rfc3339(), default))
}

/// One default answer: the question's title and the labels chosen.
fn default_answer(questions: &[QuestionView], answer: &Answer) -> String {
    let question = questions
        .iter()
        .find(|question| question.question_id == answer.question_id);
    let title = question.map_or(answer.question_id.as_str(), |q| q.title.as_str());
    let mut chosen: Vec<String> = answer
        .selected_options
        .iter()
        .map(|id| {
            question
                .and_then(|q| q.options.iter().find(|option| &option.option_id == id))
                .map_or_else(|| id.clone(), |option| option.label.clone())
        })
        .collect();
    if !answer.custom_text.is_empty() {
        chosen.push(format!("\"{}\"", answer.custom_text));
    }
    format!("{title}: {}", chosen.join(", "))
}

fn choose(question: &QuestionView) -> &'static str {
    if question.multi_select {
        "Choose any of:"
    } else {
        "Choose one:"
    }
}

/// MAIL-1: the plain-text part.
pub(crate) fn plain_text(content: &Content<'_>) -> String {
    let detail = content.detail;
    let (workspace, task) = place(detail);
    let mut text = String::new();
    if !content.name.is_empty() {
        text.push_str(&format!("Hello {},\n\n", one_line(content.name, 200)));
    }
    text.push_str(content.occasion.intro());
    text.push_str(&format!("\n\nWorkspace: {workspace}\nTask: {task}\n"));
    for (index, question) in detail.bundle.questions.iter().enumerate() {
        text.push_str(&format!("\n{}. {}\n", index + 1, question.title));
        if !question.prompt.is_empty() {
            text.push_str(&format!("{}\n", question.prompt));
        }
        if !question.options.is_empty() {
            text.push_str(&format!("{}\n", choose(question)));
            for option in &question.options {
                if option.description.is_empty() {
                    text.push_str(&format!("  - {}\n", option.label));
                } else {
                    text.push_str(&format!("  - {}: {}\n", option.label, option.description));
                }
            }
        }
    }
    match deadline(detail) {
        Some((at, default)) => text.push_str(&format!(
            "\nDeadline: {at}. Without an answer by then, {default}.\n"
        )),
        None => text.push_str("\nNo deadline.\n"),
    }
    text.push_str(&format!(
        "\nAnswer here (this link is yours alone; do not forward it):\n{}\n",
        content.link
    ));
    text
}

/// MAIL-1: the HTML part: every string escaped, no script, no remote
/// resource, no link but the answer link.
pub(crate) fn html(content: &Content<'_>) -> String {
    let detail = content.detail;
    let (workspace, task) = place(detail);
    let mut html =
        String::from("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>\n");
    if !content.name.is_empty() {
        html.push_str(&format!(
            "<p>Hello {},</p>\n",
            escape(&one_line(content.name, 200))
        ));
    }
    html.push_str(&format!("<p>{}</p>\n", escape(content.occasion.intro())));
    html.push_str(&format!(
        "<p>Workspace: <b>{}</b><br>Task: <b>{}</b></p>\n<ol>\n",
        escape(&workspace),
        escape(&task)
    ));
    for question in &detail.bundle.questions {
        html.push_str(&format!("<li><p><b>{}</b></p>\n", escape(&question.title)));
        if !question.prompt.is_empty() {
            html.push_str(&format!("<p>{}</p>\n", escape(&question.prompt)));
        }
        if !question.options.is_empty() {
            html.push_str(&format!("<p>{}</p>\n<ul>\n", choose(question)));
            for option in &question.options {
                html.push_str(&format!("<li>{}", escape(&option.label)));
                if !option.description.is_empty() {
                    html.push_str(&format!(": {}", escape(&option.description)));
                }
                html.push_str("</li>\n");
            }
            html.push_str("</ul>\n");
        }
        html.push_str("</li>\n");
    }
    html.push_str("</ol>\n");
    match deadline(detail) {
        Some((at, default)) => html.push_str(&format!(
            "<p>Deadline: {}. Without an answer by then, {}.</p>\n",
            escape(&at),
            escape(&default)
        )),
        None => html.push_str("<p>No deadline.</p>\n"),
    }
    html.push_str(&format!(
        "<p><a href=\"{}\">Answer</a> (this link is yours alone; do not forward it)</p>\n</body></html>\n",
        escape(content.link)
    ));
    html
}

/// HTML's five special characters, escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_drops_line_breaks_and_cuts() {
        assert_eq!(one_line("a\r\nBcc: x@y\n b", 100), "a Bcc: x@y b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<script>\"'&"), "&lt;script&gt;&quot;&#39;&amp;");
    }
}
