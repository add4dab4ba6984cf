//! One settlement (EXP-2, EXP-3, CLAIM-5): a due bundle reads as its
//! settlement will write it, and whoever meets it first — here a resolve
//! or a cancel — settles it once, in its transaction, then replays.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use clarion::test_hooks::schema::{bundle_questions, bundles};
use clarion::{AnswerInput, DecidedBy, Error, Expiry, OnExpire, Principal};
use diesel::prelude::*;

use crate::support::rows;
use crate::support::*;

dual_backend!(
    exp_2_get_bundle_bytes_equal_before_and_after_settlement,
    exp_3_expire_writes_expired_at_no_marks_no_outbox,
    exp_3_answer_default_responded_at_is_the_deadline,
    exp_3_reject_default_reaches_a_detached_agents_outbox,
    exp_3_cancel_after_expire_gets_409,
    exp_3_answer_before_the_deadline_wins,
    evt_1_closed_reason_deadline,
    claim_5_racers_on_a_due_bundle_settle_it_once,
    exp_3_a_wait_meeting_a_due_bundle_settles_it
);

/// EXP-3: an agent's wait that meets a due bundle settles it, and
/// receives the default like any resolution (or `Expired`); once.
fn exp_3_a_wait_meeting_a_due_bundle_settles_it(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for (word, on_expire) in defaults() {
        let id = ask_due_in_a_minute(db, &session, on_expire);
        db.clock.advance_micros(60_000_000);
        let outcome = db.wait(&id, Duration::from_millis(0)).unwrap();
        match (word, &outcome) {
            ("expire", clarion::WaitOutcome::Expired) => {}
            ("answer", clarion::WaitOutcome::Answered(response))
            | ("reject", clarion::WaitOutcome::Rejected(response)) => {
                assert_eq!(response.decided_by, DecidedBy::Deadline);
            }
            _ => panic!("{word}: {outcome:?}"),
        }
        assert_eq!(settling_events(db, &id).len(), 1, "{word}: settled once");
        assert!(!rows::statuses(db, &id).contains(&Some("pending".to_owned())));
    }
}

const MINUTE: Duration = Duration::from_secs(60);

fn answer(question_id: &str, options: &[&str], text: &str) -> AnswerInput {
    AnswerInput {
        question_id: question_id.to_owned(),
        selected_options: options.iter().map(|o| (*o).to_owned()).collect(),
        custom_text: text.to_owned(),
    }
}

fn defaults() -> [(&'static str, OnExpire); 3] {
    [
        ("expire", OnExpire::Expire),
        (
            "answer",
            OnExpire::Answer(vec![answer("q1", &["q1_opt2"], " by default ")]),
        ),
        (
            "reject",
            OnExpire::Reject {
                reject_reason: "nobody answered".to_owned(),
            },
        ),
    ]
}

/// A one-question bundle on `session` due `after` the test clock, with
/// `on_expire` (the `deadlines_*` suites share it).
pub fn ask_due(db: &TestDb, session: &str, after: Duration, on_expire: OnExpire) -> String {
    let mut request = ask_request(session, 1);
    request.expires = Some(Expiry::In(after));
    request.on_expire = on_expire;
    db.ask(&request).unwrap().pending_id
}

/// A one-question bundle on `session` due a minute from now.
fn ask_due_in_a_minute(db: &TestDb, session: &str, on_expire: OnExpire) -> String {
    ask_due(db, session, MINUTE, on_expire)
}

fn get_text(db: &TestDb, pending_id: &str) -> String {
    let detail = db.get_bundle(&Principal::System, pending_id).unwrap();
    clarion::envelope::bundle_detail(&detail).body_text()
}

/// The bundle's expires_at, responded_at, resolver kind, undelivered mark.
fn marks(db: &TestDb, id: &str) -> (Option<i64>, Option<i64>, Option<String>, bool) {
    db.raw(|conn| {
        bundles::table
            .find(id)
            .select((
                bundles::expires_at,
                bundles::responded_at,
                bundles::resolved_by_kind,
                bundles::response_delivery_pending,
            ))
            .first(conn)
            .unwrap()
    })
}

fn expired_at(db: &TestDb, id: &str) -> Vec<Option<i64>> {
    db.raw(|conn| {
        bundle_questions::table
            .filter(bundle_questions::pending_id.eq(id))
            .select(bundle_questions::expired_at)
            .load(conn)
            .unwrap()
    })
}

/// The `bundle.resolved` and `bundle.closed` events of `id`, as
/// `(type, data)`.
pub fn settling_events(db: &TestDb, id: &str) -> Vec<(String, serde_json::Value)> {
    // EVT-1a: on PostgreSQL another test's open transaction may hold the
    // newest events back for a moment.
    crate::events::wait_until_readable(db);
    db.events_after(&Principal::System, "", Some(1000))
        .unwrap()
        .events
        .into_iter()
        .filter(|event| event.pending_id == id && event.event_type != "bundle.asked")
        .map(|event| (event.event_type, event.data))
        .collect()
}

/// EXP-2: at a given `now`, `get_bundle` answers the same bytes before
/// the settlement (nothing written yet) and after it, for each action.
fn exp_2_get_bundle_bytes_equal_before_and_after_settlement(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for (word, on_expire) in defaults() {
        let id = ask_due_in_a_minute(db, &session, on_expire);
        db.clock.advance_micros(60_000_000);
        let before = get_text(db, &id);
        assert_eq!(marks(db, &id).1, None, "{word}: a read writes nothing");
        let settled = db.cancel_bundle(&Principal::System, &id);
        let after = get_text(db, &id);
        assert_eq!(before, after, "{word}");
        match word {
            "expire" => {
                assert!(matches!(settled, Err(Error::NoLongerActive)), "{settled:?}");
                assert!(before.contains(r#""status":"expired""#), "{before}");
            }
            _ => {
                let settled = settled.unwrap();
                assert!(!settled.claimed);
                assert_eq!(settled.response.decided_by, DecidedBy::Deadline);
            }
        }
    }
}

/// EXP-3: `expire` writes `expired` with `expired_at` the deadline, and no
/// `responded_at`, resolver or undelivered mark: no outbox entry, even for
/// a detached agent.
fn exp_3_expire_writes_expired_at_no_marks_no_outbox(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_due_in_a_minute(db, &session, OnExpire::Expire);
    db.detach_session(&session).unwrap();
    db.clock.advance_micros(90_000_000);
    assert!(matches!(
        db.resolve_bundle(&alice(), &id, &one_answer("late")),
        Err(Error::NoLongerActive)
    ));
    let (expires_at, responded_at, resolver, undelivered) = marks(db, &id);
    assert_eq!((responded_at, resolver, undelivered), (None, None, false));
    assert_eq!(expired_at(db, &id), [expires_at]);
    assert_eq!(rows::statuses(db, &id), [Some("expired".to_owned())]);
    assert!(db.pending_deliveries(None).unwrap().is_empty());
}

/// EXP-3: an `answer` default becomes the resolution with `responded_at`
/// the deadline (not the settler's clock) and resolver `deadline`; the
/// late resolve that settled it replays it, claimed false.
fn exp_3_answer_default_responded_at_is_the_deadline(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let (_, on_expire) = defaults().into_iter().nth(1).unwrap();
    let id = ask_due_in_a_minute(db, &session, on_expire);
    db.clock.advance_micros(3_600_000_000);
    let late = db
        .resolve_bundle(&alice(), &id, &one_answer("mine"))
        .unwrap();
    assert!(!late.claimed);
    assert_eq!(late.status, clarion::BundleStatus::Answered);
    assert_eq!(late.response.answers[0].selected_options, ["q1_opt2"]);
    assert_eq!(late.response.answers[0].custom_text, "by default");
    let (expires_at, responded_at, resolver, undelivered) = marks(db, &id);
    assert_eq!(responded_at, expires_at);
    assert_eq!(
        late.response.responded_at.map(|at| at.as_micros()),
        expires_at
    );
    assert_eq!(resolver.as_deref(), Some("deadline"));
    assert!(undelivered, "DEL-1: the agent has not received it yet");
}

/// EXP-3: a `reject` default is a resolution like any: a detached agent's
/// reaches the outbox once settled.
fn exp_3_reject_default_reaches_a_detached_agents_outbox(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let (_, on_expire) = defaults().into_iter().nth(2).unwrap();
    let id = ask_due_in_a_minute(db, &session, on_expire);
    db.detach_session(&session).unwrap();
    db.clock.advance_micros(60_000_000);
    let replayed = db.cancel_bundle(&alice(), &id).unwrap();
    assert_eq!(replayed.status, clarion::BundleStatus::Rejected);
    assert_eq!(replayed.response.reject_reason, "nobody answered");
    let outbox = db.pending_deliveries(None).unwrap();
    assert_eq!(outbox.len(), 1);
    assert_eq!(outbox[0].response.decided_by, DecidedBy::Deadline);
}

/// EXP-3: once expired, a cancel (like any resolve) is the `409`.
fn exp_3_cancel_after_expire_gets_409(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_due_in_a_minute(db, &session, OnExpire::Expire);
    db.clock.advance_micros(60_000_000);
    for _ in 0..2 {
        assert!(matches!(
            db.cancel_bundle(&Principal::System, &id),
            Err(Error::NoLongerActive)
        ));
    }
    assert_eq!(settling_events(db, &id).len(), 1, "settled once");
}

/// EXP-3: an answer whose claim reads `now < expires_at` wins as usual,
/// one microsecond before the deadline; at the deadline it no longer can.
fn exp_3_answer_before_the_deadline_wins(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask_due_in_a_minute(db, &session, OnExpire::Expire);
    db.clock.advance_micros(60_000_000 - 1);
    let won = db
        .resolve_bundle(&alice(), &id, &one_answer("in time"))
        .unwrap();
    assert!(won.claimed);
    assert_eq!(won.response.decided_by, DecidedBy::User);
    let other = ask_due_in_a_minute(db, &session, OnExpire::Expire);
    db.clock.advance_micros(60_000_000);
    assert!(matches!(
        db.resolve_bundle(&alice(), &other, &one_answer("too late")),
        Err(Error::NoLongerActive)
    ));
}

/// EVT-1: an `expire` settlement appends `bundle.closed` with reason
/// `deadline`; a default's, `bundle.resolved` — one event either way.
fn evt_1_closed_reason_deadline(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let expiring = ask_due_in_a_minute(db, &session, OnExpire::Expire);
    let (_, answering) = defaults().into_iter().nth(1).unwrap();
    let answered = ask_due_in_a_minute(db, &session, answering);
    db.clock.advance_micros(60_000_000);
    for id in [&expiring, &answered] {
        let _ = db.cancel_bundle(&Principal::System, id);
        let _ = db.cancel_bundle(&Principal::System, id);
    }
    let closed = settling_events(db, &expiring);
    assert_eq!(closed.len(), 1, "{closed:?}");
    assert_eq!(closed[0].0, "bundle.closed");
    assert_eq!(closed[0].1["reason"], "deadline");
    let resolved = settling_events(db, &answered);
    assert_eq!(resolved.len(), 1, "{resolved:?}");
    assert_eq!(resolved[0].0, "bundle.resolved");
    assert_eq!(resolved[0].1["response"]["decided_by"], "deadline");
}

/// CLAIM-5, EXP-3, AUD-1: racers released together at a due bundle —
/// resolves, cancels and sweeps on handles of their own — settle it
/// exactly once: one event and one deadline entry, every resolving racer
/// told the deadline's outcome, none claimed, each recorded as a loser.
fn claim_5_racers_on_a_due_bundle_settle_it_once(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for (word, on_expire) in defaults() {
        let id = ask_due_in_a_minute(db, &session, on_expire);
        db.clock.advance_micros(60_000_000);
        let racers = 6;
        let barrier = Arc::new(Barrier::new(racers));
        let handles: Vec<_> = (0..racers)
            .map(|n| {
                let (handle, barrier, id) =
                    (db.builder().open().unwrap(), barrier.clone(), id.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let outcome = match n % 3 {
                        0 => Some(handle.cancel_bundle(&Principal::System, &id)),
                        1 => Some(handle.resolve_bundle(
                            &Principal::System,
                            &id,
                            &one_answer("racing"),
                        )),
                        _ => {
                            handle.expire_due(None).unwrap();
                            None
                        }
                    };
                    // REL-7: the appender writes the racer's entry.
                    handle.close();
                    outcome
                })
            })
            .collect();
        let outcomes: Vec<_> = handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect();
        for outcome in &outcomes {
            match (word, outcome) {
                ("expire", Err(Error::NoLongerActive)) => {}
                ("answer" | "reject", Ok(resolved)) => {
                    assert!(!resolved.claimed, "{word}: {resolved:?}");
                    assert_eq!(resolved.response.decided_by, DecidedBy::Deadline);
                }
                _ => panic!("{word}: {outcome:?}"),
            }
        }
        assert_eq!(settling_events(db, &id).len(), 1, "{word}: settled once");
        // AUD-1: one deadline entry, and one loser's per resolve or cancel.
        let ledger = db.attempts(&Principal::System, &id).unwrap();
        let (deadline, callers): (Vec<_>, Vec<_>) =
            ledger.iter().partition(|e| e.channel == "deadline");
        assert_eq!(deadline.len(), 1, "{word}: {ledger:?}");
        let lost = if word == "expire" {
            "no_longer_active"
        } else {
            "lost"
        };
        assert_eq!(callers.len(), outcomes.len(), "{word}: {ledger:?}");
        assert!(
            callers.iter().all(|e| e.outcome == lost),
            "{word}: {ledger:?}"
        );
    }
}
