//! ASK-1..5: creating a bundle — one transaction, validation of every content
//! rule with the exact field named, default ids, idempotent replays and
//! asking on ended sessions.

use clarion::test_hooks::schema::{bundle_questions, bundles, sessions, turns};
use clarion::test_hooks::{points, FailAction};
use clarion::{
    AskRequest, Asked, BundleKind, Entity, Error, OptionSpec, QuestionSpec, SessionState,
    SessionUpsert,
};
use diesel::prelude::*;

use crate::support::rows;
use crate::support::*;

/// Row counts of (turns, bundles, question rows) across the database.
fn counts(db: &TestDb) -> (i64, i64, i64) {
    db.raw(|conn| {
        (
            turns::table.count().get_result(conn).unwrap(),
            bundles::table.count().get_result(conn).unwrap(),
            bundle_questions::table.count().get_result(conn).unwrap(),
        )
    })
}

/// A stored question row: (question_id, question_index, session_id, turn_id,
/// status).
type QuestionRow = (String, Option<i32>, String, String, Option<String>);

/// The stored question rows of a bundle, in question order.
fn question_rows(db: &TestDb, pending_id: &str) -> Vec<QuestionRow> {
    db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .order_by((bundle_questions::question_index, bundle_questions::id))
            .select((
                bundle_questions::question_id,
                bundle_questions::question_index,
                bundle_questions::session_id,
                bundle_questions::turn_id,
                bundle_questions::status,
            ))
            .load(conn)
            .unwrap()
    })
}

/// The parsed payloads of a bundle's question rows, in question order.
fn payloads(db: &TestDb, pending_id: &str) -> Vec<serde_json::Value> {
    let texts: Vec<String> = db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .order_by((bundle_questions::question_index, bundle_questions::id))
            .select(bundle_questions::payload)
            .load(conn)
            .unwrap()
    });
    texts
        .iter()
        .map(|text| serde_json::from_str(text).expect("payload is JSON"))
        .collect()
}

/// Option ids of every question of a bundle, from the stored payloads.
fn option_ids(db: &TestDb, pending_id: &str) -> Vec<Vec<String>> {
    payloads(db, pending_id)
        .iter()
        .map(|payload| {
            payload["options"]
                .as_array()
                .expect("options array")
                .iter()
                .map(|option| option["option_id"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// (session_id, task_id, turn_id, kind, context, idempotency_key) of a bundle.
#[allow(clippy::type_complexity)]
fn bundle_row(
    db: &TestDb,
    pending_id: &str,
) -> (String, String, String, String, String, Option<String>) {
    db.raw(|conn| {
        bundles::table
            .find(pending_id)
            .select((
                bundles::session_id,
                bundles::task_id,
                bundles::turn_id,
                bundles::kind,
                bundles::context,
                bundles::idempotency_key,
            ))
            .first(conn)
            .unwrap()
    })
}

fn turn_ids(db: &TestDb, session_id: &str) -> Vec<String> {
    db.raw(|conn| {
        turns::table
            .filter(turns::session_id.eq(session_id))
            .order_by(turns::seq)
            .select(turns::id)
            .load(conn)
            .unwrap()
    })
}

fn session_state(db: &TestDb, session_id: &str) -> String {
    db.raw(|conn| {
        sessions::table
            .find(session_id)
            .select(sessions::state)
            .first(conn)
            .unwrap()
    })
}

fn keyed(session_id: &str, key: &str) -> AskRequest {
    AskRequest {
        idempotency_key: Some(key.to_owned()),
        ..ask_request(session_id, 1)
    }
}

fn opt(id: Option<&str>, label: &str) -> OptionSpec {
    OptionSpec {
        option_id: id.map(str::to_owned),
        ..option(label)
    }
}

fn q(id: Option<&str>, prompt: &str) -> QuestionSpec {
    QuestionSpec {
        question_id: id.map(str::to_owned),
        ..question(prompt)
    }
}

// ---- ASK-1 ------------------------------------------------------------

dual_backend!(
    ask_1_writes_one_bundle_and_a_row_per_question_in_a_new_turn,
    ask_1_uses_the_current_turn_when_one_exists,
    ask_1_bundle_task_is_the_sessions_task,
    ask_1_failure_after_bundle_row_leaves_nothing,
    ask_1_failure_after_first_question_leaves_nothing,
    ask_1_failure_rolls_back_the_started_turn
);

/// ASK-1: one bundle row and one pending question row per question, all
/// in the current turn, which `ask` starts when the session has none.
fn ask_1_writes_one_bundle_and_a_row_per_question_in_a_new_turn(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    assert!(turn_ids(db, &session).is_empty());
    let mut request = ask_request(&session, 3);
    request.kind = BundleKind::Permission;
    let asked = db.ask(&request).unwrap();
    assert!(asked.created);
    assert!(!asked.pending_id.is_empty());

    let turns = turn_ids(db, &session);
    assert_eq!(turns.len(), 1, "ask starts exactly one turn");
    let turn = &turns[0];
    assert_eq!(counts(db), (1, 1, 3));
    assert_eq!(
        bundle_row(db, &asked.pending_id),
        (
            session.clone(),
            "t-a".to_owned(),
            turn.clone(),
            "permission".to_owned(),
            "the agent needs a decision".to_owned(),
            None
        )
    );
    let expected: Vec<_> = (0..3)
        .map(|i| {
            (
                format!("q{}", i + 1),
                Some(i),
                session.clone(),
                turn.clone(),
                Some("pending".to_owned()),
            )
        })
        .collect();
    assert_eq!(question_rows(db, &asked.pending_id), expected);
    assert!(db.has_pending_clarification(&session).unwrap());
}

/// ASK-1: a session that has a turn gets the bundle in its current turn;
/// `ask` starts no further turn.
fn ask_1_uses_the_current_turn_when_one_exists(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.begin_turn(&session).unwrap();
    let current = db.begin_turn(&session).unwrap();
    let first = ask(db, &session, 1);
    let second = ask(db, &session, 2);
    assert_eq!(turn_ids(db, &session).len(), 2);
    assert_eq!(rows::turn_of(db, &first), current);
    assert_eq!(rows::turn_of(db, &second), current);
    for (_, _, _, turn, _) in question_rows(db, &second) {
        assert_eq!(turn, current);
    }
    assert_eq!(counts(db), (2, 2, 3));
}

/// ASK-1: the bundle's task is the session's task, whatever the ids are
/// called.
fn ask_1_bundle_task_is_the_sessions_task(db: &TestDb) {
    db.upsert_task("some-task", Some("w-x")).unwrap();
    db.upsert_session(SessionUpsert::new("some-session", "some-task"))
        .unwrap();
    let pending_id = ask(db, "some-session", 1);
    assert_eq!(bundle_row(db, &pending_id).1, "some-task");
}

/// ASK-1: a failure after the bundle row leaves nothing behind — no
/// bundle, no question row, not even the turn the ask started — and a
/// later ask works.
fn ask_1_failure_after_bundle_row_leaves_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.arm_failpoint(points::ASK_AFTER_BUNDLE_ROW, FailAction::Error);
    let result = db.ask(&ask_request(&session, 3));
    assert!(
        matches!(result, Err(Error::Injected(point)) if point == points::ASK_AFTER_BUNDLE_ROW),
        "{result:?}"
    );
    assert_eq!(counts(db), (0, 0, 0));
    assert!(!db.has_pending_clarification(&session).unwrap());

    db.disarm_failpoint(points::ASK_AFTER_BUNDLE_ROW);
    let asked = db.ask(&ask_request(&session, 3)).unwrap();
    assert!(asked.created);
    assert_eq!(counts(db), (1, 1, 3));
    assert_eq!(question_rows(db, &asked.pending_id).len(), 3);
}

/// ASK-1: a failure after the first question row rolls back that row and
/// the bundle row too; an existing turn is untouched.
fn ask_1_failure_after_first_question_leaves_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let earlier = ask(db, &session, 1);
    let before = rows::dump(db);
    db.arm_failpoint(points::ASK_AFTER_FIRST_QUESTION, FailAction::Error);
    let result = db.ask(&ask_request(&session, 4));
    assert!(
        matches!(result, Err(Error::Injected(point)) if point == points::ASK_AFTER_FIRST_QUESTION),
        "{result:?}"
    );
    assert_eq!(rows::dump(db), before);
    assert_eq!(counts(db), (1, 1, 1));

    db.disarm_failpoint(points::ASK_AFTER_FIRST_QUESTION);
    let asked = db.ask(&ask_request(&session, 4)).unwrap();
    assert!(asked.created);
    assert_ne!(asked.pending_id, earlier);
    assert_eq!(question_rows(db, &asked.pending_id).len(), 4);
    assert_eq!(counts(db), (1, 2, 5));
}

/// ASK-1: a failure on a session without a turn also rolls back the turn
/// `ask` started, even when the failure comes after a question row.
fn ask_1_failure_rolls_back_the_started_turn(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.arm_failpoint(points::ASK_AFTER_FIRST_QUESTION, FailAction::Error);
    assert!(matches!(
        db.ask(&ask_request(&session, 2)),
        Err(Error::Injected(_))
    ));
    assert!(turn_ids(db, &session).is_empty());
    assert_eq!(counts(db), (0, 0, 0));
    db.disarm_failpoint(points::ASK_AFTER_FIRST_QUESTION);
    ask(db, &session, 2);
    assert_eq!(counts(db), (1, 1, 2));
}

// ---- ASK-2: counts ------------------------------------------------------

dual_backend!(
    ask_2_question_count_outside_1_to_4_is_named,
    ask_2_option_count_outside_2_to_6_is_named
);

/// ASK-2: 1 and 4 questions are accepted; 0 and 5 name `questions`.
fn ask_2_question_count_outside_1_to_4_is_named(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    assert_invalid(db.ask(&ask_request(&session, 0)), "questions");
    assert_invalid(db.ask(&ask_request(&session, 5)), "questions");
    assert_eq!(counts(db), (0, 0, 0));
    assert!(db.ask(&ask_request(&session, 1)).unwrap().created);
    assert!(db.ask(&ask_request(&session, 4)).unwrap().created);
}

/// ASK-2: 2 and 6 options are accepted; 1 and 7 name the question's
/// `options`.
fn ask_2_option_count_outside_2_to_6_is_named(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let with_options = |n: usize| {
        let mut request = ask_request(&session, 2);
        request.questions[1].options = (1..=n).map(|i| option(&format!("o{i}"))).collect();
        request
    };
    assert_invalid(db.ask(&with_options(1)), "questions[1].options");
    assert_invalid(db.ask(&with_options(7)), "questions[1].options");
    assert_invalid(db.ask(&with_options(0)), "questions[1].options");
    assert_eq!(counts(db), (0, 0, 0));
    let two = db.ask(&with_options(2)).unwrap();
    let six = db.ask(&with_options(6)).unwrap();
    assert_eq!(option_ids(db, &two.pending_id)[1].len(), 2);
    assert_eq!(option_ids(db, &six.pending_id)[1].len(), 6);
}

// ---- ASK-2: blank values ------------------------------------------------

dual_backend!(
    ask_2_blank_prompt_is_named,
    ask_2_blank_label_is_named,
    ask_2_blank_description_is_named,
    ask_2_blank_title_and_context_are_accepted
);

/// ASK-2: an empty or whitespace-only prompt names the prompt.
fn ask_2_blank_prompt_is_named(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for blank in ["", " ", " \t\r\n ", "\u{3000}\u{a0}"] {
        let mut request = ask_request(&session, 3);
        request.questions[2].prompt = blank.to_owned();
        assert_invalid(db.ask(&request), "questions[2].prompt");
    }
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2: an empty or whitespace-only label names the label.
fn ask_2_blank_label_is_named(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for blank in ["", "   ", "\t\n"] {
        let mut request = ask_request(&session, 2);
        request.questions[1].options[0].label = blank.to_owned();
        assert_invalid(db.ask(&request), "questions[1].options[0].label");
    }
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2: an empty or whitespace-only description names the description.
fn ask_2_blank_description_is_named(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for blank in ["", "  ", "\n\n"] {
        let mut request = ask_request(&session, 1);
        request.questions[0].options[1].description = blank.to_owned();
        assert_invalid(db.ask(&request), "questions[0].options[1].description");
    }
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2 lists prompt, label and description as the values that must not
/// be blank; a blank title and an empty context are accepted.
fn ask_2_blank_title_and_context_are_accepted(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.questions[0].title = String::new();
    request.context = String::new();
    let asked = db.ask(&request).unwrap();
    assert_eq!(payloads(db, &asked.pending_id)[0]["title"], "");
    let mut request = ask_request(&session, 1);
    request.questions[0].title = "   ".to_owned();
    let asked = db.ask(&request).unwrap();
    assert_eq!(payloads(db, &asked.pending_id)[0]["title"], "   ");
}

// ---- ASK-2: uniqueness ----------------------------------------------------

dual_backend!(
    ask_2_duplicate_question_ids_are_named,
    ask_2_explicit_id_colliding_with_a_default_is_a_duplicate,
    ask_2_duplicate_option_ids_are_named,
    ask_2_explicit_option_id_colliding_with_a_default_is_a_duplicate,
    ask_2_equal_option_ids_in_different_questions_are_accepted
);

/// ASK-2: two explicit equal question ids name the later question's id.
fn ask_2_duplicate_question_ids_are_named(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let request = AskRequest {
        questions: vec![
            q(Some("x"), "one?"),
            q(Some("y"), "two?"),
            q(Some("x"), "three?"),
        ],
        ..ask_request(&session, 0)
    };
    assert_invalid(db.ask(&request), "questions[2].question_id");
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2, ASK-3: an explicit `q2` followed by a question without id
/// (whose default is `q2`) is a duplicate, never a renumbering.
fn ask_2_explicit_id_colliding_with_a_default_is_a_duplicate(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let request = AskRequest {
        questions: vec![q(Some("q2"), "one?"), q(None, "two?")],
        ..ask_request(&session, 0)
    };
    assert_invalid(db.ask(&request), "questions[1].question_id");
    let request = AskRequest {
        questions: vec![q(Some("q2"), "one?"), q(Some(""), "two?")],
        ..ask_request(&session, 0)
    };
    assert_invalid(db.ask(&request), "questions[1].question_id");
    // A default first, then an explicit id equal to it.
    let request = AskRequest {
        questions: vec![q(None, "one?"), q(Some("q1"), "two?")],
        ..ask_request(&session, 0)
    };
    assert_invalid(db.ask(&request), "questions[1].question_id");
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2: two explicit equal option ids in one question name the later
/// option's id.
fn ask_2_duplicate_option_ids_are_named(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 2);
    request.questions[1].options = vec![
        opt(Some("a"), "A"),
        opt(Some("b"), "B"),
        opt(Some("a"), "C"),
    ];
    assert_invalid(db.ask(&request), "questions[1].options[2].option_id");
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2, ASK-3: an explicit `q1_opt2` followed by a defaulted second
/// option (also `q1_opt2`) is a duplicate, never a renumbering.
fn ask_2_explicit_option_id_colliding_with_a_default_is_a_duplicate(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.questions[0].options = vec![opt(Some("q1_opt2"), "A"), opt(None, "B")];
    assert_invalid(db.ask(&request), "questions[0].options[1].option_id");
    request.questions[0].options = vec![opt(Some("q1_opt2"), "A"), opt(Some(""), "B")];
    assert_invalid(db.ask(&request), "questions[0].options[1].option_id");
    // The default follows an explicit question id.
    let mut request = ask_request(&session, 1);
    request.questions[0].question_id = Some("pick".to_owned());
    request.questions[0].options = vec![opt(None, "A"), opt(Some("pick_opt1"), "B")];
    assert_invalid(db.ask(&request), "questions[0].options[1].option_id");
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2: option ids need only be unique within their question.
fn ask_2_equal_option_ids_in_different_questions_are_accepted(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 2);
    for question in &mut request.questions {
        question.options = vec![opt(Some("yes"), "Yes"), opt(Some("no"), "No")];
    }
    let asked = db.ask(&request).unwrap();
    assert_eq!(
        option_ids(db, &asked.pending_id),
        vec![vec!["yes", "no"], vec!["yes", "no"]]
    );
}

// ---- ASK-2: size caps in runes of the raw value -------------------------

dual_backend!(
    ask_2_prompt_cap_counts_runes,
    ask_2_context_cap_counts_runes,
    ask_2_title_cap_counts_runes,
    ask_2_label_cap_counts_runes,
    ask_2_description_cap_counts_runes,
    ask_2_caps_count_surrounding_whitespace,
    ask_2_values_are_stored_as_given
);

/// ASK-2: a prompt of exactly 4000 runes (16000 bytes) passes; 4001 runes
/// name the prompt.
fn ask_2_prompt_cap_counts_runes(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 2);
    request.questions[1].prompt = clefs(4000);
    let asked = db.ask(&request).unwrap();
    assert_eq!(payloads(db, &asked.pending_id)[1]["prompt"], clefs(4000));
    request.questions[1].prompt = clefs(4001);
    assert_invalid(db.ask(&request), "questions[1].prompt");
    assert_eq!(counts(db), (1, 1, 2));
}

/// ASK-2: a context of exactly 4000 runes passes; 4001 runes name
/// `context`.
fn ask_2_context_cap_counts_runes(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.context = clefs(4000);
    let asked = db.ask(&request).unwrap();
    assert_eq!(bundle_row(db, &asked.pending_id).4, clefs(4000));
    request.context = clefs(4001);
    assert_invalid(db.ask(&request), "context");
    assert_eq!(counts(db), (1, 1, 1));
}

/// ASK-2: a title of exactly 120 runes passes; 121 runes name the title.
/// Combining marks count as runes of their own.
fn ask_2_title_cap_counts_runes(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 3);
    request.questions[2].title = clefs(120);
    db.ask(&request).unwrap();
    request.questions[2].title = clefs(121);
    assert_invalid(db.ask(&request), "questions[2].title");
    // "e" + U+0301 is one glyph but two runes: 60 of them are 120 runes.
    let decomposed = "e\u{301}".repeat(60);
    request.questions[2].title = decomposed.clone();
    db.ask(&request).unwrap();
    request.questions[2].title = format!("{decomposed}x");
    assert_invalid(db.ask(&request), "questions[2].title");
    assert_eq!(counts(db), (1, 2, 6));
}

/// ASK-2: a label of exactly 200 runes passes; 201 runes name the label.
fn ask_2_label_cap_counts_runes(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.questions[0].options[1].label = clefs(200);
    db.ask(&request).unwrap();
    request.questions[0].options[1].label = clefs(201);
    assert_invalid(db.ask(&request), "questions[0].options[1].label");
    assert_eq!(counts(db), (1, 1, 1));
}

/// ASK-2: a description of exactly 1000 runes passes; 1001 runes name the
/// description.
fn ask_2_description_cap_counts_runes(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 2);
    request.questions[1].options[0].description = clefs(1000);
    db.ask(&request).unwrap();
    request.questions[1].options[0].description = clefs(1001);
    assert_invalid(db.ask(&request), "questions[1].options[0].description");
    assert_eq!(counts(db), (1, 1, 2));
}

/// ASK-2: caps count the raw value, surrounding whitespace included.
fn ask_2_caps_count_surrounding_whitespace(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.questions[0].options[0].label = format!(" {} ", clefs(198));
    db.ask(&request).unwrap();
    request.questions[0].options[0].label = format!(" {} ", clefs(199));
    assert_invalid(db.ask(&request), "questions[0].options[0].label");
    let mut request = ask_request(&session, 1);
    request.questions[0].title = format!("{}  ", clefs(119));
    assert_invalid(db.ask(&request), "questions[0].title");
    assert_eq!(counts(db), (1, 1, 1));
}

/// ASK-2: values are stored exactly as given — untrimmed, unnormalized.
fn ask_2_values_are_stored_as_given(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let request = AskRequest {
        session_id: session.clone(),
        questions: vec![QuestionSpec {
            question_id: Some(" Q ".to_owned()),
            title: "  Title\t".to_owned(),
            prompt: "\n  Keep the cache?  \n".to_owned(),
            options: vec![
                OptionSpec {
                    option_id: Some(" a ".to_owned()),
                    label: " Yes ".to_owned(),
                    description: "\tkeep it\t".to_owned(),
                },
                OptionSpec {
                    option_id: None,
                    label: "No𝄞 ".to_owned(),
                    description: " e\u{301} ".to_owned(),
                },
            ],
        }],
        context: "  some context \n".to_owned(),
        kind: BundleKind::Question,
        idempotency_key: None,
    };
    let asked = db.ask(&request).unwrap();
    assert_eq!(bundle_row(db, &asked.pending_id).4, "  some context \n");
    assert_eq!(question_rows(db, &asked.pending_id)[0].0, " Q ");
    assert_eq!(
        payloads(db, &asked.pending_id),
        vec![serde_json::json!({
            "title": "  Title\t",
            "prompt": "\n  Keep the cache?  \n",
            "options": [
                {"option_id": " a ", "label": " Yes ", "description": "\tkeep it\t"},
                {"option_id": " Q _opt2", "label": "No𝄞 ", "description": " e\u{301} "},
            ],
        })]
    );
}

// ---- ASK-2: the session --------------------------------------------------

dual_backend!(
    ask_2_unknown_session_is_not_found,
    ask_2_validation_comes_before_the_session_lookup,
    ask_2_empty_session_id_is_named
);

/// ASK-2, LIFE-10: asking on an unknown session is not-found naming the
/// session, and writes nothing.
fn ask_2_unknown_session_is_not_found(db: &TestDb) {
    mirror(db, "a", "alice");
    let result = db.ask(&ask_request("s-nobody", 1));
    assert!(
        matches!(result, Err(Error::NotFound(Entity::Session))),
        "{result:?}"
    );
    assert_eq!(counts(db), (0, 0, 0));
}

/// ASK-2, WIRE-5 order of checks: content is validated before the session
/// is looked up, so bad content on an unknown session is a validation
/// error.
fn ask_2_validation_comes_before_the_session_lookup(db: &TestDb) {
    assert_invalid(db.ask(&ask_request("s-nobody", 0)), "questions");
    let mut request = ask_request("s-nobody", 2);
    request.questions[1].options[1].label = " ".to_owned();
    assert_invalid(db.ask(&request), "questions[1].options[1].label");
    let mut request = ask_request("s-nobody", 1);
    request.context = clefs(4001);
    assert_invalid(db.ask(&request), "context");
}

/// WIRE-5: a required session id given as "" is a validation error
/// naming `session_id`.
fn ask_2_empty_session_id_is_named(db: &TestDb) {
    assert_invalid(db.ask(&ask_request("", 1)), "session_id");
    assert_eq!(counts(db), (0, 0, 0));
}

// ---- ASK-3 ----------------------------------------------------------------

dual_backend!(
    ask_3_missing_ids_get_positional_defaults,
    ask_3_empty_ids_are_defaulted_by_position
);

/// ASK-3: missing question ids become q1, q2, … by position, and missing
/// option ids `<question_id>_opt1`, … by position.
fn ask_3_missing_ids_get_positional_defaults(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 3);
    request.questions[2].options = vec![option("a"), option("b"), option("c")];
    let asked = db.ask(&request).unwrap();
    let ids: Vec<String> = question_rows(db, &asked.pending_id)
        .into_iter()
        .map(|row| row.0)
        .collect();
    assert_eq!(ids, ["q1", "q2", "q3"]);
    assert_eq!(
        option_ids(db, &asked.pending_id),
        vec![
            vec!["q1_opt1", "q1_opt2"],
            vec!["q2_opt1", "q2_opt2"],
            vec!["q3_opt1", "q3_opt2", "q3_opt3"],
        ]
    );
}

/// ASK-3: empty-string ids are defaulted like missing ones; defaults are
/// by position even next to explicit ids, and option defaults use the
/// question's (explicit or default) id.
fn ask_3_empty_ids_are_defaulted_by_position(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = AskRequest {
        questions: vec![
            q(Some("first"), "one?"),
            q(Some(""), "two?"),
            q(None, "three?"),
        ],
        ..ask_request(&session, 0)
    };
    request.questions[0].options = vec![opt(Some(""), "A"), opt(Some("keep"), "B"), opt(None, "C")];
    request.questions[1].options = vec![opt(Some("x"), "A"), opt(Some(""), "B")];
    let asked = db.ask(&request).unwrap();
    let ids: Vec<String> = question_rows(db, &asked.pending_id)
        .into_iter()
        .map(|row| row.0)
        .collect();
    assert_eq!(ids, ["first", "q2", "q3"]);
    assert_eq!(
        option_ids(db, &asked.pending_id),
        vec![
            vec!["first_opt1", "keep", "first_opt3"],
            vec!["x", "q2_opt2"],
            vec!["q3_opt1", "q3_opt2"],
        ]
    );
}

// ---- ASK-4 ----------------------------------------------------------------

dual_backend!(
    ask_4_same_key_returns_the_same_bundle_and_writes_nothing,
    ask_4_replay_after_session_ended_returns_the_bundle,
    ask_4_replay_after_supersession_returns_the_bundle,
    ask_4_replay_after_resolution_returns_the_bundle,
    ask_4_keys_are_per_session,
    ask_4_empty_key_means_no_key
);

/// ASK-4: a second ask with the same key returns the first bundle with
/// `created: false` and writes nothing.
fn ask_4_same_key_returns_the_same_bundle_and_writes_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "k1")).unwrap();
    assert!(first.created);
    assert_eq!(bundle_row(db, &first.pending_id).5.as_deref(), Some("k1"));
    let before = rows::dump(db);
    let again = db.ask(&keyed(&session, "k1")).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id.clone(),
            created: false
        }
    );
    // Different content with the same key still returns the first bundle.
    let other_content = AskRequest {
        idempotency_key: Some("k1".to_owned()),
        ..ask_request(&session, 4)
    };
    let again = db.ask(&other_content).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id.clone(),
            created: false
        }
    );
    assert_eq!(rows::dump(db), before);
    // Another key is another bundle.
    let second = db.ask(&keyed(&session, "k2")).unwrap();
    assert!(second.created);
    assert_ne!(second.pending_id, first.pending_id);
}

/// ASK-4 before ASK-5: the replay is answered even after the session
/// ended, for every terminal state.
fn ask_4_replay_after_session_ended_returns_the_bundle(db: &TestDb) {
    for (n, state) in [
        SessionState::Completed,
        SessionState::Failed,
        SessionState::Cancelled,
    ]
    .into_iter()
    .enumerate()
    {
        let session = mirror(db, &format!("s{n}"), "alice");
        let first = db.ask(&keyed(&session, "k")).unwrap();
        db.set_session_state(&session, state).unwrap();
        let before = rows::dump(db);
        let again = db.ask(&keyed(&session, "k")).unwrap();
        assert_eq!(
            again,
            Asked {
                pending_id: first.pending_id,
                created: false
            },
            "{state:?}"
        );
        assert_eq!(rows::dump(db), before, "{state:?}");
        // A new key on the ended session is refused (ASK-5).
        assert!(matches!(
            db.ask(&keyed(&session, "new")),
            Err(Error::SessionEnded)
        ));
    }
}

/// ASK-4: the replay is answered even after a newer turn superseded the
/// bundle, without starting a turn or writing a row.
fn ask_4_replay_after_supersession_returns_the_bundle(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "k")).unwrap();
    let old_turn = rows::turn_of(db, &first.pending_id);
    db.begin_turn(&session).unwrap();
    assert!(!db.has_pending_clarification(&session).unwrap());
    let before = rows::dump(db);
    let again = db.ask(&keyed(&session, "k")).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id.clone(),
            created: false
        }
    );
    assert_eq!(rows::dump(db), before);
    assert_eq!(rows::turn_of(db, &first.pending_id), old_turn);
    assert!(!db.has_pending_clarification(&session).unwrap());
}

/// ASK-4: the replay is answered even after the bundle's rows were
/// resolved.
fn ask_4_replay_after_resolution_returns_the_bundle(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "k")).unwrap();
    db.raw(|conn| {
        diesel::update(
            bundle_questions::table.filter(bundle_questions::pending_id.eq(&first.pending_id)),
        )
        .set(bundle_questions::status.eq("answered"))
        .execute(conn)
        .unwrap()
    });
    let before = rows::dump(db);
    let again = db.ask(&keyed(&session, "k")).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id,
            created: false
        }
    );
    assert_eq!(rows::dump(db), before);
}

/// ASK-4: keys are per session: the same key on another session creates
/// a new bundle there.
fn ask_4_keys_are_per_session(db: &TestDb) {
    let one = mirror(db, "a", "alice");
    let two = mirror(db, "b", "alice");
    let first = db.ask(&keyed(&one, "shared")).unwrap();
    let second = db.ask(&keyed(&two, "shared")).unwrap();
    assert!(first.created);
    assert!(second.created);
    assert_ne!(first.pending_id, second.pending_id);
    assert_eq!(bundle_row(db, &second.pending_id).0, two);
    assert_eq!(
        bundle_row(db, &second.pending_id).5.as_deref(),
        Some("shared")
    );
    // Each session's replay returns its own bundle.
    assert_eq!(
        db.ask(&keyed(&one, "shared")).unwrap().pending_id,
        first.pending_id
    );
    assert_eq!(
        db.ask(&keyed(&two, "shared")).unwrap().pending_id,
        second.pending_id
    );
    assert_eq!(counts(db).1, 2);
}

/// ASK-4: an empty key means no key — every such ask creates a bundle,
/// and no key is stored.
fn ask_4_empty_key_means_no_key(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "")).unwrap();
    let second = db.ask(&keyed(&session, "")).unwrap();
    let third = db.ask(&ask_request(&session, 1)).unwrap();
    let fourth = db.ask(&ask_request(&session, 1)).unwrap();
    for asked in [&first, &second, &third, &fourth] {
        assert!(asked.created);
        assert_eq!(bundle_row(db, &asked.pending_id).5, None);
    }
    let mut ids = vec![
        first.pending_id,
        second.pending_id,
        third.pending_id,
        fourth.pending_id,
    ];
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4);
    assert_eq!(counts(db), (1, 4, 4));
}

// ---- ASK-5 ----------------------------------------------------------------

dual_backend!(
    ask_5_terminal_session_refuses_and_writes_nothing,
    ask_5_live_states_accept_and_keep_their_state
);

/// ASK-5: asking on a session in each terminal state is `SessionEnded`
/// and writes nothing; the session's state is left as it is.
fn ask_5_terminal_session_refuses_and_writes_nothing(db: &TestDb) {
    for (n, state) in [
        SessionState::Completed,
        SessionState::Failed,
        SessionState::Cancelled,
    ]
    .into_iter()
    .enumerate()
    {
        // One session that already has a bundle, one that has no turn yet.
        let used = mirror(db, &format!("used{n}"), "alice");
        ask(db, &used, 1);
        db.set_session_state(&used, state).unwrap();
        let fresh = mirror(db, &format!("fresh{n}"), "alice");
        db.set_session_state(&fresh, state).unwrap();
        let before = rows::dump(db);
        for session in [&used, &fresh] {
            let result = db.ask(&ask_request(session, 2));
            assert!(
                matches!(result, Err(Error::SessionEnded)),
                "{state:?}: {result:?}"
            );
            assert_eq!(session_state(db, session), state.as_str());
        }
        assert_eq!(rows::dump(db), before, "{state:?}");
        assert!(turn_ids(db, &fresh).is_empty());
    }
}

/// ASK-5: every non-terminal state accepts an ask, and asking never
/// changes the session's state.
fn ask_5_live_states_accept_and_keep_their_state(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for state in SessionState::ALL.into_iter().filter(|s| !s.is_terminal()) {
        db.set_session_state(&session, state).unwrap();
        let asked = db.ask(&ask_request(&session, 1)).unwrap();
        assert!(asked.created, "{state:?}");
        assert_eq!(session_state(db, &session), state.as_str());
    }
}

dual_backend!(ask_4_concurrent_asks_with_one_key_create_one_bundle);

/// ASK-4 under concurrency: eight asks with one idempotency key, on two
/// handles, released together, create exactly one bundle; every caller
/// gets its `pending_id`, and only one says `created`.
fn ask_4_concurrent_asks_with_one_key_create_one_bundle(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let handles = [db.reopen(), db.reopen()];
    let start = std::sync::Arc::new(std::sync::Barrier::new(8));
    let asked: Vec<clarion::Asked> = (0..8)
        .map(|n| {
            let (handle, start, session) = (handles[n % 2].clone(), start.clone(), session.clone());
            std::thread::spawn(move || {
                start.wait();
                handle.ask(&keyed(&session, "once")).unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect();
    assert_eq!(asked.iter().filter(|a| a.created).count(), 1, "{asked:?}");
    assert!(
        asked.iter().all(|a| a.pending_id == asked[0].pending_id),
        "{asked:?}"
    );
    let stored: i64 = db.raw(|conn| bundles::table.count().get_result(conn).unwrap());
    assert_eq!(stored, 1);
}
