//! PPL-3, PPL-4, PPL-6: visibility with workspace members and escalation
//! grants, through the Rust API, the JSON door (raw bytes), the HTTP door
//! in process and a real `clarion serve` on loopback, on both backends. A
//! member sees a workspace's bundles as its owner does; a non-member, a
//! removed member and a grant before its time get AUTH-5's byte-identical
//! not-found; a member's answer and that member's removal serialize.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use clarion::test_hooks::grant_escalation;
use clarion::{
    envelope, Authorization, BundleStatus, Denial, Entity, Error, Grant, Operation, Principal,
    Target, Timestamp, WorkspaceUpsert,
};
use serde_json::{json, Value};

use crate::events::wait_until_readable;
use crate::http_events::{open_request, Stream};
use crate::http_routes::waits_in_flight;
use crate::resolve_support::{assert_untouched, listed, resolution};
use crate::support::server::*;
use crate::support::*;

/// The workspace of the module: owned by olga, bob among its members.
const TEAM: &str = "w-team";
/// An id no bundle has.
const ABSENT: &str = "pending-999999";
const HOUR: i64 = 3_600_000_000;

fn olga() -> Principal {
    Principal::user("olga")
}

fn zed() -> Principal {
    Principal::user("zed")
}

fn members(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

/// `w-team` (owner olga, members bob) with a running session `s-team` on
/// task `t-team`; returns the session.
fn team(db: &TestDb) -> String {
    db.upsert_workspace(WorkspaceUpsert::new(TEAM).owner("olga"))
        .unwrap();
    db.set_members(TEAM, &members(&["bob"])).unwrap();
    session_in(db, "team", TEAM, Some(true))
}

/// A session every user sees (its task names no workspace).
fn open_session(db: &TestDb) -> String {
    session_in(db, "open", "", Some(true))
}

/// The JSON door's reply to `op` as `principal`, as raw text.
fn door(db: &TestDb, op: &str, principal: &Value, args: &Value) -> (u16, String) {
    let request = json!({"op": op, "principal": principal, "args": args}).to_string();
    let reply = db.call(&request);
    (reply.status, reply.body_text())
}

fn user(id: &str) -> Value {
    json!({"kind": "user", "user_id": id})
}

/// Every per-bundle operation of the JSON door (and `/rpc`), on `id`.
fn per_bundle(id: &str) -> Vec<(&'static str, Value)> {
    let mut calls = vec![
        ("get_bundle", json!({"pending_id": id})),
        (
            "resolve_bundle",
            json!({"pending_id": id, "answers": [
                {"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "x"}]}),
        ),
        (
            "resolve_bundle",
            json!({"pending_id": id, "rejected": true, "reject_reason": "no"}),
        ),
        ("resolve_bundle", json!({"pending_id": id})),
        ("cancel_bundle", json!({"pending_id": id})),
        ("wait_bundle", json!({"pending_id": id, "timeout_ms": 0})),
        ("attempts", json!({"pending_id": id})),
    ];
    for operation in [
        "get_bundle",
        "resolve_bundle",
        "cancel_bundle",
        "wait_bundle",
        "attempts",
    ] {
        calls.push((
            "authorize",
            json!({"operation": operation, "pending_id": id}),
        ));
    }
    calls
}

/// AUTH-5 through the JSON door: each per-bundle call of `principal` on
/// `id` answers byte for byte what it answers for an id no bundle has,
/// the not-found (a denial naming `not_found` for `authorize`).
fn hidden_in_the_door(db: &TestDb, principal: &Value, id: &str, what: &str) {
    let not_found = envelope::error(&Error::NotFound(Entity::Bundle)).body_text();
    for ((op, on_real), (_, on_absent)) in per_bundle(id).into_iter().zip(per_bundle(ABSENT)) {
        let real = door(db, op, principal, &on_real);
        let absent = door(db, op, principal, &on_absent);
        assert_eq!(real, absent, "{what}: {op} {on_real}");
        let agent_may_not = principal["kind"] == "agent"
            && (op == "cancel_bundle" || op == "attempts")
            || op == "authorize"
                && principal["kind"] == "agent"
                && (on_real["operation"] == "cancel_bundle" || on_real["operation"] == "attempts");
        if agent_may_not {
            // AUTH-2 before any read: the same refusal for both ids.
            assert!(real.1.contains("capability"), "{what}: {op}: {real:?}");
        } else if op == "authorize" {
            assert_eq!(real.0, 200, "{what}: {op} {on_real}: {real:?}");
            assert!(real.1.contains("not_found"), "{what}: {op}: {real:?}");
        } else {
            assert_eq!(real, (404, not_found.clone()), "{what}: {op} {on_real}");
        }
    }
}

/// Every per-bundle HTTP route and `/rpc` call, on `id`, as `token`.
fn http_per_bundle(base: &str, token: &str, id: &str) -> Vec<(String, Reply)> {
    let client = client();
    let url = |path: String| format!("{base}{path}");
    let mut replies = vec![
        (
            "GET bundle".to_owned(),
            send(
                client
                    .get(url(format!("/api/v1/clarification/{id}")))
                    .bearer_auth(token),
            ),
        ),
        (
            "GET wait".to_owned(),
            send(
                client
                    .get(url(format!("/api/v1/clarification/{id}/wait?timeout_ms=0")))
                    .bearer_auth(token),
            ),
        ),
        (
            "POST respond".to_owned(),
            send(
                client
                    .post(url(format!("/api/v1/clarification/{id}/respond")))
                    .bearer_auth(token)
                    .header("content-type", "application/json")
                    .body(r#"{"answers":[{"question_id":"q1","selected_options":["q1_opt1"]}]}"#),
            ),
        ),
        (
            "POST cancel".to_owned(),
            send(
                client
                    .post(url(format!("/api/v1/clarification/{id}/cancel")))
                    .bearer_auth(token),
            ),
        ),
    ];
    for (op, args) in per_bundle(id) {
        let reply = send(
            client
                .post(url(format!("/api/v1/rpc/{op}")))
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(args.to_string()),
        );
        replies.push((format!("rpc {op} {args}"), reply));
    }
    replies
}

/// AUTH-5 over HTTP: each route answers for `id` what it answers for an
/// id no bundle has, status and body byte for byte, and the body is the
/// JSON door's.
fn hidden_over_http(base: &str, token: &str, id: &str, what: &str) {
    let not_found = format!(
        "404 {}",
        envelope::error(&Error::NotFound(Entity::Bundle)).body_text()
    );
    let real = http_per_bundle(base, token, id);
    let absent = http_per_bundle(base, token, ABSENT);
    for ((route, on_real), (_, on_absent)) in real.iter().zip(&absent) {
        assert_eq!(on_real.text(), on_absent.text(), "{what}: {route}");
        assert_eq!(
            on_real.header("content-type"),
            on_absent.header("content-type"),
            "{what}: {route}"
        );
        if on_real.text().contains("capability") {
            // An agent's AUTH-2 refusal (cancel, attempts), the same for
            // both ids.
            assert!(
                route.contains("cancel") || route.contains("attempts"),
                "{what}: {route}: {}",
                on_real.text()
            );
        } else if route.starts_with("rpc authorize") {
            assert!(on_real.text().contains("not_found"), "{what}: {route}");
        } else {
            assert_eq!(on_real.text(), not_found, "{what}: {route}");
        }
    }
}

/// The events `principal` may read after `after` (as many as there are).
fn events_of(db: &TestDb, principal: &Principal, after: &str) -> Vec<(String, String)> {
    wait_until_readable(db);
    let mut seen = Vec::new();
    let mut after = after.to_owned();
    loop {
        let page = db.events_after(principal, &after, Some(1000)).unwrap();
        seen.extend(
            page.events
                .iter()
                .map(|event| (event.event_type.clone(), event.pending_id.clone())),
        );
        if page.next == after || page.events.is_empty() && page.next.is_empty() {
            return seen;
        }
        after = page.next;
    }
}

fn about(events: &[(String, String)], pending_id: &str) -> Vec<String> {
    events
        .iter()
        .filter(|(_, id)| id == pending_id)
        .map(|(kind, _)| kind.clone())
        .collect()
}

dual_backend!(
    ppl_3_a_member_sees_answers_waits_and_hears,
    ppl_3_a_non_member_gets_the_absent_ids_not_found,
    ppl_4_a_removed_member_loses_the_workspace_at_once,
    ppl_4_a_removed_members_stream_and_wait_over_clarion_serve,
    ppl_4_a_members_answer_and_its_removal_serialize,
    ppl_4_a_membership_change_blocks_no_reader,
    ppl_6_a_grant_shows_one_bundle_from_its_time_on,
    ppl_5_a_members_walk_pages_many_workspaces_past_refused_candidates
);

/// PPL-3: bob, a member (not the owner), lists, gets, waits on, answers
/// and hears the events of the workspace's bundle, through the Rust API,
/// the JSON door and HTTP; his agent holds his view.
fn ppl_3_a_member_sees_answers_waits_and_hears(db: &TestDb) {
    let session = team(db);
    let id = ask(db, &session, 1);
    assert!(listed(db, &bob(), &id));
    assert!(listed(
        db,
        &Principal::agent("bob", "bot", [Grant::QuestionsRead]),
        &id
    ));
    assert_eq!(db.summary(&bob()).unwrap().pending_bundles, 1);
    let got = db.get_bundle(&bob(), &id).unwrap();
    assert_eq!(got.status, BundleStatus::Pending);
    assert!(db.attempts(&bob(), &id).is_ok());
    for operation in [
        Operation::GetBundle,
        Operation::ResolveBundle,
        Operation::WaitBundle,
    ] {
        assert_eq!(
            db.authorize(&bob(), operation, Target::Bundle(&id))
                .unwrap(),
            Authorization::Allowed,
            "{operation:?}"
        );
        assert_eq!(
            db.authorize(&bob(), operation, Target::Task("t-team"))
                .unwrap(),
            Authorization::Allowed,
            "{operation:?} on the task"
        );
    }
    assert!(matches!(
        db.wait_bundle(&bob(), &id, Duration::ZERO),
        Err(Error::TimedOut)
    ));
    // The JSON door and HTTP agree.
    let (status, body) = door(db, "get_bundle", &user("bob"), &json!({"pending_id": id}));
    assert_eq!(status, 200, "{body}");
    let server = start(db);
    let bob_token = db.add_token(&bob(), "bob").unwrap().token;
    let over_http = get(&server, &bob_token, &format!("/api/v1/clarification/{id}"));
    assert_eq!(over_http.text(), format!("200 {body}"));

    // A wait of bob's ends with bob's answer.
    let waiter = {
        let handle = db.reopen();
        let id = id.clone();
        std::thread::spawn(move || handle.wait_bundle(&bob(), &id, Duration::from_secs(30)))
    };
    let answered = db
        .resolve_bundle(&bob(), &id, &one_answer("as a member"))
        .unwrap();
    assert!(answered.claimed);
    let waited = waiter.join().unwrap().unwrap();
    assert_eq!(waited.status, BundleStatus::Answered);
    assert_eq!(waited.response, answered.response);
    assert_eq!(resolution(db, &id).resolved_by_id.as_deref(), Some("bob"));
    assert!(db.get_bundle(&bob(), &id).unwrap().decided_by_caller);

    // Its events: asked and resolved, to bob and the owner, not to zed.
    for principal in [bob(), olga()] {
        let events = events_of(db, &principal, "");
        assert_eq!(
            about(&events, &id),
            ["bundle.asked", "bundle.resolved"],
            "{principal:?}"
        );
        assert!(
            events.iter().any(|(kind, _)| kind == "workspace.members"),
            "{principal:?} sees the workspace's members event"
        );
    }
    assert!(events_of(db, &zed(), "").is_empty());
    // A settled bundle of the workspace stays in bob's history.
    let settled = db
        .list_settled(&bob(), &clarion::SettledRequest::default())
        .unwrap();
    assert!(
        format!("{settled:?}").contains(&id),
        "bob's history holds {id}"
    );
}

/// PPL-3, AUTH-5: zed, in no way a member, gets none of it: the listing,
/// summary and events leave the bundle out and every per-bundle call, in
/// the JSON door and over HTTP, answers the bytes of an absent id — while
/// it is pending and once it is answered.
fn ppl_3_a_non_member_gets_the_absent_ids_not_found(db: &TestDb) {
    let session = team(db);
    let id = ask(db, &session, 1);
    let server = start(db);
    let zed_token = db.add_token(&zed(), "zed").unwrap().token;
    let zed_bot = Principal::agent("zed", "bot", Grant::ALL);
    let zed_bot_token = db.add_token(&zed_bot, "zed bot").unwrap().token;
    let zed_bot_json = json!({"kind": "agent", "user_id": "zed", "agent_id": "bot",
        "grants": ["questions:read", "questions:answer"]});
    for round in ["pending", "answered"] {
        assert!(!listed(db, &zed(), &id), "{round}");
        assert!(!listed(db, &zed_bot, &id), "{round}");
        assert_eq!(db.summary(&zed()).unwrap().pending_bundles, 0, "{round}");
        assert!(events_of(db, &zed(), "").is_empty(), "{round}");
        hidden_in_the_door(db, &user("zed"), &id, round);
        hidden_in_the_door(db, &zed_bot_json, &id, round);
        hidden_over_http(&server.base, &zed_token, &id, round);
        hidden_over_http(&server.base, &zed_bot_token, &id, round);
        assert!(matches!(
            db.authorize(&zed(), Operation::GetBundle, Target::Task("t-team")),
            Ok(Authorization::Denied(Denial::NotFound))
        ));
        if round == "pending" {
            // Nothing zed sent touched it.
            assert_untouched(db, &id);
            assert!(
                db.resolve_bundle(&bob(), &id, &one_answer("member"))
                    .unwrap()
                    .claimed
            );
        }
    }
    assert_eq!(resolution(db, &id).resolved_by_id.as_deref(), Some("bob"));
}

/// PPL-4: from `set_members`' commit on, the removed member's listing,
/// summary and events leave the workspace out and its per-bundle calls
/// are the absent id's not-found; what it decided before stays decided;
/// the owner and the remaining members see on.
fn ppl_4_a_removed_member_loses_the_workspace_at_once(db: &TestDb) {
    let session = team(db);
    db.set_members(TEAM, &members(&["bob", "carol"])).unwrap();
    let decided = ask(db, &session, 1);
    assert!(
        db.resolve_bundle(&bob(), &decided, &one_answer("before"))
            .unwrap()
            .claimed
    );
    let pending = ask(db, &session, 1);
    assert!(listed(db, &bob(), &pending));
    wait_until_readable(db);
    let mark = db.events_head(&Principal::System).unwrap();

    // Through the JSON door, as the host does.
    let (status, body) = door(
        db,
        "set_members",
        &json!({"kind": "system"}),
        &json!({"workspace_id": TEAM, "members": ["carol"]}),
    );
    assert_eq!((status, body.as_str()), (200, r#"{"ok":true}"#));

    assert!(!listed(db, &bob(), &pending));
    assert_eq!(db.summary(&bob()).unwrap().pending_bundles, 0);
    for id in [&pending, &decided] {
        hidden_in_the_door(db, &user("bob"), id, "removed");
    }
    let settled = db
        .list_settled(&bob(), &clarion::SettledRequest::default())
        .unwrap();
    assert!(!format!("{settled:?}").contains(&decided), "{settled:?}");
    // Events read after the change are filtered by the new set: bob reads
    // none of the workspace's, old or new (not even the members event).
    let later = ask(db, &session, 1);
    assert!(events_of(db, &bob(), "").is_empty());
    let carol = Principal::user("carol");
    assert_eq!(
        about(&events_of(db, &carol, &mark), &later),
        ["bundle.asked"]
    );
    let owner_sees = events_of(db, &olga(), &mark);
    assert!(owner_sees.contains(&("workspace.members".to_owned(), String::new())));
    assert!(listed(db, &carol, &pending) && listed(db, &olga(), &pending));
    // Nothing already decided changes.
    let stored = db.get_bundle(&Principal::System, &decided).unwrap();
    assert_eq!(stored.status, BundleStatus::Answered);
    assert_eq!(
        resolution(db, &decided).resolved_by_id.as_deref(),
        Some("bob")
    );
    // Back among the members, bob sees it all again.
    db.set_members(TEAM, &members(&["bob"])).unwrap();
    assert!(listed(db, &bob(), &pending));
    assert!(db.get_bundle(&bob(), &decided).unwrap().decided_by_caller);
}

/// PPL-4 over a real `clarion serve`: the removed member's open event
/// stream stays open and delivers no later event of the workspace (the
/// owner's does), and its long-poll wait on a bundle of the workspace
/// answers the absent id's not-found at its next check, well before its
/// timeout.
fn ppl_4_a_removed_members_stream_and_wait_over_clarion_serve(db: &TestDb) {
    let session = team(db);
    let open = open_session(db);
    let waited_on = ask(db, &session, 1);
    let token = |principal: Principal| db.add_token(&principal, "t").unwrap().token;
    let (system, bob_token, olga_token) = (token(Principal::System), token(bob()), token(olga()));
    let served = serve(&db.url, &["--no-sweep"]);
    wait_until_readable(db);
    let stream = |token: &str| -> Stream {
        let stream = open_request(
            client()
                .get(served.url("/api/v1/events"))
                .bearer_auth(token),
        );
        assert_eq!(stream.status, 200);
        stream
    };
    let (bob_stream, olga_stream) = (stream(&bob_token), stream(&olga_token));
    let before = ask(db, &session, 1);
    assert_eq!(bob_stream.next().pending_id(), before);
    assert_eq!(olga_stream.next().pending_id(), before);

    // bob waits on a bundle of the workspace.
    let wait_url = served.url(&format!(
        "/api/v1/clarification/{waited_on}/wait?timeout_ms=40000"
    ));
    let waiter = {
        let bob_token = bob_token.clone();
        std::thread::spawn(move || send(client().get(wait_url).bearer_auth(bob_token)))
    };
    let metrics = served.url("/metrics");
    eventually(Duration::from_secs(30), "bob's wait began", || {
        waits_in_flight(&metrics, &system) >= 1
    });

    // The host removes bob through `/rpc`, as system.
    let removed_at = Instant::now();
    let removed = send(
        client()
            .post(served.url("/api/v1/rpc/set_members"))
            .bearer_auth(&system)
            .header("content-type", "application/json")
            .body(json!({"workspace_id": TEAM, "members": []}).to_string()),
    );
    assert_eq!(removed.text(), r#"200 {"ok":true}"#);
    let waited = waiter.join().unwrap();
    let took = removed_at.elapsed();
    let absent = send(
        client()
            .get(served.url(&format!("/api/v1/clarification/{ABSENT}/wait?timeout_ms=0")))
            .bearer_auth(&bob_token),
    );
    assert_eq!(waited.text(), absent.text(), "after {took:?}");
    assert_eq!(
        waited.text(),
        format!(
            "404 {}",
            envelope::error(&Error::NotFound(Entity::Bundle)).body_text()
        )
    );
    // At its next check, not at its 40 s timeout nor at the 15 s
    // keep-alive check (HTTP-10): the member change wakes every wait, in
    // this process and (announced, WAIT-3a) in others.
    assert!(
        took < Duration::from_secs(10),
        "the invisible wait answered after {took:?}"
    );
    println!("the invisible wait answered {took:?} after the removal");

    // Later events of the workspace reach the owner, not bob; bob's stream
    // is still open and delivers what he still sees.
    let after = ask(db, &session, 1);
    db.resolve_bundle(&olga(), &after, &one_answer("owner"))
        .unwrap();
    let everyone = ask(db, &open, 1);
    let owner_heard: Vec<(String, String)> = (0..4)
        .map(|_| {
            let frame = olga_stream.next();
            (frame.event().to_owned(), frame.pending_id())
        })
        .collect();
    assert_eq!(
        owner_heard,
        [
            ("workspace.members".to_owned(), String::new()),
            ("bundle.asked".to_owned(), after.clone()),
            ("bundle.resolved".to_owned(), after.clone()),
            ("bundle.asked".to_owned(), everyone.clone()),
        ]
    );
    let next = bob_stream.next();
    assert_eq!(
        (next.event(), next.pending_id()),
        ("bundle.asked", everyone.clone()),
        "bob's stream delivered {next:?} before the bundle he sees"
    );
    // And over HTTP his per-bundle calls are the absent id's.
    hidden_over_http(&served.base, &bob_token, &waited_on, "removed");
    let listed_over_http = get_served(&served.base, &bob_token, "/api/v1/clarification");
    assert_eq!(listed_over_http.status, 200);
    let ids: Vec<String> = listed_over_http.json()["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|bundle| bundle["pending_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, [everyone]);
}

fn get_served(base: &str, token: &str, path: &str) -> Reply {
    send(client().get(format!("{base}{path}")).bearer_auth(token))
}

/// PPL-4: a member's answer and that member's removal, released together
/// round after round, commit in one order or the other: either the answer
/// committed (bob's, before the removal's event) or the answer is the
/// not-found and the bundle stays pending; never an answer of bob's after
/// his removal committed.
fn ppl_4_a_members_answer_and_its_removal_serialize(db: &TestDb) {
    let session = team(db);
    let other = db.reopen();
    let (mut answered, mut refused) = (0, 0);
    for round in 0..20 {
        db.set_members(TEAM, &members(&["bob"])).unwrap();
        let id = ask(db, &session, 1);
        wait_until_readable(db);
        let mark = db.events_head(&Principal::System).unwrap();
        let barrier = Barrier::new(2);
        let (resolved, removed) = std::thread::scope(|scope| {
            let answering = scope.spawn(|| {
                barrier.wait();
                db.resolve_bundle(&bob(), &id, &one_answer("race"))
            });
            let removing = scope.spawn(|| {
                barrier.wait();
                other.set_members(TEAM, &[])
            });
            (answering.join().unwrap(), removing.join().unwrap())
        });
        removed.unwrap_or_else(|e| panic!("round {round}: set_members: {e}"));
        let log = events_of(db, &Principal::System, &mark);
        let members_at = log
            .iter()
            .position(|(kind, _)| kind == "workspace.members")
            .unwrap_or_else(|| panic!("round {round}: no members event in {log:?}"));
        let resolved_at = log
            .iter()
            .position(|(kind, pending)| kind == "bundle.resolved" && *pending == id);
        match resolved {
            Ok(won) => {
                answered += 1;
                assert!(won.claimed, "round {round}");
                assert_eq!(won.status, BundleStatus::Answered, "round {round}");
                let stored = resolution(db, &id);
                assert_eq!(
                    (
                        stored.resolved_by_kind.as_deref(),
                        stored.resolved_by_id.as_deref()
                    ),
                    (Some("user"), Some("bob")),
                    "round {round}"
                );
                let resolved_at = resolved_at
                    .unwrap_or_else(|| panic!("round {round}: no resolved event in {log:?}"));
                assert!(
                    resolved_at < members_at,
                    "round {round}: bob's answer committed after his removal: {log:?}"
                );
            }
            Err(Error::NotFound(Entity::Bundle)) => {
                refused += 1;
                assert_eq!(resolved_at, None, "round {round}: {log:?}");
                assert_untouched(db, &id);
                assert_eq!(
                    db.get_bundle(&Principal::System, &id).unwrap().status,
                    BundleStatus::Pending,
                    "round {round}"
                );
            }
            Err(other) => panic!("round {round}: the member's answer: {other:?}"),
        }
        assert!(!listed(db, &bob(), &id), "round {round}");
    }
    println!("PPL-4 race: {answered} answered first, {refused} removed first");
    assert_eq!(answered + refused, 20);
}

/// PPL-4: a membership change blocks no reader. While `set_members`
/// holds its transaction open (its writes, its event and the workspace's
/// lock taken, paused before the commit), another handle lists, reads and
/// counts the bundle for the member about to go, by the set still
/// committed; once it commits, the same calls answer by the new set.
fn ppl_4_a_membership_change_blocks_no_reader(db: &TestDb) {
    use clarion::test_hooks::{points, FailAction, Gate};
    let session = team(db);
    db.set_members(TEAM, &members(&["bob"])).unwrap();
    let id = ask(db, &session, 1);
    let reader = db.reopen();
    let gate = Gate::new();
    db.arm_failpoint(
        points::MEMBERS_BEFORE_COMMIT,
        FailAction::Block(gate.clone()),
    );
    std::thread::scope(|scope| {
        let removing = scope.spawn(|| db.set_members(TEAM, &[]));
        assert!(
            gate.wait_arrival(Duration::from_secs(10)),
            "set_members never paused"
        );
        let (done, seen) = std::sync::mpsc::channel();
        let (reader, id) = (&reader, &id);
        scope.spawn(move || {
            let reads = (
                listed(reader, &bob(), id),
                reader.get_bundle(&bob(), id).is_ok(),
                reader.summary(&bob()).unwrap().pending_bundles,
                reader.members(TEAM).unwrap(),
            );
            done.send(reads).unwrap();
        });
        // A reader that waited for the change would wait for ever: the
        // gate opens only once it answered (or, failing, after 30 s).
        let answered = seen.recv_timeout(Duration::from_secs(30));
        gate.open();
        removing.join().unwrap().unwrap();
        assert_eq!(
            answered.expect("a reader waited for set_members to commit"),
            (true, true, 1, members(&["bob"])),
            "readers see the set still committed"
        );
    });
    db.disarm_failpoint(points::MEMBERS_BEFORE_COMMIT);
    assert!(!listed(&reader, &bob(), &id));
    assert!(matches!(
        reader.get_bundle(&bob(), &id),
        Err(Error::NotFound(Entity::Bundle))
    ));
    assert_eq!(reader.summary(&bob()).unwrap().pending_bundles, 0);
}

/// PPL-6: a grant before its time shows nothing (listing, get, the door's
/// per-bundle calls: the absent id's bytes); from `visible_from` on, by
/// the handle's clock, it shows that one bundle — listed, read, heard,
/// answered — but never its task (`authorize` on the `task_id`,
/// `pending_actions`) nor another bundle of it.
fn ppl_6_a_grant_shows_one_bundle_from_its_time_on(db: &TestDb) {
    let session = team(db);
    let id = ask(db, &session, 1);
    let sibling = ask(db, &session, 1);
    let from = Timestamp::from_micros(EPOCH.as_micros() + HOUR);
    grant_escalation(db, &id, "gina", from).unwrap();
    let gina = Principal::user("gina");
    let gina_bot = Principal::agent("gina", "bot", [Grant::QuestionsRead]);
    let hidden = |when: &str| {
        assert!(!listed(db, &gina, &id), "{when}");
        assert!(!listed(db, &gina_bot, &id), "{when}");
        assert!(
            matches!(
                db.get_bundle(&gina, &id),
                Err(Error::NotFound(Entity::Bundle))
            ),
            "{when}"
        );
        assert_eq!(db.summary(&gina).unwrap().pending_bundles, 0, "{when}");
        assert!(about(&events_of(db, &gina, ""), &id).is_empty(), "{when}");
        hidden_in_the_door(db, &user("gina"), &id, when);
    };
    hidden("an hour before");
    db.clock.advance_micros(HOUR - 1);
    hidden("a microsecond before");
    db.clock.advance_micros(1);

    // From its time on: that bundle, and only it.
    assert!(listed(db, &gina, &id));
    assert!(listed(db, &gina_bot, &id));
    assert!(!listed(db, &gina, &sibling));
    assert_eq!(db.summary(&gina).unwrap().pending_bundles, 1);
    assert_eq!(
        db.get_bundle(&gina, &id).unwrap().status,
        BundleStatus::Pending
    );
    // The door shows gina what it shows the owner.
    let read = |who: &str| door(db, "get_bundle", &user(who), &json!({"pending_id": id}));
    assert_eq!(read("gina"), read("olga"));
    assert_eq!(read("gina").0, 200);
    hidden_in_the_door(db, &user("gina"), &sibling, "the sibling");
    assert_eq!(about(&events_of(db, &gina, ""), &id), ["bundle.asked"]);
    assert_eq!(
        db.authorize(&gina, Operation::ResolveBundle, Target::Bundle(&id))
            .unwrap(),
        Authorization::Allowed
    );
    // Never the task: authorize on its task_id is the absent task's
    // not-found, and its pending actions are a stranger's.
    for operation in [
        Operation::GetBundle,
        Operation::ResolveBundle,
        Operation::ListPending,
    ] {
        assert_eq!(
            db.authorize(&gina, operation, Target::Task("t-team"))
                .unwrap(),
            Authorization::Denied(Denial::NotFound),
            "{operation:?}"
        );
    }
    for operation in ["get_bundle", "resolve_bundle"] {
        let on_task = door(
            db,
            "authorize",
            &user("gina"),
            &json!({"operation": operation, "task_id": "t-team"}),
        );
        let on_absent = door(
            db,
            "authorize",
            &user("gina"),
            &json!({"operation": operation, "task_id": "t-absent"}),
        );
        assert_eq!(on_task, on_absent, "{operation}");
    }
    let tasks = vec!["t-team".to_owned()];
    assert_eq!(
        format!("{:?}", db.pending_actions(&gina, &tasks)),
        format!("{:?}", db.pending_actions(&zed(), &tasks))
    );
    // And answered by the granted user.
    let won = db
        .resolve_bundle(&gina, &id, &one_answer("escalated"))
        .unwrap();
    assert!(won.claimed);
    assert_eq!(resolution(db, &id).resolved_by_id.as_deref(), Some("gina"));
    assert_eq!(
        about(&events_of(db, &gina, ""), &id),
        ["bundle.asked", "bundle.resolved"]
    );
    assert_eq!(
        db.wait_bundle(&gina, &id, Duration::ZERO).unwrap().status,
        BundleStatus::Answered
    );
    // The sibling, which the grant never reached, is untouched.
    assert_untouched(db, &sibling);
}

/// PPL-5: a member of six workspaces pages through all it sees, in order,
/// each bundle once; and where the first page's candidates are all refused
/// by the membership predicate (due by the clock, their hint not yet
/// cleared: ACT-4), the walk goes on past them to what is listable. History
/// pages the same way.
fn ppl_5_a_members_walk_pages_many_workspaces_past_refused_candidates(db: &TestDb) {
    let bob = Principal::user("bob");
    let mut sessions = Vec::new();
    for w in 0..6 {
        let workspace = format!("w-many-{w}");
        db.upsert_workspace(WorkspaceUpsert::new(&workspace).owner("olga"))
            .unwrap();
        db.set_members(&workspace, &members(&["bob"])).unwrap();
        sessions.push(session_in(db, &format!("many-{w}"), &workspace, Some(true)));
    }
    // 60 bundles due in a minute, in the first workspace, asked first.
    for _ in 0..60 {
        crate::deadlines_settling::ask_due(
            db,
            &sessions[0],
            Duration::from_secs(60),
            clarion::OnExpire::Expire,
        );
    }
    // Then 3 in each workspace, interleaved.
    let mut expected = Vec::new();
    for _ in 0..3 {
        for session in &sessions {
            expected.push(ask(db, session, 1));
        }
    }
    db.clock.advance_micros(120_000_000);
    // Nothing settles them meanwhile: their hints stay set.
    assert!(!clarion::test_hooks::sweeper_running(db));
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = db
            .list_pending(
                &bob,
                &clarion::ListRequest {
                    cursor: cursor.clone(),
                    limit: Some(4),
                    ..clarion::ListRequest::default()
                },
            )
            .unwrap();
        seen.extend(page.bundles.iter().map(|b| b.pending_id.clone()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, expected, "every listable bundle once, in order");
    assert_eq!(
        db.summary(&bob).unwrap().pending_bundles,
        expected.len() as i64
    );
    // History: answer them all, newest resolution first.
    for id in &expected {
        db.resolve_bundle(&olga(), id, &one_answer("done")).unwrap();
        db.clock.advance_micros(1_000);
    }
    let mut history = Vec::new();
    let mut cursor = None;
    loop {
        let page = db
            .list_settled(
                &bob,
                &clarion::SettledRequest {
                    cursor: cursor.clone(),
                    limit: Some(5),
                    ..clarion::SettledRequest::default()
                },
            )
            .unwrap();
        history.extend(page.bundles.iter().map(|b| b.bundle.pending_id.clone()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let newest_first: Vec<String> = expected.iter().rev().cloned().collect();
    assert_eq!(history, newest_first);
}
