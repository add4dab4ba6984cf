//! The one-bundle page of an answer link (LINK-2, LINK-3): at 360 px, a
//! link opens its bundle as its user ("Answering as …"), nothing of the
//! inbox, answers through the same confirmation as the inbox, and shows
//! the settled panel, also after a reload; from the keyboard alone; a used
//! link says so; a link that does not verify is the one plain page.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use clarion::{Principal, Timestamp, UserUpsert};
use serde_json::json;

use crate::support::browser::{browser, keys, Browser};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    link_2_a_link_answers_at_360_then_reloads_settled,
    link_3_a_link_answers_from_the_keyboard,
    link_3_a_used_link_says_so,
    link_3_the_page_polls_and_shows_a_decision_made_elsewhere
);

/// `clarion serve` runs on the real clock: the test's clock is set to it
/// before anything is asked or minted.
fn at_real_time(db: &TestDb) {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    db.clock
        .set(Timestamp::from_micros(since.as_micros() as i64));
}

/// A bundle of `count` questions in alice's `w-<name>` (bob a member),
/// and the link's URL for `user`.
fn linked(db: &TestDb, name: &str, count: usize, user: &str) -> (String, String) {
    at_real_time(db);
    let pending = alice_asks(db, name, count);
    db.set_members(&format!("w-{name}"), &["bob".to_owned()])
        .unwrap();
    let url = db.answer_link(&pending, user, None).unwrap().url;
    (pending, url)
}

/// What only the inbox shows is hidden; the answer view shows.
fn assert_one_bundle(browser: &Browser) {
    for hidden in ["#inbox", "#sign-in", "#close", "#sign-out", "#attempts"] {
        assert!(!browser.visible(hidden), "{hidden} shows on a link's page");
    }
    assert_eq!(
        browser.js(
            "return document.querySelectorAll('#bundles button.bundle').length;",
            vec![]
        ),
        json!(0)
    );
}

fn last_attempt(db: &TestDb, pending: &str) -> (String, String, String) {
    let attempts = db.attempts(&Principal::System, pending).unwrap();
    let last = attempts.last().expect("an attempt");
    (
        last.channel.clone(),
        last.outcome.clone(),
        last.user_id.clone(),
    )
}

/// LINK-2, LINK-3: at 360 px the link shows whose it is and its bundle;
/// sending with a question unanswered asks first (UI-13); the settled
/// panel shows, and again after a reload.
fn link_2_a_link_answers_at_360_then_reloads_settled(db: &TestDb) {
    let Some(browser) = browser() else { return };
    db.upsert_user(UserUpsert::new("alice").name("Alice"))
        .unwrap();
    let (pending, url) = linked(db, "lk360", 2, "alice");
    let (served, _tokens) = served(db);
    browser.set_window_size(360, 740);
    browser.goto(&served.url(&url));
    browser.wait_visible("#answer-form");
    record_errors(&browser);
    assert_eq!(browser.text("#who"), "Answering as Alice");
    assert_one_bundle(&browser);
    assert_eq!(
        browser.js(
            "return document.documentElement.scrollWidth <= 360;",
            vec![]
        ),
        json!(true),
        "the page scrolls sideways at 360 px"
    );
    browser.screenshot(&format!("link-answer-360-{}", backend(db)));

    // One question answered: the confirmation asks; keeping answering
    // sends nothing.
    browser.click(&option_box(1, 1));
    browser.click("#submit");
    browser.wait_for(
        "the confirmation",
        "return document.getElementById('confirm-empty').open;",
    );
    browser.screenshot(&format!("link-confirm-360-{}", backend(db)));
    browser.click("#confirm-keep");
    assert!(db
        .attempts(&Principal::System, &pending)
        .unwrap()
        .is_empty());
    browser.click("#submit");
    browser.wait_for(
        "the confirmation again",
        "return document.getElementById('confirm-empty').open;",
    );
    browser.click("#confirm-send");
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Answered");
    assert!(!browser.visible("#settled-close"));
    assert!(!browser.visible("#settled-next"));
    assert_eq!(
        last_attempt(db, &pending),
        ("link".into(), "won".into(), "alice".into())
    );
    assert_eq!(stored(db, &pending)["status"], "answered");

    browser.goto(&served.url(&url));
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Answered");
    assert!(!browser.visible("#answer-form"));
    assert_eq!(browser.text("#who"), "Answering as Alice");
    assert_one_bundle(&browser);
    browser.screenshot(&format!("link-settled-360-{}", backend(db)));
    assert_eq!(
        browser.js(
            "return document.documentElement.scrollWidth <= 360;",
            vec![]
        ),
        json!(true)
    );

    // A link that does not verify: the one plain page.
    browser.goto(&served.url(&format!("{url}x")));
    browser.wait_for(
        "the 404 page",
        "return document.body.innerText.includes('This link no longer works');",
    );
    browser.screenshot(&format!("link-gone-360-{}", backend(db)));
}

/// LINK-3, UI-8: keyboard only: a digit chooses, Escape leaves the page
/// as it is (there is no inbox to go back to), Ctrl+Enter sends.
fn link_3_a_link_answers_from_the_keyboard(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let (pending, url) = linked(db, "lkkeys", 1, "bob");
    let (served, _tokens) = served(db);
    browser.goto(&served.url(&url));
    browser.wait_visible("#answer-form");
    record_errors(&browser);
    assert_eq!(browser.text("#who"), "Answering as bob");
    browser.press("2");
    browser.press(&keys::ESCAPE.to_string());
    assert!(browser.visible("#answer-form"), "Escape keeps the page");
    assert_one_bundle(&browser);
    assert_eq!(
        browser.js(
            &format!(
                "return document.querySelector(\"{}\").checked;",
                option_box(1, 2)
            ),
            vec![]
        ),
        json!(true)
    );
    browser.chord(keys::CONTROL, keys::ENTER);
    browser.wait_visible("#settled");
    assert_eq!(
        last_attempt(db, &pending),
        ("link".into(), "won".into(), "bob".into())
    );
    let stored = stored(db, &pending);
    assert_eq!(
        stored["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    assert!(
        script_errors(&browser).is_empty(),
        "{:?}",
        script_errors(&browser)
    );
}

/// LINK-3: the link was used elsewhere (another tab): the page's send is
/// the 410, said plainly, and what was decided shows.
fn link_3_a_used_link_says_so(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let (pending, url) = linked(db, "lkused", 1, "bob");
    let (served, _tokens) = served(db);
    browser.goto(&served.url(&url));
    browser.wait_visible("#answer-form");
    let token = url.strip_prefix("/a/").unwrap();
    let used = send(
        client()
            .post(served.url("/api/v1/link/respond"))
            .header("authorization", format!("Link {token}"))
            .json(&json!({"rejected": true, "reject_reason": "not now"})),
    );
    assert_eq!(used.status, 200, "{}", used.body);
    browser.click(&option_box(1, 1));
    browser.click("#submit");
    browser.wait_visible("#settled");
    browser.wait_for(
        "the page to say the link was used, or the poll to show the outcome",
        "return document.getElementById('settled-heading').textContent !== '';",
    );
    let note = browser.text("#settled-note");
    assert!(
        note.contains("already used") || note.contains("settled while this page was open"),
        "{note}"
    );
    assert!(browser.text("#settled-heading").contains("ejected"));
    browser.screenshot(&format!("link-used-{}", backend(db)));
    assert_eq!(
        last_attempt(db, &pending).1,
        if note.contains("already used") {
            "link_used"
        } else {
            "won"
        }
    );
}

/// LINK-3: the open page reads its bundle every 5 s (no event stream):
/// a decision made elsewhere shows on its own, and the page sends nothing.
fn link_3_the_page_polls_and_shows_a_decision_made_elsewhere(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let (pending, url) = linked(db, "lkpoll", 1, "bob");
    let (served, tokens) = served(db);
    browser.goto(&served.url(&url));
    browser.wait_visible("#answer-form");
    record_requests(&browser);
    let answered = send(
        client()
            .post(served.url(&format!("/api/v1/clarification/{pending}/respond")))
            .bearer_auth(&tokens.alice)
            .json(&json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})),
    );
    assert_eq!(answered.status, 200, "{}", answered.body);
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Already answered");
    let sent: Vec<String> =
        serde_json::from_value(browser.js("return window.__sent;", vec![])).unwrap();
    assert!(!sent.is_empty(), "the page polled");
    assert!(
        sent.iter()
            .all(|request| request.starts_with("GET ") && request.ends_with("/api/v1/link/bundle")),
        "{sent:?}"
    );
    assert!(writes(&browser).is_empty());
    assert_eq!(
        last_attempt(db, &pending),
        ("http".into(), "won".into(), "alice".into())
    );
}
