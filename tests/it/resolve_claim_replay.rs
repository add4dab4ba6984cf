//! What the claim writes (CLAIM-3), one winner among racers (CLAIM-5),
//! the loser's replay and the no-winner conflict (REPLAY-1..3), and 64-bit
//! row ids (REL-8).

use clarion::envelope;
use clarion::test_hooks::schema::{bundle_questions, bundles};
use clarion::test_hooks::{points, FailAction};
use clarion::{BundleStatus, Error, Principal, Resolved, SessionState, Timestamp};
use diesel::prelude::*;
use serde_json::{json, Value};

use crate::resolve_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

fn set_row_response(db: &TestDb, pending_id: &str, question_id: &str, response: &str) {
    db.raw(|conn| {
        diesel::update(
            bundle_questions::table
                .filter(bundle_questions::pending_id.eq(pending_id))
                .filter(bundle_questions::question_id.eq(question_id)),
        )
        .set(bundle_questions::response.eq(response))
        .execute(conn)
        .unwrap()
    });
}

// ---- CLAIM-3 -------------------------------------------------------------

dual_backend!(
    claim_3_answer_by_user,
    claim_3_reject_by_agent,
    claim_3_resolved_by_system,
    claim_3_terminal_rows_are_left_untouched
);

/// CLAIM-3: a user's answer sets every row's status and normalized
/// answer and records the claim time, the resolver and "undelivered".
fn claim_3_answer_by_user(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    db.clock.advance_micros(5_000_123);
    let request = answering(vec![
        answer("q2", &["q2_opt2", "q2_opt1"], " second "),
        answer("q1", &["q1_opt1"], ""),
    ]);
    let won = db.resolve_bundle(&alice(), &id, &request).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Answered);
    assert_eq!(
        rows::statuses(db, &id),
        [Some("answered".into()), Some("answered".into())]
    );
    assert_eq!(
        stored_answer(db, &id, "q1"),
        Some(json!({"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": ""}))
    );
    assert_eq!(
        stored_answer(db, &id, "q2"),
        Some(
            json!({"question_id": "q2", "selected_options": ["q2_opt1", "q2_opt2"], "custom_text": "second"})
        )
    );
    let now = EPOCH.as_micros() + 5_000_123;
    assert_eq!(
        resolution(db, &id),
        Resolution {
            reject_reason: String::new(),
            responded_at: Some(now),
            resolved_by_kind: Some("user".into()),
            resolved_by_id: Some("alice".into()),
            response_delivery_pending: true,
        }
    );
    assert_eq!(won.response.responded_at, Some(Timestamp::from_micros(now)));
    assert!(!won.response.rejected);
    assert_eq!(won.response.reject_reason, "");
}

/// CLAIM-3: an agent's rejection marks every row rejected with no
/// response and records the trimmed reason and `agent`, `user/agent`.
fn claim_3_reject_by_agent(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 3);
    db.clock.advance_micros(42);
    let won = db
        .resolve_bundle(&alice_bot(), &id, &rejecting("  not this way "))
        .unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Rejected);
    for (question_id, status, response) in stored_rows(db, &id) {
        assert_eq!(status.as_deref(), Some("rejected"), "{question_id}");
        assert_eq!(
            response, None,
            "a rejected row has no response: {question_id}"
        );
    }
    assert_eq!(
        resolution(db, &id),
        Resolution {
            reject_reason: "not this way".into(),
            responded_at: Some(EPOCH.as_micros() + 42),
            resolved_by_kind: Some("agent".into()),
            resolved_by_id: Some("alice/bot".into()),
            response_delivery_pending: true,
        }
    );
    assert!(won.response.rejected);
    assert!(won.response.answers.is_empty());
}

/// CLAIM-3: `system` is recorded as kind `system` with an empty id.
fn claim_3_resolved_by_system(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let request = answering(vec![answer("q1", &["q1_opt2"], "")]);
    assert!(
        db.resolve_bundle(&Principal::System, &id, &request)
            .unwrap()
            .claimed
    );
    let stored = resolution(db, &id);
    assert_eq!(stored.resolved_by_kind.as_deref(), Some("system"));
    assert_eq!(stored.resolved_by_id.as_deref(), Some(""));
    assert_eq!(stored.responded_at, Some(EPOCH.as_micros()));
    assert!(stored.response_delivery_pending);
}

/// CLAIM-3: rows already terminal in a mixed bundle keep their status
/// and response, for an answer and for a rejection.
fn claim_3_terminal_rows_are_left_untouched(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let legacy = r#"{"question_id":"q1","selected_options":[],"custom_text":"legacy"}"#;
    let answered = ask(db, &session, 3);
    rows::set_status(db, &answered, "q1", Some("answered"));
    set_row_response(db, &answered, "q1", legacy);
    rows::set_status(db, &answered, "q3", Some("expired"));
    let request = answering(vec![
        answer("q1", &["q1_opt1"], "new"),
        answer("q2", &["q2_opt1"], "new"),
        answer("q3", &["q3_opt1"], "new"),
    ]);
    assert!(
        db.resolve_bundle(&alice(), &answered, &request)
            .unwrap()
            .claimed
    );
    let rows = stored_rows(db, &answered);
    assert_eq!(
        rows[0],
        ("q1".into(), Some("answered".into()), Some(legacy.into()))
    );
    assert_eq!(rows[1].1.as_deref(), Some("answered"));
    assert_eq!(
        stored_answer(db, &answered, "q2"),
        Some(json!({"question_id": "q2", "selected_options": ["q2_opt1"], "custom_text": "new"}))
    );
    assert_eq!(rows[2], ("q3".into(), Some("expired".into()), None));

    let rejected = ask(db, &session, 2);
    rows::set_status(db, &rejected, "q1", Some("expired"));
    assert!(
        db.resolve_bundle(&alice(), &rejected, &rejecting("no"))
            .unwrap()
            .claimed
    );
    assert_eq!(
        stored_rows(db, &rejected),
        [
            ("q1".into(), Some("expired".into()), None),
            ("q2".into(), Some("rejected".into()), None)
        ]
    );
}

// ---- REPLAY-1..3 ---------------------------------------------------------

dual_backend!(
    replay_1_loser_gets_the_winners_answer,
    replay_2_replayed_rejection_and_cancellation,
    replay_1_superseded_is_no_longer_active,
    replay_1_ended_session_is_no_longer_active,
    replay_1_terminal_session_without_expiry_is_no_longer_active,
    replay_1_malformed_bundle_is_no_longer_active,
    replay_3_claim_error_writes_nothing
);

/// REPLAY-1/2: a later resolve with other answers gets the winner's
/// status and response byte for byte with `claimed: false`, and writes
/// nothing.
fn replay_1_loser_gets_the_winners_answer(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    db.clock.advance_micros(1_000_000);
    let won = db.resolve_bundle(&alice(), &id, &two_answers()).unwrap();
    assert!(won.claimed);
    db.raw(|conn| {
        diesel::update(bundles::table.find(&id))
            .set(bundles::response_delivery_pending.eq(false))
            .execute(conn)
            .unwrap()
    });
    let before = snapshot(db, &id);

    db.clock.advance_micros(9_000_000);
    let other = answering(vec![
        answer("q2", &["q2_opt1"], "mine"),
        answer("q1", &[], ""),
    ]);
    for (principal, request) in [
        (Principal::System, other),
        (alice(), two_answers()),
        (alice_bot(), rejecting("too late")),
    ] {
        let lost = db.resolve_bundle(&principal, &id, &request).unwrap();
        assert!(!lost.claimed);
        assert_eq!(lost.status, BundleStatus::Answered);
        assert_eq!(lost.response, won.response);
        assert_eq!(response_text(&lost), response_text(&won));
        assert_eq!(
            body_text(&lost),
            body_text(&won).replace(r#""claimed":true"#, r#""claimed":false"#)
        );
        assert_eq!(snapshot(db, &id), before, "the loser writes nothing");
    }
}

/// REPLAY-2: a replayed rejection has no answers and the winner's
/// trimmed reason; a replayed cancellation has neither.
fn replay_2_replayed_rejection_and_cancellation(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let rejected = ask(db, &session, 2);
    let won = db
        .resolve_bundle(&alice(), &rejected, &rejecting("  wrong question\n"))
        .unwrap();
    let lost = db
        .resolve_bundle(&Principal::System, &rejected, &two_answers())
        .unwrap();
    assert!(!lost.claimed);
    assert_eq!(lost.status, BundleStatus::Rejected);
    assert!(lost.response.rejected);
    assert!(lost.response.answers.is_empty());
    assert_eq!(lost.response.reject_reason, "wrong question");
    assert_eq!(response_text(&lost), response_text(&won));
    let body: Value = serde_json::from_str(&body_text(&lost)).unwrap();
    assert_eq!(body["response"]["answers"], json!([]));
    assert_eq!(body["response"]["reject_reason"], json!("wrong question"));

    let cancelled = ask(db, &session, 1);
    let won = db.cancel_bundle(&alice(), &cancelled).unwrap();
    let lost = db
        .resolve_bundle(&alice(), &cancelled, &rejecting("why"))
        .unwrap();
    assert!(!lost.claimed);
    assert_eq!(lost.status, BundleStatus::Cancelled);
    assert!(!lost.response.rejected);
    assert!(lost.response.answers.is_empty());
    assert_eq!(lost.response.reject_reason, "");
    assert_eq!(response_text(&lost), response_text(&won));
}

/// REPLAY-1: superseded by a newer turn, nobody won: 409.
fn replay_1_superseded_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    db.begin_turn(&session).unwrap();
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &two_answers()));
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &rejecting("")));
    assert_untouched(db, &id);
}

/// REPLAY-1: the session ended and its questions expired: 409.
fn replay_1_ended_session_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    db.set_session_state(&session, SessionState::Completed)
        .unwrap();
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &two_answers()));
    assert_eq!(
        rows::statuses(db, &id),
        [Some("expired".into()), Some("expired".into())]
    );
    assert_eq!(resolution(db, &id), unresolved());
}

/// REPLAY-1: a terminal session whose rows were never expired: 409.
fn replay_1_terminal_session_without_expiry_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 2);
    rows::force_state(db, &session, "failed");
    assert_no_longer_active(db.resolve_bundle(&alice(), &id, &two_answers()));
    assert_untouched(db, &id);
}

/// REPLAY-1: a malformed bundle (rows over two turns): 409.
fn replay_1_malformed_bundle_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let old_turn = db.begin_turn(&session).unwrap();
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "mal", &session, &turn, "");
    Row::new("mal", &session, &turn)
        .question_id("q1")
        .index(Some(0))
        .insert(db);
    Row::new("mal", &session, &old_turn)
        .question_id("q2")
        .index(Some(1))
        .insert(db);
    let request = answering(vec![answer("q1", &["a"], ""), answer("q2", &["b"], "")]);
    assert_no_longer_active(db.resolve_bundle(&alice(), "mal", &request));
    assert_untouched(db, "mal");
}

/// REPLAY-3: a claim that fails mid-transaction is an error (500), not a
/// claim or a replay; nothing is written; after the fault a resolve wins.
fn replay_3_claim_error_writes_nothing(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    for point in [points::CLAIM_AFTER_ROWS, points::CLAIM_BEFORE_COMMIT] {
        db.arm_failpoint(point, FailAction::Error);
        for request in [two_answers(), rejecting("no")] {
            match db.resolve_bundle(&alice(), &id, &request) {
                Err(error @ Error::Internal(_)) => {
                    assert!(error.to_string().contains(point), "{error}");
                    assert!(error.to_string().contains(&id), "names the bundle: {error}");
                    assert_eq!(envelope::error(&error).status, 500);
                }
                other => {
                    panic!("expected an internal error from the claim at {point}, got {other:?}")
                }
            }
            assert_untouched(db, &id);
            assert!(
                listed(db, &alice(), &id),
                "still listed after a failed claim at {point}"
            );
        }
        db.disarm_failpoint(point);
    }
    let won = db.resolve_bundle(&alice(), &id, &two_answers()).unwrap();
    assert!(won.claimed);
    assert!(!listed(db, &alice(), &id));
}

// ---- further claim cases --------------------------------------------------

dual_backend!(
    claim_3_null_and_empty_statuses_are_pending,
    claim_5_one_winner_among_racers
);

/// CLAIM-3, ACT-1.1: rows whose status is NULL or empty are still
/// pending and take the resolution; an unrecognized status is not
/// pending and is left as stored.
fn claim_3_null_and_empty_statuses_are_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = rows::turn_of(db, &ask(db, &session, 1));
    rows::insert_bundle(db, "b", &session, &turn, "");
    Row::new("b", &session, &turn)
        .question_id("n")
        .index(Some(0))
        .status(None)
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("e")
        .index(Some(1))
        .status(Some(""))
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("w")
        .index(Some(2))
        .status(Some("weird"))
        .insert(db);
    let request = answering(vec![
        answer("n", &["a"], ""),
        answer("e", &["b"], ""),
        answer("w", &[], ""),
    ]);
    let won = db.resolve_bundle(&alice(), "b", &request).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Answered);
    assert_eq!(
        rows::statuses(db, "b"),
        [
            Some("answered".into()),
            Some("answered".into()),
            Some("weird".into())
        ]
    );
    assert_eq!(stored_answer(db, "b", "w"), None);
    assert_eq!(
        won.response.answers,
        [stored("n", &["a"], ""), stored("e", &["b"], "")]
    );
}

/// CLAIM-5: many racers on one bundle, each with different answers:
/// exactly one claims it, every other gets the winner's response byte
/// for byte, and the stored rows hold the winner's answers.
fn claim_5_one_winner_among_racers(db: &TestDb) {
    const RACERS: usize = 32;
    let session = mirror(db, "a", "alice");
    let handles = [db.clarion.clone(), db.reopen()];
    for round in 0..4 {
        let id = ask_with_options(db, &session, &[6]);
        let start = std::sync::Barrier::new(RACERS);
        let results: Vec<Resolved> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..RACERS)
                .map(|n| {
                    let (handle, id, start) = (&handles[n % 2], &id, &start);
                    scope.spawn(move || {
                        let request = if n % 5 == 4 {
                            rejecting(&format!("racer {n}"))
                        } else {
                            let option = format!("q1_opt{}", n % 6 + 1);
                            answering(vec![answer("q1", &[&option], &format!("racer {n}"))])
                        };
                        start.wait();
                        handle.resolve_bundle(&alice(), id, &request).unwrap()
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let winners: Vec<String> = results
            .iter()
            .filter(|r| r.claimed)
            .map(response_text)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: exactly one claim, got {winners:#?}"
        );
        let winner = results.iter().find(|r| r.claimed).unwrap();
        for result in &results {
            assert_eq!(result.status, winner.status);
            assert_eq!(response_text(result), response_text(winner));
        }
        let replay = db
            .resolve_bundle(&Principal::System, &id, &rejecting(""))
            .unwrap();
        assert_eq!(
            response_text(&replay),
            response_text(winner),
            "stored rows equal the winner's"
        );
    }
}

dual_backend!(rel_8_row_ids_beyond_32_bits);

/// REL-8: row ids are 64-bit on both backends: a question row whose id
/// is beyond 32 bits is read, claimed and replayed like any other.
fn rel_8_row_ids_beyond_32_bits(db: &TestDb) {
    let session = mirror(db, "big", "alice");
    let pending_id = ask(db, &session, 1);
    let big: i64 = 5_000_000_000;
    db.raw(|conn| {
        diesel::update(bundle_questions::table.filter(bundle_questions::pending_id.eq(&pending_id)))
            .set(bundle_questions::id.eq(big))
            .execute(conn)
            .unwrap()
    });
    let won = db
        .resolve_bundle(&alice(), &pending_id, &one_answer("big"))
        .unwrap();
    assert!(won.claimed);
    let lost = db
        .resolve_bundle(&alice(), &pending_id, &one_answer("late"))
        .unwrap();
    assert_eq!(lost.response, won.response);
    let ids: Vec<i64> = db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(&pending_id))
            .select(bundle_questions::id)
            .load(conn)
            .unwrap()
    });
    assert_eq!(ids, [big]);
}
