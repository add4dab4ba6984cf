//! Asking with a deadline (EXP-1, EXP-5, EXP-6): how a deadline and its
//! default are given, checked before any database read, stored exactly
//! and shown to whoever may see the bundle.

use std::time::Duration;

use clarion::{AnswerInput, Clock, Expiry, ExpiryAction, OnExpire, Principal, Timestamp};
use serde_json::{json, Value};

use crate::doors_json_support::{mirror_by_call, refused, ALICE, SYSTEM};
use crate::support::*;

dual_backend!(
    exp_1_relative_deadline_is_now_plus_duration,
    exp_1_absolute_deadline_stored_exactly,
    exp_1_each_on_expire_stored_normalized,
    exp_5_listing_shows_expires_at_and_the_word_after_age_seconds,
    exp_5_get_bundle_shows_default_response,
    exp_5_no_deadline_shows_empty_words_and_null,
    exp_6_permission_answer_refused,
    exp_6_both_forms_refused,
    exp_6_expires_in_ms_out_of_range,
    exp_6_expires_at_out_of_range,
    exp_6_seven_fractional_digits_refused,
    exp_6_unknown_option_in_default_names_its_field,
    exp_6_default_without_deadline_refused,
    exp_6_other_actions_keys_refused,
    exp_6_default_may_name_the_asked_defaults,
    exp_6_retried_ask_with_past_expires_at_returns_the_bundle,
    exp_6_refused_ask_writes_nothing
);

const HOUR: Duration = Duration::from_secs(3600);

fn now(db: &TestDb) -> Timestamp {
    db.clock.now()
}

/// An ask of `count` questions on session `s-a` (alice's) with `expires`
/// and `on_expire`.
fn asking(count: usize, expires: Option<Expiry>, on_expire: OnExpire) -> clarion::AskRequest {
    let mut request = ask_request("s-a", count);
    request.expires = expires;
    request.on_expire = on_expire;
    request
}

fn answer(question_id: &str, options: &[&str], text: &str) -> AnswerInput {
    AnswerInput {
        question_id: question_id.to_owned(),
        selected_options: options.iter().map(|o| (*o).to_owned()).collect(),
        custom_text: text.to_owned(),
    }
}

/// The raw JSON of `get_bundle` for `system`.
fn shown(db: &TestDb, pending_id: &str) -> Value {
    let detail = db.get_bundle(&Principal::System, pending_id).unwrap();
    serde_json::from_str(&clarion::envelope::bundle_detail(&detail).body_text()).unwrap()
}

/// The `ask` arguments of a two-question bundle on `s-a`, plus `extra`.
fn ask_args(extra: Value) -> Value {
    let mut args = json!({
        "session_id": "s-a",
        "questions": crate::doors_json_support::two_questions(),
    });
    args.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    args
}

/// A refused JSON ask: its status and the field its message names.
fn refused_ask(db: &TestDb, extra: Value) -> (u16, String) {
    let (status, body) = refused(db, "ask", SYSTEM, ask_args(extra));
    let body: Value = serde_json::from_str(&body).unwrap();
    let message = body["error"].as_str().unwrap_or_default();
    (status, message.to_owned())
}

/// EXP-1: a relative deadline is the ask's own clock plus the duration,
/// to the microsecond; its action defaults to `expire`.
fn exp_1_relative_deadline_is_now_plus_duration(db: &TestDb) {
    mirror(db, "a", "alice");
    db.clock.advance_micros(123);
    let asked_at = now(db);
    let id = db
        .ask(&asking(1, Some(Expiry::In(HOUR)), OnExpire::Expire))
        .unwrap()
        .pending_id;
    let detail = db.get_bundle(&Principal::System, &id).unwrap();
    let expected = Timestamp::from_micros(asked_at.as_micros() + 3_600_000_000);
    assert_eq!(detail.bundle.expires_at, Some(expected));
    assert_eq!(detail.bundle.on_expire, ExpiryAction::Expire);
    assert_eq!(detail.bundle.created_at, asked_at);
    assert_eq!(detail.default_response, None);
}

/// EXP-1, DM-2: an absolute deadline is stored and served to the
/// microsecond, whatever offset it was written in.
fn exp_1_absolute_deadline_stored_exactly(db: &TestDb) {
    mirror_by_call(db);
    // EPOCH is 2026-11-29T20:00:00Z; two hours later, written in +01:00.
    let asked = crate::doors_json_support::ok(
        db,
        "ask",
        SYSTEM,
        ask_args(json!({"expires_at": "2026-11-29T23:00:00.000007+01:00"})),
    );
    let id = asked["pending_id"].as_str().unwrap();
    assert_eq!(
        shown(db, id)["expires_at"],
        json!("2026-11-29T22:00:00.000007Z")
    );
}

/// EXP-1, NORM-1..3: each default is stored normalized — answers in
/// question order, options in option order without repeats, text and
/// reason trimmed — and `expire` stores none.
fn exp_1_each_on_expire_stored_normalized(db: &TestDb) {
    mirror(db, "a", "alice");
    let answered = OnExpire::Answer(vec![
        answer("q2", &["q2_opt2", "q2_opt1", "q2_opt2"], "  later "),
        answer("q1", &[], ""),
    ]);
    let id = db
        .ask(&asking(2, Some(Expiry::In(HOUR)), answered))
        .unwrap()
        .pending_id;
    assert_eq!(
        shown(db, &id)["default_response"],
        json!({"answers": [
            {"question_id": "q1", "selected_options": [], "custom_text": ""},
            {"question_id": "q2", "selected_options": ["q2_opt1", "q2_opt2"], "custom_text": "later"},
        ], "rejected": false, "reject_reason": ""})
    );
    let rejected = OnExpire::Reject {
        reject_reason: "\t too late  ".to_owned(),
    };
    let id = db
        .ask(&asking(1, Some(Expiry::In(HOUR)), rejected))
        .unwrap()
        .pending_id;
    let body = shown(db, &id);
    assert_eq!(body["on_expire"], json!("reject"));
    assert_eq!(
        body["default_response"],
        json!({"answers": [], "rejected": true, "reject_reason": "too late"})
    );
    let id = db
        .ask(&asking(1, Some(Expiry::In(HOUR)), OnExpire::Expire))
        .unwrap()
        .pending_id;
    assert_eq!(shown(db, &id)["default_response"], Value::Null);
}

/// The keys of a JSON object, in order, from its raw text.
fn keys_of(text: &str) -> Vec<String> {
    let value: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
    value.keys().cloned().collect()
}

/// EXP-5: LIST-6 carries `expires_at` and `on_expire` (the word only)
/// right after `age_seconds`, for a user who may see the bundle.
fn exp_5_listing_shows_expires_at_and_the_word_after_age_seconds(db: &TestDb) {
    mirror(db, "a", "alice");
    let default = OnExpire::Answer(vec![answer("q1", &["q1_opt1"], "")]);
    db.ask(&asking(1, Some(Expiry::In(HOUR)), default)).unwrap();
    let page = db.list_pending(&alice(), &Default::default()).unwrap();
    let text = clarion::envelope::list_page(&page).body_text();
    let body: Value = serde_json::from_str(&text).unwrap();
    let bundle = &body["bundles"][0];
    assert_eq!(bundle["expires_at"], json!("2026-11-29T21:00:00.000000Z"));
    assert_eq!(bundle["on_expire"], json!("answer"));
    let element = serde_json::to_string(bundle).unwrap();
    let keys = keys_of(&element);
    let age = keys.iter().position(|k| k == "age_seconds").unwrap();
    assert_eq!(
        keys[age + 1..age + 3],
        ["expires_at", "on_expire"],
        "{keys:?}"
    );
    assert!(
        !text.contains("default_response"),
        "the listing shows the word only"
    );
}

/// EXP-5: `get_bundle` carries `default_response` right after `response`.
fn exp_5_get_bundle_shows_default_response(db: &TestDb) {
    mirror(db, "a", "alice");
    let rejected = OnExpire::Reject {
        reject_reason: "no answer in time".to_owned(),
    };
    let id = db
        .ask(&asking(1, Some(Expiry::In(HOUR)), rejected))
        .unwrap()
        .pending_id;
    let detail = db.get_bundle(&alice(), &id).unwrap();
    let text = clarion::envelope::bundle_detail(&detail).body_text();
    let keys = keys_of(&text);
    let response = keys.iter().position(|k| k == "response").unwrap();
    assert_eq!(keys[response + 1], "default_response", "{keys:?}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        body["default_response"]["reject_reason"],
        json!("no answer in time")
    );
}

/// EXP-5: without a deadline both words are `""` and the default `null`,
/// every key present.
fn exp_5_no_deadline_shows_empty_words_and_null(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let detail = db.get_bundle(&Principal::System, &id).unwrap();
    let text = clarion::envelope::bundle_detail(&detail).body_text();
    assert!(
        text.contains(r#""expires_at":"","on_expire":"","#),
        "{text}"
    );
    assert!(text.contains(r#""default_response":null"#), "{text}");
}

/// EXP-6: a `permission` bundle is never approved by default.
fn exp_6_permission_answer_refused(db: &TestDb) {
    mirror(db, "a", "alice");
    let mut request = asking(
        1,
        Some(Expiry::In(HOUR)),
        OnExpire::Answer(vec![answer("q1", &["q1_opt1"], "")]),
    );
    request.kind = clarion::BundleKind::Permission;
    assert_invalid(db.ask(&request), "on_expire.action");
    request.on_expire = OnExpire::Reject {
        reject_reason: String::new(),
    };
    db.ask(&request)
        .expect("a permission bundle may be rejected by default");
}

/// EXP-6: `expires_in_ms` and `expires_at` together are a `400`.
fn exp_6_both_forms_refused(db: &TestDb) {
    mirror_by_call(db);
    let (status, message) = refused_ask(
        db,
        json!({"expires_in_ms": 60_000, "expires_at": "2026-11-29T21:00:00Z"}),
    );
    assert_eq!(status, 400);
    assert!(message.starts_with("expires_at:"), "{message}");
}

/// EXP-6: `expires_in_ms` lies in 1,000..=2,592,000,000; both ends are
/// accepted.
fn exp_6_expires_in_ms_out_of_range(db: &TestDb) {
    mirror_by_call(db);
    for out in [0, 999, 2_592_000_001_i64] {
        let (status, message) = refused_ask(db, json!({ "expires_in_ms": out }));
        assert_eq!(status, 400, "{out}");
        assert!(message.starts_with("expires_in_ms:"), "{out}: {message}");
    }
    let (status, message) = refused_ask(db, json!({"expires_in_ms": -1}));
    assert_eq!(
        (status, message.starts_with("expires_in_ms")),
        (400, true),
        "{message}"
    );
    for within in [1_000, 2_592_000_000_i64] {
        crate::doors_json_support::ok(
            db,
            "ask",
            SYSTEM,
            ask_args(json!({ "expires_in_ms": within })),
        );
    }
}

/// EXP-6: `expires_at` lies 1 s to 30 days after the ask's clock.
fn exp_6_expires_at_out_of_range(db: &TestDb) {
    mirror_by_call(db);
    for out in [
        "2026-11-29T20:00:00.999999Z",
        "2026-11-29T19:00:00Z",
        "2026-12-29T20:00:00.000001Z",
    ] {
        let (status, message) = refused_ask(db, json!({ "expires_at": out }));
        assert_eq!(status, 400, "{out}");
        assert!(message.starts_with("expires_at:"), "{out}: {message}");
    }
    for within in ["2026-11-29T20:00:01Z", "2026-12-29T20:00:00Z"] {
        crate::doors_json_support::ok(db, "ask", SYSTEM, ask_args(json!({ "expires_at": within })));
    }
}

/// EXP-6: more than six fractional digits is refused, never rounded; so
/// is text that is no RFC 3339 time.
fn exp_6_seven_fractional_digits_refused(db: &TestDb) {
    mirror_by_call(db);
    for bad in [
        "2026-11-29T21:00:00.0000001Z",
        "tomorrow",
        "2026-11-29 21:00",
    ] {
        let (status, message) = refused_ask(db, json!({ "expires_at": bad }));
        assert_eq!(status, 400, "{bad}");
        assert!(message.starts_with("expires_at:"), "{bad}: {message}");
    }
}

/// EXP-6: the default's answers meet a resolve's rules, each error naming
/// its field under `on_expire.`.
fn exp_6_unknown_option_in_default_names_its_field(db: &TestDb) {
    mirror_by_call(db);
    let (status, message) = refused_ask(
        db,
        json!({"expires_in_ms": 60_000, "on_expire": {"action": "answer", "answers": [
            {"question_id": "q1", "selected_options": ["q1_opt9"]},
            {"question_id": "size", "selected_options": ["l"]},
        ]}}),
    );
    assert_eq!(status, 400);
    assert_eq!(
        message,
        r#"on_expire.answers[0].selected_options: unknown option id "q1_opt9""#
    );
    let (_, message) = refused_ask(
        db,
        json!({"expires_in_ms": 60_000, "on_expire": {"action": "answer", "answers": [
            {"question_id": "q1"},
        ]}}),
    );
    assert!(message.starts_with("on_expire.answers:"), "{message}");
    let long = "x".repeat(2001);
    let (_, message) = refused_ask(
        db,
        json!({"expires_in_ms": 60_000, "on_expire": {"action": "reject", "reject_reason": long}}),
    );
    assert!(message.starts_with("on_expire.reject_reason:"), "{message}");
}

/// EXP-6: `answer` and `reject` need a deadline; `expire` alone is the
/// default and needs none.
fn exp_6_default_without_deadline_refused(db: &TestDb) {
    mirror_by_call(db);
    for on_expire in [
        json!({"action": "reject", "reject_reason": "late"}),
        json!({"action": "answer", "answers": []}),
    ] {
        let (status, message) = refused_ask(db, json!({ "on_expire": on_expire }));
        assert_eq!(status, 400);
        assert!(message.starts_with("on_expire.action:"), "{message}");
    }
    let asked = crate::doors_json_support::ok(
        db,
        "ask",
        SYSTEM,
        ask_args(json!({"on_expire": {"action": "expire"}})),
    );
    let id = asked["pending_id"].as_str().unwrap();
    assert_eq!(
        shown(db, id)["on_expire"],
        json!(""),
        "no deadline, no word"
    );
}

/// EXP-6: only the keys of the named action; an unknown action is a 400.
fn exp_6_other_actions_keys_refused(db: &TestDb) {
    mirror_by_call(db);
    for (on_expire, field) in [
        (
            json!({"action": "expire", "reject_reason": "x"}),
            "on_expire.reject_reason",
        ),
        (
            json!({"action": "reject", "answers": []}),
            "on_expire.answers",
        ),
        (
            json!({"action": "answer", "answers": [], "reject_reason": ""}),
            "on_expire.reject_reason",
        ),
        (json!({"action": "snooze"}), "on_expire.action"),
        (json!({"action": "expire", "when": 1}), "on_expire"),
        (json!({}), "on_expire.action"),
    ] {
        let (status, message) =
            refused_ask(db, json!({"expires_in_ms": 60_000, "on_expire": on_expire}));
        assert_eq!(status, 400, "{on_expire}");
        assert!(message.starts_with(field), "{on_expire}: {message}");
    }
}

/// EXP-6: the default is checked after ASK-3's defaults, so it may name
/// `q1` and `q1_opt2` for questions and options given without ids.
fn exp_6_default_may_name_the_asked_defaults(db: &TestDb) {
    mirror_by_call(db);
    let asked = crate::doors_json_support::ok(
        db,
        "ask",
        SYSTEM,
        ask_args(
            json!({"expires_in_ms": 60_000, "on_expire": {"action": "answer", "answers": [
                {"question_id": "size", "selected_options": ["s"]},
                {"question_id": "q1", "selected_options": ["q1_opt2"]},
            ]}}),
        ),
    );
    let id = asked["pending_id"].as_str().unwrap();
    assert_eq!(
        shown(db, id)["default_response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
}

/// EXP-6, ASK-4: the clock check runs after the idempotency lookup, so a
/// retry after its `expires_at` passed returns the bundle.
fn exp_6_retried_ask_with_past_expires_at_returns_the_bundle(db: &TestDb) {
    mirror(db, "a", "alice");
    let mut request = asking(
        1,
        Some(Expiry::At(Timestamp::from_micros(
            EPOCH.as_micros() + 60_000_000,
        ))),
        OnExpire::Expire,
    );
    request.idempotency_key = Some("retry".to_owned());
    let first = db.ask(&request).unwrap();
    db.clock.advance_micros(120_000_000);
    let again = db.ask(&request).unwrap();
    assert_eq!((again.pending_id, again.created), (first.pending_id, false));
    request.idempotency_key = Some("fresh".to_owned());
    assert_invalid(db.ask(&request), "expires_at");
}

/// EXP-6: a refused deadline writes nothing, through any form.
fn exp_6_refused_ask_writes_nothing(db: &TestDb) {
    mirror_by_call(db);
    let (status, _) = refused_ask(db, json!({"expires_in_ms": 10}));
    assert_eq!(status, 400);
    let (status, _) = refused(db, "ask", ALICE, ask_args(json!({"expires_in_ms": 60_000})));
    assert_eq!(status, 403, "the capability before the arguments");
    let page = db
        .list_pending(&Principal::System, &Default::default())
        .unwrap();
    assert!(page.bundles.is_empty());
}
