//! Answers, rejections and text sized in runes, as the suites submit them.

use clarion::{AnswerInput, ResolveRequest};

/// A four-byte character: one rune, four bytes in UTF-8, two UTF-16 units.
pub const CLEF: char = '𝄞';

/// `count` runes of [`CLEF`].
pub fn clefs(count: usize) -> String {
    std::iter::repeat_n(CLEF, count).collect()
}

pub fn answer(question_id: &str, options: &[&str], text: &str) -> AnswerInput {
    AnswerInput {
        question_id: question_id.to_owned(),
        selected_options: options.iter().map(|o| (*o).to_owned()).collect(),
        custom_text: text.to_owned(),
    }
}

pub fn answering(answers: Vec<AnswerInput>) -> ResolveRequest {
    ResolveRequest {
        answers,
        ..ResolveRequest::default()
    }
}

/// Answers `q1` of a bundle asked with `ask(db, _, 1)`: its first option
/// and `text`.
pub fn one_answer(text: &str) -> ResolveRequest {
    answering(vec![answer("q1", &["q1_opt1"], text)])
}

pub fn rejecting(reason: &str) -> ResolveRequest {
    ResolveRequest {
        answers: Vec::new(),
        rejected: true,
        reject_reason: reason.to_owned(),
    }
}
