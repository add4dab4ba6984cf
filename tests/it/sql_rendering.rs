//! SQL-1: the rendered SQL of every membership, visibility and claim query
//! equals the reviewed file under `sql/<backend>/`. Regenerate with
//! `CLARION_BLESS_SQL=1 cargo test --all-features --test it sql_rendering`,
//! then read the diff before committing it.

use crate::support::{bless, root};

fn check(backend: &str, rendered: Vec<clarion::test_hooks::sql_catalog::Rendered>) {
    let dir = root().join("sql").join(backend);
    let bless = bless("CLARION_BLESS_SQL");
    let mut stale = Vec::new();
    let names: Vec<String> = rendered.iter().map(|q| format!("{}.sql", q.name)).collect();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !names.contains(&file) {
            stale.push(format!(
                "sql/{backend}/{file}: no query renders it any more; delete it"
            ));
        }
    }
    for query in rendered {
        let path = dir.join(format!("{}.sql", query.name));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &query.sql).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(committed) if committed == query.sql => {}
            Ok(committed) => stale.push(format!(
                "{}: differs\n--- committed\n{committed}\n--- rendered\n{}",
                path.display(),
                query.sql
            )),
            Err(e) => stale.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "rendered SQL differs from sql/{backend} (CLARION_BLESS_SQL=1 regenerates):\n{}",
        stale.join("\n")
    );
}

#[test]
fn sql_1_sqlite_rendering_matches_committed_files() {
    check("sqlite", clarion::test_hooks::sql_catalog::sqlite());
}

#[cfg(feature = "postgres")]
#[test]
fn sql_1_postgres_rendering_matches_committed_files() {
    check("postgres", clarion::test_hooks::sql_catalog::postgres());
}
