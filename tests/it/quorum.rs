//! QUO-1..7: decisions that need several people, decided by the one
//! claim, on both backends: identical approvals add up and different ones
//! do not, one rejection vetoes unless more are asked for, the requester
//! and ineligible users are refused, a vote repeats but never changes, a
//! removed member's vote stops counting (and counts again when re-added),
//! deadlines, cancel, events, the ledger, `system`'s override, and agents
//! who never see any of it.

use clarion::test_hooks::schema::bundles;
use clarion::{
    envelope, AnswerInput, BundleStatus, DecidedBy, Error, Expiry, Grant, OnExpire, Principal,
    QuorumRequest, ResolveRequest, Resolved, WorkspaceUpsert,
};
use diesel::prelude::*;
use serde_json::{json, Value};

use crate::events::wait_until_readable;
use crate::support::*;

const TEAM: &str = "w-four-eyes";

/// `w-four-eyes` owned by olga, with alice, bob, carol and dave as
/// members; returns a running session on a task there.
pub fn team(db: &clarion::Clarion) -> String {
    db.upsert_workspace(WorkspaceUpsert::new(TEAM).owner("olga"))
        .unwrap();
    let members: Vec<String> = ["alice", "bob", "carol", "dave"]
        .iter()
        .map(|id| (*id).to_owned())
        .collect();
    db.set_members(TEAM, &members).unwrap();
    session_in(db, "four-eyes", TEAM, Some(true))
}

/// A one-question bundle asked with `quorum`.
pub fn ask_quorum(db: &clarion::Clarion, session: &str, quorum: QuorumRequest) -> String {
    let mut request = ask_request(session, 1);
    request.quorum = Some(quorum);
    db.ask(&request).unwrap().pending_id
}

fn approvals(n: u32) -> QuorumRequest {
    QuorumRequest {
        approvals: n,
        ..QuorumRequest::default()
    }
}

fn user(id: &str) -> Principal {
    Principal::user(id)
}

/// An approval choosing option `option` (1 or 2) with `note`.
pub fn approve(option: usize, note: &str) -> ResolveRequest {
    ResolveRequest {
        answers: vec![AnswerInput {
            question_id: "q1".to_owned(),
            selected_options: vec![format!("q1_opt{option}")],
            custom_text: note.to_owned(),
        }],
        ..ResolveRequest::default()
    }
}

fn reject(reason: &str) -> ResolveRequest {
    ResolveRequest {
        rejected: true,
        reject_reason: reason.to_owned(),
        ..ResolveRequest::default()
    }
}

/// The resolve envelope's body, as raw JSON.
fn body(resolved: &Resolved) -> Value {
    envelope::resolved(resolved).body
}

/// A vote recorded, the quorum not met (QUO-3 step 6).
fn assert_recorded(resolved: &Resolved, votes: usize) {
    let body = body(resolved);
    assert_eq!(body["success"], true);
    assert_eq!(body["claimed"], false);
    assert_eq!(body["status"], "pending");
    assert!(body["response"].is_null(), "{body}");
    assert_eq!(body["quorum"]["votes"].as_array().unwrap().len(), votes);
}

fn votes_of(db: &TestDb, id: &str) -> Vec<Value> {
    let detail = db.get_bundle(&Principal::System, id).unwrap();
    envelope::bundle_detail(&detail).body["quorum"]["votes"]
        .as_array()
        .unwrap()
        .clone()
}

fn outcomes(db: &TestDb, id: &str) -> Vec<String> {
    db.flush_ledger();
    db.attempts(&Principal::System, id)
        .unwrap()
        .into_iter()
        .map(|attempt| attempt.outcome)
        .collect()
}

dual_backend!(
    quo_4_two_identical_approvals_decide,
    quo_4_approvals_with_different_notes_do_not_add_up,
    quo_4_one_rejection_vetoes,
    quo_4_two_rejections_when_asked_for,
    quo_3_the_requester_and_ineligible_users_are_refused,
    quo_3_the_same_vote_repeats_a_changed_one_is_409,
    quo_4_a_removed_member_no_longer_counts_until_re_added,
    quo_6_a_deadline_settles_an_unmet_quorum_and_keeps_its_votes,
    quo_7_events_and_ledger_entries_per_vote,
    quo_2_system_overrides_at_once,
    quo_2_agents_see_nothing_of_a_quorum_bundle,
    quo_6_cancel_is_for_system_the_requester_and_voters,
    quo_1_asking_refuses_an_impossible_quorum_before_writing,
    quo_3b_pending_for_everyone_and_may_vote_for_voters_only,
    quo_2_unreadable_quorum_columns_refuse_people_not_system,
    quo_5_the_quorum_object_in_listings_and_history,
    quo_7_bundle_voted_is_a_webhook_event_type,
    dm_1_event_data_frozen_before_quorum_reads_in_the_current_shape,
    quo_6_votes_go_with_their_bundle_and_the_ledger_stays,
);

/// QUO-6: deleting a bundle (here with its task) deletes its votes and
/// its `eligible` rows; the ledger keeps its entries.
fn quo_6_votes_go_with_their_bundle_and_the_ledger_stays(db: &TestDb) {
    use clarion::test_hooks::schema::{quorum_eligible, votes};
    let quorum = QuorumRequest {
        eligible: vec!["alice".into(), "bob".into()],
        ..approvals(2)
    };
    let id = ask_quorum(db, &team(db), quorum);
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    let rows = |db: &TestDb| -> (i64, i64) {
        db.raw(|conn| {
            (
                votes::table.count().get_result(conn).unwrap(),
                quorum_eligible::table.count().get_result(conn).unwrap(),
            )
        })
    };
    assert_eq!(rows(db), (1, 2));
    db.delete_task("t-four-eyes").unwrap();
    assert_eq!(rows(db), (0, 0));
    assert_eq!(outcomes(db, &id), vec!["voted"]);
}

/// DM-1 (EVT-1 as Part III amends it): event data frozen before `quorum`,
/// `nudges` (NUDGE-5) and `voters` existed reads with them, empty, in
/// their place.
fn dm_1_event_data_frozen_before_quorum_reads_in_the_current_shape(db: &TestDb) {
    let id = ask(db, &team(db), 1);
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    wait_until_readable(db);
    let read = || -> Vec<String> {
        let page = db.events_after(&Principal::System, "", None).unwrap();
        page.events
            .iter()
            .filter(|event| event.pending_id == id)
            .map(|event| envelope::event(event)["data"].to_string())
            .collect()
    };
    let current = read();
    assert!(current[0].contains(r#""on_expire":"","quorum":null,"nudges":null,"context""#));
    assert!(current[1].contains(r#""decided_by":"user","voters":[]}"#));
    let old_shape = r#"UPDATE events SET data = REPLACE(REPLACE(REPLACE(data, '"quorum":null,', ''), '"nudges":null,', ''), ',"voters":[]', '')"#;
    db.raw(|conn| diesel::sql_query(old_shape).execute(conn).unwrap());
    let stored: Vec<String> = db.raw(|conn| {
        clarion::test_hooks::schema::events::table
            .select(clarion::test_hooks::schema::events::data)
            .load(conn)
            .unwrap()
    });
    assert!(stored.iter().all(|data| !data.contains("quorum")
        && !data.contains("nudges")
        && !data.contains("voters")));
    assert_eq!(read(), current);
}

/// QUO-7: `bundle.voted` is a type an endpoint may subscribe to (HOOK-1).
fn quo_7_bundle_voted_is_a_webhook_event_type(db: &TestDb) {
    let add = |events: Value| {
        let request = json!({"op": "webhook_add", "principal": {"kind": "system"},
            "args": {"url": "https://hooks.example.com/votes", "events": events}});
        db.call(&request.to_string())
    };
    let added = add(json!(["bundle.voted"]));
    assert_eq!(added.status, 200, "{}", added.body_text());
    let list = json!({"op": "webhook_list", "principal": {"kind": "system"}, "args": {}});
    let listed = db.call(&list.to_string());
    assert_eq!(
        listed.body["webhooks"][0]["events"],
        json!(["bundle.voted"])
    );
    assert_eq!(add(json!(["bundle.votes"])).status, 400);
}

/// QUO-4: two approvals with the same answers and text make the claim:
/// resolver `quorum`, the voters frozen in vote order.
fn quo_4_two_identical_approvals_decide(db: &TestDb) {
    let id = ask_quorum(db, &team(db), approvals(2));
    let first = db
        .resolve_bundle(&user("alice"), &id, &approve(1, "staging"))
        .unwrap();
    assert_recorded(&first, 1);
    let second = db
        .resolve_bundle(&user("bob"), &id, &approve(1, "staging"))
        .unwrap();
    assert!(second.claimed);
    let body = body(&second);
    assert_eq!(body["status"], "answered");
    assert_eq!(body["response"]["decided_by"], "quorum");
    assert_eq!(body["response"]["voters"], json!(["alice", "bob"]));
    assert_eq!(body["response"]["answers"][0]["custom_text"], "staging");
    let counts: Vec<&Value> = body["quorum"]["votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|vote| &vote["counts"])
        .collect();
    assert_eq!(counts, vec![&json!(true), &json!(true)]);
    // WIRE-6: a voter decided it; someone else did not.
    assert!(
        db.get_bundle(&user("alice"), &id)
            .unwrap()
            .decided_by_caller
    );
    assert!(
        !db.get_bundle(&user("carol"), &id)
            .unwrap()
            .decided_by_caller
    );
    // REPLAY-1: a later voter replays the stored resolution, voters and all.
    let late = db
        .resolve_bundle(&user("carol"), &id, &approve(2, ""))
        .unwrap();
    assert!(!late.claimed);
    assert_eq!(envelope::response(&late.response), body["response"]);
}

/// QUO-4: approvals count per identical digest, the free text included.
fn quo_4_approvals_with_different_notes_do_not_add_up(db: &TestDb) {
    let id = ask_quorum(db, &team(db), approvals(2));
    assert_recorded(
        &db.resolve_bundle(&user("alice"), &id, &approve(1, "a"))
            .unwrap(),
        1,
    );
    assert_recorded(
        &db.resolve_bundle(&user("bob"), &id, &approve(1, "b"))
            .unwrap(),
        2,
    );
    assert_recorded(
        &db.resolve_bundle(&user("dave"), &id, &approve(2, "a"))
            .unwrap(),
        3,
    );
    let decided = db
        .resolve_bundle(&user("carol"), &id, &approve(1, "a"))
        .unwrap();
    assert!(decided.claimed);
    assert_eq!(decided.response.voters, vec!["alice", "carol"]);
    // Once resolved, a vote counts only if it is among the voters.
    let counts: Vec<bool> = votes_of(db, &id)
        .iter()
        .map(|vote| vote["counts"] == true)
        .collect();
    assert_eq!(counts, vec![true, false, false, true]);
}

/// QUO-4: by default one rejection decides, with its reason.
fn quo_4_one_rejection_vetoes(db: &TestDb) {
    let id = ask_quorum(db, &team(db), approvals(2));
    assert_recorded(
        &db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
            .unwrap(),
        1,
    );
    let veto = db
        .resolve_bundle(&user("bob"), &id, &reject("  not on a Friday "))
        .unwrap();
    assert!(veto.claimed);
    assert_eq!(veto.status, BundleStatus::Rejected);
    assert_eq!(veto.response.reject_reason, "not on a Friday");
    assert_eq!(veto.response.voters, vec!["bob"]);
}

/// QUO-4: `rejections: 2` needs two rejections, whatever their reasons;
/// the deciding vote's reason is the resolution's.
fn quo_4_two_rejections_when_asked_for(db: &TestDb) {
    let quorum = QuorumRequest {
        rejections: Some(2),
        ..approvals(3)
    };
    let id = ask_quorum(db, &team(db), quorum);
    assert_recorded(
        &db.resolve_bundle(&user("bob"), &id, &reject("risky"))
            .unwrap(),
        1,
    );
    let second = db
        .resolve_bundle(&user("carol"), &id, &reject("no backup"))
        .unwrap();
    assert!(second.claimed);
    assert_eq!(second.status, BundleStatus::Rejected);
    assert_eq!(second.response.reject_reason, "no backup");
    assert_eq!(second.response.voters, vec!["bob", "carol"]);
}

/// QUO-3 step 4: the requester never votes; with an `eligible` list, a
/// member off it is refused too — `403 not_eligible`, byte for byte,
/// ledger `not_eligible`, nothing recorded.
fn quo_3_the_requester_and_ineligible_users_are_refused(db: &TestDb) {
    let quorum = QuorumRequest {
        eligible: vec!["alice".into(), "bob".into(), "olga".into()],
        requested_by: "olga".into(),
        ..approvals(2)
    };
    let id = ask_quorum(db, &team(db), quorum);
    for voter in ["olga", "carol"] {
        let refused = db
            .resolve_bundle(&user(voter), &id, &approve(1, ""))
            .unwrap_err();
        assert!(
            matches!(refused, Error::NotEligible),
            "{voter}: {refused:?}"
        );
        let reply = envelope::error(&refused);
        assert_eq!(reply.status, 403);
        assert_eq!(
            reply.body_text(),
            r#"{"error":"not an eligible voter","code":"not_eligible"}"#
        );
    }
    assert!(votes_of(db, &id).is_empty());
    assert_eq!(outcomes(db, &id), vec!["not_eligible", "not_eligible"]);
}

/// QUO-3 step 5/6: the same vote again records nothing new; another one
/// is `409 already_voted`.
fn quo_3_the_same_vote_repeats_a_changed_one_is_409(db: &TestDb) {
    let id = ask_quorum(db, &team(db), approvals(2));
    assert_recorded(
        &db.resolve_bundle(&user("alice"), &id, &approve(1, "x"))
            .unwrap(),
        1,
    );
    assert_recorded(
        &db.resolve_bundle(&user("alice"), &id, &approve(1, "x"))
            .unwrap(),
        1,
    );
    let changed = db
        .resolve_bundle(&user("alice"), &id, &approve(2, "x"))
        .unwrap_err();
    assert!(matches!(changed, Error::AlreadyVoted), "{changed:?}");
    let reply = envelope::error(&changed);
    assert_eq!(reply.status, 409);
    assert_eq!(
        reply.body_text(),
        r#"{"error":"already voted","code":"already_voted"}"#
    );
    assert_eq!(votes_of(db, &id).len(), 1);
    assert_eq!(outcomes(db, &id), vec!["voted", "voted", "already_voted"]);
}

/// QUO-4: a vote counts while its voter still sees the bundle: a member
/// removed between voting and the deciding vote no longer counts (the
/// bundle stays pending); re-added, the threshold is met without a new
/// vote and the next submission — a repeat — claims it.
fn quo_4_a_removed_member_no_longer_counts_until_re_added(db: &TestDb) {
    let id = ask_quorum(db, &team(db), approvals(2));
    assert_recorded(
        &db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
            .unwrap(),
        1,
    );
    let without_alice: Vec<String> = ["bob", "carol"].iter().map(|s| (*s).into()).collect();
    db.set_members(TEAM, &without_alice).unwrap();
    let pending = db
        .resolve_bundle(&user("bob"), &id, &approve(1, ""))
        .unwrap();
    assert_recorded(&pending, 2);
    assert_eq!(body(&pending)["quorum"]["votes"][0]["counts"], false);
    assert_eq!(body(&pending)["quorum"]["votes"][1]["counts"], true);
    let everyone: Vec<String> = ["alice", "bob", "carol"]
        .iter()
        .map(|s| (*s).into())
        .collect();
    db.set_members(TEAM, &everyone).unwrap();
    let repeat = db
        .resolve_bundle(&user("bob"), &id, &approve(1, ""))
        .unwrap();
    assert!(repeat.claimed);
    assert_eq!(repeat.response.voters, vec!["alice", "bob"]);
}

/// QUO-6: an unmet quorum settles by its `on_expire`; its votes stay and
/// `get_bundle` shows them, none counting any more.
fn quo_6_a_deadline_settles_an_unmet_quorum_and_keeps_its_votes(db: &TestDb) {
    let session = team(db);
    let mut request = ask_request(&session, 1);
    request.quorum = Some(approvals(2));
    request.expires = Some(Expiry::In(std::time::Duration::from_secs(60)));
    request.on_expire = OnExpire::Reject {
        reject_reason: "nobody agreed in time".into(),
    };
    let id = db.ask(&request).unwrap().pending_id;
    assert_recorded(
        &db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
            .unwrap(),
        1,
    );
    db.clock.advance_micros(60_000_000);
    let late = db
        .resolve_bundle(&user("bob"), &id, &approve(1, ""))
        .unwrap();
    assert!(!late.claimed);
    assert_eq!(late.status, BundleStatus::Rejected);
    assert_eq!(late.response.decided_by, DecidedBy::Deadline);
    let votes = votes_of(db, &id);
    assert_eq!(votes.len(), 1, "bob's late vote was not recorded");
    assert_eq!(votes[0]["user_id"], "alice");
    assert_eq!(votes[0]["counts"], false);
    // An `answer` default would decide for the people: refused at ask.
    request.on_expire = OnExpire::Answer(vec![AnswerInput {
        question_id: "q1".into(),
        selected_options: vec!["q1_opt1".into()],
        custom_text: String::new(),
    }]);
    let refused = db.ask(&request).unwrap_err();
    assert!(matches!(&refused, Error::Validation(v) if v.field == "on_expire.action"));
}

/// QUO-7: one `bundle.voted` event per new vote (`{user_id, rejected,
/// votes}`), then the winner's `bundle.resolved`; ledger `voted` then
/// `won`.
fn quo_7_events_and_ledger_entries_per_vote(db: &TestDb) {
    let id = ask_quorum(db, &team(db), approvals(2));
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    db.resolve_bundle(&user("bob"), &id, &approve(1, ""))
        .unwrap();
    wait_until_readable(db);
    let page = db.events_after(&Principal::System, "", None).unwrap();
    let events: Vec<Value> = page
        .events
        .iter()
        .filter(|event| event.pending_id == id)
        .map(envelope::event)
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        vec![
            "bundle.asked",
            "bundle.voted",
            "bundle.voted",
            "bundle.resolved"
        ]
    );
    assert_eq!(
        events[1]["data"],
        json!({"user_id": "alice", "rejected": false, "votes": 1})
    );
    assert_eq!(
        events[2]["data"],
        json!({"user_id": "bob", "rejected": false, "votes": 2})
    );
    assert_eq!(
        events[3]["data"]["response"]["voters"],
        json!(["alice", "bob"])
    );
    // The asked event froze the policy with no votes (QUO-5).
    assert_eq!(events[0]["data"]["quorum"]["approvals"], 2);
    assert_eq!(events[0]["data"]["quorum"]["votes"], json!([]));
    assert_eq!(outcomes(db, &id), vec!["voted", "voted", "won"]);
}

/// QUO-2: `system` resolving a quorum bundle claims at once.
fn quo_2_system_overrides_at_once(db: &TestDb) {
    let id = ask_quorum(db, &team(db), approvals(3));
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    let forced = db
        .resolve_bundle(&Principal::System, &id, &approve(2, "ops"))
        .unwrap();
    assert!(forced.claimed);
    assert_eq!(forced.response.decided_by, DecidedBy::System);
    assert!(forced.response.voters.is_empty());
    assert_eq!(
        body(&forced)["quorum"]["votes"].as_array().unwrap().len(),
        1
    );
}

/// QUO-2: agents never see a quorum bundle, its events or its count —
/// even the agent of the workspace's owner.
fn quo_2_agents_see_nothing_of_a_quorum_bundle(db: &TestDb) {
    let session = team(db);
    let id = ask_quorum(db, &session, approvals(2));
    let plain = ask(db, &session, 1);
    let agent = Principal::agent("olga", "helper", Grant::ALL);
    let listed: Vec<String> = db
        .list_pending(&agent, &Default::default())
        .unwrap()
        .bundles
        .into_iter()
        .map(|b| b.pending_id)
        .collect();
    assert_eq!(listed, vec![plain.clone()]);
    assert!(matches!(
        db.get_bundle(&agent, &id),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        db.resolve_bundle(&agent, &id, &approve(1, "")),
        Err(Error::NotFound(_))
    ));
    assert_eq!(db.summary(&agent).unwrap().pending_bundles, 1);
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    wait_until_readable(db);
    let page = db.events_after(&agent, "", None).unwrap();
    assert!(page.events.iter().all(|event| event.pending_id != id));
    assert!(page.events.iter().any(|event| event.pending_id == plain));
    // People see it.
    assert!(db.get_bundle(&user("carol"), &id).is_ok());
}

/// QUO-6: cancel is for `system`, the requester and those who may vote;
/// another user who sees it gets `403 not_eligible`; votes are kept.
fn quo_6_cancel_is_for_system_the_requester_and_voters(db: &TestDb) {
    let quorum = QuorumRequest {
        eligible: vec!["alice".into(), "bob".into()],
        requested_by: "olga".into(),
        ..approvals(2)
    };
    let session = team(db);
    let id = ask_quorum(db, &session, quorum.clone());
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    let refused = db.cancel_bundle(&user("carol"), &id).unwrap_err();
    assert!(matches!(refused, Error::NotEligible), "{refused:?}");
    let cancelled = db.cancel_bundle(&user("olga"), &id).unwrap();
    assert!(cancelled.claimed);
    assert_eq!(cancelled.status, BundleStatus::Cancelled);
    assert_eq!(body(&cancelled)["quorum"]["votes"][0]["user_id"], "alice");
    let by_voter = ask_quorum(db, &session, quorum);
    assert!(db.cancel_bundle(&user("bob"), &by_voter).unwrap().claimed);
}

/// QUO-1: the policy is checked before anything is written, each refusal
/// naming its field.
fn quo_1_asking_refuses_an_impossible_quorum_before_writing(db: &TestDb) {
    let session = team(db);
    let cases = [
        (approvals(1), "quorum.approvals"),
        (approvals(11), "quorum.approvals"),
        (
            QuorumRequest {
                rejections: Some(3),
                ..approvals(2)
            },
            "quorum.rejections",
        ),
        (
            QuorumRequest {
                eligible: vec!["alice".into(), "alice".into()],
                ..approvals(2)
            },
            "quorum.eligible[1]",
        ),
        (
            QuorumRequest {
                eligible: vec!["alice".into(), "olga".into()],
                requested_by: "olga".into(),
                ..approvals(2)
            },
            "quorum.approvals",
        ),
        (
            QuorumRequest {
                eligible: vec!["alice".into()],
                ..approvals(2)
            },
            "quorum.eligible",
        ),
    ];
    for (quorum, field) in cases {
        let mut request = ask_request(&session, 1);
        request.quorum = Some(quorum);
        match db.ask(&request) {
            Err(Error::Validation(v)) => assert_eq!(v.field, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    let count: i64 = db.raw(|conn| bundles::table.count().get_result(conn).unwrap());
    assert_eq!(count, 0);
    // Without `eligible`, an unreachable number is accepted: membership
    // may grow.
    ask_quorum(db, &session, approvals(10));
}

/// QUO-3b: the bundle stays pending for everyone who sees it; `may_vote`
/// only for a user who may vote and has not.
fn quo_3b_pending_for_everyone_and_may_vote_for_voters_only(db: &TestDb) {
    let quorum = QuorumRequest {
        requested_by: "olga".into(),
        ..approvals(2)
    };
    let id = ask_quorum(db, &team(db), quorum);
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    for (who, may_vote) in [("alice", false), ("bob", true), ("olga", false)] {
        let detail = db.get_bundle(&user(who), &id).unwrap();
        assert_eq!(detail.status, BundleStatus::Pending, "{who}");
        assert_eq!(detail.may_vote, may_vote, "{who}");
        let listed = db.list_pending(&user(who), &Default::default()).unwrap();
        assert!(listed.bundles.iter().any(|b| b.pending_id == id), "{who}");
    }
    assert!(!db.get_bundle(&Principal::System, &id).unwrap().may_vote);
    let raw = envelope::bundle_detail(&db.get_bundle(&user("bob"), &id).unwrap()).body_text();
    let after = raw.find("\"decided_by_caller\"").unwrap();
    assert!(raw[after..].starts_with("\"decided_by_caller\":false,\"may_vote\":true"));
}

/// QUO-2, DM-1: unreadable quorum columns leave the bundle for people
/// only and refuse every person's submission with a `400` naming
/// `quorum`; `system` still resolves it.
fn quo_2_unreadable_quorum_columns_refuse_people_not_system(db: &TestDb) {
    let session = team(db);
    let id = ask_quorum(db, &session, approvals(2));
    db.raw(|conn| {
        diesel::update(bundles::table.find(&id))
            .set(bundles::quorum_approvals.eq(Some(99)))
            .execute(conn)
            .unwrap()
    });
    match db.resolve_bundle(&user("alice"), &id, &approve(1, "")) {
        Err(Error::Validation(v)) => assert_eq!(v.field, "quorum"),
        other => panic!("{other:?}"),
    }
    let agent = Principal::agent("olga", "helper", Grant::ALL);
    assert!(matches!(
        db.get_bundle(&agent, &id),
        Err(Error::NotFound(_))
    ));
    assert!(
        db.resolve_bundle(&Principal::System, &id, &approve(1, ""))
            .unwrap()
            .claimed
    );
}

/// QUO-5: the `quorum` object follows `on_expire` in every LIST-6
/// element — list pages and history — and is `null` without a quorum.
fn quo_5_the_quorum_object_in_listings_and_history(db: &TestDb) {
    let session = team(db);
    let id = ask_quorum(db, &session, approvals(2));
    let plain = ask(db, &session, 1);
    db.resolve_bundle(&user("alice"), &id, &approve(1, ""))
        .unwrap();
    let page = envelope::list_page(&db.list_pending(&user("bob"), &Default::default()).unwrap());
    let text = page.body_text();
    let of = |pending_id: &str| {
        page.body["bundles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["pending_id"] == pending_id)
            .unwrap()
            .clone()
    };
    assert!(of(&plain)["quorum"].is_null());
    let quorum = of(&id)["quorum"].clone();
    assert_eq!(
        quorum,
        json!({"approvals": 2, "rejections": 1, "eligible": [], "requested_by": "",
               "votes": [{"user_id": "alice", "at": quorum["votes"][0]["at"],
                          "rejected": false,
                          "answers": [{"question_id": "q1", "selected_options": ["q1_opt1"],
                                       "custom_text": ""}],
                          "reject_reason": "", "digest": quorum["votes"][0]["digest"],
                          "counts": true}]})
    );
    assert!(text.contains("\"on_expire\":\"\",\"quorum\":"));
    db.resolve_bundle(&user("bob"), &id, &approve(1, ""))
        .unwrap();
    let settled = db.list_settled(&user("bob"), &Default::default()).unwrap();
    let settled = envelope::settled_page(&settled).body;
    let element = settled["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["pending_id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(element["quorum"]["votes"].as_array().unwrap().len(), 2);
    assert_eq!(element["response"]["voters"], json!(["alice", "bob"]));
}
