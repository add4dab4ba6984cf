//! Resolving a bundle (§8): validation (VAL-*), normalization (NORM-*), the
//! one claim (CLAIM-*), and the loser's replay (REPLAY-*). `cancel_bundle`
//! (LIFE-6) goes through the same claim.
//!
//! Steps, in order: capability → shape rules that need no database (VAL-4,
//! VAL-5) → the bundle's durable rows and visibility (not-found) → rules on
//! the stored bundle (VAL-1, 2, 6, 8) → normalization → claim → winner or
//! loser. Nothing decides claimability outside the claim (CLAIM-2).

use diesel::prelude::*;

use crate::activeness;
use crate::authz::{require_capability, Operation, Principal};
use crate::bundle::{self, Answer, BundleRecord, BundleStatus, QuestionRecord, Response};
use crate::db::{self, AnyConnection};
use crate::error::{Entity, Error, Result, ValidationError};
use crate::failpoints::points;
use crate::schema::{bundle_questions, bundles};
use crate::visibility::Scope;
use crate::Clarion;

/// Cap on `reject_reason` and each `custom_text`, in runes of the raw value (VAL-5).
pub const MAX_FREE_TEXT_RUNES: usize = 2000;

/// One answer as the caller wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerInput {
    pub question_id: String,
    pub selected_options: Vec<String>,
    pub custom_text: String,
}

/// Arguments of [`Clarion::resolve_bundle`]: answers, or a rejection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolveRequest {
    pub answers: Vec<AnswerInput>,
    pub rejected: bool,
    pub reject_reason: String,
}

/// The outcome of a resolve or cancel that reached a winner: this caller's
/// (`claimed`) or an earlier one's, replayed byte for byte (REPLAY-1/2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub claimed: bool,
    pub status: BundleStatus,
    pub response: Response,
}

/// What the claim writes, after normalization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// One normalized answer per question, in DM-4 order (NORM-1).
    Answered(Vec<Answer>),
    Rejected {
        reason: String,
    },
    Cancelled,
}

impl Resolution {
    fn status(&self) -> &'static str {
        match self {
            Resolution::Answered(_) => "answered",
            Resolution::Rejected { .. } => "rejected",
            Resolution::Cancelled => "cancelled",
        }
    }
}

fn runes(text: &str) -> usize {
    text.chars().count()
}

/// VAL-4, VAL-5: what can be checked without the bundle.
fn check_shape(request: &ResolveRequest) -> Result<(), ValidationError> {
    if request.rejected && !request.answers.is_empty() {
        return Err(ValidationError::new(
            "answers",
            "must be empty when rejected is true",
        ));
    }
    let too_long = |field: String, text: &str| {
        let count = runes(text);
        (count > MAX_FREE_TEXT_RUNES).then(|| {
            ValidationError::new(
                field,
                format!("must be at most {MAX_FREE_TEXT_RUNES} characters, got {count}"),
            )
        })
    };
    if let Some(error) = too_long("reject_reason".into(), &request.reject_reason) {
        return Err(error);
    }
    for (index, answer) in request.answers.iter().enumerate() {
        if let Some(error) = too_long(format!("answers[{index}].custom_text"), &answer.custom_text)
        {
            return Err(error);
        }
    }
    Ok(())
}

/// VAL-6: a row without a question id makes the bundle unanswerable.
fn check_answerable(rows: &[QuestionRecord]) -> Result<(), ValidationError> {
    if rows.iter().any(|row| row.question_id.is_empty()) {
        return Err(ValidationError::new(
            "pending_id",
            "this clarification request has a question without a question_id and cannot be \
             answered or rejected; cancel it instead",
        ));
    }
    Ok(())
}

/// VAL-1, VAL-2 against the stored rows (all of them, terminal siblings
/// included), then NORM-1..3.
fn normalize_answers(
    answers: &[AnswerInput],
    rows: &[QuestionRecord],
) -> Result<Vec<Answer>, ValidationError> {
    if answers.len() != rows.len() {
        return Err(ValidationError::new(
            "answers",
            format!(
                "expected {} answers (one per question), got {}",
                rows.len(),
                answers.len()
            ),
        ));
    }
    let mut by_row: Vec<Option<Answer>> = vec![None; rows.len()];
    for (index, answer) in answers.iter().enumerate() {
        let field = |name: &str| format!("answers[{index}].{name}");
        if answer.question_id.is_empty() {
            return Err(ValidationError::new(
                field("question_id"),
                "must not be empty",
            ));
        }
        let Some(position) = rows
            .iter()
            .position(|row| row.question_id == answer.question_id)
        else {
            return Err(ValidationError::new(
                field("question_id"),
                format!("unknown question id {:?}", answer.question_id),
            ));
        };
        if by_row[position].is_some() {
            return Err(ValidationError::new(
                field("question_id"),
                format!("duplicate question id {:?}", answer.question_id),
            ));
        }
        let options = bundle::option_ids(&rows[position]);
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
        by_row[position] = Some(Answer {
            question_id: answer.question_id.clone(),
            selected_options: positions.into_iter().map(|p| options[p].clone()).collect(),
            // NORM-3: only leading and trailing whitespace goes.
            custom_text: answer.custom_text.trim().to_owned(),
        });
    }
    // NORM-1: DM-4 order, because `rows` is in DM-4 order.
    Ok(by_row.into_iter().flatten().collect())
}

/// Steps 4–5 for a resolve request: the rules that need the stored bundle,
/// then the canonical form.
fn prepare(
    request: &ResolveRequest,
    rows: &[QuestionRecord],
) -> Result<Resolution, ValidationError> {
    check_answerable(rows)?;
    if request.rejected {
        return Ok(Resolution::Rejected {
            reason: request.reject_reason.trim().to_owned(),
        });
    }
    Ok(Resolution::Answered(normalize_answers(
        &request.answers,
        rows,
    )?))
}

/// Who resolved a bundle, for audit (CLAIM-3).
pub struct Resolver<'a> {
    pub kind: &'a str,
    pub id: String,
}

/// CLAIM-1's guard: is the bundle active, evaluated inside the claim's
/// transaction with the one activeness rule?
#[diesel::dsl::auto_type]
pub fn claim_guard_query<'a>(pending_id: &'a str) -> _ {
    diesel::dsl::select(diesel::dsl::exists(
        bundles::table
            .filter(bundles::pending_id.eq(pending_id))
            .filter(activeness::is_active())
            .select(bundles::pending_id),
    ))
}

/// CLAIM-3: one row of the bundle takes the resolution — if it is still
/// pending; a row already terminal in a mixed bundle is left untouched.
/// This is the only statement that writes a resolution status.
pub fn claim_row_statement<'a>(
    row_id: i32,
    status: &'a str,
    response: Option<&'a str>,
) -> impl db::OnEitherBackend + 'a {
    db::fixed_update(
        bundle_questions::table,
        (
            bundle_questions::status.eq(status),
            bundle_questions::response.eq(response),
        ),
        bundle_questions::id
            .eq(row_id)
            .and(activeness::question_is_pending()),
    )
}

/// CLAIM-3: the bundle row records who resolved it, when, the reason, and
/// the delivery mark; the listing hint is cleared (ACT-4).
pub fn claim_bundle_statement<'a>(
    pending_id: &'a str,
    reason: &'a str,
    responded_at: i64,
    resolver: &'a Resolver<'a>,
) -> impl db::OnEitherBackend + 'a {
    db::fixed_update(
        bundles::table,
        (
            bundles::reject_reason.eq(reason),
            bundles::responded_at.eq(responded_at),
            bundles::resolved_by_kind.eq(resolver.kind),
            bundles::resolved_by_id.eq(&resolver.id),
            bundles::response_delivery_pending.eq(true),
            bundles::may_be_active.eq(false),
        ),
        bundles::pending_id.eq(pending_id),
    )
}

/// The stored answer object of one row (REPLAY-2: every answered row stores
/// one, even an empty "no answer").
fn stored_answer(resolution: &Resolution, question_id: &str) -> Result<Option<String>> {
    let Resolution::Answered(answers) = resolution else {
        return Ok(None);
    };
    answers
        .iter()
        .find(|answer| answer.question_id == question_id)
        .map(|answer| {
            serde_json::to_string(answer)
                .map_err(|e| Error::Internal(format!("answer of {question_id}: {e}")))
        })
        .transpose()
}

/// The bundle a claim is about, as read inside the claim's transaction.
struct ClaimTarget<'a> {
    record: &'a mut BundleRecord,
    /// ACT-1 as evaluated by the read itself.
    active_when_read: bool,
    rows: &'a [QuestionRecord],
}

/// CLAIM-1's guard. SQLite's `BEGIN IMMEDIATE` has held the write lock
/// since before the read, so the activeness read with the bundle still
/// holds. PostgreSQL locks the session row first, which serializes the
/// claim with state changes and new turns (CLAIM-4), then evaluates ACT-1
/// again in a fresh statement that sees everything committed before the
/// lock was granted.
fn is_still_active(
    conn: &mut AnyConnection,
    record: &BundleRecord,
    active_when_read: bool,
) -> Result<bool> {
    // Inactive when read is a final answer on both backends: this branch
    // writes nothing, so the read's snapshot is as good a moment to decide
    // at as any later one. Losers that arrive after a winner committed thus
    // go straight to the replay without queueing for the session lock.
    if !active_when_read || db::backend_of(conn) == db::Backend::Sqlite {
        return Ok(active_when_read);
    }
    db::serialize_with_session(conn, &record.session_id)?;
    Ok(claim_guard_query(&record.pending_id).get_result(conn)?)
}

/// CLAIM-1: the one transition of an active bundle to a resolution, inside
/// the caller's write transaction, guarded by ACT-1. Returns the bundle's
/// rows as they will commit when this call claimed it, `None` when it did
/// not. On PostgreSQL the session row is locked first, which serializes the
/// claim with state changes and new turns of the same session (CLAIM-4); on
/// SQLite the transaction holds the write lock from its first statement.
fn claim(
    clarion: &Clarion,
    conn: &mut AnyConnection,
    target: ClaimTarget<'_>,
    resolution: &Resolution,
    resolver: &Resolver<'_>,
) -> Result<Option<Vec<QuestionRecord>>> {
    let ClaimTarget {
        record,
        active_when_read,
        rows,
    } = target;
    {
        if !is_still_active(conn, record, active_when_read)? {
            return Ok(None);
        }
        clarion.failpoint(points::CLAIM_AFTER_GUARD)?;
        let status = resolution.status();
        let mut committed = rows.to_vec();
        let mut claimed_any = false;
        for row in &mut committed {
            let answer = stored_answer(resolution, &row.question_id)?;
            let changed =
                db::execute_direct(conn, claim_row_statement(row.id, status, answer.as_deref()))?;
            if changed == 1 {
                row.status = Some(status.to_owned());
                row.response = answer;
                claimed_any = true;
            }
        }
        if !claimed_any {
            // Only reachable if something bypassed the session lock; the
            // rows say who won, so this caller did not.
            return Ok(None);
        }
        clarion.failpoint(points::CLAIM_AFTER_ROWS)?;
        let reason = match resolution {
            Resolution::Rejected { reason } => reason.clone(),
            _ => String::new(),
        };
        let responded_at = clarion.now().as_micros();
        db::execute_direct(
            conn,
            claim_bundle_statement(&record.pending_id, &reason, responded_at, resolver),
        )?;
        clarion.failpoint(points::CLAIM_BEFORE_COMMIT)?;
        record.reject_reason = reason;
        record.responded_at = Some(responded_at);
        Ok(Some(committed))
    }
}

/// REPLAY-1/2: the loser reads the rows once more; a resolution there is the
/// winner's. Without one, nothing won.
fn replay(conn: &mut AnyConnection, pending_id: &str) -> Result<Resolved> {
    let fresh: Option<BundleRecord> = db::at_most_one(
        bundles::table
            .find(pending_id)
            .select(bundle::bundle_record_columns()),
        conn,
    )?;
    let Some(fresh) = fresh else {
        // Deleted since: nothing won.
        return Err(Error::NoLongerActive);
    };
    let rows = bundle::load_bundle_rows(conn, pending_id)?;
    let (status, response) = bundle::stored_response(&fresh, &rows).ok_or(Error::NoLongerActive)?;
    Ok(Resolved {
        claimed: false,
        status,
        response,
    })
}

impl Clarion {
    /// §8: answer or reject a bundle. Exactly one caller claims it; every
    /// other gets the winner's status and response with `claimed: false`,
    /// or `NoLongerActive` when nothing won (superseded, ended, expired).
    pub fn resolve_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        request: &ResolveRequest,
    ) -> Result<Resolved> {
        require_capability(principal, Operation::ResolveBundle)?;
        check_shape(request)?;
        self.settle(principal, pending_id, |rows| Ok(prepare(request, rows)?))
    }

    /// LIFE-6: cancel a bundle through the same claim. Humans and `system`
    /// only; needs no waiter; clears even a bundle VAL-6 makes unanswerable.
    pub fn cancel_bundle(&self, principal: &Principal, pending_id: &str) -> Result<Resolved> {
        require_capability(principal, Operation::CancelBundle)?;
        self.settle(principal, pending_id, |_| Ok(Resolution::Cancelled))
    }

    /// Steps 3, 6 and 7 shared by resolve and cancel.
    fn settle(
        &self,
        principal: &Principal,
        pending_id: &str,
        decide: impl FnOnce(&[QuestionRecord]) -> Result<Resolution>,
    ) -> Result<Resolved> {
        let scope = Scope::of(principal).ok_or(Error::CapabilityDenied)?;
        let resolver = Resolver {
            kind: principal.kind(),
            id: principal.audit_id(),
        };
        let mut conn = self.inner.pool.get()?;
        // One write transaction: read the bundle (not-found), validate it,
        // then claim. Nothing is written unless the claim is won.
        let (record, committed) = db::write_transaction(&mut conn, |conn| {
            let (mut record, active_when_read, rows) =
                bundle::load_claim_target(conn, &scope, pending_id)?
                    .ok_or(Error::NotFound(Entity::Bundle))?;
            let resolution = decide(&rows)?;
            let target = ClaimTarget {
                record: &mut record,
                active_when_read,
                rows: &rows,
            };
            // REPLAY-3: a failed claim is an internal error, logged with the
            // bundle; nothing is retried.
            let committed = claim(self, conn, target, &resolution, &resolver).map_err(|error| {
                tracing::error!(pending_id, %error, "claim failed");
                Error::Internal(format!("claim of {pending_id} failed: {error}"))
            })?;
            Ok((record, committed))
        })?;
        let Some(committed) = committed else {
            return db::read_snapshot(&mut conn, |conn| replay(conn, pending_id));
        };
        drop(conn);
        self.failpoint(points::RESOLVE_AFTER_COMMIT)?;
        // The winner's response is rebuilt from exactly what was committed,
        // by the same function a loser's replay uses (NORM-4).
        // DEL-2/3: after the commit, wake this handle's waiters and offer a
        // detached bundle's resolution to the dispatcher. Neither can undo
        // the claim (DEL-1, DEL-4).
        let (status, response) = bundle::stored_response(&record, &committed).ok_or_else(|| {
            Error::Internal(format!("claimed bundle {pending_id} has no resolution"))
        })?;
        self.inner
            .waiters
            .notify_resolved(pending_id, status, &response);
        if let Err(error) = self.dispatch_one(pending_id) {
            tracing::warn!(pending_id, %error, "resume dispatch could not start; the entry stays in the outbox");
        }
        Ok(Resolved {
            claimed: true,
            status,
            response,
        })
    }
}
