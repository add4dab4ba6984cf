//! Prints the plan each backend chooses for the listing page query, for a
//! database you point it at:
//!
//!     cargo run --example explain_listing --features postgres -- <database-url> [user]
//!
//! Shows the unscoped and the scoped (`user`, default `user3`) first page,
//! and on PostgreSQL both the custom and the generic plan.

use clarion::test_hooks::AnyConnection;
use clarion::test_hooks::Scope;
use clarion::test_hooks::{page_query, ListFilter};
use diesel::prelude::*;
use diesel::sql_types::Text;

use clarion::test_hooks::sql_catalog::Explain;

/// One line of PostgreSQL's `EXPLAIN` (read only with `--features postgres`).
#[derive(QueryableByName)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
struct Line {
    #[diesel(sql_type = Text)]
    #[diesel(column_name = "QUERY PLAN")]
    #[allow(dead_code)]
    pg: String,
}

#[derive(QueryableByName)]
struct SqliteLine {
    #[diesel(sql_type = Text)]
    detail: String,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .expect("usage: explain_listing <database-url> [user]");
    let user = args.next().unwrap_or_else(|| "user3".to_owned());
    let clarion = clarion::Clarion::open(&url).expect("open");
    let filter = ListFilter {
        workspace_id: String::new(),
        created_since: i64::MIN,
        after: None,
        limit: 50,
        now: clarion::Clock::now(&clarion::SystemClock).as_micros(),
    };
    for scope in [
        Scope {
            unscoped: true,
            user_id: String::new(),
            sees_permission_bundles: true,
        },
        Scope {
            unscoped: false,
            user_id: user.clone(),
            sees_permission_bundles: true,
        },
    ] {
        println!("==== unscoped: {}", scope.unscoped);
        clarion
            .with_raw_connection(|conn: &mut AnyConnection| match conn {
                AnyConnection::Sqlite(conn) => {
                    let lines = Explain {
                        prefix: "EXPLAIN QUERY PLAN ",
                        query: page_query(&scope, &filter, filter.limit + 1),
                    }
                    .load::<SqliteLine>(conn)
                    .unwrap();
                    for line in lines {
                        println!("{}", line.detail);
                    }
                }
                #[cfg(feature = "postgres")]
                AnyConnection::Postgres(conn) => {
                    for mode in ["force_custom_plan", "force_generic_plan"] {
                        println!("-- {mode}");
                        diesel::sql_query(format!("SET plan_cache_mode = {mode}"))
                            .execute(conn)
                            .unwrap();
                        let lines = Explain {
                            prefix: "EXPLAIN ANALYZE ",
                            query: page_query(&scope, &filter, filter.limit + 1),
                        }
                        .load::<Line>(conn)
                        .unwrap();
                        for line in lines {
                            println!("{}", line.pg);
                        }
                    }
                }
            })
            .unwrap();
    }
}
