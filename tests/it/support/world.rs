//! Building worlds through the library: the host mirror, sessions, and
//! well-formed questions and bundles.

use clarion::{
    AskRequest, BundleKind, Clarion, OptionSpec, QuestionSpec, SessionUpsert, TaskUpsert,
    WorkspaceUpsert,
};

/// A workspace, task and running session: `w-<name>`, `t-<name>`, `s-<name>`.
pub fn mirror(db: &Clarion, name: &str, owner: &str) -> String {
    db.upsert_workspace(WorkspaceUpsert::new(&format!("w-{name}")).owner(owner))
        .unwrap();
    db.upsert_task(TaskUpsert::new(&format!("t-{name}")).workspace(&format!("w-{name}")))
        .unwrap();
    let session = format!("s-{name}");
    db.upsert_session(SessionUpsert::new(&session, &format!("t-{name}")).primary(true))
        .unwrap();
    session
}

/// A session `s-<name>` on a new task `t-<name>` in `workspace_id`, with
/// `is_primary` as given to `upsert_session`.
pub fn session_in(
    db: &Clarion,
    name: &str,
    workspace_id: &str,
    is_primary: Option<bool>,
) -> String {
    db.upsert_task(TaskUpsert::new(&format!("t-{name}")).workspace(workspace_id))
        .unwrap();
    let session = format!("s-{name}");
    let task_id = format!("t-{name}");
    let mut upsert = SessionUpsert::new(&session, &task_id);
    if let Some(is_primary) = is_primary {
        upsert = upsert.primary(is_primary);
    }
    db.upsert_session(upsert).unwrap();
    session
}

/// Workspaces owned by alice (`w-alice`), by bob (`w-bob`) and by nobody
/// (`w-open`); a task in each, one without a workspace and one in a dangling
/// workspace, each with a session (`is_primary` as given). Returns the
/// pending ids of one active bundle on each, in that order.
pub fn visibility_world(db: &Clarion, is_primary: Option<bool>) -> [String; 5] {
    db.upsert_workspace(WorkspaceUpsert::new("w-alice").owner("alice"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-bob").owner("bob"))
        .unwrap();
    db.upsert_workspace(WorkspaceUpsert::new("w-open").owner(""))
        .unwrap();
    [
        ask(db, &session_in(db, "alice", "w-alice", is_primary), 1),
        ask(db, &session_in(db, "bob", "w-bob", is_primary), 1),
        ask(db, &session_in(db, "open", "w-open", is_primary), 1),
        ask(db, &session_in(db, "none", "", is_primary), 1),
        ask(db, &session_in(db, "dangling", "w-gone", is_primary), 1),
    ]
}

pub fn option(label: &str) -> OptionSpec {
    OptionSpec {
        option_id: None,
        label: label.to_owned(),
        description: format!("{label}, described"),
    }
}

pub fn question(prompt: &str) -> QuestionSpec {
    QuestionSpec {
        question_id: None,
        title: format!("About {prompt}"),
        prompt: prompt.to_owned(),
        multi_select: None,
        options: vec![option("Yes"), option("No")],
    }
}

/// A well-formed request for `count` questions on `session_id`.
pub fn ask_request(session_id: &str, count: usize) -> AskRequest {
    AskRequest {
        session_id: session_id.to_owned(),
        questions: (1..=count)
            .map(|n| question(&format!("question {n}?")))
            .collect(),
        context: "the agent needs a decision".to_owned(),
        ..AskRequest::default()
    }
}

/// Asks a well-formed bundle and returns its `pending_id`.
pub fn ask(db: &Clarion, session_id: &str, count: usize) -> String {
    db.ask(&ask_request(session_id, count)).unwrap().pending_id
}

/// Asks a `permission` bundle (AUTH-6) of `count` questions and returns its
/// `pending_id`.
pub fn ask_permission(db: &Clarion, session_id: &str, count: usize) -> String {
    let mut request = ask_request(session_id, count);
    request.kind = BundleKind::Permission;
    db.ask(&request).unwrap().pending_id
}

/// The `pending_id`s of the outbox, in its order (DEL-3).
pub fn outbox(db: &Clarion) -> Vec<String> {
    db.pending_deliveries(None)
        .unwrap()
        .into_iter()
        .map(|delivery| delivery.pending_id)
        .collect()
}
