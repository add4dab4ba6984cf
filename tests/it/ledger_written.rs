//! The attempt ledger, written (AUD-1, AUD-2, AUD-4, AUD-5): one entry per
//! attempt that passed the capability and visibility checks, through
//! every door, each with its channel and the exact digest of what it
//! submitted; a deadline's settlement records its own.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use clarion::test_hooks::FailAction;
use clarion::{AttemptView, Channel, Error, OnExpire, Principal, ResolveRequest};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::deadlines_settling::ask_due;
use crate::support::abi::{abi_call, abi_open};
use crate::support::server::{get, post, start, tokens};
use crate::support::*;

dual_backend!(
    aud_1_one_attempt_per_door_records_its_channel,
    aud_1_invalid_recorded_with_the_request_as_parsed,
    aud_1_denied_and_not_found_not_recorded,
    aud_1_deadline_entry_per_on_expire,
    aud_2_failed_record_leaves_reply_unchanged,
    aud_2_appender_flushes_on_close,
    aud_5_equal_submissions_share_one_digest,
    aud_5_cancel_and_no_longer_active_digests,
    rel_1_32_racers_1_won_31_lost_digests_match
);

/// AUD-3: an entry's keys, in order.
pub const ENTRY_KEYS: [&str; 7] = [
    "at",
    "principal_kind",
    "user_id",
    "agent_id",
    "channel",
    "outcome",
    "digest",
];

/// AUD-5: lowercase hex SHA-256 of a compact JSON text.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The AUD-5 text of a normalized answer to `q1`.
fn answered_q1(options: &[&str], text: &str) -> String {
    json!({
        "answers": [{"question_id": "q1", "selected_options": options, "custom_text": text}],
        "rejected": false,
        "reject_reason": "",
    })
    .to_string()
}

pub fn entries(db: &TestDb, pending_id: &str) -> Vec<AttemptView> {
    db.attempts(&Principal::System, pending_id).unwrap()
}

fn outcomes(db: &TestDb, pending_id: &str) -> Vec<(String, String)> {
    entries(db, pending_id)
        .into_iter()
        .map(|entry| (entry.channel, entry.outcome))
        .collect()
}

fn pair(channel: &str, outcome: &str) -> (String, String) {
    (channel.to_owned(), outcome.to_owned())
}

fn alice_answers(text: &str) -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": text}]})
}

/// AUD-4: a resolve through each door records that door: the Rust API
/// (`rust`, and `via`), the C ABI (`c_abi`), an MCP tool call (`mcp`),
/// the HTTP door's route and its `/rpc` (`http`), and the command line
/// (`cli`). The bundle is won once, then lost through each next door.
fn aud_1_one_attempt_per_door_records_its_channel(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &id, &one_answer("rust"))
        .unwrap();
    db.via(Channel::Cli)
        .resolve_bundle(&alice(), &id, &one_answer("via"))
        .unwrap();
    let tool = db
        .call_tool(
            &alice(),
            "answer_question",
            &json!({"pending_id": id, "answers": alice_answers("mcp")["answers"]}),
        )
        .unwrap();
    assert_eq!(tool["isError"], false, "{tool}");
    let server = start(db);
    let t = tokens(db);
    let route = post(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{id}/respond"),
        &alice_answers("route").to_string(),
    );
    assert_eq!(route.status, 200, "{}", route.body);
    let mut rpc_args = alice_answers("rpc");
    rpc_args["pending_id"] = json!(id);
    let rpc = post(
        &server,
        &t.alice,
        "/api/v1/rpc/resolve_bundle",
        &rpc_args.to_string(),
    );
    assert_eq!(rpc.status, 200, "{}", rpc.body);
    // The C ABI's and the command line's handles keep the system clock,
    // after the test clock: their entries come last, in this order.
    let abi = abi_open(&db.url);
    let reply = abi_call(
        abi,
        &json!({"op": "resolve_bundle", "principal": {"kind": "user", "user_id": "alice"},
            "args": {"pending_id": id, "answers": alice_answers("abi")["answers"]}}),
    );
    assert_eq!(reply["status"], 200, "{reply}");
    clarion::ffi::clarion_close(abi as *mut clarion::ffi::Handle);
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args([
            "cancel",
            &id,
            "--as",
            "user:alice",
            "--database-url",
            &db.url,
        ])
        .output()
        .unwrap();
    assert!(cli.status.success(), "{cli:?}");
    assert_eq!(
        outcomes(db, &id),
        [
            pair("rust", "won"),
            pair("cli", "lost"),
            pair("mcp", "lost"),
            pair("http", "lost"),
            pair("http", "lost"),
            pair("c_abi", "lost"),
            pair("cli", "lost"),
        ]
    );
    let whole = entries(db, &id);
    assert!(whole
        .iter()
        .all(|e| e.principal_kind == "user" && e.user_id == "alice" && e.agent_id.is_empty()));
    // The HTTP door's own listing of the same entries (AUD-3).
    let listed = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{id}/attempts"),
    );
    assert_eq!(listed.status, 200, "{}", listed.body);
    let body: Value = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(body["attempts"].as_array().unwrap().len(), whole.len());
    assert_eq!(
        body["attempts"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ENTRY_KEYS
    );
}

/// AUD-1, AUD-5: a request refused by a rule on the stored bundle is an
/// `invalid` entry hashing the request as parsed (defaults filled, not
/// normalized); the bundle stays pending.
fn aud_1_invalid_recorded_with_the_request_as_parsed(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    let bad = answering(vec![answer("q1", &["q1_opt9"], "  typo ")]);
    assert!(matches!(
        db.resolve_bundle(&alice(), &id, &bad),
        Err(Error::Validation(_))
    ));
    let [entry] = <[AttemptView; 1]>::try_from(entries(db, &id)).unwrap();
    assert_eq!(entry.outcome, "invalid");
    let as_parsed = json!({
        "answers": [{"question_id": "q1", "selected_options": ["q1_opt9"], "custom_text": "  typo "}],
        "rejected": false,
        "reject_reason": "",
    });
    assert_eq!(entry.digest, sha256_hex(&as_parsed.to_string()));
}

/// AUD-1: capability-denied and not-found attempts, and requests refused
/// before the bundle is read (VAL-5), are never recorded.
fn aud_1_denied_and_not_found_not_recorded(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    let no_grant = Principal::agent("alice", "bot", []);
    assert!(matches!(
        db.resolve_bundle(&no_grant, &id, &one_answer("x")),
        Err(Error::CapabilityDenied)
    ));
    assert!(matches!(
        db.resolve_bundle(&bob(), &id, &one_answer("x")),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        db.cancel_bundle(&bob(), &id),
        Err(Error::NotFound(_))
    ));
    let too_long = one_answer(&clefs(2001));
    assert!(matches!(
        db.resolve_bundle(&alice(), &id, &too_long),
        Err(Error::Validation(_))
    ));
    assert!(entries(db, &id).is_empty());
    assert!(db.attempts(&Principal::System, "nope").is_err());
}

/// AUD-1, AUD-5: a settlement records one entry of kind and channel
/// `deadline` with empty ids: `won` hashing the stored default byte for
/// byte, or `expired` hashing `{"expire":true}`.
fn aud_1_deadline_entry_per_on_expire(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let cases = [
        (OnExpire::Expire, "expired"),
        (
            OnExpire::Answer(vec![answer("q1", &["q1_opt2"], " by default ")]),
            "won",
        ),
        (
            OnExpire::Reject {
                reject_reason: " nobody answered ".to_owned(),
            },
            "won",
        ),
    ];
    let mut asked = Vec::new();
    for (on_expire, outcome) in cases {
        asked.push((
            ask_due(db, &session, Duration::from_secs(60), on_expire),
            outcome,
        ));
    }
    db.clock.advance_micros(60_000_000);
    assert_eq!(db.expire_due(None).unwrap().settled, 3);
    for (id, outcome) in asked {
        let [entry] = <[AttemptView; 1]>::try_from(entries(db, &id)).unwrap();
        assert_eq!(
            (entry.principal_kind.as_str(), entry.channel.as_str()),
            ("deadline", "deadline")
        );
        assert_eq!((entry.user_id.as_str(), entry.agent_id.as_str()), ("", ""));
        assert_eq!(entry.outcome, outcome);
        let detail = db.get_bundle(&Principal::System, &id).unwrap();
        let hashed = match &detail.default_response {
            None => r#"{"expire":true}"#.to_owned(),
            Some(default) => serde_json::to_string(default).unwrap(),
        };
        assert_eq!(entry.digest, sha256_hex(&hashed), "{id}");
    }
}

/// AUD-2: when the appender cannot write, the caller's result is the one
/// it would have had; the entry is lost (and logged).
fn aud_2_failed_record_leaves_reply_unchanged(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    let won = db
        .resolve_bundle(&alice(), &id, &one_answer("first"))
        .unwrap();
    let lost_before = db
        .resolve_bundle(&alice(), &id, &one_answer("second"))
        .unwrap();
    // Reading flushes the appender: the entries so far are written.
    assert_eq!(entries(db, &id).len(), 2);
    db.arm_failpoint(
        clarion::test_hooks::points::LEDGER_APPEND,
        FailAction::Error,
    );
    let lost_during = db
        .resolve_bundle(&alice(), &id, &one_answer("third"))
        .unwrap();
    assert_eq!(lost_during, lost_before);
    assert!(won.claimed && !lost_during.claimed);
    // The failed batch is dropped; the ledger holds what was written.
    let during = outcomes(db, &id);
    db.disarm_failpoint(clarion::test_hooks::points::LEDGER_APPEND);
    assert_eq!(during, [pair("rust", "won"), pair("rust", "lost")]);
}

/// AUD-2, REL-7: `close` writes what the appender holds: another handle
/// reads the entry at once.
fn aud_2_appender_flushes_on_close(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    let other = db.builder().open().unwrap();
    other
        .resolve_bundle(&alice(), &id, &one_answer("first"))
        .unwrap();
    other
        .resolve_bundle(&alice(), &id, &one_answer("second"))
        .unwrap();
    other.close();
    // Read straight from the table: `attempts` would flush this handle's
    // own appender, not the closed one's.
    let stored: i64 = db.raw(|conn| {
        use clarion::test_hooks::schema::attempts;
        use diesel::prelude::*;
        attempts::table
            .filter(attempts::pending_id.eq(&id))
            .count()
            .get_result(conn)
            .unwrap()
    });
    assert_eq!(stored, 2);
}

/// AUD-5, NORM-4: semantically equal submissions share one digest: a
/// won and a lost attempt whose options are in another order, repeated,
/// and whose text differs only by surrounding space.
fn aud_5_equal_submissions_share_one_digest(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut request = ask_request(&session, 1);
    request.questions[0].options.push(option("Maybe"));
    let id = db.ask(&request).unwrap().pending_id;
    let first = answering(vec![answer("q1", &["q1_opt3", "q1_opt1"], " both ")]);
    let second = answering(vec![answer(
        "q1",
        &["q1_opt1", "q1_opt3", "q1_opt1"],
        "both",
    )]);
    db.resolve_bundle(&alice(), &id, &first).unwrap();
    db.resolve_bundle(&Principal::System, &id, &second).unwrap();
    let digests: Vec<String> = entries(db, &id).into_iter().map(|e| e.digest).collect();
    let expected = sha256_hex(&answered_q1(&["q1_opt1", "q1_opt3"], "both"));
    assert_eq!(digests, [expected.clone(), expected]);
    let reject = db.ask(&ask_request(&session, 1)).unwrap().pending_id;
    db.resolve_bundle(&alice(), &reject, &rejecting("  no  "))
        .unwrap();
    let expected = json!({"answers": [], "rejected": true, "reject_reason": "no"}).to_string();
    assert_eq!(entries(db, &reject)[0].digest, sha256_hex(&expected));
}

/// AUD-5: a cancel hashes `{"cancel":true}`; a `409` hashes the
/// submission as validated and normalized.
fn aud_5_cancel_and_no_longer_active_digests(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.cancel_bundle(&alice(), &id).unwrap();
    let superseded = ask(db, &session, 1);
    db.begin_turn(&session).unwrap();
    assert!(matches!(
        db.resolve_bundle(&alice(), &superseded, &one_answer(" late ")),
        Err(Error::NoLongerActive)
    ));
    let cancel = entries(db, &id);
    assert_eq!(cancel.len(), 1);
    assert_eq!(cancel[0].outcome, "won");
    assert_eq!(cancel[0].digest, sha256_hex(r#"{"cancel":true}"#));
    let late = entries(db, &superseded);
    assert_eq!(late.len(), 1);
    assert_eq!(late[0].outcome, "no_longer_active");
    assert_eq!(
        late[0].digest,
        sha256_hex(&answered_q1(&["q1_opt1"], "late"))
    );
}

/// REL-1, AUD-1: 32 racers released together by a barrier: one `won`,
/// 31 `lost`, and each entry's digest is its own submission's.
fn rel_1_32_racers_1_won_31_lost_digests_match(db: &TestDb) {
    const RACERS: usize = 32;
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    let barrier = Arc::new(Barrier::new(RACERS));
    let racers: Vec<_> = (0..RACERS)
        .map(|n| {
            let (db, id, barrier) = ((**db).clone(), id.clone(), barrier.clone());
            std::thread::spawn(move || {
                let request: ResolveRequest = one_answer(&format!("racer {n}"));
                barrier.wait();
                db.resolve_bundle(&alice(), &id, &request).unwrap()
            })
        })
        .collect();
    let results: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
    assert_eq!(results.iter().filter(|r| r.claimed).count(), 1);
    let ledger = entries(db, &id);
    assert_eq!(ledger.len(), RACERS);
    assert_eq!(ledger.iter().filter(|e| e.outcome == "won").count(), 1);
    assert_eq!(
        ledger.iter().filter(|e| e.outcome == "lost").count(),
        RACERS - 1
    );
    let mut recorded: Vec<String> = ledger.into_iter().map(|e| e.digest).collect();
    let mut submitted: Vec<String> = (0..RACERS)
        .map(|n| sha256_hex(&answered_q1(&["q1_opt1"], &format!("racer {n}"))))
        .collect();
    recorded.sort();
    submitted.sort();
    assert_eq!(recorded, submitted);
}
