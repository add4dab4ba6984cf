//! Reminders and escalation on the page (NUDGE-5): a reminded card says
//! how often, live; a reminder raises a notification while the page is
//! hidden (UI-20); an escalated person sees the bundle appear live once
//! its time has come and a sweep took the step.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve --no-sweep` as a real process, on both backends
//! (UI-10); see [`crate::web_inbox_support`]. Steps are taken only by the
//! test's `expire_due` on its test clock. The server reads the system's
//! clock, which decides what an escalated person sees (PPL-6): the
//! escalation test asks on a test clock set so that `from` lies a little
//! ahead of the system's clock.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clarion::{
    EscalateRequest, Principal, RemindersRequest, TaskUpsert, Timestamp, WorkspaceUpsert,
};
use serde_json::{json, Value};

use crate::support::browser::{browser, browser_with_options, Browser};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    nudge_5_a_reminded_card_says_so_live,
    nudge_5_a_reminder_notifies_while_the_page_is_hidden,
    nudge_5_an_escalated_bundle_appears_live_at_its_time,
    nudge_5_an_escalation_notifies_while_the_page_is_hidden
);

const MINUTE: i64 = 60_000_000;

/// `clarion serve` on `db` without its sweeper (the test takes the
/// steps), with the usual tokens.
fn served_unswept(db: &TestDb) -> (Served, Tokens) {
    let tokens = tokens(db);
    (serve(&db.url, &["--no-sweep"]), tokens)
}

/// Reminders every minute from a minute after the ask, three at most.
fn every_minute() -> RemindersRequest {
    RemindersRequest {
        first_after: Duration::from_secs(60),
        every: Some(Duration::from_secs(60)),
        max: Some(3),
    }
}

/// Moves the test clock `micros` forward and sweeps once: one step taken.
fn step(db: &TestDb, micros: i64) {
    db.clock.advance_micros(micros);
    assert_eq!(db.expire_due(None).unwrap().nudged, 1, "one step taken");
}

/// The words on the card of `pending_id` that say how often it was
/// reminded, `null` while they are hidden.
fn reminded_words(pending_id: &str) -> String {
    format!(
        "const chip = document.querySelector(\"#bundles button[data-id='{pending_id}'] .reminded\");
         return chip && !chip.hidden ? chip.textContent : null;"
    )
}

/// Waits until the card of `pending_id` says `words` of its reminders.
fn wait_reminded(browser: &Browser, pending_id: &str, words: &str) {
    browser.wait_for(
        &format!("{words}, live"),
        &format!(
            "const w = (() => {{ {} }})(); return w === {};",
            reminded_words(pending_id),
            json!(words)
        ),
    );
}

/// NUDGE-5: alice's bundle asked with reminders every minute. Her card
/// says nothing of reminders at first; after each sweep past a reminder's
/// time it says "reminded once", then "reminded twice", live (the page
/// is never reloaded), in words that fit at 360 px.
fn nudge_5_a_reminded_card_says_so_live(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let mut request = ask_request(&mirror(db, "remind", "alice"), 1);
    request.reminders = Some(every_minute());
    let pending = db.ask(&request).unwrap().pending_id;
    let (served, tokens) = served_unswept(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the bundle listed", 1);
    assert_eq!(browser.js(&reminded_words(&pending), vec![]), Value::Null);
    // A reload would lose this mark.
    browser.js("window.__kept = true;", vec![]);
    record_errors(&browser);

    step(db, MINUTE);
    wait_reminded(&browser, &pending, "reminded once");
    step(db, MINUTE);
    wait_reminded(&browser, &pending, "reminded twice");
    assert_eq!(
        browser.js("return window.__kept === true;", vec![]),
        json!(true)
    );
    assert_eq!(script_errors(&browser), Vec::<String>::new());
    // In words, inside the card's name (its button's text).
    let name = browser.text(&format!("#bundles button[data-id='{pending}']"));
    assert!(name.contains("reminded twice"), "{name}");
    screenshots(&browser, &format!("nudges-reminded-{}", backend(db)));
}

/// NUDGE-5, UI-20: with notifications on and the page hidden (another
/// tab in front), each reminder of a bundle alice may answer raises one
/// notification naming it ("Reminder: <its title>", the task's title,
/// each reminder its own tag, so the second alerts again).
fn nudge_5_a_reminder_notifies_while_the_page_is_hidden(db: &TestDb) {
    let granted = json!({"prefs": {"profile.default_content_setting_values.notifications": 1}});
    let Some(browser) = browser_with_options(&[], granted) else {
        return;
    };
    let mut request = ask_request(&mirror(db, "nudge-note", "alice"), 1);
    db.upsert_task(TaskUpsert::new("t-nudge-note").title("Add login"))
        .unwrap();
    request.reminders = Some(every_minute());
    let pending = db.ask(&request).unwrap().pending_id;
    let (served, tokens) = served_unswept(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the bundle listed", 1);
    assert_eq!(browser.text("#notify"), "Notifications on");
    record_notifications(&browser);
    let page = browser.hide_in_new_tab(&served.url("/icon.svg"));

    step(db, MINUTE);
    let first = browser.wait_for(
        "a notification for the first reminder",
        "const seen = JSON.parse(localStorage.getItem('notified') || '[]');
         return seen.length >= 1 ? seen : null;",
    );
    assert_eq!(
        first,
        json!([{"title": "Reminder: About question 1?", "body": "Task: Add login",
                "tag": format!("{pending} reminded 1"), "hidden": true}])
    );
    step(db, MINUTE);
    let both = browser.wait_for(
        "a notification for the second reminder",
        "const seen = JSON.parse(localStorage.getItem('notified') || '[]');
         return seen.length >= 2 ? seen : null;",
    );
    browser.back_to(page);
    let tags: Vec<&Value> = both.as_array().unwrap().iter().map(|n| &n["tag"]).collect();
    assert_eq!(
        tags,
        [
            &json!(format!("{pending} reminded 1")),
            &json!(format!("{pending} reminded 2"))
        ],
        "one per reminder"
    );
    assert_eq!(both[1]["title"], json!("Reminder: About question 1?"));
}

/// The system's clock now, as a timestamp.
fn system_now() -> Timestamp {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros();
    Timestamp::from_micros(i64::try_from(micros).unwrap())
}

/// How far ahead of the server's clock an escalation's time lies when
/// asked: long enough for a page to sign in and list before it.
const AHEAD: i64 = 20_000_000;

/// Alice's bundle "Ship on Friday", escalated to gina a minute after it
/// was asked, asked on a test clock set so that the escalation's time is
/// [`AHEAD`] of the server's clock; and gina's own bundle, so her list
/// shows it has loaded. Returns (gina's, alice's, the escalation's time).
fn escalated_to_gina(db: &TestDb, name: &str) -> (String, String, i64) {
    let hers = ask(db, &mirror(db, &format!("{name}-gina"), "gina"), 1);
    let workspace = format!("w-{name}");
    db.upsert_workspace(WorkspaceUpsert::new(&workspace).owner("alice"))
        .unwrap();
    let session = session_in(db, name, &workspace, Some(true));
    let start = system_now().as_micros() - MINUTE + AHEAD;
    // The test clock only moves forward: EPOCH is before the system's now.
    db.clock.set(Timestamp::from_micros(start));
    let mut request = ask_request(&session, 1);
    request.questions[0].title = "Ship on Friday".into();
    request.escalate = Some(EscalateRequest {
        after: Duration::from_secs(60),
        to: vec!["gina".into()],
    });
    let pending = db.ask(&request).unwrap().pending_id;
    (hers, pending, start + MINUTE)
}

/// Gina signed in on `served`; her page lists only her own bundle, read
/// before the escalation's time `from`.
fn gina_reads_before(db: &TestDb, browser: &Browser, served: &Served, hers: &str, from: i64) {
    let gina = db
        .add_token(&Principal::user("gina"), "test")
        .unwrap()
        .token;
    sign_in(browser, &served.base, &gina);
    wait_listed(browser, "gina's own bundle listed", 1);
    assert_eq!(listed(browser), vec![hers.to_owned()]);
    assert!(
        system_now().as_micros() < from,
        "the page was read before the escalation's time (a slow machine: raise AHEAD)"
    );
}

/// Once the server's clock has passed `from`, a sweep on the test clock
/// (set to the system's) takes the escalation.
fn escalate_after(db: &TestDb, from: i64) {
    eventually(
        Duration::from_secs(60),
        "the escalation's time passed",
        || system_now().as_micros() >= from,
    );
    db.clock.set(system_now());
    assert_eq!(db.expire_due(None).unwrap().nudged, 1, "the escalation");
}

/// NUDGE-3, NUDGE-5, PPL-6: alice's bundle is escalated to gina a minute
/// after it was asked. Gina's page lists only her own bundle; once the
/// server's clock has passed the escalation time and a sweep took the
/// step (`bundle.escalated`), alice's bundle appears on her page live,
/// said as escalated to her, and the waiting count counts it.
fn nudge_5_an_escalated_bundle_appears_live_at_its_time(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let (hers, pending, from) = escalated_to_gina(db, "escalate");
    let (served, _) = served_unswept(db);
    gina_reads_before(db, &browser, &served, &hers, from);
    record_announcements(&browser);
    browser.js("window.__kept = true;", vec![]);

    escalate_after(db, from);
    wait_listed(&browser, "alice's bundle, live", 2);
    let mut shown = listed(&browser);
    shown.sort();
    let mut both = vec![hers, pending.clone()];
    both.sort();
    assert_eq!(shown, both);
    browser.wait_for(
        "said as escalated to her",
        "return window.__said.includes('Escalated to you: Ship on Friday');",
    );
    browser.wait_for(
        "the waiting count counts it",
        "return document.getElementById('count').textContent === '(2)';",
    );
    assert_eq!(
        browser.js("return window.__kept === true;", vec![]),
        json!(true)
    );
    screenshots(&browser, &format!("nudges-escalated-{}", backend(db)));
}

/// NUDGE-5, UI-20: with notifications on and her page hidden, the
/// escalation of alice's bundle to gina raises one notification for gina,
/// "Escalated to you: Ship on Friday", tagged as the escalation.
fn nudge_5_an_escalation_notifies_while_the_page_is_hidden(db: &TestDb) {
    let granted = json!({"prefs": {"profile.default_content_setting_values.notifications": 1}});
    let Some(browser) = browser_with_options(&[], granted) else {
        return;
    };
    let (hers, pending, from) = escalated_to_gina(db, "escalate-note");
    let (served, _) = served_unswept(db);
    gina_reads_before(db, &browser, &served, &hers, from);
    record_notifications(&browser);
    let page = browser.hide_in_new_tab(&served.url("/icon.svg"));

    escalate_after(db, from);
    let seen = browser.wait_for(
        "a notification for the escalation",
        "const seen = JSON.parse(localStorage.getItem('notified') || '[]');
         return seen.some(n => n.tag.endsWith(' escalated')) ? seen : null;",
    );
    browser.back_to(page);
    let escalations: Vec<&Value> = seen
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| {
            n["tag"]
                .as_str()
                .is_some_and(|tag| tag.ends_with(" escalated"))
        })
        .collect();
    assert_eq!(
        escalations,
        [
            &json!({"title": "Escalated to you: Ship on Friday", "body": "Task: t-escalate-note",
                 "tag": format!("{pending} escalated"), "hidden": true})
        ]
    );
}
