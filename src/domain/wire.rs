//! The JSON of a bundle element (LIST-6) and of a response (WIRE-2), the
//! two shapes that are both returned by the doors and frozen into the
//! event log (EVT-2) when it is appended. Written here once, below both:
//! the envelope layer (`doors::envelope`) builds every body from these.

use serde_json::{json, Value};

use crate::domain::model::{BundleView, QuestionView, Response};

/// A question inside a bundle element (LIST-7).
pub(crate) fn question(question: &QuestionView) -> Value {
    json!({
        "question_id": question.question_id,
        "title": question.title,
        "prompt": question.prompt,
        "status": question.status.as_str(),
        "options": question.options.iter().map(|option| json!({
            "option_id": option.option_id,
            "label": option.label,
            "description": option.description,
        })).collect::<Vec<_>>(),
    })
}

/// LIST-6: one bundle element, keys in the specified order.
pub(crate) fn bundle(view: &BundleView) -> Value {
    json!({
        "pending_id": view.pending_id,
        "task_id": view.task_id,
        "session_id": view.session_id,
        "kind": view.kind.as_str(),
        "created_at": view.created_at.to_rfc3339(),
        "age_seconds": view.age_seconds,
        "context": view.context,
        "questions": view.questions.iter().map(question).collect::<Vec<_>>(),
    })
}

/// WIRE-2: the response object; every key always present.
pub(crate) fn response(response: &Response) -> Value {
    json!({
        "pending_id": response.pending_id,
        "answers": response.answers.iter().map(|answer| json!({
            "question_id": answer.question_id,
            "selected_options": answer.selected_options,
            "custom_text": answer.custom_text,
        })).collect::<Vec<_>>(),
        "rejected": response.rejected,
        "reject_reason": response.reject_reason,
        "responded_at": response.responded_at.map(|at| at.to_rfc3339()).unwrap_or_default(),
    })
}
