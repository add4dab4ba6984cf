//! What the `listing_*` suites share: requests, walks over every page,
//! and the expected entries of `pending_actions`.

use clarion::{
    Clarion, ListPage, ListRequest, PendingAction, Principal, Summary, TaskPendingActions,
};

use crate::support::*;

pub const SECOND: i64 = 1_000_000;

pub fn with_limit(limit: i64) -> ListRequest {
    ListRequest {
        limit: Some(limit),
        ..ListRequest::default()
    }
}

pub fn in_workspace(workspace_id: &str) -> ListRequest {
    ListRequest {
        workspace_id: Some(workspace_id.to_owned()),
        ..ListRequest::default()
    }
}

pub fn ids(page: &ListPage) -> Vec<String> {
    page.bundles.iter().map(|b| b.pending_id.clone()).collect()
}

pub fn list_ids(db: &Clarion, principal: &Principal, request: &ListRequest) -> Vec<String> {
    ids(&db.list_pending(principal, request).unwrap())
}

/// Pages `list_pending` to the end, following `next_cursor`; one entry of
/// pending ids per page.
pub fn pages(db: &Clarion, principal: &Principal, request: &ListRequest) -> Vec<Vec<String>> {
    let mut request = request.clone();
    let mut pages = Vec::new();
    for _ in 0..10_000 {
        let page = db.list_pending(principal, &request).unwrap();
        pages.push(ids(&page));
        if page.next_cursor.is_none() {
            return pages;
        }
        request.cursor = page.next_cursor;
    }
    panic!("paging never ended");
}

pub fn collect_all(db: &Clarion, principal: &Principal, limit: i64) -> Vec<String> {
    pages(db, principal, &with_limit(limit)).concat()
}

pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

pub fn micros(offset: i64) -> i64 {
    EPOCH.as_micros() + offset
}

pub fn summary_of(db: &Clarion, principal: &Principal) -> Summary {
    db.summary(principal).unwrap()
}

pub fn actions(
    db: &Clarion,
    principal: &Principal,
    task_ids: &[&str],
) -> Vec<(String, Option<PendingAction>, Option<PendingAction>)> {
    db.pending_actions(principal, &strings(task_ids))
        .unwrap()
        .into_iter()
        .map(|t: TaskPendingActions| {
            (
                t.task_id,
                t.task_pending_action,
                t.primary_session_pending_action,
            )
        })
        .collect()
}

pub fn entry(
    task_id: &str,
    task: Option<PendingAction>,
    primary: Option<PendingAction>,
) -> (String, Option<PendingAction>, Option<PendingAction>) {
    (task_id.to_owned(), task, primary)
}

pub const CLARIFICATION: Option<PendingAction> = Some(PendingAction::Clarification);
pub const PERMISSION: Option<PendingAction> = Some(PendingAction::Permission);
