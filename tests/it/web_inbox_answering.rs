//! Answering (UI-4, UI-6, UI-7): what was clicked and typed is what is
//! stored; reject with a reason and cancel; a bundle settled elsewhere
//! shows the winner; the 2000 code point limit.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use clarion::{Clarion, Principal};
use serde_json::json;

use crate::support::browser::{browser, keys};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    ui_4_an_answer_stores_what_was_clicked,
    ui_4_reject_with_a_reason_and_cancel,
    ui_6_duplicate_submit_shows_the_winners_answers,
    ui_6_settled_or_closed_while_open,
    ui_7_the_2000_code_point_limit,
    ui_12_the_attempts_view_after_a_race
);

/// UI-12: after two callers raced for a bundle open in the page, its
/// attempts view lists both — who, through which door, won and lost —
/// and is still reachable from the settled view.
fn ui_12_the_attempts_view_after_a_race(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks(db, "ledger", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &pending);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let racers: Vec<_> = [tokens.alice.clone(), tokens.alice_bot.clone()]
        .into_iter()
        .map(|token| {
            let url = served.url(&format!("/api/v1/clarification/{pending}/respond"));
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let request = client()
                    .post(url)
                    .bearer_auth(token)
                    .header("content-type", "application/json")
                    .body(r#"{"answers":[{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"raced"}]}"#);
                barrier.wait();
                send(request).status
            })
        })
        .collect();
    for racer in racers {
        assert_eq!(racer.join().unwrap(), 200);
    }
    browser.wait_visible("#settled");
    browser.click("#attempts summary");
    browser.wait_for(
        "both attempts listed",
        "return document.querySelectorAll('#attempts-body tr').length === 2;",
    );
    let rows = browser.text("#attempts-body");
    assert!(
        rows.contains("alice") && rows.contains("agent bot of alice"),
        "{rows}"
    );
    assert_eq!(rows.matches("web or HTTP").count(), 2, "{rows}");
    assert!(
        rows.contains("won")
            && (rows.contains("lost: alice was first")
                || rows.contains("lost: agent bot of alice was first")),
        "{rows}"
    );
    assert!(browser.text("#attempts-note").contains("2 attempts"));
    browser.screenshot(&format!("attempts-{}", backend(db)));
    browser.set_window_size(360, 800);
    browser.js(
        "document.getElementById('attempts').scrollIntoView();",
        vec![],
    );
    browser.screenshot(&format!("attempts-narrow-{}", backend(db)));
}

/// UI-4: options are chosen by clicking (several in one question),
/// free text typed, and the stored resolution is exactly that.
fn ui_4_an_answer_stores_what_was_clicked(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks(db, "click", 2);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the bundle", 1);
    open(&browser, &pending);
    browser.screenshot(&format!("answer-desktop-{}", backend(db)));

    browser.click(&option_box(1, 1));
    browser.click(&option_box(1, 2));
    browser.click(&option_box(2, 2));
    browser.type_into("#text-1", "  after the release  ");
    browser.click("#submit");
    // UI-18, UI-21: this page's own win shows the settled panel as its
    // own, and says so.
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Answered");
    assert_eq!(browser.text("#settled-who"), "you");
    browser.wait_for(
        "the announcement",
        "return document.getElementById('announce').textContent === 'Your answer was sent.';",
    );
    wait_listed(&browser, "the answered bundle to leave", 0);

    let stored = stored(db, &pending);
    assert_eq!(stored["status"], "answered");
    assert_eq!(
        stored["response"]["answers"],
        json!([
            {"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt2"], "custom_text": ""},
            {"question_id": "q2", "selected_options": ["q2_opt2"], "custom_text": "after the release"},
        ])
    );
}

/// UI-4: reject with a reason, and cancel (humans, two clicks).
fn ui_4_reject_with_a_reason_and_cancel(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let rejected = alice_asks(db, "reject", 1);
    let cancelled = alice_asks(db, "cancel", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "both bundles", 2);

    open(&browser, &rejected);
    browser.click("#reject-open");
    browser.type_into("#reject-reason", "wrong repository");
    browser.click("#reject-send");
    wait_listed(&browser, "the rejected bundle to leave", 1);
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Rejected");
    browser.click("#settled-close");
    let stored_rejection = stored(db, &rejected);
    assert_eq!(stored_rejection["status"], "rejected");
    assert_eq!(
        stored_rejection["response"]["reject_reason"],
        "wrong repository"
    );

    open(&browser, &cancelled);
    browser.click("#cancel-bundle");
    assert_eq!(
        stored(db, &cancelled)["status"],
        "pending",
        "one click only arms it"
    );
    browser.click("#cancel-bundle");
    wait_listed(&browser, "the cancelled bundle to leave", 0);
    assert_eq!(stored(db, &cancelled)["status"], "cancelled");
}

/// UI-6 (seed W2, W3): the page is open with its own choice made;
/// another principal answers over REST; the page submits, gets
/// `200 claimed: false`, and shows the winner's answers, not its own.
fn ui_6_duplicate_submit_shows_the_winners_answers(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks(db, "race", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &pending);
    browser.click(&option_box(1, 2));
    browser.type_into("#text-0", "mine, the loser's");

    let url = served.url(&format!("/api/v1/clarification/{pending}/respond"));
    let (metrics, system) = (served.url("/metrics"), tokens.system.clone());
    let winner = std::thread::spawn(move || {
        page_waits(&metrics, &system);
        send(
            client()
                .post(url)
                .bearer_auth(tokens.alice_bot)
                .header("content-type", "application/json")
                .body(r#"{"answers":[{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"the bot's"}]}"#),
        )
    });
    click_once_settled(&browser, &pending, "#submit");
    let won = winner.join().unwrap();
    assert_eq!(won.json()["claimed"], true, "{}", won.text());

    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Already answered");
    let shown = browser.text("#settled-answers");
    assert!(
        shown.contains("Yes") && shown.contains("the bot's"),
        "the winner's answers: {shown:?}"
    );
    assert!(!shown.contains("loser"), "never this page's own: {shown:?}");
    assert!(browser.text("#settled-note").contains("not recorded"));
    assert!(
        !browser.visible("#answer-form"),
        "the answer view closed as settled"
    );
    browser.screenshot(&format!("settled-{}", backend(db)));
    assert_eq!(
        stored(db, &pending)["response"]["answers"][0]["custom_text"],
        "the bot's"
    );
}

/// UI-6 (seed W3a): a bundle settled elsewhere while open shows the
/// winner (from the event stream, with no submit at all); one that is
/// superseded shows it is no longer active; and a submit that gets a
/// `409` closes the view the same way.
fn ui_6_settled_or_closed_while_open(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let answered = alice_asks(db, "elsewhere", 1);
    let superseded_session = mirror(db, "turn", "alice");
    let superseded = ask(db, &superseded_session, 1);
    let conflicted_session = mirror(db, "conflict", "alice");
    let conflicted = ask(db, &conflicted_session, 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "three bundles", 3);

    open(&browser, &answered);
    browser.type_into("#text-0", "typed here");
    db.resolve_bundle(
        &Principal::user("alice"),
        &answered,
        &rejecting("someone else said no"),
    )
    .unwrap();
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Already rejected");
    assert!(browser
        .text("#settled-answers")
        .contains("someone else said no"));
    browser.click("#settled-close");

    open(&browser, &superseded);
    db.begin_turn(&superseded_session).unwrap();
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "No longer active");
    assert!(browser.text("#settled-note").contains("superseded"));
    browser.click("#settled-close");

    open(&browser, &conflicted);
    browser.click(&option_box(1, 1));
    let url = db.url.clone();
    let (metrics, system) = (served.url("/metrics"), tokens.system.clone());
    let turn = std::thread::spawn(move || {
        page_waits(&metrics, &system);
        Clarion::open(&url)
            .unwrap()
            .begin_turn(&conflicted_session)
            .unwrap();
    });
    click_once_settled(&browser, &conflicted, "#submit");
    turn.join().unwrap();
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "No longer active");
    assert!(
        browser.text("#settled-note").contains("nobody answered"),
        "{}",
        browser.text("#settled-note")
    );
    wait_listed(&browser, "all three gone", 0);
}

/// UI-7 (seed W4, W4a): 2000 × U+1F600 are accepted and submitted; the
/// 2001st is refused at the input with a message, nothing is cut; the
/// counter counts code points; no maxLength below 4000. The reject
/// reason has the same limit.
fn ui_7_the_2000_code_point_limit(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks(db, "limit", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &pending);

    // Typed as the browser inserts text (beforeinput, input), since
    // WebDriver's keys cannot carry characters outside the BMP.
    let insert = "const area = document.querySelector(arguments[0]); area.focus();
                      document.execCommand('insertText', false, arguments[1]);
                      return Array.from(area.value).length;";
    let emoji = "\u{1F600}";
    let after = browser.js(insert, vec![json!("#text-0"), json!(emoji.repeat(2000))]);
    assert_eq!(after, json!(2000), "2000 code points are accepted");
    assert_eq!(browser.text("#text-0-count"), "2000 / 2000");
    assert!(
        browser.text("#text-0-limit").contains("limit"),
        "a message at the boundary"
    );
    let after = browser.js(insert, vec![json!("#text-0"), json!(emoji)]);
    assert_eq!(after, json!(2000), "the 2001st is refused");
    assert!(
        browser.text("#text-0-limit").contains("not added"),
        "{}",
        browser.text("#text-0-limit")
    );
    let after = browser.js(insert, vec![json!("#text-0"), json!("a")]);
    assert_eq!(after, json!(2000), "so is a 2001st of one UTF-16 unit");
    browser.js(
        "document.getElementById('text-0-limit').textContent = '';",
        vec![],
    );
    browser.press(&keys::ENTER.to_string());
    let after = browser.js(
        "return Array.from(document.getElementById('text-0').value).length;",
        vec![],
    );
    assert_eq!(after, json!(2000), "and a typed line break");
    assert!(
        browser.text("#text-0-limit").contains("not added"),
        "{}",
        browser.text("#text-0-limit")
    );
    let max_length = browser.js(
        "return document.getElementById('text-0').maxLength;",
        vec![],
    );
    assert!(
        max_length == json!(-1) || max_length.as_i64().unwrap() >= 4000,
        "{max_length}"
    );
    browser.screenshot(&format!("limit-{}", backend(db)));

    browser.click("#reject-open");
    let reason = browser.js(
        insert,
        vec![json!("#reject-reason"), json!("x".repeat(2001))],
    );
    assert_eq!(
        reason,
        json!(0),
        "a paste past the limit is refused whole, not cut"
    );
    assert!(browser.text("#reject-reason-limit").contains("not added"));
    browser.click("#reject-open");

    browser.click("#submit");
    wait_listed(&browser, "the answered bundle to leave", 0);
    let stored = stored(db, &pending);
    assert_eq!(
        stored["response"]["answers"][0]["custom_text"],
        emoji.repeat(2000)
    );
}
