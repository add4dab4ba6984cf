//! Answers as a caller writes them, checked and put in canonical form
//! (VAL-1, 2, 3, 5, NORM-1..3). Resolving checks them against a stored
//! bundle; asking checks a deadline's default answers against the
//! questions being asked (EXP-6). Both name their fields under a prefix
//! (`""`, `on_expire.`), so one set of rules serves both.

use crate::domain::views::Answer;
use crate::error::ValidationError;
use crate::rules::limits::{check_runes, check_text, MAX_FREE_TEXT_RUNES};

/// One answer as the caller wrote it.
/// Serialized in this field order for AUD-5's digest of an invalid attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerInput {
    /// Which question this answers.
    pub question_id: String,
    /// Option ids of that question; order and repeats do not matter (NORM-2).
    pub selected_options: Vec<String>,
    /// Free text, at most 2000 runes; trimmed when stored (NORM-3).
    pub custom_text: String,
}

/// A question an answer may name: its id, its option ids in order, and
/// whether an answer may select several of them (ASK-6).
pub(crate) struct Answerable<'a> {
    pub question_id: &'a str,
    pub multi_select: bool,
    pub option_ids: Vec<&'a str>,
}

/// VAL-5 for answers: each text within its limits, before anything else
/// looks at them.
pub(crate) fn check_answer_texts(
    prefix: &str,
    answers: &[AnswerInput],
) -> Result<(), ValidationError> {
    for (index, answer) in answers.iter().enumerate() {
        let field = |name: &str| format!("{prefix}answers[{index}].{name}");
        check_runes(
            field("custom_text"),
            &answer.custom_text,
            MAX_FREE_TEXT_RUNES,
        )?;
        check_text(field("question_id"), &answer.question_id)?;
        for (position, option) in answer.selected_options.iter().enumerate() {
            check_text(format!("{}[{position}]", field("selected_options")), option)?;
        }
    }
    Ok(())
}

/// VAL-1, VAL-2, VAL-3, VAL-9 against the questions (all of them, in DM-4
/// order), then NORM-1..3: one answer per question, in question order,
/// options in option order without duplicates, text trimmed.
pub(crate) fn normalize_answers(
    prefix: &str,
    answers: &[AnswerInput],
    questions: &[Answerable<'_>],
) -> Result<Vec<Answer>, ValidationError> {
    if answers.len() != questions.len() {
        return Err(ValidationError::new(
            format!("{prefix}answers"),
            format!(
                "expected {} answers (one per question), got {}",
                questions.len(),
                answers.len()
            ),
        ));
    }
    let mut by_question: Vec<Option<Answer>> = vec![None; questions.len()];
    for (index, answer) in answers.iter().enumerate() {
        let field = |name: &str| format!("{prefix}answers[{index}].{name}");
        if answer.question_id.is_empty() {
            return Err(ValidationError::new(
                field("question_id"),
                "must not be empty",
            ));
        }
        let Some(position) = questions
            .iter()
            .position(|question| question.question_id == answer.question_id)
        else {
            return Err(ValidationError::new(
                field("question_id"),
                format!("unknown question id {:?}", answer.question_id),
            ));
        };
        if by_question[position].is_some() {
            return Err(ValidationError::new(
                field("question_id"),
                format!("duplicate question id {:?}", answer.question_id),
            ));
        }
        let options = &questions[position].option_ids;
        let mut positions = Vec::with_capacity(answer.selected_options.len());
        for selected in &answer.selected_options {
            let Some(option) = options.iter().position(|id| id == selected) else {
                return Err(ValidationError::new(
                    field("selected_options"),
                    format!("unknown option id {selected:?}"),
                ));
            };
            positions.push(option);
        }
        // NORM-2: the question's option order, exact duplicates removed.
        positions.sort_unstable();
        positions.dedup();
        // VAL-9: duplicates counted once, none allowed (VAL-3).
        if !questions[position].multi_select && positions.len() > 1 {
            return Err(ValidationError::new(
                field("selected_options"),
                format!(
                    "question {:?} takes at most one option, got {}",
                    answer.question_id,
                    positions.len()
                ),
            ));
        }
        by_question[position] = Some(Answer {
            question_id: answer.question_id.clone(),
            selected_options: positions
                .into_iter()
                .map(|p| options[p].to_owned())
                .collect(),
            // NORM-3: only leading and trailing whitespace goes.
            custom_text: answer.custom_text.trim().to_owned(),
        });
    }
    // NORM-1: DM-4 order, because `questions` is in DM-4 order.
    Ok(by_question.into_iter().flatten().collect())
}
