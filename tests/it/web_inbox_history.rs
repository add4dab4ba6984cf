//! What was decided and its context (UI-18, UI-19): the "Answered" view
//! and the settled panel (what, who — "you" —, when), names on cards and
//! in the answer view, times with their absolute value, and the safe
//! Markdown subset, rendered and inert.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10,
//! UI-22); see [`crate::web_inbox_support`].

use clarion::{AskRequest, OptionSpec, QuestionSpec, TaskUpsert, WorkspaceUpsert};
use serde_json::{json, Value};

use crate::support::browser::{browser, Browser};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

/// The decided ids the "Answered" view shows, in order.
fn decided(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js(
        "return Array.from(document.querySelectorAll('#history-list button.bundle')).map(b => b.dataset.id);",
        vec![],
    ))
    .unwrap()
}

/// A bundle in the shared (unowned) workspace `w-shared`, which alice and
/// bob both see.
fn shared_ask(db: &TestDb, name: &str) -> String {
    let session = session_in(db, name, "w-shared", None);
    ask(db, &session, 1)
}

fn respond_as(served: &Served, token: &str, pending_id: &str, text: &str) {
    let reply = send(
        client()
            .post(served.url(&format!("/api/v1/clarification/{pending_id}/respond")))
            .bearer_auth(token)
            .json(&json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"], "custom_text": text}]})),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
}

dual_backend!(
    ui_18_answered_view_and_settled_panel_you_and_another_user_absolute_time,
    ui_18_own_send_shows_the_panel_and_leads_on,
    ui_19_names_on_cards_and_time_titles,
    ui_19_markdown_rendered_and_inert
);

/// UI-18: "Answered" pages through what was decided, newest first, each
/// with its outcome, who decided ("you" for alice's own, another person
/// for bob's) and when (an absolute time on hover); it grows live; a
/// bundle opened from it shows the settled panel alone — what, who, when
/// — and leads back to it. The tabs are reachable by keyboard.
fn ui_18_answered_view_and_settled_panel_you_and_another_user_absolute_time(db: &TestDb) {
    let Some(browser) = browser() else { return };
    db.upsert_workspace(WorkspaceUpsert::new("w-shared").owner(""))
        .unwrap();
    let mine = shared_ask(db, "mine");
    let bobs = shared_ask(db, "bobs");
    let later = shared_ask(db, "later");
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "three bundles", 3);
    open(&browser, &mine);
    browser.click(&option_box(1, 1));
    browser.click("#submit");
    browser.wait_visible("#settled");
    browser.click("#settled-close");
    respond_as(&served, &tokens.bob, &bobs, "bob's");

    // The tabs: Arrow keys move between them.
    browser.js("document.getElementById('tab-waiting').focus();", vec![]);
    browser.press("\u{E014}"); // ArrowRight
    browser.wait_visible("#history-panel");
    assert_eq!(
        browser.js("return document.activeElement.id;", vec![]),
        json!("tab-answered")
    );
    assert!(!browser.visible("#waiting-panel"));
    browser.wait_for(
        "two decided bundles",
        "return document.querySelectorAll('#history-list button.bundle').length === 2;",
    );
    assert_eq!(
        decided(&browser),
        vec![bobs.clone(), mine.clone()],
        "newest first"
    );
    let card = |id: &str| browser.text(&format!("#history-list button[data-id='{id}']"));
    assert!(
        card(&mine).contains("Answered") && card(&mine).contains("by you"),
        "{}",
        card(&mine)
    );
    assert!(card(&bobs).contains("by another person"), "{}", card(&bobs));
    let year = stored(db, &bobs)["response"]["responded_at"]
        .as_str()
        .unwrap()[..4]
        .to_owned();
    let title = browser.js(
        "return document.querySelector(\"#history-list button[data-id='\" + arguments[0] + \"'] time\").title;",
        vec![json!(bobs)],
    );
    assert!(
        title.as_str().unwrap().contains(&year),
        "absolute on hover: {title}"
    );
    browser.screenshot(&format!("answered-desktop-{}", backend(db)));

    // It grows live: a bundle settled while it shows joins at its top.
    respond_as(&served, &tokens.bob, &later, "later");
    browser.wait_for(
        "the later decision at the top",
        &format!("return document.querySelector('#history-list button.bundle').dataset.id === '{later}';"),
    );
    assert_eq!(decided(&browser).len(), 3);

    // Opened from "Answered": the settled panel alone.
    browser.click(&format!("#history-list button[data-id='{bobs}']"));
    browser.wait_visible("#settled");
    assert!(
        !browser.visible("#answer-form"),
        "nothing can be sent from it"
    );
    assert_eq!(browser.text("#settled-heading"), "Answered");
    // PPL-1a: bob, whose name alice may not read (they share no owned
    // workspace), is named by his id.
    browser.wait_for(
        "who decided",
        "return document.getElementById('settled-who').textContent === 'bob';",
    );
    let when = browser.text("#settled-facts");
    assert!(when.contains(&year), "when, absolute: {when}");
    assert!(browser.text("#settled-answers").contains("No\n“bob's”"));
    browser.screenshot(&format!("settled-panel-desktop-{}", backend(db)));
    browser.set_window_size(360, 740);
    browser.screenshot(&format!("settled-panel-360-{}", backend(db)));
    assert_eq!(browser.text("#settled-close"), "Back to Answered");
    browser.click("#settled-close");
    browser.wait_visible("#history-panel");
    browser.screenshot(&format!("answered-360-{}", backend(db)));
    browser.set_window_size(1280, 900);

    browser.click(&format!("#history-list button[data-id='{mine}']"));
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-who"), "you");
}

/// UI-18, UI-21: this page's own winning send shows the settled panel
/// (who: "you"; when: the absolute time) rather than returning to the
/// list, says so, and leads on to the next waiting bundle.
fn ui_18_own_send_shows_the_panel_and_leads_on(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let first = alice_asks(db, "first", 1);
    let second = alice_asks(db, "second", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &first);
    browser.click(&option_box(1, 2));
    browser.type_into("#text-0", "with a note");
    browser.click("#submit");
    browser.wait_visible("#settled");
    assert_eq!(browser.text("#settled-heading"), "Answered");
    assert_eq!(browser.text("#settled-who"), "you");
    let answers = browser.text("#settled-answers");
    assert!(
        answers.contains("No") && answers.contains("with a note"),
        "{answers}"
    );
    let at = stored(db, &first)["response"]["responded_at"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        browser.js(
            "return document.querySelector('#settled-facts time').dateTime;",
            vec![]
        ),
        json!(at)
    );
    assert!(browser.visible("#settled-next"));
    browser.click("#settled-next");
    browser.wait_visible("#answer-form");
    // The form is the second bundle's: answering it stores there.
    browser.click(&option_box(1, 1));
    browser.click("#submit");
    browser.wait_visible("#settled");
    assert_eq!(stored(db, &second)["status"], "answered");
}

/// UI-19: cards and the answer view show the workspace's name and the
/// task's title (ids where they are unnamed); times are relative, with
/// the absolute date and time in the `<time>`'s title and for assistive
/// technology.
fn ui_19_names_on_cards_and_time_titles(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let named = alice_asks(db, "named", 1);
    db.upsert_workspace(WorkspaceUpsert::new("w-named").name("Payments"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-named").title("Add login"))
        .unwrap();
    let unnamed = alice_asks(db, "plain", 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "both", 2);
    let card = |id: &str| browser.text(&format!("#bundles button[data-id='{id}']"));
    assert!(
        card(&named).contains("Add login \u{b7} Payments"),
        "{}",
        card(&named)
    );
    assert!(
        card(&unnamed).contains("t-plain \u{b7} w-plain"),
        "{}",
        card(&unnamed)
    );
    let created = stored(db, &named)["created_at"]
        .as_str()
        .unwrap()
        .to_owned();
    let time: Value = browser.js(
        "const t = document.querySelector(\"#bundles button[data-id='\" + arguments[0] + \"'] time\");
         return [t.dateTime, t.title, t.querySelector('.visually-hidden').textContent, t.querySelector('.shown').textContent];",
        vec![json!(named)],
    );
    assert_eq!(time[0], json!(created));
    let absolute = time[1].as_str().unwrap();
    assert!(absolute.contains(&created[..4]), "{time}");
    assert!(
        time[2].as_str().unwrap().contains(absolute),
        "for assistive technology: {time}"
    );
    assert!(
        time[3].as_str().unwrap().contains("ago") || time[3] == json!("just now"),
        "{time}"
    );
    open(&browser, &named);
    let meta = browser.text("#answer-meta");
    assert!(
        meta.contains("Task: Add login") && meta.contains("Workspace: Payments"),
        "{meta}"
    );
    assert!(browser
        .js(
            "return document.querySelector('#answer-meta time').title;",
            vec![]
        )
        .as_str()
        .is_some_and(|title| title == absolute));
}

/// UI-19: prompts, option descriptions and context render the Markdown
/// subset as elements; `<script>` in a code span stays text, a
/// `javascript:` link is no link, an `https` link has `rel=noopener`;
/// 4,000 characters of adversarial input raise no script error, and the
/// renderer's time grows linearly (40,000 characters within 40× of 4,000).
fn ui_19_markdown_rendered_and_inert(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let prompt = "Ship **now** or _later_?\n\nSee `cargo <script>window.__pwned = 1</script>` and \
                  [the plan](https://example.com/plan), not [this](javascript:window.__pwned=2).\n\n\
                  - first\n- second\n\n1. one\n2. two\n\n```\nlet x = \"<b>\";\n```\n# not a heading\n\
                  ![img](https://example.com/x.png) <i>raw</i>";
    let pending = alice_asks_this(
        db,
        "markdown",
        AskRequest {
            questions: vec![QuestionSpec {
                question_id: Some("q1".into()),
                title: "Ship it?".into(),
                prompt: prompt.into(),
                multi_select: Some(false),
                options: vec![
                    OptionSpec {
                        option_id: Some("now".into()),
                        label: "**Now**".into(),
                        description: "Deploy with `make ship`".into(),
                    },
                    option("Later"),
                ],
            }],
            context: "Context with *emphasis* and a [link](http://example.org)".into(),
            ..AskRequest::default()
        },
    );
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    record_errors(&browser);
    open(&browser, &pending);
    let dom = browser.js(
        "const p = document.querySelector('#questions .prompt');
         return {
           strong: p.querySelector('strong')?.textContent,
           em: p.querySelector('em')?.textContent,
           code: p.querySelector('p code')?.textContent,
           links: Array.from(p.querySelectorAll('a')).map(a => [a.getAttribute('href'), a.rel, a.textContent]),
           lists: [p.querySelectorAll('ul li').length, p.querySelectorAll('ol li').length],
           pre: p.querySelector('pre code')?.textContent,
           scripts: document.querySelectorAll('main script, main img, main i, main b, main h1').length,
           text: p.textContent,
           label: document.querySelector('#questions .label').textContent,
           description: document.querySelector('#questions .description code')?.textContent,
           context: [document.querySelector('#answer-context em')?.textContent,
                     document.querySelector('#answer-context a')?.rel],
         };",
        vec![],
    );
    assert_eq!(dom["strong"], json!("now"));
    assert_eq!(dom["em"], json!("later"));
    assert_eq!(
        dom["code"],
        json!("cargo <script>window.__pwned = 1</script>")
    );
    assert_eq!(
        dom["links"],
        json!([[
            "https://example.com/plan",
            "noopener noreferrer",
            "the plan"
        ]])
    );
    assert_eq!(dom["lists"], json!([2, 2]));
    assert_eq!(dom["pre"], json!("let x = \"<b>\";"));
    assert_eq!(dom["scripts"], json!(0), "nothing became markup");
    let text = dom["text"].as_str().unwrap();
    for literal in [
        "[this](javascript:window.__pwned=2)",
        "# not a heading",
        "![img](https://example.com/x.png)",
        "<i>raw</i>",
    ] {
        assert!(
            text.contains(literal),
            "stays literal: {literal:?} in {text:?}"
        );
    }
    assert_eq!(dom["label"], json!("**Now**"), "labels stay plain text");
    assert_eq!(dom["description"], json!("make ship"));
    assert_eq!(dom["context"], json!(["emphasis", "noopener noreferrer"]));
    assert_eq!(
        browser.js("return window.__pwned === undefined;", vec![]),
        json!(true)
    );
    browser.screenshot(&format!("markdown-desktop-{}", backend(db)));

    // Adversarial input: 4,000 characters of unclosed and interleaved
    // delimiters, rendered by the page's own module.
    let measured = browser.js_async(
        "const done = arguments[arguments.length - 1];
         import('./js/markdown.js').then((m) => {
           const unit = '**a __b `c [d](e *f _g ``h ';
           const make = (n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
           // The fastest of five runs: a busy machine's pauses are not the
           // renderer's time.
           const time = (text) => {
             let best = Infinity;
             for (let i = 0; i < 5; i++) {
               const start = performance.now();
               document.createElement('div').append(m.renderMarkdown(text));
               best = Math.min(best, performance.now() - start);
             }
             return best;
           };
           time(make(4000));
           const small = time(make(4000));
           const large = time(make(40000));
           const host = document.createElement('div');
           host.append(m.renderMarkdown(make(4000)));
           done([small, large, host.textContent.length]);
         }, (error) => done(['failed', String(error)]));",
        vec![],
    );
    let small = measured[0].as_f64().unwrap_or(f64::NAN);
    let large = measured[1].as_f64().unwrap_or(f64::NAN);
    // Delimiters that pair up are consumed; all the text is there.
    assert!(
        measured[2].as_u64().is_some_and(|shown| shown > 3_000),
        "the text shown: {measured}"
    );
    assert!(
        large <= 40.0 * small.max(0.05),
        "linear: 4,000 chars in {small} ms, 40,000 in {large} ms"
    );
    assert_eq!(script_errors(&browser), Vec::<String>::new());
}
