//! WIRE-1..3, LIST-5..7, SUM-1, PA-1, DEL-3: the exact bytes of every
//! envelope the library produces, pinned under `snapshots/`. Both backends
//! must produce the same bytes, so each backend's run is checked against
//! the same files. Deterministic clock (`EPOCH`) and ids (`pending-000001`…).

use std::time::Duration;

use clarion::envelope::{self, Envelope};
use clarion::test_hooks::{points, FailAction};
use clarion::{
    AnswerInput, Grant, ListRequest, Operation, Principal, ResolveRequest, SessionState,
    SessionUpsert, SettledRequest, Target, TaskUpsert,
};

use crate::support::rows::{self, Row};
use crate::support::*;

fn text(envelope: Envelope) -> String {
    format!("{} {}", envelope.status, envelope.body_text())
}

fn of<T>(result: clarion::Result<T>, ok: impl FnOnce(&T) -> Envelope) -> String {
    text(match &result {
        Ok(value) => ok(value),
        Err(error) => envelope::error(error),
    })
}

fn answers(text: &str) -> ResolveRequest {
    ResolveRequest {
        answers: vec![
            AnswerInput {
                question_id: "q1".into(),
                selected_options: vec!["q1_opt2".into(), "q1_opt1".into()],
                custom_text: format!("  {text}  "),
            },
            AnswerInput {
                question_id: "q2".into(),
                selected_options: vec![],
                custom_text: String::new(),
            },
        ],
        ..ResolveRequest::default()
    }
}

/// Every envelope, in a fixed order, from one deterministic world.
/// A host request through the JSON door, its envelope as text.
fn host_call(db: &TestDb, op: &str, args: serde_json::Value) -> String {
    let request = serde_json::json!({"op": op, "principal": {"kind": "system"}, "args": args});
    text(db.call(&request.to_string()))
}

/// HOOK-1: the secret is random; the redaction first checks its form.
fn redact_secret(text: String) -> String {
    let at = text.find("\"secret\":\"").expect("a secret") + 10;
    let secret = &text[at..at + 50];
    assert!(
        secret.starts_with("whsec_") && secret.ends_with('=') && text[at + 50..].starts_with('"'),
        "{text}"
    );
    format!("{}whsec_<secret>{}", &text[..at], &text[at + 50..])
}

fn envelopes(db: &TestDb) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // HOOK-1, HOOK-6: before any event, so the endpoint's cursor is "".
    let added = host_call(
        db,
        "webhook_add",
        serde_json::json!({"url": "https://hooks.example.com/clarion", "events": ["bundle.resolved"], "workspace_id": "w-a"}),
    );
    out.push(("webhook_add", redact_secret(added)));
    out.push((
        "webhook_list",
        host_call(db, "webhook_list", serde_json::json!({})),
    ));
    out.push((
        "error_webhook_not_found",
        host_call(
            db,
            "webhook_enable",
            serde_json::json!({"id": "webhook-nope"}),
        ),
    ));
    db.webhook_remove("webhook-000001").unwrap();
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(123);

    let asked = db.ask(&ask_request(&session, 2));
    out.push(("ask_created", of(asked, envelope::asked)));
    let mut keyed = ask_request(&session, 1);
    keyed.idempotency_key = Some("k".into());
    out.push(("ask_created_with_key", of(db.ask(&keyed), envelope::asked)));
    out.push(("ask_replayed", of(db.ask(&keyed), envelope::asked)));
    db.clock.advance_micros(7_000_000);

    out.push((
        "get_bundle_pending",
        of(
            db.get_bundle(&alice(), "pending-000001"),
            envelope::bundle_detail,
        ),
    ));
    out.push((
        "list_pending_with_next_cursor",
        of(
            db.list_pending(
                &alice(),
                &ListRequest {
                    limit: Some(1),
                    ..ListRequest::default()
                },
            ),
            envelope::list_page,
        ),
    ));
    out.push(("summary", of(db.summary(&alice()), envelope::summary)));
    db.upsert_task(TaskUpsert::new("t-idle").workspace("w-a"))
        .unwrap();
    out.push((
        "pending_actions_with_null",
        of(
            db.pending_actions(&alice(), &["t-a".into(), "t-none".into(), "t-idle".into()]),
            |v| envelope::pending_actions(v),
        ),
    ));
    out.push((
        "authorize_allowed",
        of(
            db.authorize(
                &alice(),
                Operation::GetBundle,
                Target::Bundle("pending-000001"),
            ),
            |a| envelope::authorization(*a),
        ),
    ));
    out.push((
        "authorize_denied_not_found",
        of(
            db.authorize(
                &bob(),
                Operation::GetBundle,
                Target::Bundle("pending-000001"),
            ),
            |a| envelope::authorization(*a),
        ),
    ));
    out.push((
        "authorize_denied_capability",
        of(
            db.authorize(
                &Principal::Unclassified,
                Operation::GetBundle,
                Target::Bundle("pending-000001"),
            ),
            |a| envelope::authorization(*a),
        ),
    ));

    db.detach_session(&session).unwrap();
    db.clock.advance_micros(1_000_000);
    out.push((
        "resolve_won",
        of(
            db.resolve_bundle(&alice(), "pending-000001", &answers("ship it")),
            envelope::resolved,
        ),
    ));
    out.push((
        "resolve_lost",
        of(
            db.resolve_bundle(&Principal::System, "pending-000001", &answers("no")),
            envelope::resolved,
        ),
    ));
    out.push((
        "get_bundle_answered",
        of(
            db.get_bundle(&alice(), "pending-000001"),
            envelope::bundle_detail,
        ),
    ));
    out.push((
        "pending_deliveries",
        of(db.pending_deliveries(None), |d| envelope::deliveries(d)),
    ));
    // AUD-3: the winner's and the loser's entries, through the JSON door.
    out.push((
        "attempts",
        text(db.call_value(&serde_json::json!({
            "op": "attempts",
            "principal": {"kind": "user", "user_id": "alice"},
            "args": {"pending_id": "pending-000001"},
        }))),
    ));
    let rejected = ResolveRequest {
        rejected: true,
        reject_reason: " not now ".into(),
        ..ResolveRequest::default()
    };
    out.push((
        "resolve_rejected",
        of(
            db.resolve_bundle(&alice(), "pending-000002", &rejected),
            envelope::resolved,
        ),
    ));
    out.push((
        "get_bundle_rejected",
        of(
            db.get_bundle(&alice(), "pending-000002"),
            envelope::bundle_detail,
        ),
    ));

    let cancelled = ask(db, &session, 1);
    out.push((
        "cancel_won",
        of(db.cancel_bundle(&alice(), &cancelled), envelope::resolved),
    ));
    out.push((
        "get_bundle_cancelled",
        of(db.get_bundle(&alice(), &cancelled), envelope::bundle_detail),
    ));

    let superseded = ask(db, &session, 1);
    db.begin_turn(&session).unwrap();
    out.push((
        "get_bundle_superseded",
        of(
            db.get_bundle(&alice(), &superseded),
            envelope::bundle_detail,
        ),
    ));
    let one = ResolveRequest {
        answers: vec![AnswerInput {
            question_id: "q1".into(),
            selected_options: vec![],
            custom_text: String::new(),
        }],
        ..ResolveRequest::default()
    };
    out.push((
        "error_no_longer_active",
        of(
            db.resolve_bundle(&alice(), &superseded, &one),
            envelope::resolved,
        ),
    ));

    let ending = mirror(db, "b", "alice");
    let expired = ask(db, &ending, 1);
    db.set_session_state(&ending, SessionState::Completed)
        .unwrap();
    out.push((
        "get_bundle_expired",
        of(db.get_bundle(&alice(), &expired), envelope::bundle_detail),
    ));
    out.push((
        "error_session_ended",
        of(db.ask(&ask_request(&ending, 1)), envelope::asked),
    ));

    let forced = mirror(db, "c", "alice");
    let inactive = ask(db, &forced, 1);
    rows::force_state(db, &forced, "failed");
    out.push((
        "get_bundle_inactive",
        of(db.get_bundle(&alice(), &inactive), envelope::bundle_detail),
    ));

    out.push((
        "error_not_found",
        of(db.get_bundle(&bob(), &inactive), envelope::bundle_detail),
    ));
    out.push((
        "error_session_not_found",
        of(db.begin_turn("s-nope"), |_| envelope::ok()),
    ));
    out.push((
        "error_task_not_found",
        of(
            db.upsert_session(SessionUpsert::new("s-x", "t-nope")),
            |_| envelope::ok(),
        ),
    ));
    let mut invalid = ask_request(&session, 1);
    invalid.questions[0].options.truncate(1);
    out.push(("error_validation", of(db.ask(&invalid), envelope::asked)));

    out.push((
        "error_capability_denied",
        of(
            db.list_pending(
                &alice_bot_with([Grant::QuestionsAnswer]),
                &ListRequest::default(),
            ),
            envelope::list_page,
        ),
    ));
    let waited = ask(db, &mirror(db, "d", "alice"), 1);
    out.push((
        "error_wait_timed_out",
        of(
            db.wait_bundle(&alice(), &waited, std::time::Duration::ZERO),
            envelope::resolved,
        ),
    ));
    db.arm_failpoint(points::CLAIM_AFTER_ROWS, FailAction::Error);
    out.push((
        "error_internal",
        of(
            db.resolve_bundle(&alice(), &waited, &one),
            envelope::resolved,
        ),
    ));
    db.disarm_failpoint(points::CLAIM_AFTER_ROWS);
    out.push(("mirror_ok", text(envelope::ok())));

    // The agent side of WIRE-5: wait outcomes, begin_turn, has_pending.
    let waiting = mirror(db, "w", "walt");
    let open = ask(db, &waiting, 2);
    out.push((
        "has_pending_true",
        of(db.has_pending_clarification(&waiting), |v| {
            envelope::has_pending(*v)
        }),
    ));
    out.push((
        "wait_timed_out",
        of(db.wait(&open, Duration::ZERO), envelope::waited),
    ));
    db.resolve_bundle(&Principal::user("walt"), &open, &answers("walt's"))
        .unwrap();
    out.push((
        "wait_answered",
        of(db.wait(&open, Duration::ZERO), envelope::waited),
    ));
    let rejected = ask(db, &waiting, 1);
    let reject = ResolveRequest {
        rejected: true,
        reject_reason: "not now".into(),
        ..ResolveRequest::default()
    };
    db.resolve_bundle(&Principal::user("walt"), &rejected, &reject)
        .unwrap();
    out.push((
        "wait_rejected",
        of(db.wait(&rejected, Duration::ZERO), envelope::waited),
    ));
    let superseded = ask(db, &waiting, 1);
    out.push((
        "begin_turn",
        of(db.begin_turn(&waiting), |turn| envelope::turn_started(turn)),
    ));
    out.push((
        "wait_superseded",
        of(db.wait(&superseded, Duration::ZERO), envelope::waited),
    ));
    out.push((
        "has_pending_false",
        of(db.has_pending_clarification(&waiting), |v| {
            envelope::has_pending(*v)
        }),
    ));
    // The WIRE-5 reply wrapping a body, as the C ABI returns it.
    out.push((
        "reply_wrapper",
        envelope::error(&clarion::Error::NotFound(clarion::Entity::Bundle)).to_reply(),
    ));

    // A degraded bundle (DM-1) in an otherwise empty inbox.
    let degraded_session = mirror(db, "e", "erin");
    let turn = db.begin_turn(&degraded_session).unwrap();
    rows::insert_bundle(db, "degraded", &degraded_session, &turn, "");
    let mut broken = Row::new("degraded", &degraded_session, &turn).status(None);
    broken.payload = "not json";
    broken.insert(db);
    Row::new("degraded", &degraded_session, &turn)
        .question_id("q2")
        .index(None)
        .status(Some("snoozed"))
        .insert(db);
    Row::new("degraded", &degraded_session, &turn)
        .question_id("q3")
        .index(Some(1))
        .status(Some(""))
        .insert(db);
    let erin = Principal::user("erin");
    out.push((
        "list_pending_degraded",
        of(
            db.list_pending(&erin, &ListRequest::default()),
            envelope::list_page,
        ),
    ));
    ask_permission(db, &degraded_session, 1);
    // VAL-9: a single-select question given two options.
    let mut single = ask_request(&mirror(db, "single", "alice"), 1);
    single.questions[0].multi_select = Some(false);
    let single = db.ask(&single).unwrap().pending_id;
    let two = ResolveRequest {
        answers: vec![AnswerInput {
            question_id: "q1".into(),
            selected_options: vec!["q1_opt1".into(), "q1_opt2".into()],
            custom_text: String::new(),
        }],
        ..ResolveRequest::default()
    };
    out.push((
        "error_validation_single_select",
        of(
            db.resolve_bundle(&alice(), &single, &two),
            envelope::resolved,
        ),
    ));
    out.push((
        "list_settled_with_next_cursor",
        of(
            db.list_settled(
                &alice(),
                &SettledRequest {
                    limit: Some(2),
                    ..SettledRequest::default()
                },
            ),
            envelope::settled_page,
        ),
    ));
    out.push((
        "list_settled_empty",
        of(
            db.list_settled(
                &Principal::agent("nobody", "bot", Grant::ALL),
                &SettledRequest::default(),
            ),
            envelope::settled_page,
        ),
    ));
    out.push((
        "list_pending_empty",
        of(
            db.list_pending(
                &Principal::agent("nobody", "bot", Grant::ALL),
                &ListRequest::default(),
            ),
            envelope::list_page,
        ),
    ));
    out
}

fn check(db: &TestDb) {
    let mut settings = snapshot_settings();
    settings.set_omit_expression(true);
    settings.bind(|| {
        for (name, text) in envelopes(db) {
            insta::assert_snapshot!(format!("envelope_{name}"), redact_references(&text));
        }
    });
}

dual_backend!(wire_1_envelopes_are_pinned_byte_for_byte);

/// WIRE-1..3: every envelope, byte for byte, identical on both backends.
fn wire_1_envelopes_are_pinned_byte_for_byte(db: &TestDb) {
    check(db);
}
