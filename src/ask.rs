//! Asking (ASK-1..5): the host creates a bundle on behalf of its in-session
//! agent. Everything that can be checked without the database is checked
//! first; all rows are then written in one transaction.

use diesel::prelude::*;
use serde::Serialize;

use crate::db::at_most_one;
use crate::error::{Entity, Error, Result, ValidationError};
use crate::failpoints::points;
use crate::lifecycle::{self, SessionState};
use crate::schema::{bundle_questions, bundles};
use crate::Clarion;

/// Who may answer a bundle (AUTH-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BundleKind {
    /// Answerable by humans and by permitted agents.
    #[default]
    Question,
    /// An approval request: humans only.
    Permission,
}

impl BundleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BundleKind::Question => "question",
            BundleKind::Permission => "permission",
        }
    }

    pub fn parse(field: &str, text: &str) -> Result<BundleKind> {
        match text {
            "question" => Ok(BundleKind::Question),
            "permission" => Ok(BundleKind::Permission),
            other => Err(Error::validation(
                field,
                format!("unknown kind {other:?} (expected question or permission)"),
            )),
        }
    }
}

/// One option of a question as the agent wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionSpec {
    /// Defaults to `<question_id>_opt<N>` when `None` or empty (ASK-3).
    pub option_id: Option<String>,
    pub label: String,
    pub description: String,
}

/// One question as the agent wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuestionSpec {
    /// Defaults to `q<N>` when `None` or empty (ASK-3).
    pub question_id: Option<String>,
    pub title: String,
    pub prompt: String,
    pub options: Vec<OptionSpec>,
}

/// Arguments of [`Clarion::ask`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AskRequest {
    pub session_id: String,
    pub questions: Vec<QuestionSpec>,
    pub context: String,
    pub kind: BundleKind,
    /// Unique per session; `None` or empty means none (ASK-4).
    pub idempotency_key: Option<String>,
}

/// The result of [`Clarion::ask`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub pending_id: String,
    /// False when an earlier ask with the same idempotency key is returned.
    pub created: bool,
}

/// Size caps in runes (Unicode scalar values) of the raw value (ASK-2).
pub const MAX_PROMPT_RUNES: usize = 4000;
pub const MAX_CONTEXT_RUNES: usize = 4000;
pub const MAX_TITLE_RUNES: usize = 120;
pub const MAX_LABEL_RUNES: usize = 200;
pub const MAX_DESCRIPTION_RUNES: usize = 1000;
pub const QUESTIONS_PER_BUNDLE: std::ops::RangeInclusive<usize> = 1..=4;
pub const OPTIONS_PER_QUESTION: std::ops::RangeInclusive<usize> = 2..=6;

/// The stored display payload of a question (a JSON text column).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub(crate) struct QuestionPayload {
    pub title: String,
    pub prompt: String,
    pub options: Vec<OptionPayload>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub(crate) struct OptionPayload {
    pub option_id: String,
    pub label: String,
    pub description: String,
}

/// A question after defaults and validation, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PreparedQuestion {
    question_id: String,
    payload: QuestionPayload,
}

fn runes(text: &str) -> usize {
    text.chars().count()
}

fn check_cap(field: String, value: &str, max: usize) -> Result<(), ValidationError> {
    let count = runes(value);
    if count > max {
        return Err(ValidationError::new(
            field,
            format!("must be at most {max} characters, got {count}"),
        ));
    }
    Ok(())
}

fn check_not_blank(field: String, value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        return Err(ValidationError::new(field, "must not be empty"));
    }
    Ok(())
}

/// `value` unless it is missing or empty, else the positional default (ASK-3).
fn id_or_default(given: &Option<String>, default: impl FnOnce() -> String) -> String {
    match given.as_deref() {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => default(),
    }
}

fn prepare_options(
    index: usize,
    question_id: &str,
    options: &[OptionSpec],
) -> Result<Vec<OptionPayload>, ValidationError> {
    let field = |suffix: &str| format!("questions[{index}].options{suffix}");
    if !OPTIONS_PER_QUESTION.contains(&options.len()) {
        return Err(ValidationError::new(
            field(""),
            format!("expected 2 to 6 options, got {}", options.len()),
        ));
    }
    let mut prepared: Vec<OptionPayload> = Vec::with_capacity(options.len());
    for (position, option) in options.iter().enumerate() {
        let at = |name: &str| field(&format!("[{position}].{name}"));
        let option_id = id_or_default(&option.option_id, || {
            format!("{question_id}_opt{}", position + 1)
        });
        if prepared
            .iter()
            .any(|earlier| earlier.option_id == option_id)
        {
            return Err(ValidationError::new(
                at("option_id"),
                format!("duplicate option id {option_id:?}"),
            ));
        }
        check_not_blank(at("label"), &option.label)?;
        check_cap(at("label"), &option.label, MAX_LABEL_RUNES)?;
        check_not_blank(at("description"), &option.description)?;
        check_cap(
            at("description"),
            &option.description,
            MAX_DESCRIPTION_RUNES,
        )?;
        prepared.push(OptionPayload {
            option_id,
            label: option.label.clone(),
            description: option.description.clone(),
        });
    }
    Ok(prepared)
}

/// ASK-2/3: every rule that needs no database, in one pass.
fn prepare(request: &AskRequest) -> Result<Vec<PreparedQuestion>, ValidationError> {
    if request.session_id.is_empty() {
        return Err(ValidationError::new("session_id", "must not be empty"));
    }
    check_cap("context".into(), &request.context, MAX_CONTEXT_RUNES)?;
    if !QUESTIONS_PER_BUNDLE.contains(&request.questions.len()) {
        return Err(ValidationError::new(
            "questions",
            format!("expected 1 to 4 questions, got {}", request.questions.len()),
        ));
    }
    let mut prepared: Vec<PreparedQuestion> = Vec::with_capacity(request.questions.len());
    for (index, question) in request.questions.iter().enumerate() {
        let at = |name: &str| format!("questions[{index}].{name}");
        let question_id = id_or_default(&question.question_id, || format!("q{}", index + 1));
        if prepared
            .iter()
            .any(|earlier| earlier.question_id == question_id)
        {
            return Err(ValidationError::new(
                at("question_id"),
                format!("duplicate question id {question_id:?}"),
            ));
        }
        check_cap(at("title"), &question.title, MAX_TITLE_RUNES)?;
        check_not_blank(at("prompt"), &question.prompt)?;
        check_cap(at("prompt"), &question.prompt, MAX_PROMPT_RUNES)?;
        let options = prepare_options(index, &question_id, &question.options)?;
        prepared.push(PreparedQuestion {
            payload: QuestionPayload {
                title: question.title.clone(),
                prompt: question.prompt.clone(),
                options,
            },
            question_id,
        });
    }
    Ok(prepared)
}

impl Clarion {
    /// ASK-1..5. Creates a bundle in the session's current turn (starting a
    /// turn if the session has none) and returns its `pending_id`.
    ///
    /// Order of checks: content (400) → the session exists (404) → the
    /// idempotency key (an earlier bundle is returned whatever its state) →
    /// the session is live (409).
    pub fn ask(&self, request: &AskRequest) -> Result<Asked> {
        let questions = prepare(request)?;
        let idempotency_key = request
            .idempotency_key
            .as_deref()
            .filter(|key| !key.is_empty());
        self.write(|conn| {
            let state = lifecycle::require_session(conn, &request.session_id)?;
            if let Some(key) = idempotency_key {
                let earlier: Option<String> = at_most_one(
                    bundles::table
                        .filter(bundles::session_id.eq(&request.session_id))
                        .filter(bundles::idempotency_key.eq(key))
                        .select(bundles::pending_id),
                    conn,
                )?;
                if let Some(pending_id) = earlier {
                    return Ok(Asked {
                        pending_id,
                        created: false,
                    });
                }
            }
            if SessionState::parse("state", &state).is_ok_and(SessionState::is_terminal) {
                return Err(Error::SessionEnded);
            }
            let turn_id = match lifecycle::current_turn(conn, &request.session_id)? {
                Some(turn_id) => turn_id,
                None => lifecycle::start_turn(self, conn, &request.session_id)?,
            };
            let task_id: String = at_most_one(
                crate::schema::sessions::table
                    .find(&request.session_id)
                    .select(crate::schema::sessions::task_id),
                conn,
            )?
            .ok_or(Error::NotFound(Entity::Session))?;
            let pending_id = self.new_id(crate::IdKind::Bundle);
            let created_at = self.now().as_micros();
            diesel::insert_into(bundles::table)
                .values((
                    bundles::pending_id.eq(&pending_id),
                    bundles::session_id.eq(&request.session_id),
                    bundles::task_id.eq(&task_id),
                    bundles::turn_id.eq(&turn_id),
                    bundles::kind.eq(request.kind.as_str()),
                    bundles::context.eq(&request.context),
                    bundles::created_at.eq(created_at),
                    bundles::idempotency_key.eq(idempotency_key),
                ))
                .execute(conn)?;
            self.failpoint(points::ASK_AFTER_BUNDLE_ROW)?;
            for (index, question) in questions.iter().enumerate() {
                let payload = serde_json::to_string(&question.payload)
                    .map_err(|e| Error::Internal(format!("question payload: {e}")))?;
                diesel::insert_into(bundle_questions::table)
                    .values((
                        bundle_questions::pending_id.eq(&pending_id),
                        bundle_questions::session_id.eq(&request.session_id),
                        bundle_questions::turn_id.eq(&turn_id),
                        bundle_questions::question_id.eq(&question.question_id),
                        bundle_questions::question_index.eq(index as i32),
                        bundle_questions::payload.eq(payload),
                        bundle_questions::status.eq("pending"),
                        bundle_questions::created_at.eq(created_at),
                    ))
                    .execute(conn)?;
                if index == 0 {
                    self.failpoint(points::ASK_AFTER_FIRST_QUESTION)?;
                }
            }
            Ok(Asked {
                pending_id,
                created: true,
            })
        })
    }
}
