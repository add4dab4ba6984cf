//! ASK-6, VAL-9: a single-select question takes at most one option,
//! through every door that answers (Rust, the JSON call, HTTP, the MCP
//! tool; the C ABI in `tests/ffi/test_ctypes.py`), and a deadline's
//! default is held to it at ask time. A question says what it takes in
//! every question object.

use clarion::{AskRequest, Error, Expiry, OnExpire, Principal};
use serde_json::{json, Value};

use crate::doors_json_support::call;
use crate::resolve_support::{assert_untouched, stored_rows};
use crate::support::rows;
use crate::support::server::*;
use crate::support::*;

/// The refusal of two options for question `q1` (VAL-9).
const TWO_FOR_Q1: &str =
    r#"answers[0].selected_options: question "q1" takes at most one option, got 2"#;

/// A bundle whose first question is single-select and second multi-select.
fn single_then_multi(session: &str) -> AskRequest {
    let mut request = ask_request(session, 2);
    request.questions[0].multi_select = Some(false);
    request.questions[1].multi_select = Some(true);
    request
}

fn ask_single(db: &TestDb, session: &str) -> String {
    db.ask(&single_then_multi(session)).unwrap().pending_id
}

/// Answers in the WIRE-5 shape: `q1` takes `first`, `q2` both options.
fn answers_json(first: &[&str]) -> Value {
    json!([
        {"question_id": "q1", "selected_options": first},
        {"question_id": "q2", "selected_options": ["q2_opt1", "q2_opt2"]},
    ])
}

fn answers(first: &[&str]) -> clarion::ResolveRequest {
    answering(vec![
        answer("q1", first, ""),
        answer("q2", &["q2_opt1", "q2_opt2"], ""),
    ])
}

dual_backend!(
    val_9_two_ids_refused_naming_the_field_through_every_door,
    val_9_duplicate_counts_once_and_none_is_allowed,
    val_9_refusal_is_an_invalid_attempt,
    val_9_on_expire_default_refused,
    ask_6_payload_without_multi_select_reads_true,
    ask_6_non_boolean_is_a_validation_error,
    ask_6_shown_in_every_question_object
);

/// VAL-9: two distinct options for a single-select question are a `400`
/// naming `answers[0].selected_options`, the same message through the
/// Rust API, the JSON call, `POST …/respond` and `answer_question`; the
/// bundle stays pending, while the multi-select question beside it took
/// two options without complaint.
fn val_9_two_ids_refused_naming_the_field_through_every_door(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_single(db, &session);

    let error = assert_invalid(
        db.resolve_bundle(&alice(), &id, &answers(&["q1_opt1", "q1_opt2"])),
        "answers[0].selected_options",
    );
    assert_eq!(error.to_string(), TWO_FOR_Q1);

    let refusal = json!({"error": TWO_FOR_Q1}).to_string();
    let request = json!({
        "op": "resolve_bundle",
        "principal": {"kind": "user", "user_id": "alice"},
        "args": {"pending_id": id, "answers": answers_json(&["q1_opt2", "q1_opt1"])},
    });
    assert_eq!(call(db, &request.to_string()), (400, refusal.clone()));

    let server = start(db);
    let t = tokens(db);
    let body = json!({"answers": answers_json(&["q1_opt1", "q1_opt2"])}).to_string();
    let replied = post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{id}/respond"),
        &body,
    );
    assert_eq!((replied.status, replied.body.clone()), (400, refusal));

    let tool = db
        .call_tool(
            &alice(),
            "answer_question",
            &json!({"pending_id": id, "answers": answers_json(&["q1_opt1", "q1_opt2"])}),
        )
        .unwrap();
    assert_eq!(tool["isError"], json!(true));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(tool["content"][0]["text"].as_str().unwrap())
            .unwrap(),
        json!({"error": TWO_FOR_Q1, "code": "validation"})
    );
    assert_untouched(db, &id);
}

/// VAL-9 with NORM-2 and VAL-3: an option given twice is one option, and
/// no option at all is an answer ("no answer").
fn val_9_duplicate_counts_once_and_none_is_allowed(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let twice = ask_single(db, &session);
    let won = db
        .resolve_bundle(&alice(), &twice, &answers(&["q1_opt2", "q1_opt2"]))
        .unwrap();
    assert!(won.claimed);
    assert_eq!(won.response.answers[0].selected_options, ["q1_opt2"]);

    let none = ask_single(db, &session);
    let won = db.resolve_bundle(&alice(), &none, &answers(&[])).unwrap();
    assert!(won.claimed);
    assert!(won.response.answers[0].selected_options.is_empty());
    assert_eq!(stored_rows(db, &none)[0].1.as_deref(), Some("answered"));
}

/// VAL-9 runs after visibility with the stored-data checks: its refusal is
/// an `invalid` ledger entry (AUD-1).
fn val_9_refusal_is_an_invalid_attempt(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_single(db, &session);
    assert!(matches!(
        db.resolve_bundle(&alice(), &id, &answers(&["q1_opt1", "q1_opt2"])),
        Err(Error::Validation(_))
    ));
    let entries = db.attempts(&Principal::System, &id).unwrap();
    let outcomes: Vec<&str> = entries.iter().map(|e| e.outcome.as_str()).collect();
    assert_eq!(outcomes, ["invalid"]);
}

/// VAL-9 at ask time (EXP-6): a deadline's default that selects two
/// options of a single-select question is refused, named under
/// `on_expire`, and nothing is written; one option is accepted.
fn val_9_on_expire_default_refused(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = single_then_multi(&session);
    request.expires = Some(Expiry::In(std::time::Duration::from_secs(60)));
    request.on_expire = OnExpire::Answer(vec![
        answer("q1", &["q1_opt1", "q1_opt2"], ""),
        answer("q2", &[], ""),
    ]);
    let error = assert_invalid(db.ask(&request), "on_expire.answers[0].selected_options");
    assert_eq!(
        error.to_string(),
        r#"on_expire.answers[0].selected_options: question "q1" takes at most one option, got 2"#
    );
    assert!(rows::bundle_ids(db).is_empty());

    request.on_expire =
        OnExpire::Answer(vec![answer("q1", &["q1_opt1"], ""), answer("q2", &[], "")]);
    assert!(db.ask(&request).unwrap().created);

    let (status, body) = call(
        db,
        &json!({"op": "ask", "principal": {"kind": "system"}, "args": {
            "session_id": session,
            "questions": [{"question_id": "q1", "prompt": "One?", "multi_select": false, "options": [
                {"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}],
            "expires_in_ms": 60_000,
            "on_expire": {"action": "answer", "answers": [
                {"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt2"]}]},
        }})
        .to_string(),
    );
    assert_eq!(status, 400);
    assert!(
        body.contains("on_expire.answers[0].selected_options"),
        "{body}"
    );
}

/// ASK-6, DM-1: a stored payload without `multi_select`, or with a value
/// that is not a boolean, reads as several: shown `true`, and two options
/// are accepted.
fn ask_6_payload_without_multi_select_reads_true(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_single(db, &session);
    let payload = |multi: Option<Value>| {
        let mut payload = json!({"title": "T", "prompt": "P?", "options": [
            {"option_id": "q1_opt1", "label": "A", "description": "a"},
            {"option_id": "q1_opt2", "label": "B", "description": "b"}]});
        if let Some(multi) = multi {
            payload["multi_select"] = multi;
        }
        payload.to_string()
    };
    rows::set_payload(db, &id, "q1", &payload(None));
    let shown = db.get_bundle(&alice(), &id).unwrap();
    assert!(shown.bundle.questions[0].multi_select);
    rows::set_payload(db, &id, "q1", &payload(Some(json!("no"))));
    let raw = serde_json::to_value(db.get_bundle(&alice(), &id).unwrap()).unwrap();
    assert_eq!(raw["questions"][0]["multi_select"], json!(true));
    assert_eq!(raw["questions"][1]["multi_select"], json!(true));
    let won = db
        .resolve_bundle(&alice(), &id, &answers(&["q1_opt1", "q1_opt2"]))
        .unwrap();
    assert_eq!(
        won.response.answers[0].selected_options,
        ["q1_opt1", "q1_opt2"]
    );
}

/// ASK-6: `multi_select` is a JSON boolean or `null`; anything else is a
/// `400` naming `questions[i].multi_select`, and `null` means several.
fn ask_6_non_boolean_is_a_validation_error(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let ask = |multi: Value| {
        call(
            db,
            &json!({"op": "ask", "principal": {"kind": "system"}, "args": {
                "session_id": session,
                "questions": [
                    {"prompt": "One?", "options": [
                        {"label": "A", "description": "a"}, {"label": "B", "description": "b"}]},
                    {"prompt": "Two?", "multi_select": multi, "options": [
                        {"label": "A", "description": "a"}, {"label": "B", "description": "b"}]},
                ],
            }})
            .to_string(),
        )
    };
    for bad in [json!("false"), json!(0), json!([]), json!({})] {
        let (status, body) = ask(bad.clone());
        assert_eq!(status, 400, "{bad}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert!(
            error["error"]
                .as_str()
                .unwrap()
                .starts_with("questions[1].multi_select: "),
            "{bad}: {body}"
        );
    }
    let (status, body) = ask(Value::Null);
    assert_eq!(status, 200, "{body}");
    let pending_id = serde_json::from_str::<Value>(&body).unwrap()["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = db.get_bundle(&alice(), &pending_id).unwrap();
    assert!(shown.bundle.questions[1].multi_select);
}

/// ASK-6, LIST-6: every question object says `multi_select` — the page,
/// `get_bundle`, `bundle.asked` and the outbox — checked on raw JSON.
fn ask_6_shown_in_every_question_object(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_single(db, &session);
    let flags = |questions: &Value| -> Vec<Value> {
        questions
            .as_array()
            .unwrap()
            .iter()
            .map(|question| question["multi_select"].clone())
            .collect()
    };
    let expected = vec![json!(false), json!(true)];
    let page =
        clarion::envelope::list_page(&db.list_pending(&alice(), &Default::default()).unwrap()).body;
    assert_eq!(flags(&page["bundles"][0]["questions"]), expected);
    let detail = clarion::envelope::bundle_detail(&db.get_bundle(&alice(), &id).unwrap()).body;
    assert_eq!(flags(&detail["questions"]), expected);
    crate::events::wait_until_readable(db);
    let events = db.events_after(&alice(), "", None).unwrap();
    let asked = clarion::envelope::event(&events.events[0]);
    assert_eq!(flags(&asked["data"]["questions"]), expected);
    db.detach_session(&session).unwrap();
    db.resolve_bundle(&alice(), &id, &answers(&["q1_opt1"]))
        .unwrap();
    let outbox = clarion::envelope::deliveries(&db.pending_deliveries(None).unwrap()).body;
    assert_eq!(flags(&outbox["deliveries"][0]["questions"]), expected);
}
