//! What the `web_inbox_*` suites share (UI-10): the web inbox in a real
//! browser (headless Chromium over WebDriver) against `clarion serve` as a
//! real process, on both backends. Bundles are asked, answered and
//! superseded by the test process through the library or over REST, the
//! way agents and other people would; what the page shows and what the
//! database stores are both checked. Screenshots land in
//! `target/ui-screenshots/`.

use clarion::{Clarion, Principal};
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
pub fn get_at(served: &Served, token: &str, path: &str) -> Reply {
    send(client().get(served.url(path)).bearer_auth(token))
}

/// Opens the page and signs in with `token`; the inbox is showing.
pub fn sign_in(browser: &Browser, base: &str, token: &str) {
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
