//! A quorum bundle on the page (QUO-8): what it needs and where it
//! stands, by name; "Same as …" copying a vote exactly; the form locked
//! after a vote, with the announcement; the card marked; votes appearing
//! live; and the voters on the settled panel. Two people in two browsers.
//!
//! The web inbox in a real browser (headless Chromium over WebDriver)
//! against `clarion serve` as a real process, on both backends (UI-10);
//! see [`crate::web_inbox_support`].

use clarion::{AskRequest, OptionSpec, QuestionSpec, QuorumRequest, UserUpsert};
use serde_json::json;

use crate::support::browser::{browser, keys, two_browsers, Browser};
use crate::support::*;
use crate::web_inbox_support::*;

dual_backend!(
    quo_8_two_people_vote_in_two_browsers,
    quo_8_refusals_are_said_and_lock_the_form
);

fn choice(id: &str, label: &str, description: &str) -> OptionSpec {
    OptionSpec {
        option_id: Some(id.into()),
        label: label.into(),
        description: description.into(),
    }
}

/// The text of the element `css` has, `""` if none.
fn text_of(browser: &Browser, css: &str) -> String {
    let script =
        format!("const e = document.querySelector(\"{css}\"); return e ? e.textContent : '';");
    browser
        .js(&script, vec![])
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Where to deploy, asked on alice's workspace `w-<name>` (bob a member)
/// with `quorum`, two approvals.
fn ask_quorum(db: &TestDb, name: &str, quorum: QuorumRequest) -> String {
    let session = mirror(db, name, "alice");
    db.set_members(&format!("w-{name}"), &["bob".to_owned()])
        .unwrap();
    db.ask(&AskRequest {
        session_id: session,
        context: "Release 4.2 is ready.".into(),
        questions: vec![QuestionSpec {
            question_id: Some("env".into()),
            title: "Where to deploy".into(),
            prompt: "Which environment gets 4.2?".into(),
            multi_select: Some(false),
            options: vec![
                choice("staging", "Staging", "The team tries it first."),
                choice("prod", "Production", "Everyone gets it now."),
            ],
        }],
        quorum: Some(QuorumRequest {
            approvals: 2,
            ..quorum
        }),
        ..AskRequest::default()
    })
    .unwrap()
    .pending_id
}

/// QUO-8: alice's workspace with bob as a member; an agent asks where to
/// deploy with a quorum of two approvals. Alice votes "Staging" with a
/// note: the announcement says one more is needed, her form locks (also
/// when she opens it again, from `get_bundle`), her card says "You
/// voted", and nothing more can be sent. Bob, who had it open, sees her
/// vote appear by name; "Same as Alice Liddell" copies her choice and
/// note exactly, and his vote decides. Both settled panels list both
/// voters by name, and the stored resolution is the quorum's.
fn quo_8_two_people_vote_in_two_browsers(db: &TestDb) {
    let Some((alice, bob)) = two_browsers() else {
        return;
    };
    db.upsert_user(UserUpsert::new("alice").name("Alice Liddell"))
        .unwrap();
    db.upsert_user(UserUpsert::new("bob").name("Bob Builder"))
        .unwrap();
    let pending = ask_quorum(db, "vote", QuorumRequest::default());
    let (served, tokens) = served(db);
    let base = backend(db);
    sign_in(&alice, &served.base, &tokens.alice);
    sign_in(&bob, &served.base, &tokens.bob);
    open(&bob, &pending);
    open(&alice, &pending);
    for person in [&alice, &bob] {
        person.wait_for(
            "what it needs",
            "return document.getElementById('quorum-need').textContent === '2 approvals needed \u{b7} no votes yet \u{b7} one rejection decides';",
        );
    }
    assert!(
        text_of(&alice, "#reject-help").starts_with("One rejection decides"),
        "Reject says one rejection decides"
    );

    // Alice votes: her own vote, said as such (UI-6), and one more needed.
    record_announcements(&alice);
    record_requests(&alice);
    alice.click(&option_box(1, 1));
    alice.type_into("#text-0", "ship it");
    alice.click("#submit");
    alice.wait_for(
        "the announcement of her vote",
        "return window.__said.includes('Your vote was recorded; 1 more needed');",
    );
    let said = announcements(&alice);
    assert!(!said.iter().any(|s| s.contains("Someone else")), "{said:?}");
    // Null-safe: the page re-renders while it is polled.
    let locked = "const f = document.querySelector('#questions fieldset.question');
         const mine = document.querySelector('#quorum-votes li.mine');
         return f !== null && f.disabled && document.getElementById('submit').hidden
           && document.getElementById('reject-open').hidden
           && !document.getElementById('quorum-state').hidden
           && mine !== null && mine.textContent.includes('You approved')
           && mine.textContent.includes('Staging');";
    alice.wait_for("the form locked, her vote shown", locked);
    // Locked: the keys send nothing either.
    alice.chord(keys::CONTROL, keys::ENTER);
    assert_eq!(
        writes(&alice),
        vec![format!(
            "POST {}/api/v1/clarification/{pending}/respond",
            served.base
        )]
    );
    // Her card says she voted; opened again, it is locked from get_bundle.
    alice.click("#close");
    alice.wait_for(
        "her card marked",
        &format!("const c = document.querySelector(\"#bundles button[data-id='{pending}'] .you-voted\"); return c && !c.hidden;"),
    );
    open(&alice, &pending);
    alice.wait_for("the form locked again", locked);
    screenshots(&alice, &format!("quorum-voted-{base}"));

    // Bob sees her vote live, copies it exactly and votes.
    let hers = "#quorum-votes li[data-user='alice']";
    bob.wait_for(
        "alice's vote, live",
        &format!("const v = document.querySelector(\"{hers}\"); return v && v.textContent.includes('Alice Liddell approved') && v.textContent.includes('Staging \u{201c}ship it\u{201d}');"),
    );
    assert!(
        bob.visible("#quorum-warning"),
        "a different note is a different answer"
    );
    screenshots(&bob, &format!("quorum-vote-{base}"));
    assert_eq!(
        text_of(&bob, &format!("{hers} button.same")),
        "Same as Alice Liddell"
    );
    bob.click(&format!("{hers} button.same"));
    assert_eq!(
        bob.js(
            &format!("return [document.querySelector(\"{}\").checked, document.getElementById('text-0').value];", option_box(1, 1)),
            vec![]
        ),
        json!([true, "ship it"])
    );
    bob.click("#submit");
    bob.wait_visible("#settled");

    // Both settled panels list both voters, by name.
    for (person, voters) in [
        (&bob, "Alice Liddell and Bob Builder (you)"),
        (&alice, "Alice Liddell (you) and Bob Builder"),
    ] {
        person.wait_visible("#settled");
        person.wait_for(
            "the voters",
            &format!(
                "return document.getElementById('settled-voters').textContent === '{voters}';"
            ),
        );
        person.wait_for(
            "who decided: the quorum, with this person",
            "return document.getElementById('settled-who').textContent === 'a quorum, you among its voters';",
        );
        assert!(
            !person.visible("#quorum"),
            "the votes' standing leaves with the form"
        );
    }
    screenshots(&alice, &format!("quorum-settled-{base}"));
    let stored = stored(db, &pending);
    assert_eq!(stored["status"], json!("answered"));
    assert_eq!(stored["response"]["decided_by"], json!("quorum"));
    assert_eq!(stored["response"]["voters"], json!(["alice", "bob"]));
    assert_eq!(
        stored["response"]["answers"][0]["custom_text"],
        json!("ship it")
    );
}

/// QUO-3, QUO-8: a vote the server refuses is said, nothing is recorded
/// for it, and the form locks. Alice's other tab votes "Production" in
/// the same turn of the page's event loop as she sends "Staging" (so no
/// event of it reached the page first): `409 already_voted` is said, and
/// her recorded vote shows in the locked form. A bundle asked on her
/// behalf opens locked, saying why, with nothing to send.
fn quo_8_refusals_are_said_and_lock_the_form(db: &TestDb) {
    let Some(browser) = browser() else { return };
    let pending = ask_quorum(db, "refuse", QuorumRequest::default());
    let for_her = ask_quorum(
        db,
        "behalf",
        QuorumRequest {
            requested_by: "alice".into(),
            ..QuorumRequest::default()
        },
    );
    let (served, tokens) = served(db);
    sign_in(&browser, &served.base, &tokens.alice);
    open(&browser, &pending);
    browser.wait_visible("#quorum");
    browser.click(&option_box(1, 1));
    let other_tab = browser.js(
        "const request = new XMLHttpRequest();
         request.open('POST', 'api/v1/clarification/' + arguments[0] + '/respond', false);
         request.setRequestHeader('Content-Type', 'application/json');
         request.send(JSON.stringify({answers: [{question_id: 'env', selected_options: ['prod'], custom_text: ''}]}));
         document.getElementById('submit').click();
         return request.status;",
        vec![json!(pending)],
    );
    assert_eq!(other_tab, json!(200));
    browser.wait_for(
        "the refusal, said",
        "return document.getElementById('answer-error').textContent === 'Nothing was recorded: you already voted on this request otherwise, and a vote cannot be changed.';",
    );
    browser.wait_for(
        "the form locked on her recorded vote",
        &format!(
            "const mine = document.querySelector('#quorum-votes li.mine');
             const set = document.querySelector('#questions fieldset.question');
             const chosen = document.querySelector(\"{}\");
             return set !== null && set.disabled && chosen !== null && chosen.checked
               && mine !== null && mine.textContent.includes('Production');",
            option_box(1, 2)
        ),
    );
    let stored = stored(db, &pending);
    assert_eq!(stored["status"], json!("pending"));
    let votes = stored["quorum"]["votes"].as_array().unwrap();
    assert_eq!(votes.len(), 1, "{votes:?}");
    assert_eq!(votes[0]["answers"][0]["selected_options"], json!(["prod"]));

    browser.click("#close");
    open(&browser, &for_her);
    browser.wait_for(
        "why she may not vote",
        "return document.getElementById('quorum-state').textContent === 'You may not vote on this request: it was asked on your behalf, and others decide.';",
    );
    assert!(!browser.visible("#submit") && !browser.visible("#reject-open"));
}
