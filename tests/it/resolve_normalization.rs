//! What a resolve stores, normalized (NORM-1..4): answers in question
//! order, options in option order without duplicates, trimmed text, and
//! equivalent submissions byte-identical; and the exact WIRE-1/WIRE-2
//! bytes of an answer, a rejection and a cancellation.

use clarion::envelope;
use clarion::{Principal, Resolved};
use serde_json::json;

use crate::resolve_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

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

// ---- WIRE-1 / WIRE-2 -----------------------------------------------------

dual_backend!(
    wire_2_answer_bytes,
    wire_2_rejection_bytes,
    wire_2_cancellation_bytes,
    wire_2_decided_by_names_the_winners_kind,
    wire_2_decided_by_empty_for_degraded_rows
);

/// WIRE-2: `decided_by` is the winner's principal kind, the same for the
/// winner, every loser's replay and `get_bundle`.
fn wire_2_decided_by_names_the_winners_kind(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let agent = Principal::agent("alice", "a1", clarion::Grant::ALL);
    for (winner, word) in [
        (alice(), "user"),
        (agent, "agent"),
        (Principal::System, "system"),
    ] {
        let id = ask(db, &session, 1);
        let won = db.resolve_bundle(&winner, &id, &one_answer("x")).unwrap();
        let lost = db.cancel_bundle(&Principal::System, &id).unwrap();
        let shown = db.get_bundle(&Principal::System, &id).unwrap();
        for (what, response) in [
            ("winner", won.response),
            ("loser", lost.response),
            ("get_bundle", shown.response.unwrap()),
        ] {
            assert_eq!(response.decided_by.as_str(), word, "{what} of {winner:?}");
        }
        let text = body_text(&db.cancel_bundle(&alice(), &id).unwrap());
        assert!(
            text.contains(&format!(r#""decided_by":"{word}","voters":[]}}"#)),
            "{text}"
        );
    }
}

/// WIRE-2, DM-1: a resolution written by hand, with no resolver recorded,
/// shows `"decided_by":""`, the key still present.
fn wire_2_decided_by_empty_for_degraded_rows(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b1", &session, &turn, "t-a");
    Row::new("b1", &session, &turn)
        .status(Some("answered"))
        .insert(db);
    let shown = db.get_bundle(&Principal::System, "b1").unwrap();
    let response = shown.response.clone().expect("a stored resolution");
    assert_eq!(response.decided_by, clarion::DecidedBy::Unrecorded);
    let text = envelope::bundle_detail(&shown).body_text();
    assert!(text.contains(r#""decided_by":"""#), "{text}");
}

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
            r#""rejected":false,"reject_reason":"","responded_at":"2026-11-29T20:00:05.000123Z","#,
            r#""decided_by":"user","voters":[]}}"#
        ),
        id
    );
    assert_eq!(response_text(&won), response);
    assert_eq!(
        body_text(&won),
        format!(
            r#"{{"success":true,"claimed":true,"status":"answered","response":{response},"quorum":null}}"#
        )
    );
    assert_eq!(envelope::resolved(&won).status, 200);
    let lost = db
        .resolve_bundle(&Principal::System, &id, &rejecting(""))
        .unwrap();
    assert_eq!(
        body_text(&lost),
        format!(
            r#"{{"success":true,"claimed":false,"status":"answered","response":{response},"quorum":null}}"#
        )
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
                r#""responded_at":"2026-11-29T20:00:00.000000Z","decided_by":"user","voters":[]}},"quorum":null}}"#
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
            r#"{{"pending_id":"{id}","answers":[],"rejected":false,"reject_reason":"","responded_at":"2026-11-29T20:00:00.000007Z","decided_by":"user","voters":[]}}"#
        )
    );
    assert!(body_text(&won)
        .starts_with(r#"{"success":true,"claimed":true,"status":"cancelled","response":{"#));
}
