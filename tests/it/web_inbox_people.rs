//! People on the page (PPL-1a, PPL-2): the signed-in user's name, names
//! instead of ids for who decided and in the attempts view, the line that
//! says who can answer an opened bundle, and a page that lists again when
//! a workspace's members change.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use clarion::{UserUpsert, WorkspaceUpsert};
use serde_json::json;

use crate::support::browser::{browser, Browser};
use crate::support::server::*;
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    ppl_1a_names_for_the_signed_in_user_who_decided_and_who_tried,
    ppl_1a_an_opened_bundle_says_who_can_answer_and_lists_again_on_new_members
);

fn name(db: &TestDb, user_id: &str, name: &str) {
    db.upsert_user(UserUpsert::new(user_id).name(name)).unwrap();
}

/// The requests recorded since [`record_requests`], reads included.
fn sent(browser: &Browser) -> Vec<String> {
    serde_json::from_value(browser.js("return window.__sent;", vec![])).unwrap()
}

/// PPL-1a: the header names the signed-in user (the id in its tooltip);
/// the settled panel names the person who decided, and the attempts view
/// who tried, by the directory's names — each read once, in one `people`
/// call — and an id the caller may not read a name for stays an id.
fn ppl_1a_names_for_the_signed_in_user_who_decided_and_who_tried(db: &TestDb) {
    let Some(browser) = browser() else { return };
    name(db, "alice", "Alice Liddell");
    name(db, "bob", "Bob <b>Builder</b>");
    // alice knows bob's name: they share w-team, which alice owns. Both
    // see w-shared, which nobody owns.
    db.upsert_workspace(WorkspaceUpsert::new("w-team").owner("alice"))
        .unwrap();
    db.set_members("w-team", &["bob".to_owned()]).unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-shared").owner(""))
        .unwrap();
    let bobs = ask(db, &session_in(db, "bobs", "w-shared", None), 1);
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    browser.wait_for(
        "the signed-in user's name",
        "return document.getElementById('who').textContent === 'Alice Liddell';",
    );
    assert_eq!(
        browser.js("return document.getElementById('who').title;", vec![]),
        json!("Signed in as user:alice")
    );
    open(&browser, &bobs);
    record_requests(&browser);
    let reply = send(
        client()
            .post(served.url(&format!("/api/v1/clarification/{bobs}/respond")))
            .bearer_auth(&tokens.bob)
            .json(&json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": ""}]})),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    browser.wait_visible("#settled");
    // The name is text: its markup stays literal.
    browser.wait_for(
        "who decided, by name",
        "return document.getElementById('settled-who').textContent === 'Bob <b>Builder</b>';",
    );
    assert_eq!(
        browser.js(
            "return document.querySelectorAll('#settled-who *').length;",
            vec![]
        ),
        json!(0)
    );
    browser.click("#attempts summary");
    browser.wait_for(
        "bob's attempt, by name",
        "return document.getElementById('attempts-body').textContent.includes('Bob <b>Builder</b>');",
    );
    // Each id's name is asked once this page load.
    let asked: Vec<String> = sent(&browser)
        .into_iter()
        .filter(|request| request.ends_with("/api/v1/rpc/people"))
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    browser.screenshot(&format!("people-decided-by-{}", backend(db)));

    // Signed out and in as bob: alice's names are gone with her; bob reads
    // his own, and alice's (w-team).
    browser.click("#sign-out");
    browser.wait_visible("#sign-in-form");
    assert_eq!(browser.text("#who"), "");
    sign_in(&browser, &served.base, &tokens.bob);
    browser.wait_for(
        "bob's name",
        "return document.getElementById('who').textContent === 'Bob <b>Builder</b>';",
    );
    // An agent is named as its user's.
    browser.click("#sign-out");
    browser.wait_visible("#sign-in-form");
    sign_in(&browser, &served.base, &tokens.alice_bot);
    browser.wait_for(
        "the agent, by its user's name",
        "return document.getElementById('who').textContent === 'agent bot of Alice Liddell';",
    );
}

/// PPL-1a, PPL-2: an opened bundle of a workspace with an owner says who
/// can answer it — the signed-in user first as "You", two more by name,
/// then how many others, the whole list on hover — and says nothing for a
/// bundle that reaches nobody (no owner). A `set_members` while the page
/// is open reaches it as a `workspace.members` event: the page lists
/// again and the line follows the new set.
fn ppl_1a_an_opened_bundle_says_who_can_answer_and_lists_again_on_new_members(db: &TestDb) {
    let Some(browser) = browser() else { return };
    name(db, "alice", "Alice Liddell");
    name(db, "bob", "Bob Builder");
    name(db, "erin", "Erin <img src=x>");
    let team = alice_asks(db, "team", 2);
    let open_to_all = {
        db.upsert_workspace(WorkspaceUpsert::new("w-open").owner(""))
            .unwrap();
        ask(db, &session_in(db, "open", "w-open", None), 1)
    };
    // carol is no one the directory knows: she is shown by her id.
    db.set_members("w-team", &["bob".to_owned(), "carol".to_owned()])
        .unwrap();
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    wait_listed(&browser, "both bundles", 2);

    open(&browser, &open_to_all);
    browser.wait_for(
        "who it reaches, read",
        &format!(
            "return document.getElementById('answer-reach').dataset.read === '{open_to_all}';"
        ),
    );
    assert!(
        !browser.visible("#answer-reach"),
        "a bundle nobody owns names nobody"
    );
    browser.click("#close");
    browser.wait_visible("#inbox");

    open(&browser, &team);
    browser.wait_for(
        "who can answer",
        "return document.getElementById('answer-reach').textContent === 'You, Bob Builder and carol can answer.';",
    );
    assert!(browser.visible("#answer-reach"));
    browser.screenshot(&format!("people-can-answer-desktop-{}", backend(db)));

    // New members while the page is open: it lists again, and the line
    // follows.
    record_requests(&browser);
    let members: Vec<String> = ["bob", "carol", "dave", "erin"].map(str::to_owned).to_vec();
    db.set_members("w-team", &members).unwrap();
    browser.wait_for(
        "the line to follow the new members",
        "return document.getElementById('answer-reach').textContent === 'You, Bob Builder and 3 others can answer.';",
    );
    assert_eq!(
        browser.js(
            "return document.getElementById('answer-reach').title;",
            vec![]
        ),
        json!("You, Bob Builder, carol, dave and Erin <img src=x>")
    );
    assert_eq!(
        browser.js(
            "return document.querySelectorAll('#answer-reach *').length;",
            vec![]
        ),
        json!(0),
        "names are text"
    );
    browser.wait_for(
        "the list read again",
        "return window.__sent.some(r => r.startsWith('GET ') && r.includes('/api/v1/clarification?'));",
    );
    browser.set_window_size(360, 740);
    browser.screenshot(&format!("people-can-answer-360-{}", backend(db)));
    assert_eq!(
        browser.js(
            "return document.documentElement.scrollWidth <= 360;",
            vec![]
        ),
        json!(true),
        "UI-9: nothing scrolls sideways"
    );
    browser.set_window_size(1280, 900);

    // Settled: who could answer no longer shows.
    browser.click(&option_box(1, 1));
    browser.click(&option_box(2, 1));
    browser.click("#submit");
    browser.wait_visible("#settled");
    assert!(!browser.visible("#answer-reach"));
}
