//! AUTH-1..10, WIRE-3 get_bundle, REL-4: who sees which bundle, from durable
//! rows only, with not-found indistinguishable from foreign.

use clarion::{
    Authorization, BundleStatus, Clarion, Denial, Entity, Error, Grant, Operation, Principal,
    SessionUpsert, Target, TaskUpsert, WorkspaceUpsert,
};

use crate::delivery_waiting_support::{already_waiting, spawn_wait_bundle};
use crate::support::rows::{self, Row};
use crate::support::*;

const DENIED_NOT_FOUND: Authorization = Authorization::Denied(Denial::NotFound);
const DENIED_CAPABILITY: Authorization = Authorization::Denied(Denial::CapabilityDenied);

fn can_get(db: &Clarion, principal: &Principal, pending_id: &str) -> bool {
    let by_authorize = db
        .authorize(principal, Operation::GetBundle, Target::Bundle(pending_id))
        .unwrap();
    let by_get = db.get_bundle(principal, pending_id);
    assert_eq!(
        by_authorize.is_allowed(),
        by_get.is_ok(),
        "authorize and get_bundle agree on {pending_id}"
    );
    by_get.is_ok()
}

dual_backend!(
    auth_3_task_visibility_by_workspace,
    auth_3_system_sees_everything,
    auth_8_task_targets,
    auth_4_empty_task_id_resolves_through_the_session,
    auth_4_unresolvable_task_is_hidden_from_scoped_principals,
    auth_6_permission_bundles_are_human_only,
    auth_2_unclassified_is_denied_everything,
    auth_2_agent_grants,
    auth_10_capability_before_visibility,
    auth_9_authorizing_task_comes_from_durable_rows,
    auth_5_no_existence_oracle,
    auth_7_resolve_and_get_allow_the_same_bundles
);

/// AUTH-3: empty, dangling and unowned workspaces are visible to every
/// user; a workspace owned by someone else is not.
fn auth_3_task_visibility_by_workspace(db: &TestDb) {
    let [own, foreign, unowned, none, dangling] = visibility_world(db, None);
    for id in [&own, &unowned, &none, &dangling] {
        assert!(can_get(db, &alice(), id), "alice sees {id}");
        assert!(can_get(db, &alice_bot(), id), "alice's agent sees {id}");
    }
    assert!(!can_get(db, &alice(), &foreign));
    assert!(!can_get(db, &alice_bot(), &foreign));
    assert!(can_get(db, &bob(), &foreign));
    assert!(!can_get(db, &bob(), &own));
}

/// AUTH-3: `system` sees every task and bundle.
fn auth_3_system_sees_everything(db: &TestDb) {
    for id in visibility_world(db, None) {
        assert!(can_get(db, &Principal::System, &id));
    }
    for task in ["t-alice", "t-bob", "t-open", "t-none", "t-dangling"] {
        assert!(db
            .authorize(&Principal::System, Operation::GetBundle, Target::Task(task))
            .unwrap()
            .is_allowed());
    }
}

/// AUTH-3, AUTH-8: authorize on a task target follows the same rule.
fn auth_8_task_targets(db: &TestDb) {
    visibility_world(db, None);
    let allowed = |p: &Principal, task: &str| {
        db.authorize(p, Operation::ListPending, Target::Task(task))
            .unwrap()
    };
    assert_eq!(allowed(&alice(), "t-alice"), Authorization::Allowed);
    assert_eq!(allowed(&alice(), "t-open"), Authorization::Allowed);
    assert_eq!(allowed(&alice(), "t-none"), Authorization::Allowed);
    assert_eq!(allowed(&alice(), "t-dangling"), Authorization::Allowed);
    assert_eq!(allowed(&alice(), "t-bob"), DENIED_NOT_FOUND);
    assert_eq!(allowed(&alice(), "t-never-existed"), DENIED_NOT_FOUND);
    assert_eq!(
        allowed(&Principal::System, "t-never-existed"),
        DENIED_NOT_FOUND
    );
}

/// AUTH-4 [seed M5]: an empty bundle task id resolves through the session.
fn auth_4_empty_task_id_resolves_through_the_session(db: &TestDb) {
    visibility_world(db, None);
    let turn = db.begin_turn("s-alice").unwrap();
    rows::insert_bundle(db, "no-task", "s-alice", &turn, "");
    Row::new("no-task", "s-alice", &turn).insert(db);
    assert!(can_get(db, &alice(), "no-task"));
    assert!(!can_get(db, &bob(), "no-task"));
    assert_eq!(
        db.get_bundle(&alice(), "no-task").unwrap().bundle.task_id,
        "t-alice"
    );
}

/// AUTH-4 [seed M5a]: a bundle whose task cannot be resolved is
/// not-found for users and agents, but `system` may still reach it.
fn auth_4_unresolvable_task_is_hidden_from_scoped_principals(db: &TestDb) {
    visibility_world(db, None);
    let turn = db.begin_turn("s-open").unwrap();
    rows::insert_bundle(db, "orphan", "s-open", &turn, "t-deleted-long-ago");
    Row::new("orphan", "s-open", &turn).insert(db);
    assert!(!can_get(db, &alice(), "orphan"));
    assert!(!can_get(db, &alice_bot(), "orphan"));
    assert!(can_get(db, &Principal::System, "orphan"));
    assert!(db
        .authorize(
            &Principal::System,
            Operation::ResolveBundle,
            Target::Bundle("orphan")
        )
        .unwrap()
        .is_allowed());
    assert!(db
        .authorize(
            &Principal::System,
            Operation::CancelBundle,
            Target::Bundle("orphan")
        )
        .unwrap()
        .is_allowed());
    assert_eq!(
        db.get_bundle(&Principal::System, "orphan")
            .unwrap()
            .bundle
            .task_id,
        ""
    );
}

/// AUTH-6: permission bundles are invisible to agents, visible to humans.
fn auth_6_permission_bundles_are_human_only(db: &TestDb) {
    let session = mirror(db, "p", "alice");
    let pending_id = ask_permission(db, &session, 1);
    assert!(can_get(db, &alice(), &pending_id));
    assert!(can_get(db, &Principal::System, &pending_id));
    assert!(!can_get(db, &alice_bot(), &pending_id));
    for operation in [
        Operation::GetBundle,
        Operation::ResolveBundle,
        Operation::WaitBundle,
    ] {
        assert_eq!(
            db.authorize(&alice_bot(), operation, Target::Bundle(&pending_id))
                .unwrap(),
            DENIED_NOT_FOUND
        );
    }
    assert_eq!(
        db.get_bundle(&alice(), &pending_id)
            .unwrap()
            .bundle
            .kind
            .as_str(),
        "permission"
    );
}

/// AUTH-1/2: `unclassified` is denied on every operation, before any read.
fn auth_2_unclassified_is_denied_everything(db: &TestDb) {
    let [own, ..] = visibility_world(db, None);
    for operation in Operation::all() {
        for target in [
            Target::Bundle(&own),
            Target::Task("t-alice"),
            Target::Bundle("nope"),
        ] {
            assert_eq!(
                db.authorize(&Principal::Unclassified, operation, target)
                    .unwrap(),
                DENIED_CAPABILITY
            );
        }
    }
    assert!(matches!(
        db.get_bundle(&Principal::Unclassified, &own),
        Err(Error::CapabilityDenied)
    ));
}

/// AUTH-2: agents need `questions:read` to read and `questions:answer`
/// to resolve; they never cancel and never run host operations.
fn auth_2_agent_grants(db: &TestDb) {
    let [own, ..] = visibility_world(db, None);
    let bundle = Target::Bundle(&own);
    let none = alice_bot_with([]);
    let read = alice_bot_with([Grant::QuestionsRead]);
    let answer = alice_bot_with([Grant::QuestionsAnswer]);
    let check = |p: &Principal, op: Operation| db.authorize(p, op, bundle).unwrap();
    assert_eq!(check(&none, Operation::GetBundle), DENIED_CAPABILITY);
    assert_eq!(check(&read, Operation::GetBundle), Authorization::Allowed);
    assert_eq!(check(&answer, Operation::GetBundle), DENIED_CAPABILITY);
    assert_eq!(check(&read, Operation::ResolveBundle), DENIED_CAPABILITY);
    assert_eq!(
        check(&answer, Operation::ResolveBundle),
        Authorization::Allowed
    );
    assert_eq!(
        check(&alice_bot(), Operation::CancelBundle),
        DENIED_CAPABILITY
    );
    assert_eq!(check(&alice_bot(), Operation::Ask), DENIED_CAPABILITY);
    assert_eq!(
        check(&alice(), Operation::CancelBundle),
        Authorization::Allowed
    );
    assert_eq!(check(&alice(), Operation::Ask), DENIED_CAPABILITY);
    assert!(matches!(
        db.get_bundle(&none, &own),
        Err(Error::CapabilityDenied)
    ));
    assert!(db.get_bundle(&read, &own).is_ok());
}

/// AUTH-10: the capability is checked first: a principal without it
/// gets `capability_denied` even for a bundle it could never see.
fn auth_10_capability_before_visibility(db: &TestDb) {
    let [_, foreign, ..] = visibility_world(db, None);
    let none = alice_bot_with([]);
    assert_eq!(
        db.authorize(&none, Operation::GetBundle, Target::Bundle(&foreign))
            .unwrap(),
        DENIED_CAPABILITY
    );
    assert_eq!(
        db.authorize(&none, Operation::GetBundle, Target::Bundle("fabricated"))
            .unwrap(),
        DENIED_CAPABILITY
    );
}

/// AUTH-9: the authorizing task is the stored one; moving the session
/// to another task does not move its existing bundles, and a task moved
/// to a foreign workspace is hidden at once (nothing is cached).
fn auth_9_authorizing_task_comes_from_durable_rows(db: &TestDb) {
    let [own, ..] = visibility_world(db, None);
    db.upsert_session(SessionUpsert::new("s-alice", "t-bob"))
        .unwrap();
    assert!(
        can_get(db, &alice(), &own),
        "the bundle keeps its stored task"
    );
    assert!(!can_get(db, &bob(), &own));
    db.upsert_task(TaskUpsert::new("t-alice").workspace("w-bob"))
        .unwrap();
    assert!(!can_get(db, &alice(), &own));
    assert!(can_get(db, &bob(), &own));
}

/// AUTH-5, REL-4: get_bundle and authorize give identical results for a
/// foreign bundle, a permission bundle asked for by an agent, and a
/// fabricated id.
fn auth_5_no_existence_oracle(db: &TestDb) {
    let [_, foreign, ..] = visibility_world(db, None);
    let session = mirror(db, "p", "alice");
    let permission = ask_permission(db, &session, 1);

    let get = |p: &Principal, id: &str| format!("{:?}", db.get_bundle(p, id));
    let auth = |p: &Principal, op: Operation, id: &str| {
        format!("{:?}", db.authorize(p, op, Target::Bundle(id)))
    };
    assert_eq!(get(&alice(), &foreign), get(&alice(), "fabricated"));
    assert_eq!(get(&alice_bot(), &foreign), get(&alice_bot(), "fabricated"));
    assert_eq!(
        get(&alice_bot(), &permission),
        get(&alice_bot(), "fabricated")
    );
    assert_eq!(
        get(&alice(), "fabricated"),
        format!("{:?}", Err::<(), _>(Error::NotFound(Entity::Bundle)))
    );
    for op in [
        Operation::GetBundle,
        Operation::WaitBundle,
        Operation::ResolveBundle,
        Operation::CancelBundle,
    ] {
        assert_eq!(
            auth(&alice(), op, &foreign),
            auth(&alice(), op, "fabricated")
        );
        assert_eq!(
            auth(&alice_bot(), op, &foreign),
            auth(&alice_bot(), op, "fabricated")
        );
        assert_eq!(
            auth(&alice_bot(), op, &permission),
            auth(&alice_bot(), op, "fabricated")
        );
    }
}

/// AUTH-7 (visibility half): resolve and get are allowed for exactly the
/// same bundles, whatever their activeness.
fn auth_7_resolve_and_get_allow_the_same_bundles(db: &TestDb) {
    let ids = visibility_world(db, None);
    db.begin_turn("s-open").unwrap();
    db.set_session_state("s-none", clarion::SessionState::Failed)
        .unwrap();
    for principal in [alice(), bob(), alice_bot(), Principal::System] {
        for id in ids.iter().map(String::as_str).chain(["fabricated"]) {
            assert_eq!(
                db.authorize(&principal, Operation::GetBundle, Target::Bundle(id))
                    .unwrap(),
                db.authorize(&principal, Operation::ResolveBundle, Target::Bundle(id))
                    .unwrap(),
                "{principal:?} on {id}"
            );
        }
    }
}

dual_backend!(
    wire_3_get_bundle_pending,
    dm_4_question_order,
    list_7_unparseable_payload_reads_as_empty,
    wire_3_get_bundle_statuses,
    wire_3_get_bundle_after_restart
);

/// WIRE-3: an active bundle is `pending` with no response; questions in
/// DM-4 order, displayed per LIST-6/7.
fn wire_3_get_bundle_pending(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(5_000_000);
    let pending_id = ask(db, &session, 2);
    db.clock.advance_micros(7_900_000);
    let detail = db.get_bundle(&alice(), &pending_id).unwrap();
    assert_eq!(detail.status, BundleStatus::Pending);
    assert_eq!(detail.response, None);
    let bundle = detail.bundle;
    assert_eq!(
        (
            bundle.task_id.as_str(),
            bundle.session_id.as_str(),
            bundle.kind.as_str()
        ),
        ("t-a", "s-a", "question")
    );
    assert_eq!(
        bundle.created_at.to_rfc3339(),
        "2026-11-29T20:00:05.000000Z"
    );
    assert_eq!(bundle.age_seconds, 7);
    assert_eq!(
        bundle
            .questions
            .iter()
            .map(|q| q.question_id.as_str())
            .collect::<Vec<_>>(),
        ["q1", "q2"]
    );
    assert_eq!(bundle.questions[0].options[1].option_id, "q1_opt2");
    assert_eq!(bundle.questions[0].status.as_str(), "pending");
}

/// DM-4: question_index (NULL as 0), then created_at, then row id.
fn dm_4_question_order(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b", &session, &turn, "");
    Row::new("b", &session, &turn)
        .question_id("third")
        .index(Some(2))
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("null-first")
        .index(None)
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("zero-second")
        .index(Some(0))
        .insert(db);
    Row::new("b", &session, &turn)
        .question_id("one")
        .index(Some(1))
        .status(None)
        .insert(db);
    let detail = db.get_bundle(&Principal::System, "b").unwrap();
    let order: Vec<_> = detail
        .bundle
        .questions
        .iter()
        .map(|q| q.question_id.as_str())
        .collect();
    assert_eq!(order, ["null-first", "zero-second", "one", "third"]);
    assert_eq!(
        detail.bundle.questions[2].status.as_str(),
        "pending",
        "LIST-7: absent status shows pending"
    );
}

/// LIST-7/9: an unparseable payload shows empty strings and no options.
fn list_7_unparseable_payload_reads_as_empty(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    rows::insert_bundle(db, "b", &session, &turn, "");
    let mut row = Row::new("b", &session, &turn);
    row.payload = "{not json";
    row.insert(db);
    let q = &db.get_bundle(&alice(), "b").unwrap().bundle.questions[0];
    assert_eq!(
        (q.title.as_str(), q.prompt.as_str(), q.options.len()),
        ("", "", 0)
    );
}

/// WIRE-3 status precedence: answered/rejected/cancelled with the stored
/// response, expired, superseded, inactive.
fn wire_3_get_bundle_statuses(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = db.begin_turn(&session).unwrap();
    for (id, status) in [
        ("ans", "answered"),
        ("rej", "rejected"),
        ("can", "cancelled"),
    ] {
        rows::insert_bundle(db, id, &session, &turn, "");
        let mut row = Row::new(id, &session, &turn).status(Some(status));
        let answer = r#"{"question_id":"q1","selected_options":["a"],"custom_text":"ok"}"#;
        if status == "answered" {
            row.payload = rows::PAYLOAD;
        }
        row.insert(db);
        if status == "answered" {
            rows::set_response(db, id, answer);
        }
    }
    let answered = db.get_bundle(&alice(), "ans").unwrap();
    assert_eq!(answered.status, BundleStatus::Answered);
    let response = answered.response.unwrap();
    assert_eq!(response.answers.len(), 1);
    assert_eq!(response.answers[0].selected_options, ["a"]);
    assert!(!response.rejected);
    let rejected = db.get_bundle(&alice(), "rej").unwrap();
    assert_eq!(rejected.status, BundleStatus::Rejected);
    assert!(rejected.response.unwrap().rejected);
    assert_eq!(
        db.get_bundle(&alice(), "can").unwrap().status,
        BundleStatus::Cancelled
    );

    let superseded = ask(db, &session, 1);
    let expired_session = mirror(db, "b", "alice");
    let expired = ask(db, &expired_session, 1);
    db.set_session_state(&expired_session, clarion::SessionState::Completed)
        .unwrap();
    db.begin_turn(&session).unwrap();
    assert_eq!(
        db.get_bundle(&alice(), &superseded).unwrap().status,
        BundleStatus::Superseded
    );
    assert_eq!(
        db.get_bundle(&alice(), &expired).unwrap().status,
        BundleStatus::Expired
    );

    let ended = mirror(db, "c", "alice");
    let inactive = ask(db, &ended, 1);
    rows::force_state(db, &ended, "failed");
    assert_eq!(
        db.get_bundle(&alice(), &inactive).unwrap().status,
        BundleStatus::Inactive
    );
}

/// WIRE-3: get_bundle reads durable state: a fresh handle (a restart)
/// returns the same result.
fn wire_3_get_bundle_after_restart(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 2);
    let before = db.get_bundle(&alice(), &pending_id).unwrap();
    let restarted = db.reopen();
    assert_eq!(restarted.get_bundle(&alice(), &pending_id).unwrap(), before);
}

dual_backend!(auth_5_authorize_about_authorize_reveals_nothing);

/// AUTH-5: asking whether one may call `authorize` on a target needs no
/// lookup, so it cannot reveal whether a bundle exists — even to an agent
/// without grants.
fn auth_5_authorize_about_authorize_reveals_nothing(db: &TestDb) {
    let [_, foreign, ..] = visibility_world(db, None);
    let bare = alice_bot_with([]);
    for principal in [bare, alice(), alice_bot()] {
        let about_foreign = db
            .authorize(&principal, Operation::Authorize, Target::Bundle(&foreign))
            .unwrap();
        let about_nothing = db
            .authorize(
                &principal,
                Operation::Authorize,
                Target::Bundle("fabricated"),
            )
            .unwrap();
        assert_eq!(about_foreign, about_nothing);
        assert_eq!(about_foreign, Authorization::Allowed);
    }
}

dual_backend!(
    auth_5_a_bundle_moved_away_while_waited_on_is_not_found,
    auth_5_a_loser_whose_bundle_moved_away_gets_not_found
);

/// AUTH-5 while waiting: a bundle moved out of the waiter's sight is
/// not-found for an external `wait_bundle` that was already waiting,
/// and its resolution — committed through the same handle, which hands
/// resolutions to its waiters — is never revealed.
fn auth_5_a_bundle_moved_away_while_waited_on_is_not_found(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let handle = db.reopen_polling(std::time::Duration::from_millis(20));
    // The waiter has seen the bundle once (it reached its sleep), then it
    // is taken away from alice.
    let waiter = already_waiting(&handle, || {
        spawn_wait_bundle(
            &handle,
            alice(),
            &pending_id,
            std::time::Duration::from_secs(30),
        )
    });
    db.upsert_workspace(WorkspaceUpsert::new("w-bob").owner("bob"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").workspace("w-bob"))
        .unwrap();
    handle
        .resolve_bundle(&Principal::System, &pending_id, &one_answer("secret"))
        .unwrap();
    let outcome = waiter.within(std::time::Duration::from_secs(60));
    assert!(
        matches!(outcome, Err(Error::NotFound(Entity::Bundle))),
        "{outcome:?}"
    );
}

/// AUTH-5 for a loser: a bundle moved out of the principal's sight
/// between the claim's read and the replay is not-found; the winner's
/// answer is not replayed to someone who may no longer see it. The loser
/// reads the bundle pending and pauses; the winner settles it; the
/// loser's claim loses, and the bundle moves away before its replay.
fn auth_5_a_loser_whose_bundle_moved_away_gets_not_found(db: &TestDb) {
    use clarion::test_hooks::{points, FailAction, Gate};
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    let loser = db.reopen();
    let (read, replay) = (Gate::new(), Gate::new());
    loser.arm_failpoint(
        points::RESOLVE_AFTER_FIRST_READ,
        FailAction::Block(read.clone()),
    );
    loser.arm_failpoint(
        points::RESOLVE_BEFORE_REPLAY,
        FailAction::Block(replay.clone()),
    );
    let racing = {
        let (loser, pending_id) = (loser.clone(), pending_id.clone());
        std::thread::spawn(move || loser.resolve_bundle(&alice(), &pending_id, &one_answer("late")))
    };
    let arrived = |gate: &Gate| gate.wait_arrival(std::time::Duration::from_secs(10));
    assert!(arrived(&read), "the loser read the bundle pending");
    db.resolve_bundle(&Principal::System, &pending_id, &one_answer("first"))
        .unwrap();
    read.open();
    assert!(arrived(&replay), "the loser lost its claim");
    db.upsert_workspace(WorkspaceUpsert::new("w-bob").owner("bob"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").workspace("w-bob"))
        .unwrap();
    replay.open();
    let outcome = racing.join().unwrap();
    assert!(
        matches!(outcome, Err(Error::NotFound(Entity::Bundle))),
        "{outcome:?}"
    );
}
