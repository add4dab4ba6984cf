//! Asking (ASK-1..5): the host creates a bundle on behalf of its in-session
//! agent. Everything that can be checked without the database is checked
//! first; all rows are then written in one transaction.

use diesel::prelude::*;
use diesel::query_dsl::methods::ExecuteDsl;
use serde::Serialize;

use std::time::Duration;

use crate::domain::answers::{check_answer_texts, normalize_answers, AnswerInput, Answerable};
use crate::domain::change::Change;
use crate::domain::engine::Engine;
use crate::domain::lifecycle;
use crate::domain::names;
use crate::domain::nudges;
use crate::domain::quorum;
use crate::domain::views::{BundleView, OptionView, QuestionView, Submission, TaskNames};
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::limits::{
    check_count, check_deadline_after, check_id, check_not_blank, check_runes, check_text,
    MAX_CONTEXT_RUNES, MAX_DESCRIPTION_RUNES, MAX_FREE_TEXT_RUNES, MAX_LABEL_RUNES,
    MAX_PROMPT_RUNES, MAX_TITLE_RUNES, OPTIONS_PER_QUESTION, QUESTIONS_PER_BUNDLE,
};
use crate::rules::nudges::{
    self as nudges_rules, EscalateRequest, Progress, Reminders, RemindersRequest, Schedule,
};
use crate::rules::quorum::{Policy, QuorumRequest};
use crate::rules::vocabulary::{BundleKind, ExpiryAction, QuestionStatus, SessionState};
use crate::rules::{activeness, visibility};
use crate::store::failpoints::points;
use crate::store::schema::{bundle_questions, bundles, sessions};
#[cfg(feature = "postgres")]
use crate::store::Together;
use crate::store::{at_most_one, AnyConnection, IdKind, Timestamp};

/// One option of a question as the agent wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionSpec {
    /// Defaults to `<question_id>_opt<N>` when `None` or empty (ASK-3).
    pub option_id: Option<String>,
    /// A short label, at most 200 runes.
    pub label: String,
    /// What choosing it means, at most 1000 runes.
    pub description: String,
}

/// One question as the agent wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuestionSpec {
    /// Defaults to `q<N>` when `None` or empty (ASK-3).
    pub question_id: Option<String>,
    /// A short title, at most 120 runes.
    pub title: String,
    /// The question, at most 4000 runes.
    pub prompt: String,
    /// ASK-6: `Some(false)` lets an answer select at most one option
    /// (VAL-9); `None` or `Some(true)` allows several.
    pub multi_select: Option<bool>,
    /// Two to six options.
    pub options: Vec<OptionSpec>,
}

/// When a bundle's deadline falls (EXP-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// This long after the ask: 1 s to 30 days.
    In(Duration),
    /// At this instant: 1 s to 30 days after the ask.
    At(Timestamp),
}

/// What the deadline does to a bundle nobody settled in time (EXP-1,
/// EXP-3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum OnExpire {
    /// It expires, unanswered (the default).
    #[default]
    Expire,
    /// These answers, checked and normalized at ask time like a resolve's,
    /// become its resolution. Never for a `permission` bundle.
    Answer(Vec<AnswerInput>),
    /// It is rejected with this reason.
    Reject {
        /// Why, at most 2000 runes; trimmed when stored.
        reject_reason: String,
    },
}

/// Arguments of [`crate::Clarion::ask`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AskRequest {
    /// The asking session.
    pub session_id: String,
    /// One to four questions.
    pub questions: Vec<QuestionSpec>,
    /// What the agent writes around its questions, at most 4000 runes.
    pub context: String,
    /// Who may answer (AUTH-6).
    pub kind: BundleKind,
    /// Unique per session; `None` or empty means none (ASK-4).
    pub idempotency_key: Option<String>,
    /// Its deadline, if any (EXP-1).
    pub expires: Option<Expiry>,
    /// What its deadline does; anything but [`OnExpire::Expire`] needs a
    /// deadline (EXP-6).
    pub on_expire: OnExpire,
    /// QUO-1: several people must agree; `None` for one answer.
    pub quorum: Option<QuorumRequest>,
    /// NUDGE-1: reminders while it waits; `None` for none.
    pub reminders: Option<RemindersRequest>,
    /// NUDGE-1, PPL-6: more people see it this long after the ask; `None`
    /// for no escalation.
    pub escalate: Option<EscalateRequest>,
}

/// The result of an ask (ASK-4): the bundle, and whether this call
/// created it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Asked {
    /// The bundle's id.
    pub pending_id: String,
    /// False when an earlier ask with the same idempotency key is returned.
    pub created: bool,
}

/// The stored display payload of a question (a JSON text column).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub(crate) struct QuestionPayload {
    pub title: String,
    pub prompt: String,
    /// ASK-6: always written; a stored payload without it reads `true`.
    pub multi_select: bool,
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

/// A deadline's action and default after EXP-6's checks, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PreparedDeadline {
    expires: Expiry,
    action: ExpiryAction,
    /// The default's compact JSON text (EXP-5), for `answer` and `reject`.
    default_response: Option<String>,
}

impl PreparedDeadline {
    /// EXP-1: the instant, given the ask's clock; EXP-6: an absolute one
    /// must fall 1 s to 30 days after it (the only check that needs the
    /// clock, so it runs after the ASK-4 lookup).
    fn expires_at(&self, now: Timestamp) -> Result<i64, ValidationError> {
        match self.expires {
            Expiry::In(after) => {
                let after = i64::try_from(after.as_micros()).unwrap_or(i64::MAX);
                Ok(now.as_micros().saturating_add(after))
            }
            Expiry::At(at) => {
                let after = i128::from(at.as_micros()) - i128::from(now.as_micros());
                check_deadline_after("expires_at", after)?;
                Ok(at.as_micros())
            }
        }
    }
}

/// EXP-6: the deadline and its default, against the questions as
/// prepared (ASK-3's defaults filled in), before any database read.
fn prepare_deadline(
    request: &AskRequest,
    questions: &[PreparedQuestion],
) -> Result<Option<PreparedDeadline>, ValidationError> {
    let Some(expires) = request.expires else {
        if request.on_expire != OnExpire::Expire {
            return Err(ValidationError::new(
                "on_expire.action",
                "an answer or reject default needs a deadline (expires_in_ms or expires_at)",
            ));
        }
        return Ok(None);
    };
    if let Expiry::In(after) = expires {
        check_deadline_after("expires_in_ms", after.as_micros() as i128)?;
    }
    let (action, submission) = match &request.on_expire {
        OnExpire::Expire => (ExpiryAction::Expire, None),
        OnExpire::Answer(answers) => {
            if request.kind == BundleKind::Permission {
                return Err(ValidationError::new(
                    "on_expire.action",
                    "a permission bundle is never approved by default: use expire or reject",
                ));
            }
            check_answer_texts("on_expire.", answers)?;
            let answerable: Vec<Answerable<'_>> = questions
                .iter()
                .map(|question| Answerable {
                    question_id: &question.question_id,
                    multi_select: question.payload.multi_select,
                    option_ids: question
                        .payload
                        .options
                        .iter()
                        .map(|option| option.option_id.as_str())
                        .collect(),
                })
                .collect();
            let answers = normalize_answers("on_expire.", answers, &answerable)?;
            let submission = Submission {
                answers,
                rejected: false,
                reject_reason: String::new(),
            };
            (ExpiryAction::Answer, Some(submission))
        }
        OnExpire::Reject { reject_reason } => {
            check_runes(
                "on_expire.reject_reason",
                reject_reason,
                MAX_FREE_TEXT_RUNES,
            )?;
            check_text("on_expire.reject_reason", reject_reason)?;
            let submission = Submission {
                answers: Vec::new(),
                rejected: true,
                reject_reason: reject_reason.trim().to_owned(),
            };
            (ExpiryAction::Reject, Some(submission))
        }
    };
    let default_response = submission
        .map(|submission| serde_json::to_string(&submission))
        .transpose()
        .map_err(|error| ValidationError::new("on_expire", error.to_string()))?;
    Ok(Some(PreparedDeadline {
        expires,
        action,
        default_response,
    }))
}

/// QUO-1: the quorum's policy, checked without the database; a deadline
/// that would answer for the people is refused.
fn prepare_quorum(request: &AskRequest) -> Result<Option<Policy>, ValidationError> {
    let Some(quorum) = &request.quorum else {
        return Ok(None);
    };
    if matches!(request.on_expire, OnExpire::Answer(_)) {
        return Err(ValidationError::new(
            "on_expire.action",
            "a quorum is never approved by default: use expire or reject",
        ));
    }
    Policy::checked(quorum).map(Some)
}

/// NUDGE-1: reminders and escalation as asked, checked without the
/// database.
struct PreparedNudges {
    reminders: Option<Reminders>,
    /// The escalation's delay in milliseconds and its users.
    escalate: Option<(i64, Vec<String>)>,
}

impl PreparedNudges {
    fn of(request: &AskRequest) -> Result<Self, ValidationError> {
        Ok(PreparedNudges {
            reminders: request
                .reminders
                .as_ref()
                .map(Reminders::checked)
                .transpose()?,
            escalate: request
                .escalate
                .as_ref()
                .map(nudges_rules::checked_escalation)
                .transpose()?,
        })
    }

    /// The bundle's steps in time, asked at `created_at` (NUDGE-2).
    fn schedule(&self, created_at: i64, expires_at: Option<i64>) -> Schedule {
        Schedule {
            created_at,
            expires_at,
            reminders: self.reminders,
            escalate_at: self
                .escalate
                .as_ref()
                .map(|(after_ms, _)| created_at + after_ms * 1_000),
        }
    }
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
    check_count(field(""), options.len(), &OPTIONS_PER_QUESTION, "options")?;
    let mut prepared: Vec<OptionPayload> = Vec::with_capacity(options.len());
    for (position, option) in options.iter().enumerate() {
        let at = |name: &str| field(&format!("[{position}].{name}"));
        let option_id = id_or_default(&option.option_id, || {
            format!("{question_id}_opt{}", position + 1)
        });
        check_text(at("option_id"), &option_id)?;
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
        check_runes(at("label"), &option.label, MAX_LABEL_RUNES)?;
        check_not_blank(at("description"), &option.description)?;
        check_runes(
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
    check_id("session_id", &request.session_id)?;
    if let Some(key) = &request.idempotency_key {
        check_text("idempotency_key", key)?;
    }
    check_runes("context", &request.context, MAX_CONTEXT_RUNES)?;
    check_count(
        "questions",
        request.questions.len(),
        &QUESTIONS_PER_BUNDLE,
        "questions",
    )?;
    if let BundleKind::Unknown(other) = &request.kind {
        BundleKind::parse("kind", other)?;
    }
    let mut prepared: Vec<PreparedQuestion> = Vec::with_capacity(request.questions.len());
    for (index, question) in request.questions.iter().enumerate() {
        let at = |name: &str| format!("questions[{index}].{name}");
        let question_id = id_or_default(&question.question_id, || format!("q{}", index + 1));
        check_text(at("question_id"), &question_id)?;
        if prepared
            .iter()
            .any(|earlier| earlier.question_id == question_id)
        {
            return Err(ValidationError::new(
                at("question_id"),
                format!("duplicate question id {question_id:?}"),
            ));
        }
        check_runes(at("title"), &question.title, MAX_TITLE_RUNES)?;
        check_not_blank(at("prompt"), &question.prompt)?;
        check_runes(at("prompt"), &question.prompt, MAX_PROMPT_RUNES)?;
        let options = prepare_options(index, &question_id, &question.options)?;
        prepared.push(PreparedQuestion {
            payload: QuestionPayload {
                title: question.title.clone(),
                prompt: question.prompt.clone(),
                multi_select: question.multi_select.unwrap_or(true),
                options,
            },
            question_id,
        });
    }
    Ok(prepared)
}

impl Engine {
    /// ASK-1..5. Creates a bundle in the session's current turn (starting a
    /// turn if the session has none) and returns its `pending_id`.
    ///
    /// Order of checks: content (400) → the session exists (404) → the
    /// idempotency key (an earlier bundle is returned whatever its state) →
    /// the session is live (409).
    pub(crate) fn ask(&self, request: &AskRequest) -> Result<Asked> {
        let questions = prepare(request)?;
        let deadline = prepare_deadline(request, &questions)?;
        let quorum = prepare_quorum(request)?;
        let nudging = PreparedNudges::of(request)?;
        let idempotency_key = request
            .idempotency_key
            .as_deref()
            .filter(|key| !key.is_empty());
        // DEL-3: the handle's heartbeat row, fresh before anything names it.
        self.heartbeat.keep_alive()?;
        // CLAIM-4: the session's lock comes with the transaction's BEGIN.
        self.change_session(&request.session_id, |conn, changes| {
            // One clock for the bundle's creation and its deadline.
            let now = self.now();
            let session = asking_session(conn, &request.session_id)?
                .ok_or(Error::NotFound(Entity::Session))?;
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
            let expires_at = deadline
                .as_ref()
                .map(|deadline| deadline.expires_at(now))
                .transpose()?;
            if SessionState::parse("state", &session.state).is_ok_and(SessionState::is_terminal) {
                return Err(Error::SessionEnded);
            }
            let turn_id = match session.turn_id {
                Some(turn_id) => turn_id,
                None => lifecycle::start_turn(self, conn, &request.session_id)?,
            };
            let task_id = session.task_id;
            let pending_id = self.new_id(IdKind::Bundle);
            let created_at = now.as_micros();
            let action = deadline.as_ref().map_or(ExpiryAction::None, |d| d.action);
            let default_response = deadline
                .as_ref()
                .and_then(|d| d.default_response.as_deref());
            let (owner_key, workspace_key) = visibility::keys_of_task(&task_id);
            let schedule = nudging.schedule(created_at, expires_at);
            let next_step_at = schedule.next_step(Progress::default());
            let bundle = diesel::insert_into(bundles::table).values((
                bundles::pending_id.eq(&pending_id),
                bundles::session_id.eq(&request.session_id),
                bundles::task_id.eq(&task_id),
                // OPS-3a: the session is locked, so its task and that
                // task's workspace cannot change before the commit.
                bundles::task_key.eq(&task_id),
                bundles::owner_key.eq(owner_key),
                bundles::workspace_key.eq(workspace_key),
                bundles::turn_id.eq(&turn_id),
                bundles::kind.eq(request.kind.as_str()),
                bundles::context.eq(&request.context),
                bundles::created_at.eq(created_at),
                bundles::idempotency_key.eq(idempotency_key),
                bundles::expires_at.eq(expires_at),
                bundles::on_expire.eq(action.as_str()),
                bundles::default_response.eq(default_response),
                // QUO-1, QUO-2: the policy, fixed now; people only.
                bundles::human_only.eq(quorum.is_some()),
                bundles::quorum_approvals.eq(quorum.as_ref().map(|q| q.approvals as i32)),
                bundles::quorum_rejections.eq(quorum.as_ref().map(|q| q.rejections as i32)),
                bundles::quorum_requested_by.eq(quorum.as_ref().map(|q| q.requested_by.as_str())),
                // NUDGE-1: the schedule, fixed now; NUDGE-2: its first step.
                bundles::reminders.eq(nudging.reminders.as_ref().map(nudges::stored_reminders)),
                bundles::escalate_at.eq(schedule.escalate_at),
                bundles::next_step_at.eq(next_step_at),
            ));
            let payloads = questions
                .iter()
                .map(|question| {
                    serde_json::to_string(&question.payload)
                        .map_err(|e| Error::Internal(format!("question payload: {e}")))
                })
                .collect::<Result<Vec<String>>>()?;
            let rows: Vec<_> = questions
                .iter()
                .zip(&payloads)
                .enumerate()
                .map(|(index, (question, payload))| {
                    (
                        bundle_questions::pending_id.eq(&pending_id),
                        bundle_questions::session_id.eq(&request.session_id),
                        bundle_questions::turn_id.eq(&turn_id),
                        bundle_questions::question_id.eq(&question.question_id),
                        bundle_questions::question_index.eq(index as i32),
                        bundle_questions::payload.eq(payload),
                        bundle_questions::status.eq(QuestionStatus::PENDING_WORD),
                        bundle_questions::created_at.eq(created_at),
                    )
                })
                .collect();
            let attachment = self.heartbeat.attach_statement(&pending_id);
            match conn {
                // In process, a statement costs no round trip.
                AnyConnection::Sqlite(sqlite) => {
                    bundle.execute(sqlite)?;
                    ExecuteDsl::execute(attachment, sqlite)?;
                    self.failpoint(points::ASK_AFTER_BUNDLE_ROW)?;
                    for (index, row) in rows.into_iter().enumerate() {
                        diesel::insert_into(bundle_questions::table)
                            .values(row)
                            .execute(sqlite)?;
                        if index == 0 {
                            self.failpoint(points::ASK_AFTER_FIRST_QUESTION)?;
                        }
                    }
                }
                // The bundle, its attachment and its rows in one statement.
                #[cfg(feature = "postgres")]
                AnyConnection::Postgres(pg) => {
                    let rows = diesel::insert_into(bundle_questions::table).values(rows);
                    Together(bundle, attachment, rows).execute(pg)?;
                    self.failpoint(points::ASK_AFTER_BUNDLE_ROW)?;
                    self.failpoint(points::ASK_AFTER_FIRST_QUESTION)?;
                }
            }
            if let Some(policy) = &quorum {
                quorum::insert_eligible(conn, &pending_id, &policy.eligible)?;
            }
            // PPL-6: grants only for an escalation before the deadline.
            if let (Some((_, to)), Some(from)) = (&nudging.escalate, schedule.escalation_at()) {
                nudges::insert_grants(conn, &pending_id, to, from)?;
            }
            // LIST-11: the event freezes the names as they are now.
            let names = session.names;
            let mut view = asked_view(
                request,
                &questions,
                (&pending_id, &task_id, names),
                created_at,
                (expires_at, action),
            );
            // QUO-5: frozen with the policy and no votes.
            view.quorum = quorum.as_ref().map(|policy| quorum::view(policy, &[], &[]));
            view.nudges =
                (!schedule.is_empty()).then(|| nudges::view(&schedule, Progress::default(), now));
            changes.append_asked(conn, &view, Timestamp::from_micros(created_at))?;
            self.failpoint(points::ASK_BEFORE_COMMIT)?;
            changes.push(Change::Asked);
            if expires_at.is_some() || next_step_at.is_some() {
                self.deadline_asked();
            }
            Ok(Asked {
                pending_id,
                created: true,
            })
        })
    }
}

/// What an ask reads of its session once the session is locked, in one
/// statement: its state, its task, its current turn (ACT-2) and the task's
/// names as they are now (LIST-11).
struct AskingSession {
    state: String,
    task_id: String,
    turn_id: Option<String>,
    names: TaskNames,
}

/// The statement of [`asking_session`].
#[diesel::dsl::auto_type]
pub(crate) fn asking_session_query<'a>(session_id: &'a str) -> _ {
    let turn: activeness::current_turn_of_session_row = activeness::current_turn_of_session_row();
    let names: names::names_of_task<sessions::task_id> = names::names_of_task(sessions::task_id);
    sessions::table.filter(sessions::id.eq(session_id)).select((
        sessions::state,
        sessions::task_id,
        turn,
        names,
    ))
}

/// The session of an ask ([`AskingSession`]); `None` if it does not exist.
fn asking_session(conn: &mut AnyConnection, session_id: &str) -> Result<Option<AskingSession>> {
    type Read = (
        String,
        String,
        Option<String>,
        (Option<String>, Option<String>, Option<String>),
    );
    let read: Option<Read> = at_most_one(asking_session_query(session_id), conn)?;
    Ok(read.map(|(state, task_id, turn_id, names)| AskingSession {
        state,
        task_id,
        turn_id,
        names: names::task_names(names),
    }))
}

/// EVT-1: the LIST-6 element of a bundle just asked, as its
/// `bundle.asked` event freezes it (age 0, every question pending).
fn asked_view(
    request: &AskRequest,
    questions: &[PreparedQuestion],
    (pending_id, task_id, names): (&str, &str, TaskNames),
    created_at: i64,
    (expires_at, on_expire): (Option<i64>, ExpiryAction),
) -> BundleView {
    BundleView {
        pending_id: pending_id.to_owned(),
        task_id: task_id.to_owned(),
        task_title: names.task_title,
        workspace_id: names.workspace_id,
        workspace_name: names.workspace_name,
        session_id: request.session_id.clone(),
        kind: request.kind.clone(),
        created_at: Timestamp::from_micros(created_at),
        age_seconds: 0,
        expires_at: expires_at.map(Timestamp::from_micros),
        on_expire,
        quorum: None,
        nudges: None,
        context: request.context.clone(),
        questions: questions
            .iter()
            .map(|question| QuestionView {
                question_id: question.question_id.clone(),
                title: question.payload.title.clone(),
                prompt: question.payload.prompt.clone(),
                status: QuestionStatus::Pending,
                multi_select: question.payload.multi_select,
                options: question
                    .payload
                    .options
                    .iter()
                    .map(|option| OptionView {
                        option_id: option.option_id.clone(),
                        label: option.label.clone(),
                        description: option.description.clone(),
                    })
                    .collect(),
            })
            .collect(),
    }
}
