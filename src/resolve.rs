//! Resolving a bundle (§8): validation (VAL-*), normalization (NORM-*), the
//! call into the one claim (CLAIM-*, in [`crate::claim`]), and the loser's
//! replay (REPLAY-*). `cancel_bundle` (LIFE-6) goes through the same claim.
//!
//! Steps, in order: capability → shape rules that need no database (VAL-4,
//! VAL-5) → the bundle's durable rows and visibility (not-found) → rules on
//! the stored bundle (VAL-1, 2, 6, 8) → normalization → claim → winner or
//! loser. Nothing decides claimability outside the claim (CLAIM-2).

use diesel::prelude::*;

use crate::authz::{require_capability, Operation, Principal};
use crate::bundle::{self, Answer, BundleRecord, BundleStatus, QuestionRecord, Response};
use crate::claim::{claim, ClaimTarget, Resolution, Resolver};
use crate::db::{self, AnyConnection};
use crate::error::{Entity, Error, Result, ValidationError};
use crate::failpoints::points;
use crate::schema::bundles;
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
        let (record, committed) = conn.run(|conn| {
            db::write_transaction(conn, |conn| {
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
                let committed =
                    claim(self, conn, target, &resolution, &resolver).map_err(|error| {
                        tracing::error!(pending_id, %error, "claim failed");
                        Error::Internal(format!("claim of {pending_id} failed: {error}"))
                    })?;
                Ok((record, committed))
            })
        })?;
        let Some(committed) = committed else {
            return conn.run(|conn| db::read_snapshot(conn, |conn| replay(conn, pending_id)));
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
