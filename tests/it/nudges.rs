//! NUDGE-1..5, PPL-6: reminders and escalation on both backends, with the
//! test clock: each step at its time and once, only the latest due
//! reminder per sweep, never at or after the deadline nor for a settled
//! bundle, across handles, processes and restarts; escalated users see the
//! bundle from `from` on, not a microsecond earlier; `nudges` in LIST-6.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use clarion::{
    envelope, EscalateRequest, Expiry, Principal, QuorumRequest, RemindersRequest, Timestamp,
    WorkspaceUpsert,
};
use serde_json::{json, Value};

use crate::deadlines_sweeping::two_sweep_processes;
use crate::doors_json_support::{refused, SYSTEM};
use crate::events::wait_until_readable;
use crate::quorum::approve;
use crate::resolve_support::listed;
use crate::support::*;

const TEAM: &str = "w-nudged";
const SECOND: i64 = 1_000_000;
const MINUTE: i64 = 60 * SECOND;

dual_backend!(
    nudge_2_three_reminders_at_their_times_then_none,
    nudge_2_a_sweep_takes_only_the_latest_due_reminder,
    nudge_2_nothing_steps_at_or_after_the_deadline,
    nudge_2_no_step_for_a_settled_bundle,
    nudge_2_two_sweeping_handles_take_each_step_once,
    nudge_2_sweepers_in_two_processes_take_each_step_once,
    nudge_2_a_step_racing_an_answer_precedes_it_or_never_happens,
    nudge_2_a_restart_between_steps_resumes_without_repeating,
    nudge_2_the_sweeper_takes_a_step_by_itself,
    nudge_2_a_c_abi_handle_opened_with_sweep_ms_takes_steps,
    nudge_3_escalated_users_see_the_bundle_from_its_time_on,
    nudge_3_an_escalated_user_votes_on_a_quorum_without_eligible,
    nudge_1_refusals_name_their_field_before_any_write,
    nudge_5_nudges_in_listings_gets_and_the_asked_event,
    nudge_5_the_step_types_are_webhook_event_types,
);

/// `w-nudged` owned by olga with bob as a member; a running session there.
fn team(db: &TestDb) -> String {
    db.upsert_workspace(WorkspaceUpsert::new(TEAM).owner("olga"))
        .unwrap();
    db.set_members(TEAM, &["bob".to_owned()]).unwrap();
    session_in(db, "nudged", TEAM, Some(true))
}

pub fn reminders(first_s: u64, every_s: u64, max: u32) -> RemindersRequest {
    RemindersRequest {
        first_after: Duration::from_secs(first_s),
        every: Some(Duration::from_secs(every_s)),
        max: Some(max),
    }
}

fn escalate(after_s: u64, to: &[&str]) -> EscalateRequest {
    EscalateRequest {
        after: Duration::from_secs(after_s),
        to: to.iter().map(|id| (*id).to_owned()).collect(),
    }
}

/// Asks a one-question bundle with `reminders`, `escalate` and a deadline
/// `deadline_s` after the ask (none with `None`).
pub fn ask_nudged(
    db: &clarion::Clarion,
    session: &str,
    remind: Option<RemindersRequest>,
    escalation: Option<EscalateRequest>,
    deadline_s: Option<u64>,
) -> String {
    let mut request = ask_request(session, 1);
    request.reminders = remind;
    request.escalate = escalation;
    request.expires = deadline_s.map(|s| Expiry::In(Duration::from_secs(s)));
    db.ask(&request).unwrap().pending_id
}

/// Moves the test clock to `offset` after the epoch (the ask's time).
pub fn at(db: &TestDb, offset: i64) {
    use clarion::Clock;
    let now = db.clock.now().as_micros() - EPOCH.as_micros();
    assert!(offset >= now, "the clock only moves forward");
    db.clock.advance_micros(offset - now);
}

pub fn nudged(db: &TestDb) -> u64 {
    db.expire_due(None).unwrap().nudged
}

/// The step events of `pending_id` as `(type, data)`, in log order.
fn steps(db: &TestDb, pending_id: &str) -> Vec<(String, Value)> {
    log(db)
        .into_iter()
        .filter(|event| event.pending_id == pending_id)
        .filter(|event| {
            event.event_type.starts_with("bundle.reminded")
                || event.event_type == "bundle.escalated"
        })
        .map(|event| (event.event_type, event.data))
        .collect()
}

fn log(db: &TestDb) -> Vec<clarion::Event> {
    wait_until_readable(db);
    db.events_after(&Principal::System, "", Some(1000))
        .unwrap()
        .events
}

pub fn stamp(offset: i64) -> String {
    Timestamp::from_micros(EPOCH.as_micros() + offset).to_rfc3339()
}

/// The `nudges` object of `pending_id` as the system's `get_bundle` shows it.
fn nudges_of(db: &TestDb, pending_id: &str) -> Value {
    let detail = db.get_bundle(&Principal::System, pending_id).unwrap();
    envelope::bundle_detail(&detail).body["nudges"].clone()
}

/// NUDGE-2: reminders at `first`, `first + every`, `first + 2 × every`,
/// each taken once at its time (not a microsecond before), then none;
/// `next_at` names the next one, `""` after the last.
fn nudge_2_three_reminders_at_their_times_then_none(db: &TestDb) {
    let id = ask_nudged(db, &team(db), Some(reminders(60, 120, 3)), None, None);
    for (n, time) in [(1, MINUTE), (2, 3 * MINUTE), (3, 5 * MINUTE)] {
        at(db, time - 1);
        assert_eq!(nudged(db), 0, "reminder {n} not before its time");
        at(db, time);
        assert_eq!(nudged(db), 1, "reminder {n} at its time");
        assert_eq!(nudged(db), 0, "reminder {n} once");
    }
    at(db, 60 * MINUTE);
    assert_eq!(nudged(db), 0, "no fourth reminder");
    let data: Vec<Value> = steps(db, &id).into_iter().map(|(_, data)| data).collect();
    assert_eq!(
        data,
        vec![
            json!({"n": 1, "next_at": stamp(3 * MINUTE)}),
            json!({"n": 2, "next_at": stamp(5 * MINUTE)}),
            json!({"n": 3, "next_at": ""}),
        ]
    );
    assert_eq!(
        nudges_of(db, &id),
        json!({"reminders_sent": 3, "next_reminder_at": "", "escalated_at": ""})
    );
}

/// NUDGE-2: a sweep that comes late takes only the latest due reminder;
/// the missed ones count as sent.
fn nudge_2_a_sweep_takes_only_the_latest_due_reminder(db: &TestDb) {
    let id = ask_nudged(db, &team(db), Some(reminders(60, 60, 5)), None, None);
    at(db, 3 * MINUTE + 30 * SECOND);
    assert_eq!(nudged(db), 1);
    assert_eq!(
        steps(db, &id),
        vec![(
            "bundle.reminded".to_owned(),
            json!({"n": 3, "next_at": stamp(4 * MINUTE)})
        )]
    );
    assert_eq!(nudges_of(db, &id)["reminders_sent"], 3);
}

/// NUDGE-2, NUDGE-4, PPL-6: no reminder falls at or after the deadline,
/// an escalation at the deadline grants nothing, a sweep after it settles
/// the bundle and takes no step, and the deadline, default and quorum
/// never move.
fn nudge_2_nothing_steps_at_or_after_the_deadline(db: &TestDb) {
    let session = team(db);
    let id = ask_nudged(
        db,
        &session,
        Some(reminders(60, 60, 5)),
        Some(escalate(120, &["gina"])),
        Some(120),
    );
    let asked = db.get_bundle(&Principal::System, &id).unwrap();
    at(db, 2 * MINUTE - 1);
    assert_eq!(nudged(db), 1, "the first reminder");
    assert_eq!(
        steps(db, &id),
        vec![("bundle.reminded".to_owned(), json!({"n": 1, "next_at": ""}))],
        "the second would fall at the deadline"
    );
    at(db, 2 * MINUTE);
    let swept = db.expire_due(None).unwrap();
    assert_eq!((swept.settled, swept.nudged), (1, 0));
    assert_eq!(steps(db, &id).len(), 1, "nothing at the deadline");
    assert!(
        db.get_bundle(&Principal::user("gina"), &id).is_err(),
        "no grant at the deadline"
    );
    let settled = db.get_bundle(&Principal::System, &id).unwrap();
    assert_eq!(settled.bundle.expires_at, asked.bundle.expires_at);
    assert_eq!(settled.bundle.on_expire, asked.bundle.on_expire);
    // A bundle due but not yet settled takes no step either.
    let late = ask_nudged(db, &session, Some(reminders(60, 60, 5)), None, Some(90));
    at(db, 4 * MINUTE);
    let swept = db.expire_due(None).unwrap();
    assert_eq!((swept.settled, swept.nudged), (1, 0));
    assert!(steps(db, &late).is_empty());
}

/// NUDGE-2: an answered bundle takes no step, and leaves the sweep's
/// index at its next sweep.
fn nudge_2_no_step_for_a_settled_bundle(db: &TestDb) {
    let id = ask_nudged(
        db,
        &team(db),
        Some(reminders(60, 60, 3)),
        Some(escalate(90, &["gina"])),
        None,
    );
    db.resolve_bundle(&Principal::user("olga"), &id, &approve(1, ""))
        .unwrap();
    at(db, 10 * MINUTE);
    assert_eq!(nudged(db), 0);
    assert!(steps(db, &id).is_empty());
    let next: Option<i64> = db.raw(|conn| {
        use clarion::test_hooks::schema::bundles;
        use diesel::prelude::*;
        bundles::table
            .filter(bundles::pending_id.eq(&id))
            .select(bundles::next_step_at)
            .first(conn)
            .unwrap()
    });
    assert_eq!(next, None, "off the index");
}

/// NUDGE-2: two handles sweeping the same database take each step once.
fn nudge_2_two_sweeping_handles_take_each_step_once(db: &TestDb) {
    let session = team(db);
    let ids: Vec<String> = (0..8)
        .map(|_| {
            ask_nudged(
                db,
                &session,
                Some(reminders(60, 60, 2)),
                Some(escalate(60, &["gina"])),
                None,
            )
        })
        .collect();
    let sweepers: Vec<clarion::Clarion> = (0..2)
        .map(|_| {
            db.builder()
                .sweep_deadlines(Duration::from_millis(10))
                .open()
                .unwrap()
        })
        .collect();
    at(db, MINUTE);
    eventually(Duration::from_secs(30), "every first step taken", || {
        ids.iter().all(|id| steps(db, id).len() == 2)
    });
    at(db, 2 * MINUTE);
    eventually(
        Duration::from_secs(30),
        "every second reminder taken",
        || ids.iter().all(|id| steps(db, id).len() == 3),
    );
    for sweeper in sweepers {
        sweeper.close();
    }
    for id in &ids {
        let kinds: Vec<String> = steps(db, id).into_iter().map(|(kind, _)| kind).collect();
        assert_eq!(
            kinds,
            ["bundle.reminded", "bundle.escalated", "bundle.reminded"],
            "{id}"
        );
    }
}

/// NUDGE-2: two `clarion expire-due` processes started together (they
/// keep the system clock, days after the test clock: every step is due)
/// take each bundle's steps once between them.
fn nudge_2_sweepers_in_two_processes_take_each_step_once(db: &TestDb) {
    const BUNDLES: usize = 60;
    let session = team(db);
    let ids: Vec<String> = (0..BUNDLES)
        .map(|_| {
            ask_nudged(
                db,
                &session,
                Some(reminders(60, 60, 3)),
                Some(escalate(60, &["gina"])),
                None,
            )
        })
        .collect();
    let nudged: u64 = two_sweep_processes(db)
        .iter()
        .map(|body| body["nudged"].as_u64().unwrap())
        .sum();
    assert_eq!(
        nudged,
        2 * BUNDLES as u64,
        "a reminder and an escalation each"
    );
    for id in &ids {
        let taken = steps(db, id);
        // In their times' order: the escalation (1 min), then the third
        // reminder (3 min), the only one taken.
        assert_eq!(
            taken,
            vec![
                ("bundle.escalated".to_owned(), json!({"to": ["gina"]})),
                ("bundle.reminded".to_owned(), json!({"n": 3, "next_at": ""})),
            ],
            "{id}"
        );
    }
}

/// NUDGE-2: a step due while the bundle is answered, released together by
/// a barrier: either the answer wins first and no step follows, or the
/// step's event precedes the resolution — never a step after it.
fn nudge_2_a_step_racing_an_answer_precedes_it_or_never_happens(db: &TestDb) {
    let session = team(db);
    for round in 0..6 {
        let id = ask_nudged(db, &session, Some(reminders(60, 60, 1)), None, None);
        at(db, (round + 1) * 2 * MINUTE);
        let barrier = Arc::new(Barrier::new(2));
        let sweeper = db.reopen();
        let answerer = db.reopen();
        std::thread::scope(|scope| {
            let b = barrier.clone();
            scope.spawn(move || {
                b.wait();
                sweeper.expire_due(None).unwrap();
                sweeper.close();
            });
            let b = barrier.clone();
            let id = id.clone();
            scope.spawn(move || {
                b.wait();
                answerer
                    .resolve_bundle(&Principal::user("olga"), &id, &approve(1, ""))
                    .unwrap();
                answerer.close();
            });
        });
        nudged(db);
        let kinds: Vec<String> = log(db)
            .into_iter()
            .filter(|event| event.pending_id == id)
            .map(|event| event.event_type)
            .collect();
        let resolved = kinds.iter().position(|kind| kind == "bundle.resolved");
        let reminded = kinds.iter().position(|kind| kind == "bundle.reminded");
        assert!(resolved.is_some(), "{kinds:?}");
        assert!(
            reminded.is_none_or(|reminded| reminded < resolved.unwrap_or(0)),
            "round {round}: a step after the resolution: {kinds:?}"
        );
    }
}

/// NUDGE-2: a handle that took the first step closes; a new one resumes at
/// the second, never repeating the first.
fn nudge_2_a_restart_between_steps_resumes_without_repeating(db: &TestDb) {
    let id = ask_nudged(db, &team(db), Some(reminders(60, 60, 3)), None, None);
    let first = db.reopen();
    at(db, MINUTE);
    assert_eq!(first.expire_due(None).unwrap().nudged, 1);
    first.close();
    let second = db.reopen();
    assert_eq!(second.expire_due(None).unwrap().nudged, 0, "not again");
    at(db, 2 * MINUTE);
    assert_eq!(second.expire_due(None).unwrap().nudged, 1);
    second.close();
    let ns: Vec<Value> = steps(db, &id)
        .into_iter()
        .map(|(_, data)| data["n"].clone())
        .collect();
    assert_eq!(ns, vec![json!(1), json!(2)]);
}

/// NUDGE-2: a sweeping handle takes a step with nobody calling, and wakes
/// for it (the step is its only work).
fn nudge_2_the_sweeper_takes_a_step_by_itself(db: &TestDb) {
    let sweeping = db
        .builder()
        .sweep_deadlines(Duration::from_millis(20))
        .open()
        .unwrap();
    let id = ask_nudged(&sweeping, &team(db), Some(reminders(60, 60, 1)), None, None);
    at(db, MINUTE);
    eventually(Duration::from_secs(30), "the sweeper reminds", || {
        steps(db, &id).len() == 1
    });
    sweeping.close();
}

/// NUDGE-2: `clarion_open`'s `sweep_ms` runs a sweeper on a C ABI handle
/// (it keeps the system clock, days after the test clock: the reminder
/// asked through the test handle is due for it).
fn nudge_2_a_c_abi_handle_opened_with_sweep_ms_takes_steps(db: &TestDb) {
    use clarion::ffi::{clarion_close, clarion_open, Handle};
    let id = ask_nudged(db, &team(db), Some(reminders(60, 60, 1)), None, None);
    let config = json!({"database_url": db.url, "sweep_ms": 20}).to_string();
    let config = std::ffi::CString::new(config).unwrap();
    let handle: *mut Handle = unsafe { clarion_open(config.as_ptr()) };
    assert!(!handle.is_null());
    eventually(
        Duration::from_secs(30),
        "the C ABI handle's sweeper reminds",
        || steps(db, &id).len() == 1,
    );
    clarion_close(handle);
}

/// PPL-6, NUDGE-3: an escalated user sees nothing of the bundle until
/// `from` — listing, get, answer, the event log — and from that very
/// microsecond sees and answers it; the escalation's step names them.
fn nudge_3_escalated_users_see_the_bundle_from_its_time_on(db: &TestDb) {
    let id = ask_nudged(
        db,
        &team(db),
        None,
        Some(escalate(120, &["gina", "hal"])),
        None,
    );
    let gina = Principal::user("gina");
    at(db, 2 * MINUTE - 1);
    assert_eq!(nudged(db), 0);
    assert!(!listed(db, &gina, &id));
    assert!(db.get_bundle(&gina, &id).is_err());
    wait_until_readable(db);
    let seen = db.events_after(&gina, "", Some(100)).unwrap().events;
    assert!(seen.iter().all(|event| event.pending_id != id), "{seen:?}");
    assert!(db
        .resolve_bundle(&gina, &id, &approve(1, "too early"))
        .is_err());
    at(db, 2 * MINUTE);
    assert!(listed(db, &gina, &id));
    assert_eq!(nudges_of(db, &id)["escalated_at"], json!(stamp(2 * MINUTE)));
    assert_eq!(nudged(db), 1);
    assert_eq!(
        steps(db, &id),
        vec![(
            "bundle.escalated".to_owned(),
            json!({"to": ["gina", "hal"]})
        )]
    );
    wait_until_readable(db);
    let seen: Vec<String> = db
        .events_after(&gina, "", Some(100))
        .unwrap()
        .events
        .into_iter()
        .filter(|event| event.pending_id == id)
        .map(|event| event.event_type)
        .collect();
    assert_eq!(seen, ["bundle.asked", "bundle.escalated"]);
    let answered = db
        .resolve_bundle(&gina, &id, &approve(1, "from the escalation"))
        .unwrap();
    assert!(answered.claimed);
}

/// NUDGE-3: a quorum without `eligible` counts an escalated user's vote
/// from `from` on.
fn nudge_3_an_escalated_user_votes_on_a_quorum_without_eligible(db: &TestDb) {
    let mut request = ask_request(&team(db), 1);
    request.quorum = Some(QuorumRequest {
        approvals: 2,
        ..QuorumRequest::default()
    });
    request.escalate = Some(escalate(60, &["gina"]));
    let id = db.ask(&request).unwrap().pending_id;
    let first = db
        .resolve_bundle(&Principal::user("bob"), &id, &approve(1, "ship"))
        .unwrap();
    assert!(!first.claimed);
    at(db, MINUTE);
    let second = db
        .resolve_bundle(&Principal::user("gina"), &id, &approve(1, "ship"))
        .unwrap();
    assert!(second.claimed);
    let response = envelope::response(&second.response);
    assert_eq!(response["voters"], json!(["bob", "gina"]));
}

/// NUDGE-1: each refusal names its field (WIRE-5), before anything is
/// written.
fn nudge_1_refusals_name_their_field_before_any_write(db: &TestDb) {
    let session = team(db);
    let ask = |extra: Value| {
        let mut args = json!({"session_id": session, "questions": [
            {"title": "T", "prompt": "Go?", "options": [{"label": "Yes", "description": "y"}, {"label": "No", "description": "n"}]}
        ]});
        for (key, value) in extra.as_object().unwrap() {
            args[key] = value.clone();
        }
        refused(db, "ask", SYSTEM, args)
    };
    for (extra, field) in [
        (
            json!({"reminders": {"first_after_ms": 59_999}}),
            "reminders.first_after_ms",
        ),
        (
            json!({"reminders": {"first_after_ms": 60_000, "every_ms": 2_592_000_001_u64}}),
            "reminders.every_ms",
        ),
        (
            json!({"reminders": {"first_after_ms": 60_000, "max": 21}}),
            "reminders.max",
        ),
        (
            json!({"reminders": {"first_after_ms": 60_000, "max": 0}}),
            "reminders.max",
        ),
        (
            json!({"escalate": {"after_ms": 60_000, "to": ["a", "b", "a"]}}),
            "escalate.to[2]",
        ),
        (
            json!({"escalate": {"after_ms": 60_000, "to": []}}),
            "escalate.to",
        ),
        (
            json!({"escalate": {"after_ms": 1_000, "to": ["a"]}}),
            "escalate.after_ms",
        ),
    ] {
        let (status, body) = ask(extra.clone());
        assert_eq!(status, 400, "{extra}: {body}");
        assert!(body.contains(field), "{extra}: {body}");
    }
    let (status, body) = ask(json!({"reminders": {"first_after_ms": 60_000, "often": true}}));
    assert_eq!(status, 400, "{body}");
    assert!(log(db)
        .iter()
        .all(|event| event.event_type != "bundle.asked"));
    let (status, body) = ask(
        json!({"reminders": {"first_after_ms": 60_000}, "escalate": {"after_ms": 60_000, "to": ["gina"]}}),
    );
    assert_eq!(status, 200, "{body}");
}

/// NUDGE-5: `nudges` follows `quorum` in every LIST-6 element — `null`
/// without nudges — in listings, `get_bundle` and the frozen
/// `bundle.asked`.
fn nudge_5_nudges_in_listings_gets_and_the_asked_event(db: &TestDb) {
    let session = team(db);
    let plain = ask(db, &session, 1);
    let id = ask_nudged(
        db,
        &session,
        Some(reminders(60, 120, 2)),
        Some(escalate(90, &["gina"])),
        None,
    );
    let detail = envelope::bundle_detail(&db.get_bundle(&Principal::System, &plain).unwrap()).body;
    let keys: Vec<&String> = detail.as_object().unwrap().keys().collect();
    let quorum = keys.iter().position(|key| *key == "quorum").unwrap();
    assert_eq!(keys[quorum + 1], "nudges");
    assert!(detail["nudges"].is_null());
    let fresh = json!({"reminders_sent": 0, "next_reminder_at": stamp(MINUTE), "escalated_at": ""});
    assert_eq!(nudges_of(db, &id), fresh);
    let asked = log(db)
        .into_iter()
        .find(|event| event.pending_id == id && event.event_type == "bundle.asked")
        .unwrap();
    assert_eq!(asked.data["nudges"], fresh);
    at(db, 2 * MINUTE);
    nudged(db);
    let page = db
        .list_pending(&Principal::user("olga"), &clarion::ListRequest::default())
        .unwrap();
    let listed = envelope::list_page(&page).body;
    let shown = listed["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|bundle| bundle["pending_id"] == id)
        .unwrap()
        .clone();
    assert_eq!(
        shown["nudges"],
        json!({"reminders_sent": 1, "next_reminder_at": stamp(3 * MINUTE), "escalated_at": stamp(90 * SECOND)})
    );
}

/// HOOK-1, NUDGE-5: webhooks subscribe to the two step types.
fn nudge_5_the_step_types_are_webhook_event_types(db: &TestDb) {
    let request = json!({"op": "webhook_add", "principal": {"kind": "system"},
        "args": {"url": "https://hooks.example.com/nudges", "events": ["bundle.reminded", "bundle.escalated"]}});
    let added = db.call(&request.to_string());
    assert_eq!(added.status, 200, "{}", added.body_text());
}
