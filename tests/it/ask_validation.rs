//! ASK-2: every content rule, with the exact field named: counts, blank
//! values, unique ids, size caps in runes of the raw value, and the
//! session (validation comes before its lookup).

use clarion::{AskRequest, BundleKind, Entity, Error, OptionSpec, QuestionSpec};

use crate::ask_support::*;
use crate::support::*;

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
            multi_select: None,
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
        expires: None,
        on_expire: Default::default(),
        quorum: None,
        reminders: None,
        escalate: None,
    };
    let asked = db.ask(&request).unwrap();
    assert_eq!(bundle_row(db, &asked.pending_id).4, "  some context \n");
    assert_eq!(question_rows(db, &asked.pending_id)[0].0, " Q ");
    assert_eq!(
        payloads(db, &asked.pending_id),
        vec![serde_json::json!({
            "title": "  Title\t",
            "prompt": "\n  Keep the cache?  \n",
            "multi_select": true,
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
