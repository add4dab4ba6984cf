//! LINK-1, LINK-3, LINK-5, PPL-8 below the HTTP door, on both backends:
//! minting (who, for how long, where), a link's one use in the win's or
//! the vote's transaction, `410` before any loser branch, a loser's link
//! left unused, a barrier race between a link and a normal answer,
//! expiry, rotation, a removed member's links, the channel, pruning, and
//! who mail and relay links go to.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use clarion::test_hooks::{self, schema::link_uses};
use clarion::{
    Channel, Error, ErrorCode, Expiry, Principal, QuorumRequest, Resolved, UserUpsert,
    WorkspaceUpsert,
};
use diesel::prelude::*;
use serde_json::{json, Value};

use crate::doors_json_support::{refused, SYSTEM};
use crate::nudges::at;
use crate::quorum::approve;
use crate::support::*;

const TEAM: &str = "w-linked";
const SECOND: i64 = 1_000_000;
const HOUR: i64 = 3600 * SECOND;

dual_backend!(
    link_1_a_link_is_relative_without_a_public_url_and_absolute_with_one,
    link_1_a_link_ends_at_the_earlier_of_its_ttl_and_the_deadline,
    link_1_only_a_user_who_sees_the_bundle_gets_a_link,
    link_1_refusals_name_their_field,
    link_1_a_derived_link_is_the_same_for_one_event_and_person,
    link_3_a_link_answers_once_then_410,
    link_3_a_losing_link_is_told_the_winner_and_stays_unused,
    link_3_a_vote_through_a_link_uses_it_up,
    link_3_a_link_and_a_normal_answer_raced_give_one_winner,
    link_3_a_link_past_its_time_does_not_verify,
    link_3_a_link_cancels_through_the_claim,
    link_5_rotation_keeps_old_links_for_a_week_unless_now,
    link_5_a_removed_member_can_no_longer_use_a_link,
    link_5_a_link_reaches_its_bundle_only,
    link_5_channel_link_cannot_be_chosen_by_a_handle,
    link_5_prune_drops_uses_whose_links_ended,
    ppl_8_recipients_are_reached_people_in_the_directory_who_may_act,
);

/// `w-linked` owned by olga, with alice and bob as members, all three in
/// the directory; a running session there.
fn team(db: &TestDb) -> String {
    db.upsert_workspace(WorkspaceUpsert::new(TEAM).owner("olga"))
        .unwrap();
    db.set_members(TEAM, &["alice".to_owned(), "bob".to_owned()])
        .unwrap();
    for (id, name) in [("olga", "Olga"), ("alice", "Alice"), ("bob", "Bob")] {
        db.upsert_user(
            UserUpsert::new(id)
                .name(name)
                .email(&format!("{id}@example.com")),
        )
        .unwrap();
    }
    session_in(db, "linked", TEAM, Some(true))
}

fn ask_one(db: &TestDb, session: &str) -> String {
    db.ask(&ask_request(session, 1)).unwrap().pending_id
}

/// The token of a link URL.
fn token(url: &str) -> String {
    url.rsplit_once("/a/").expect("a link URL").1.to_owned()
}

fn mint(db: &TestDb, pending_id: &str, user: &str) -> String {
    token(&db.answer_link(pending_id, user, None).unwrap().url)
}

/// What the link door answered, the token having verified.
fn through_link(db: &TestDb, token: &str) -> Result<Resolved, Error> {
    test_hooks::link_respond(db, token, &approve(1, ""))
        .unwrap()
        .expect("the token verifies")
}

fn ledger(db: &TestDb, pending_id: &str) -> Vec<(String, String, String)> {
    db.attempts(&Principal::System, pending_id)
        .unwrap()
        .into_iter()
        .map(|attempt| {
            let raw = serde_json::to_value(&attempt).unwrap();
            let word = |key: &str| raw[key].as_str().unwrap_or_default().to_owned();
            (word("user_id"), word("channel"), word("outcome"))
        })
        .collect()
}

fn uses(db: &TestDb) -> i64 {
    db.raw(|conn| link_uses::table.count().get_result(conn).unwrap())
}

fn link_1_a_link_is_relative_without_a_public_url_and_absolute_with_one(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let link = db.answer_link(&pending_id, "alice", None).unwrap();
    assert!(link.url.starts_with("/a/v1."), "{}", link.url);
    let public = db
        .builder()
        .public_url("https://inbox.example.com/")
        .open()
        .unwrap();
    let url = public.answer_link(&pending_id, "alice", None).unwrap().url;
    assert!(url.starts_with("https://inbox.example.com/a/v1."), "{url}");
    // The raw reply: `url` then `expires_at`, a day after now.
    let (status, text) = refused(
        db,
        "answer_link",
        SYSTEM,
        json!({"pending_id": pending_id, "user_id": "bob"}),
    );
    assert_eq!(status, 200, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["url", "expires_at"], "{body}");
    assert_eq!(
        body["expires_at"],
        crate::nudges::stamp(24 * HOUR),
        "a day by default"
    );
    for bad in [
        "ftp://x",
        "inbox.example.com",
        "https://",
        "https://a b",
        "https://x/?q",
    ] {
        assert!(
            db.builder().public_url(bad).open().is_err(),
            "{bad}: a public URL that is not absolute http(s) fails the open"
        );
    }
}

fn link_1_a_link_ends_at_the_earlier_of_its_ttl_and_the_deadline(db: &TestDb) {
    let session = team(db);
    let mut request = ask_request(&session, 1);
    request.expires = Some(Expiry::In(Duration::from_secs(2 * 3600)));
    let pending_id = db.ask(&request).unwrap().pending_id;
    let short = db
        .answer_link(&pending_id, "alice", Some(Duration::from_secs(3600)))
        .unwrap();
    assert_eq!(short.expires_at.as_micros(), EPOCH.as_micros() + HOUR);
    let long = db
        .answer_link(&pending_id, "alice", Some(Duration::from_secs(5 * 3600)))
        .unwrap();
    assert_eq!(long.expires_at.as_micros(), EPOCH.as_micros() + 2 * HOUR);
    // Past the deadline's time the POST does not verify, the page still
    // opens (a late person sees the outcome) until the link's end.
    let token = token(&long.url);
    at(db, 2 * HOUR);
    assert!(test_hooks::link_respond(db, &token, &approve(1, ""))
        .unwrap()
        .is_none());
    assert!(test_hooks::link_bundle(db, &token).unwrap().is_some());
    at(db, 5 * HOUR);
    assert!(test_hooks::link_bundle(db, &token).unwrap().is_none());
}

fn link_1_only_a_user_who_sees_the_bundle_gets_a_link(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    assert!(matches!(
        db.answer_link(&pending_id, "mallory", None),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        db.answer_link("no-such-bundle", "alice", None),
        Err(Error::NotFound(_))
    ));
}

fn link_1_refusals_name_their_field(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    for ttl in [59_999, 604_800_001] {
        let (status, text) = refused(
            db,
            "answer_link",
            SYSTEM,
            json!({"pending_id": pending_id, "user_id": "alice", "ttl_ms": ttl}),
        );
        assert_eq!(status, 400, "{text}");
        assert!(text.contains("ttl_ms"), "{text}");
    }
    let long_user = "u".repeat(600);
    assert!(matches!(
        db.answer_link(&pending_id, &long_user, None),
        Err(Error::NotFound(_)) | Err(Error::Validation(_))
    ));
    // AUTH-2, section 25: system only.
    let olga = r#"{"kind":"user","user_id":"olga"}"#;
    let args = json!({"pending_id": pending_id, "user_id": "alice"});
    assert_eq!(refused(db, "answer_link", olga, args).0, 403);
    assert_eq!(refused(db, "rotate_link_key", olga, json!({})).0, 403);
}

fn link_1_a_derived_link_is_the_same_for_one_event_and_person(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let derive = |position: &str, user: &str| {
        test_hooks::derived_link(db, &pending_id, position, EPOCH, user).unwrap()
    };
    assert_eq!(derive("7", "alice"), derive("7", "alice"));
    assert_ne!(derive("7", "alice").url, derive("7", "bob").url);
    assert_ne!(derive("7", "alice").url, derive("8", "alice").url);
    // It works like any link, once.
    let token = token(&derive("7", "alice").url);
    assert!(through_link(db, &token).unwrap().claimed);
}

fn link_3_a_link_answers_once_then_410(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let token = mint(db, &pending_id, "alice");
    let won = through_link(db, &token).unwrap();
    assert!(won.claimed);
    let again = through_link(db, &token).unwrap_err();
    assert!(matches!(again, Error::LinkUsed));
    assert_eq!(again.code(), ErrorCode::LinkUsed);
    assert_eq!(again.http_status(), 410);
    assert_eq!(again.to_string(), "link already used");
    // A cancel with the used link is told the same.
    let cancel = test_hooks::link_cancel(db, &token).unwrap().unwrap();
    assert!(matches!(cancel, Err(Error::LinkUsed)));
    assert_eq!(
        ledger(db, &pending_id),
        [
            ("alice".into(), "link".into(), "won".into()),
            ("alice".into(), "link".into(), "link_used".into()),
            ("alice".into(), "link".into(), "link_used".into()),
        ]
    );
    assert_eq!(uses(db), 1);
}

fn link_3_a_losing_link_is_told_the_winner_and_stays_unused(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let token = mint(db, &pending_id, "alice");
    db.resolve_bundle(&Principal::user("bob"), &pending_id, &approve(2, "bob's"))
        .unwrap();
    for _ in 0..2 {
        let lost = through_link(db, &token).unwrap();
        assert!(!lost.claimed);
        assert_eq!(lost.response.answers[0].selected_options, ["q1_opt2"]);
    }
    assert_eq!(uses(db), 0, "a losing link is not used up");
}

fn link_3_a_vote_through_a_link_uses_it_up(db: &TestDb) {
    let session = team(db);
    let mut request = ask_request(&session, 1);
    request.quorum = Some(QuorumRequest {
        approvals: 2,
        ..QuorumRequest::default()
    });
    let pending_id = db.ask(&request).unwrap().pending_id;
    let token = mint(db, &pending_id, "alice");
    let voted = through_link(db, &token).unwrap();
    assert!(!voted.claimed);
    assert_eq!(voted.quorum.unwrap().votes.len(), 1);
    assert!(matches!(through_link(db, &token), Err(Error::LinkUsed)));
    // Bob's link decides it.
    let bob = mint(db, &pending_id, "bob");
    assert!(through_link(db, &bob).unwrap().claimed);
    assert_eq!(uses(db), 2);
}

fn link_3_a_link_and_a_normal_answer_raced_give_one_winner(db: &TestDb) {
    let session = team(db);
    for _ in 0..4 {
        let pending_id = ask_one(db, &session);
        let token = mint(db, &pending_id, "alice");
        let barrier = Arc::new(Barrier::new(2));
        let (linked, normal) = std::thread::scope(|scope| {
            let linked = scope.spawn(|| {
                barrier.wait();
                through_link(db, &token).unwrap()
            });
            let normal = scope.spawn(|| {
                barrier.wait();
                db.resolve_bundle(&Principal::user("bob"), &pending_id, &approve(2, ""))
                    .unwrap()
            });
            (linked.join().unwrap(), normal.join().unwrap())
        });
        assert!(linked.claimed ^ normal.claimed, "exactly one winner");
        assert_eq!(
            linked.response, normal.response,
            "the loser is told the winner"
        );
    }
}

fn link_3_a_link_past_its_time_does_not_verify(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let link = db
        .answer_link(&pending_id, "alice", Some(Duration::from_secs(60)))
        .unwrap();
    let token = token(&link.url);
    at(db, 60 * SECOND - 1);
    assert!(test_hooks::link_page_opens(db, &token).unwrap());
    at(db, 60 * SECOND);
    assert!(!test_hooks::link_page_opens(db, &token).unwrap());
    assert!(test_hooks::link_respond(db, &token, &approve(1, ""))
        .unwrap()
        .is_none());
}

fn link_3_a_link_cancels_through_the_claim(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let token = mint(db, &pending_id, "alice");
    let cancelled = test_hooks::link_cancel(db, &token)
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(cancelled.claimed);
    assert_eq!(
        ledger(db, &pending_id),
        [("alice".into(), "link".into(), "won".into())]
    );
}

fn link_5_rotation_keeps_old_links_for_a_week_unless_now(db: &TestDb) {
    let session = team(db);
    let first = ask_one(db, &session);
    let old = mint(db, &first, "alice");
    db.rotate_link_key(false).unwrap();
    assert!(test_hooks::link_page_opens(db, &old).unwrap());
    let fresh = mint(db, &first, "alice");
    assert_ne!(old, fresh);
    db.rotate_link_key(true).unwrap();
    assert!(!test_hooks::link_page_opens(db, &old).unwrap());
    assert!(!test_hooks::link_page_opens(db, &fresh).unwrap());
    assert!(test_hooks::link_respond(db, &fresh, &approve(1, ""))
        .unwrap()
        .is_none());
    // A retired key is kept 7 days (as long as a link lasts at most),
    // then pruned.
    db.rotate_link_key(false).unwrap();
    let keys = |db: &TestDb| -> i64 {
        db.raw(|conn| {
            test_hooks::schema::link_keys::table
                .count()
                .get_result(conn)
                .unwrap()
        })
    };
    assert_eq!(keys(db), 2);
    at(db, 7 * 24 * HOUR - 1);
    db.prune(Duration::from_secs(3600)).unwrap();
    assert_eq!(keys(db), 2);
    at(db, 7 * 24 * HOUR);
    db.prune(Duration::from_secs(3600)).unwrap();
    assert_eq!(keys(db), 1);
}

fn link_5_a_removed_member_can_no_longer_use_a_link(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let token = mint(db, &pending_id, "bob");
    assert!(test_hooks::link_page_opens(db, &token).unwrap());
    db.set_members(TEAM, &["alice".to_owned()]).unwrap();
    assert!(!test_hooks::link_page_opens(db, &token).unwrap());
    let refused = test_hooks::link_respond(db, &token, &approve(1, ""))
        .unwrap()
        .unwrap();
    assert!(matches!(refused, Err(Error::NotFound(_))));
    assert!(db
        .attempts(&Principal::System, &pending_id)
        .unwrap()
        .is_empty());
}

fn link_5_a_link_reaches_its_bundle_only(db: &TestDb) {
    let session = team(db);
    let first = ask_one(db, &session);
    let token = mint(db, &first, "alice");
    // Alice's link reads `first`, as alice.
    let body = test_hooks::link_bundle(db, &token)
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(body["bundle"]["pending_id"], first.as_str());
    assert_eq!(body["as"]["user_id"], "alice");
    assert_eq!(body["as"]["name"], "Alice");
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["bundle", "as", "people"]);
    // A token whose payload names another bundle or user, under the same
    // MAC, does not verify.
    let (signed, mac) = token.rsplit_once('.').unwrap();
    let (_, payload) = signed.split_once('.').unwrap();
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let text = String::from_utf8(engine.decode(payload).unwrap()).unwrap();
    let forged = text.replace("alice", "bob_x");
    let forged = format!("v1.{}.{mac}", engine.encode(forged));
    assert!(!test_hooks::link_page_opens(db, &forged).unwrap());
    for bad in [
        "",
        "v1",
        "v1..",
        "\0",
        "é",
        &"a".repeat(513),
        &token[..token.len() - 1],
    ] {
        assert!(!test_hooks::link_page_opens(db, bad).unwrap(), "{bad:?}");
    }
}

fn link_5_channel_link_cannot_be_chosen_by_a_handle(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let handle = db.via(Channel::Link);
    assert_eq!(handle.channel(), Channel::Rust);
    handle
        .resolve_bundle(&Principal::user("alice"), &pending_id, &approve(1, ""))
        .unwrap();
    assert_eq!(
        ledger(db, &pending_id),
        [("alice".into(), "rust".into(), "won".into())]
    );
}

fn link_5_prune_drops_uses_whose_links_ended(db: &TestDb) {
    let session = team(db);
    let pending_id = ask_one(db, &session);
    let token = token(
        &db.answer_link(&pending_id, "alice", Some(Duration::from_secs(60)))
            .unwrap()
            .url,
    );
    through_link(db, &token).unwrap();
    db.prune(Duration::from_secs(3600)).unwrap();
    assert_eq!(uses(db), 1, "kept while the link could still be used");
    at(db, 60 * SECOND);
    db.prune(Duration::from_secs(3600)).unwrap();
    assert_eq!(uses(db), 0);
}

fn ppl_8_recipients_are_reached_people_in_the_directory_who_may_act(db: &TestDb) {
    let session = team(db);
    // carol is a member but not in the directory: no mail, no link.
    db.set_members(
        TEAM,
        &["alice".to_owned(), "bob".to_owned(), "carol".to_owned()],
    )
    .unwrap();
    let pending_id = ask_one(db, &session);
    assert_eq!(
        test_hooks::recipients(db, &pending_id).unwrap(),
        ["olga", "alice", "bob"]
    );
    // A quorum bundle: who may vote and has not.
    let mut request = ask_request(&session, 1);
    request.quorum = Some(QuorumRequest {
        approvals: 2,
        requested_by: "olga".to_owned(),
        ..QuorumRequest::default()
    });
    let quorum = db.ask(&request).unwrap().pending_id;
    db.resolve_bundle(&Principal::user("alice"), &quorum, &approve(1, ""))
        .unwrap();
    assert_eq!(test_hooks::recipients(db, &quorum).unwrap(), ["bob"]);
    // No longer active: nobody.
    db.resolve_bundle(&Principal::user("olga"), &pending_id, &approve(1, ""))
        .unwrap();
    assert!(test_hooks::recipients(db, &pending_id).unwrap().is_empty());
}
