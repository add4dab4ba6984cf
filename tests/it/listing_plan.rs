//! OPS-3, issue "pages cost O(limit)": with most bundles resolved or
//! superseded, a page walks the partial listing index in order and stops
//! after `limit` rows — no scan of the bundle table, no sort. Checked on the
//! plan each backend chooses for the exact query the library runs.

use clarion::test_hooks::AnyConnection;
use clarion::test_hooks::Scope;
use clarion::test_hooks::{owner_page_query, page_query, ListFilter};
use clarion::test_hooks::{populate, WorldSpec};
use clarion::Cursor;
use diesel::prelude::*;
use diesel::sql_types::Text;

use clarion::test_hooks::sql_catalog::Explain;

use crate::support::TestDb;

/// The plans' clock: the worlds hold no deadline, so any `now` plans alike.
const NOW: i64 = crate::support::EPOCH.as_micros();

#[derive(QueryableByName)]
struct SqlitePlanLine {
    #[diesel(sql_type = Text)]
    detail: String,
}

#[cfg(feature = "postgres")]
#[derive(QueryableByName)]
struct PgPlanLine {
    #[diesel(sql_type = Text)]
    #[diesel(column_name = "QUERY PLAN")]
    line: String,
}

fn filters() -> Vec<(&'static str, ListFilter)> {
    let first = ListFilter {
        workspace_id: String::new(),
        created_since: i64::MIN,
        after: None,
        limit: 50,
        now: NOW,
    };
    let deep = ListFilter {
        after: Some(Cursor::at(1_795_982_400_000_000 + 15_000_000, "b15000")),
        ..first.clone()
    };
    vec![("first page", first), ("deep page", deep)]
}

fn scopes() -> Vec<(&'static str, Scope)> {
    vec![
        (
            "unscoped",
            Scope {
                unscoped: true,
                user_id: String::new(),
                sees_permission_bundles: true,
            },
        ),
        (
            "scoped",
            Scope {
                unscoped: false,
                user_id: "user3".into(),
                sees_permission_bundles: false,
            },
        ),
    ]
}

/// A query both compiled backends can explain.
#[cfg(feature = "postgres")]
trait Plannable:
    diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite>
    + diesel::query_builder::QueryFragment<diesel::pg::Pg>
{
}
#[cfg(feature = "postgres")]
impl<Q> Plannable for Q where
    Q: diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite>
        + diesel::query_builder::QueryFragment<diesel::pg::Pg>
{
}
#[cfg(not(feature = "postgres"))]
trait Plannable: diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite> {}
#[cfg(not(feature = "postgres"))]
impl<Q> Plannable for Q where Q: diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite> {}

/// The plan of `query` on this connection; on PostgreSQL under both plan
/// cache modes, each variant headed by `-- <mode>`. `EXPLAIN` plans with
/// the bound values whatever the mode, so both are plans for those values;
/// what the generic plan reads is [`rows_read`]'s to check.
fn plan_of<Q: Plannable>(conn: &mut AnyConnection, query: impl Fn() -> Q) -> String {
    let lines: Vec<String> = match conn {
        AnyConnection::Sqlite(conn) => Explain {
            prefix: "EXPLAIN QUERY PLAN ",
            query: query(),
        }
        .load::<SqlitePlanLine>(conn)
        .unwrap()
        .into_iter()
        .map(|l| l.detail)
        .collect(),
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => {
            let mut lines = Vec::new();
            for mode in ["force_custom_plan", "force_generic_plan"] {
                diesel::sql_query(format!("SET plan_cache_mode = {mode}"))
                    .execute(conn)
                    .unwrap();
                lines.push(format!("-- {mode}"));
                lines.extend(
                    Explain {
                        prefix: "EXPLAIN ",
                        query: query(),
                    }
                    .load::<PgPlanLine>(conn)
                    .unwrap()
                    .into_iter()
                    .map(|l| l.line),
                );
            }
            diesel::sql_query("RESET plan_cache_mode")
                .execute(conn)
                .unwrap();
            lines
        }
    };
    lines.join("\n")
}

/// PostgreSQL only: what `query` reads as the library runs it — a cached
/// prepared statement under `plan_cache_mode = force_generic_plan` (this
/// checks that it ran its generic plan) — by relation: the entries each
/// index returned, the rows each table gave to index and bitmap scans, and
/// for each sequential scan the pages of its table (a table of a few pages
/// is scanned per row rather than probed, which costs about as much as a
/// probe; a large one never should be). Read from the server's counters
/// for the current transaction, before and after, because `EXPLAIN` of a
/// statement with bound values plans it with those values: what it shows
/// under `force_generic_plan` is a custom plan (PostgreSQL 15 has no
/// `EXPLAIN (GENERIC_PLAN)`), and a custom plan can miss what the generic
/// one does (measured: pending actions' generic plan read every active
/// bundle's entry in `bundles_listing_order`; its custom plan did not).
/// The counts do not depend on the machine's speed, so they can bound a
/// cost without timing it.
#[cfg(feature = "postgres")]
fn rows_read<'q, Q, T>(
    conn: &mut AnyConnection,
    query: impl FnOnce() -> Q,
) -> std::collections::BTreeMap<String, u64>
where
    Q: diesel::query_dsl::LoadQuery<'q, AnyConnection, T>,
{
    use diesel::sql_types::BigInt;
    #[derive(QueryableByName)]
    struct Plans {
        #[diesel(sql_type = BigInt)]
        generic: i64,
        #[diesel(sql_type = BigInt)]
        custom: i64,
    }
    #[derive(QueryableByName)]
    struct Read {
        #[diesel(sql_type = Text)]
        relation: String,
        #[diesel(sql_type = BigInt)]
        read: i64,
    }
    let plans = |conn: &mut AnyConnection| -> (i64, i64) {
        let plans = diesel::sql_query(
            "SELECT coalesce(sum(generic_plans), 0)::bigint AS generic,
                    coalesce(sum(custom_plans), 0)::bigint AS custom
             FROM pg_prepared_statements",
        )
        .get_result::<Plans>(conn)
        .unwrap();
        (plans.generic, plans.custom)
    };
    // Index entries returned; table rows fetched by index or bitmap scans,
    // and each sequential scan's pages; of this schema's relations.
    let counters = |conn: &mut AnyConnection| -> std::collections::BTreeMap<String, i64> {
        diesel::sql_query(
            "SELECT c.relname::text AS relation,
                    CASE WHEN c.relkind = 'i' THEN pg_stat_get_xact_tuples_returned(c.oid)
                         ELSE pg_stat_get_xact_tuples_fetched(c.oid)
                              + pg_stat_get_xact_numscans(c.oid)
                                * (pg_relation_size(c.oid)
                                   / current_setting('block_size')::bigint)
                    END AS read
             FROM pg_class c
             WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'i')",
        )
        .load::<Read>(conn)
        .unwrap()
        .into_iter()
        .map(|r| (r.relation, r.read))
        .collect()
    };
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        // The library's connections already plan so (store::pool); said
        // again for this transaction only.
        diesel::sql_query("SET LOCAL plan_cache_mode = force_generic_plan").execute(conn)?;
        let (generic, custom) = plans(conn);
        let before = counters(conn);
        query().load::<T>(conn)?;
        let after = counters(conn);
        assert_eq!(
            plans(conn),
            (generic + 1, custom),
            "the statement ran as a cached generic plan"
        );
        Ok(after
            .into_iter()
            .map(|(relation, read)| {
                let read = read - before.get(&relation).copied().unwrap_or(0);
                (relation, read as u64)
            })
            .filter(|(_, read)| *read > 0)
            .collect())
    })
    .unwrap()
}

/// The plans of the page walks the library runs: `system` walks the
/// listing index; a scoped principal walks each of its owner keys (OPS-3a).
/// Each is `(name, index it must walk, plan)`.
fn plans(conn: &mut AnyConnection) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for (scope_name, scope) in scopes() {
        for (filter_name, filter) in filters() {
            if scope.unscoped {
                let plan = plan_of(conn, || page_query(&scope, &filter, 51));
                let name = format!("{scope_name} {filter_name}");
                out.push((name, "bundles_listing_order", plan));
                continue;
            }
            for key in ["", scope.user_id.as_str()] {
                let plan = plan_of(conn, || owner_page_query(&scope, &filter, key, 51));
                let name = format!("{scope_name} {filter_name} owner key {key:?}");
                out.push((name, "bundles_by_owner", plan));
            }
        }
    }
    out
}

dual_backend!(ops_3_list_page_walks_the_partial_index_without_sorting);

fn ops_3_list_page_walks_the_partial_index_without_sorting(db: &TestDb) {
    populate(db, &WorldSpec::new(20_000, 200)).unwrap();
    let backend = db.backend();
    for (name, index, plan) in db.raw(plans) {
        let context = format!("{backend:?} {name}:\n{plan}");
        match backend {
            clarion::Backend::Sqlite => {
                assert!(
                    plan.contains(&format!("bundles USING INDEX {index}")),
                    "{context}"
                );
                assert!(!plan.contains("TEMP B-TREE"), "{context}");
                assert!(!plan.contains("owner_key>"), "{context}");
                for line in plan.lines() {
                    assert!(
                        !line.trim_start().starts_with("SCAN") || line.contains("USING"),
                        "full scan: {context}"
                    );
                }
            }
            clarion::Backend::Postgres => {
                for variant in plan.split("-- ").filter(|v| !v.is_empty()) {
                    let top = variant.lines().nth(1).unwrap_or_default();
                    assert!(top.trim_start().starts_with("Limit"), "{context}");
                    assert!(!variant.contains("Seq Scan on bundles "), "{context}");
                    assert!(
                        !variant.contains("Seq Scan on bundle_questions"),
                        "{context}"
                    );
                    if index == "bundles_listing_order" {
                        assert!(
                            variant.contains(&format!("using {index} on bundles")),
                            "{context}"
                        );
                        assert!(!variant.contains("Sort"), "{context}");
                    } else {
                        // An owner's range may be read as a bitmap and
                        // sorted when the planner expects few rows in it;
                        // either way it never reads another owner's.
                        assert!(variant.contains(index), "{context}");
                    }
                }
            }
        }
    }
    // The same query, run: pages of 50 from 200 active bundles.
    let page = db
        .list_pending(
            &clarion::Principal::System,
            &clarion::ListRequest::default(),
        )
        .unwrap();
    assert_eq!(page.bundles.len(), 50);
    assert!(page.next_cursor.is_some());
}

dual_backend!(list_14_history_page_walks_the_settled_index_without_sorting);

/// LIST-14: a history page walks the resolution-time index newest first
/// and stops after `limit` rows — `bundles_settled` for `system`, each
/// owner key's range of `bundles_settled_by_owner` for a scoped principal
/// — on the first page and a deep one, with no sort and no scan of the
/// bundles.
fn list_14_history_page_walks_the_settled_index_without_sorting(db: &TestDb) {
    use clarion::test_hooks::{owner_settled_page_query, settled_page_query, SettledFilter};
    populate(db, &WorldSpec::new(20_000, 200)).unwrap();
    let backend = db.backend();
    let first = SettledFilter {
        workspace_id: String::new(),
        after: None,
        limit: 50,
        now: NOW,
    };
    let deep = SettledFilter {
        after: Some(clarion::SettledCursor::at(
            1_795_982_400_000_000 + 2_000_000 + 500,
            "b2000",
        )),
        ..first.clone()
    };
    for (scope_name, scope) in scopes() {
        for (filter_name, filter) in [("first page", &first), ("deep page", &deep)] {
            let walks: Vec<(String, &str, String)> = if scope.unscoped {
                let plan = db.raw(|conn| plan_of(conn, || settled_page_query(&scope, filter, 51)));
                vec![(String::new(), "bundles_settled", plan)]
            } else {
                ["", scope.user_id.as_str()]
                    .into_iter()
                    .map(|key| {
                        let plan = db.raw(|conn| {
                            plan_of(conn, || owner_settled_page_query(&scope, filter, key, 51))
                        });
                        (
                            format!(" owner key {key:?}"),
                            "bundles_settled_by_owner",
                            plan,
                        )
                    })
                    .collect()
            };
            for (key, index, plan) in walks {
                let context = format!("{backend:?} {scope_name} {filter_name}{key}:\n{plan}");
                assert_walks(backend, &context, &plan, index);
                match backend {
                    clarion::Backend::Sqlite => {
                        assert!(!plan.contains("TEMP B-TREE"), "{context}");
                    }
                    clarion::Backend::Postgres => {
                        for variant in plan.split("-- ").filter(|v| !v.is_empty()) {
                            let top = variant.lines().nth(1).unwrap_or_default();
                            assert!(top.trim_start().starts_with("Limit"), "{context}");
                            // As for the inbox's owner walks: a range the
                            // planner expects to be small may be read as a
                            // bitmap and sorted; a large one is walked in
                            // order (the benchmark measures both at 1M).
                            if scope.unscoped {
                                assert!(!variant.contains("Sort"), "{context}");
                            }
                        }
                    }
                }
            }
        }
    }
    // The same query, run: the newest answered bundle first, then paging on.
    let page = db
        .list_settled(
            &clarion::Principal::System,
            &clarion::SettledRequest::default(),
        )
        .unwrap();
    assert_eq!(page.bundles.len(), 50);
    let times: Vec<_> = page
        .bundles
        .iter()
        .map(|detail| detail.response.as_ref().unwrap().responded_at)
        .collect();
    assert!(times.windows(2).all(|pair| pair[0] >= pair[1]));
    assert!(page.next_cursor.is_some());
}

dual_backend!(ops_3a_summary_and_pending_actions_use_their_indexes);

/// OPS-3a: a scoped summary counts over its owner keys' index ranges and
/// pending actions find the requested tasks' bundles by `task_key`;
/// neither reads the whole bundle table.
fn ops_3a_summary_and_pending_actions_use_their_indexes(db: &TestDb) {
    use clarion::test_hooks::{owner_summary_query, pending_actions_query};
    populate(db, &WorldSpec::new(20_000, 200)).unwrap();
    let backend = db.backend();
    let scope = scopes().remove(1).1;
    let keys = vec![String::new(), scope.user_id.clone()];
    let task_ids = vec!["t3".to_owned(), "t13".to_owned()];
    let summary = db.raw(|conn| plan_of(conn, || owner_summary_query(&scope, &keys, NOW)));
    let actions = db.raw(|conn| plan_of(conn, || pending_actions_query(&scope, &task_ids, NOW)));
    for (name, plan, index) in [
        ("summary", summary, "bundles_by_owner"),
        ("pending actions", actions, "bundles_by_task"),
    ] {
        assert_walks(backend, name, &plan, index);
    }
}

dual_backend!(
    exp_4_the_sweep_walks_the_deadline_index,
    nudge_2_the_sweep_walks_the_step_index
);

/// NUDGE-2: a sweep's steps examine O(limit) bundles: the due steps and
/// the next step walk `bundles_next_step`, never the whole bundle table,
/// with 20,000 active bundles around.
fn nudge_2_the_sweep_walks_the_step_index(db: &TestDb) {
    use clarion::test_hooks::{next_step_query, steps_due_query};
    populate(db, &WorldSpec::new(20_000, 200)).unwrap();
    let backend = db.backend();
    let batch = db.raw(|conn| plan_of(conn, || steps_due_query(NOW, 100)));
    let next = db.raw(|conn| plan_of(conn, || next_step_query(NOW)));
    for (name, plan) in [("due steps", batch), ("next step", next)] {
        assert_walks(backend, name, &plan, "bundles_next_step");
    }
}

/// EXP-4: a sweep examines O(limit) bundles: the due batch and the next
/// deadline walk `bundles_due`, never the whole bundle table, with
/// 20,000 active bundles around.
fn exp_4_the_sweep_walks_the_deadline_index(db: &TestDb) {
    use clarion::test_hooks::{due_batch_query, next_deadline_query};
    populate(db, &WorldSpec::new(20_000, 200)).unwrap();
    let backend = db.backend();
    let batch = db.raw(|conn| plan_of(conn, || due_batch_query(NOW, 100)));
    let next = db.raw(|conn| plan_of(conn, || next_deadline_query(NOW)));
    for (name, plan) in [("due batch", batch), ("next deadline", next)] {
        assert_walks(backend, name, &plan, "bundles_due");
    }
}

/// OPS-3a: `plan` walks `index` and never scans the bundles (nor, on
/// PostgreSQL, their questions) whole, in every variant of the plan; on
/// SQLite it walks only its owner keys, not every non-null one.
fn assert_walks(backend: clarion::Backend, name: &str, plan: &str, index: &str) {
    let context = format!("{backend:?} {name}:\n{plan}");
    assert!(plan.contains(index), "{context}");
    match backend {
        clarion::Backend::Sqlite => {
            for line in plan.lines() {
                assert!(
                    !line.trim_start().starts_with("SCAN bundles "),
                    "full scan: {context}"
                );
            }
            assert!(!plan.contains("owner_key>"), "{context}");
        }
        clarion::Backend::Postgres => {
            for variant in plan.split("-- ").filter(|v| !v.is_empty()) {
                assert!(variant.contains(index), "{context}");
                assert!(!variant.contains("Seq Scan on bundles "), "{context}");
                assert!(
                    !variant.contains("Seq Scan on bundle_questions"),
                    "{context}"
                );
            }
        }
    }
}

dual_backend!(
    ops_3a_plans_keep_the_owner_walk_without_statistics,
    prod_3_plans_hold_in_a_world_built_through_the_library
);

/// OPS-3a: in a crowded world no `ANALYZE` has seen since it was empty
/// (100k active bundles over 1,000 workspaces, generated in bulk,
/// autovacuum off), a user's summary still counts over its owner keys'
/// ranges and pending actions still find the tasks' bundles by
/// `task_key`, in the custom and the generic plan alike: plans that do not
/// hope for fresh statistics.
fn ops_3a_plans_keep_the_owner_walk_without_statistics(db: &TestDb) {
    statistics_of_empty_tables(db);
    let world = WorldSpec {
        bundles: 100_000,
        sessions: 1_000,
        owners: 1_000,
        active_every: 1,
        analyze: false,
        ..WorldSpec::new(100_000, 100_000)
    };
    populate(db, &world).unwrap();
    // The user's workspace `w3` holds 100 active bundles of one question.
    assert_owner_plans(db, "t3", 100);
}

/// PROD-3: the same in a world built as users build it, through the
/// library (mirror, then asks: 200 workspaces of 25 bundles, each owned by
/// its own user), with no `ANALYZE` since the tables were empty.
fn prod_3_plans_hold_in_a_world_built_through_the_library(db: &TestDb) {
    statistics_of_empty_tables(db);
    for w in 0..200 {
        let session = crate::support::mirror(db, &w.to_string(), &format!("user{w}"));
        for _ in 0..25 {
            crate::support::ask(db, &session, 1);
        }
    }
    assert_owner_plans(db, "t-3", 25);
}

/// PostgreSQL: statistics from when the tables were empty, then none
/// again (autovacuum off): what an early ANALYZE leaves behind as a
/// database grows. SQLite gathers none unless asked.
fn statistics_of_empty_tables(db: &TestDb) {
    if db.backend() != clarion::Backend::Postgres {
        return;
    }
    db.raw(|conn| {
        for table in [
            "workspaces",
            "tasks",
            "sessions",
            "turns",
            "bundles",
            "bundle_questions",
        ] {
            for statement in [
                format!("ALTER TABLE {table} SET (autovacuum_enabled = false)"),
                format!("ANALYZE {table}"),
            ] {
                diesel::sql_query(statement).execute(conn).unwrap();
            }
        }
    });
}

/// `user3`'s summary walks its owner keys' ranges and pending actions on
/// `task` find its bundles by `task_key`, in every plan; on PostgreSQL
/// every statement the two operations run reads O(the user's bundles)
/// rows as the library runs it, with its generic plan (a join over every
/// question row, as a user's summary once made by `pending_id = ANY(…)`,
/// reads them all for each bundle; a bitmap of `bundles_listing_order`, as
/// pending actions once ANDed with the task key's, every tenant's active
/// bundles); and the summary counts the user's `bundles` of one question
/// each.
fn assert_owner_plans(db: &TestDb, task: &str, bundles: i64) {
    use clarion::test_hooks::{owner_summary_query, pending_actions_query};
    let backend = db.backend();
    let scope = Scope {
        unscoped: false,
        user_id: "user3".into(),
        sees_permission_bundles: true,
    };
    let keys = vec![String::new(), scope.user_id.clone()];
    let task_ids = vec![task.to_owned()];
    let plans = [
        (
            "summary",
            db.raw(|conn| plan_of(conn, || owner_summary_query(&scope, &keys, NOW))),
            "bundles_by_owner",
        ),
        (
            "pending actions",
            db.raw(|conn| plan_of(conn, || pending_actions_query(&scope, &task_ids, NOW))),
            "bundles_by_task",
        ),
    ];
    for (name, plan, index) in plans {
        assert_walks(backend, name, &plan, index);
    }
    #[cfg(feature = "postgres")]
    if backend == clarion::Backend::Postgres {
        use clarion::test_hooks::visible_tasks_query;
        type Pending = (Option<String>, String, Option<bool>);
        // Every statement `summary` and `pending_actions` run, as they run.
        let reads = [
            (
                "the summary",
                db.raw(|conn| {
                    rows_read::<_, (i64, Option<i64>, Option<i64>)>(conn, || {
                        owner_summary_query(&scope, &keys, NOW)
                    })
                }),
                bundles,
            ),
            (
                "pending actions' bundles",
                db.raw(|conn| {
                    rows_read::<_, Pending>(conn, || pending_actions_query(&scope, &task_ids, NOW))
                }),
                bundles,
            ),
            (
                "pending actions' visible tasks",
                db.raw(|conn| {
                    rows_read::<_, String>(conn, || visible_tasks_query(&scope, &task_ids))
                }),
                0,
            ),
        ];
        // About 12 a bundle (its entry, its row, its checks' lookups),
        // against thousands a bundle for a join over every question row or
        // a bitmap of every tenant's active bundles.
        let over: Vec<String> = reads
            .iter()
            .map(|(name, read, bundles)| (name, read, read.values().sum::<u64>(), *bundles))
            .filter(|(_, _, total, bundles)| *total > 40 * *bundles as u64 + 200)
            .map(|(name, read, total, bundles)| {
                format!("{name} read {total} for {bundles} bundles: {read:?}")
            })
            .collect();
        assert!(over.is_empty(), "{}", over.join("\n"));
    }
    let user = clarion::Principal::user("user3");
    let summary = db.summary(&user).unwrap();
    assert_eq!(
        (summary.pending_bundles, summary.pending_questions),
        (bundles, bundles)
    );
}
