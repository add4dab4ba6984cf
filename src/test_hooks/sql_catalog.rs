//! SQL-1: every typed query that decides membership, visibility or the claim,
//! rendered for each backend. `tests/it/sql_rendering.rs` compares these with
//! the files under `sql/`, so a change to the SQL shows up in review as a
//! diff. The queries are built by the same functions the library runs.

#![allow(missing_docs)] // test support

use diesel::debug_query;

use crate::domain::claim::statements as claim;
use crate::domain::{bundle, events, history, lifecycle, listing, walk};
use crate::rules::visibility::{self, Scope};
use crate::rules::{activeness, outbox};

/// One rendered query: a file name under `sql/<backend>/` and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub name: &'static str,
    pub sql: String,
}

/// Puts each major clause on its own line so diffs point at the clause
/// that changed; bind values are listed after the statement.
fn layout(raw: String) -> String {
    let (statement, binds) = match raw.rsplit_once(" -- binds: ") {
        Some((statement, binds)) => (statement.to_owned(), binds.to_owned()),
        None => (raw, String::new()),
    };
    let mut text = statement;
    for keyword in [
        " FROM ",
        " WHERE ",
        " AND ",
        " OR ",
        " ORDER BY ",
        " LIMIT ",
        " SET ",
    ] {
        text = text.replace(keyword, &format!("\n{}", keyword.trim_start()));
    }
    format!("{text};\n-- binds: {binds}\n")
}

const SESSION: &str = "<session_id>";

/// A two-question bundle's writes, as the claim renders them: two rows
/// and two unused places.
fn sample_writes() -> [claim::RowWrite; 4] {
    [1, 2, 0, 0].map(|row_id| claim::RowWrite {
        row_id,
        response: (row_id > 0).then(|| format!("<answer {row_id}>")),
    })
}

/// The claim's row write as PostgreSQL's claim statement embeds it.
#[cfg(feature = "postgres")]
fn with_returned_ids<S>(
    statement: S,
) -> crate::store::Returning<S, crate::store::schema::bundle_questions::id> {
    crate::store::returning(statement, crate::store::schema::bundle_questions::id)
}

/// A user's scope, as the scoped queries render it.
fn sample_scope() -> Scope {
    Scope {
        unscoped: false,
        user_id: "<user_id>".to_owned(),
        sees_permission_bundles: false,
    }
}

fn sample_resolver() -> claim::Resolver<'static> {
    claim::Resolver {
        kind: "<kind>",
        id: "<id>".to_owned(),
        voters: "<voters>".to_owned(),
    }
}
const PENDING: &str = "<pending_id>";
const TASK: &str = "<task_id>";
const WORKSPACE: &str = "<workspace_id>";
const OWNER_KEY: &str = "<owner_key>";
const WORKSPACE_KEY: &str = "<workspace_key>";
/// The handle's clock, bound wherever ACT-1.5 asks it (DM-2); a number
/// no other sample bind uses, so a reader can tell it in the binds.
const NOW: i64 = 1_000_000;

macro_rules! catalog {
    ($backend:ty) => {{
        let expired_ids = vec!["<pending_id>".to_owned()];
        let scope = sample_scope();
        let filter = listing::ListFilter {
            workspace_id: "<workspace_id>".to_owned(),
            created_since: 0,
            after: Some(listing::Cursor {
                created_at: 0,
                pending_id: PENDING.to_owned(),
            }),
            limit: 50,
            now: NOW,
        };
        let task_ids = vec![TASK.to_owned()];
        let owner_keys = vec!["".to_owned(), OWNER_KEY.to_owned()];
        let workspace_keys = vec![WORKSPACE_KEY.to_owned()];
        let arms = walk::Arms {
            owners: owner_keys.clone(),
            workspaces: workspace_keys.clone(),
        };
        let every_arm: Vec<(usize, i64)> = (0..arms.count()).map(|arm| (arm, 2)).collect();
        let settled = history::SettledFilter {
            workspace_id: "<workspace_id>".to_owned(),
            after: Some(history::SettledCursor {
                responded_at: 0,
                pending_id: PENDING.to_owned(),
            }),
            limit: 50,
            now: NOW,
        };
        vec![
            Rendered {
                name: "list_settled",
                sql: layout(
                    debug_query::<$backend, _>(&history::settled_page_query(&scope, &settled, 51))
                        .to_string(),
                ),
            },
            Rendered {
                name: "list_settled_round",
                sql: layout(
                    debug_query::<$backend, _>(&arms.round(
                        &every_arm,
                        |key, budget| {
                            history::owner_settled_page_query(&scope, &settled, key, budget)
                        },
                        |key, budget| {
                            history::workspace_settled_page_query(&scope, &settled, key, budget)
                        },
                        |budget| history::granted_settled_page_query(&scope, &settled, budget),
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "list_pending",
                sql: layout(
                    debug_query::<$backend, _>(&listing::page_query(&scope, &filter, 51))
                        .to_string(),
                ),
            },
            Rendered {
                name: "list_pending_round",
                sql: layout(
                    debug_query::<$backend, _>(&arms.round(
                        &every_arm,
                        |key, budget| listing::owner_page_query(&scope, &filter, key, budget),
                        |key, budget| listing::workspace_page_query(&scope, &filter, key, budget),
                        |budget| listing::granted_page_query(&scope, &filter, budget),
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "list_pending_member_round",
                sql: layout(
                    debug_query::<$backend, _>(&arms.round(
                        &every_arm,
                        |key, budget| listing::owner_walk_query(&filter, key, budget),
                        |key, budget| listing::workspace_walk_query(&filter, key, budget),
                        |budget| listing::granted_walk_query(&scope, &filter, budget),
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "list_settled_member_round",
                sql: layout(
                    debug_query::<$backend, _>(&arms.round(
                        &every_arm,
                        |key, budget| history::owner_settled_walk_query(&settled, key, budget),
                        |key, budget| history::workspace_settled_walk_query(&settled, key, budget),
                        |budget| history::granted_settled_walk_query(&scope, &settled, budget),
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "summary_owner",
                sql: layout(
                    debug_query::<$backend, _>(&listing::owner_summary_query(
                        &scope,
                        &owner_keys,
                        NOW,
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "summary_member",
                sql: layout(
                    debug_query::<$backend, _>(&listing::member_summary_query(
                        &scope,
                        &workspace_keys,
                        NOW,
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "summary_granted",
                sql: layout(
                    debug_query::<$backend, _>(&listing::granted_summary_query(
                        &scope,
                        &owner_keys,
                        &workspace_keys,
                        NOW,
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "joined_workspaces",
                sql: layout(
                    debug_query::<$backend, _>(&visibility::joined_workspaces("<user_id>"))
                        .to_string(),
                ),
            },
            Rendered {
                name: "keys_of_new_bundle",
                sql: layout(
                    debug_query::<$backend, _>(&diesel::select(visibility::keys_of_task(TASK)))
                        .to_string(),
                ),
            },
            Rendered {
                name: "refresh_keys_of_task",
                sql: layout(
                    debug_query::<$backend, _>(&visibility::refresh_keys_of_task(TASK)).to_string(),
                ),
            },
            Rendered {
                name: "refresh_keys_of_workspace",
                sql: layout(
                    debug_query::<$backend, _>(&visibility::refresh_keys_of_workspace(WORKSPACE))
                        .to_string(),
                ),
            },
            Rendered {
                name: "refresh_keys_of_session",
                sql: layout(
                    debug_query::<$backend, _>(&visibility::refresh_keys_of_session(SESSION))
                        .to_string(),
                ),
            },
            Rendered {
                name: "summary",
                sql: layout(
                    debug_query::<$backend, _>(&listing::summary_query(&scope, NOW)).to_string(),
                ),
            },
            Rendered {
                name: "pending_actions",
                sql: layout(
                    debug_query::<$backend, _>(&listing::pending_actions_query(
                        &scope, &task_ids, NOW,
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "pending_actions_tasks",
                sql: layout(
                    debug_query::<$backend, _>(&listing::visible_tasks_query(&scope, &task_ids))
                        .to_string(),
                ),
            },
            Rendered {
                name: "standing",
                sql: layout(
                    debug_query::<$backend, _>(&bundle::standing_query(PENDING, NOW)).to_string(),
                ),
            },
            Rendered {
                name: "outbox",
                sql: layout(debug_query::<$backend, _>(&outbox::outbox_query(0, 50)).to_string()),
            },
            Rendered {
                name: "detach_bundle",
                sql: layout(
                    debug_query::<$backend, _>(&outbox::detach_bundle_statement(PENDING, NOW))
                        .to_string(),
                ),
            },
            Rendered {
                name: "visibility_bundle",
                sql: layout(
                    debug_query::<$backend, _>(&visibility::bundle_visibility_query(
                        &scope, PENDING, NOW,
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "events_page",
                sql: layout(
                    debug_query::<$backend, _>(&events::events_page_query(
                        &scope,
                        events::Position::default(),
                        i64::MAX,
                        100,
                        NOW,
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "event_rows",
                sql: layout(
                    debug_query::<$backend, _>(&events::event_rows_query(
                        "<type>",
                        0,
                        &[PENDING],
                        "<data>",
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "closed_on_task_delete",
                sql: layout(
                    debug_query::<$backend, _>(&lifecycle::active_bundles_of_task(TASK, NOW))
                        .to_string(),
                ),
            },
            Rendered {
                name: "visibility_task",
                sql: layout(
                    debug_query::<$backend, _>(&visibility::task_visibility_query(&scope, TASK))
                        .to_string(),
                ),
            },
            Rendered {
                name: "get_bundle",
                sql: layout(
                    debug_query::<$backend, _>(&bundle::bundle_detail_query(&scope, PENDING, NOW))
                        .to_string(),
                ),
            },
            Rendered {
                name: "visible_bundle",
                sql: layout(
                    debug_query::<$backend, _>(&bundle::visible_bundle_query(&scope, PENDING, NOW))
                        .to_string(),
                ),
            },
            Rendered {
                name: "activeness",
                sql: layout(
                    debug_query::<$backend, _>(&activeness::active_bundle_ids(NOW)).to_string(),
                ),
            },
            Rendered {
                name: "due",
                sql: layout(
                    debug_query::<$backend, _>(&activeness::due_bundle_ids(NOW)).to_string(),
                ),
            },
            Rendered {
                name: "due_batch",
                sql: layout(
                    debug_query::<$backend, _>(&crate::domain::deadline::due_batch_query(NOW, 100))
                        .to_string(),
                ),
            },
            Rendered {
                name: "next_deadline",
                sql: layout(
                    debug_query::<$backend, _>(&crate::domain::deadline::next_deadline_query(NOW))
                        .to_string(),
                ),
            },
            Rendered {
                name: "steps_due",
                sql: layout(
                    debug_query::<$backend, _>(&crate::domain::steps::steps_due_query(NOW, 100))
                        .to_string(),
                ),
            },
            Rendered {
                name: "next_step",
                sql: layout(
                    debug_query::<$backend, _>(&crate::domain::steps::next_step_query(NOW))
                        .to_string(),
                ),
            },
            Rendered {
                name: "asking_session",
                sql: layout(
                    debug_query::<$backend, _>(&crate::domain::ask::asking_session_query(SESSION))
                        .to_string(),
                ),
            },
            Rendered {
                name: "has_pending_clarification",
                sql: layout(
                    debug_query::<$backend, _>(&diesel::select(
                        lifecycle::has_active_bundle_query(SESSION, NOW),
                    ))
                    .to_string(),
                ),
            },
            Rendered {
                name: "expire_select",
                sql: layout(
                    debug_query::<$backend, _>(&lifecycle::active_bundles_of_session(SESSION, NOW))
                        .to_string(),
                ),
            },
            Rendered {
                name: "expire_update",
                sql: layout(
                    debug_query::<$backend, _>(&lifecycle::expire_rows_statement(&expired_ids, 0))
                        .to_string(),
                ),
            },
            Rendered {
                name: "detach",
                sql: layout(
                    debug_query::<$backend, _>(&outbox::detach_statement(SESSION, NOW)).to_string(),
                ),
            },
            Rendered {
                name: "prune",
                sql: layout(
                    debug_query::<$backend, _>(&crate::rules::retention::prunable_batch(0, 500))
                        .to_string(),
                ),
            },
            Rendered {
                name: "clear_hint",
                sql: layout(
                    debug_query::<$backend, _>(&lifecycle::clear_hint_statement(SESSION))
                        .to_string(),
                ),
            },
        ]
    }};
}

/// The catalog rendered for SQLite, whose claim writes the bundle row in a
/// statement of its own.
pub fn sqlite() -> Vec<Rendered> {
    let mut catalog = catalog!(diesel::sqlite::Sqlite);
    let resolver = sample_resolver();
    catalog.push(Rendered {
        name: "claim_target",
        sql: layout(
            debug_query::<diesel::sqlite::Sqlite, _>(
                &crate::domain::claim::sqlite::claim_target_query(&sample_scope(), PENDING, NOW),
            )
            .to_string(),
        ),
    });
    catalog.push(Rendered {
        name: "claim_rows",
        sql: layout(
            debug_query::<diesel::sqlite::Sqlite, _>(&claim::claim_rows_statement(
                PENDING,
                "<status>",
                &[sample_writes()[0].clone()],
                crate::domain::claim::sqlite::ReadUnderWriteLock,
            ))
            .to_string(),
        ),
    });
    catalog.push(Rendered {
        name: "claim_bundle",
        sql: layout(
            debug_query::<diesel::sqlite::Sqlite, _>(&claim::claim_bundle_statement(
                PENDING,
                "<reject_reason>",
                0,
                &resolver,
            ))
            .to_string(),
        ),
    });
    catalog
}

/// A winner's ledger entry, as the claim writes it (AUD-2).
#[cfg(feature = "postgres")]
fn sample_winner() -> crate::domain::engine::ledger::NewAttempt {
    crate::domain::engine::ledger::NewAttempt {
        pending_id: PENDING.to_owned(),
        at: NOW,
        principal_kind: "<principal_kind>",
        user_id: "<user_id>".to_owned(),
        agent_id: "<agent_id>".to_owned(),
        channel: "<channel>",
        outcome: "won",
        digest: "<digest>".to_owned(),
    }
}

/// The catalog rendered for PostgreSQL, whose claim writes the rows and the
/// bundle row in one statement.
#[cfg(feature = "postgres")]
pub fn postgres() -> Vec<Rendered> {
    let mut catalog = catalog!(diesel::pg::Pg);
    let (writes, resolver) = (sample_writes(), sample_resolver());
    catalog.push(Rendered {
        name: "claim_first_read",
        sql: layout(
            debug_query::<diesel::pg::Pg, _>(
                &crate::domain::claim::postgres::claim_first_read_query(
                    &sample_scope(),
                    PENDING,
                    NOW,
                ),
            )
            .to_string(),
        ),
    });
    catalog.push(Rendered {
        name: "claim",
        sql: layout(
            debug_query::<diesel::pg::Pg, _>(&crate::domain::claim::postgres::claim_statement(
                with_returned_ids(claim::claim_rows_statement(
                    PENDING,
                    "<status>",
                    &writes,
                    crate::domain::claim::guard::active_in_the_write(&sample_scope(), PENDING, NOW),
                )),
                &[PENDING],
                "<reject_reason>",
                0,
                &resolver,
                &sample_winner(),
                &crate::domain::claim::postgres::Announced {
                    at: 0,
                    data: "<data>",
                },
                true,
            ))
            .to_string(),
        ),
    });
    catalog.push(Rendered {
        name: "settle_rows",
        sql: layout(
            debug_query::<diesel::pg::Pg, _>(&with_returned_ids(claim::claim_rows_statement(
                PENDING,
                "<status>",
                &writes,
                crate::domain::claim::guard::due_in_the_write(PENDING, NOW),
            )))
            .to_string(),
        ),
    });
    catalog
}

/// `EXPLAIN …` (or `EXPLAIN QUERY PLAN …`) around a typed query, keeping its
/// bind parameters: how the plan tests and `examples/explain_listing.rs`
/// see the plan of the exact query the library runs.
pub struct Explain<Q> {
    pub prefix: &'static str,
    pub query: Q,
}

impl<Q, DB> diesel::query_builder::QueryFragment<DB> for Explain<Q>
where
    DB: diesel::backend::Backend,
    Q: diesel::query_builder::QueryFragment<DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        out.push_sql(self.prefix);
        self.query.walk_ast(out.reborrow())
    }
}

impl<Q> diesel::query_builder::QueryId for Explain<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q> diesel::query_builder::Query for Explain<Q> {
    type SqlType = diesel::sql_types::Untyped;
}

impl<Q, C> diesel::RunQueryDsl<C> for Explain<Q> {}
