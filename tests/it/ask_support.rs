//! What the `ask_*` suites share: reads of the rows an ask writes, and
//! questions and options with explicit ids.

use clarion::test_hooks::schema::{bundle_questions, bundles, turns};
use clarion::{OptionSpec, QuestionSpec};
use diesel::prelude::*;

use crate::support::*;

/// Row counts of (turns, bundles, question rows) across the database.
pub fn counts(db: &TestDb) -> (i64, i64, i64) {
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
pub type QuestionRow = (String, Option<i32>, String, String, Option<String>);

/// The stored question rows of a bundle, in question order.
pub fn question_rows(db: &TestDb, pending_id: &str) -> Vec<QuestionRow> {
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
pub fn payloads(db: &TestDb, pending_id: &str) -> Vec<serde_json::Value> {
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
pub fn option_ids(db: &TestDb, pending_id: &str) -> Vec<Vec<String>> {
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
pub fn bundle_row(
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

pub fn opt(id: Option<&str>, label: &str) -> OptionSpec {
    OptionSpec {
        option_id: id.map(str::to_owned),
        ..option(label)
    }
}

pub fn q(id: Option<&str>, prompt: &str) -> QuestionSpec {
    QuestionSpec {
        question_id: id.map(str::to_owned),
        ..question(prompt)
    }
}
