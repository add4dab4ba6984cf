//! MAIL-1, MAIL-1a, PPL-8: email, on both backends, against a real SMTP
//! server on loopback (aiosmtpd, `tests/mail/smtp_server.py`): one mail
//! per person at the ask, per reminder and at an escalation (the
//! escalated only), each with that person's working answer link; a
//! server down then up resends with the same `Message-ID`, also after a
//! restart; nothing for a bundle settled before the worker ran; a 5xx for
//! one address drops that one mail only; the HTML escapes what an agent
//! wrote; `mail_status`, `clarion mail status` and `/metrics` count.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use clarion::{
    Clarion, EscalateRequest, MailOptions, MailStatus, Principal, ResolveRequest, UserUpsert,
    WorkspaceUpsert,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::nudges::{ask_nudged, at, nudged, reminders};
use crate::support::outside::{kill_after, root};
use crate::support::python::SMTP_SERVER;
use crate::support::*;

const TEAM: &str = "w-mailed";
const PUBLIC_URL: &str = "https://inbox.example.com";
const SECOND: i64 = 1_000_000;
const MINUTE: i64 = 60 * SECOND;
/// How long a test waits for mail that should come.
const ARRIVES: Duration = Duration::from_secs(30);

dual_backend!(
    mail_1_one_mail_per_person_at_the_ask_with_a_working_link,
    mail_1_a_mail_per_reminder,
    mail_1_an_escalation_mails_only_the_escalated,
    mail_1_the_html_escapes_what_an_agent_wrote,
    mail_1_mail_needs_a_public_url,
    mail_1a_nothing_for_a_bundle_settled_before_the_worker_ran,
    mail_1a_a_refused_address_is_dropped_and_the_others_get_theirs,
    mail_1a_the_server_down_then_up_resends_with_the_same_message_id,
    mail_1a_status_on_the_command_line,
    mail_1a_counts_on_metrics,
    mail_1a_two_workers_never_send_one_mail_twice,
    mail_1a_prune_keeps_the_events_after_the_mail_cursor_within_the_give_up_time,
);

/// The interpreter with aiosmtpd; `None` (skip) outside CI.
fn smtp_python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    SMTP_SERVER.python(&PYTHON)
}

/// A running SMTP server and the directory it writes what it accepts to.
struct Smtp {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Smtp {
    fn start(python: &PathBuf) -> Smtp {
        Smtp::on_port(python, free_port())
    }

    fn on_port(python: &PathBuf, port: u16) -> Smtp {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(python)
            .arg(root().join("tests/mail/smtp_server.py"))
            .args(["--port", &port.to_string()])
            .arg("--out")
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the SMTP server");
        kill_after(child.id(), Duration::from_secs(300));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim_end(), format!("listening on {port}"));
        Smtp { child, dir, port }
    }

    fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message accepted so far, in arrival order.
    fn messages(&self) -> Vec<Value> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|path| serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
            .collect()
    }

    /// The messages once there are at least `count`.
    fn await_messages(&self, count: usize) -> Vec<Value> {
        let mut seen = Vec::new();
        eventually(ARRIVES, &format!("{count} mails"), || {
            seen = self.messages();
            seen.len() >= count
        });
        seen
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn options(url: &str) -> MailOptions {
    let mut options = MailOptions::new(url, "Clarion <inbox@example.com>");
    // Long enough for a loaded machine: a reply that comes later is a
    // transient failure, retried only when the test clock passes its
    // time.
    options.timeout = Duration::from_secs(5);
    options.first_retry = Duration::from_secs(1);
    options
}

/// A handle of `db`'s database, on its clock, sending mail through `url`.
fn mailing(db: &TestDb, url: &str) -> Clarion {
    db.builder()
        .public_url(PUBLIC_URL)
        .mail(options(url))
        .open()
        .expect("open with mail")
}

/// `w-mailed` owned by olga with bob and carol (no email) as members, a
/// running session there; erin is in the directory, not a member.
fn team(db: &TestDb) -> String {
    for (user, name, email) in [
        ("olga", "Olga Owner", "olga@example.com"),
        ("bob", "Bob Member", "bob@example.com"),
        ("erin", "Erin Escalated", "erin@example.com"),
    ] {
        db.upsert_user(UserUpsert::new(user).name(name).email(email))
            .unwrap();
    }
    db.upsert_user(UserUpsert::new("carol").name("Carol NoMail"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new(TEAM).owner("olga").name("Mailed Team"))
        .unwrap();
    db.set_members(TEAM, &["bob".to_owned(), "carol".to_owned()])
        .unwrap();
    session_in(db, "mailed", TEAM, Some(true))
}

fn status(db: &Clarion) -> MailStatus {
    db.mail_status().unwrap()
}

/// Waits until the worker counted `sent` mails and is caught up.
fn await_sent(db: &Clarion, sent: i64) -> MailStatus {
    let mut last = status(db);
    eventually(ARRIVES, &format!("{sent} mails counted sent"), || {
        last = status(db);
        last.sent >= sent && last.backlog == 0
    });
    last
}

fn header<'a>(message: &'a Value, name: &str) -> &'a str {
    message["headers"][name].as_str().unwrap_or_default()
}

fn recipient(message: &Value) -> String {
    message["rcpt_tos"][0].as_str().unwrap().to_owned()
}

fn recipients(messages: &[Value]) -> Vec<String> {
    let mut all: Vec<String> = messages.iter().map(recipient).collect();
    all.sort();
    all
}

/// The answer link's token in the plain-text part.
fn token(message: &Value) -> String {
    let text = message["text"].as_str().unwrap();
    let start = text
        .find(&format!("{PUBLIC_URL}/a/"))
        .unwrap_or_else(|| panic!("no link in {text}"))
        + PUBLIC_URL.len()
        + 3;
    text[start..].split_whitespace().next().unwrap().to_owned()
}

/// The position of the newest event of `event_type` about `pending_id`.
fn position_of(db: &TestDb, pending_id: &str, event_type: &str) -> String {
    crate::events::wait_until_readable(db);
    db.events_after(&Principal::System, "", Some(1000))
        .unwrap()
        .events
        .into_iter()
        .rev()
        .find(|event| event.pending_id == pending_id && event.event_type == event_type)
        .expect("the event")
        .position
}

/// MAIL-1: the Message-ID of the mail about the event at `position` to
/// `user_id`: a hash of both, no address in it.
fn expected_message_id(position: &str, user_id: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(b"clarion mail\0");
    digest.update(position.as_bytes());
    digest.update(b"\0");
    digest.update(user_id.as_bytes());
    let hex: String = digest.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("<{hex}@clarion>")
}

/// MAIL-1, PPL-8: at the ask, one mail to each person the bundle reaches
/// who has an email (carol has none), multipart/alternative, naming the
/// workspace, the task, the questions and options and the deadline; its
/// Message-ID is the hash of (position, user); the link in it answers.
fn mail_1_one_mail_per_person_at_the_ask_with_a_working_link(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    let mailer = mailing(db, &smtp.url());
    let pending_id = ask_nudged(db, &session, None, None, Some(3600));
    let messages = smtp.await_messages(2);
    await_sent(&mailer, 2);
    assert_eq!(
        recipients(&messages),
        ["bob@example.com", "olga@example.com"]
    );
    let position = position_of(db, &pending_id, "bundle.asked");
    for message in &messages {
        assert_eq!(message["content_type"], "multipart/alternative");
        assert_eq!(header(message, "subject"), "Question: About question 1?");
        assert!(header(message, "from").contains("inbox@example.com"));
        let user = recipient(message).split('@').next().unwrap().to_owned();
        assert_eq!(
            header(message, "message-id"),
            expected_message_id(&position, &user)
        );
        assert!(!header(message, "message-id").contains(&user));
        let text = message["text"].as_str().unwrap();
        for shown in ["Mailed Team", "question 1?", "Yes", "No", "Deadline: "] {
            assert!(text.contains(shown), "{shown:?} in {text}");
        }
        let html = message["html"].as_str().unwrap();
        assert!(html.contains("Mailed Team") && html.contains("question 1?"));
        assert_eq!(html.matches("<a ").count(), 1, "one link only: {html}");
        assert!(
            !html.contains("<script") && !html.contains("src="),
            "{html}"
        );
    }
    // Each person's own link: bob's answers as bob.
    let bob = messages
        .iter()
        .find(|message| recipient(message) == "bob@example.com")
        .unwrap();
    let rejected = ResolveRequest {
        answers: Vec::new(),
        rejected: true,
        reject_reason: "not now".into(),
    };
    let resolved = clarion::test_hooks::link_respond(db, &token(bob), &rejected)
        .unwrap()
        .expect("the mailed link verifies")
        .unwrap();
    assert!(resolved.claimed);
    let detail = db.get_bundle(&Principal::System, &pending_id).unwrap();
    assert_eq!(detail.status, clarion::BundleStatus::Rejected);
    let counted = status(&mailer);
    assert_eq!((counted.sent, counted.failed), (2, 0));
    assert!(counted.configured);
    mailer.close();
}

/// MAIL-1: each reminder mails everyone who may still act again.
fn mail_1_a_mail_per_reminder(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    let mailer = mailing(db, &smtp.url());
    ask_nudged(db, &session, Some(reminders(60, 120, 2)), None, None);
    smtp.await_messages(2);
    at(db, MINUTE);
    assert_eq!(nudged(db), 1);
    smtp.await_messages(4);
    at(db, 3 * MINUTE);
    assert_eq!(nudged(db), 1);
    let messages = smtp.await_messages(6);
    await_sent(&mailer, 6);
    let subjects: Vec<&str> = messages
        .iter()
        .map(|message| header(message, "subject"))
        .collect();
    assert_eq!(
        subjects
            .iter()
            .filter(|s| s.starts_with("Reminder: "))
            .count(),
        4,
        "{subjects:?}"
    );
    // A resend of one event carries one Message-ID per person: six
    // mails, six ids.
    let mut ids: Vec<&str> = messages
        .iter()
        .map(|message| header(message, "message-id"))
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6);
    mailer.close();
}

/// MAIL-1, NUDGE-3: the escalation mails its `to` only.
fn mail_1_an_escalation_mails_only_the_escalated(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    let mailer = mailing(db, &smtp.url());
    let escalate = EscalateRequest {
        after: Duration::from_secs(120),
        to: vec!["erin".to_owned()],
    };
    ask_nudged(db, &session, None, Some(escalate), None);
    let asked = smtp.await_messages(2);
    assert_eq!(recipients(&asked), ["bob@example.com", "olga@example.com"]);
    at(db, 2 * MINUTE);
    assert_eq!(nudged(db), 1);
    let messages = smtp.await_messages(3);
    await_sent(&mailer, 3);
    assert_eq!(messages.len(), 3);
    assert_eq!(recipient(&messages[2]), "erin@example.com");
    assert_eq!(
        header(&messages[2], "subject"),
        "Escalated to you: About question 1?"
    );
    mailer.close();
}

/// MAIL-1: an agent's `<script>` is text in the HTML part.
fn mail_1_the_html_escapes_what_an_agent_wrote(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    let mailer = mailing(db, &smtp.url());
    let mut request = ask_request(&session, 1);
    request.questions[0].title = "<script>alert(1)</script> & <img src=x>".into();
    request.questions[0].prompt = "\"quoted\" 'single'".into();
    db.ask(&request).unwrap();
    let messages = smtp.await_messages(2);
    for message in &messages {
        let html = message["html"].as_str().unwrap();
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&quot;quoted&quot; &#39;single&#39;"),
            "{html}"
        );
        assert!(
            !html.contains("<script") && !html.contains("<img"),
            "{html}"
        );
        assert_eq!(
            header(message, "subject"),
            "Question: <script>alert(1)</script> & <img src=x>"
        );
    }
    mailer.close();
}

/// MAIL-1: links need the public URL: mail without one fails the open.
fn mail_1_mail_needs_a_public_url(db: &TestDb) {
    let refused = db
        .builder()
        .mail(options("smtp://127.0.0.1:1"))
        .open()
        .unwrap_err();
    assert!(refused.to_string().contains("public URL"), "{refused}");
    let refused = db
        .builder()
        .public_url(PUBLIC_URL)
        .mail(options("http://127.0.0.1:1"))
        .open()
        .unwrap_err();
    assert!(refused.to_string().contains("smtp://"), "{refused}");
}

/// MAIL-1a: a bundle settled before the worker reached its ask mails
/// nobody; the next one is mailed as usual.
fn mail_1a_nothing_for_a_bundle_settled_before_the_worker_ran(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    // Configured once (the cursor at the head), then not running.
    mailing(db, &smtp.url()).close();
    // A closed worker's lease lapses, as a crashed one's (by the clock).
    at(db, 20 * SECOND);
    let settled = ask_nudged(db, &session, None, None, None);
    db.cancel_bundle(&Principal::System, &settled).unwrap();
    let mailer = mailing(db, &smtp.url());
    let asked = ask_nudged(db, &session, None, None, None);
    let messages = smtp.await_messages(2);
    await_sent(&mailer, 2);
    assert_eq!(messages.len(), 2);
    let position = position_of(db, &asked, "bundle.asked");
    for message in &messages {
        let user = recipient(message).split('@').next().unwrap().to_owned();
        assert_eq!(
            header(message, "message-id"),
            expected_message_id(&position, &user)
        );
    }
    mailer.close();
}

/// MAIL-1a: a 550 for bob drops his mail (counted, the error kept); olga
/// gets hers, and mail goes on.
fn mail_1a_a_refused_address_is_dropped_and_the_others_get_theirs(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    db.upsert_user(UserUpsert::new("bob").email("refuse-bob@example.com"))
        .unwrap();
    let mailer = mailing(db, &smtp.url());
    ask_nudged(db, &session, None, None, None);
    ask_nudged(db, &session, None, None, None);
    let mut last = status(&mailer);
    eventually(ARRIVES, "two sent, two dropped", || {
        last = status(&mailer);
        last.sent == 2 && last.failed == 2 && last.backlog == 0
    });
    assert!(last.last_error.contains("550"), "{last:?}");
    let messages = smtp.messages();
    assert_eq!(
        recipients(&messages),
        ["olga@example.com", "olga@example.com"]
    );
    mailer.close();
}

/// MAIL-1a: with the server down the mail is retried with HOOK-2's
/// delays, across a restart; once the server is up it arrives once,
/// with the Message-ID of (position, user).
fn mail_1a_the_server_down_then_up_resends_with_the_same_message_id(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let port = free_port();
    let url = format!("smtp://127.0.0.1:{port}");
    let session = team(db);
    db.upsert_user(UserUpsert::new("bob").email("refuse-bob@example.com"))
        .unwrap();
    let first = mailing(db, &url);
    let pending_id = ask_nudged(db, &session, None, None, None);
    let mut last = status(&first);
    eventually(ARRIVES, "a failure to connect, retried", || {
        last = status(&first);
        !last.last_error.is_empty() && last.next_attempt_at.is_some()
    });
    assert_eq!((last.sent, last.failed), (0, 0), "{last:?}");
    first.close();
    let smtp = Smtp::on_port(&python, port);
    let second = mailing(db, &url);
    // The retry's time comes (by the test clock), and the lease of the
    // closed worker has lapsed.
    at(db, 20 * SECOND);
    let messages = smtp.await_messages(1);
    let counted = await_sent(&second, 1);
    assert_eq!(recipient(&messages[0]), "olga@example.com");
    let position = position_of(db, &pending_id, "bundle.asked");
    assert_eq!(
        header(&messages[0], "message-id"),
        expected_message_id(&position, "olga")
    );
    assert_eq!((counted.sent, counted.failed), (1, 1), "{counted:?}");
    second.close();
}

/// MAIL-1a: `clarion mail status` is `mail_status`; `--smtp` without
/// `--public-url` is a usage error.
fn mail_1a_status_on_the_command_line(db: &TestDb) {
    let output = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["mail", "status", "--database-url", &db.url])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let reply: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(reply["body"]["mail"]["configured"], false, "{reply}");
    assert_eq!(reply["body"]["mail"]["sent"], 0, "{reply}");
    let output = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args([
            "serve",
            "--database-url",
            &db.url,
            "--open-as",
            "user:olga",
            "--listen",
            "127.0.0.1:0",
            "--smtp",
            "smtp://127.0.0.1:1",
            "--mail-from",
            "inbox@example.com",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--public-url"));
}

/// MAIL-1a, HTTP-7: `/metrics` carries the sent and failed counts.
fn mail_1a_counts_on_metrics(db: &TestDb) {
    use crate::support::server::{get, start, tokens};
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    db.upsert_user(UserUpsert::new("bob").email("refuse-bob@example.com"))
        .unwrap();
    let mailer = mailing(db, &smtp.url());
    ask_nudged(db, &session, None, None, None);
    eventually(ARRIVES, "one sent, one dropped", || {
        let last = status(&mailer);
        last.sent == 1 && last.failed == 1 && last.backlog == 0
    });
    let server = start(db);
    let t = tokens(db);
    let metrics = get(&server, &t.system, "/metrics");
    assert_eq!(metrics.status, 200);
    let text = metrics.text();
    for line in [
        "clarion_mail_sent_total 1",
        "clarion_mail_failed_total 1",
        "clarion_mail_backlog 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    mailer.close();
}

/// MAIL-1a, REL-8: prune keeps the events after the mail cursor while
/// mail ran within its give-up time (3 days), and no longer after.
fn mail_1a_prune_keeps_the_events_after_the_mail_cursor_within_the_give_up_time(db: &TestDb) {
    let session = team(db);
    let before = ask_nudged(db, &session, None, None, None);
    crate::events::wait_until_readable(db);
    // Configured (its cursor at the head, after `before`), then stopped.
    mailing(db, "smtp://127.0.0.1:1").close();
    let kept = [
        ask_nudged(db, &session, None, None, None),
        ask_nudged(db, &session, None, None, None),
    ];
    let asked = |db: &TestDb| -> Vec<String> {
        crate::events::wait_until_readable(db);
        db.events_after(&Principal::System, "", Some(1000))
            .unwrap()
            .events
            .into_iter()
            .filter(|event| event.event_type == "bundle.asked")
            .map(|event| event.pending_id)
            .collect()
    };
    at(db, 2 * 24 * 60 * MINUTE);
    db.prune(Duration::from_secs(24 * 3600)).unwrap();
    assert_eq!(asked(db), kept, "the event before the cursor went");
    assert!(!asked(db).contains(&before));
    assert_eq!(status(db).backlog, 2);
    // Mail has not run for longer than its give-up time: nothing is kept.
    at(db, 4 * 24 * 60 * MINUTE);
    db.prune(Duration::from_secs(24 * 3600)).unwrap();
    assert!(asked(db).is_empty());
}

/// MAIL-1a: two handles run a worker each on one database: under the
/// lease every mail is sent once, in order.
fn mail_1a_two_workers_never_send_one_mail_twice(db: &TestDb) {
    let Some(python) = smtp_python() else { return };
    let smtp = Smtp::start(&python);
    let session = team(db);
    let workers = [mailing(db, &smtp.url()), mailing(db, &smtp.url())];
    let asked: Vec<String> = (0..3)
        .map(|_| ask_nudged(db, &session, None, None, None))
        .collect();
    await_sent(&workers[0], 6);
    let messages = smtp.messages();
    assert_eq!(messages.len(), 6);
    let mut ids: Vec<&str> = messages
        .iter()
        .map(|message| header(message, "message-id"))
        .collect();
    // In the log's order: each ask's two mails before the next ask's.
    for (index, pending_id) in asked.iter().enumerate() {
        let position = position_of(db, pending_id, "bundle.asked");
        let mut expected = vec![
            expected_message_id(&position, "bob"),
            expected_message_id(&position, "olga"),
        ];
        expected.sort();
        let mut sent: Vec<String> = ids[2 * index..2 * index + 2]
            .iter()
            .map(|id| (*id).to_owned())
            .collect();
        sent.sort();
        assert_eq!(sent, expected, "ask {index}");
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6);
    for worker in workers {
        worker.close();
    }
}
