//! `cancel_bundle` (LIFE-6): users and `system` cancel through the claim,
//! agents never do; a cancel's loser replays the winner; a superseded
//! bundle is the no-winner conflict; no waiter is needed.

use clarion::{BundleStatus, Error, Grant, Principal};

use crate::resolve_support::*;
use crate::support::rows;
use crate::support::*;

// ---- LIFE-6 --------------------------------------------------------------

dual_backend!(
    life_6_cancel_by_user,
    life_6_cancel_by_system,
    life_6_agents_cannot_cancel,
    life_6_cancel_loser_replays_the_winner,
    life_6_cancel_superseded_is_no_longer_active,
    life_6_cancel_after_restart
);

/// LIFE-6: a user cancels through the claim.
fn life_6_cancel_by_user(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    db.clock.advance_micros(3_000_000);
    let won = db.cancel_bundle(&alice(), &id).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Cancelled);
    assert!(won.response.answers.is_empty());
    assert!(!won.response.rejected);
    assert_eq!(won.response.reject_reason, "");
    assert_eq!(
        stored_rows(db, &id),
        [
            ("q1".into(), Some("cancelled".into()), None),
            ("q2".into(), Some("cancelled".into()), None)
        ]
    );
    assert_eq!(
        resolution(db, &id),
        Resolution {
            reject_reason: String::new(),
            responded_at: Some(EPOCH.as_micros() + 3_000_000),
            resolved_by_kind: Some("user".into()),
            resolved_by_id: Some("alice".into()),
            response_delivery_pending: true,
        }
    );
    assert!(!listed(db, &alice(), &id));
}

/// LIFE-6: `system` cancels too.
fn life_6_cancel_by_system(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    let won = db.cancel_bundle(&Principal::System, &id).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Cancelled);
    let stored = resolution(db, &id);
    assert_eq!(
        (
            stored.resolved_by_kind.as_deref(),
            stored.resolved_by_id.as_deref()
        ),
        (Some("system"), Some(""))
    );
    assert_eq!(rows::statuses(db, &id), [Some("cancelled".into())]);
}

/// LIFE-6, AUTH-2: agents never cancel, whatever their grants.
fn life_6_agents_cannot_cancel(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 1);
    for agent in [
        alice_bot(),
        alice_bot_with([]),
        alice_bot_with([Grant::QuestionsAnswer]),
    ] {
        assert!(matches!(
            db.cancel_bundle(&agent, &id),
            Err(Error::CapabilityDenied)
        ));
        assert!(matches!(
            db.cancel_bundle(&agent, "fabricated"),
            Err(Error::CapabilityDenied)
        ));
    }
    assert!(matches!(
        db.cancel_bundle(&Principal::Unclassified, &id),
        Err(Error::CapabilityDenied)
    ));
    assert_untouched(db, &id);
}

/// LIFE-6, REPLAY-1: cancel's loser replays the winner, and a resolve
/// after a cancel replays the cancellation.
fn life_6_cancel_loser_replays_the_winner(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let answered = ask(db, &session, 2);
    let won = db
        .resolve_bundle(&alice(), &answered, &two_answers())
        .unwrap();
    let before = snapshot(db, &answered);
    let lost = db.cancel_bundle(&alice(), &answered).unwrap();
    assert!(!lost.claimed);
    assert_eq!(lost.status, BundleStatus::Answered);
    assert_eq!(response_text(&lost), response_text(&won));
    assert_eq!(snapshot(db, &answered), before);

    let cancelled = ask(db, &session, 1);
    let won = db.cancel_bundle(&Principal::System, &cancelled).unwrap();
    for lost in [
        db.cancel_bundle(&alice(), &cancelled).unwrap(),
        db.resolve_bundle(
            &alice(),
            &cancelled,
            &answering(vec![answer("q1", &[], "")]),
        )
        .unwrap(),
    ] {
        assert!(!lost.claimed);
        assert_eq!(lost.status, BundleStatus::Cancelled);
        assert_eq!(response_text(&lost), response_text(&won));
    }
}

/// LIFE-6: cancelling a superseded bundle is the no-winner conflict.
fn life_6_cancel_superseded_is_no_longer_active(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.begin_turn(&session).unwrap();
    assert_no_longer_active(db.cancel_bundle(&alice(), &id));
    assert_untouched(db, &id);
}

/// LIFE-6: cancel needs no waiter and works on a handle opened after the
/// bundle was asked (a restart).
fn life_6_cancel_after_restart(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let restarted = db.reopen();
    let won = restarted.cancel_bundle(&alice(), &id).unwrap();
    assert!(won.claimed);
    assert_eq!(won.status, BundleStatus::Cancelled);
    assert_eq!(
        db.get_bundle(&alice(), &id).unwrap().status,
        BundleStatus::Cancelled
    );
    let lost = db.cancel_bundle(&alice(), &id).unwrap();
    assert!(!lost.claimed);
    assert_eq!(response_text(&lost), response_text(&won));
}
