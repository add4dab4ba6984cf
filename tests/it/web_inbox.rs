//! UI-1..10: the web inbox in a real browser (headless Chromium over
//! WebDriver) against `clarion serve` as a real process, on both
//! backends. Bundles are asked, answered and superseded by the test
//! process through the library or over REST, the way agents and other
//! people would; what the page shows and what the database stores are
//! both checked. Screenshots land in `target/ui-screenshots/`.

use std::time::Duration;

use clarion::http::{self, HttpOptions, ServeOptions, Shutdown, TokenAuthenticator};
use clarion::{AskRequest, Clarion, OptionSpec, Principal, QuestionSpec};
use serde_json::{json, Value};

use crate::support::browser::{browser, browser_with, keys, Browser};
use crate::support::server::*;
use crate::support::*;

/// The stored bundle as `get_bundle` serves it (system's view).
fn stored(db: &Clarion, pending_id: &str) -> Value {
    let detail = db.get_bundle(&Principal::System, pending_id).unwrap();
    serde_json::from_str(&clarion::envelope::bundle_detail(&detail).body_text()).unwrap()
}

/// `sqlite` or `postgres`, for the screenshots' names.
fn backend(db: &TestDb) -> &'static str {
    if db.url.starts_with("postgres") {
        "postgres"
    } else {
        "sqlite"
    }
}

/// Alice's workspace `w-<name>` with a session, and a bundle of `count`
/// questions asked on it.
fn alice_asks(db: &Clarion, name: &str, count: usize) -> String {
    ask(db, &mirror(db, name, "alice"), count)
}

/// `clarion serve` on `db` with the usual tokens.
fn served(db: &TestDb) -> (Served, Tokens) {
    let tokens = tokens(db);
    (serve(&db.url, &[]), tokens)
}

/// A GET with a bearer token from `clarion serve`.
fn get_at(served: &Served, token: &str, path: &str) -> Reply {
    send(client().get(served.url(path)).bearer_auth(token))
}

/// Opens the page and signs in with `token`; the inbox is showing.
fn sign_in(browser: &Browser, base: &str, token: &str) {
    browser.goto(&format!("{base}/"));
    browser.wait_visible("#sign-in-form");
    browser.type_into("#token", token);
    browser.click("#sign-in-form button[type=submit]");
    browser.wait_visible("#inbox");
    browser.wait_for(
        "the stream to be live",
        "return document.getElementById('live').textContent === 'Live';",
    );
}

/// The pending ids the inbox shows, in order.
fn listed(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js(
        "return Array.from(document.querySelectorAll('#bundles button.bundle')).map(b => b.dataset.id);",
        vec![],
    ))
    .unwrap()
}

fn wait_listed(browser: &Browser, what: &str, count: usize) {
    browser.wait_for(
        what,
        &format!("return document.querySelectorAll('#bundles button.bundle').length === {count};"),
    );
}

/// Opens a bundle from the list by clicking it; the answer view shows.
fn open(browser: &Browser, pending_id: &str) {
    let card = format!("#bundles button[data-id='{pending_id}']");
    browser.wait_visible(&card);
    browser.click(&card);
    browser.wait_visible("#answer-form");
}

/// The option checkbox `n` (1-based) of question `q` (1-based).
fn option_box(q: usize, n: usize) -> String {
    format!("#questions fieldset.question:nth-of-type({q}) label.option:nth-of-type({n}) input")
}

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

/// Records every request the page's script makes from now on.
fn record_requests(browser: &Browser) {
    browser.js(
        "window.__sent = [];
         const original = window.fetch;
         window.fetch = (url, init) => {
           window.__sent.push(((init && init.method) || 'GET') + ' ' + url);
           return original(url, init);
         };",
        vec![],
    );
}

/// The requests recorded since [`record_requests`] other than reads.
fn writes(browser: &Browser) -> Vec<String> {
    let sent: Vec<String> =
        serde_json::from_value(browser.js("return window.__sent;", vec![])).unwrap();
    sent.into_iter()
        .filter(|request| !request.starts_with("GET "))
        .collect()
}

/// `document.scrollWidth`: UI-9 wants nothing to scroll sideways.
fn scroll_width(browser: &Browser) -> u64 {
    browser
        .js("return document.documentElement.scrollWidth;", vec![])
        .as_u64()
        .unwrap()
}

/// Every control that is shown has an accessible name (UI-9): a label,
/// `aria-label`/`aria-labelledby`, or its own text.
fn unnamed_controls(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js(
        "return Array.from(document.querySelectorAll('button, input, textarea, select, a'))
           .filter(e => e.offsetParent !== null)
           .filter(e => !((e.labels && e.labels.length) || e.getAttribute('aria-label')
                          || e.getAttribute('aria-labelledby') || e.innerText.trim()))
           .map(e => e.outerHTML.slice(0, 80));",
        vec![],
    ))
    .unwrap()
}

/// Blocks the page's own thread until the bundle is no longer pending
/// (a synchronous wait on the API), then clicks `button`, in the same
/// turn of its event loop: so the page submits after someone else settled
/// the bundle, before any event about it can reach its script.
fn click_once_settled(browser: &Browser, pending_id: &str, button: &str) {
    browser.js(
        "const request = new XMLHttpRequest();
         request.open('GET', 'api/v1/clarification/' + arguments[0] + '/wait?timeout_ms=20000', false);
         request.withCredentials = true;
         request.send();
         document.querySelector(arguments[1]).click();
         return request.status;",
        vec![json!(pending_id), json!(button)],
    );
}

dual_backend!(
    ui_2_sign_in_list_and_sign_out,
    ui_9_dark_scheme,
    ui_3_filter_load_more_and_live_updates,
    ui_4_an_answer_stores_what_was_clicked,
    ui_4_reject_with_a_reason_and_cancel,
    ui_8_keyboard,
    ui_6_duplicate_submit_shows_the_winners_answers,
    ui_6_settled_or_closed_while_open,
    ui_7_the_2000_code_point_limit,
    ui_1_markup_renders_inert_under_a_strict_policy,
    ui_5_credentials_cross_origin,
    ui_2_open_as_with_demo_bundles,
    ui_8_a_storm_of_keys_breaks_nothing
);

/// UI-2, UI-3, UI-9: sign-in refuses an unknown token and accepts
/// alice's; the inbox lists her bundles oldest first with age,
/// context, task and question titles (never bob's), the waiting count
/// is in the title; at 360 px nothing scrolls sideways, every control
/// is named, focus is visible, dark mode is styled; sign-out ends the
/// session.
fn ui_2_sign_in_list_and_sign_out(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let first = alice_asks(db, "one", 2);
    let second = alice_asks(db, "two", 1);
    let bobs = ask(db, &mirror(db, "bob", "bob"), 1);
    let (served, tokens) = served(db);

    browser.goto(&served.url("/"));
    browser.wait_visible("#sign-in-form");
    browser.type_into("#token", "clr_not_a_token");
    browser.click("#sign-in-form button[type=submit]");
    browser.wait_for("the refusal", "return document.getElementById('sign-in-error').textContent.includes('unknown or revoked');");
    assert!(!browser.visible("#inbox"));

    browser.js("document.getElementById('token').value = '';", vec![]);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "alice's two bundles", 2);
    assert_eq!(
        listed(&browser),
        vec![first.clone(), second.clone()],
        "LIST-3 order"
    );
    assert!(!listed(&browser).contains(&bobs));
    let card = browser.text(&format!("#bundles button[data-id='{first}']"));
    for expected in [
        "task t-one",
        "2 questions",
        "the agent needs a decision",
        "About question 1?",
        "About question 2?",
        "ago",
    ] {
        assert!(card.contains(expected), "UI-3: {expected:?} in {card:?}");
    }
    browser.wait_for(
        "the waiting count in the title",
        "return document.title === '(2) clarion inbox';",
    );
    assert_eq!(browser.text("#who"), "user:alice");
    assert!(browser.visible("#sign-out"), "a web session can be ended");
    let by_bearer = get_at(&served, &tokens.alice, "/api/v1/session");
    assert_eq!(
        by_bearer.json(),
        json!({"principal": {"kind": "user", "user_id": "alice"}, "via": "bearer"})
    );

    assert_eq!(
        unnamed_controls(&browser),
        Vec::<String>::new(),
        "UI-9: named controls"
    );
    let light = browser.js(
        "return getComputedStyle(document.body).backgroundColor;",
        vec![],
    );
    assert_eq!(
        light,
        json!("rgb(246, 247, 249)"),
        "the light palette by default"
    );
    browser.press("j");
    let outline = browser.js(
        "return getComputedStyle(document.activeElement).outlineStyle;",
        vec![],
    );
    assert_ne!(outline, json!("none"), "UI-9: visible focus");
    browser.screenshot(&format!("inbox-desktop-{}", backend(db)));

    browser.set_window_size(360, 760);
    assert!(scroll_width(&browser) <= 360, "UI-9: the inbox at 360 px");
    browser.screenshot(&format!("inbox-360-{}", backend(db)));
    open(&browser, &first);
    assert!(
        scroll_width(&browser) <= 360,
        "UI-9: the answer view at 360 px"
    );
    assert_eq!(
        unnamed_controls(&browser),
        Vec::<String>::new(),
        "UI-9: named controls"
    );
    browser.screenshot(&format!("answer-360-{}", backend(db)));
    browser.set_window_size(1280, 900);

    browser.type_into("#text-0", "alice's private draft");
    browser.click("#close");
    browser.click("#sign-out");
    browser.wait_visible("#sign-in-form");
    browser.goto(&served.url("/"));
    browser.wait_visible("#sign-in-form");
    assert!(!browser.visible("#inbox"), "the session ended");

    // The next person on this page sees nothing of alice's, at any moment.
    browser.type_into("#token", &tokens.system);
    browser.click("#sign-in-form button[type=submit]");
    browser.wait_visible("#inbox");
    assert!(listed(&browser)
        .iter()
        .all(|id| [&first, &second, &bobs].contains(&id)));
    wait_listed(&browser, "everything, for system", 3);
    browser.click("#sign-out");
    browser.wait_visible("#sign-in-form");
    browser.type_into("#token", &tokens.bob);
    browser.click("#sign-in-form button[type=submit]");
    browser.wait_visible("#inbox");
    assert!(
        listed(&browser).iter().all(|id| *id == bobs),
        "{:?}",
        listed(&browser)
    );
    wait_listed(&browser, "bob's one bundle", 1);
    assert_eq!(listed(&browser), vec![bobs.clone()]);
    assert_eq!(browser.text("#who"), "user:bob");
}

/// UI-9: the page follows `prefers-color-scheme` (Chromium told the
/// system prefers dark).
fn ui_9_dark_scheme(db: &TestDb) {
    let Some(browser) = browser_with(&[
        "--force-dark-mode",
        "--blink-settings=preferredColorScheme=0",
    ]) else {
        return;
    };
    alice_asks(db, "dark", 2);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the bundle", 1);
    let dark = browser.js(
        "return [matchMedia('(prefers-color-scheme: dark)').matches,
                     getComputedStyle(document.body).backgroundColor];",
        vec![],
    );
    assert_eq!(
        dark,
        json!([true, "rgb(20, 23, 27)"]),
        "the dark palette is in use"
    );
    browser.screenshot(&format!("inbox-dark-{}", backend(db)));
}

/// UI-3: a typed workspace id narrows the inbox; "Load more" follows
/// the cursor; a bundle asked while the page is open appears without
/// a reload, and one settled elsewhere leaves; the title follows.
fn ui_3_filter_load_more_and_live_updates(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "many", "alice");
    let many: Vec<String> = (0..51).map(|_| ask(db, &session, 1)).collect();
    let other = alice_asks(db, "other", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);

    wait_listed(&browser, "the first page", 50);
    assert!(browser.visible("#load-more"));
    browser.click("#load-more");
    wait_listed(&browser, "both pages", 52);
    assert!(!browser.visible("#load-more"));
    let mut expected = many.clone();
    expected.push(other.clone());
    assert_eq!(listed(&browser), expected, "LIST-3 order across pages");
    browser.wait_for(
        "the count",
        "return document.title === '(52) clarion inbox';",
    );

    browser.type_into("#workspace", "w-other");
    browser.click("#filter-form button");
    wait_listed(&browser, "the filtered inbox", 1);
    assert_eq!(listed(&browser), vec![other.clone()]);

    let asked = ask(db, &mirror(db, "other-later", "alice"), 1);
    let in_other = ask(db, &session_in(db, "other-2", "w-other", Some(true)), 1);
    browser.wait_for(
        "the new bundle in w-other, without a reload",
        &format!("return !!document.querySelector(\"#bundles button[data-id='{in_other}']\");"),
    );
    assert_eq!(
        listed(&browser),
        vec![other.clone(), in_other.clone()],
        "the filter holds for live bundles"
    );
    assert!(!listed(&browser).contains(&asked));

    db.resolve_bundle(&Principal::user("alice"), &other, &one_answer("elsewhere"))
        .unwrap();
    wait_listed(&browser, "the settled bundle to leave", 1);
    assert_eq!(listed(&browser), vec![in_other]);
    browser.wait_for(
        "the count to follow",
        "return document.title === '(53) clarion inbox';",
    );
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
    browser.wait_visible("#inbox");
    wait_listed(&browser, "the answered bundle to leave", 0);
    browser.wait_for(
        "the confirmation",
        "return document.getElementById('toast').textContent === 'Answer sent.';",
    );

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
    let winner = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
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
    let turn = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
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

/// UI-1: agent-written markup renders as text; nothing runs; the page
/// carries the strict CSP with no inline script and no framing.
fn ui_1_markup_renders_inert_under_a_strict_policy(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "markup", "alice");
    let hostile = "<img src=x onerror=\"window.__pwned = 1\"><script>window.__pwned = 2</script>";
    let pending = db
        .ask(&AskRequest {
            session_id: session,
            questions: vec![QuestionSpec {
                question_id: None,
                title: format!("title {hostile}"),
                prompt: format!("prompt {hostile}"),
                options: vec![
                    OptionSpec {
                        option_id: None,
                        label: format!("label {hostile}"),
                        description: "<b>bold?</b>".into(),
                    },
                    option("No"),
                ],
            }],
            context: format!("context {hostile}"),
            ..AskRequest::default()
        })
        .unwrap()
        .pending_id;
    let (served, tokens) = served(db);

    let page = send(client().get(served.url("/")));
    assert_eq!(page.status, 200);
    let policy = page
        .header("content-security-policy")
        .unwrap_or_default()
        .to_owned();
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "UI-1: {directive} in {policy}");
    }
    assert!(
        !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"),
        "{policy}"
    );
    assert!(
        !page.body.contains("<script>") && page.body.contains("<script src=\"inbox.js\""),
        "no inline script"
    );
    for asset in ["/inbox.js", "/inbox.css", "/icon.svg"] {
        let reply = send(client().get(served.url(asset)));
        assert_eq!(reply.status, 200, "{asset}");
        assert!(reply.header("content-security-policy").is_some(), "{asset}");
    }

    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the bundle", 1);
    let card = browser.text(&format!("#bundles button[data-id='{pending}']"));
    assert!(
        card.contains("context <img src=x") && card.contains("title <img"),
        "{card}"
    );
    open(&browser, &pending);
    let view = browser.text("#answer");
    for shown in [
        "prompt <img src=x onerror=",
        "<script>window.__pwned = 2</script>",
        "label <img",
        "<b>bold?</b>",
    ] {
        assert!(view.contains(shown), "shown as text: {shown:?} in {view:?}");
    }
    let injected = browser.js(
        "return [window.__pwned === undefined,
                     document.querySelectorAll('main img, main script, main b').length];",
        vec![],
    );
    assert_eq!(
        injected,
        json!([true, 0]),
        "nothing agent-written became markup"
    );
}

/// UI-5 (seed W1): a page served from another origin of the same site
/// (another port) signs in, lists, follows events and answers with
/// credentials on every request, against `clarion serve
/// --allow-origin` that origin.
fn ui_5_credentials_cross_origin(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = alice_asks(db, "cross", 1);
    let tokens = tokens(db);
    let page_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let page_origin = format!("http://{}", page_listener.local_addr().unwrap());
    let api = serve(&db.url, &["--allow-origin", &page_origin]);
    let shutdown = Shutdown::new();
    let options = HttpOptions::new()
        .inbox_api(&api.base)
        .unwrap()
        .shutdown(shutdown.clone());
    let router = http::router(db.clarion.clone(), TokenAuthenticator::new(db), options);
    let page = serve_router_on(page_listener, router, shutdown, ServeOptions::new());
    for not_an_origin in [
        "http://host/path",
        "javascript:alert(1)",
        "http://",
        "ftp://host",
        "http://a b",
    ] {
        assert!(
            HttpOptions::new().inbox_api(not_an_origin).is_err(),
            "{not_an_origin}"
        );
    }
    let refused = clarion(&[
        "serve",
        "--database-url",
        &db.url,
        "--inbox-api",
        "http://x/\"><script>",
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--inbox-api"));
    let policy = send(client().get(page.url("/")));
    assert!(policy
        .header("content-security-policy")
        .unwrap()
        .contains(&format!("connect-src 'self' {}", api.base)));

    sign_in(&browser, &page.base, &tokens.alice);
    wait_listed(&browser, "alice's bundle, from the other origin", 1);
    let later = alice_asks(db, "cross-later", 1);
    browser.wait_for(
        "a live bundle from the other origin",
        &format!("return !!document.querySelector(\"#bundles button[data-id='{later}']\");"),
    );
    open(&browser, &pending);
    browser.click(&option_box(1, 1));
    browser.click("#submit");
    wait_listed(&browser, "the answered bundle to leave", 1);
    assert_eq!(stored(db, &pending)["status"], "answered");
    assert_eq!(
        stored(db, &pending)["response"]["answers"][0]["selected_options"],
        json!(["q1_opt1"])
    );
    assert!(
        browser.js("return document.cookie;", vec![]) == json!(""),
        "the session cookie is HttpOnly"
    );
}

/// README's second command: `clarion serve --open-as user:me --demo`
/// shows sample bundles with no sign-in; serving it again adds none.
fn ui_2_open_as_with_demo_bundles(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let served = serve(&db.url, &["--open-as", "user:me", "--demo"]);
    browser.goto(&served.url("/"));
    browser.wait_visible("#inbox");
    wait_listed(&browser, "three sample bundles", 3);
    assert!(!browser.visible("#sign-out"), "nothing to sign out of");
    assert_eq!(browser.text("#who"), "user:me");
    browser.wait_for(
        "the count",
        "return document.title === '(3) clarion inbox';",
    );
    browser.screenshot(&format!("demo-desktop-{}", backend(db)));
    let session = send(client().get(served.url("/api/v1/session")));
    assert_eq!(
        session.json(),
        json!({"principal": {"kind": "user", "user_id": "me"}, "via": "open"})
    );
    let first = listed(&browser)[0].clone();
    open(&browser, &first);
    browser.click(&option_box(1, 2));
    browser.screenshot(&format!("demo-answer-desktop-{}", backend(db)));
    browser.set_window_size(360, 760);
    assert!(
        scroll_width(&browser) <= 360,
        "UI-9: the demo's answer view at 360 px"
    );
    browser.screenshot(&format!("demo-answer-360-{}", backend(db)));
    drop(served);
    let again = serve(&db.url, &["--open-as", "user:me", "--demo"]);
    let page = send(client().get(again.url("/api/v1/summary")));
    assert_eq!(page.json()["pending_bundles"], 3, "{}", page.text());
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
