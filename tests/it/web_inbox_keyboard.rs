//! The keyboard (UI-8): moving, opening, toggling options, changing
//! question, help, Escape and Ctrl+Enter; and a storm of keys that breaks
//! nothing and sends nothing.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use std::time::Duration;

use serde_json::json;

use crate::support::browser::{browser, keys, Browser};
use crate::support::*;
use crate::web_inbox_support::*;

/// Presses Escape until the inbox shows with nothing over it (a space in
/// a storm of keys may have opened a bundle a moment later).
fn back_to_the_inbox(browser: &Browser) {
    let showing =
        "return !document.getElementById('inbox').hidden && !document.getElementById('help').open;";
    for _ in 0..50 {
        if browser.js(showing, vec![]) == json!(true) {
            return;
        }
        browser.press(&keys::ESCAPE.to_string());
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "Escape did not bring the inbox back: {}",
        browser.text("body")
    );
}

dual_backend!(ui_8_keyboard, ui_8_a_storm_of_keys_breaks_nothing);

/// UI-8: j/k/arrows move in the list, Enter opens, 1-9 toggle the
/// focused question's options, arrows move between questions, `?`
/// lists the shortcuts, Escape only closes (the bundle stays pending,
/// nothing is sent), and Ctrl+Enter submits from a text field.
fn ui_8_keyboard(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let first = alice_asks(db, "keys-1", 1);
    let second = alice_asks(db, "keys-2", 2);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "both bundles", 2);
    record_requests(&browser);

    // Inside a text field the shortcuts are only text.
    browser.type_into("#workspace", "j1k?");
    assert_eq!(
        browser.js("return document.getElementById('workspace').value;", vec![]),
        json!("j1k?")
    );
    assert!(!browser.visible("#answer"));
    assert_eq!(
        browser.js("return document.getElementById('help').open;", vec![]),
        json!(false)
    );
    browser.js("document.getElementById('workspace').value = ''; document.getElementById('workspace').blur();", vec![]);
    // Enter on a control is that control's: here "?" opens the list of
    // shortcuts and no bundle opens.
    browser.js("document.getElementById('help-open').focus();", vec![]);
    browser.press(&keys::ENTER.to_string());
    browser.wait_for(
        "the shortcuts",
        "return document.getElementById('help').open;",
    );
    assert!(!browser.visible("#answer"));
    browser.press(&keys::ESCAPE.to_string());
    browser.wait_for(
        "the shortcuts to close",
        "return !document.getElementById('help').open;",
    );

    browser.press("j");
    browser.press(&keys::ARROW_DOWN.to_string());
    browser.press("k");
    browser.press(&keys::ARROW_UP.to_string());
    browser.press("j");
    let focused = browser.js("return document.activeElement.dataset.id;", vec![]);
    assert_eq!(
        focused,
        json!(second),
        "j, ↓, k, ↑ (stays), j land on the second"
    );
    browser.press(&keys::ENTER.to_string());
    browser.wait_visible("#answer-form");

    browser.press("12");
    browser.press(&keys::ARROW_DOWN.to_string());
    browser.press("2");
    let checked = browser.js(
        "return Array.from(document.querySelectorAll('#questions input[type=checkbox]')).map(b => b.checked);",
        vec![],
    );
    assert_eq!(checked, json!([true, true, false, true]));

    browser.press("?");
    browser.wait_for(
        "the shortcuts",
        "return document.getElementById('help').open;",
    );
    assert!(browser.text("#help").contains("Escape") || browser.text("#help").contains("Esc"));
    browser.press(&keys::ESCAPE.to_string());
    browser.wait_for(
        "the shortcuts to close",
        "return !document.getElementById('help').open;",
    );
    assert!(
        browser.visible("#answer-form"),
        "Escape closed only the list of shortcuts"
    );

    browser.click("#text-1");
    browser.press("not sent j1k2?");
    let checked_after = browser.js(
        "return Array.from(document.querySelectorAll('#questions input[type=checkbox]')).map(b => b.checked);",
        vec![],
    );
    assert_eq!(
        checked_after, checked,
        "keys typed into a text field toggle nothing"
    );
    assert_eq!(
        browser.js("return document.getElementById('help').open;", vec![]),
        json!(false)
    );
    browser.press(&keys::ESCAPE.to_string());
    browser.wait_visible("#inbox");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        stored(db, &second)["status"],
        "pending",
        "Escape never submits"
    );
    assert_eq!(listed(&browser), vec![first.clone(), second.clone()]);

    browser.press(&keys::ENTER.to_string());
    browser.wait_visible("#answer-form");
    browser.click("#reject-open");
    browser.press(&keys::ESCAPE.to_string());
    browser.press(&keys::ESCAPE.to_string());
    browser.wait_visible("#inbox");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        stored(db, &second)["status"],
        "pending",
        "Escape never rejects"
    );

    browser.press(&keys::ENTER.to_string());
    browser.wait_visible("#answer-form");
    browser.click("#cancel-bundle");
    browser.press(&keys::ESCAPE.to_string());
    browser.wait_visible("#inbox");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        stored(db, &second)["status"],
        "pending",
        "Escape never cancels, armed or not"
    );
    assert_eq!(
        writes(&browser),
        Vec::<String>::new(),
        "Escape sent nothing at all"
    );

    browser.press(&keys::ENTER.to_string());
    browser.wait_visible("#answer-form");
    let kept = browser.js("return document.getElementById('text-1').value;", vec![]);
    assert_eq!(kept, json!("not sent j1k2?"), "the draft survives closing");
    browser.click("#text-1");
    browser.chord(keys::CONTROL, keys::ENTER);
    wait_listed(&browser, "the answered bundle to leave", 1);
    let stored = stored(db, &second);
    assert_eq!(stored["status"], "answered");
    assert_eq!(
        stored["response"]["answers"],
        json!([
            {"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt2"], "custom_text": ""},
            {"question_id": "q2", "selected_options": ["q2_opt2"], "custom_text": "not sent j1k2?"},
        ])
    );
    assert_eq!(
        writes(&browser).len(),
        1,
        "one submit: {:?}",
        writes(&browser)
    );
}

/// No keys crash the page (REL-3 for a browser): a storm of the
/// shortcuts and other keys in the list and in the answer view leaves
/// no script error, no server error, and the bundle pending (none of
/// these keys may send anything).
fn ui_8_a_storm_of_keys_breaks_nothing(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks(db, "storm", 3);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the bundle", 1);
    browser.js(
        "window.__errors = [];
             window.addEventListener('error', e => window.__errors.push(String(e.message)));
             window.addEventListener('unhandledrejection', e => window.__errors.push(String(e.reason)));",
        vec![],
    );
    let storm: String = [
        'j',
        'k',
        keys::ARROW_DOWN,
        keys::ARROW_UP,
        '1',
        '9',
        '0',
        'x',
        '?',
        keys::ESCAPE,
        ' ',
    ]
    .iter()
    .cycle()
    .take(43) // ending with Escape, after a space that opened a bundle
    .collect();
    browser.press(&storm);
    back_to_the_inbox(&browser);
    open(&browser, &pending);
    browser.press(&storm);
    back_to_the_inbox(&browser);
    let errors = browser.js("return window.__errors;", vec![]);
    assert_eq!(errors, json!([]), "no script error");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        stored(db, &pending)["status"],
        "pending",
        "no key sent anything"
    );
    let metrics = get_at(&served, &tokens.system, "/metrics");
    assert!(metrics.body.contains("status=\"200\""), "{}", metrics.body);
    assert!(
        !metrics.body.contains("status=\"5"),
        "no 5xx:\n{}",
        metrics.body
    );
}
