//! §8 `resolve_bundle` and LIFE-6 `cancel_bundle`: validation (VAL-1..8),
//! normalization (NORM-1..4), what the claim writes (CLAIM-3), the loser's
//! replay and the no-winner conflict (REPLAY-1..3), not-found and
//! capabilities (AUTH-2/5/6), and the exact WIRE-1/WIRE-2 bytes.

use clarion::envelope;
use clarion::test_hooks::schema::{bundle_questions, bundles};
use clarion::test_hooks::{points, FailAction};
use clarion::{
    Answer, AskRequest, BundleStatus, Clarion, Entity, Error, Grant, ListRequest, OptionSpec,
    Principal, QuestionSpec, ResolveRequest, Resolved, SessionState, Timestamp, ValidationError,
};
use diesel::prelude::*;
use serde_json::{json, Value};

use crate::support::rows::{self, Row};
use crate::support::*;

/// A valid answer to a two-question bundle asked with `ask(db, _, 2)`.
fn two_answers() -> ResolveRequest {
    answering(vec![
        answer("q1", &["q1_opt1"], "first"),
        answer("q2", &["q2_opt2"], ""),
    ])
}

/// Asks a bundle whose question `n` (ids `q1`, `q2`, …) has
/// `option_counts[n-1]` options (ids `qN_opt1`, `qN_opt2`, …).
fn ask_with_options(db: &Clarion, session_id: &str, option_counts: &[usize]) -> String {
    let request = AskRequest {
        session_id: session_id.to_owned(),
        questions: option_counts
            .iter()
            .enumerate()
            .map(|(q, &count)| QuestionSpec {
                question_id: None,
                title: format!("Question {}", q + 1),
                prompt: format!("question {}?", q + 1),
                options: (1..=count)
                    .map(|o| OptionSpec {
                        option_id: None,
                        label: format!("Option {o}"),
                        description: format!("option {o}, described"),
                    })
                    .collect(),
            })
            .collect(),
        context: "the agent needs a decision".to_owned(),
        ..AskRequest::default()
    };
    db.ask(&request).unwrap().pending_id
}

/// The validation error of `result`, or a panic naming what came instead.
fn invalid(result: clarion::Result<Resolved>) -> ValidationError {
    match result {
        Err(Error::Validation(error)) => error,
        other => panic!("expected a validation error, got {other:?}"),
    }
}

fn assert_no_longer_active(result: clarion::Result<Resolved>) {
    match result {
        Err(error @ Error::NoLongerActive) => {
            let envelope = envelope::error(&error);
            assert_eq!(envelope.status, 409);
            assert_eq!(envelope.body_text(), NO_LONGER_ACTIVE_BODY);
        }
        other => panic!("expected no-longer-active, got {other:?}"),
    }
}

/// (question_id, status, response) of each row of the bundle, in row-id order.
type StoredRow = (String, Option<String>, Option<String>);

fn stored_rows(db: &TestDb, pending_id: &str) -> Vec<StoredRow> {
    db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .order_by(bundle_questions::id)
            .select((
                bundle_questions::question_id,
                bundle_questions::status,
                bundle_questions::response,
            ))
            .load(conn)
            .unwrap()
    })
}

/// The stored response of the row with `question_id`, parsed.
fn stored_answer(db: &TestDb, pending_id: &str, question_id: &str) -> Option<Value> {
    stored_rows(db, pending_id)
        .into_iter()
        .find(|(id, _, _)| id == question_id)
        .unwrap_or_else(|| panic!("no row {question_id} in {pending_id}"))
        .2
        .map(|text| serde_json::from_str(&text).expect("stored response is JSON"))
}

/// The resolution metadata of a bundle row (CLAIM-3).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Resolution {
    reject_reason: String,
    responded_at: Option<i64>,
    resolved_by_kind: Option<String>,
    resolved_by_id: Option<String>,
    response_delivery_pending: bool,
}

fn resolution(db: &TestDb, pending_id: &str) -> Resolution {
    let (reject_reason, responded_at, resolved_by_kind, resolved_by_id, response_delivery_pending) =
        db.raw(|conn| {
            bundles::table
                .find(pending_id)
                .select((
                    bundles::reject_reason,
                    bundles::responded_at,
                    bundles::resolved_by_kind,
                    bundles::resolved_by_id,
                    bundles::response_delivery_pending,
                ))
                .first::<(String, Option<i64>, Option<String>, Option<String>, bool)>(conn)
                .unwrap()
        });
    Resolution {
        reject_reason,
        responded_at,
        resolved_by_kind,
        resolved_by_id,
        response_delivery_pending,
    }
}

fn unresolved() -> Resolution {
    Resolution {
        reject_reason: String::new(),
        responded_at: None,
        resolved_by_kind: None,
        resolved_by_id: None,
        response_delivery_pending: false,
    }
}

/// Everything a resolve could write for this bundle.
fn snapshot(db: &TestDb, pending_id: &str) -> (Vec<StoredRow>, Resolution) {
    (stored_rows(db, pending_id), resolution(db, pending_id))
}

/// Asserts the bundle is exactly as asked: every row pending without a
/// response, no resolution metadata.
fn assert_untouched(db: &TestDb, pending_id: &str) {
    for (question_id, status, response) in stored_rows(db, pending_id) {
        assert_eq!(status.as_deref(), Some("pending"), "row {question_id}");
        assert_eq!(response, None, "row {question_id}");
    }
    assert_eq!(resolution(db, pending_id), unresolved());
}

fn set_row_response(db: &TestDb, pending_id: &str, question_id: &str, response: &str) {
    db.raw(|conn| {
        diesel::update(
            bundle_questions::table
                .filter(bundle_questions::pending_id.eq(pending_id))
                .filter(bundle_questions::question_id.eq(question_id)),
        )
        .set(bundle_questions::response.eq(response))
        .execute(conn)
        .unwrap()
    });
}

fn listed(db: &Clarion, principal: &Principal, pending_id: &str) -> bool {
    db.list_pending(principal, &ListRequest::default())
        .unwrap()
        .bundles
        .iter()
        .any(|bundle| bundle.pending_id == pending_id)
}

/// The WIRE-2 response object as compact JSON text.
fn response_text(resolved: &Resolved) -> String {
    envelope::response(&resolved.response).to_string()
}

fn body_text(resolved: &Resolved) -> String {
    envelope::resolved(resolved).body_text()
}

fn stored(question_id: &str, options: &[&str], text: &str) -> Answer {
    Answer {
        question_id: question_id.to_owned(),
        selected_options: options.iter().map(|o| (*o).to_owned()).collect(),
        custom_text: text.to_owned(),
    }
}

/// A bundle of degraded rows (DM-1) on the current turn of `session`,
/// visible to alice through the session's task (AUTH-4).
fn degraded_bundle(db: &TestDb, pending_id: &str, session: &str, question_ids: &[&str]) {
    let turn = rows::turn_of(db, &ask(db, session, 1));
    rows::insert_bundle(db, pending_id, session, &turn, "");
    for (index, question_id) in question_ids.iter().enumerate() {
        Row::new(pending_id, session, &turn)
            .question_id(question_id)
            .index(Some(index as i32))
            .insert(db);
    }
}

// ---- VAL-1 ---------------------------------------------------------------

dual_backend!(
    val_1_too_few_answers,
    val_1_too_many_answers,
    val_1_zero_answers_without_rejection,
    val_1_empty_question_id,
    val_1_unknown_question_id,
    val_1_repeated_question_id,
    val_1_expected_set_includes_terminal_siblings
);

/// VAL-1: fewer answers than questions is an error naming `answers`.
fn val_1_too_few_answers(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![answer("q1", &["q1_opt1"], "")]);
    assert_invalid(db.resolve_bundle(&alice(), &id, &request), "answers");
    assert_untouched(db, &id);
}

/// VAL-1: more answers than questions is an error about `answers` (a
/// third entry is necessarily unknown or repeated too, so any of those
/// fields may be named).
fn val_1_too_many_answers(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![
        answer("q1", &[], ""),
        answer("q2", &[], ""),
        answer("q3", &[], ""),
    ]);
    let error = invalid(db.resolve_bundle(&alice(), &id, &request));
    assert!(error.field.starts_with("answers"), "{error}");
    assert_untouched(db, &id);
}

/// VAL-1, VAL-4: `rejected: false` with no answers is the count error.
fn val_1_zero_answers_without_rejection(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    assert_invalid(
        db.resolve_bundle(&alice(), &id, &ResolveRequest::default()),
        "answers",
    );
    assert_untouched(db, &id);
}

/// VAL-1: an entry with an empty `question_id`.
fn val_1_empty_question_id(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![answer("q1", &[], ""), answer("", &[], "")]);
    assert_invalid(
        db.resolve_bundle(&alice(), &id, &request),
        "answers[1].question_id",
    );
    assert_untouched(db, &id);
}

/// VAL-1: a `question_id` that does not belong to the bundle.
fn val_1_unknown_question_id(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![answer("q9", &[], ""), answer("q2", &[], "")]);
    let error = assert_invalid(
        db.resolve_bundle(&alice(), &id, &request),
        "answers[0].question_id",
    );
    assert!(error.message.contains("q9"), "{error}");
    assert_untouched(db, &id);
}

/// VAL-1: the same `question_id` twice (the count is right).
fn val_1_repeated_question_id(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![answer("q1", &[], ""), answer("q1", &[], "")]);
    assert_invalid(
        db.resolve_bundle(&alice(), &id, &request),
        "answers[1].question_id",
    );
    assert_untouched(db, &id);
}

/// VAL-1, CLAIM-3: the expected set is every durable row, terminal
/// siblings of a mixed bundle included; the terminal row is left
/// untouched by the claim.
fn val_1_expected_set_includes_terminal_siblings(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    rows::set_status(db, &id, "q1", Some("answered"));
    let only_pending = answering(vec![answer("q2", &["q2_opt1"], "")]);
    assert_invalid(db.resolve_bundle(&alice(), &id, &only_pending), "answers");
    assert_eq!(
        stored_rows(db, &id),
        [
            ("q1".into(), Some("answered".into()), None),
            ("q2".into(), Some("pending".into()), None)
        ]
    );

    let all = answering(vec![
        answer("q1", &["q1_opt2"], "x"),
        answer("q2", &["q2_opt1"], "y"),
    ]);
    let won = db.resolve_bundle(&alice(), &id, &all).unwrap();
    assert!(won.claimed);
    let rows = stored_rows(db, &id);
    assert_eq!(
        rows[0],
        ("q1".into(), Some("answered".into()), None),
        "terminal row untouched"
    );
    assert_eq!(rows[1].1.as_deref(), Some("answered"));
    assert_eq!(
        stored_answer(db, &id, "q2"),
        Some(json!({"question_id": "q2", "selected_options": ["q2_opt1"], "custom_text": "y"}))
    );
}

// ---- VAL-2 .. VAL-8 ------------------------------------------------------

dual_backend!(
    val_2_unknown_option_id,
    val_2_option_of_another_question_is_unknown,
    val_2_several_valid_options_are_accepted,
    val_3_empty_entry_is_accepted_and_stored,
    val_4_rejection_with_answers,
    val_5_reject_reason_rune_cap,
    val_5_custom_text_rune_cap,
    val_6_empty_question_id_blocks_resolve_but_not_cancel,
    val_7_messages_start_with_the_field,
    val_8_validation_before_replay
);

/// VAL-2, VAL-7: an option id the question does not have is an error on
/// that entry's `selected_options`, with the exact message.
fn val_2_unknown_option_id(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![
        answer("q1", &["q1_opt1"], ""),
        answer("q2", &["q2_opt9"], ""),
    ]);
    let error = assert_invalid(
        db.resolve_bundle(&alice(), &id, &request),
        "answers[1].selected_options",
    );
    assert_eq!(
        error.to_string(),
        r#"answers[1].selected_options: unknown option id "q2_opt9""#
    );
    assert_untouched(db, &id);
}

/// VAL-2: an option id of a *different* question of the bundle is unknown.
fn val_2_option_of_another_question_is_unknown(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![answer("q1", &["q2_opt1"], ""), answer("q2", &[], "")]);
    let error = assert_invalid(
        db.resolve_bundle(&alice(), &id, &request),
        "answers[0].selected_options",
    );
    assert_eq!(
        error.to_string(),
        r#"answers[0].selected_options: unknown option id "q2_opt1""#
    );
    assert_untouched(db, &id);
}

/// VAL-2: several valid option ids are accepted (no single-select rule).
fn val_2_several_valid_options_are_accepted(db: &TestDb) {
    let id = ask_with_options(db, &mirror(db, "a", "alice"), &[3]);
    let request = answering(vec![answer("q1", &["q1_opt1", "q1_opt2", "q1_opt3"], "")]);
    let won = db.resolve_bundle(&alice(), &id, &request).unwrap();
    assert!(won.claimed);
    assert_eq!(
        won.response.answers,
        [stored("q1", &["q1_opt1", "q1_opt2", "q1_opt3"], "")]
    );
}

/// VAL-3: an entry with neither options nor text is a stored "no answer".
fn val_3_empty_entry_is_accepted_and_stored(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let request = answering(vec![answer("q1", &[], ""), answer("q2", &["q2_opt1"], "")]);
    let won = db.resolve_bundle(&alice(), &id, &request).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Answered);
    assert_eq!(
        won.response.answers,
        [stored("q1", &[], ""), stored("q2", &["q2_opt1"], "")]
    );
    assert_eq!(
        stored_answer(db, &id, "q1"),
        Some(json!({"question_id": "q1", "selected_options": [], "custom_text": ""}))
    );
    let replayed = db
        .resolve_bundle(&Principal::System, &id, &two_answers())
        .unwrap();
    assert_eq!(
        replayed.response.answers, won.response.answers,
        "REPLAY-2 keeps the empty entry"
    );
}

/// VAL-4: `rejected: true` with answers is an error naming `answers`.
fn val_4_rejection_with_answers(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let mut request = two_answers();
    request.rejected = true;
    assert_invalid(db.resolve_bundle(&alice(), &id, &request), "answers");
    assert_untouched(db, &id);
}

/// VAL-5: `reject_reason` is capped at 2000 runes of the raw value.
fn val_5_reject_reason_rune_cap(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    assert_invalid(
        db.resolve_bundle(&alice(), &id, &rejecting(&clefs(2001))),
        "reject_reason",
    );
    let padded = format!("{} ", clefs(2000));
    assert_invalid(
        db.resolve_bundle(&alice(), &id, &rejecting(&padded)),
        "reject_reason",
    );
    assert_untouched(db, &id);
    let won = db
        .resolve_bundle(&alice(), &id, &rejecting(&clefs(2000)))
        .unwrap();
    assert!(won.claimed);
    assert_eq!(won.response.reject_reason, clefs(2000));
    assert_eq!(resolution(db, &id).reject_reason, clefs(2000));
}

/// VAL-5: each `custom_text` is capped at 2000 runes of the raw value.
fn val_5_custom_text_rune_cap(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let with_text = |text: &str| answering(vec![answer("q1", &[], text)]);
    assert_invalid(
        db.resolve_bundle(&alice(), &id, &with_text(&clefs(2001))),
        "answers[0].custom_text",
    );
    let padded = format!("{} ", clefs(2000));
    assert_invalid(
        db.resolve_bundle(&alice(), &id, &with_text(&padded)),
        "answers[0].custom_text",
    );
    assert_untouched(db, &id);
    let won = db
        .resolve_bundle(&alice(), &id, &with_text(&clefs(2000)))
        .unwrap();
    assert!(won.claimed);
    assert_eq!(won.response.answers, [stored("q1", &[], &clefs(2000))]);
    assert_eq!(
        stored_answer(db, &id, "q1"),
        Some(json!({"question_id": "q1", "selected_options": [], "custom_text": clefs(2000)}))
    );
}

/// VAL-6: a bundle with an empty `question_id` row cannot be answered or
/// rejected (a validation error, never internal); a user's cancel clears it.
fn val_6_empty_question_id_blocks_resolve_but_not_cancel(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    degraded_bundle(db, "broken", &session, &["q1", ""]);
    let answers = answering(vec![answer("q1", &["a"], ""), answer("", &[], "")]);
    for (principal, request) in [
        (alice(), answers.clone()),
        (alice(), rejecting("no")),
        (Principal::System, answers),
        (Principal::System, rejecting("")),
    ] {
        let error = invalid(db.resolve_bundle(&principal, "broken", &request));
        assert!(
            error.to_string().contains("question_id"),
            "names the condition: {error}"
        );
    }
    assert_untouched(db, "broken");

    let cancelled = db.cancel_bundle(&alice(), "broken").unwrap();
    assert!(cancelled.claimed);
    assert_eq!(cancelled.status, BundleStatus::Cancelled);
    assert_eq!(
        rows::statuses(db, "broken"),
        [Some("cancelled".into()), Some("cancelled".into())]
    );
    assert_eq!(
        db.get_bundle(&alice(), "broken").unwrap().status,
        BundleStatus::Cancelled
    );
}

/// VAL-7: every validation message starts with the field it names, and
/// the 400 body carries that message.
fn val_7_messages_start_with_the_field(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let mut rejected_with_answers = two_answers();
    rejected_with_answers.rejected = true;
    let cases = [
        (answering(vec![answer("q1", &[], "")]), "answers"),
        (
            answering(vec![answer("", &[], ""), answer("q2", &[], "")]),
            "answers[0].question_id",
        ),
        (
            answering(vec![answer("q1", &[], ""), answer("zz", &[], "")]),
            "answers[1].question_id",
        ),
        (
            answering(vec![answer("q2", &[], ""), answer("q2", &[], "")]),
            "answers[1].question_id",
        ),
        (
            answering(vec![answer("q1", &["nope"], ""), answer("q2", &[], "")]),
            "answers[0].selected_options",
        ),
        (
            answering(vec![answer("q1", &[], ""), answer("q2", &[], &clefs(2001))]),
            "answers[1].custom_text",
        ),
        (rejected_with_answers, "answers"),
        (rejecting(&clefs(2001)), "reject_reason"),
    ];
    for (request, field) in cases {
        let error = Error::Validation(assert_invalid(
            db.resolve_bundle(&alice(), &id, &request),
            field,
        ));
        let prefix = format!("{field}: ");
        assert!(error.to_string().starts_with(&prefix), "{error}");
        let envelope = envelope::error(&error);
        assert_eq!(envelope.status, 400);
        let message = envelope.body["error"].as_str().unwrap().to_owned();
        assert!(message.starts_with(&prefix), "{message}");
    }
    assert_untouched(db, &id);
}

/// VAL-8: validation runs before the loser branch: a malformed request
/// against a resolved bundle gets the validation error, not the winner.
fn val_8_validation_before_replay(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    assert!(
        db.resolve_bundle(&alice(), &id, &two_answers())
            .unwrap()
            .claimed
    );
    let after_win = snapshot(db, &id);
    let mut rejected_with_answers = two_answers();
    rejected_with_answers.rejected = true;
    let cases = [
        (answering(vec![answer("q1", &[], "")]), "answers"),
        (ResolveRequest::default(), "answers"),
        (
            answering(vec![answer("q1", &[], ""), answer("q2", &["q2_opt9"], "")]),
            "answers[1].selected_options",
        ),
        (
            answering(vec![answer("q1", &[], ""), answer("q1", &[], "")]),
            "answers[1].question_id",
        ),
        (rejected_with_answers, "answers"),
        (rejecting(&clefs(2001)), "reject_reason"),
    ];
    for (request, field) in cases {
        assert_invalid(db.resolve_bundle(&Principal::System, &id, &request), field);
    }
    assert_eq!(snapshot(db, &id), after_win);

    // VAL-6 too: a cancelled unanswerable bundle still answers a resolve
    // with the validation error, not with the cancellation.
    degraded_bundle(db, "broken", "s-a", &["q1", ""]);
    assert!(db.cancel_bundle(&alice(), "broken").unwrap().claimed);
    invalid(db.resolve_bundle(&alice(), "broken", &rejecting("")));
}

// ---- NORM-1..4 -----------------------------------------------------------

dual_backend!(
    norm_1_answers_in_question_order,
    norm_1_dm4_order_of_degraded_rows,
    norm_2_options_in_option_order_without_duplicates,
    norm_3_custom_text_trimmed,
    norm_3_reject_reason_trimmed,
    norm_4_equivalent_submissions_are_byte_identical
);

/// NORM-1: answers given in reverse are stored in question order.
fn norm_1_answers_in_question_order(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 3);
    let request = answering(vec![
        answer("q3", &["q3_opt1"], "three"),
        answer("q2", &["q2_opt2"], "two"),
        answer("q1", &[], "one"),
    ]);
    let won = db.resolve_bundle(&alice(), &id, &request).unwrap();
    let order: Vec<_> = won
        .response
        .answers
        .iter()
        .map(|a| a.question_id.as_str())
        .collect();
    assert_eq!(order, ["q1", "q2", "q3"]);
    let replayed = db
        .resolve_bundle(&Principal::System, &id, &rejecting(""))
        .unwrap();
    assert_eq!(replayed.response.answers, won.response.answers);
}

/// NORM-1: the order is DM-4 (question_index, NULL as 0), not row
/// insertion order and not the caller's.
fn norm_1_dm4_order_of_degraded_rows(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = rows::turn_of(db, &ask(db, &session, 1));
    rows::insert_bundle(db, "b", &session, &turn, "");
    Row::new("b", &session, &turn)
        .question_id("third")
        .index(Some(2))
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("second")
        .index(Some(1))
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("first")
        .index(None)
        .insert(db);
    let request = answering(vec![
        answer("second", &["b"], ""),
        answer("third", &["a"], ""),
        answer("first", &["a", "b"], ""),
    ]);
    let won = db.resolve_bundle(&alice(), "b", &request).unwrap();
    assert!(won.claimed);
    assert_eq!(
        won.response.answers,
        [
            stored("first", &["a", "b"], ""),
            stored("second", &["b"], ""),
            stored("third", &["a"], "")
        ]
    );
}

/// NORM-2: selected options in the question's option order, exact
/// duplicates removed.
fn norm_2_options_in_option_order_without_duplicates(db: &TestDb) {
    let id = ask_with_options(db, &mirror(db, "a", "alice"), &[4, 3]);
    let request = answering(vec![
        answer(
            "q1",
            &["q1_opt4", "q1_opt2", "q1_opt4", "q1_opt1", "q1_opt2"],
            "",
        ),
        answer("q2", &["q2_opt3", "q2_opt3"], ""),
    ]);
    let won = db.resolve_bundle(&alice(), &id, &request).unwrap();
    assert_eq!(
        won.response.answers,
        [
            stored("q1", &["q1_opt1", "q1_opt2", "q1_opt4"], ""),
            stored("q2", &["q2_opt3"], "")
        ]
    );
    assert_eq!(
        stored_answer(db, &id, "q1"),
        Some(
            json!({"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt2", "q1_opt4"], "custom_text": ""})
        )
    );
}

/// NORM-3: custom_text is trimmed of leading and trailing whitespace only.
fn norm_3_custom_text_trimmed(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let request = answering(vec![answer("q1", &[], " \t\n keep  inner \t spaces \r\n ")]);
    let won = db.resolve_bundle(&alice(), &id, &request).unwrap();
    assert_eq!(
        won.response.answers,
        [stored("q1", &[], "keep  inner \t spaces")]
    );
    assert_eq!(
        stored_answer(db, &id, "q1"),
        Some(
            json!({"question_id": "q1", "selected_options": [], "custom_text": "keep  inner \t spaces"})
        )
    );
}

/// NORM-3: reject_reason is trimmed of leading and trailing whitespace only.
fn norm_3_reject_reason_trimmed(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let won = db
        .resolve_bundle(&alice(), &id, &rejecting("\n  not  now,\tthanks \t "))
        .unwrap();
    assert_eq!(won.response.reject_reason, "not  now,\tthanks");
    assert_eq!(resolution(db, &id).reject_reason, "not  now,\tthanks");
}

/// NORM-4: two equivalent submissions in different orders store
/// byte-identical responses and produce the same envelope; every replay
/// is byte-identical to its winner.
fn norm_4_equivalent_submissions_are_byte_identical(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = ask_with_options(db, &session, &[3, 2]);
    let second = ask_with_options(db, &session, &[3, 2]);
    let a = answering(vec![
        answer("q1", &["q1_opt3", "q1_opt1"], "  because "),
        answer("q2", &[], "\tnothing"),
    ]);
    let b = answering(vec![
        answer("q2", &[], "nothing  "),
        answer("q1", &["q1_opt1", "q1_opt3", "q1_opt1"], "because"),
    ]);
    let won_a = db.resolve_bundle(&alice(), &first, &a).unwrap();
    let won_b = db.resolve_bundle(&alice(), &second, &b).unwrap();
    assert!(won_a.claimed && won_b.claimed);

    let texts = |id: &str| -> Vec<(String, Option<String>)> {
        stored_rows(db, id)
            .into_iter()
            .map(|(q, _, response)| (q, response))
            .collect()
    };
    assert_eq!(texts(&first), texts(&second), "stored response texts");
    assert!(texts(&first).iter().all(|(_, response)| response.is_some()));

    let normalized = |resolved: &Resolved, id: &str| body_text(resolved).replace(id, "<id>");
    assert_eq!(normalized(&won_a, &first), normalized(&won_b, &second));

    for (id, won) in [(&first, &won_a), (&second, &won_b)] {
        let replay = db
            .resolve_bundle(&Principal::System, id, &rejecting("late"))
            .unwrap();
        assert!(!replay.claimed);
        assert_eq!(response_text(&replay), response_text(won));
    }
}

// ---- CLAIM-3 -------------------------------------------------------------

dual_backend!(
    claim_3_answer_by_user,
    claim_3_reject_by_agent,
    claim_3_resolved_by_system,
    claim_3_terminal_rows_are_left_untouched
);

/// CLAIM-3: a user's answer sets every row's status and normalized
/// answer and records the claim time, the resolver and "undelivered".
fn claim_3_answer_by_user(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    db.clock.advance_micros(5_000_123);
    let request = answering(vec![
        answer("q2", &["q2_opt2", "q2_opt1"], " second "),
        answer("q1", &["q1_opt1"], ""),
    ]);
    let won = db.resolve_bundle(&alice(), &id, &request).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Answered);
    assert_eq!(
        rows::statuses(db, &id),
        [Some("answered".into()), Some("answered".into())]
    );
    assert_eq!(
        stored_answer(db, &id, "q1"),
        Some(json!({"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": ""}))
    );
    assert_eq!(
        stored_answer(db, &id, "q2"),
        Some(
            json!({"question_id": "q2", "selected_options": ["q2_opt1", "q2_opt2"], "custom_text": "second"})
        )
    );
    let now = EPOCH.as_micros() + 5_000_123;
    assert_eq!(
        resolution(db, &id),
        Resolution {
            reject_reason: String::new(),
            responded_at: Some(now),
            resolved_by_kind: Some("user".into()),
            resolved_by_id: Some("alice".into()),
            response_delivery_pending: true,
        }
    );
    assert_eq!(won.response.responded_at, Some(Timestamp::from_micros(now)));
    assert!(!won.response.rejected);
    assert_eq!(won.response.reject_reason, "");
}

/// CLAIM-3: an agent's rejection marks every row rejected with no
/// response and records the trimmed reason and `agent`, `user/agent`.
fn claim_3_reject_by_agent(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 3);
    db.clock.advance_micros(42);
    let won = db
        .resolve_bundle(&alice_bot(), &id, &rejecting("  not this way "))
        .unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Rejected);
    for (question_id, status, response) in stored_rows(db, &id) {
        assert_eq!(status.as_deref(), Some("rejected"), "{question_id}");
        assert_eq!(
            response, None,
            "a rejected row has no response: {question_id}"
        );
    }
    assert_eq!(
        resolution(db, &id),
        Resolution {
            reject_reason: "not this way".into(),
            responded_at: Some(EPOCH.as_micros() + 42),
            resolved_by_kind: Some("agent".into()),
            resolved_by_id: Some("alice/bot".into()),
            response_delivery_pending: true,
        }
    );
    assert!(won.response.rejected);
    assert!(won.response.answers.is_empty());
}

/// CLAIM-3: `system` is recorded as kind `system` with an empty id.
fn claim_3_resolved_by_system(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let request = answering(vec![answer("q1", &["q1_opt2"], "")]);
    assert!(
        db.resolve_bundle(&Principal::System, &id, &request)
            .unwrap()
            .claimed
    );
    let stored = resolution(db, &id);
    assert_eq!(stored.resolved_by_kind.as_deref(), Some("system"));
    assert_eq!(stored.resolved_by_id.as_deref(), Some(""));
    assert_eq!(stored.responded_at, Some(EPOCH.as_micros()));
    assert!(stored.response_delivery_pending);
}

/// CLAIM-3: rows already terminal in a mixed bundle keep their status
/// and response, for an answer and for a rejection.
fn claim_3_terminal_rows_are_left_untouched(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let legacy = r#"{"question_id":"q1","selected_options":[],"custom_text":"legacy"}"#;
    let answered = ask(db, &session, 3);
    rows::set_status(db, &answered, "q1", Some("answered"));
    set_row_response(db, &answered, "q1", legacy);
    rows::set_status(db, &answered, "q3", Some("expired"));
    let request = answering(vec![
        answer("q1", &["q1_opt1"], "new"),
        answer("q2", &["q2_opt1"], "new"),
        answer("q3", &["q3_opt1"], "new"),
    ]);
    assert!(
        db.resolve_bundle(&alice(), &answered, &request)
            .unwrap()
            .claimed
    );
    let rows = stored_rows(db, &answered);
    assert_eq!(
        rows[0],
        ("q1".into(), Some("answered".into()), Some(legacy.into()))
    );
    assert_eq!(rows[1].1.as_deref(), Some("answered"));
    assert_eq!(
        stored_answer(db, &answered, "q2"),
        Some(json!({"question_id": "q2", "selected_options": ["q2_opt1"], "custom_text": "new"}))
    );
    assert_eq!(rows[2], ("q3".into(), Some("expired".into()), None));

    let rejected = ask(db, &session, 2);
    rows::set_status(db, &rejected, "q1", Some("expired"));
    assert!(
        db.resolve_bundle(&alice(), &rejected, &rejecting("no"))
            .unwrap()
            .claimed
    );
    assert_eq!(
        stored_rows(db, &rejected),
        [
            ("q1".into(), Some("expired".into()), None),
            ("q2".into(), Some("rejected".into()), None)
        ]
    );
}

// ---- REPLAY-1..3 ---------------------------------------------------------

dual_backend!(
    replay_1_loser_gets_the_winners_answer,
    replay_2_replayed_rejection_and_cancellation,
    replay_1_superseded_is_no_longer_active,
    replay_1_ended_session_is_no_longer_active,
    replay_1_terminal_session_without_expiry_is_no_longer_active,
    replay_1_malformed_bundle_is_no_longer_active,
    replay_3_claim_error_writes_nothing
);

/// REPLAY-1/2: a later resolve with other answers gets the winner's
/// status and response byte for byte with `claimed: false`, and writes
/// nothing.
fn replay_1_loser_gets_the_winners_answer(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    db.clock.advance_micros(1_000_000);
    let won = db.resolve_bundle(&alice(), &id, &two_answers()).unwrap();
    assert!(won.claimed);
    db.raw(|conn| {
        diesel::update(bundles::table.find(&id))
            .set(bundles::response_delivery_pending.eq(false))
            .execute(conn)
            .unwrap()
    });
    let before = snapshot(db, &id);

    db.clock.advance_micros(9_000_000);
    let other = answering(vec![
        answer("q2", &["q2_opt1"], "mine"),
        answer("q1", &[], ""),
    ]);
    for (principal, request) in [
        (Principal::System, other),
        (alice(), two_answers()),
        (alice_bot(), rejecting("too late")),
    ] {
        let lost = db.resolve_bundle(&principal, &id, &request).unwrap();
        assert!(!lost.claimed);
        assert_eq!(lost.status, BundleStatus::Answered);
        assert_eq!(lost.response, won.response);
        assert_eq!(response_text(&lost), response_text(&won));
        assert_eq!(
            body_text(&lost),
            body_text(&won).replace(r#""claimed":true"#, r#""claimed":false"#)
        );
        assert_eq!(snapshot(db, &id), before, "the loser writes nothing");
    }
}

/// REPLAY-2: a replayed rejection has no answers and the winner's
/// trimmed reason; a replayed cancellation has neither.
fn replay_2_replayed_rejection_and_cancellation(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let rejected = ask(db, &session, 2);
    let won = db
        .resolve_bundle(&alice(), &rejected, &rejecting("  wrong question\n"))
        .unwrap();
    let lost = db
        .resolve_bundle(&Principal::System, &rejected, &two_answers())
        .unwrap();
    assert!(!lost.claimed);
    assert_eq!(lost.status, BundleStatus::Rejected);
    assert!(lost.response.rejected);
    assert!(lost.response.answers.is_empty());
    assert_eq!(lost.response.reject_reason, "wrong question");
    assert_eq!(response_text(&lost), response_text(&won));
    let body: Value = serde_json::from_str(&body_text(&lost)).unwrap();
    assert_eq!(body["response"]["answers"], json!([]));
    assert_eq!(body["response"]["reject_reason"], json!("wrong question"));

    let cancelled = ask(db, &session, 1);
    let won = db.cancel_bundle(&alice(), &cancelled).unwrap();
    let lost = db
        .resolve_bundle(&alice(), &cancelled, &rejecting("why"))
        .unwrap();
    assert!(!lost.claimed);
    assert_eq!(lost.status, BundleStatus::Cancelled);
    assert!(!lost.response.rejected);
    assert!(lost.response.answers.is_empty());
    assert_eq!(lost.response.reject_reason, "");
    assert_eq!(response_text(&lost), response_text(&won));
}

/// REPLAY-1: superseded by a newer turn, nobody won: 409.
fn replay_1_superseded_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    db.begin_turn(&session).unwrap();
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &two_answers()));
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &rejecting("")));
    assert_untouched(db, &id);
}

/// REPLAY-1: the session ended and its questions expired: 409.
fn replay_1_ended_session_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    db.set_session_state(&session, SessionState::Completed)
        .unwrap();
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &two_answers()));
    assert_eq!(
        rows::statuses(db, &id),
        [Some("expired".into()), Some("expired".into())]
    );
    assert_eq!(resolution(db, &id), unresolved());
}

/// REPLAY-1: a terminal session whose rows were never expired: 409.
fn replay_1_terminal_session_without_expiry_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    rows::force_state(db, &session, "failed");
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &two_answers()));
    assert_untouched(db, &id);
}

/// REPLAY-1: a malformed bundle (rows over two turns): 409.
fn replay_1_malformed_bundle_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let old_turn = db.begin_turn(&session).unwrap();
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "mal", &session, &turn, "");
    Row::new("mal", &session, &turn)
        .question_id("q1")
        .index(Some(0))
        .insert(db);
    Row::new("mal", &session, &old_turn)
        .question_id("q2")
        .index(Some(1))
        .insert(db);
    let request = answering(vec![answer("q1", &["a"], ""), answer("q2", &["b"], "")]);
    assert_no_longer_active(db.resolve_bundle(&alice(), "mal", &request));
    assert_untouched(db, "mal");
}

/// REPLAY-3: a claim that fails mid-transaction is an error (500), not a
/// claim or a replay; nothing is written; after the fault a resolve wins.
fn replay_3_claim_error_writes_nothing(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    for point in [points::CLAIM_AFTER_ROWS, points::CLAIM_BEFORE_COMMIT] {
        db.arm_failpoint(point, FailAction::Error);
        for request in [two_answers(), rejecting("no")] {
            match db.resolve_bundle(&alice(), &id, &request) {
                Err(error @ Error::Internal(_)) => {
                    assert!(error.to_string().contains(point), "{error}");
                    assert!(error.to_string().contains(&id), "names the bundle: {error}");
                    assert_eq!(envelope::error(&error).status, 500);
                }
                other => {
                    panic!("expected an internal error from the claim at {point}, got {other:?}")
                }
            }
            assert_untouched(db, &id);
            assert!(
                listed(db, &alice(), &id),
                "still listed after a failed claim at {point}"
            );
        }
        db.disarm_failpoint(point);
    }
    let won = db.resolve_bundle(&alice(), &id, &two_answers()).unwrap();
    assert!(won.claimed);
    assert!(!listed(db, &alice(), &id));
}

// ---- LIFE-6 --------------------------------------------------------------

dual_backend!(
    life_6_cancel_by_user,
    life_6_cancel_by_system,
    life_6_agents_cannot_cancel,
    life_6_cancel_loser_replays_the_winner,
    life_6_cancel_superseded_is_no_longer_active,
    life_6_cancel_after_restart
);

/// LIFE-6: a user cancels through the claim.
fn life_6_cancel_by_user(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    db.clock.advance_micros(3_000_000);
    let won = db.cancel_bundle(&alice(), &id).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Cancelled);
    assert!(won.response.answers.is_empty());
    assert!(!won.response.rejected);
    assert_eq!(won.response.reject_reason, "");
    assert_eq!(
        stored_rows(db, &id),
        [
            ("q1".into(), Some("cancelled".into()), None),
            ("q2".into(), Some("cancelled".into()), None)
        ]
    );
    assert_eq!(
        resolution(db, &id),
        Resolution {
            reject_reason: String::new(),
            responded_at: Some(EPOCH.as_micros() + 3_000_000),
            resolved_by_kind: Some("user".into()),
            resolved_by_id: Some("alice".into()),
            response_delivery_pending: true,
        }
    );
    assert!(!listed(db, &alice(), &id));
}

/// LIFE-6: `system` cancels too.
fn life_6_cancel_by_system(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let won = db.cancel_bundle(&Principal::System, &id).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Cancelled);
    let stored = resolution(db, &id);
    assert_eq!(
        (
            stored.resolved_by_kind.as_deref(),
            stored.resolved_by_id.as_deref()
        ),
        (Some("system"), Some(""))
    );
    assert_eq!(rows::statuses(db, &id), [Some("cancelled".into())]);
}

/// LIFE-6, AUTH-2: agents never cancel, whatever their grants.
fn life_6_agents_cannot_cancel(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    for agent in [
        alice_bot(),
        alice_bot_with([]),
        alice_bot_with([Grant::QuestionsAnswer]),
    ] {
        assert!(matches!(
            db.cancel_bundle(&agent, &id),
            Err(Error::CapabilityDenied)
        ));
        assert!(matches!(
            db.cancel_bundle(&agent, "fabricated"),
            Err(Error::CapabilityDenied)
        ));
    }
    assert!(matches!(
        db.cancel_bundle(&Principal::Unclassified, &id),
        Err(Error::CapabilityDenied)
    ));
    assert_untouched(db, &id);
}

/// LIFE-6, REPLAY-1: cancel's loser replays the winner, and a resolve
/// after a cancel replays the cancellation.
fn life_6_cancel_loser_replays_the_winner(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let answered = ask(db, &session, 2);
    let won = db
        .resolve_bundle(&alice(), &answered, &two_answers())
        .unwrap();
    let before = snapshot(db, &answered);
    let lost = db.cancel_bundle(&alice(), &answered).unwrap();
    assert!(!lost.claimed);
    assert_eq!(lost.status, BundleStatus::Answered);
    assert_eq!(response_text(&lost), response_text(&won));
    assert_eq!(snapshot(db, &answered), before);

    let cancelled = ask(db, &session, 1);
    let won = db.cancel_bundle(&Principal::System, &cancelled).unwrap();
    for lost in [
        db.cancel_bundle(&alice(), &cancelled).unwrap(),
        db.resolve_bundle(
            &alice(),
            &cancelled,
            &answering(vec![answer("q1", &[], "")]),
        )
        .unwrap(),
    ] {
        assert!(!lost.claimed);
        assert_eq!(lost.status, BundleStatus::Cancelled);
        assert_eq!(response_text(&lost), response_text(&won));
    }
}

/// LIFE-6: cancelling a superseded bundle is the no-winner conflict.
fn life_6_cancel_superseded_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.begin_turn(&session).unwrap();
    assert_no_longer_active(db.cancel_bundle(&alice(), &id));
    assert_untouched(db, &id);
}

/// LIFE-6: cancel needs no waiter and works on a handle opened after the
/// bundle was asked (a restart).
fn life_6_cancel_after_restart(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let restarted = db.reopen();
    let won = restarted.cancel_bundle(&alice(), &id).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Cancelled);
    assert_eq!(
        db.get_bundle(&alice(), &id).unwrap().status,
        BundleStatus::Cancelled
    );
    let lost = db.cancel_bundle(&alice(), &id).unwrap();
    assert!(!lost.claimed);
    assert_eq!(response_text(&lost), response_text(&won));
}

// ---- not found and capabilities ------------------------------------------

dual_backend!(
    auth_5_resolve_and_cancel_foreign_equals_fabricated,
    auth_2_agent_needs_the_answer_grant,
    auth_6_agent_resolves_questions_not_permissions
);

/// AUTH-5, REL-4: resolve and cancel give byte-identical results for a
/// foreign bundle and a fabricated id, whatever the request.
fn auth_5_resolve_and_cancel_foreign_equals_fabricated(db: &TestDb) {
    mirror(db, "a", "alice");
    let foreign = ask(db, &mirror(db, "b", "bob"), 2);
    let not_found = format!("{:?}", Err::<Resolved, _>(Error::NotFound(Entity::Bundle)));
    for principal in [alice(), alice_bot()] {
        for request in [
            two_answers(),
            rejecting("no"),
            ResolveRequest::default(),
            answering(vec![answer("q1", &["x"], "")]),
        ] {
            let on_foreign = format!("{:?}", db.resolve_bundle(&principal, &foreign, &request));
            let on_fabricated = format!(
                "{:?}",
                db.resolve_bundle(&principal, "fabricated", &request)
            );
            assert_eq!(on_foreign, on_fabricated);
            assert_eq!(on_foreign, not_found);
        }
    }
    let cancel_foreign = format!("{:?}", db.cancel_bundle(&alice(), &foreign));
    assert_eq!(
        cancel_foreign,
        format!("{:?}", db.cancel_bundle(&alice(), "fabricated"))
    );
    assert_eq!(cancel_foreign, not_found);
    let not_found_body = envelope::error(&Error::NotFound(Entity::Bundle));
    assert_eq!(
        (not_found_body.status, not_found_body.body_text()),
        (
            404,
            r#"{"error":"clarification request not found"}"#.to_owned()
        )
    );
    assert_untouched(db, &foreign);
}

/// AUTH-2: resolving needs `questions:answer` for an agent;
/// `unclassified` never resolves; the capability comes before validation.
fn auth_2_agent_needs_the_answer_grant(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let mut rejected_with_answers = two_answers();
    rejected_with_answers.rejected = true;
    for principal in [
        alice_bot_with([Grant::QuestionsRead]),
        alice_bot_with([]),
        Principal::Unclassified,
    ] {
        for request in [two_answers(), rejected_with_answers.clone()] {
            assert!(matches!(
                db.resolve_bundle(&principal, &id, &request),
                Err(Error::CapabilityDenied)
            ));
        }
        assert!(matches!(
            db.resolve_bundle(&principal, "fabricated", &two_answers()),
            Err(Error::CapabilityDenied)
        ));
    }
    assert_untouched(db, &id);
    let body = envelope::error(&Error::CapabilityDenied);
    assert_eq!(body.status, 403);
}

/// AUTH-2, AUTH-6: an agent with `questions:answer` resolves a question
/// bundle; a permission bundle is not-found to it, and humans resolve it.
fn auth_6_agent_resolves_questions_not_permissions(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let agent = alice_bot_with([Grant::QuestionsAnswer]);
    let question = ask(db, &session, 2);
    let won = db
        .resolve_bundle(&agent, &question, &two_answers())
        .unwrap();
    assert!(won.claimed);
    assert_eq!(
        resolution(db, &question).resolved_by_id.as_deref(),
        Some("alice/bot")
    );

    let permission = ask_permission(db, &session, 1);
    let one = answering(vec![answer("q1", &["q1_opt1"], "")]);
    for request in [one.clone(), rejecting("no")] {
        let on_permission = format!("{:?}", db.resolve_bundle(&agent, &permission, &request));
        assert_eq!(
            on_permission,
            format!("{:?}", db.resolve_bundle(&agent, "fabricated", &request))
        );
        assert!(matches!(
            db.resolve_bundle(&agent, &permission, &request),
            Err(Error::NotFound(Entity::Bundle))
        ));
    }
    assert_untouched(db, &permission);
    assert!(
        db.resolve_bundle(&alice(), &permission, &one)
            .unwrap()
            .claimed
    );
}

// ---- WIRE-1 / WIRE-2 -----------------------------------------------------

dual_backend!(
    wire_2_answer_bytes,
    wire_2_rejection_bytes,
    wire_2_cancellation_bytes
);

/// WIRE-1, WIRE-2: the exact bytes of a won answer, with every key in
/// order, and of its replay.
fn wire_2_answer_bytes(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    db.clock.advance_micros(5_000_123);
    let won = db.resolve_bundle(&alice(), &id, &two_answers()).unwrap();
    let response = format!(
        concat!(
            r#"{{"pending_id":"{}","answers":["#,
            r#"{{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"first"}},"#,
            r#"{{"question_id":"q2","selected_options":["q2_opt2"],"custom_text":""}}],"#,
            r#""rejected":false,"reject_reason":"","responded_at":"2026-11-29T20:00:05.000123Z"}}"#
        ),
        id
    );
    assert_eq!(response_text(&won), response);
    assert_eq!(
        body_text(&won),
        format!(r#"{{"success":true,"claimed":true,"status":"answered","response":{response}}}"#)
    );
    assert_eq!(envelope::resolved(&won).status, 200);
    let lost = db
        .resolve_bundle(&Principal::System, &id, &rejecting(""))
        .unwrap();
    assert_eq!(
        body_text(&lost),
        format!(r#"{{"success":true,"claimed":false,"status":"answered","response":{response}}}"#)
    );
    assert_eq!(envelope::resolved(&lost).status, 200);
}

/// WIRE-2: a rejection keeps every key: `"answers":[]`, `"rejected":true`.
fn wire_2_rejection_bytes(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let won = db
        .resolve_bundle(&alice(), &id, &rejecting(" not now "))
        .unwrap();
    let text = body_text(&won);
    assert_eq!(
        text,
        format!(
            concat!(
                r#"{{"success":true,"claimed":true,"status":"rejected","response":"#,
                r#"{{"pending_id":"{}","answers":[],"rejected":true,"reject_reason":"not now","#,
                r#""responded_at":"2026-11-29T20:00:00.000000Z"}}}}"#
            ),
            id
        )
    );
    assert!(text.contains(r#""answers":[]"#) && text.contains(r#""rejected":true"#));
}

/// WIRE-2: a cancellation keeps every key, with empty values.
fn wire_2_cancellation_bytes(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    db.clock.advance_micros(7);
    let won = db.cancel_bundle(&alice(), &id).unwrap();
    assert_eq!(
        response_text(&won),
        format!(
            r#"{{"pending_id":"{id}","answers":[],"rejected":false,"reject_reason":"","responded_at":"2026-11-29T20:00:00.000007Z"}}"#
        )
    );
    assert!(body_text(&won)
        .starts_with(r#"{"success":true,"claimed":true,"status":"cancelled","response":{"#));
}

// ---- further claim and visibility cases ------------------------------------

dual_backend!(
    claim_3_null_and_empty_statuses_are_pending,
    claim_5_one_winner_among_racers,
    auth_4_system_resolves_a_bundle_without_a_task
);

/// CLAIM-3, ACT-1.1: rows whose status is NULL or empty are still
/// pending and take the resolution; an unrecognized status is not
/// pending and is left as stored.
fn claim_3_null_and_empty_statuses_are_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = rows::turn_of(db, &ask(db, &session, 1));
    rows::insert_bundle(db, "b", &session, &turn, "");
    Row::new("b", &session, &turn)
        .question_id("n")
        .index(Some(0))
        .status(None)
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("e")
        .index(Some(1))
        .status(Some(""))
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("w")
        .index(Some(2))
        .status(Some("weird"))
        .insert(db);
    let request = answering(vec![
        answer("n", &["a"], ""),
        answer("e", &["b"], ""),
        answer("w", &[], ""),
    ]);
    let won = db.resolve_bundle(&alice(), "b", &request).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Answered);
    assert_eq!(
        rows::statuses(db, "b"),
        [
            Some("answered".into()),
            Some("answered".into()),
            Some("weird".into())
        ]
    );
    assert_eq!(stored_answer(db, "b", "w"), None);
    assert_eq!(
        won.response.answers,
        [stored("n", &["a"], ""), stored("e", &["b"], "")]
    );
}

/// CLAIM-5: many racers on one bundle, each with different answers:
/// exactly one claims it, every other gets the winner's response byte
/// for byte, and the stored rows hold the winner's answers.
fn claim_5_one_winner_among_racers(db: &TestDb) {
    const RACERS: usize = 32;
    let session = mirror(db, "a", "alice");
    let handles = [db.clarion.clone(), db.reopen()];
    for round in 0..4 {
        let id = ask_with_options(db, &session, &[6]);
        let start = std::sync::Barrier::new(RACERS);
        let results: Vec<Resolved> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..RACERS)
                .map(|n| {
                    let (handle, id, start) = (&handles[n % 2], &id, &start);
                    scope.spawn(move || {
                        let request = if n % 5 == 4 {
                            rejecting(&format!("racer {n}"))
                        } else {
                            let option = format!("q1_opt{}", n % 6 + 1);
                            answering(vec![answer("q1", &[&option], &format!("racer {n}"))])
                        };
                        start.wait();
                        handle.resolve_bundle(&alice(), id, &request).unwrap()
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let winners: Vec<String> = results
            .iter()
            .filter(|r| r.claimed)
            .map(response_text)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: exactly one claim, got {winners:#?}"
        );
        let winner = results.iter().find(|r| r.claimed).unwrap();
        for result in &results {
            assert_eq!(result.status, winner.status);
            assert_eq!(response_text(result), response_text(winner));
        }
        let replay = db
            .resolve_bundle(&Principal::System, &id, &rejecting(""))
            .unwrap();
        assert_eq!(
            response_text(&replay),
            response_text(winner),
            "stored rows equal the winner's"
        );
    }
}

/// AUTH-4 [seed M5a]: a bundle whose task cannot be resolved is
/// not-found to users, but `system` may resolve or cancel it.
fn auth_4_system_resolves_a_bundle_without_a_task(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = rows::turn_of(db, &ask(db, &session, 1));
    for id in ["orphan-1", "orphan-2"] {
        rows::insert_bundle(db, id, &session, &turn, "t-deleted-long-ago");
        Row::new(id, &session, &turn).insert(db);
    }
    let request = answering(vec![answer("q1", &["a"], "")]);
    assert!(matches!(
        db.resolve_bundle(&alice(), "orphan-1", &request),
        Err(Error::NotFound(Entity::Bundle))
    ));
    assert!(matches!(
        db.cancel_bundle(&alice(), "orphan-2"),
        Err(Error::NotFound(Entity::Bundle))
    ));
    assert_untouched(db, "orphan-1");
    assert!(
        db.resolve_bundle(&Principal::System, "orphan-1", &request)
            .unwrap()
            .claimed
    );
    assert!(
        db.cancel_bundle(&Principal::System, "orphan-2")
            .unwrap()
            .claimed
    );
}

dual_backend!(rel_8_row_ids_beyond_32_bits);

/// REL-8: row ids are 64-bit on both backends: a question row whose id
/// is beyond 32 bits is read, claimed and replayed like any other.
fn rel_8_row_ids_beyond_32_bits(db: &TestDb) {
    let session = mirror(db, "big", "alice");
    let pending_id = ask(db, &session, 1);
    let big: i64 = 5_000_000_000;
    db.raw(|conn| {
        diesel::update(bundle_questions::table.filter(bundle_questions::pending_id.eq(&pending_id)))
            .set(bundle_questions::id.eq(big))
            .execute(conn)
            .unwrap()
    });
    let won = db
        .resolve_bundle(&alice(), &pending_id, &one_answer("big"))
        .unwrap();
    assert!(won.claimed);
    let lost = db
        .resolve_bundle(&alice(), &pending_id, &one_answer("late"))
        .unwrap();
    assert_eq!(lost.response, won.response);
    let ids: Vec<i64> = db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(&pending_id))
            .select(bundle_questions::id)
            .load(conn)
            .unwrap()
    });
    assert_eq!(ids, [big]);
}
