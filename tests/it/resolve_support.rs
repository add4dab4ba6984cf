//! What the `resolve_*` suites share: well-formed requests and bundles,
//! reads of the rows and the resolution a resolve writes, and the checks
//! several of them make.

use clarion::envelope;
use clarion::test_hooks::schema::{bundle_questions, bundles};
use clarion::{
    Answer, AskRequest, Clarion, Error, ListRequest, OptionSpec, Principal, QuestionSpec,
    ResolveRequest, Resolved,
};
use diesel::prelude::*;
use serde_json::Value;

use crate::support::*;

/// A valid answer to a two-question bundle asked with `ask(db, _, 2)`.
pub fn two_answers() -> ResolveRequest {
    answering(vec![
        answer("q1", &["q1_opt1"], "first"),
        answer("q2", &["q2_opt2"], ""),
    ])
}

/// Asks a bundle whose question `n` (ids `q1`, `q2`, …) has
/// `option_counts[n-1]` options (ids `qN_opt1`, `qN_opt2`, …).
pub fn ask_with_options(db: &Clarion, session_id: &str, option_counts: &[usize]) -> String {
    let request = AskRequest {
        session_id: session_id.to_owned(),
        questions: option_counts
            .iter()
            .enumerate()
            .map(|(q, &count)| QuestionSpec {
                question_id: None,
                title: format!("Question {}", q + 1),
                prompt: format!("question {}?", q + 1),
                multi_select: None,
                options: (1..=count)
                    .map(|o| OptionSpec {
                        option_id: None,
                        label: format!("Option {o}"),
                        description: format!("option {o}, described"),
                    })
                    .collect(),
            })
            .collect(),
        context: "the agent needs a decision".to_owned(),
        ..AskRequest::default()
    };
    db.ask(&request).unwrap().pending_id
}

pub fn assert_no_longer_active(result: clarion::Result<Resolved>) {
    match result {
        Err(error @ Error::NoLongerActive) => {
            let envelope = envelope::error(&error);
            assert_eq!(envelope.status, 409);
            assert_eq!(envelope.body_text(), NO_LONGER_ACTIVE_BODY);
        }
        other => panic!("expected no-longer-active, got {other:?}"),
    }
}

/// (question_id, status, response) of each row of the bundle, in row-id order.
pub type StoredRow = (String, Option<String>, Option<String>);

pub fn stored_rows(db: &TestDb, pending_id: &str) -> Vec<StoredRow> {
    db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .order_by(bundle_questions::id)
            .select((
                bundle_questions::question_id,
                bundle_questions::status,
                bundle_questions::response,
            ))
            .load(conn)
            .unwrap()
    })
}

/// The stored response of the row with `question_id`, parsed.
pub fn stored_answer(db: &TestDb, pending_id: &str, question_id: &str) -> Option<Value> {
    stored_rows(db, pending_id)
        .into_iter()
        .find(|(id, _, _)| id == question_id)
        .unwrap_or_else(|| panic!("no row {question_id} in {pending_id}"))
        .2
        .map(|text| serde_json::from_str(&text).expect("stored response is JSON"))
}

/// The resolution metadata of a bundle row (CLAIM-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub reject_reason: String,
    pub responded_at: Option<i64>,
    pub resolved_by_kind: Option<String>,
    pub resolved_by_id: Option<String>,
    pub response_delivery_pending: bool,
}

pub fn resolution(db: &TestDb, pending_id: &str) -> Resolution {
    let (reject_reason, responded_at, resolved_by_kind, resolved_by_id, response_delivery_pending) =
        db.raw(|conn| {
            bundles::table
                .find(pending_id)
                .select((
                    bundles::reject_reason,
                    bundles::responded_at,
                    bundles::resolved_by_kind,
                    bundles::resolved_by_id,
                    bundles::response_delivery_pending,
                ))
                .first::<(String, Option<i64>, Option<String>, Option<String>, bool)>(conn)
                .unwrap()
        });
    Resolution {
        reject_reason,
        responded_at,
        resolved_by_kind,
        resolved_by_id,
        response_delivery_pending,
    }
}

pub fn unresolved() -> Resolution {
    Resolution {
        reject_reason: String::new(),
        responded_at: None,
        resolved_by_kind: None,
        resolved_by_id: None,
        response_delivery_pending: false,
    }
}

/// Everything a resolve could write for this bundle.
pub fn snapshot(db: &TestDb, pending_id: &str) -> (Vec<StoredRow>, Resolution) {
    (stored_rows(db, pending_id), resolution(db, pending_id))
}

/// Asserts the bundle is exactly as asked: every row pending without a
/// response, no resolution metadata.
pub fn assert_untouched(db: &TestDb, pending_id: &str) {
    for (question_id, status, response) in stored_rows(db, pending_id) {
        assert_eq!(status.as_deref(), Some("pending"), "row {question_id}");
        assert_eq!(response, None, "row {question_id}");
    }
    assert_eq!(resolution(db, pending_id), unresolved());
}

pub fn listed(db: &Clarion, principal: &Principal, pending_id: &str) -> bool {
    db.list_pending(principal, &ListRequest::default())
        .unwrap()
        .bundles
        .iter()
        .any(|bundle| bundle.pending_id == pending_id)
}

/// The WIRE-2 response object as compact JSON text.
pub fn response_text(resolved: &Resolved) -> String {
    envelope::response(&resolved.response).to_string()
}

pub fn body_text(resolved: &Resolved) -> String {
    envelope::resolved(resolved).body_text()
}

pub fn stored(question_id: &str, options: &[&str], text: &str) -> Answer {
    Answer {
        question_id: question_id.to_owned(),
        selected_options: options.iter().map(|o| (*o).to_owned()).collect(),
        custom_text: text.to_owned(),
    }
}
