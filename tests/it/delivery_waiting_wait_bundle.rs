//! The external `wait_bundle` (WIRE-3): a human's long poll gets someone
//! else's resolution, unclaimed; `409` when the bundle stops being active,
//! `504` on a timeout (WIRE-1); not-found identical for a foreign bundle
//! and a fabricated id; `questions:read` required; nothing acknowledged.
//!
//! Timing discipline: see [`crate::delivery_waiting_support`].

use std::time::{Duration, Instant};

use clarion::envelope;
use clarion::{BundleStatus, Entity, Error, Grant, Principal, Resolved, SessionState};
use serde_json::json;

use crate::delivery_waiting_support::*;
use crate::support::rows;
use crate::support::*;

const TIMED_OUT_BODY: &str = r#"{"error":"timed out waiting for a response"}"#;

// ---- WIRE-3 wait_bundle --------------------------------------------------------

dual_backend!(
    wire_3_wait_bundle_returns_the_resolution_unclaimed,
    wire_3_wait_bundle_no_longer_active,
    wire_3_wait_bundle_times_out_with_504,
    wire_3_wait_bundle_not_found_is_identical_for_foreign_and_fabricated,
    wire_3_wait_bundle_needs_questions_read,
    wire_3_wait_bundle_does_not_acknowledge
);

/// WIRE-3: an external waiter gets someone else's resolution, unclaimed,
/// as the WIRE-1 resolved envelope; an agent with `questions:read` may
/// wait too.
fn wire_3_wait_bundle_returns_the_resolution_unclaimed(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let human = already_waiting(&h, || spawn_wait_bundle(&h, alice(), &id, LONG_WAIT));
    let reader = alice_bot_with([Grant::QuestionsRead]);
    let bot = already_waiting(&h, || spawn_wait_bundle(&h, reader.clone(), &id, LONG_WAIT));
    let resolved = h
        .resolve_bundle(&Principal::System, &id, &one_answer("decided"))
        .unwrap();
    assert!(resolved.claimed);
    let expected = Resolved {
        claimed: false,
        ..resolved.clone()
    };
    assert_eq!(human.within(PROMPT).unwrap(), expected);
    assert_eq!(bot.within(PROMPT).unwrap(), expected);
    let reply = envelope::resolved(&expected);
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.body,
        json!({
            "success": true,
            "claimed": false,
            "status": "answered",
            "response": envelope::response(&resolved.response),
            "quorum": null,
        })
    );
    // A wait that starts after the resolution returns it at once.
    assert_eq!(
        promptly(PROMPT, || h.wait_bundle(&reader, &id, LONG_WAIT)).unwrap(),
        expected
    );
}

/// WIRE-3: `409` when the bundle stops being active without a
/// resolution, while or before the caller waits.
fn wire_3_wait_bundle_no_longer_active(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    let turned = mirror(db, "a", "alice");
    let ended = mirror(db, "b", "alice");
    let superseded = ask(&h, &turned, 1);
    let expired = ask(&h, &ended, 1);
    let waiters = [&superseded, &expired]
        .map(|id| already_waiting(&h, || spawn_wait_bundle(&h, alice(), id, LONG_WAIT)));
    h.begin_turn(&turned).unwrap();
    h.set_session_state(&ended, SessionState::Completed)
        .unwrap();
    for waiter in waiters {
        let error = waiter.within(PROMPT).unwrap_err();
        assert!(matches!(error, Error::NoLongerActive), "{error:?}");
        let reply = envelope::error(&error);
        assert_eq!(reply.status, 409);
        assert_eq!(reply.body_text(), NO_LONGER_ACTIVE_BODY);
    }
    for id in [&superseded, &expired] {
        let error = promptly(PROMPT, || h.wait_bundle(&alice(), id, LONG_WAIT)).unwrap_err();
        assert!(matches!(error, Error::NoLongerActive), "{error:?}");
    }
}

/// WIRE-3, WIRE-1: `504 {"error":"timed out waiting for a response"}`
/// when the timeout passes first. An external waiter is not the agent:
/// timing out detaches nothing.
fn wire_3_wait_bundle_times_out_with_504(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let error = promptly(PROMPT, || h.wait_bundle(&alice(), &id, Duration::ZERO)).unwrap_err();
    assert!(matches!(error, Error::TimedOut), "{error:?}");
    let reply = envelope::error(&error);
    assert_eq!(reply.status, 504);
    assert_eq!(reply.body_text(), TIMED_OUT_BODY);
    let timeout = Duration::from_millis(200);
    let started = Instant::now();
    assert!(matches!(
        h.wait_bundle(&alice(), &id, timeout),
        Err(Error::TimedOut)
    ));
    assert!(started.elapsed() >= timeout);
    assert!(!rows::detached(db, &id));
    assert_eq!(status(db, &id), BundleStatus::Pending);
}

/// WIRE-3, AUTH-5, REL-4: a foreign bundle and a fabricated id are the
/// same not-found, at once (no waiting on a bundle the caller may not
/// see); AUTH-6: a permission bundle is not-found for an agent.
fn wire_3_wait_bundle_not_found_is_identical_for_foreign_and_fabricated(db: &TestDb) {
    let h = db.reopen_polling(NO_POLL);
    mirror(db, "a", "alice");
    let bobs = mirror(db, "b", "bob");
    let foreign = ask(&h, &bobs, 1);
    let foreign_error =
        promptly(PROMPT, || h.wait_bundle(&alice(), &foreign, LONG_WAIT)).unwrap_err();
    let fabricated_error = promptly(PROMPT, || {
        h.wait_bundle(&alice(), "pending-999999", LONG_WAIT)
    })
    .unwrap_err();
    assert!(
        matches!(foreign_error, Error::NotFound(Entity::Bundle)),
        "{foreign_error:?}"
    );
    assert_eq!(
        format!("{foreign_error:?}"),
        format!("{fabricated_error:?}")
    );
    assert_eq!(
        envelope::error(&foreign_error),
        envelope::error(&fabricated_error)
    );
    assert_eq!(envelope::error(&foreign_error).body_text(), NOT_FOUND_BODY);

    let alices = mirror(db, "c", "alice");
    let permission = ask_permission(&h, &alices, 1);
    let bot = alice_bot();
    let hidden = promptly(PROMPT, || h.wait_bundle(&bot, &permission, LONG_WAIT)).unwrap_err();
    assert_eq!(format!("{hidden:?}"), format!("{fabricated_error:?}"));
    // The human owner may wait on it.
    assert!(matches!(
        h.wait_bundle(&alice(), &permission, Duration::ZERO),
        Err(Error::TimedOut)
    ));
}

/// WIRE-3, AUTH-2: an agent without `questions:read` (and an
/// unclassified caller) is denied before anything is looked up.
fn wire_3_wait_bundle_needs_questions_read(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    let denied = [
        alice_bot_with([Grant::QuestionsAnswer]),
        alice_bot_with([]),
        Principal::Unclassified,
    ];
    for principal in denied {
        for target in [id.as_str(), "pending-999999"] {
            let error =
                promptly(PROMPT, || h.wait_bundle(&principal, target, LONG_WAIT)).unwrap_err();
            assert!(
                matches!(error, Error::CapabilityDenied),
                "{principal:?}: {error:?}"
            );
            assert_eq!(envelope::error(&error).status, 403);
        }
    }
}

/// WIRE-3, DEL-3: `wait_bundle` acknowledges nothing: a detached
/// bundle's resolution stays in the outbox after an external waiter
/// received it.
fn wire_3_wait_bundle_does_not_acknowledge(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let h = db.reopen_polling(NO_POLL);
    let id = ask(&h, &session, 1);
    h.detach_session(&session).unwrap();
    let human = already_waiting(&h, || spawn_wait_bundle(&h, alice(), &id, LONG_WAIT));
    let resolved = h
        .resolve_bundle(&Principal::System, &id, &one_answer(""))
        .unwrap();
    let seen = human.within(PROMPT).unwrap();
    assert!(!seen.claimed);
    assert_eq!(seen.response, resolved.response);
    assert!(undelivered(db, &id));
    assert_eq!(outbox(db), vec![id.clone()]);
    promptly(PROMPT, || h.wait_bundle(&alice(), &id, LONG_WAIT)).unwrap();
    assert_eq!(outbox(db), [id]);
}
