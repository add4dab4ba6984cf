//! Which bundles are left out of the listing (LIST-9, LIST-10, AUTH-6):
//! unanswerable ones (an empty question id, an unresolvable task) but not
//! an unparseable payload; mixed bundles are listed with each question's
//! status; permission bundles never reach an agent.

use clarion::{Grant, ListRequest, Principal};

use crate::listing_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

// ---- LIST-9, LIST-10, AUTH-6 ----------------------------------------------

dual_backend!(
    list_9_bundle_with_an_empty_question_id_is_excluded,
    list_9_bundle_with_unresolvable_task_is_excluded_for_everyone,
    list_9_bundle_with_empty_task_id_resolves_via_its_session,
    list_9_bundle_with_unparseable_payload_is_listed,
    list_10_mixed_bundle_is_listed_with_per_question_status,
    auth_6_permission_bundles_absent_from_agent_listings
);

/// LIST-9 [seed L16]: a bundle with any empty `question_id` row is not
/// listed, for anyone.
fn list_9_bundle_with_an_empty_question_id_is_excluded(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "broken", &session, &turn, "");
    Row::new("broken", &session, &turn)
        .question_id("q1")
        .insert(db);
    Row::new("broken", &session, &turn)
        .question_id("")
        .index(Some(1))
        .insert(db);
    // The empty id row is already terminal; the bundle is still unanswerable.
    rows::insert_bundle(db, "broken-mixed", &session, &turn, "");
    Row::new("broken-mixed", &session, &turn)
        .question_id("q1")
        .insert(db);
    Row::new("broken-mixed", &session, &turn)
        .question_id("")
        .index(Some(1))
        .status(Some("answered"))
        .insert(db);
    rows::insert_bundle(db, "fine", &session, &turn, "");
    Row::new("fine", &session, &turn)
        .question_id("q1")
        .insert(db);
    Row::new("fine", &session, &turn)
        .question_id("q2")
        .index(Some(1))
        .insert(db);
    for principal in [alice(), alice_bot(), Principal::System] {
        assert_eq!(
            list_ids(db, &principal, &ListRequest::default()),
            ["fine"],
            "{principal:?}"
        );
    }
}

/// LIST-9 [seed M5a]: a bundle whose task cannot be resolved is not
/// listed, not even for `system`.
fn list_9_bundle_with_unresolvable_task_is_excluded_for_everyone(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "orphan", &session, &turn, "t-does-not-exist");
    Row::new("orphan", &session, &turn).insert(db);
    for principal in [alice(), alice_bot(), bob(), Principal::System] {
        assert_eq!(
            list_ids(db, &principal, &ListRequest::default()),
            Vec::<String>::new(),
            "{principal:?}"
        );
    }
    assert_eq!(
        list_ids(db, &Principal::System, &in_workspace("w-a")),
        Vec::<String>::new()
    );
}

/// LIST-9, AUTH-4 [seed M5]: a bundle with an empty task id belongs to
/// its session's task and is listed with that task id.
fn list_9_bundle_with_empty_task_id_resolves_via_its_session(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    mirror(db, "b", "bob");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "no-task", &session, &turn, "");
    Row::new("no-task", &session, &turn).insert(db);
    for principal in [alice(), alice_bot(), Principal::System] {
        let page = db
            .list_pending(&principal, &ListRequest::default())
            .unwrap();
        assert_eq!(ids(&page), ["no-task"], "{principal:?}");
        assert_eq!(page.bundles[0].task_id, "t-a");
    }
    assert_eq!(
        list_ids(db, &bob(), &ListRequest::default()),
        Vec::<String>::new()
    );
}

/// LIST-9 [seed L15]: an unparseable payload does not hide the bundle.
fn list_9_bundle_with_unparseable_payload_is_listed(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "garbled", &session, &turn, "");
    let mut row = Row::new("garbled", &session, &turn);
    row.payload = "<<not json>>";
    row.insert(db);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), ["garbled"]);
    let q = &page.bundles[0].questions[0];
    assert_eq!(
        (
            q.question_id.as_str(),
            q.title.as_str(),
            q.prompt.as_str(),
            q.options.len()
        ),
        ("q1", "", "", 0)
    );
}

/// LIST-10: a mixed bundle (some rows terminal, some pending) is listed;
/// each question shows its own status.
fn list_10_mixed_bundle_is_listed_with_per_question_status(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mixed = ask(db, &session, 3);
    rows::set_status(db, &mixed, "q1", Some("answered"));
    rows::set_status(db, &mixed, "q3", Some("cancelled"));
    let done = ask(db, &session, 2);
    rows::answer_all(db, &done);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), [mixed]);
    let statuses: Vec<(&str, &str)> = page.bundles[0]
        .questions
        .iter()
        .map(|q| (q.question_id.as_str(), q.status.as_str()))
        .collect();
    assert_eq!(
        statuses,
        [("q1", "answered"), ("q2", "pending"), ("q3", "cancelled")]
    );
}

/// AUTH-6: permission bundles are absent from agents' listings and
/// present for the user and `system`.
fn auth_6_permission_bundles_absent_from_agent_listings(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let question = ask(db, &session, 1);
    let permission = ask_permission(db, &session, 1);
    let reader = Principal::agent("alice", "reader", [Grant::QuestionsRead]);
    assert_eq!(
        list_ids(db, &alice_bot(), &ListRequest::default()),
        [question.as_str()]
    );
    assert_eq!(
        list_ids(db, &reader, &ListRequest::default()),
        [question.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice_bot(), &in_workspace("w-a")),
        [question.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice(), &ListRequest::default()),
        [question.clone(), permission.clone()]
    );
    assert_eq!(
        list_ids(db, &Principal::System, &ListRequest::default()),
        [question, permission]
    );
}
