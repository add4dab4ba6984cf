//! Honest text in the page (PROD-7): a link whose text names another
//! address shows where it really goes, and the bidirectional and
//! zero-width characters of names, labels, prompts, context and link text
//! show as visible markers, for display only.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use clarion::{TaskUpsert, WorkspaceUpsert};
use serde_json::{json, Value};

use crate::support::browser::browser;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(prod_7_honest_text_in_the_page);

const RLO: char = '\u{202E}';
const ZWSP: char = '\u{200B}';

/// PROD-7: a bundle asked over REST whose workspace name, task title,
/// question title, prompt, context and option labels hold U+202E and
/// U+200B, and whose prompt has a link whose text names another address.
/// The card and the answer view show the deceptive link's real target
/// (its text and its href read from the DOM), leave honest links as they
/// are, show every hidden character as a visible marker and none raw,
/// keep the joiners of an emoji and of Persian, and the API still serves
/// what was stored, unchanged.
fn prod_7_honest_text_in_the_page(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let session = mirror(db, "honest", "alice");
    let workspace_name = format!("WS{RLO}cod.exe");
    let task_title = format!("Deploy{ZWSP}prod");
    db.upsert_workspace(WorkspaceUpsert::new("w-honest").name(&workspace_name))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-honest").title(&task_title))
        .unwrap();
    let title = format!("Ship{RLO}gnp.exe?");
    let prompt = format!(
        "Before{ZWSP} you ship, check [https://good.example](https://evil.example) \
         and the [docs](https://docs.example).\n\n\
         Honest: [https://docs.example/guide](https://docs.example/guide) and \
         [docs.example](https://docs.example/guide)."
    );
    let context =
        format!("Asked by the {RLO}bot: see [good.example/login](https://evil.example/login)");
    let yes = format!("Ye{ZWSP}s{RLO}");
    let later = "Later \u{1F469}\u{200D}\u{1F4BB}";
    let persian = "Persian: \u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}";
    let (served, tokens) = served(db);
    let pending = ask_over_rest(
        &served,
        &tokens.system,
        &session,
        json!([{
            "question_id": "q1",
            "title": title,
            "prompt": prompt,
            "multi_select": false,
            "options": [
                {"option_id": "yes", "label": yes, "description": "Ship it now."},
                {"option_id": "later", "label": later, "description": persian},
            ],
        }]),
        json!({"context": context}),
    );

    browser.set_window_size(1280, 900);
    sign_in(&browser, &served.base, &tokens.alice);
    record_errors(&browser);
    wait_listed(&browser, "the bundle", 1);

    // The card: names, title, context and the prompt's first words.
    let card = browser.js(
        "const card = document.querySelector(\"#bundles button[data-id='\" + arguments[0] + \"']\");
         const markers = Array.from(card.querySelectorAll('.hidden-char'));
         return {
           text: card.textContent,
           place: card.querySelector('.place').textContent,
           title: card.querySelector('.title').textContent,
           context: card.querySelector('.context').textContent,
           prompt: card.querySelector('.prompt-line').textContent,
           markers: markers.map(m => [m.textContent, m.title, m.getBoundingClientRect().width > 0]),
           links: card.querySelectorAll('a').length,
         };",
        vec![json!(pending)],
    );
    no_raw_controls("the card", &card["text"]);
    assert_eq!(
        card["place"],
        json!("Deploy\u{27e8}U+200B\u{27e9}prod \u{b7} WS\u{27e8}U+202E\u{27e9}cod.exe"),
        "{card}"
    );
    assert_eq!(
        card["title"],
        json!("Ship\u{27e8}U+202E\u{27e9}gnp.exe?"),
        "{card}"
    );
    assert_eq!(
        card["context"],
        json!(
            "Asked by the \u{27e8}U+202E\u{27e9}bot: see good.example/login \
             (goes to https://evil.example/login)"
        ),
        "{card}"
    );
    let prompt_line = card["prompt"].as_str().unwrap();
    assert!(
        prompt_line.starts_with(
            "Before\u{27e8}U+200B\u{27e9} you ship, check https://good.example \
             (goes to https://evil.example/) and the docs."
        ),
        "{card}"
    );
    let markers = card["markers"].as_array().unwrap();
    assert!(markers.len() >= 5, "{card}");
    assert!(
        markers.iter().all(|marker| marker[2] == json!(true)
            && marker[1]
                .as_str()
                .unwrap()
                .starts_with("A hidden character: ")),
        "every marker is visible and named: {card}"
    );
    assert!(markers.contains(&json!([
        "\u{27e8}U+202E\u{27e9}",
        "A hidden character: right-to-left override",
        true
    ])));
    assert_eq!(card["links"], json!(0), "a card holds no links");
    browser.screenshot(&format!("honest-list-1280-{}", backend(db)));
    browser.set_window_size(360, 740);
    assert_fits(&browser);
    browser.screenshot(&format!("honest-list-360-{}", backend(db)));
    browser.set_window_size(1280, 900);

    open(&browser, &pending);
    let view = browser.js(
        "const text = (css) => document.querySelector(css).textContent;
         const links = (css) => Array.from(document.querySelectorAll(css + ' a')).map(a =>
           [a.getAttribute('href'), a.href, a.textContent, a.querySelector('.real-target')?.textContent ?? null]);
         return {
           text: text('#answer'),
           heading: text('#answer-heading'),
           meta: text('#answer-meta'),
           labels: Array.from(document.querySelectorAll('#questions .label')).map(l => l.textContent),
           descriptions: Array.from(document.querySelectorAll('#questions .description')).map(d => d.textContent),
           group: document.querySelector('#questions [role=radiogroup]').getAttribute('aria-label'),
           prompt: links('#questions .prompt'),
           context: links('#answer-context'),
           markers: Array.from(document.querySelectorAll('#answer .hidden-char'))
             .map(m => m.getBoundingClientRect().width > 0),
         };",
        vec![],
    );
    no_raw_controls("the answer view", &view["text"]);
    no_raw_controls("the group's name", &view["group"]);
    assert_eq!(view["heading"], json!("Ship\u{27e8}U+202E\u{27e9}gnp.exe?"));
    let meta = view["meta"].as_str().unwrap();
    assert!(
        meta.contains("Task: Deploy\u{27e8}U+200B\u{27e9}prod")
            && meta.contains("Workspace: WS\u{27e8}U+202E\u{27e9}cod.exe"),
        "{meta}"
    );
    assert_eq!(
        view["labels"],
        json!(["Ye\u{27e8}U+200B\u{27e9}s\u{27e8}U+202E\u{27e9}", later]),
        "a joiner inside an emoji stays: it shows as one picture"
    );
    assert_eq!(
        view["descriptions"],
        json!(["Ship it now.", persian]),
        "Persian's non-joiner between its letters stays"
    );
    assert_eq!(view["group"], json!("Ship\u{27e8}U+202E\u{27e9}gnp.exe?"));
    assert_eq!(
        view["prompt"],
        json!([
            [
                "https://evil.example",
                "https://evil.example/",
                "https://good.example (goes to https://evil.example/)",
                "(goes to https://evil.example/)"
            ],
            [
                "https://docs.example",
                "https://docs.example/",
                "docs",
                null
            ],
            [
                "https://docs.example/guide",
                "https://docs.example/guide",
                "https://docs.example/guide",
                null
            ],
            [
                "https://docs.example/guide",
                "https://docs.example/guide",
                "docs.example",
                null
            ],
        ]),
        "the deceptive link shows its real target; the honest ones are unchanged"
    );
    assert_eq!(
        view["context"],
        json!([[
            "https://evil.example/login",
            "https://evil.example/login",
            "good.example/login (goes to https://evil.example/login)",
            "(goes to https://evil.example/login)"
        ]])
    );
    let markers = view["markers"].as_array().unwrap();
    assert!(
        markers.len() >= 6 && markers.iter().all(|shown| shown == &json!(true)),
        "{view}"
    );
    browser.screenshot(&format!("honest-answer-1280-{}", backend(db)));
    browser.set_window_size(360, 740);
    assert_fits(&browser);
    browser.screenshot(&format!("honest-answer-360-{}", backend(db)));
    assert_eq!(script_errors(&browser), Vec::<String>::new());

    // Stored unchanged: the API serves what was asked, controls and all.
    let read = get_at(
        &served,
        &tokens.alice,
        &format!("/api/v1/clarification/{pending}"),
    );
    assert_eq!(read.status, 200, "{}", read.body);
    let bundle = read.json();
    assert_eq!(bundle["workspace_name"], json!(workspace_name));
    assert_eq!(bundle["task_title"], json!(task_title));
    assert_eq!(bundle["context"], json!(context));
    let question = &bundle["questions"][0];
    assert_eq!(question["title"], json!(title));
    assert_eq!(question["prompt"], json!(prompt));
    assert_eq!(question["options"][0]["label"], json!(yes));
    assert_eq!(question["options"][1]["label"], json!(later));
    assert_eq!(question["options"][1]["description"], json!(persian));
}

/// No bidirectional or zero-width control character is left in `text`
/// (the emoji's and Persian's joiners aside, which the test puts where
/// they do a visible job).
fn no_raw_controls(what: &str, text: &Value) {
    let text = text.as_str().unwrap_or_else(|| panic!("{what}: {text}"));
    let raw: Vec<String> = text
        .chars()
        .filter(|c| {
            matches!(
                c,
                '\u{061C}' | '\u{200B}' | '\u{200E}' | '\u{200F}' | '\u{2060}' | '\u{FEFF}'
            ) || ('\u{202A}'..='\u{202E}').contains(c)
                || ('\u{2066}'..='\u{2069}').contains(c)
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(raw.is_empty(), "{what} shows {raw:?} raw: {text:?}");
}

/// UI-9: nothing scrolls sideways at this width.
fn assert_fits(browser: &crate::support::browser::Browser) {
    let widths = browser.js(
        "return [document.documentElement.scrollWidth, window.innerWidth];",
        vec![],
    );
    assert!(
        widths[0].as_u64() <= widths[1].as_u64(),
        "scrolls sideways: {widths}"
    );
}
