//! §13 the event log (EVT-1..3): one event per change a listener cares
//! about, appended in the changing transaction; `events_after` filtered by
//! what the reader may see now; positions that never go backwards, also
//! when PostgreSQL transactions commit out of order; prune's reset.

use std::time::Duration;

use clarion::test_hooks::{points, FailAction, Gate};
use clarion::{
    envelope, Event, EventPage, Grant, Principal, SessionState, SessionUpsert, WorkspaceUpsert,
};
use serde_json::{json, Value};

use crate::support::abi::{abi_call, abi_open};
use crate::support::*;

/// Every event `principal` may see, read page by page from the start,
/// once every committed event is readable.
fn all_events(db: &TestDb, principal: &Principal) -> Vec<Event> {
    wait_until_readable(db);
    let mut after = String::new();
    let mut events = Vec::new();
    loop {
        let page = db.events_after(principal, &after, Some(1000)).unwrap();
        events.extend(page.events);
        if page.next == after {
            return events;
        }
        after = page.next;
    }
}

/// EVT-1a on PostgreSQL: readers stop below the oldest transaction still
/// open anywhere in the cluster, and other tests run beside this one (one
/// of them holds a transaction open on purpose). Waits until every event
/// committed so far is readable.
pub fn wait_until_readable(db: &TestDb) {
    use diesel::prelude::*;
    #[derive(QueryableByName)]
    struct Pending {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        behind: i64,
    }
    if db.backend() != clarion::Backend::Postgres {
        return;
    }
    eventually(
        Duration::from_secs(30),
        "every event becomes readable",
        || {
            let behind = db.raw(|conn| {
                diesel::sql_query(
                    "SELECT count(*) AS behind FROM events \
                 WHERE txid >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint",
                )
                .get_result::<Pending>(conn)
                .unwrap()
                .behind
            });
            behind == 0
        },
    );
}

fn summary(events: &[Event]) -> Vec<(String, String, Value)> {
    events
        .iter()
        .map(|event| {
            let what = match event.event_type.as_str() {
                "bundle.resolved" => event.data["status"].clone(),
                "bundle.closed" => event.data["reason"].clone(),
                _ => Value::Null,
            };
            (event.event_type.clone(), event.pending_id.clone(), what)
        })
        .collect()
}

fn typed(kind: &str, pending_id: &str, what: Value) -> (String, String, Value) {
    (kind.to_owned(), pending_id.to_owned(), what)
}

dual_backend!(
    evt_1_each_change_appends_one_event,
    evt_1_data_is_frozen_at_append,
    evt_1_a_rolled_back_change_appends_nothing,
    evt_2_visibility_is_decided_at_read_time,
    evt_2_limits_and_positions,
    evt_3_prune_resets_readers_behind_it,
    evt_4_a_position_past_the_head_resets_to_the_head,
    evt_4_past_the_head_of_an_empty_log,
    evt_1a_a_late_commit_is_never_skipped,
    evt_1a_concurrent_writers_and_a_follower,
    evt_2_through_the_json_door,
    evt_2_envelope_is_pinned,
    evt_subscribers_are_woken_after_commits
);

/// EVT-1: asking, answering, rejecting, cancelling, a session ending, a
/// new turn and deletions each append their one event; a lost race, a
/// replayed ask and a bundle already settled append nothing.
fn evt_1_each_change_appends_one_event(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let answered = ask(db, &session, 1);
    let keyed = clarion::AskRequest {
        idempotency_key: Some("k".into()),
        ..ask_request(&mirror(db, "r", "alice"), 1)
    };
    let replay = db.ask(&keyed).unwrap();
    assert!(!db.ask(&keyed).unwrap().created);
    db.resolve_bundle(&alice(), &answered, &one_answer("yes"))
        .unwrap();
    // The loser's resolve changes nothing and appends nothing.
    db.resolve_bundle(&alice(), &answered, &rejecting("late"))
        .unwrap();
    let rejected = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &rejected, &rejecting("no"))
        .unwrap();
    let cancelled = ask(db, &session, 1);
    db.cancel_bundle(&alice(), &cancelled).unwrap();
    let superseded = ask(db, &session, 1);
    db.begin_turn(&session).unwrap();
    let expired = ask(db, &session, 1);
    db.set_session_state(&session, SessionState::Completed)
        .unwrap();
    let deleted_with_session = ask(db, &mirror(db, "b", "alice"), 1);
    db.delete_session("s-b").unwrap();
    let deleted_with_task = ask(db, &mirror(db, "c", "alice"), 1);
    db.delete_task("t-c").unwrap();
    let asked = |id: &str| typed("bundle.asked", id, Value::Null);
    assert_eq!(
        summary(&all_events(db, &Principal::System)),
        vec![
            asked(&answered),
            asked(&replay.pending_id),
            typed("bundle.resolved", &answered, json!("answered")),
            asked(&rejected),
            typed("bundle.resolved", &rejected, json!("rejected")),
            asked(&cancelled),
            typed("bundle.resolved", &cancelled, json!("cancelled")),
            asked(&superseded),
            typed("bundle.closed", &superseded, json!("superseded")),
            asked(&expired),
            typed("bundle.closed", &expired, json!("expired")),
            asked(&deleted_with_session),
            typed("bundle.closed", &deleted_with_session, json!("deleted")),
            asked(&deleted_with_task),
            typed("bundle.closed", &deleted_with_task, json!("deleted")),
        ]
    );
}

/// EVT-1, EVT-2: the data is frozen at append — the LIST-6 element as
/// asked, the committed resolution — and the event keeps its bundle's
/// task; it outlives the bundle.
fn evt_1_data_is_frozen_at_append(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 2);
    let listed = db.list_pending(&alice(), &Default::default()).unwrap();
    let won = db
        .resolve_bundle(
            &alice(),
            &pending_id,
            &answering(vec![
                answer("q1", &["q1_opt2"], "first"),
                answer("q2", &[], "second"),
            ]),
        )
        .unwrap();
    db.delete_task("t-a").unwrap();
    let events = all_events(db, &Principal::System);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].event_type, "bundle.asked");
    assert_eq!(events[0].data, envelope::bundle(&listed.bundles[0]));
    assert_eq!(events[0].task_id, "t-a");
    assert_eq!(events[1].event_type, "bundle.resolved");
    assert_eq!(
        events[1].data,
        json!({"status": "answered", "response": envelope::response(&won.response)})
    );
    assert_eq!(events[1].pending_id, pending_id);
    assert_eq!(events[1].at, won.response.responded_at.unwrap());
}

/// EVT-1: a change that rolls back appends nothing.
fn evt_1_a_rolled_back_change_appends_nothing(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.arm_failpoint(points::ASK_BEFORE_COMMIT, FailAction::Error);
    assert!(db.ask(&ask_request(&session, 1)).is_err());
    db.disarm_failpoint(points::ASK_BEFORE_COMMIT);
    assert!(all_events(db, &Principal::System).is_empty());
    assert_eq!(
        db.list_pending(&alice(), &Default::default())
            .unwrap()
            .bundles
            .len(),
        0
    );
}

/// EVT-2, AUTH-3/5/6: what a reader may see is decided when it reads,
/// from the workspace and kind the event recorded; `next` advances past
/// events it may not see.
fn evt_2_visibility_is_decided_at_read_time(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let question = ask(db, &session, 1);
    let permission = ask_permission(db, &session, 1);
    let open = ask(db, &session_in(db, "open", "", None), 1);
    let ids = |events: Vec<Event>| -> Vec<String> {
        events.into_iter().map(|event| event.pending_id).collect()
    };
    let (question, permission, open) = (question.as_str(), permission.as_str(), open.as_str());
    assert_eq!(ids(all_events(db, &alice())), [question, permission, open]);
    assert_eq!(ids(all_events(db, &alice_bot())), [question, open]);
    assert_eq!(ids(all_events(db, &bob())), [open]);
    // Bob sees none of the first two, yet his reader moves past them.
    wait_until_readable(db);
    let page = db.events_after(&bob(), "", Some(2)).unwrap();
    assert!(page.events.is_empty());
    assert_ne!(page.next, "");
    let rest = db.events_after(&bob(), &page.next, None).unwrap();
    assert_eq!(ids(rest.events), [open]);
    // The workspace changes hands: the old events follow it.
    db.upsert_workspace(WorkspaceUpsert::new("w-a").owner("bob"))
        .unwrap();
    assert_eq!(ids(all_events(db, &bob())), [question, permission, open]);
    assert_eq!(ids(all_events(db, &alice())), [open]);
    // An agent without `questions:read` may not read at all.
    let denied = db.events_after(
        &Principal::agent("alice", "bot", [Grant::QuestionsAnswer]),
        "",
        None,
    );
    assert!(matches!(denied, Err(clarion::Error::CapabilityDenied)));
    assert!(matches!(
        db.events_after(&Principal::Unclassified, "", None),
        Err(clarion::Error::CapabilityDenied)
    ));
}

/// EVT-2: `limit` defaults to 100, below 1 is 100, above 1,000 is
/// clamped; a malformed position is a validation error naming `after`.
fn evt_2_limits_and_positions(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for _ in 0..55 {
        let pending_id = ask(db, &session, 1);
        db.cancel_bundle(&alice(), &pending_id).unwrap();
    }
    wait_until_readable(db);
    let count = |limit| db.events_after(&alice(), "", limit).unwrap().events.len();
    assert_eq!(count(None), 100);
    assert_eq!(count(Some(0)), 100);
    assert_eq!(count(Some(-5)), 100);
    assert_eq!(count(Some(7)), 7);
    assert_eq!(count(Some(5_000)), 110);
    for bad in ["x", "-1", "1-", "1-2-3", "¹", " 1"] {
        assert_invalid(db.events_after(&alice(), bad, None), "after");
    }
    // Past the end: nothing, and `next` stays where it was.
    let head = db.events_head(&alice()).unwrap();
    let page = db.events_after(&alice(), &head, None).unwrap();
    assert!(page.events.is_empty());
    assert_eq!(page.next, head);
    assert!(!page.reset);
}

/// EVT-3: prune deletes old events and remembers the highest position
/// it deleted; a reader behind it is told to reset, one that starts
/// afresh is not.
fn evt_3_prune_resets_readers_behind_it(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    db.cancel_bundle(&alice(), &first).unwrap();
    wait_until_readable(db);
    let behind = db.events_after(&alice(), "", Some(1)).unwrap().next;
    db.clock.advance_micros(10 * 86_400_000_000);
    let second = ask(db, &session, 1);
    db.prune(Duration::from_secs(86_400)).unwrap();
    wait_until_readable(db);
    let page = db.events_after(&alice(), &behind, None).unwrap();
    assert!(page.reset, "a reader behind the pruned events must reset");
    assert_eq!(page.events.len(), 1);
    assert_eq!(page.events[0].pending_id, second);
    let fresh = db.events_after(&alice(), "", None).unwrap();
    assert!(!fresh.reset);
    assert_eq!(fresh.events.len(), 1);
    let current = db.events_after(&alice(), &fresh.next, None).unwrap();
    assert!(!current.reset && current.events.is_empty());
}

/// A position after `head` (a position's text) that this log never gave
/// out: the same transaction, a later sequence number.
fn past(head: &str) -> String {
    match head.rsplit_once('-') {
        Some((txid, seq)) => format!("{txid}-{}", seq.parse::<i64>().unwrap() + 1000),
        None => (head.parse::<i64>().unwrap() + 1000).to_string(),
    }
}

/// EVT-4: a position past the head (a database restored from a backup,
/// another server) answers `reset` with no events and `next` at the head,
/// from which a reader gets every later event; in the Rust API, through
/// the JSON door and the C ABI alike. Another backend's shape of position
/// is past this head too.
fn evt_4_a_position_past_the_head_resets_to_the_head(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let first = ask(db, &session, 1);
    db.cancel_bundle(&alice(), &first).unwrap();
    wait_until_readable(db);
    let head = db.events_head(&alice()).unwrap();
    for beyond in [past(&head), "9000000000000-1".to_owned()] {
        let page = db.events_after(&alice(), &beyond, None).unwrap();
        assert!(page.reset, "{beyond} is past {head}");
        assert!(page.events.is_empty());
        assert_eq!(page.next, head);
        let request = json!({
            "op": "events_after",
            "principal": {"kind": "user", "user_id": "alice"},
            "args": {"after": beyond},
        });
        let expected = json!({"status": 200, "body": {"events": [], "next": head, "reset": true}, "code": "", "field": ""});
        let reply = db.call(&request.to_string());
        assert_eq!(reply.status, 200);
        let body: Value = serde_json::from_str(&reply.body_text()).unwrap();
        assert_eq!(body, expected["body"]);
        let handle = abi_open(&db.url);
        assert_eq!(abi_call(handle, &request), expected);
        clarion::ffi::clarion_close(handle as *mut clarion::ffi::Handle);
    }
    // Going on from `next`, the reader gets what follows, once.
    let page = db.events_after(&alice(), &past(&head), None).unwrap();
    let later = ask(db, &session, 1);
    wait_until_readable(db);
    let after = db.events_after(&alice(), &page.next, None).unwrap();
    assert!(!after.reset);
    assert_eq!(after.events.len(), 1);
    assert_eq!(after.events[0].pending_id, later);
}

/// EVT-4 on a log with nothing in it: `reset`, and `next` is `""`, the
/// start, so the first event to come is read.
fn evt_4_past_the_head_of_an_empty_log(db: &TestDb) {
    let page = db.events_after(&alice(), "42", None).unwrap();
    assert!(page.reset);
    assert!(page.events.is_empty());
    assert_eq!(page.next, "");
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    wait_until_readable(db);
    let page = db.events_after(&alice(), &page.next, None).unwrap();
    assert!(!page.reset);
    assert_eq!(page.events[0].pending_id, pending_id);
}

/// EVT-1a: a writer that appended first but commits last is never
/// skipped. Writer A appends and pauses before its commit; writer B, on
/// another handle, appends after it (and on PostgreSQL commits first).
/// A reader meanwhile must not pass A's position; once A commits it
/// reads A, then B, from where it was.
fn evt_1a_a_late_commit_is_never_skipped(db: &TestDb) {
    let first = mirror(db, "a", "alice");
    let second = mirror(db, "b", "alice");
    let other = db.builder().open().unwrap();
    let gate = Gate::new();
    db.arm_failpoint(points::ASK_BEFORE_COMMIT, FailAction::Block(gate.clone()));
    std::thread::scope(|scope| {
        let a = scope.spawn(|| db.ask(&ask_request(&first, 1)));
        assert!(gate.wait_arrival(Duration::from_secs(10)), "A never paused");
        let b = scope.spawn(|| other.ask(&ask_request(&second, 1)));
        // PostgreSQL: B commits while A is open. SQLite: B waits for
        // A's write lock (writers are serialized), so there is nothing to
        // wait for: the pause only gives B the chance to get past A,
        // which it must not (well within its 5 s busy timeout).
        if db.backend() == clarion::Backend::Postgres {
            eventually(Duration::from_secs(30), "B commits while A is open", || {
                b.is_finished()
            });
        } else {
            std::thread::sleep(Duration::from_secs(2));
        }
        let early = db.events_after(&alice(), "", None).unwrap();
        assert!(
            early.events.is_empty(),
            "read past a transaction still open: {:?}",
            early.events
        );
        gate.open();
        let a = a.join().unwrap().unwrap();
        let b = b.join().unwrap().unwrap();
        wait_until_readable(db);
        let late = db.events_after(&alice(), &early.next, None).unwrap();
        let ids: Vec<&str> = late
            .events
            .iter()
            .map(|event| event.pending_id.as_str())
            .collect();
        assert_eq!(ids, [a.pending_id.as_str(), b.pending_id.as_str()]);
    });
    db.disarm_failpoint(points::ASK_BEFORE_COMMIT);
}

/// EVT-1a with real concurrency: writers on several handles, released
/// together, while a reader follows the log; the reader ends with every
/// event exactly once, in position order.
fn evt_1a_concurrent_writers_and_a_follower(db: &TestDb) {
    const WRITERS: usize = 4;
    const ASKS: usize = 15;
    let sessions: Vec<String> = (0..WRITERS)
        .map(|n| mirror(db, &format!("w{n}"), "alice"))
        .collect();
    let handles: Vec<clarion::Clarion> =
        (0..WRITERS).map(|_| db.builder().open().unwrap()).collect();
    let barrier = std::sync::Barrier::new(WRITERS + 1);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let followed = std::thread::scope(|scope| {
        for (handle, session) in handles.iter().zip(&sessions) {
            let (barrier, done) = (&barrier, &done);
            scope.spawn(move || {
                barrier.wait();
                for _ in 0..ASKS {
                    let pending_id = ask(handle, session, 1);
                    handle.cancel_bundle(&alice(), &pending_id).unwrap();
                }
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        barrier.wait();
        let mut after = String::new();
        let mut seen: Vec<Event> = Vec::new();
        loop {
            let finished = done.load(std::sync::atomic::Ordering::SeqCst) == WRITERS;
            if finished {
                // What is committed becomes readable (EVT-1a); then
                // one more pass must find the rest.
                wait_until_readable(db);
            }
            let page = db.events_after(&alice(), &after, Some(7)).unwrap();
            assert!(!page.reset);
            let progressed = !page.events.is_empty();
            seen.extend(page.events);
            after = page.next;
            if finished && !progressed {
                break seen;
            }
        }
    });
    assert_eq!(followed.len(), WRITERS * ASKS * 2);
    let everything = all_events(db, &Principal::System);
    assert_eq!(
        followed, everything,
        "the follower must see each event once, in order"
    );
    let mut ids: Vec<&str> = followed
        .iter()
        .map(|event| event.position.as_str())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), followed.len());
}

/// EVT-2 through the JSON door (and so the C ABI and `/rpc`): the
/// envelope's keys, always present, checked on raw JSON.
fn evt_2_through_the_json_door(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    wait_until_readable(db);
    let reply = db.call(
        &json!({
            "op": "events_after",
            "principal": {"kind": "user", "user_id": "alice"},
            "args": {"after": "", "limit": 10},
        })
        .to_string(),
    );
    assert_eq!(reply.status, 200);
    let body: Value = serde_json::from_str(&reply.body_text()).unwrap();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["events", "next", "reset"]);
    let event = &body["events"][0];
    let keys: Vec<&str> = event
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["position", "type", "at", "pending_id", "task_id", "data"]
    );
    assert_eq!(event["pending_id"], json!(pending_id));
    assert_eq!(event["type"], json!("bundle.asked"));
    let bad = db.call(
        &json!({
            "op": "events_after",
            "principal": {"kind": "user", "user_id": "alice"},
            "args": {"after": "nonsense"},
        })
        .to_string(),
    );
    assert_eq!(bad.status, 400);
    assert!(bad.body_text().contains("after"));
    let unknown = db.call(
        &json!({
            "op": "events_after",
            "principal": {"kind": "user", "user_id": "alice"},
            "args": {"since": ""},
        })
        .to_string(),
    );
    assert_eq!(unknown.status, 400);
    // `metrics` is in the matrix but is no JSON operation.
    let metrics = db.call(&json!({"op": "metrics", "principal": {"kind": "system"}}).to_string());
    assert_eq!(metrics.status, 400);
}

/// EVT-2: the events envelope, pinned (positions differ between the
/// backends by design and are replaced; everything else is identical).
fn evt_2_envelope_is_pinned(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let pending_id = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &pending_id, &one_answer("ok"))
        .unwrap();
    let expired = ask(db, &session, 1);
    db.set_session_state(&session, SessionState::Failed)
        .unwrap();
    let _ = expired;
    wait_until_readable(db);
    let page: EventPage = db.events_after(&alice(), "", None).unwrap();
    let mut body = envelope::events(&page).body;
    body["next"] = json!("<position>");
    for event in body["events"].as_array_mut().unwrap() {
        event["position"] = json!("<position>");
    }
    let mut settings = snapshot_settings();
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::assert_snapshot!(
            "envelope_events_after",
            serde_json::to_string_pretty(&body).unwrap()
        );
    });
}

/// HTTP-6's library half: a subscriber is called after a commit that
/// appended events (and may be called spuriously: on SQLite the
/// watcher cannot tell which commits appended), never after it
/// dropped its subscription.
fn evt_subscribers_are_woken_after_commits(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let (sender, received) = std::sync::mpsc::channel::<()>();
    let sender = std::sync::Mutex::new(sender);
    let subscription = db.subscribe_events(move || {
        let _ = sender.lock().unwrap().send(());
    });
    db.upsert_session(SessionUpsert::new(&session, "t-a").primary(false))
        .unwrap();
    ask(db, &session, 1);
    assert!(received.recv_timeout(Duration::from_secs(5)).is_ok());
    drop(subscription);
    // A wake already under way may hold the callback (and its sender) a
    // moment longer: wait until it let go, draining what it sent.
    eventually(Duration::from_secs(30), "the callback is released", || {
        matches!(
            received.try_recv(),
            Err(std::sync::mpsc::TryRecvError::Disconnected)
        )
    });
    ask(db, &session, 1);
    // The subscription's callback (and the sender it owned) is gone.
    assert_eq!(
        received.recv_timeout(Duration::from_millis(200)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
    );
}

dual_backend!(evt_subscribers_hear_other_handles);

/// HTTP-6, WAIT-3a: events appended by another handle (its own pool
/// and connections, as another process has) wake this handle's
/// subscribers through the handle's watcher, well within a second.
fn evt_subscribers_hear_other_handles(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let other = db.builder().open().unwrap();
    let (sender, received) = std::sync::mpsc::channel::<()>();
    let sender = std::sync::Mutex::new(sender);
    let ticked = db.watch_counts().checks;
    let _subscription = db.subscribe_events(move || {
        let _ = sender.lock().unwrap().send(());
    });
    // SQLite: the watcher's first check takes its baseline and wakes every
    // subscriber; once a second check is done that wake is in the channel,
    // so the one measured below is the other handle's. (PostgreSQL listens
    // before `subscribe_events` returns.)
    if db.backend() == clarion::Backend::Sqlite {
        eventually(
            Duration::from_secs(30),
            "the watcher's first checks",
            || db.watch_counts().checks >= ticked + 2,
        );
    }
    while received.try_recv().is_ok() {}
    let started = std::time::Instant::now();
    ask(&other, &session, 1);
    assert!(
        received.recv_timeout(Duration::from_secs(5)).is_ok(),
        "never woken"
    );
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(1), "woken after {waited:?}");
}
