//! PPL-1, PPL-1a, PPL-2: the directory, workspace members, and the names
//! a caller may read, through the JSON door (raw requests), the Rust API
//! and the command line, on both backends.

use std::process::Command;

use clarion::{Grant, Principal, WorkspaceUpsert};
use serde_json::{json, Value};

use crate::events::wait_until_readable;
use crate::support::*;

fn call(db: &TestDb, op: &str, principal: Value, args: Value) -> (u16, Value) {
    let reply = db.call_value(&json!({"op": op, "principal": principal, "args": args}));
    (reply.status, reply.body)
}

fn system(db: &TestDb, op: &str, args: Value) -> (u16, Value) {
    call(db, op, json!({"kind": "system"}), args)
}

fn ok(db: &TestDb, op: &str, args: Value) -> Value {
    let (status, body) = system(db, op, args.clone());
    assert_eq!(status, 200, "{op} {args} → {body}");
    body
}

fn user(id: &str) -> Value {
    json!({"kind": "user", "user_id": id})
}

fn agent(id: &str, grants: &[&str]) -> Value {
    json!({"kind": "agent", "user_id": id, "agent_id": "bot", "grants": grants})
}

/// The refusal names its field first (VAL-7's form).
fn refused(db: &TestDb, op: &str, args: Value, field: &str) {
    let (status, body) = system(db, op, args.clone());
    assert_eq!(status, 400, "{op} {args} → {body}");
    let message = body["error"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{field}: ")),
        "{op} {args}: {message} does not name {field}"
    );
}

fn user_row(db: &TestDb, id: &str) -> Option<Value> {
    let page = ok(db, "list_users", json!({"limit": 200}));
    page["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|user| user["user_id"] == id)
        .cloned()
}

dual_backend!(
    ppl_1_upsert_user_checks_each_field,
    ppl_1_upsert_user_keeps_and_clears,
    ppl_1_host_operations_are_system_only,
    ppl_1_delete_user_removes_memberships_not_ownership,
    ppl_1_list_users_pages_by_user_id,
    ppl_1a_people_names_only_whom_the_caller_may_know,
    ppl_1a_whoami_says_who_calls,
    ppl_2_set_members_refusals,
    ppl_2_set_members_replaces_and_appends_one_event,
    ppl_1_ppl_2_on_the_command_line
);

fn ppl_1_upsert_user_checks_each_field(db: &TestDb) {
    refused(db, "upsert_user", json!({"user_id": ""}), "user_id");
    refused(db, "upsert_user", json!({}), "user_id");
    let long = "é".repeat(121);
    refused(
        db,
        "upsert_user",
        json!({"user_id": "a", "name": long}),
        "name",
    );
    refused(
        db,
        "upsert_user",
        json!({"user_id": "a", "name": "A\u{0}"}),
        "name",
    );
    for email in [
        "no-at.example",
        "two@@example.org",
        "a@b@c",
        "a b@example.org",
        "a\tb@example.org",
        "a\u{7}b@example.org",
        "<a@example.org>",
        "a@example.org>",
    ] {
        refused(
            db,
            "upsert_user",
            json!({"user_id": "a", "email": email}),
            "email",
        );
    }
    // 254 bytes, not characters: 127 two-byte characters and the domain.
    let wide = format!("{}@x.org", "é".repeat(125));
    assert!(wide.chars().count() <= 254 && wide.len() > 254);
    refused(
        db,
        "upsert_user",
        json!({"user_id": "a", "email": wide}),
        "email",
    );
    let fits = format!("{}@x.org", "a".repeat(248));
    assert_eq!(fits.len(), 254);
    ok(db, "upsert_user", json!({"user_id": "a", "email": fits}));
    refused(
        db,
        "upsert_user",
        json!({"user_id": "a", "clear": ["phone"]}),
        "clear[0]",
    );
    refused(
        db,
        "upsert_user",
        json!({"user_id": "a", "name": "A", "clear": ["email", "name"]}),
        "clear[1]",
    );
    refused(
        db,
        "upsert_user",
        json!({"user_id": "a", "nickname": "A"}),
        "nickname",
    );
    // A name of exactly 120 runes is kept.
    ok(
        db,
        "upsert_user",
        json!({"user_id": "a", "name": "é".repeat(120)}),
    );
    assert_eq!(user_row(db, "a").unwrap()["name"], json!("é".repeat(120)));
}

fn ppl_1_upsert_user_keeps_and_clears(db: &TestDb) {
    ok(db, "upsert_user", json!({"user_id": "alice"}));
    assert_eq!(
        user_row(db, "alice").unwrap(),
        json!({"user_id": "alice", "name": "", "email": ""})
    );
    ok(
        db,
        "upsert_user",
        json!({"user_id": "alice", "name": "Alice"}),
    );
    // An omitted, null or "" field keeps the stored one (as LIFE-12).
    ok(
        db,
        "upsert_user",
        json!({"user_id": "alice", "email": "alice@example.org", "name": null}),
    );
    ok(
        db,
        "upsert_user",
        json!({"user_id": "alice", "name": "", "email": ""}),
    );
    assert_eq!(
        user_row(db, "alice").unwrap(),
        json!({"user_id": "alice", "name": "Alice", "email": "alice@example.org"})
    );
    ok(
        db,
        "upsert_user",
        json!({"user_id": "alice", "clear": ["email"]}),
    );
    assert_eq!(
        user_row(db, "alice").unwrap(),
        json!({"user_id": "alice", "name": "Alice", "email": ""})
    );
    ok(
        db,
        "upsert_user",
        json!({"user_id": "alice", "email": "a@x.org", "clear": ["name"]}),
    );
    assert_eq!(
        user_row(db, "alice").unwrap(),
        json!({"user_id": "alice", "name": "", "email": "a@x.org"})
    );
}

fn ppl_1_host_operations_are_system_only(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w1").owner("alice"))
        .unwrap();
    let everything = ["questions:read", "questions:answer"];
    let host = [
        ("upsert_user", json!({"user_id": "alice"})),
        ("delete_user", json!({"user_id": "alice"})),
        ("list_users", json!({})),
        ("set_members", json!({"workspace_id": "w1", "members": []})),
        ("members", json!({"workspace_id": "w1"})),
    ];
    for (op, args) in &host {
        for principal in [
            user("alice"),
            agent("alice", &everything),
            json!({"kind": "unclassified"}),
        ] {
            let (status, body) = call(db, op, principal.clone(), args.clone());
            assert_eq!(status, 403, "{op} as {principal} → {body}");
        }
        assert_eq!(system(db, op, args.clone()).0, 200, "{op} as system");
    }
    // people and whoami: users, agents with questions:read, never
    // unclassified.
    let reads = [
        ("people", json!({"user_ids": ["alice"]})),
        ("whoami", json!({})),
    ];
    for (op, args) in &reads {
        for principal in [
            json!({"kind": "unclassified"}),
            agent("alice", &["questions:answer"]),
        ] {
            let (status, _) = call(db, op, principal.clone(), args.clone());
            assert_eq!(status, 403, "{op} as {principal}");
        }
        for principal in [user("alice"), agent("alice", &["questions:read"])] {
            let (status, body) = call(db, op, principal.clone(), args.clone());
            assert_eq!(status, 200, "{op} as {principal} → {body}");
        }
    }
}

fn ppl_1_delete_user_removes_memberships_not_ownership(db: &TestDb) {
    for (id, owner) in [("w1", "olga"), ("w2", "alice")] {
        db.upsert_workspace(WorkspaceUpsert::new(id).owner(owner))
            .unwrap();
    }
    ok(
        db,
        "upsert_user",
        json!({"user_id": "alice", "name": "Alice"}),
    );
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": ["bob", "alice"]}),
    );
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w2", "members": ["alice"]}),
    );
    ok(db, "delete_user", json!({"user_id": "alice"}));
    assert_eq!(user_row(db, "alice"), None);
    assert_eq!(db.members("w1").unwrap(), vec!["bob".to_owned()]);
    assert!(db.members("w2").unwrap().is_empty());
    // Ownership stays: w2 keeps alice as its owner until the host changes
    // it.
    let owner: Vec<String> = db.raw(|conn| {
        use diesel::prelude::*;
        use diesel::sql_types::Text;
        #[derive(QueryableByName)]
        struct Owner {
            #[diesel(sql_type = Text)]
            owner_id: String,
        }
        diesel::sql_query("SELECT owner_id FROM workspaces WHERE id = 'w2'")
            .load::<Owner>(conn)
            .unwrap()
            .into_iter()
            .map(|row| row.owner_id)
            .collect()
    });
    assert_eq!(owner, vec!["alice".to_owned()]);
    // An unknown id is fine (as LIFE-1).
    ok(db, "delete_user", json!({"user_id": "nobody"}));
    // The members go with their workspace.
    db.delete_workspace("w1").unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w1").owner("olga"))
        .unwrap();
    assert!(db.members("w1").unwrap().is_empty());
}

fn ppl_1_list_users_pages_by_user_id(db: &TestDb) {
    for id in ["erin", "bob", "alice", "dave", "carol"] {
        ok(
            db,
            "upsert_user",
            json!({"user_id": id, "email": format!("{id}@x.org")}),
        );
    }
    let mut seen = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = ok(db, "list_users", json!({"cursor": cursor, "limit": 2}));
        let users = page["users"].as_array().unwrap();
        assert_eq!(page["count"], json!(users.len()));
        assert!(users.len() <= 2);
        seen.extend(
            users
                .iter()
                .map(|user| user["user_id"].as_str().unwrap().to_owned()),
        );
        cursor = page["next_cursor"].as_str().unwrap().to_owned();
        if cursor.is_empty() {
            break;
        }
    }
    assert_eq!(seen, ["alice", "bob", "carol", "dave", "erin"]);
    // LIST-4's limits: below 1 is the default, 50.
    let page = ok(db, "list_users", json!({"limit": 0}));
    assert_eq!(page["count"], json!(5));
    assert_eq!(page["next_cursor"], json!(""));
    // Its cursor is its own: a listing's is malformed here, and its own
    // is malformed for the listing.
    let listing = clarion::Cursor::at(1, "p-1").encode();
    refused(db, "list_users", json!({"cursor": listing}), "cursor");
    refused(db, "list_users", json!({"cursor": "!!"}), "cursor");
    let own = ok(db, "list_users", json!({"limit": 1}))["next_cursor"].clone();
    refused(db, "list_pending", json!({"cursor": own}), "cursor");
    refused(db, "list_users", json!({"limit": "2"}), "limit");
}

/// Five people with names and emails, in four workspaces.
fn people_world(db: &TestDb) {
    for id in ["alice", "bob", "carol", "dave", "erin"] {
        let name = format!("{}{}", id[..1].to_uppercase(), &id[1..]);
        ok(
            db,
            "upsert_user",
            json!({"user_id": id, "name": name, "email": format!("{id}@x.org")}),
        );
    }
    // w1: alice owns, bob belongs. w2: unowned, alice and carol belong (it
    // shares nothing). w3: dave owns, erin belongs.
    db.upsert_workspace(WorkspaceUpsert::new("w1").owner("alice"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w2")).unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w3").owner("dave"))
        .unwrap();
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": ["bob"]}),
    );
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w2", "members": ["alice", "carol"]}),
    );
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w3", "members": ["erin"]}),
    );
}

fn people_of(db: &TestDb, principal: Value, ids: &[&str]) -> Vec<String> {
    let (status, body) = call(db, "people", principal, json!({"user_ids": ids}));
    assert_eq!(status, 200, "{body}");
    assert!(
        !body.to_string().contains("@x.org") && !body.to_string().contains("email"),
        "people returned an email: {body}"
    );
    body["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|person| {
            assert_eq!(person.as_object().unwrap().len(), 2, "{person}");
            format!(
                "{}={}",
                person["user_id"].as_str().unwrap(),
                person["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn ppl_1a_people_names_only_whom_the_caller_may_know(db: &TestDb) {
    people_world(db);
    let all = ["erin", "dave", "carol", "bob", "alice", "zed"];
    // Its own user, and who shares an owned workspace (owner or member).
    assert_eq!(
        people_of(db, user("alice"), &all),
        ["bob=Bob", "alice=Alice"]
    );
    assert_eq!(people_of(db, user("bob"), &all), ["bob=Bob", "alice=Alice"]);
    // An unowned workspace shares nothing: carol knows only herself.
    assert_eq!(people_of(db, user("carol"), &all), ["carol=Carol"]);
    assert_eq!(
        people_of(db, user("erin"), &all),
        ["erin=Erin", "dave=Dave"]
    );
    // A stranger, in no workspace and not in the directory: nobody.
    assert!(people_of(db, user("zed"), &all).is_empty());
    // An agent holds its user's view.
    assert_eq!(
        people_of(db, agent("dave", &["questions:read"]), &all),
        ["erin=Erin", "dave=Dave"]
    );
    // system: every id in the directory, in the order given, once.
    assert_eq!(
        people_of(
            db,
            json!({"kind": "system"}),
            &["carol", "zed", "alice", "carol"]
        ),
        ["carol=Carol", "alice=Alice"]
    );
    // The Rust door agrees.
    let named = db
        .people(
            &Principal::user("alice"),
            &["bob".to_owned(), "dave".to_owned()],
        )
        .unwrap();
    assert_eq!(named.len(), 1);
    assert_eq!(
        (named[0].user_id.as_str(), named[0].name.as_str()),
        ("bob", "Bob")
    );
    // Removing bob from w1 ends what alice knows of him.
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": []}),
    );
    assert_eq!(people_of(db, user("alice"), &["bob"]), Vec::<String>::new());
    // 1 to 100 ids, none empty.
    let (status, body) = call(db, "people", user("alice"), json!({"user_ids": []}));
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().starts_with("user_ids: "));
    let many: Vec<String> = (0..101).map(|i| format!("u{i}")).collect();
    refused(db, "people", json!({"user_ids": many}), "user_ids");
    refused(db, "people", json!({"user_ids": ["a", ""]}), "user_ids[1]");
}

fn ppl_1a_whoami_says_who_calls(db: &TestDb) {
    ok(
        db,
        "upsert_user",
        json!({"user_id": "alice", "name": "Alice", "email": "a@x.org"}),
    );
    let (_, body) = call(db, "whoami", user("alice"), json!({}));
    assert_eq!(
        body,
        json!({"kind": "user", "user_id": "alice", "agent_id": "", "name": "Alice"})
    );
    let (_, body) = call(db, "whoami", agent("alice", &["questions:read"]), json!({}));
    assert_eq!(
        body,
        json!({"kind": "agent", "user_id": "alice", "agent_id": "bot", "name": "Alice"})
    );
    let (_, body) = call(db, "whoami", user("bob"), json!({}));
    assert_eq!(
        body,
        json!({"kind": "user", "user_id": "bob", "agent_id": "", "name": ""})
    );
    assert_eq!(
        ok(db, "whoami", json!(null)),
        json!({"kind": "system", "user_id": "", "agent_id": "", "name": ""})
    );
    let me = db
        .whoami(&Principal::agent("alice", "bot", [Grant::QuestionsRead]))
        .unwrap();
    assert_eq!((me.kind.as_str(), me.name.as_str()), ("agent", "Alice"));
}

fn ppl_2_set_members_refusals(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w1").owner("olga"))
        .unwrap();
    refused(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": ["a", "b", "a"]}),
        "members[2]",
    );
    refused(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": ["a", ""]}),
        "members[1]",
    );
    refused(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": ["a", 7]}),
        "members[1]",
    );
    let crowd: Vec<String> = (0..1001).map(|i| format!("u{i}")).collect();
    refused(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": crowd}),
        "members",
    );
    refused(db, "set_members", json!({"workspace_id": "w1"}), "members");
    refused(db, "set_members", json!({"members": []}), "workspace_id");
    // A refusal wrote nothing.
    assert!(db.members("w1").unwrap().is_empty());
    let (status, body) = system(
        db,
        "set_members",
        json!({"workspace_id": "nowhere", "members": ["a"]}),
    );
    assert_eq!(
        (status, body),
        (404, json!({"error": "workspace not found"}))
    );
    let (status, body) = system(db, "members", json!({"workspace_id": "nowhere"}));
    assert_eq!(
        (status, body),
        (404, json!({"error": "workspace not found"}))
    );
    // 1,000 is the most.
    let crowd: Vec<String> = (0..1000).map(|i| format!("u{i:04}")).collect();
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": crowd}),
    );
    assert_eq!(db.members("w1").unwrap(), crowd);
}

fn ppl_2_set_members_replaces_and_appends_one_event(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w1").owner("olga"))
        .unwrap();
    wait_until_readable(db);
    let before = db.events_after(&Principal::System, "", None).unwrap();
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": ["carol", "alice", "olga"]}),
    );
    assert_eq!(
        ok(db, "members", json!({"workspace_id": "w1"})),
        json!({"members": ["alice", "carol", "olga"]})
    );
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": ["bob"]}),
    );
    assert_eq!(db.members("w1").unwrap(), vec!["bob".to_owned()]);
    // EVT-1a on PostgreSQL: the reader waits for transactions open elsewhere.
    wait_until_readable(db);
    let page = db
        .events_after(&Principal::System, &before.next, None)
        .unwrap();
    let seen: Vec<(&str, &str, Value)> = page
        .events
        .iter()
        .map(|event| {
            (
                event.event_type.as_str(),
                event.pending_id.as_str(),
                event.data.clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "workspace.members",
                "",
                json!({"members": ["alice", "carol", "olga"]})
            ),
            ("workspace.members", "", json!({"members": ["bob"]})),
        ]
    );
    // Seen by the workspace's owner, not by a stranger (AUTH-3 on the
    // recorded workspace).
    let owner = db
        .events_after(&Principal::user("olga"), &before.next, None)
        .unwrap();
    assert_eq!(owner.events.len(), 2);
    let stranger = db
        .events_after(&Principal::user("zed"), &before.next, None)
        .unwrap();
    assert!(stranger.events.is_empty());
    // Emptied: one more event, no members.
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w1", "members": []}),
    );
    assert!(db.members("w1").unwrap().is_empty());
    wait_until_readable(db);
    let last = db
        .events_after(&Principal::System, &page.next, None)
        .unwrap();
    assert_eq!(last.events.len(), 1);
    assert_eq!(last.events[0].data, json!({"members": []}));
}

fn clarion(db: &TestDb, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(args)
        .args(["--database-url", &db.url])
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stdout).trim().to_owned(),
    )
}

fn cli_json(db: &TestDb, args: &[&str]) -> (i32, Value) {
    let (code, out) = clarion(db, args);
    let value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    (code, value)
}

fn ppl_1_ppl_2_on_the_command_line(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w1").owner("olga"))
        .unwrap();
    let (code, body) = cli_json(
        db,
        &[
            "user", "add", "alice", "--name", "Alice", "--email", "a@x.org",
        ],
    );
    assert_eq!((code, body["status"].clone()), (0, json!(200)), "{body}");
    cli_json(db, &["user", "add", "bob", "--name", "Bob"]);
    let (code, body) = cli_json(db, &["user", "add", "alice", "--clear", "email"]);
    assert_eq!(code, 0, "{body}");
    let (code, body) = cli_json(db, &["user", "add", "alice", "--email", "not an address"]);
    assert_eq!(code, 5, "{body}");
    assert!(body["body"]["error"]
        .as_str()
        .unwrap()
        .starts_with("email: "));
    let (code, body) = cli_json(db, &["user", "list", "--limit", "1"]);
    assert_eq!(code, 0);
    assert_eq!(
        body["body"]["users"],
        json!([{"user_id": "alice", "name": "Alice", "email": ""}])
    );
    let (_, text) = clarion(db, &["user", "list", "--text"]);
    assert_eq!(text, "2 people\n  alice  Alice\n  bob  Bob");
    let (code, body) = cli_json(db, &["members", "set", "w1", "bob", "alice"]);
    assert_eq!((code, body["status"].clone()), (0, json!(200)), "{body}");
    let (code, body) = cli_json(db, &["members", "w1"]);
    assert_eq!(code, 0);
    assert_eq!(body["body"], json!({"members": ["alice", "bob"]}));
    let (_, text) = clarion(db, &["members", "w1", "--text"]);
    assert_eq!(text, "alice\nbob");
    let (code, body) = cli_json(db, &["members", "set", "w1", "bob", "bob"]);
    assert_eq!(code, 5, "{body}");
    assert!(body["body"]["error"]
        .as_str()
        .unwrap()
        .starts_with("members[1]: "));
    let (code, body) = cli_json(db, &["members", "set", "nowhere", "bob"]);
    assert_eq!(
        (code, body["body"].clone()),
        (3, json!({"error": "workspace not found"}))
    );
    // Under --text the refusal names the command as typed.
    let refused = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["members", "set", "nowhere", "bob", "--text"])
        .args(["--database-url", &db.url])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        "clarion members set: workspace not found (404)"
    );
    let (code, body) = cli_json(db, &["members", "w1", "--as", "user:olga"]);
    assert_eq!(code, 6, "{body}");
    let (code, body) = cli_json(db, &["user", "remove", "alice"]);
    assert_eq!(code, 0, "{body}");
    assert_eq!(db.members("w1").unwrap(), vec!["bob".to_owned()]);
    // No users: no members.
    let (code, _) = cli_json(db, &["members", "set", "w1"]);
    assert_eq!(code, 0);
    assert!(db.members("w1").unwrap().is_empty());
    let (code, body) = cli_json(db, &["whoami", "--as", "user:bob"]);
    assert_eq!(code, 0);
    assert_eq!(
        body["body"],
        json!({"kind": "user", "user_id": "bob", "agent_id": "", "name": "Bob"})
    );
    let (_, text) = clarion(db, &["whoami", "--as", "user:bob", "--text"]);
    assert_eq!(text, "user bob: Bob");
}

dual_backend!(ppl_2_ask_takes_members);

/// PPL-2: `clarion ask --members` mirrors the workspace, then replaces its
/// whole member set; it needs `--workspace`.
fn ppl_2_ask_takes_members(db: &TestDb) {
    const QUESTIONS: &str = r#"[{"title":"Go?","prompt":"Ship it?","options":[{"label":"Yes","description":"ship"},{"label":"No","description":"wait"}]}]"#;
    let ask = |members: &str| {
        cli_json(
            db,
            &[
                "ask",
                "s1",
                "--questions",
                QUESTIONS,
                "--task",
                "t1",
                "--workspace",
                "w1",
                "--owner",
                "olga",
                "--members",
                members,
            ],
        )
    };
    let (code, body) = ask("bob,alice");
    assert_eq!(code, 0, "{body}");
    assert_eq!(db.members("w1").unwrap(), ["alice", "bob"]);
    let (code, body) = ask("carol");
    assert_eq!(code, 0, "{body}");
    assert_eq!(db.members("w1").unwrap(), ["carol"]);
    let (code, body) = ask("");
    assert_eq!(code, 0, "{body}");
    assert!(db.members("w1").unwrap().is_empty());
    let (code, body) = ask("dave,dave");
    assert_eq!(code, 5, "{body}");
    assert!(body["body"]["error"]
        .as_str()
        .unwrap()
        .starts_with("members[1]: "));
    let (code, _) = clarion(
        db,
        &[
            "ask",
            "s1",
            "--questions",
            QUESTIONS,
            "--task",
            "t1",
            "--members",
            "bob",
        ],
    );
    assert_eq!(code, 2, "--members without --workspace is a usage error");
}

dual_backend!(
    ppl_8_people_pending_id_reaches_owner_then_members,
    ppl_8_people_pending_id_hides_what_the_caller_cannot_see,
    ppl_1a_people_takes_exactly_one_of_its_arguments
);

fn reached(db: &TestDb, principal: Value, pending_id: &str) -> Vec<String> {
    let (status, body) = call(db, "people", principal, json!({"pending_id": pending_id}));
    assert_eq!(status, 200, "{body}");
    assert!(
        !body.to_string().contains("@x.org") && !body.to_string().contains("email"),
        "people returned an email: {body}"
    );
    body["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|person| {
            assert_eq!(person.as_object().unwrap().len(), 2, "{person}");
            format!(
                "{}={}",
                person["user_id"].as_str().unwrap(),
                person["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// PPL-1a, who a bundle reaches, through `people {pending_id}`: the owner
/// of the bundle's workspace, then its members by id (the owner once),
/// each with the directory's name or `""`; nobody for a bundle in an
/// unowned, no or a dangling workspace, though every user sees those
/// (AUTH-3).
fn ppl_8_people_pending_id_reaches_owner_then_members(db: &TestDb) {
    let [owned, bobs, open, none, dangling] = visibility_world(db, Some(true));
    for (id, name) in [("alice", "Alice"), ("bob", "Bob")] {
        ok(
            db,
            "upsert_user",
            json!({"user_id": id, "name": name, "email": format!("{id}@x.org")}),
        );
    }
    // carol is a member the directory does not know; alice, the owner, is
    // a member too.
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w-alice", "members": ["carol", "bob", "alice"]}),
    );
    let whole = ["alice=Alice", "bob=Bob", "carol="];
    assert_eq!(reached(db, user("alice"), &owned), whole);
    assert_eq!(
        reached(db, agent("alice", &["questions:read"]), &owned),
        whole
    );
    assert_eq!(reached(db, json!({"kind": "system"}), &owned), whole);
    assert_eq!(reached(db, user("bob"), &bobs), ["bob=Bob"]);
    // A workspace with no owner reaches nobody, whoever belongs to it.
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w-open", "members": ["alice", "bob"]}),
    );
    for pending_id in [&open, &none, &dangling] {
        assert!(reached(db, user("alice"), pending_id).is_empty());
        assert!(reached(db, user("zed"), pending_id).is_empty());
    }
    // The set follows set_members, and the directory's names.
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w-alice", "members": ["bob"]}),
    );
    ok(
        db,
        "upsert_user",
        json!({"user_id": "bob", "clear": ["name"]}),
    );
    assert_eq!(reached(db, user("alice"), &owned), ["alice=Alice", "bob="]);
    // Deleting a user ends the membership too (PPL-1).
    ok(db, "delete_user", json!({"user_id": "bob"}));
    assert_eq!(reached(db, user("alice"), &owned), ["alice=Alice"]);
    ok(
        db,
        "set_members",
        json!({"workspace_id": "w-alice", "members": ["bob"]}),
    );
    // The Rust door agrees.
    let named = db.reached(&Principal::user("alice"), &owned).unwrap();
    let named: Vec<(&str, &str)> = named
        .iter()
        .map(|person| (person.user_id.as_str(), person.name.as_str()))
        .collect();
    assert_eq!(named, [("alice", "Alice"), ("bob", "")]);
    // A settled bundle still reaches them.
    db.cancel_bundle(&Principal::System, &owned).unwrap();
    assert_eq!(reached(db, user("alice"), &owned), ["alice=Alice", "bob="]);
}

/// AUTH-5 for `people {pending_id}`: a bundle the caller cannot see and
/// one that does not exist are the same not-found, byte for byte, as
/// `get_bundle` answers them; an agent never learns who a permission
/// request reaches (AUTH-6).
fn ppl_8_people_pending_id_hides_what_the_caller_cannot_see(db: &TestDb) {
    let [owned, ..] = visibility_world(db, Some(true));
    let reply = |principal: Value, op: &str, pending_id: &str| {
        let envelope = db.call_value(
            &json!({"op": op, "principal": principal, "args": {"pending_id": pending_id}}),
        );
        (envelope.status, envelope.body_text())
    };
    let foreign = reply(user("zed"), "people", &owned);
    assert_eq!(foreign.0, 404, "{}", foreign.1);
    assert_eq!(foreign, reply(user("zed"), "people", "pending-999999"));
    assert_eq!(foreign, reply(user("zed"), "get_bundle", &owned));
    assert_eq!(
        foreign,
        reply(json!({"kind": "system"}), "people", "pending-999999")
    );
    let permission = ask_permission(db, &session_in(db, "perm", "w-alice", Some(true)), 1);
    assert_eq!(reply(user("alice"), "people", &permission).0, 200);
    assert_eq!(
        reply(agent("alice", &["questions:read"]), "people", &permission),
        reply(
            agent("alice", &["questions:read"]),
            "get_bundle",
            &permission
        )
    );
    assert_eq!(
        reply(agent("alice", &["questions:read"]), "people", &permission).0,
        404
    );
    // Its Rust door says the same not-found.
    assert!(matches!(
        db.reached(&Principal::user("zed"), &owned),
        Err(clarion::Error::NotFound(_))
    ));
}

/// PPL-1a: `user_ids` or `pending_id`, exactly one (`""` and `null` are
/// not given); both or neither is a 400 naming `user_ids`.
fn ppl_1a_people_takes_exactly_one_of_its_arguments(db: &TestDb) {
    let [owned, ..] = visibility_world(db, Some(true));
    for args in [
        json!({}),
        json!({"pending_id": ""}),
        json!({"pending_id": null, "user_ids": null}),
        json!({"user_ids": ["alice"], "pending_id": owned}),
        json!({"user_ids": [], "pending_id": owned}),
    ] {
        let (status, body) = call(db, "people", user("alice"), args.clone());
        assert_eq!(status, 400, "{args} → {body}");
        assert_eq!(
            body["error"],
            json!("user_ids: give exactly one of user_ids and pending_id"),
            "{args}"
        );
    }
    refused(
        db,
        "people",
        json!({"pending_id": owned, "user_ids": "alice"}),
        "user_ids",
    );
    refused(db, "people", json!({"pending_id": 7}), "pending_id");
    refused(db, "people", json!({"pending_id": "a\u{0}"}), "pending_id");
    // `""` beside user_ids is not given.
    let (status, body) = call(
        db,
        "people",
        user("alice"),
        json!({"user_ids": ["alice"], "pending_id": ""}),
    );
    assert_eq!(status, 200, "{body}");
}
