//! `resolve_bundle`'s validation (VAL-1..8): the expected set of answers,
//! option ids, empty entries, rejections with answers, rune caps, rows
//! with empty ids, messages that start with the field, and validation
//! before the loser's replay.

use clarion::envelope;
use clarion::{BundleStatus, Error, Principal, ResolveRequest, Resolved, ValidationError};
use serde_json::json;

use crate::resolve_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

/// The validation error of `result`, or a panic naming what came instead.
fn invalid(result: clarion::Result<Resolved>) -> ValidationError {
    match result {
        Err(Error::Validation(error)) => error,
        other => panic!("expected a validation error, got {other:?}"),
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
