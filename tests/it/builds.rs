//! The builds users make: a host that embeds the library with
//! `default-features = false` gets no async runtime (the library stays
//! synchronous), with or without PostgreSQL; the runtime comes only with
//! the `http` door (and the `cli` binary, which includes it). Read from
//! `cargo tree`, so a dependency that drags one in fails here. (`.ci/run`
//! compiles each of these builds too.)

use std::collections::BTreeSet;
use std::process::Command;

/// Async crates the synchronous library must not depend on.
const RUNTIME: [&str; 4] = ["tokio", "axum", "hyper", "rmcp"];

/// The crates of the library's normal dependency graph with `features`.
fn graph(features: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .args(features)
        .output()
        .expect("run cargo tree");
    assert!(
        output.status.success(),
        "cargo tree {features:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

fn runtime_in(graph: &BTreeSet<String>) -> Vec<&'static str> {
    RUNTIME
        .into_iter()
        .filter(|name| graph.contains(*name))
        .collect()
}

#[test]
fn builds_the_embedded_library_has_no_async_runtime() {
    for features in [
        &["--no-default-features"][..],
        &["--no-default-features", "--features", "postgres"],
    ] {
        let graph = graph(features);
        assert!(
            graph.contains("diesel"),
            "{features:?}: the graph was read: {graph:?}"
        );
        assert_eq!(runtime_in(&graph), Vec::<&str>::new(), "{features:?}");
    }
}

#[test]
fn builds_the_runtime_comes_with_the_doors_that_need_it() {
    let http = graph(&["--no-default-features", "--features", "http"]);
    assert_eq!(runtime_in(&http), ["tokio", "axum", "hyper"]);
    assert_eq!(runtime_in(&graph(&[])), RUNTIME);
}

/// MAIL-1: mail is a blocking SMTP client over rustls: no async runtime,
/// no native-tls or OpenSSL.
#[test]
fn builds_mail_brings_no_runtime_and_no_system_tls() {
    let mail = graph(&["--no-default-features", "--features", "mail"]);
    assert!(mail.contains("lettre"), "{mail:?}");
    assert_eq!(runtime_in(&mail), Vec::<&str>::new());
    for system in ["native-tls", "openssl", "openssl-sys"] {
        assert!(!mail.contains(system), "{system} in {mail:?}");
    }
}
