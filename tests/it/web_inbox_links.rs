//! A page to link to, with time that is true and a phone that holds
//! (UI-9, UI-11, UI-12, UI-17, UI-18, UI-22): each bundle and the "Answered"
//! view have an address that opens cold, survives a reload and the back
//! button; the countdown is read at each of its last seconds, in the list
//! and in the answer view; at 360 px nothing runs sideways, no word
//! breaks inside a button and the sticky bar covers no control; the
//! "Answered" list says what was decided; the attempts view says when to
//! the second, what each sent as far as the ledger knows, and whose
//! earlier answer won; and no text for people names a requirement id.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use std::path::Path;

use clarion::{Channel, Principal};
use serde_json::{json, Value};

use crate::support::browser::{browser, Browser};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    ui_22_a_bundle_and_the_answered_view_by_address,
    ui_11_the_last_seconds_counted_one_by_one,
    ui_9_every_view_at_360_and_1280,
    ui_12_attempts_to_the_second_and_what_each_sent
);

/// Asks its one question through the running server; returns the `pending_id`.
fn ask_over_rest(served: &Served, system: &str, session: &str, extra: Value) -> String {
    let questions = json!([{"title": "Target", "prompt": "Where should **release 1.4** go first?",
        "options": [{"label": "Staging", "description": "try it"},
                    {"label": "Production", "description": "ship it"}]}]);
    crate::web_inbox_support::ask_over_rest(served, system, session, questions, extra)
}

/// POSTs `body` to the bundle's `action` (`respond`, `cancel`) as `token`.
fn settle_as(served: &Served, token: &str, pending_id: &str, action: &str, body: Value) {
    let reply = send(
        client()
            .post(served.url(&format!("/api/v1/clarification/{pending_id}/{action}")))
            .bearer_auth(token)
            .json(&body),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
}

fn hash(browser: &Browser) -> String {
    browser
        .js("return location.hash;", vec![])
        .as_str()
        .unwrap()
        .to_owned()
}

fn back(browser: &Browser) {
    browser.js("history.back();", vec![]);
}

/// Waits until the answer view shows the bundle `id`.
fn wait_open(browser: &Browser, what: &str, id: &str) {
    browser.wait_for(
        what,
        &format!(
            "return !document.getElementById('answer').hidden && location.hash === '#/b/{id}' \
             && document.getElementById('answer-heading').textContent !== 'Answer';"
        ),
    );
}

/// UI-18: opening a bundle gives it an address; a reload and a cold open
/// of that address show it again; the back button returns to the list,
/// and forward to the bundle; the "Answered" tab has an address too,
/// which a reload keeps. A row shows its first prompt, plain and trimmed.
fn ui_22_a_bundle_and_the_answered_view_by_address(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "links", "alice");
    let (served, tokens) = served(db);
    let first = ask_over_rest(&served, &tokens.system, &session, json!({}));
    let second = ask_over_rest(&served, &tokens.system, &session, json!({}));
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "both bundles", 2);
    let card = browser.text(&format!("#bundles button[data-id='{first}']"));
    assert!(
        card.contains("Target") && card.contains("Where should release 1.4 go first?"),
        "the prompt, as plain text, under the title: {card}"
    );

    open(&browser, &first);
    assert_eq!(hash(&browser), format!("#/b/{first}"));
    browser.js("location.reload();", vec![]);
    wait_open(&browser, "the bundle again after a reload", &first);
    back(&browser);
    browser.wait_for(
        "the list after Back",
        "return !document.getElementById('inbox').hidden && document.getElementById('answer').hidden \
         && (location.hash === '' || location.hash === '#/');",
    );
    browser.js("history.forward();", vec![]);
    wait_open(&browser, "the bundle after Forward", &first);
    browser.click("#close");
    browser.wait_visible("#inbox");
    assert_eq!(hash(&browser), "#/", "closing goes to the list's address");

    // A link opened cold: a fresh document at the bundle's address.
    browser.goto("about:blank");
    browser.goto(&format!("{}/#/b/{second}", served.base));
    wait_open(&browser, "the linked bundle opened cold", &second);
    browser.type_into("#text-0", "kept");
    browser.click("#close");
    browser.wait_visible("#inbox");
    back(&browser);
    wait_open(&browser, "the bundle again after Back", &second);
    let draft = browser.js("return document.getElementById('text-0').value;", vec![]);
    assert_eq!(
        draft,
        json!("kept"),
        "the draft is kept and nothing was sent"
    );
    browser.click("#close");
    browser.wait_visible("#inbox");
    wait_listed(&browser, "both still waiting", 2);

    settle_as(
        &served,
        &tokens.alice,
        &first,
        "respond",
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}),
    );
    browser.click("#tab-answered");
    browser.wait_for(
        "the answered bundle listed",
        "return document.querySelectorAll('#history-list button.bundle').length === 1;",
    );
    assert_eq!(hash(&browser), "#/history");
    browser.js("location.reload();", vec![]);
    browser.wait_for(
        "the Answered view after a reload",
        "return !document.getElementById('history-panel').hidden \
         && document.querySelectorAll('#history-list button.bundle').length === 1;",
    );
    browser.click(&format!("#history-list button[data-id='{first}']"));
    browser.wait_visible("#settled");
    assert_eq!(hash(&browser), format!("#/b/{first}"));
    back(&browser);
    browser.wait_for(
        "Answered again after Back",
        "return !document.getElementById('history-panel').hidden && location.hash === '#/history';",
    );
    back(&browser);
    browser.wait_for(
        "the waiting list after Back",
        "return !document.getElementById('waiting-panel').hidden && document.getElementById('answer').hidden;",
    );
    assert_eq!(no_rule_ids(&browser), Vec::<String>::new());
}

/// Starts recording each new text of the element matching `css`, with
/// the milliseconds left until `expires_at` by the browser's clock then.
fn record_countdown(browser: &Browser, css: &str, expires_at: &str) {
    browser.js(
        "window.__ticks = [];
         const read = () => {
           const chip = document.querySelector(arguments[0]);
           const text = chip ? chip.textContent : '';
           const last = window.__ticks[window.__ticks.length - 1];
           if (text && (!last || last[1] !== text)) window.__ticks.push([Date.parse(arguments[1]) - Date.now(), text]);
         };
         new MutationObserver(read).observe(document.body, {subtree: true, childList: true, characterData: true});
         read();",
        vec![json!(css), json!(expires_at)],
    );
}

/// The recorded countdown: each "due in N s" is true when shown (more
/// than N - 1 and at most N seconds left, within a third of a second),
/// and each of the last five seconds was shown.
fn check_countdown(browser: &Browser, where_: &str) {
    let ticks: Vec<(f64, String)> =
        serde_json::from_value(browser.js("return window.__ticks;", vec![])).unwrap();
    let mut shown = Vec::new();
    for (left_ms, text) in &ticks {
        let Some(n) = text
            .strip_prefix("due in ")
            .and_then(|rest| rest.strip_suffix(" s"))
        else {
            continue;
        };
        let n: f64 = n.parse().unwrap();
        let left = left_ms / 1000.0;
        assert!(
            n - 1.35 < left && left <= n + 0.35,
            "UI-11: {where_} showed {text:?} with {left:.2} s left: {ticks:?}"
        );
        shown.push(n as u64);
    }
    for n in 1..=5 {
        assert!(
            shown.contains(&n),
            "UI-11: {where_} showed {n} s: {ticks:?}"
        );
    }
}

/// UI-11: a deadline seven seconds away, read at each change of its
/// chip: in the list, then in the answer view.
fn ui_11_the_last_seconds_counted_one_by_one(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "tick", "alice");
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    let listed_one = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"expires_in_ms": 7_000}),
    );
    let expires = stored(db, &listed_one)["expires_at"]
        .as_str()
        .unwrap()
        .to_owned();
    let card = format!("#bundles button[data-id='{listed_one}']");
    browser.wait_visible(&card);
    record_countdown(&browser, &format!("{card} .deadline"), &expires);
    browser.wait_for(
        "the card gone at its deadline",
        &format!("return !document.querySelector(\"{card}\");"),
    );
    check_countdown(&browser, "the list");

    let opened = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"expires_in_ms": 7_000}),
    );
    let expires = stored(db, &opened)["expires_at"]
        .as_str()
        .unwrap()
        .to_owned();
    open(&browser, &opened);
    record_countdown(&browser, "#answer-countdown", &expires);
    browser.screenshot(&format!("answer-countdown-{}", backend(db)));
    browser.wait_for(
        "the answer view at its deadline",
        "return !document.getElementById('settled').hidden;",
    );
    check_countdown(&browser, "the answer view");
}

/// Sizes the window so that the page itself is `width` × `height`.
fn viewport(browser: &Browser, width: u32, height: u32) {
    browser.set_window_size(width, height);
    let inner = browser
        .js("return [window.innerWidth, window.innerHeight];", vec![])
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap() as u32)
        .collect::<Vec<_>>();
    browser.set_window_size(
        width + width.saturating_sub(inner[0]),
        height + height.saturating_sub(inner[1]),
    );
}

/// Elements of the shown page whose content is wider than their box.
fn overflowing(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js(
        "return Array.from(document.querySelectorAll('body *'))
           .filter(e => e.getClientRects().length && !e.closest('[hidden], .visually-hidden, pre, thead'))
           .filter(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
           .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + e.className
                + ' ' + e.scrollWidth + ' > ' + e.clientWidth);",
        vec![],
    ))
    .unwrap()
}

/// Words broken inside across lines, in buttons, headings, table headers
/// and chips: each word's rectangles must sit on one line.
fn broken_words(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js(
        "const broken = [];
         for (const box of document.querySelectorAll('button, summary, h1, h2, h3, th, .chip, dt')) {
           if (!box.getClientRects().length || box.closest('[hidden]')) continue;
           const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
           for (let node = walker.nextNode(); node; node = walker.nextNode()) {
             const words = /\\S+/g;
             let word;
             while ((word = words.exec(node.data))) {
               const range = document.createRange();
               range.setStart(node, word.index);
               range.setEnd(node, word.index + word[0].length);
               const lines = new Set(Array.from(range.getClientRects())
                 .filter(r => r.width > 0).map(r => Math.round(r.top)));
               if (lines.size > 1) broken.push((box.id || box.tagName) + ': ' + word[0]);
             }
           }
         }
         return broken;",
        vec![],
    ))
    .unwrap()
}

/// Requirement ids (like the spec's) in the page's visible text and in
/// the titles and labels a person may read.
fn no_rule_ids(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js(
        "const id = /\\b[A-Z]{2,6}-\\d+[a-z]?\\b/;
         const texts = [document.body.innerText, document.title];
         for (const e of document.querySelectorAll('[title], [aria-label], [placeholder]')) {
           texts.push(e.getAttribute('title') || '', e.getAttribute('aria-label') || '', e.getAttribute('placeholder') || '');
         }
         return texts.filter(t => id.test(t)).map(t => t.match(id)[0] + ' in ' + t.slice(0, 80));",
        vec![],
    ))
    .unwrap()
}

/// UI-9 at 360 px, and no id for people: no overflow, no broken word,
/// no id in the text shown.
fn holds(browser: &Browser, view: &str) {
    assert_eq!(overflowing(browser), Vec::<String>::new(), "UI-9: {view}");
    assert_eq!(broken_words(browser), Vec::<String>::new(), "UI-9: {view}");
    assert_eq!(no_rule_ids(browser), Vec::<String>::new(), "{view}");
}

/// Each control of the answer form, scrolled into view, is clear of the
/// sticky bar; the bar is low.
fn clear_of_the_bar(browser: &Browser, view: &str) {
    let hidden: Vec<String> = serde_json::from_value(browser.js(
        "const bar = document.getElementById('actions');
         const covered = [];
         for (const control of document.querySelectorAll('#questions input, #questions textarea, #questions button, #reject-reason')) {
           if (!control.getClientRects().length || control.closest('[hidden]')) continue;
           control.scrollIntoView({block: 'nearest'});
           if (control.getBoundingClientRect().bottom > bar.getBoundingClientRect().top + 1) {
             covered.push(control.id || control.className || control.tagName);
           }
         }
         return covered;",
        vec![],
    ))
    .unwrap();
    assert_eq!(hidden, Vec::<String>::new(), "UI-17: under the bar, {view}");
    let share = browser
        .js(
            "return document.getElementById('actions').offsetHeight / window.innerHeight;",
            vec![],
        )
        .as_f64()
        .unwrap();
    assert!(share <= 0.2, "UI-17: the bar takes {share:.2} of {view}");
}

/// UI-9, UI-17: the list, a question, a permission request with its
/// reject panel open, the settled panel, the attempts and "Answered", at
/// 360 × 657 (a phone) and at 1280 px: shot, and checked at 360.
fn ui_9_every_view_at_360_and_1280(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "phone", "alice");
    let (served, tokens) = served(db);
    let question = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"expires_in_ms": 3_600_000, "context": "Release **1.4** is built and tested."}),
    );
    let permission = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!({"kind": "permission", "questions": [{"title": "Run the migration", "prompt": "May I run `migrate --apply` on the production database?",
            "options": [{"label": "Allow", "description": "once"}, {"label": "Deny", "description": "not now"}]}]}),
    );
    let decided = ask_over_rest(&served, &tokens.system, &session, json!({}));
    settle_as(
        &served,
        &tokens.alice,
        &decided,
        "respond",
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "after the freeze"}]}),
    );
    settle_as(
        &served,
        &tokens.alice_bot,
        &decided,
        "respond",
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}),
    );
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "the two waiting", 2);
    let name = |view: &str, width: u32| format!("{view}-{width}-{}", backend(db));
    for width in [360, 1280] {
        viewport(&browser, width, if width == 360 { 657 } else { 900 });
        browser.js("document.getElementById('tab-waiting').click();", vec![]);
        browser.wait_visible("#waiting-panel");
        browser.screenshot(&name("links-inbox", width));
        if width == 360 {
            holds(&browser, "the list");
        }
        open(&browser, &question);
        browser.screenshot(&name("links-question", width));
        if width == 360 {
            holds(&browser, "a question");
            clear_of_the_bar(&browser, "a question");
        }
        browser.click("#close");
        browser.wait_visible("#inbox");
        open(&browser, &permission);
        browser.screenshot(&name("links-permission", width));
        if width == 360 {
            holds(&browser, "a permission request");
            clear_of_the_bar(&browser, "a permission request");
            let close_lines = browser
                .js(
                    "const b = document.getElementById('close');
                     return b.getBoundingClientRect().height / parseFloat(getComputedStyle(b).lineHeight);",
                    vec![],
                )
                .as_f64()
                .unwrap();
            assert!(close_lines < 2.0, "UI-9: \u{2190} Inbox on one line");
        }
        browser.click("#reject-open");
        browser.wait_visible("#reject-reason");
        browser.screenshot(&name("links-deny", width));
        if width == 360 {
            holds(&browser, "the deny panel");
            clear_of_the_bar(&browser, "the deny panel");
        }
        browser.click("#reject-open");
        browser.click("#close");
        browser.wait_visible("#inbox");
        browser.click("#tab-answered");
        browser.wait_visible(&format!("#history-list button[data-id='{decided}']"));
        browser.screenshot(&name("links-answered", width));
        if width == 360 {
            holds(&browser, "Answered");
        }
        browser.click(&format!("#history-list button[data-id='{decided}']"));
        browser.wait_visible("#settled");
        browser.click("#attempts summary");
        browser.wait_for(
            "the two attempts",
            "return document.querySelectorAll('#attempts-body tr').length === 2;",
        );
        browser.js("window.scrollTo(0, 0);", vec![]);
        browser.screenshot(&name("links-settled", width));
        browser.js(
            "document.getElementById('attempts').scrollIntoView();",
            vec![],
        );
        browser.screenshot(&name("links-attempts", width));
        if width == 360 {
            holds(&browser, "the settled panel and its attempts");
        }
        browser.click("#settled-close");
        browser.wait_visible("#inbox");
    }
}

/// UI-12, UI-18: alice answers through the page's API, then the same
/// answer through the command line, then her agent another answer. The
/// "Answered" list says what was decided (an answer's labels, a
/// rejection and its reason, a cancellation); the attempts view says
/// when to the second, what the winner chose in labels, the same or a
/// different answer for the others, and that alice's own earlier answer
/// won.
fn ui_12_attempts_to_the_second_and_what_each_sent(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "race", "alice");
    let (served, tokens) = served(db);
    let raced = ask_over_rest(&served, &tokens.system, &session, json!({}));
    let rejected = ask_over_rest(&served, &tokens.system, &session, json!({}));
    let cancelled = ask_over_rest(&served, &tokens.system, &session, json!({}));
    settle_as(
        &served,
        &tokens.alice,
        &raced,
        "respond",
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "x"}]}),
    );
    let again = db
        .via(Channel::Cli)
        .resolve_bundle(&Principal::user("alice"), &raced, &one_answer("x"))
        .unwrap();
    assert!(!again.claimed);
    settle_as(
        &served,
        &tokens.alice_bot,
        &raced,
        "respond",
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}),
    );
    settle_as(
        &served,
        &tokens.alice,
        &rejected,
        "respond",
        json!({"rejected": true, "reject_reason": "not this week"}),
    );
    settle_as(&served, &tokens.alice, &cancelled, "cancel", json!({}));

    sign_in(&browser, &served.base, &tokens.alice);
    browser.click("#tab-answered");
    browser.wait_for(
        "the three decided",
        "return document.querySelectorAll('#history-list button.bundle').length === 3;",
    );
    let decision =
        |id: &str| browser.text(&format!("#history-list button[data-id='{id}'] .decision"));
    assert_eq!(decision(&raced), "Staging \u{201c}x\u{201d}");
    assert_eq!(decision(&rejected), "Rejected: not this week");
    assert_eq!(decision(&cancelled), "Cancelled");

    browser.goto(&format!("{}/#/b/{raced}", served.base));
    browser.wait_visible("#settled");
    browser.click("#attempts summary");
    browser.wait_for(
        "three attempts",
        "return document.querySelectorAll('#attempts-body tr').length === 3;",
    );
    let rows: Vec<Vec<String>> = serde_json::from_value(browser.js(
        "return Array.from(document.querySelectorAll('#attempts-body tr'))
           .map(r => Array.from(r.cells).map(c => c.textContent));",
        vec![],
    ))
    .unwrap();
    let seconds = regex_lite_time();
    for row in &rows {
        assert!(seconds(&row[0]), "UI-12: the time to the second: {rows:?}");
    }
    // The ledger's order is its times', and the command line's call went
    // through the test's clock: the rows are found by door and who.
    let row = |door: &str, who: &str| {
        rows.iter()
            .find(|row| row[2] == door && row[1] == who)
            .unwrap_or_else(|| panic!("{who} through {door} in {rows:?}"))
    };
    let won = row("web or HTTP", "alice");
    assert_eq!(won[3], "won", "{rows:?}");
    assert_eq!(won[4], "Staging \u{201c}x\u{201d}", "{rows:?}");
    let again = row("command line", "alice");
    assert_eq!(
        again[3], "lost: your earlier answer through the web page or HTTP was first",
        "{rows:?}"
    );
    assert_eq!(again[4], "the same answer", "{rows:?}");
    let bot = row("web or HTTP", "agent bot of alice");
    assert_eq!(bot[3], "lost: alice was first", "{rows:?}");
    assert_eq!(bot[4], "a different answer", "{rows:?}");
    assert_eq!(no_rule_ids(&browser), Vec::<String>::new());
    browser.screenshot(&format!("attempts-words-{}", backend(db)));
}

/// Whether a text holds a time with seconds (`7:17:03`, `19:17:03`).
fn regex_lite_time() -> impl Fn(&str) -> bool {
    |text: &str| {
        let bytes: Vec<char> = text.chars().collect();
        bytes.windows(6).any(|w| {
            w[0].is_ascii_digit()
                && w[1] == ':'
                && w[2].is_ascii_digit()
                && w[3].is_ascii_digit()
                && w[4] == ':'
                && w[5].is_ascii_digit()
        })
    }
}

/// The page's static text for people — the HTML outside its comments and
/// tags' names, and the script's string literals — names no requirement
/// id (comments may: they are for the code's readers).
#[test]
fn the_page_text_names_no_requirement_id() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/doors/http/web");
    let mut found = Vec::new();
    let html = std::fs::read_to_string(dir.join("inbox.html")).unwrap();
    for text in html_text(&html) {
        found.extend(
            rule_ids(&text)
                .into_iter()
                .map(|id| format!("inbox.html: {id}")),
        );
    }
    let mut scripts = vec![dir.join("inbox.js")];
    for entry in std::fs::read_dir(dir.join("js")).unwrap() {
        scripts.push(entry.unwrap().path());
    }
    for script in scripts {
        let source = std::fs::read_to_string(&script).unwrap();
        for literal in string_literals(&source) {
            found.extend(
                rule_ids(&literal)
                    .into_iter()
                    .map(|id| format!("{}: {id} in {literal:?}", script.display())),
            );
        }
    }
    let css = std::fs::read_to_string(dir.join("inbox.css")).unwrap();
    for literal in string_literals(&css) {
        found.extend(
            rule_ids(&literal)
                .into_iter()
                .map(|id| format!("inbox.css: {id}")),
        );
    }
    assert_eq!(found, Vec::<String>::new());
    // The scanner finds what it looks for.
    // (Written in pieces: an id with a letter that docs/rules.md lacks.)
    let sample = format!("see UI-11 and {}-1a, not x{}-2 or UI-", "AUD", "UI");
    assert_eq!(
        rule_ids(&sample),
        vec!["UI-11".to_owned(), format!("{}-1a", "AUD")]
    );
    assert_eq!(
        string_literals("// 'UI-1'\nx = 'a UI-2' /* \"UI-3\" */"),
        vec!["a UI-2"]
    );
}

/// Words like `UI-11`, `OPS-1a`: two to six capitals, a dash, digits and
/// an optional small letter, on word boundaries.
fn rule_ids(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut ids = Vec::new();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        if (i == 0 || !word(chars[i - 1])) && chars[i].is_ascii_uppercase() {
            let mut j = i;
            while j < chars.len() && chars[j].is_ascii_uppercase() {
                j += 1;
            }
            let caps = j - i;
            if (2..=6).contains(&caps) && chars.get(j) == Some(&'-') {
                let mut k = j + 1;
                while k < chars.len() && chars[k].is_ascii_digit() {
                    k += 1;
                }
                if k > j + 1 {
                    if chars.get(k).is_some_and(|c| c.is_ascii_lowercase()) {
                        k += 1;
                    }
                    if k == chars.len() || !word(chars[k]) {
                        ids.push(chars[i..k].iter().collect());
                        i = k;
                        continue;
                    }
                }
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    ids
}

/// The text of an HTML document outside comments and tags, with its
/// attributes' values (titles, labels, placeholders).
fn html_text(html: &str) -> Vec<String> {
    let mut texts = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.split_once("-->").map_or("", |(_, tail)| tail);
        } else if rest.starts_with('<') {
            let (tag, tail) = rest.split_once('>').unwrap_or((rest, ""));
            texts.extend(string_literals(tag));
            rest = tail;
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            texts.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
    texts
}

/// The string literals of JavaScript or CSS source, outside its
/// comments (`//` lines and `/* */` blocks); template literals count.
fn string_literals(source: &str) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut literals = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            quote @ ('\'' | '"' | '`') => {
                let mut literal = String::new();
                i += 1;
                while i < chars.len() && chars[i] != quote {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if let Some(&c) = chars.get(i) {
                        literal.push(c);
                    }
                    i += 1;
                }
                i += 1;
                literals.push(literal);
            }
            _ => i += 1,
        }
    }
    literals
}
