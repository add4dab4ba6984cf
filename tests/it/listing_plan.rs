//! OPS-3, issue "pages cost O(limit)": with most bundles resolved or
//! superseded, a page walks the partial listing index in order and stops
//! after `limit` rows — no scan of the bundle table, no sort. Checked on the
//! plan each backend chooses for the exact query the library runs.

use clarion::test_hooks::AnyConnection;
use clarion::test_hooks::Scope;
use clarion::test_hooks::{page_query, ListFilter};
use clarion::test_hooks::{populate, WorldSpec};
use clarion::Cursor;
use diesel::prelude::*;
use diesel::sql_types::Text;

use clarion::test_hooks::sql_catalog::Explain;

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

fn plans(conn: &mut AnyConnection) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (scope_name, scope) in scopes() {
        for (filter_name, filter) in filters() {
            let name = format!("{scope_name} {filter_name}");
            let query = page_query(&scope, &filter);
            let plan = match conn {
                AnyConnection::Sqlite(conn) => Explain {
                    prefix: "EXPLAIN QUERY PLAN ",
                    query,
                }
                .load::<SqlitePlanLine>(conn)
                .unwrap()
                .into_iter()
                .map(|l| l.detail)
                .collect::<Vec<_>>(),
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
                                query: page_query(&scope, &filter),
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
            out.push((name, plan.join("\n")));
        }
    }
    out
}

dual_backend! {
    fn ops_3_list_page_walks_the_partial_index_without_sorting(db) {
        populate(db, &WorldSpec::new(20_000, 200)).unwrap();
        let backend = db.backend();
        for (name, plan) in db.raw(plans) {
            let context = format!("{backend:?} {name}:\n{plan}");
            match backend {
                clarion::Backend::Sqlite => {
                    assert!(plan.contains("bundles USING INDEX bundles_listing_order"), "{context}");
                    assert!(!plan.contains("TEMP B-TREE"), "{context}");
                    for line in plan.lines() {
                        assert!(!line.trim_start().starts_with("SCAN") || line.contains("USING"), "full scan: {context}");
                    }
                }
                clarion::Backend::Postgres => {
                    for variant in plan.split("-- ").filter(|v| !v.is_empty()) {
                        let top = variant.lines().nth(1).unwrap_or_default();
                        assert!(top.trim_start().starts_with("Limit"), "{context}");
                        assert!(variant.contains("using bundles_listing_order on bundles"), "{context}");
                        assert!(!variant.contains("Seq Scan on bundles "), "{context}");
                        assert!(!variant.contains("Seq Scan on bundle_questions"), "{context}");
                        assert!(!variant.contains("Sort"), "{context}");
                    }
                }
            }
        }
        // The same query, run: pages of 50 from 200 active bundles.
        let page = db.list_pending(&clarion::Principal::System, &clarion::ListRequest::default()).unwrap();
        assert_eq!(page.bundles.len(), 50);
        assert!(page.next_cursor.is_some());
    }
}
