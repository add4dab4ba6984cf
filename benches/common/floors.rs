//! The ask floor (OPS-3, issue #41), shared by the write benchmarks that
//! measure `ask` beside it (`resolve`, `nudges`): a two-question bundle
//! written by hand, each backend's fastest way, with the writes clarion's
//! `ask` makes.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clarion::test_hooks::AnyConnection;
use clarion::{Backend, Clarion};
use diesel::connection::SimpleConnection;
use diesel::sql_types::Text;
use diesel::RunQueryDsl;

use super::{timed, Raw};

/// The payload clarion stores for question `n` of [`two_questions`].
pub fn payload(n: usize, title: &str, prompt: &str) -> String {
    format!(
        r#"{{"title":"{title}","prompt":"{prompt}","options":[{{"option_id":"q{n}_opt1","label":"Yes","description":"Go on"}},{{"option_id":"q{n}_opt2","label":"No","description":"Stop"}}]}}"#
    )
}

pub fn backend_of(conn: &AnyConnection) -> Backend {
    match conn {
        AnyConnection::Sqlite(_) => Backend::Sqlite,
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(_) => Backend::Postgres,
    }
}

/// A floor's writes for one bundle, in one transaction, each backend's
/// fastest way: on SQLite prepared statements from diesel's cache between
/// `BEGIN IMMEDIATE` and `COMMIT`; on PostgreSQL one batch of literal
/// statements, one round trip.
pub fn by_hand(conn: &mut AnyConnection, statements: Vec<Raw>) {
    if backend_of(conn) == Backend::Sqlite {
        conn.batch_execute("BEGIN IMMEDIATE").unwrap();
        for statement in statements {
            statement.execute(conn).unwrap();
        }
        conn.batch_execute("COMMIT").unwrap();
    } else {
        let body: Vec<String> = statements.iter().map(Raw::literal).collect();
        conn.batch_execute(&format!("BEGIN; {}; COMMIT", body.join("; ")))
            .unwrap();
    }
}

/// OPS-3a, PPL-5: a bundle carries its task, its workspace owner's key and
/// its workspace key, read from the mirror as it is written.
pub const INSERT_BUNDLE: &str = "INSERT INTO bundles
    (pending_id, session_id, task_id, turn_id, kind, context, created_at, task_key, owner_key,
     workspace_key)
    VALUES (?, ?, 't', ?, 'question', '', ?, 't',
            (SELECT COALESCE(w.owner_id, '') FROM tasks t
             LEFT JOIN workspaces w ON w.id = t.workspace_id WHERE t.id = 't'),
            (SELECT CASE WHEN COALESCE(w.owner_id, '') = '' THEN '' ELSE w.id END FROM tasks t
             LEFT JOIN workspaces w ON w.id = t.workspace_id WHERE t.id = 't'))";
/// DEL-3: an asked bundle is attached to the handle that asked it.
pub const INSERT_ATTACHMENT: &str = "INSERT INTO attachments (pending_id, handle_id) VALUES (?, ?)";
pub const INSERT_QUESTIONS: &str = "INSERT INTO bundle_questions
    (pending_id, session_id, turn_id, question_id, question_index, payload, status, created_at)
    VALUES (?, ?, ?, 'q1', 0, ?, 'pending', ?), (?, ?, ?, 'q2', 1, ?, 'pending', ?)";
/// EVT-1: each change appends its event in its own transaction, with its
/// subject written out (the floor knows its task and workspace) and its
/// data frozen: the floors make the writes clarion makes (OPS-2).
pub const INSERT_EVENT: &str = "INSERT INTO events
    (event_type, at, pending_id, task_id, workspace_id, task_exists, kind, data)
    VALUES (?, 1, ?, 't', 'w', TRUE, 'question', ?)";

/// An event of `word` about `pending_id` carrying `data`.
pub fn event<'a>(word: &'a str, pending_id: &'a str, data: &'a str) -> Raw<'a> {
    Raw::new(INSERT_EVENT)
        .text(word)
        .text(pending_id)
        .text(data)
}

#[derive(diesel::QueryableByName)]
struct HandleId {
    #[diesel(sql_type = Text)]
    id: String,
}

/// The ask floor's setup (untimed): the only turn of `session`, and the
/// id of the handle row clarion's own asks attach to.
pub fn floor_ask_setup(clarion: &Clarion, session: &str) -> (String, String) {
    let turn = format!("turn-{session}");
    clarion
        .with_raw_connection(|conn| {
            let insert_turn = "INSERT INTO turns (id, session_id, started_at) VALUES (?, ?, 0)";
            Raw::new(insert_turn)
                .text(&turn)
                .text(session)
                .execute(conn)
                .unwrap();
            let handle: HandleId = Raw::new("SELECT id FROM handles ORDER BY alive_until DESC")
                .load(conn)
                .unwrap()
                .into_iter()
                .next()
                .expect("clarion asked first, so its handle row exists");
            (turn, handle.id)
        })
        .unwrap()
}

/// The ask floor: `n` bundles written by hand into `session` and `turn`,
/// each attached to `handle`. Returns the time and the new ids.
pub fn floor_ask(
    clarion: &Clarion,
    session: &str,
    turn: &str,
    handle: &str,
    n: usize,
) -> (Duration, Vec<String>) {
    let (p1, p2) = (payload(1, "A", "First?"), payload(2, "B", "Second?"));
    clarion
        .with_raw_connection(|conn| {
            timed(|| {
                (0..n)
                    .map(|_| {
                        let id = uuid::Uuid::now_v7().to_string();
                        let now = SystemTime::now()
                            .duration_since(UNIX_EPOCH)
                            .unwrap()
                            .as_micros() as i64;
                        let bundle = Raw::new(INSERT_BUNDLE)
                            .text(&id)
                            .text(session)
                            .text(turn)
                            .int(now);
                        let attachment = Raw::new(INSERT_ATTACHMENT).text(&id).text(handle);
                        // The bundle as a reader is shown it (LIST-6): its
                        // questions and a few fields.
                        let data = format!(
                            r#"{{"pending_id":"{id}","task_id":"t","status":"pending","questions":[{p1},{p2}]}}"#
                        );
                        let asked = event("bundle.asked", &id, &data);
                        let mut rows = Raw::new(INSERT_QUESTIONS);
                        for payload in [&p1, &p2] {
                            rows = rows
                                .text(&id)
                                .text(session)
                                .text(turn)
                                .text(payload)
                                .int(now);
                        }
                        by_hand(conn, vec![bundle, attachment, rows, asked]);
                        id
                    })
                    .collect()
            })
        })
        .unwrap()
}
