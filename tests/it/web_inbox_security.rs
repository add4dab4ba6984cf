//! What the page trusts (UI-1, UI-5): agent markup renders inert under a
//! strict policy, and a page served from another origin of the same site
//! sends its credentials on every request.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use clarion::http::{self, HttpOptions, ServeOptions, Shutdown, TokenAuthenticator};
use clarion::{AskRequest, OptionSpec, QuestionSpec};
use serde_json::json;

use crate::support::browser::browser;
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    ui_1_markup_renders_inert_under_a_strict_policy,
    ui_5_credentials_cross_origin
);

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
                multi_select: None,
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
    for asset in [
        "/inbox.js",
        "/js/answer.js",
        "/js/api.js",
        "/js/dom.js",
        "/js/keys.js",
        "/js/list.js",
        "/js/live.js",
        "/js/session.js",
        "/js/state.js",
        "/inbox.css",
        "/icon.svg",
    ] {
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
