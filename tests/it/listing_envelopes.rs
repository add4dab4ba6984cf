//! The listing envelopes (LIST-5..7, WIRE-3): `count` and `next_cursor`,
//! every key in order, `kind` and `age_seconds`, and degraded rows that
//! are never null.

use clarion::envelope;
use clarion::{ListRequest, OptionSpec, QuestionSpec, TaskUpsert, WorkspaceUpsert};

use crate::listing_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

// ---- LIST-5..7 -----------------------------------------------------------

dual_backend!(
    list_5_count_and_next_cursor,
    list_6_envelope_text_and_key_order,
    list_6_kind_and_age_floored_at_zero,
    list_7_degraded_rows_are_never_null,
    list_7_unrecognized_status_shown_as_stored
);

/// LIST-5: `count` is the page length; `next_cursor` is "" exactly when
/// no more bundles exist, including when the last page is exactly full.
fn list_5_count_and_next_cursor(db: &TestDb) {
    let empty = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(
        envelope::list_page(&empty).body_text(),
        r#"{"bundles":[],"count":0,"next_cursor":""}"#
    );

    let session = mirror(db, "a", "alice");
    for _ in 0..4 {
        ask(db, &session, 1);
    }
    let first = db.list_pending(&alice(), &with_limit(2)).unwrap();
    assert_eq!(first.bundles.len(), 2);
    assert!(first.next_cursor.is_some());
    let second_request = ListRequest {
        cursor: first.next_cursor.clone(),
        ..with_limit(2)
    };
    let second = db.list_pending(&alice(), &second_request).unwrap();
    assert_eq!(ids(&second), ["pending-000003", "pending-000004"]);
    assert_eq!(
        second.next_cursor, None,
        "an exactly full last page ends the listing"
    );
    for limit in [3, 4, 5] {
        let page = db.list_pending(&alice(), &with_limit(limit)).unwrap();
        assert_eq!(page.next_cursor.is_none(), limit >= 4, "limit {limit}");
    }

    for page in [&first, &second] {
        let body = envelope::list_page(page).body;
        let object = body.as_object().unwrap();
        assert_eq!(
            object.keys().collect::<Vec<_>>(),
            ["bundles", "count", "next_cursor"],
            "no grand total"
        );
        assert_eq!(
            object["count"],
            serde_json::json!(object["bundles"].as_array().unwrap().len())
        );
        assert_eq!(object["count"], 2);
        assert_eq!(
            object["next_cursor"],
            serde_json::json!(page
                .next_cursor
                .as_ref()
                .map(clarion::Cursor::encode)
                .unwrap_or_default())
        );
    }
}

/// LIST-6: the exact envelope text: key order of the envelope, the bundle
/// element, the question and the option; RFC 3339 with six digits; age
/// in whole seconds.
fn list_6_envelope_text_and_key_order(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    // LIST-11: the names follow the task id.
    db.upsert_workspace(WorkspaceUpsert::new("w-a").name("Alpha"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").title("Add login"))
        .unwrap();
    db.clock.advance_micros(5 * SECOND + 123);
    let request = clarion::AskRequest {
        session_id: session.clone(),
        questions: vec![
            QuestionSpec {
                question_id: Some("color".to_owned()),
                title: "Colour".to_owned(),
                prompt: "Which colour?".to_owned(),
                multi_select: None,
                options: vec![
                    OptionSpec {
                        option_id: Some("red".to_owned()),
                        label: "Red".to_owned(),
                        description: "Warm".to_owned(),
                    },
                    OptionSpec {
                        option_id: None,
                        label: "Blue".to_owned(),
                        description: "Cool".to_owned(),
                    },
                ],
            },
            question("ship it?"),
        ],
        context: "pick one".to_owned(),
        ..clarion::AskRequest::default()
    };
    db.ask(&request).unwrap();
    db.clock.advance_micros(7_900_000);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    let text = envelope::list_page(&page).body_text();
    let expected = concat!(
        r#"{"bundles":[{"pending_id":"pending-000001","task_id":"t-a","task_title":"Add login","#,
        r#""workspace_id":"w-a","workspace_name":"Alpha","session_id":"s-a","kind":"question","#,
        r#""created_at":"2026-11-29T20:00:05.000123Z","age_seconds":7,"expires_at":"","on_expire":"","quorum":null,"nudges":null,"context":"pick one","questions":["#,
        r#"{"question_id":"color","title":"Colour","prompt":"Which colour?","status":"pending","multi_select":true,"options":["#,
        r#"{"option_id":"red","label":"Red","description":"Warm"},"#,
        r#"{"option_id":"color_opt2","label":"Blue","description":"Cool"}]},"#,
        r#"{"question_id":"q2","title":"About ship it?","prompt":"ship it?","status":"pending","multi_select":true,"options":["#,
        r#"{"option_id":"q2_opt1","label":"Yes","description":"Yes, described"},"#,
        r#"{"option_id":"q2_opt2","label":"No","description":"No, described"}]}]}],"#,
        r#""count":1,"next_cursor":""}"#,
    );
    assert_eq!(text, expected);
    // LIST-7: nothing is null but what QUO-5 and NUDGE-5 say is: no quorum, no nudges.
    assert!(!text
        .replace(r#""quorum":null"#, "")
        .replace(r#""nudges":null"#, "")
        .contains("null"));
}

/// LIST-6: a permission bundle shows its kind; age is floored at 0 when
/// the server clock is behind the bundle.
fn list_6_kind_and_age_floored_at_zero(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(10 * SECOND);
    let permission = ask_permission(db, &session, 1);
    db.clock.set(EPOCH);
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), [permission]);
    let text = envelope::list_page(&page).body_text();
    assert!(
        text.contains(
            r#""kind":"permission","created_at":"2026-11-29T20:00:10.000000Z","age_seconds":0,"#
        ),
        "{text}"
    );
}

/// LIST-7: degraded rows: a NULL or empty status shows "pending", an
/// unrecognized status is shown as stored, an unparseable or mistyped
/// payload shows "" and []; nothing is null or missing.
fn list_7_degraded_rows_are_never_null(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "degraded", &session, &turn, "");
    Row::new("degraded", &session, &turn)
        .question_id("q-absent")
        .index(Some(0))
        .status(None)
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("q-empty")
        .index(Some(1))
        .status(Some(""))
        .insert(db);
    Row::new("degraded", &session, &turn)
        .question_id("q-weird")
        .index(Some(2))
        .status(Some("on_hold"))
        .insert(db);
    let mut broken = Row::new("degraded", &session, &turn)
        .question_id("q-broken")
        .index(Some(3));
    broken.payload = "{not json";
    broken.insert(db);
    let mut mistyped = Row::new("degraded", &session, &turn)
        .question_id("q-mistyped")
        .index(Some(4));
    mistyped.payload =
        r#"{"title":null,"prompt":42,"options":[{"option_id":null,"label":"L"}],"extra":null}"#;
    mistyped.insert(db);
    let mut not_array = Row::new("degraded", &session, &turn)
        .question_id("q-not-array")
        .index(Some(5));
    not_array.payload = r#"{"title":"T2","prompt":"P2","options":"nope"}"#;
    not_array.insert(db);
    let mut json_null = Row::new("degraded", &session, &turn)
        .question_id("q-json-literal")
        .index(Some(6));
    json_null.payload = "null";
    json_null.insert(db);
    db.clock.advance_micros(3 * SECOND);

    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    let text = envelope::list_page(&page).body_text();
    let options = concat!(
        r#"[{"option_id":"a","label":"A","description":"a"},"#,
        r#"{"option_id":"b","label":"B","description":"b"}]"#,
    );
    let expected = concat!(
        r#"{"bundles":[{"pending_id":"degraded","task_id":"t-a","task_title":"","workspace_id":"w-a","workspace_name":"","#,
        r#""session_id":"s-a","kind":"question","#,
        r#""created_at":"2026-11-29T20:00:00.000000Z","age_seconds":3,"expires_at":"","on_expire":"","quorum":null,"nudges":null,"context":"","questions":["#,
        r#"{"question_id":"q-absent","title":"T","prompt":"P?","status":"pending","multi_select":true,"options":OPTIONS},"#,
        r#"{"question_id":"q-empty","title":"T","prompt":"P?","status":"pending","multi_select":true,"options":OPTIONS},"#,
        r#"{"question_id":"q-weird","title":"T","prompt":"P?","status":"on_hold","multi_select":true,"options":OPTIONS},"#,
        r#"{"question_id":"q-broken","title":"","prompt":"","status":"pending","multi_select":true,"options":[]},"#,
        r#"{"question_id":"q-mistyped","title":"","prompt":"","status":"pending","multi_select":true,"options":[{"option_id":"","label":"L","description":""}]},"#,
        r#"{"question_id":"q-not-array","title":"T2","prompt":"P2","status":"pending","multi_select":true,"options":[]},"#,
        r#"{"question_id":"q-json-literal","title":"","prompt":"","status":"pending","multi_select":true,"options":[]}]}],"#,
        r#""count":1,"next_cursor":""}"#,
    )
    .replace("OPTIONS", options);
    assert_eq!(text, expected);
    assert!(
        !text
            .replace(r#""quorum":null"#, "")
            .replace(r#""nudges":null"#, "")
            .contains("null"),
        "{text}"
    );
}

/// LIST-7: an unrecognized status in an otherwise pending (mixed, active)
/// bundle is shown as stored, and the bundle stays listed.
fn list_7_unrecognized_status_shown_as_stored(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 2);
    rows::set_status(db, &pending_id, "q2", Some("Needs-Review"));
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    assert_eq!(ids(&page), [pending_id.as_str()]);
    let statuses: Vec<&str> = page.bundles[0]
        .questions
        .iter()
        .map(|q| q.status.as_str())
        .collect();
    assert_eq!(statuses, ["pending", "Needs-Review"]);
    // With no pending row left, the unrecognized status does not count.
    rows::set_status(db, &pending_id, "q1", Some("Needs-Review"));
    assert_eq!(
        list_ids(db, &alice(), &ListRequest::default()),
        Vec::<String>::new()
    );
}
