//! Names for people (LIST-11, LIFE-12): a task's title and its workspace's
//! id and name, read for a page of bundles in one statement whatever the
//! page's size. No rule reads them; they are shown.

use std::collections::HashMap;

use diesel::prelude::*;

use crate::domain::views::TaskNames;
use crate::error::Result;
use crate::rules::visibility::KeyColumn;
use crate::store::schema::{tasks, workspaces};
use crate::store::{among, AnyConnection};

/// The names of these tasks, by task id: one statement (never one per
/// bundle, LIST-11). A task that does not exist is absent; a workspace
/// that does not exist (dangling) has the name `""`.
pub(crate) fn load_names<'a>(
    conn: &mut AnyConnection,
    task_ids: impl IntoIterator<Item = &'a str>,
) -> Result<HashMap<String, TaskNames>> {
    let mut task_ids: Vec<&str> = task_ids.into_iter().collect();
    task_ids.sort_unstable();
    task_ids.dedup();
    if task_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<(String, String, String, Option<String>)> = tasks::table
        .left_join(workspaces::table.on(workspaces::id.eq(tasks::workspace_id)))
        .filter(among(tasks::id, task_ids.iter().copied()))
        .select((
            tasks::id,
            tasks::title,
            tasks::workspace_id,
            workspaces::name.nullable(),
        ))
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(task_id, task_title, workspace_id, workspace_name)| {
            let names = TaskNames {
                task_title,
                workspace_id,
                workspace_name: workspace_name.unwrap_or_default(),
            };
            (task_id, names)
        })
        .collect())
}

/// LIST-11: the names of the task whose id is in `task` (a column of the
/// enclosing query), as [`load_names`] reads them: its title, its
/// workspace id and that workspace's name, each NULL when absent. For a
/// statement that reads one bundle or session with its names.
#[diesel::dsl::auto_type]
pub(crate) fn names_of_task<K: KeyColumn>(task: K) -> _ {
    let id: diesel::dsl::Nullable<tasks::id> = tasks::id.nullable();
    let task: diesel::dsl::Nullable<K> = task.nullable();
    let workspace_id = tasks::table
        .filter(id.eq(task))
        .select(tasks::workspace_id)
        .single_value();
    (
        tasks::table
            .filter(id.eq(task))
            .select(tasks::title)
            .single_value(),
        tasks::table
            .filter(id.eq(task))
            .select(tasks::workspace_id)
            .single_value(),
        workspaces::table
            .filter(workspaces::id.nullable().eq(workspace_id))
            .select(workspaces::name)
            .single_value(),
    )
}

/// [`names_of_task`] as read: `""` where absent.
pub(crate) fn task_names(
    (task_title, workspace_id, workspace_name): (Option<String>, Option<String>, Option<String>),
) -> TaskNames {
    TaskNames {
        task_title: task_title.unwrap_or_default(),
        workspace_id: workspace_id.unwrap_or_default(),
        workspace_name: workspace_name.unwrap_or_default(),
    }
}
