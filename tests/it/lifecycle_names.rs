//! LIFE-12, LIST-11: names for people. A workspace's name and a task's
//! title are stored as given, kept when an upsert omits them, shown beside
//! the ids in every bundle element, frozen in `bundle.asked`, and read for
//! a page in a number of statements that does not grow with the page.

use clarion::test_hooks::StatementCounter;
use clarion::{ListRequest, Principal, SettledRequest, TaskUpsert, WorkspaceUpsert};
use serde_json::{json, Value};

use crate::doors_json_support::call;
use crate::support::*;

dual_backend!(
    life_12_kept_when_omitted_null_or_empty,
    life_12_200_runes_and_no_nul,
    list_11_names_follow_the_task_and_are_empty_when_unknown,
    list_11_frozen_in_bundle_asked,
    list_11_statements_per_page_equal_at_50_and_200
);

fn names(db: &TestDb, pending_id: &str) -> (String, String, String) {
    let view = db.get_bundle(&alice(), pending_id).unwrap().bundle;
    (view.task_title, view.workspace_id, view.workspace_name)
}

fn upsert(db: &TestDb, op: &str, args: Value) {
    let request = json!({"op": op, "principal": {"kind": "system"}, "args": args});
    assert_eq!(call(db, &request.to_string()).0, 200);
}

/// LIFE-12: a name given is stored; an upsert that omits it, or gives
/// `null` or `""`, keeps it — through the Rust builders and the JSON call;
/// a new row starts unnamed; changing the owner keeps the name.
fn life_12_kept_when_omitted_null_or_empty(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    assert_eq!(names(db, &id), ("".into(), "w-a".into(), "".into()));

    db.upsert_workspace(WorkspaceUpsert::new("w-a").name("Payments"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").title("Add login"))
        .unwrap();
    let named = (
        "Add login".to_owned(),
        "w-a".to_owned(),
        "Payments".to_owned(),
    );
    assert_eq!(names(db, &id), named);

    db.upsert_workspace(WorkspaceUpsert::new("w-a").owner("alice"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-a").name(""))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").workspace("w-a").title(""))
        .unwrap();
    assert_eq!(names(db, &id), named);

    upsert(db, "upsert_workspace", json!({"id": "w-a", "name": null}));
    upsert(db, "upsert_workspace", json!({"id": "w-a", "name": ""}));
    upsert(db, "upsert_workspace", json!({"id": "w-a"}));
    upsert(db, "upsert_task", json!({"id": "t-a", "title": null}));
    upsert(
        db,
        "upsert_task",
        json!({"id": "t-a", "title": "", "workspace_id": ""}),
    );
    assert_eq!(names(db, &id), named);

    upsert(
        db,
        "upsert_workspace",
        json!({"id": "w-a", "name": "Billing"}),
    );
    upsert(
        db,
        "upsert_task",
        json!({"id": "t-a", "title": "Add logout"}),
    );
    assert_eq!(
        names(db, &id),
        ("Add logout".into(), "w-a".into(), "Billing".into())
    );
}

/// LIFE-12, REL-6: at most 200 runes (200 four-byte characters pass, 201
/// fail, naming the field), and a NUL is refused; nothing is written.
fn life_12_200_runes_and_no_nul(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    let long = clefs(200);
    db.upsert_workspace(WorkspaceUpsert::new("w-a").name(&long))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").title(&long)).unwrap();
    assert_eq!(names(db, &id), (long.clone(), "w-a".into(), long.clone()));
    let longer = clefs(201);
    assert_invalid(
        db.upsert_workspace(WorkspaceUpsert::new("w-a").name(&longer)),
        "name",
    );
    assert_invalid(
        db.upsert_task(TaskUpsert::new("t-a").title(&longer)),
        "title",
    );
    assert_invalid(
        db.upsert_task(TaskUpsert::new("t-new").title("a\0b")),
        "title",
    );
    let request = json!({"op": "upsert_task", "principal": {"kind": "system"},
        "args": {"id": "t-a", "title": longer}});
    let (status, body) = call(db, &request.to_string());
    assert_eq!(status, 400);
    assert!(body.starts_with(r#"{"error":"title: "#), "{body}");
    assert_eq!(names(db, &id), (long.clone(), "w-a".into(), long));
}

/// LIST-11: the names are those of the bundle's task (AUTH-4) and of the
/// workspace it carries; `""` where the task has no workspace, its
/// workspace does not exist (dangling, `workspace_id` still shown), or
/// nothing was named; the page and `get_bundle` agree.
fn list_11_names_follow_the_task_and_are_empty_when_unknown(db: &TestDb) {
    db.upsert_workspace(WorkspaceUpsert::new("w-1").owner("alice").name("One"))
        .unwrap();
    let named = ask(db, &session_in(db, "named", "w-1", None), 1);
    db.upsert_task(TaskUpsert::new("t-named").title("Named task"))
        .unwrap();
    let dangling = ask(db, &session_in(db, "dangling", "w-gone", None), 1);
    db.upsert_task(TaskUpsert::new("t-dangling").title("Dangles"))
        .unwrap();
    let nowhere = ask(db, &session_in(db, "nowhere", "", None), 1);
    assert_eq!(
        names(db, &named),
        ("Named task".into(), "w-1".into(), "One".into())
    );
    assert_eq!(
        names(db, &dangling),
        ("Dangles".into(), "w-gone".into(), "".into())
    );
    assert_eq!(names(db, &nowhere), ("".into(), "".into(), "".into()));
    let page = db.list_pending(&alice(), &ListRequest::default()).unwrap();
    for view in &page.bundles {
        let detail = db.get_bundle(&alice(), &view.pending_id).unwrap().bundle;
        assert_eq!(
            (&view.task_title, &view.workspace_id, &view.workspace_name),
            (
                &detail.task_title,
                &detail.workspace_id,
                &detail.workspace_name
            )
        );
    }
    assert_eq!(page.bundles.len(), 3);
    // A move shows the new workspace's names at once.
    db.upsert_task(TaskUpsert::new("t-dangling").workspace("w-1"))
        .unwrap();
    assert_eq!(
        names(db, &dangling),
        ("Dangles".into(), "w-1".into(), "One".into())
    );
}

/// LIST-11: `bundle.asked` freezes the names as they were at the ask; a
/// rename shows in listings, never in the event.
fn list_11_frozen_in_bundle_asked(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.upsert_workspace(WorkspaceUpsert::new("w-a").name("Before"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").title("Old title"))
        .unwrap();
    let id = ask(db, &session, 1);
    db.upsert_workspace(WorkspaceUpsert::new("w-a").name("After"))
        .unwrap();
    db.upsert_task(TaskUpsert::new("t-a").title("New title"))
        .unwrap();
    crate::events::wait_until_readable(db);
    let events = db.events_after(&alice(), "", None).unwrap();
    let asked = clarion::envelope::event(&events.events[0]);
    assert_eq!(asked["type"], json!("bundle.asked"));
    assert_eq!(asked["pending_id"], json!(id));
    assert_eq!(asked["data"]["task_title"], json!("Old title"));
    assert_eq!(asked["data"]["workspace_id"], json!("w-a"));
    assert_eq!(asked["data"]["workspace_name"], json!("Before"));
    assert_eq!(
        names(db, &id),
        ("New title".into(), "w-a".into(), "After".into())
    );
}

/// LIST-11: the names of a page cost a fixed number of statements (never
/// one per bundle): a page of 200 bundles over 200 tasks and workspaces
/// runs as many statements as a page of 50, for `list_pending` and for
/// `list_settled`, scoped and unscoped.
fn list_11_statements_per_page_equal_at_50_and_200(db: &TestDb) {
    let mut pending = Vec::new();
    for n in 0..200 {
        let workspace = format!("w-{n}");
        db.upsert_workspace(
            WorkspaceUpsert::new(&workspace)
                .owner("alice")
                .name(&format!("Workspace {n}")),
        )
        .unwrap();
        let session = session_in(db, &format!("n{n}"), &workspace, None);
        db.upsert_task(TaskUpsert::new(&format!("t-n{n}")).title(&format!("Task {n}")))
            .unwrap();
        pending.push(ask(db, &session, 1));
        let settled = ask(db, &session, 1);
        db.cancel_bundle(&alice(), &settled).unwrap();
    }
    let counter = StatementCounter::default();
    let counted = db
        .builder()
        .pool_size(1)
        .count_statements(counter.clone())
        .open()
        .unwrap();
    let cost = |run: &dyn Fn()| {
        run(); // warm the pool's connection and its statement cache
        let before = counter.count();
        run();
        counter.count() - before
    };
    for principal in [alice(), Principal::System] {
        let listing = |limit: i64| {
            let page = counted
                .list_pending(
                    &principal,
                    &ListRequest {
                        limit: Some(limit),
                        ..ListRequest::default()
                    },
                )
                .unwrap();
            assert_eq!(page.bundles.len(), limit as usize);
            assert!(page
                .bundles
                .iter()
                .all(|b| b.task_title.starts_with("Task ")));
        };
        assert_eq!(
            cost(&|| listing(50)),
            cost(&|| listing(200)),
            "{principal:?}"
        );
        let history = |limit: i64| {
            let page = counted
                .list_settled(
                    &principal,
                    &SettledRequest {
                        limit: Some(limit),
                        ..SettledRequest::default()
                    },
                )
                .unwrap();
            assert_eq!(page.bundles.len(), limit as usize);
            assert!(page
                .bundles
                .iter()
                .all(|b| b.bundle.workspace_name.starts_with("Workspace ")));
        };
        assert_eq!(
            cost(&|| history(50)),
            cost(&|| history(200)),
            "{principal:?}"
        );
    }
}
