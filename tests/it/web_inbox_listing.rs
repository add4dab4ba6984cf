//! Signing in and the list (UI-2, UI-3, UI-9): sign-in and sign-out, the
//! list in order with what each bundle shows, the workspace filter, "Load
//! more" and live updates, a narrow screen, named controls and the dark
//! scheme, and `--open-as` with the demo bundles.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use std::time::Duration;

use clarion::http::{self, HttpOptions, ServeOptions, Shutdown, TokenAuthenticator};
use clarion::Principal;
use serde_json::{json, Value};

use crate::support::browser::{browser, browser_with, Browser};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

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

dual_backend!(
    ui_2_sign_in_list_and_sign_out,
    ui_9_dark_scheme,
    ui_3_filter_load_more_and_live_updates,
    ui_2_open_as_with_demo_bundles,
    http_13_the_page_waits_for_retry_after,
    http_10_the_page_signs_out_when_its_token_is_revoked,
    ui_11_countdown_and_the_default_in_words
);

/// Asks "Ship it?" through the running server; returns the `pending_id`.
fn ask_over_rest(served: &Served, system: &str, session: &str, extra: Value) -> String {
    let questions = json!([{"title": "Ship it?", "prompt": "Ship the release?",
        "options": [{"label": "Yes", "description": "ship"}, {"label": "No", "description": "wait"}]}]);
    crate::web_inbox_support::ask_over_rest(served, system, session, questions, extra)
}

/// UI-11: a card shows the countdown to its deadline and the action word;
/// the answer view says in words, in the browser's time, what the agent
/// is told if nobody answers (a rejection and its reason; an answer's
/// option labels; a withdrawn question). At the deadline a listed card
/// leaves the list.
fn ui_11_countdown_and_the_default_in_words(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "d", "alice");
    let (served, tokens) = served(db);
    let rejecting = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"expires_in_ms": 3_600_000,
               "on_expire": {"action": "reject", "reject_reason": "no answer in time"}}),
    );
    let answering = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"expires_in_ms": 1_800_000,
               "on_expire": {"action": "answer", "answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}}),
    );
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the two bundles", 2);
    let card = browser.text(&format!("#bundles button[data-id='{rejecting}']"));
    assert!(
        card.contains("due in 1 h") || card.contains("due in 60 min"),
        "{card}"
    );
    assert!(card.contains("then reject"), "{card}");
    browser.screenshot(&format!("inbox-deadlines-{}", backend(db)));

    open(&browser, &rejecting);
    let meta = browser.text("#answer-meta");
    assert!(meta.contains("If nobody answers by "), "{meta}");
    assert!(
        meta.contains("the agent is told: Reject \u{2014} no answer in time."),
        "{meta}"
    );
    browser.screenshot(&format!("answer-deadline-{}", backend(db)));
    browser.js(
        "document.querySelector('#answer-form button[type=button], #back')?.click();",
        vec![],
    );
    browser.goto(&served.url("/"));
    browser.wait_visible("#inbox");
    open(&browser, &answering);
    let meta = browser.text("#answer-meta");
    assert!(meta.contains("the agent is told: Ship it?: No."), "{meta}");

    let soon = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"expires_in_ms": 6_000}),
    );
    browser.goto(&served.url("/"));
    browser.wait_visible("#inbox");
    wait_listed(&browser, "the bundle due in 6 s listed with the others", 3);
    // At its deadline that card leaves; the other two stay.
    browser.wait_for(
        "the two later bundles listed, the due one gone",
        &format!(
            "return document.querySelectorAll('#bundles button.bundle').length === 2 \
             && !document.querySelector(\"#bundles button[data-id='{soon}']\");"
        ),
    );
    let mut shown = listed(&browser);
    shown.sort();
    let mut expected = vec![rejecting.clone(), answering.clone()];
    expected.sort();
    assert_eq!(shown, expected);

    // An open answer view at the deadline closes with the deadline's
    // outcome, confirmed by the event, and its attempts show the deadline
    // (UI-12).
    let defaulted = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"expires_in_ms": 3_000,
               "on_expire": {"action": "reject", "reject_reason": "too late"}}),
    );
    browser.goto(&served.url("/"));
    browser.wait_visible("#inbox");
    open(&browser, &defaulted);
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Rejected by its deadline");
    assert!(browser
        .text("#settled-note")
        .contains("default at the deadline"));
    assert!(browser.text("#settled-answers").contains("too late"));
    browser.click("#attempts summary");
    browser.wait_for(
        "the deadline's attempt",
        "return document.querySelectorAll('#attempts-body tr').length === 1;",
    );
    let row = browser.text("#attempts-body");
    assert!(row.contains("the deadline") && row.contains("won"), "{row}");
    browser.screenshot(&format!("answer-settled-by-deadline-{}", backend(db)));
}

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
        "t-one \u{b7} w-one",
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

/// HTTP-13 in the page: a stream refused because the sign-in holds as
/// many as it may says so, waits `Retry-After`, and goes live once a place
/// is free. The router allows one stream per credential; while the page
/// is away, the test takes its place with the page's own web session.
fn http_13_the_page_waits_for_retry_after(db: &TestDb) {
    // A page kept in the back-forward cache would keep its stream open.
    let Some(browser) = browser_with(&["--disable-features=BackForwardCache"]) else {
        return;
    };
    alice_asks(db, "capped", 1);
    let tokens = tokens(db);
    let shutdown = Shutdown::new();
    let options = HttpOptions::new()
        .streams_per_credential(1)
        .keep_alive(Duration::from_millis(200))
        .shutdown(shutdown.clone());
    let router = http::router(db.clarion.clone(), TokenAuthenticator::new(db), options);
    let server = serve_router(router, shutdown, ServeOptions::new());
    sign_in(&browser, &server.url(""), &tokens.alice);
    let cookie = format!(
        "{}={}",
        http::SESSION_COOKIE,
        browser.cookie(http::SESSION_COOKIE)
    );
    browser.goto("about:blank");
    let mut held = None;
    eventually(Duration::from_secs(10), "the page's place to free", || {
        let response = client()
            .get(server.url("/api/v1/events"))
            .header("cookie", &cookie)
            .send()
            .unwrap();
        let free = response.status() == 200;
        if free {
            held = Some(response);
        }
        free
    });
    browser.goto(&server.url("/"));
    browser.wait_for(
        "the page to say why it is not live",
        "return document.getElementById('live').textContent.includes('too many open views')
            && document.getElementById('live').textContent.startsWith('Not connected')
            && /retrying in [1-5] s/.test(document.getElementById('live').textContent);",
    );
    drop(held);
    wait_live(&browser);
}

/// HTTP-10 in the page: the token behind its session is revoked (by
/// `clarion token revoke`, another process); the stream's `revoked` ends
/// the inbox and the page asks to sign in again.
fn http_10_the_page_signs_out_when_its_token_is_revoked(db: &TestDb) {
    let Some(browser) = browser() else { return };
    alice_asks(db, "revoked", 1);
    let tokens = tokens(db);
    let shutdown = Shutdown::new();
    let options = HttpOptions::new()
        .keep_alive(Duration::from_millis(200))
        .shutdown(shutdown.clone());
    let router = http::router(db.clarion.clone(), TokenAuthenticator::new(db), options);
    let server = serve_router(router, shutdown, ServeOptions::new());
    sign_in(&browser, &server.url(""), &tokens.alice);
    let revoked = clarion(&["token", "revoke", &tokens.alice, "--database-url", &db.url]);
    assert!(revoked.status.success(), "{revoked:?}");
    browser.wait_visible("#sign-in-form");
    assert!(!browser.visible("#inbox"));
    assert_eq!(
        browser.text("#sign-in-error"),
        "Your session has ended. Sign in again."
    );
}
