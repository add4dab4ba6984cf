//! Idempotent asks (ASK-4): the same key on the same session returns the
//! same bundle and writes nothing, whatever happened to it since; keys are
//! per session, an empty key is no key, and concurrent asks with one key
//! create one bundle.

use clarion::test_hooks::schema::{bundle_questions, bundles};
use clarion::{AskRequest, Asked, Error, SessionState};
use diesel::prelude::*;

use crate::ask_support::*;
use crate::support::rows;
use crate::support::*;

fn keyed(session_id: &str, key: &str) -> AskRequest {
    AskRequest {
        idempotency_key: Some(key.to_owned()),
        ..ask_request(session_id, 1)
    }
}

// ---- ASK-4 ----------------------------------------------------------------

dual_backend!(
    ask_4_same_key_returns_the_same_bundle_and_writes_nothing,
    ask_4_replay_after_session_ended_returns_the_bundle,
    ask_4_replay_after_supersession_returns_the_bundle,
    ask_4_replay_after_resolution_returns_the_bundle,
    ask_4_keys_are_per_session,
    ask_4_empty_key_means_no_key
);

/// ASK-4: a second ask with the same key returns the first bundle with
/// `created: false` and writes nothing.
fn ask_4_same_key_returns_the_same_bundle_and_writes_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "k1")).unwrap();
    assert!(first.created);
    assert_eq!(bundle_row(db, &first.pending_id).5.as_deref(), Some("k1"));
    let before = rows::dump(db);
    let again = db.ask(&keyed(&session, "k1")).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id.clone(),
            created: false
        }
    );
    // Different content with the same key still returns the first bundle.
    let other_content = AskRequest {
        idempotency_key: Some("k1".to_owned()),
        ..ask_request(&session, 4)
    };
    let again = db.ask(&other_content).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id.clone(),
            created: false
        }
    );
    assert_eq!(rows::dump(db), before);
    // Another key is another bundle.
    let second = db.ask(&keyed(&session, "k2")).unwrap();
    assert!(second.created);
    assert_ne!(second.pending_id, first.pending_id);
}

/// ASK-4 before ASK-5: the replay is answered even after the session
/// ended, for every terminal state.
fn ask_4_replay_after_session_ended_returns_the_bundle(db: &TestDb) {
    for (n, state) in [
        SessionState::Completed,
        SessionState::Failed,
        SessionState::Cancelled,
    ]
    .into_iter()
    .enumerate()
    {
        let session = mirror(db, &format!("s{n}"), "alice");
        let first = db.ask(&keyed(&session, "k")).unwrap();
        db.set_session_state(&session, state).unwrap();
        let before = rows::dump(db);
        let again = db.ask(&keyed(&session, "k")).unwrap();
        assert_eq!(
            again,
            Asked {
                pending_id: first.pending_id,
                created: false
            },
            "{state:?}"
        );
        assert_eq!(rows::dump(db), before, "{state:?}");
        // A new key on the ended session is refused (ASK-5).
        assert!(matches!(
            db.ask(&keyed(&session, "new")),
            Err(Error::SessionEnded)
        ));
    }
}

/// ASK-4: the replay is answered even after a newer turn superseded the
/// bundle, without starting a turn or writing a row.
fn ask_4_replay_after_supersession_returns_the_bundle(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "k")).unwrap();
    let old_turn = rows::turn_of(db, &first.pending_id);
    db.begin_turn(&session).unwrap();
    assert!(!db.has_pending_clarification(&session).unwrap());
    let before = rows::dump(db);
    let again = db.ask(&keyed(&session, "k")).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id.clone(),
            created: false
        }
    );
    assert_eq!(rows::dump(db), before);
    assert_eq!(rows::turn_of(db, &first.pending_id), old_turn);
    assert!(!db.has_pending_clarification(&session).unwrap());
}

/// ASK-4: the replay is answered even after the bundle's rows were
/// resolved.
fn ask_4_replay_after_resolution_returns_the_bundle(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "k")).unwrap();
    db.raw(|conn| {
        diesel::update(
            bundle_questions::table.filter(bundle_questions::pending_id.eq(&first.pending_id)),
        )
        .set(bundle_questions::status.eq("answered"))
        .execute(conn)
        .unwrap()
    });
    let before = rows::dump(db);
    let again = db.ask(&keyed(&session, "k")).unwrap();
    assert_eq!(
        again,
        Asked {
            pending_id: first.pending_id,
            created: false
        }
    );
    assert_eq!(rows::dump(db), before);
}

/// ASK-4: keys are per session: the same key on another session creates
/// a new bundle there.
fn ask_4_keys_are_per_session(db: &TestDb) {
    let one = mirror(db, "a", "alice");
    let two = mirror(db, "b", "alice");
    let first = db.ask(&keyed(&one, "shared")).unwrap();
    let second = db.ask(&keyed(&two, "shared")).unwrap();
    assert!(first.created);
    assert!(second.created);
    assert_ne!(first.pending_id, second.pending_id);
    assert_eq!(bundle_row(db, &second.pending_id).0, two);
    assert_eq!(
        bundle_row(db, &second.pending_id).5.as_deref(),
        Some("shared")
    );
    // Each session's replay returns its own bundle.
    assert_eq!(
        db.ask(&keyed(&one, "shared")).unwrap().pending_id,
        first.pending_id
    );
    assert_eq!(
        db.ask(&keyed(&two, "shared")).unwrap().pending_id,
        second.pending_id
    );
    assert_eq!(counts(db).1, 2);
}

/// ASK-4: an empty key means no key — every such ask creates a bundle,
/// and no key is stored.
fn ask_4_empty_key_means_no_key(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = db.ask(&keyed(&session, "")).unwrap();
    let second = db.ask(&keyed(&session, "")).unwrap();
    let third = db.ask(&ask_request(&session, 1)).unwrap();
    let fourth = db.ask(&ask_request(&session, 1)).unwrap();
    for asked in [&first, &second, &third, &fourth] {
        assert!(asked.created);
        assert_eq!(bundle_row(db, &asked.pending_id).5, None);
    }
    let mut ids = vec![
        first.pending_id,
        second.pending_id,
        third.pending_id,
        fourth.pending_id,
    ];
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4);
    assert_eq!(counts(db), (1, 4, 4));
}

dual_backend!(ask_4_concurrent_asks_with_one_key_create_one_bundle);

/// ASK-4 under concurrency: eight asks with one idempotency key, on two
/// handles, released together, create exactly one bundle; every caller
/// gets its `pending_id`, and only one says `created`.
fn ask_4_concurrent_asks_with_one_key_create_one_bundle(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let handles = [db.reopen(), db.reopen()];
    let start = std::sync::Arc::new(std::sync::Barrier::new(8));
    let asked: Vec<clarion::Asked> = (0..8)
        .map(|n| {
            let (handle, start, session) = (handles[n % 2].clone(), start.clone(), session.clone());
            std::thread::spawn(move || {
                start.wait();
                handle.ask(&keyed(&session, "once")).unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect();
    assert_eq!(asked.iter().filter(|a| a.created).count(), 1, "{asked:?}");
    assert!(
        asked.iter().all(|a| a.pending_id == asked[0].pending_id),
        "{asked:?}"
    );
    let stored: i64 = db.raw(|conn| bundles::table.count().get_result(conn).unwrap());
    assert_eq!(stored, 1);
}
