//! Noticing new requests (UI-20): notifications asked for only on a click,
//! one per bundle that arrives while the page is hidden; the waiting
//! count in the favicon; the connection's state in words.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10,
//! UI-22); see [`crate::web_inbox_support`].

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::browser::{browser, browser_with_options};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    ui_20_notify_me_asks_only_when_clicked,
    ui_20_notification_when_hidden_one_per_bundle,
    ui_20_favicon_count_1_to_9plus,
    ui_20_connection_words
);

/// UI-20: with the permission still to be asked, the page shows "Notify
/// me" and asks only when it is clicked.
fn ui_20_notify_me_asks_only_when_clicked(db: &TestDb) {
    let Some(browser) = browser() else { return };
    alice_asks(db, "ask-first", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    let permission = browser.js("return Notification.permission;", vec![]);
    assert_eq!(
        permission,
        json!("default"),
        "the page asked nothing by itself"
    );
    assert_eq!(browser.text("#notify"), "Notify me");
    browser.js(
        "window.__asked = 0;
         const ask = Notification.requestPermission.bind(Notification);
         Notification.requestPermission = () => { window.__asked += 1; return ask(); };",
        vec![],
    );
    browser.click("#notify");
    browser.wait_for("the permission asked once", "return window.__asked === 1;");
}

/// UI-20: once notifications are granted, each bundle that joins the list
/// while the page is hidden (another tab in front) raises one
/// notification — its first question's title, the task's title, tagged
/// with its id — and none while the page shows.
fn ui_20_notification_when_hidden_one_per_bundle(db: &TestDb) {
    let granted = json!({"prefs": {"profile.default_content_setting_values.notifications": 1}});
    let Some(browser) = browser_with_options(&[], granted) else {
        return;
    };
    let session = mirror(db, "notify", "alice");
    db.upsert_task(clarion::TaskUpsert::new("t-notify").title("Add login"))
        .unwrap();
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    assert_eq!(
        browser.js("return Notification.permission;", vec![]),
        json!("granted")
    );
    assert_eq!(browser.text("#notify"), "Notifications on");
    record_notifications(&browser);
    let shown = ask(db, &session, 1);
    wait_listed(&browser, "the bundle asked while the page shows", 1);
    let page = browser.hide_in_new_tab(&served.url("/icon.svg"));
    assert_eq!(
        browser.js("return document.visibilityState;", vec![]),
        json!("visible"),
        "the new tab is in front"
    );
    let hidden = ask(db, &session, 1);
    let notified = browser.wait_for(
        "one notification for the bundle asked while hidden",
        "const seen = JSON.parse(localStorage.getItem('notified') || '[]');
         return seen.length >= 1 ? seen : null;",
    );
    assert_eq!(notified.as_array().map(Vec::len), Some(1), "{notified}");
    // Two more while hidden. The page handles the stream in order, so by
    // the time the last one's notification is raised, a repeat for an
    // earlier bundle would have been raised too: no wait for an absence.
    let second = ask(db, &session, 1);
    let third = ask(db, &session, 1);
    let all = browser.wait_for(
        "a notification for the last one asked",
        &format!(
            "const seen = JSON.parse(localStorage.getItem('notified') || '[]');
             return seen.some(n => n.tag === {}) ? seen : null;",
            json!(third)
        ),
    );
    browser.back_to(page);
    let seen: Vec<Value> = serde_json::from_value(all).unwrap();
    assert_eq!(seen.len(), 3, "one per bundle: {seen:?}");
    assert_eq!(
        seen[0],
        json!({"title": "About question 1?", "body": "Task: Add login", "tag": hidden, "hidden": true})
    );
    assert_eq!(seen[1]["tag"], json!(second));
    assert_eq!(seen[2]["tag"], json!(third));
    assert!(
        seen.iter().all(|n| n["tag"] != json!(shown)),
        "none while shown"
    );
    wait_listed(&browser, "all four listed", 4);
    let after: Vec<Value> = serde_json::from_value(browser.js(
        "return JSON.parse(localStorage.getItem('notified'));",
        vec![],
    ))
    .unwrap();
    assert_eq!(after.len(), 3, "none once the page shows again: {after:?}");
}

/// UI-20: the waiting count shows in the favicon, 1 to 9 and then 9+,
/// from icons the router serves; none waiting shows the plain icon.
fn ui_20_favicon_count_1_to_9plus(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "icons", "alice");
    let first = ask(db, &session, 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    let icon = |expected: &str| {
        browser.wait_for(
            expected,
            &format!(
                "return document.querySelector('link[rel=icon]').getAttribute('href') === {};",
                json!(expected)
            ),
        );
        let href = expected.to_owned();
        let reply = send(client().get(served.url(&format!("/{href}"))));
        assert_eq!(reply.status, 200, "{href}");
        assert_eq!(reply.header("content-type"), Some("image/svg+xml"));
        reply.body
    };
    let one = icon("icons/count-1.svg");
    assert!(one.contains(">1</text>"), "{one}");
    let mut asked = vec![first];
    for _ in 1..9 {
        asked.push(ask(db, &session, 1));
    }
    assert!(icon("icons/count-9.svg").contains(">9</text>"));
    asked.push(ask(db, &session, 1));
    assert!(icon("icons/count-9plus.svg").contains(">9+</text>"));
    browser.screenshot(&format!("favicon-9plus-{}", backend(db)));
    for id in &asked {
        db.cancel_bundle(&clarion::Principal::System, id).unwrap();
    }
    icon("icon.svg");
    assert_eq!(
        browser.js("return document.title;", vec![]),
        json!("clarion inbox")
    );
}

/// UI-20: the connection's state in words: live, and once the server has
/// gone, not connected with the seconds to the next try.
fn ui_20_connection_words(db: &TestDb) {
    let Some(browser) = browser() else { return };
    alice_asks(db, "words", 1);
    let (mut served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    assert_eq!(
        browser.text("#live"),
        "Live: new requests appear as they arrive"
    );
    served.terminate(Duration::from_secs(30));
    let words = browser.wait_for(
        "not connected, with the time to the next try",
        "const text = document.getElementById('live').textContent;
         return /^Not connected: retrying in [0-9]+ s$/.test(text) ? text : null;",
    );
    browser.screenshot(&format!("not-connected-{}", backend(db)));
    let _ = words;
}
