//! Direct row access for tests: degraded rows clarion never writes (DM-1)
//! and reads of what it stored.

use clarion::test_hooks::schema::{bundle_questions, bundles, sessions, tasks, turns, workspaces};
use diesel::prelude::*;

use super::TestDb;

pub fn insert_turn(db: &TestDb, id: &str, session_id: &str, started_at: i64) {
    db.raw(|conn| {
        diesel::insert_into(turns::table)
            .values((
                turns::id.eq(id),
                turns::session_id.eq(session_id),
                turns::started_at.eq(started_at),
            ))
            .execute(conn)
            .unwrap()
    });
}

pub fn insert_bundle(
    db: &TestDb,
    pending_id: &str,
    session_id: &str,
    turn_id: &str,
    task_id: &str,
) {
    db.raw(|conn| {
        diesel::insert_into(bundles::table)
            .values((
                bundles::pending_id.eq(pending_id),
                bundles::session_id.eq(session_id),
                bundles::turn_id.eq(turn_id),
                bundles::task_id.eq(task_id),
                bundles::created_at.eq(super::EPOCH.as_micros()),
            ))
            .execute(conn)
            .unwrap();
        clarion::test_hooks::refresh_keys_of_bundle(conn, pending_id);
    });
}

/// The bundles the SQL rule calls due at the test clock's `now`, sorted.
pub fn due_ids(db: &TestDb) -> Vec<String> {
    let now = clarion::Clock::now(&*db.clock).as_micros();
    let mut ids: Vec<String> =
        db.raw(|conn| clarion::test_hooks::due_bundle_ids(now).load(conn).unwrap());
    ids.sort();
    ids
}

/// Gives a bundle a deadline (EXP-1), or none, as a raw write.
pub fn set_deadline(db: &TestDb, pending_id: &str, expires_at: Option<i64>) {
    db.raw(|conn| {
        diesel::update(bundles::table.find(pending_id))
            .set(bundles::expires_at.eq(expires_at))
            .execute(conn)
            .unwrap();
    });
}

/// A question row with full control over the fields rules read.
pub struct Row<'a> {
    pub pending_id: &'a str,
    pub session_id: &'a str,
    pub turn_id: &'a str,
    pub question_id: &'a str,
    pub question_index: Option<i32>,
    pub status: Option<&'a str>,
    pub payload: &'a str,
}

pub const PAYLOAD: &str = r#"{"title":"T","prompt":"P?","options":[{"option_id":"a","label":"A","description":"a"},{"option_id":"b","label":"B","description":"b"}]}"#;

impl<'a> Row<'a> {
    pub fn new(pending_id: &'a str, session_id: &'a str, turn_id: &'a str) -> Self {
        Row {
            pending_id,
            session_id,
            turn_id,
            question_id: "q1",
            question_index: Some(0),
            status: Some("pending"),
            payload: PAYLOAD,
        }
    }

    pub fn status(mut self, status: Option<&'a str>) -> Self {
        self.status = status;
        self
    }

    pub fn question_id(mut self, question_id: &'a str) -> Self {
        self.question_id = question_id;
        self
    }

    pub fn index(mut self, index: Option<i32>) -> Self {
        self.question_index = index;
        self
    }

    #[allow(dead_code)]
    pub fn turn(mut self, turn_id: &'a str) -> Self {
        self.turn_id = turn_id;
        self
    }

    #[allow(dead_code)]
    pub fn session(mut self, session_id: &'a str) -> Self {
        self.session_id = session_id;
        self
    }

    pub fn insert(self, db: &TestDb) {
        db.raw(|conn| {
            diesel::insert_into(bundle_questions::table)
                .values((
                    bundle_questions::pending_id.eq(self.pending_id),
                    bundle_questions::session_id.eq(self.session_id),
                    bundle_questions::turn_id.eq(self.turn_id),
                    bundle_questions::question_id.eq(self.question_id),
                    bundle_questions::question_index.eq(self.question_index),
                    bundle_questions::status.eq(self.status),
                    bundle_questions::payload.eq(self.payload),
                    bundle_questions::created_at.eq(super::EPOCH.as_micros()),
                ))
                .execute(conn)
                .unwrap()
        });
    }
}

/// Statuses of a bundle's rows in row-id order.
pub fn statuses(db: &TestDb, pending_id: &str) -> Vec<Option<String>> {
    db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(pending_id))
            .order_by(bundle_questions::id)
            .select(bundle_questions::status)
            .load(conn)
            .unwrap()
    })
}

/// Writes the status of the bundle's row `question_id` directly (what a
/// claim or an import would leave behind); exactly one row must match.
pub fn set_status(db: &TestDb, pending_id: &str, question_id: &str, status: Option<&str>) {
    let updated = db.raw(|conn| {
        diesel::update(
            bundle_questions::table
                .filter(bundle_questions::pending_id.eq(pending_id))
                .filter(bundle_questions::question_id.eq(question_id)),
        )
        .set(bundle_questions::status.eq(status))
        .execute(conn)
        .unwrap()
    });
    assert_eq!(updated, 1, "one row {pending_id}/{question_id}");
}

/// Writes the display payload of the bundle's row `question_id` directly
/// (DM-1: what an import or an older version would leave behind).
pub fn set_payload(db: &TestDb, pending_id: &str, question_id: &str, payload: &str) {
    let updated = db.raw(|conn| {
        diesel::update(
            bundle_questions::table
                .filter(bundle_questions::pending_id.eq(pending_id))
                .filter(bundle_questions::question_id.eq(question_id)),
        )
        .set(bundle_questions::payload.eq(payload))
        .execute(conn)
        .unwrap()
    });
    assert_eq!(updated, 1, "one row {pending_id}/{question_id}");
}

/// Every bundle's id, in id order.
pub fn bundle_ids(db: &TestDb) -> Vec<String> {
    db.raw(|conn| {
        bundles::table
            .order_by(bundles::pending_id)
            .select(bundles::pending_id)
            .load(conn)
            .unwrap()
    })
}

/// Makes every row of the bundle `answered` (no longer active).
pub fn answer_all(db: &TestDb, pending_id: &str) {
    db.raw(|conn| {
        diesel::update(bundle_questions::table.filter(bundle_questions::pending_id.eq(pending_id)))
            .set(bundle_questions::status.eq("answered"))
            .execute(conn)
            .unwrap()
    });
}

pub fn detached(db: &TestDb, pending_id: &str) -> bool {
    db.raw(|conn| {
        bundles::table
            .find(pending_id)
            .select(bundles::agent_disconnected)
            .first(conn)
            .unwrap()
    })
}

pub fn turn_of(db: &TestDb, pending_id: &str) -> String {
    db.raw(|conn| {
        bundles::table
            .find(pending_id)
            .select(bundles::turn_id)
            .first(conn)
            .unwrap()
    })
}

/// Sets a session's state without clarion's expiry (to test ACT-1.3 alone).
pub fn force_state(db: &TestDb, session_id: &str, state: &str) {
    db.raw(|conn| {
        diesel::update(sessions::table.find(session_id))
            .set(sessions::state.eq(state))
            .execute(conn)
            .unwrap()
    });
}

pub fn mark_undelivered(db: &TestDb, pending_id: &str) {
    db.raw(|conn| {
        diesel::update(bundles::table.find(pending_id))
            .set(bundles::response_delivery_pending.eq(true))
            .execute(conn)
            .unwrap()
    });
}

/// The bundles the SQL activeness rule calls active at the test clock's
/// `now`, sorted.
pub fn active_ids(db: &TestDb) -> Vec<String> {
    let now = clarion::Clock::now(&*db.clock).as_micros();
    let mut ids: Vec<String> = db.raw(|conn| {
        clarion::test_hooks::active_bundle_ids(now)
            .load(conn)
            .unwrap()
    });
    ids.sort();
    ids
}

/// Stores a response object on every row of the bundle (as the claim would).
pub fn set_response(db: &TestDb, pending_id: &str, response: &str) {
    db.raw(|conn| {
        diesel::update(bundle_questions::table.filter(bundle_questions::pending_id.eq(pending_id)))
            .set(bundle_questions::response.eq(response))
            .execute(conn)
            .unwrap()
    });
}

/// Every stored fact of the inbox, in key order, for "changes nothing"
/// checks. The `may_be_active` index hint is left out: ACT-4 allows it to be
/// maintained.
pub fn dump(db: &TestDb) -> Vec<String> {
    db.raw(|conn| {
        let mut out: Vec<String> = Vec::new();
        let w: Vec<(String, String, String)> = workspaces::table
            .order_by(workspaces::id)
            .load(conn)
            .unwrap();
        out.extend(w.iter().map(|r| format!("workspace {r:?}")));
        let t: Vec<(String, String, String)> = tasks::table.order_by(tasks::id).load(conn).unwrap();
        out.extend(t.iter().map(|r| format!("task {r:?}")));
        let s: Vec<(String, String, String, bool)> =
            sessions::table.order_by(sessions::id).load(conn).unwrap();
        out.extend(s.iter().map(|r| format!("session {r:?}")));
        let tu: Vec<(i64, String, String, i64)> =
            turns::table.order_by(turns::seq).load(conn).unwrap();
        out.extend(tu.iter().map(|r| format!("turn {r:?}")));
        out.extend(bundle_rows(conn).iter().map(|r| format!("bundle {r:?}")));
        #[allow(clippy::type_complexity)]
        let q: Vec<(
            i64,
            String,
            String,
            String,
            String,
            Option<i32>,
            String,
            Option<String>,
            Option<String>,
            i64,
            Option<i64>,
        )> = bundle_questions::table
            .order_by(bundle_questions::id)
            .load(conn)
            .unwrap();
        out.extend(q.iter().map(|r| format!("question {r:?}")));
        out
    })
}

/// Every bundle column except the `may_be_active` hint.
#[allow(clippy::type_complexity)]
fn bundle_rows(
    conn: &mut clarion::test_hooks::AnyConnection,
) -> Vec<(
    (
        String,
        String,
        String,
        String,
        String,
        String,
        i64,
        Option<String>,
    ),
    (
        bool,
        bool,
        String,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<i64>,
    ),
)> {
    bundles::table
        .order_by(bundles::pending_id)
        .select((
            (
                bundles::pending_id,
                bundles::session_id,
                bundles::task_id,
                bundles::turn_id,
                bundles::kind,
                bundles::context,
                bundles::created_at,
                bundles::idempotency_key,
            ),
            (
                bundles::agent_disconnected,
                bundles::response_delivery_pending,
                bundles::reject_reason,
                bundles::responded_at,
                bundles::resolved_by_kind,
                bundles::resolved_by_id,
                bundles::delivery_lease_until,
            ),
        ))
        .load(conn)
        .unwrap()
}
