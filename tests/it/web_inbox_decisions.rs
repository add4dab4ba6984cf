//! Decisions the page can be trusted with (UI-13..17, UI-21): nothing is
//! sent by accident, one choice looks like one choice, a permission
//! request is a decision, each way out says what the agent is told, the
//! actions stay in reach, and the page says what happened as its own.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10,
//! UI-22); see [`crate::web_inbox_support`].

use clarion::{AskRequest, BundleKind, OptionSpec, QuestionSpec};
use serde_json::{json, Value};

use crate::support::browser::{browser, browser_with, browser_with_options, keys, Browser};
use crate::support::server::send;
use crate::support::*;
use crate::web_inbox_support::*;

fn choice(id: &str, label: &str, description: &str) -> OptionSpec {
    OptionSpec {
        option_id: Some(id.into()),
        label: label.into(),
        description: description.into(),
    }
}

/// A question `id` titled `title` with options `a` and `b` (and `c`).
fn question_of(id: &str, title: &str, multi_select: Option<bool>) -> QuestionSpec {
    QuestionSpec {
        question_id: Some(id.into()),
        title: title.into(),
        prompt: format!("{title}?"),
        multi_select,
        options: vec![
            choice("a", "Option A", "the first"),
            choice("b", "Option B", "the second"),
            choice("c", "Option C", "the third"),
        ],
    }
}

fn request(questions: Vec<QuestionSpec>, kind: BundleKind) -> AskRequest {
    AskRequest {
        questions,
        context: "Deciding how to ship".into(),
        kind,
        ..AskRequest::default()
    }
}

/// Whether the confirmation dialog is open.
fn confirming(browser: &Browser) -> bool {
    browser.js(
        "return document.getElementById('confirm-empty').open;",
        vec![],
    ) == json!(true)
}

/// The id of the focused element, or its question's index and tag.
fn focused(browser: &Browser) -> Value {
    browser.js(
        "const e = document.activeElement;
         const q = e && e.closest('fieldset.question');
         return [e ? (e.id || e.tagName.toLowerCase()) : '', q ? Number(q.dataset.index) : -1];",
        vec![],
    )
}

dual_backend!(
    ui_13_confirmation_from_button_and_ctrl_enter_and_escape_sends_nothing,
    ui_14_radios_store_one_and_clear_stores_none,
    ui_15_decision_buttons_nothing_sendable_until_decided,
    ui_16_texts_of_reject_deny_and_cancel,
    ui_17_sticky_bar_in_viewport_and_focus_clear_of_it,
    ui_17_digit_hints_hidden_at_390_with_touch,
    ui_21_own_outcomes_announced_as_own
);

/// UI-13: sending while a question has no choice and no text opens the
/// confirmation naming it (by title, else "Question n"), focus on "Keep
/// answering"; Escape, "Keep answering" and Ctrl+Enter inside it send
/// nothing (a request recorder sees no write) and focus the first such
/// question; only "Send anyway" sends, and the agent gets no answer there.
fn ui_13_confirmation_from_button_and_ctrl_enter_and_escape_sends_nothing(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let mut untitled = question_of("q3", "", Some(true));
    untitled.prompt = "Anything else?".into();
    let pending = alice_asks_this(
        db,
        "confirm",
        request(
            vec![
                question_of("q1", "Ship date", Some(true)),
                question_of("q2", "Rollback plan", Some(true)),
                untitled,
            ],
            BundleKind::Question,
        ),
    );
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &pending);
    record_requests(&browser);
    browser.click(&option_box(1, 2));

    browser.click("#submit");
    browser.wait_for(
        "the confirmation",
        "return document.getElementById('confirm-empty').open;",
    );
    let dialog = browser.text("#confirm-empty");
    assert!(
        dialog.contains("Rollback plan") && dialog.contains("Question 3"),
        "{dialog}"
    );
    assert!(
        !dialog.contains("Ship date"),
        "only the empty ones: {dialog}"
    );
    assert!(dialog.contains("no answer"), "{dialog}");
    assert_eq!(focused(&browser)[0], json!("confirm-keep"));
    browser.screenshot(&format!("confirm-desktop-{}", backend(db)));
    browser.press(&keys::ESCAPE.to_string());
    browser.wait_for(
        "the dialog to close",
        "return !document.getElementById('confirm-empty').open;",
    );
    assert!(
        browser.visible("#answer-form"),
        "Escape left the answer open"
    );
    assert_eq!(
        focused(&browser)[1],
        json!(1),
        "focus on the first empty question"
    );

    browser.chord(keys::CONTROL, keys::ENTER);
    browser.wait_for(
        "the confirmation",
        "return document.getElementById('confirm-empty').open;",
    );
    browser.chord(keys::CONTROL, keys::ENTER);
    browser.wait_for(
        "the dialog to close",
        "return !document.getElementById('confirm-empty').open;",
    );
    assert_eq!(focused(&browser)[1], json!(1));

    browser.click("#submit");
    browser.wait_for(
        "the confirmation",
        "return document.getElementById('confirm-empty').open;",
    );
    browser.click("#confirm-keep");
    assert!(!confirming(&browser));
    assert_eq!(focused(&browser)[1], json!(1));
    assert_eq!(writes(&browser), Vec::<String>::new(), "nothing was sent");
    assert_eq!(stored(db, &pending)["status"], "pending");

    browser.set_window_size(360, 740);
    browser.click("#submit");
    browser.wait_for(
        "the confirmation",
        "return document.getElementById('confirm-empty').open;",
    );
    browser.screenshot(&format!("confirm-360-{}", backend(db)));
    browser.click("#confirm-send");
    browser.wait_visible("#settled");
    assert_eq!(writes(&browser).len(), 1, "{:?}", writes(&browser));
    let answers = stored(db, &pending)["response"]["answers"].clone();
    assert_eq!(
        answers,
        json!([
            {"question_id": "q1", "selected_options": ["b"], "custom_text": ""},
            {"question_id": "q2", "selected_options": [], "custom_text": ""},
            {"question_id": "q3", "selected_options": [], "custom_text": ""},
        ])
    );
}

/// UI-14: a single-select question shows radio buttons (one group, named
/// by the question), a multi-select one checkboxes; choosing another
/// option replaces the choice, so one option is stored; "Clear choice"
/// (and the chosen option's digit) clears it, and none is stored.
fn ui_14_radios_store_one_and_clear_stores_none(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let ask = |name: &str| {
        alice_asks_this(
            db,
            name,
            request(
                vec![
                    question_of("one", "Pick one", Some(false)),
                    question_of("many", "Pick any", None),
                ],
                BundleKind::Question,
            ),
        )
    };
    let first = ask("radio-1");
    let second = ask("radio-2");
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &first);
    let kinds = browser.js(
        "return Array.from(document.querySelectorAll('#questions fieldset.question')).map(f =>
           Array.from(f.querySelectorAll('input.choice')).map(i => i.type + ':' + i.name));",
        vec![],
    );
    assert_eq!(
        kinds,
        json!([
            ["radio:choice-0", "radio:choice-0", "radio:choice-0"],
            ["checkbox:", "checkbox:", "checkbox:"]
        ])
    );
    assert_eq!(
        browser.js(
            "return document.querySelector('#questions fieldset.question .options').getAttribute('role');",
            vec![]
        ),
        json!("radiogroup")
    );
    browser.click(&option_box(1, 1));
    browser.click(&option_box(1, 3));
    browser.click(&option_box(2, 1));
    browser.click(&option_box(2, 3));
    let checked = browser.js(
        "return Array.from(document.querySelectorAll('#questions input.choice')).map(i => i.checked);",
        vec![],
    );
    assert_eq!(checked, json!([false, false, true, true, false, true]));
    browser.screenshot(&format!("radios-desktop-{}", backend(db)));
    browser.click("#submit");
    browser.wait_visible("#settled");
    assert_eq!(
        stored(db, &first)["response"]["answers"],
        json!([
            {"question_id": "one", "selected_options": ["c"], "custom_text": ""},
            {"question_id": "many", "selected_options": ["a", "c"], "custom_text": ""},
        ])
    );
    browser.click("#settled-close");

    open(&browser, &second);
    browser.click(&option_box(1, 2));
    browser.click("#questions fieldset.question:nth-of-type(1) .clear-choice");
    let one_checked = "return Array.from(document.querySelectorAll('#questions fieldset.question:nth-of-type(1) input.choice')).filter(i => i.checked).length;";
    assert_eq!(browser.js(one_checked, vec![]), json!(0));
    // The digit chooses, and on the chosen option clears (UI-8, UI-14).
    browser.js(
        "document.querySelector('#questions fieldset.question input.choice').focus();",
        vec![],
    );
    browser.press("2");
    assert_eq!(browser.js(one_checked, vec![]), json!(1));
    browser.press("3");
    assert_eq!(
        browser.js(one_checked, vec![]),
        json!(1),
        "still one: the third"
    );
    browser.press("3");
    assert_eq!(
        browser.js(one_checked, vec![]),
        json!(0),
        "its digit cleared it"
    );
    browser.type_into("#text-1", "none of these");
    browser.set_window_size(360, 740);
    browser.screenshot(&format!("radios-360-{}", backend(db)));
    browser.click("#submit");
    browser.wait_for(
        "the confirmation",
        "return document.getElementById('confirm-empty').open;",
    );
    browser.click("#confirm-send");
    browser.wait_visible("#settled");
    assert_eq!(
        stored(db, &second)["response"]["answers"],
        json!([
            {"question_id": "one", "selected_options": [], "custom_text": ""},
            {"question_id": "many", "selected_options": [], "custom_text": "none of these"},
        ])
    );
}

/// UI-15: a permission request is headed as one; its options are decision
/// buttons (`aria-pressed`, named by label and description), exclusive in
/// a single-select question; "Send decision" stays disabled until every
/// question is decided, Ctrl+Enter before that sends nothing and names
/// the undecided questions; the stored answer is what was pressed. A
/// question without options says it cannot be decided.
fn ui_15_decision_buttons_nothing_sendable_until_decided(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks_this(
        db,
        "permission",
        request(
            vec![
                question_of("go", "Run the migration", Some(false)),
                question_of("notify", "Who hears of it", Some(true)),
            ],
            BundleKind::Permission,
        ),
    );
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &pending);
    record_requests(&browser);
    assert!(
        browser
            .text("#answer-heading")
            .starts_with("Permission requested"),
        "{}",
        browser.text("#answer-heading")
    );
    assert_eq!(browser.text("#submit"), "Send decision");
    let decisions = browser.js(
        "return Array.from(document.querySelectorAll('#questions button.decision')).map(b =>
           [b.getAttribute('aria-pressed'), b.querySelector('.text').textContent]);",
        vec![],
    );
    assert_eq!(
        decisions[0],
        json!(["false", "Option Athe first"]),
        "named by label and description"
    );
    assert_eq!(decisions.as_array().unwrap().len(), 6);
    assert_eq!(
        browser.js("return document.getElementById('submit').disabled;", vec![]),
        json!(true)
    );
    browser.screenshot(&format!("decision-undecided-desktop-{}", backend(db)));

    let decide = |q: usize, n: usize| {
        browser.click(&format!(
            "#questions fieldset.question:nth-of-type({q}) button.decision:nth-of-type({n})"
        ))
    };
    decide(1, 1);
    decide(1, 2);
    let pressed = "return Array.from(document.querySelectorAll('#questions button.decision')).map(b => b.getAttribute('aria-pressed') === 'true');";
    assert_eq!(
        browser.js(pressed, vec![]),
        json!([false, true, false, false, false, false]),
        "exclusive where single-select"
    );
    assert_eq!(
        browser.js("return document.getElementById('submit').disabled;", vec![]),
        json!(true)
    );
    browser.click("#text-0");
    browser.chord(keys::CONTROL, keys::ENTER);
    browser.wait_for(
        "the undecided question named",
        "return document.getElementById('answer-error').textContent.includes('Who hears of it');",
    );
    assert!(!confirming(&browser), "no \"Send anyway\" for a decision");
    assert_eq!(writes(&browser), Vec::<String>::new());

    decide(2, 1);
    decide(2, 3);
    assert_eq!(
        browser.js(pressed, vec![]),
        json!([false, true, false, true, false, true]),
        "several where multi-select"
    );
    assert_eq!(
        browser.js("return document.getElementById('submit').disabled;", vec![]),
        json!(false)
    );
    assert_eq!(
        browser.text("#answer-error"),
        "",
        "\"decide … first\" goes once all is decided"
    );
    browser.screenshot(&format!("decision-decided-desktop-{}", backend(db)));
    browser.set_window_size(360, 740);
    browser.screenshot(&format!("decision-360-{}", backend(db)));
    browser.click("#submit");
    browser.wait_visible("#settled");
    assert_eq!(
        stored(db, &pending)["response"]["answers"],
        json!([
            {"question_id": "go", "selected_options": ["b"], "custom_text": ""},
            {"question_id": "notify", "selected_options": ["a", "c"], "custom_text": ""},
        ])
    );
    browser.set_window_size(1280, 900);

    // DM-1: a question without options cannot be decided.
    let broken = alice_asks_this(
        db,
        "broken",
        request(
            vec![question_of("x", "Broken", Some(false))],
            BundleKind::Permission,
        ),
    );
    crate::support::rows::set_payload(db, &broken, "x", r#"{"title":"Broken","prompt":"?"}"#);
    browser.click("#settled-close");
    open(&browser, &broken);
    assert!(browser.text("#questions").contains("cannot be decided"));
    assert_eq!(
        browser.js("return document.getElementById('submit').disabled;", vec![]),
        json!(true)
    );
    assert!(browser.visible("#reject-open") && browser.visible("#cancel-bundle"));
}

/// UI-16: each way out says what the agent is told, shown beside its
/// button and as its description; in a permission request Reject reads
/// "Deny…" and says permission was denied.
fn ui_16_texts_of_reject_deny_and_cancel(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let question = alice_asks(db, "ways", 1);
    let permission = alice_asks_this(
        db,
        "ways-permission",
        request(
            vec![question_of("go", "Go", Some(false))],
            BundleKind::Permission,
        ),
    );
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    let described = |id: &str| {
        browser.js(
            "const b = document.getElementById(arguments[0]);
             return (b.getAttribute('aria-describedby') || '').split(' ')
               .map(i => document.getElementById(i)).filter(Boolean).map(e => e.textContent).join(' ');",
            vec![json!(id)],
        )
    };
    open(&browser, &question);
    assert_eq!(browser.text("#reject-open"), "Reject\u{2026}");
    let reject = "The agent is told you declined, with your reason if you give one.";
    let cancel = "The request is withdrawn: the agent is told it was cancelled and gets no answer.";
    assert_eq!(described("reject-open"), json!(reject));
    assert_eq!(described("cancel-bundle"), json!(cancel));
    let bar = browser.text("#actions");
    assert!(bar.contains(reject) && bar.contains(cancel), "shown: {bar}");
    browser.click("#close");
    open(&browser, &permission);
    assert_eq!(browser.text("#reject-open"), "Deny\u{2026}");
    let deny = "The agent is told permission was denied, with your reason if you give one.";
    assert_eq!(described("reject-open"), json!(deny));
    assert!(browser.text("#actions").contains(deny));
    browser.click("#reject-open");
    assert_eq!(browser.text("#reject-send"), "Deny permission");
    assert_eq!(described("reject-send"), json!(deny));
    browser.screenshot(&format!("deny-desktop-{}", backend(db)));
}

/// The bar's rectangle and the viewport's height.
fn bar_rect(browser: &Browser) -> (f64, f64, f64) {
    let rect = browser.js(
        "const r = document.getElementById('actions').getBoundingClientRect();
         return [r.top, r.bottom, window.innerHeight];",
        vec![],
    );
    let n = |i: usize| rect[i].as_f64().unwrap();
    (n(0), n(1), n(2))
}

/// UI-17: with a four-question bundle the action bar stays inside the
/// viewport, scrolled to each end, at 360×640 and 1280×720; a field that
/// gets focus under the bar is scrolled clear of it.
fn ui_17_sticky_bar_in_viewport_and_focus_clear_of_it(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks(db, "sticky", 4);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &pending);
    for (width, height) in [(360, 640), (1280, 720)] {
        browser.set_window_size(width, height);
        for end in ["0", "document.documentElement.scrollHeight"] {
            browser.js(&format!("window.scrollTo(0, {end});"), vec![]);
            let (top, bottom, viewport) = bar_rect(&browser);
            assert!(
                top >= 0.0 && bottom <= viewport + 0.5 && top < viewport,
                "{width}x{height} scrolled to {end}: bar {top}..{bottom} of {viewport}"
            );
        }
        browser.js("window.scrollTo(0, 0);", vec![]);
        browser.screenshot(&format!("sticky-{width}-{}", backend(db)));
        // Put the third question's text field right under the bar, then
        // tab to it from the option before it, as a person would.
        let before = browser.js(
            "const field = document.getElementById('text-2');
             const bar = document.getElementById('actions');
             window.scrollTo(0, 0);
             const y = field.getBoundingClientRect().top + window.scrollY;
             window.scrollTo(0, y - bar.getBoundingClientRect().top + 10);
             const options = document.querySelectorAll('#questions fieldset.question')[2].querySelectorAll('input.choice');
             options[options.length - 1].focus({preventScroll: true});
             return field.getBoundingClientRect().bottom > bar.getBoundingClientRect().top;",
            vec![],
        );
        assert_eq!(
            before,
            json!(true),
            "{width}x{height}: the field starts under the bar"
        );
        browser.press(&keys::TAB.to_string());
        let clear = browser.wait_for(
            "the focused field clear of the bar",
            "const field = document.getElementById('text-2');
             return document.activeElement === field
               && field.getBoundingClientRect().bottom <= document.getElementById('actions').getBoundingClientRect().top;",
        );
        assert_eq!(clear, json!(true), "{width}x{height}");
    }
    // The reject panel's send is in the bar while it is open.
    browser.click("#reject-open");
    assert!(browser.js(
        "return document.getElementById('actions').contains(document.getElementById('reject-send'))
            && document.getElementById('reject-send').offsetParent !== null;",
        vec![]
    ) == json!(true));
    browser.js("window.scrollTo(0, 0);", vec![]);
    let (top, bottom, viewport) = bar_rect(&browser);
    assert!(
        top >= 0.0 && bottom <= viewport + 0.5,
        "with the reject panel open"
    );
}

/// UI-17: the digit hints are hidden on a touch screen 390 px wide, and
/// shown on a desktop with a mouse; the keys still work there.
fn ui_17_digit_hints_hidden_at_390_with_touch(db: &TestDb) {
    let phone = json!({"mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": true}}});
    let Some(phone) = browser_with_options(&[], phone) else {
        return;
    };
    let pending = alice_asks(db, "touch", 2);
    let (served, tokens) = served(db);
    sign_in(&phone, &served.base, &tokens.alice);
    open(&phone, &pending);
    let hints = "return Array.from(document.querySelectorAll('#questions .n')).map(n => getComputedStyle(n).display);";
    let shown = phone.js(hints, vec![]);
    assert!(
        shown.as_array().unwrap().iter().all(|d| d == "none"),
        "hidden on a phone: {shown}"
    );
    assert_eq!(
        phone.js(
            "return matchMedia('(pointer: coarse)').matches && innerWidth === 390;",
            vec![]
        ),
        json!(true)
    );
    phone.screenshot(&format!("touch-390-{}", backend(db)));
    // The keys still work.
    phone.js(
        "document.querySelector('#questions input.choice').focus();",
        vec![],
    );
    phone.press("2");
    assert_eq!(
        phone.js(
            "return document.querySelectorAll('#questions input.choice')[1].checked;",
            vec![]
        ),
        json!(true)
    );
    drop(phone);

    // A desktop with a mouse (headless Chromium has no pointer of its own).
    let Some(desktop) = browser_with(&["--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4"]) else {
        return;
    };
    sign_in(&desktop, &served.base, &tokens.alice);
    open(&desktop, &pending);
    assert_eq!(
        desktop.js(
            "return matchMedia('(hover: hover) and (pointer: fine)').matches;",
            vec![]
        ),
        json!(true)
    );
    let shown = desktop.js(hints, vec![]);
    assert!(
        shown.as_array().unwrap().iter().all(|d| d != "none"),
        "shown with a mouse: {shown}"
    );
    desktop.screenshot(&format!("hints-desktop-{}", backend(db)));
}

/// UI-21: the live region says this page's own outcomes as its own — an
/// answer, a decision, a rejection, a cancellation, a lost race — and
/// others' settlements as settled elsewhere, naming the title; an event
/// for a bundle this page has a request in flight for is never said as
/// elsewhere; a new arrival is said with its title.
fn ui_21_own_outcomes_announced_as_own(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let answered = alice_asks(db, "own-answer", 1);
    let decided = alice_asks_this(
        db,
        "own-decision",
        request(
            vec![question_of("go", "Go ahead", Some(false))],
            BundleKind::Permission,
        ),
    );
    let rejected = alice_asks(db, "own-reject", 1);
    let cancelled = alice_asks(db, "own-cancel", 1);
    let elsewhere = alice_asks_this(
        db,
        "elsewhere",
        request(
            vec![question_of("e", "Settled by the bot", Some(true))],
            BundleKind::Question,
        ),
    );
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "five bundles", 5);
    record_announcements(&browser);
    record_errors(&browser);

    let said = |text: &str| {
        browser.wait_for(
            text,
            &format!("return window.__said.includes({});", json!(text)),
        );
    };
    open(&browser, &answered);
    browser.click(&option_box(1, 1));
    browser.click("#submit");
    said("Your answer was sent.");
    browser.click("#settled-close");

    open(&browser, &decided);
    browser.click("#questions button.decision");
    browser.click("#submit");
    said("Your decision was sent.");
    browser.click("#settled-close");

    open(&browser, &rejected);
    browser.click("#reject-open");
    browser.click("#reject-send");
    said("You rejected the request.");
    browser.click("#settled-close");

    open(&browser, &cancelled);
    browser.click("#cancel-bundle");
    browser.click("#cancel-bundle");
    said("You cancelled the request.");
    browser.click("#settled-close");

    clarion::Clarion::clone(db)
        .resolve_bundle(
            &clarion::Principal::agent("alice", "bot", clarion::Grant::ALL),
            &elsewhere,
            &answering(vec![answer("e", &["a"], "")]),
        )
        .unwrap();
    said("Settled by the bot was settled elsewhere.");

    let lost = alice_asks_this(
        db,
        "arrival",
        request(
            vec![question_of("n", "A fresh question", Some(true))],
            BundleKind::Question,
        ),
    );
    said("New request: A fresh question");
    open(&browser, &lost);
    browser.click(&option_box(1, 1));
    let url = served.url(&format!("/api/v1/clarification/{lost}/respond"));
    let (metrics, system, bot) = (
        served.url("/metrics"),
        tokens.system.clone(),
        tokens.alice_bot.clone(),
    );
    let winner = std::thread::spawn(move || {
        page_waits(&metrics, &system);
        send(
            crate::support::server::client()
                .post(url)
                .bearer_auth(bot)
                .header("content-type", "application/json")
                .body(r#"{"answers":[{"question_id":"n","selected_options":["b"],"custom_text":""}]}"#),
        )
    });
    click_once_settled(&browser, &lost, "#submit");
    assert_eq!(winner.join().unwrap().status, 200);
    said("Someone else answered first; their answer is shown.");
    browser.wait_visible("#settled");
    let all = announcements(&browser);
    for own in ["About question 1?", "Go ahead", "A fresh question"] {
        let elsewhere = format!("{own} was settled elsewhere.");
        assert!(
            !all.contains(&elsewhere),
            "never \"elsewhere\" for this page's own: {all:?}"
        );
    }
    assert_eq!(script_errors(&browser), Vec::<String>::new());
}
