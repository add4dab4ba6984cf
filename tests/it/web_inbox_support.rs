//! What the `web_inbox_*` suites share (UI-10): the web inbox in a real
//! browser (headless Chromium over WebDriver) against `clarion serve` as a
//! real process, on both backends. Bundles are asked, answered and
//! superseded by the test process through the library or over REST, the
//! way agents and other people would; what the page shows and what the
//! database stores are both checked. Screenshots land in
//! `target/ui-screenshots/`.

use std::time::Duration;

use clarion::{Clarion, Principal};
use serde_json::json;
use serde_json::Value;

use crate::support::browser::Browser;
use crate::support::server::*;
use crate::support::*;

/// The stored bundle as `get_bundle` serves it (system's view).
pub fn stored(db: &Clarion, pending_id: &str) -> Value {
    let detail = db.get_bundle(&Principal::System, pending_id).unwrap();
    serde_json::from_str(&clarion::envelope::bundle_detail(&detail).body_text()).unwrap()
}

/// `sqlite` or `postgres`, for the screenshots' names.
pub fn backend(db: &TestDb) -> &'static str {
    if db.url.starts_with("postgres") {
        "postgres"
    } else {
        "sqlite"
    }
}

/// Alice's workspace `w-<name>` with a session, and a bundle of `count`
/// questions asked on it.
pub fn alice_asks(db: &Clarion, name: &str, count: usize) -> String {
    ask(db, &mirror(db, name, "alice"), count)
}

/// `clarion serve` on `db` with the usual tokens.
pub fn served(db: &TestDb) -> (Served, Tokens) {
    let tokens = tokens(db);
    (serve(&db.url, &[]), tokens)
}

/// A GET with a bearer token from `clarion serve`.
/// Asks over REST as the host (the server's clock is the system's, so a
/// deadline lies ahead for the page too): `questions` on `session`, with
/// `extra` fields; returns the `pending_id`.
pub fn ask_over_rest(
    served: &Served,
    system: &str,
    session: &str,
    questions: Value,
    extra: Value,
) -> String {
    let mut args = json!({"session_id": session, "questions": questions});
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let asked = send(
        client()
            .post(served.url("/api/v1/clarification/request"))
            .bearer_auth(system)
            .json(&args),
    );
    assert_eq!(asked.status, 200, "{}", asked.body);
    asked.json()["pending_id"].as_str().unwrap().to_owned()
}

pub fn get_at(served: &Served, token: &str, path: &str) -> Reply {
    send(client().get(served.url(path)).bearer_auth(token))
}

/// Screenshots of the view at 1280 and 360 px; at 360 nothing scrolls
/// sideways (UI-9).
pub fn screenshots(browser: &Browser, name: &str) {
    browser.screenshot(&format!("{name}-desktop"));
    browser.set_window_size(360, 740);
    browser.screenshot(&format!("{name}-360"));
    assert_eq!(
        browser.js(
            "return document.documentElement.scrollWidth <= 360;",
            vec![]
        ),
        json!(true),
        "UI-9: {name} scrolls sideways at 360 px"
    );
    browser.set_window_size(1280, 900);
}

/// Opens the page and signs in with `token`; the inbox is showing.
pub fn sign_in(browser: &Browser, base: &str, token: &str) {
    browser.goto(&format!("{base}/"));
    browser.wait_visible("#sign-in-form");
    browser.type_into("#token", token);
    browser.click("#sign-in-form button[type=submit]");
    browser.wait_visible("#inbox");
    wait_live(browser);
}

/// Waits until the page says its stream is live (UI-20).
pub fn wait_live(browser: &Browser) {
    browser.wait_for(
        "the stream to be live",
        "return document.getElementById('live').textContent === 'Live: new requests appear as they arrive';",
    );
}

/// The pending ids the inbox shows, in order.
pub fn listed(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js(
        "return Array.from(document.querySelectorAll('#bundles button.bundle')).map(b => b.dataset.id);",
        vec![],
    ))
    .unwrap()
}

pub fn wait_listed(browser: &Browser, what: &str, count: usize) {
    browser.wait_for(
        what,
        &format!("return document.querySelectorAll('#bundles button.bundle').length === {count};"),
    );
}

/// Opens a bundle from the list by clicking it; the answer view shows.
pub fn open(browser: &Browser, pending_id: &str) {
    let card = format!("#bundles button[data-id='{pending_id}']");
    browser.wait_visible(&card);
    browser.click(&card);
    browser.wait_visible("#answer-form");
}

/// The option checkbox `n` (1-based) of question `q` (1-based).
pub fn option_box(q: usize, n: usize) -> String {
    format!("#questions fieldset.question:nth-of-type({q}) label.option:nth-of-type({n}) input")
}

/// Records every request the page's script makes from now on.
pub fn record_requests(browser: &Browser) {
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

/// The operations the page reads through `POST /api/v1/rpc/{op}`: the
/// names of people and who is signed in (PPL-1a).
const RPC_READS: [&str; 2] = ["/api/v1/rpc/people", "/api/v1/rpc/whoami"];

/// The requests recorded since [`record_requests`] other than reads.
pub fn writes(browser: &Browser) -> Vec<String> {
    let sent: Vec<String> =
        serde_json::from_value(browser.js("return window.__sent;", vec![])).unwrap();
    sent.into_iter()
        .filter(|request| !request.starts_with("GET ") && !request.starts_with("HEAD "))
        .filter(|request| !RPC_READS.iter().any(|read| request.ends_with(read)))
        .collect()
}

/// Records everything the live region announces from now on (UI-21).
pub fn record_announcements(browser: &Browser) {
    browser.js(
        "window.__said = [];
         const region = document.getElementById('announce');
         new MutationObserver(() => { if (region.textContent) window.__said.push(region.textContent); })
           .observe(region, {childList: true, characterData: true, subtree: true});",
        vec![],
    );
}

/// What the live region announced since [`record_announcements`].
pub fn announcements(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js("return window.__said;", vec![])).unwrap()
}

/// Records script errors from now on; [`script_errors`] reads them.
pub fn record_errors(browser: &Browser) {
    browser.js(
        "window.__errors = [];
         window.addEventListener('error', e => window.__errors.push(String(e.message)));
         window.addEventListener('unhandledrejection', e => window.__errors.push(String(e.reason)));",
        vec![],
    );
}

pub fn script_errors(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js("return window.__errors;", vec![])).unwrap()
}

/// Asks `request` on alice's workspace `w-<name>` (a session of its own)
/// and returns the `pending_id`.
pub fn alice_asks_this(db: &Clarion, name: &str, mut request: clarion::AskRequest) -> String {
    request.session_id = mirror(db, name, "alice");
    db.ask(&request).unwrap().pending_id
}

/// Blocks the page's own thread until the bundle is no longer pending
/// (a synchronous wait on the API), then clicks `button`, in the same
/// turn of its event loop: so the page submits after someone else settled
/// the bundle, before any event about it can reach its script.
pub fn click_once_settled(browser: &Browser, pending_id: &str, button: &str) {
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

/// Returns once the page's wait of [`click_once_settled`] is open on the
/// server, so what settles the bundle comes while the page waits.
pub fn page_waits(metrics_url: &str, system_token: &str) {
    eventually(Duration::from_secs(30), "the page's wait began", || {
        crate::http_routes::waits_in_flight(metrics_url, system_token) >= 1
    });
}

/// Records every notification the page raises where another tab of the
/// same origin can read it.
pub fn record_notifications(browser: &Browser) {
    browser.js(
        "localStorage.setItem('notified', '[]');
         const Original = window.Notification;
         window.Notification = class extends Original {
           constructor(title, options) {
             super(title, options);
             const seen = JSON.parse(localStorage.getItem('notified'));
             seen.push({title, body: options.body, tag: options.tag, hidden: document.hidden});
             localStorage.setItem('notified', JSON.stringify(seen));
           }
         };",
        vec![],
    );
}
