//! HTTP-15 over loopback, both backends: a request without a body is
//! authenticated and performed in one trip, with WIRE-5's order of checks
//! kept, and answers byte for byte what `/rpc` and the JSON door (the C
//! ABI's `clarion_call`) answer, refusals included.

use serde_json::{json, Value};

use crate::support::server::*;
use crate::support::*;

dual_backend!(http_15_bodiless_routes_answer_what_rpc_and_the_c_abi_answer);

/// What the JSON door answers `op` with `args` for `principal`: what
/// `clarion_call` answers too.
fn json_door(db: &TestDb, op: &str, principal: Value, args: &Value) -> String {
    envelope_text(db.call_value(&json!({"op": op, "principal": principal, "args": args})))
}

fn http_15_bodiless_routes_answer_what_rpc_and_the_c_abi_answer(db: &TestDb) {
    let server = start(db);
    let t = tokens(db);
    let alice = json!({"kind": "user", "user_id": "alice"});
    let no_grant = json!({"kind": "agent", "user_id": "alice", "agent_id": "bot", "grants": []});
    let mine = ask(db, &mirror(db, "a", "alice"), 2);
    let bobs = ask(db, &mirror(db, "b", "bob"), 1);
    // (route, operation, its WIRE-5 arguments, who asks)
    let cases: Vec<(String, &str, Value, (&str, &Value))> = vec![
        (
            "/api/v1/clarification?limit=1".into(),
            "list_pending",
            json!({"limit": 1}),
            (&t.alice, &alice),
        ),
        (
            "/api/v1/clarification?limit=0".into(),
            "list_pending",
            json!({"limit": 0}),
            (&t.alice, &alice),
        ),
        (
            "/api/v1/clarification?cursor=nope".into(),
            "list_pending",
            json!({"cursor": "nope"}),
            (&t.alice, &alice),
        ),
        (
            format!("/api/v1/clarification/{mine}"),
            "get_bundle",
            json!({"pending_id": mine}),
            (&t.alice, &alice),
        ),
        // REL-4: a foreign bundle and a fabricated id alike.
        (
            format!("/api/v1/clarification/{bobs}"),
            "get_bundle",
            json!({"pending_id": bobs}),
            (&t.alice, &alice),
        ),
        (
            "/api/v1/clarification/pending-999".into(),
            "get_bundle",
            json!({"pending_id": "pending-999"}),
            (&t.alice, &alice),
        ),
        // WIRE-5: the capability before the arguments.
        (
            format!("/api/v1/clarification/{mine}?bogus=1"),
            "get_bundle",
            json!({"pending_id": mine, "bogus": 1}),
            (&t.alice_bot_none, &no_grant),
        ),
        (
            "/api/v1/summary".into(),
            "summary",
            json!({}),
            (&t.alice, &alice),
        ),
    ];
    for (route, op, args, (token, principal)) in &cases {
        let routed = get(&server, token, route).text();
        let rpc = post(
            &server,
            token,
            &format!("/api/v1/rpc/{op}"),
            &args.to_string(),
        )
        .text();
        assert_eq!(routed, rpc, "{route} against /rpc/{op}");
        assert_eq!(
            routed,
            json_door(db, op, (*principal).clone(), args),
            "{route} against the JSON door"
        );
    }
    // An unknown query parameter is the door's own 400 (HTTP-3), after
    // the capability as every argument check is.
    let unknown = get(
        &server,
        &t.alice,
        &format!("/api/v1/clarification/{mine}?bogus=1"),
    );
    assert_eq!(
        unknown.text(),
        r#"400 {"error":"bogus: unknown query parameter"}"#
    );
    // Authentication comes first: a bad query without a credential, or
    // with a revoked one, is the 401, never the 400.
    let unauthenticated = send(client().get(server.url("/api/v1/clarification?limit=0")));
    assert_eq!(
        unauthenticated.text(),
        r#"401 {"error":"authentication required"}"#
    );
    assert_eq!(unauthenticated.header("www-authenticate"), Some("Bearer"));
    let wrong = get(&server, "not-a-token", "/api/v1/clarification?limit=0");
    assert_eq!(wrong.status, 401);
}
