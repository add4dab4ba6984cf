//! What the benchmark programs share: medians and scratch databases.

#![allow(dead_code)]

use std::time::Duration;

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A fresh database for one benchmark, removed on drop.
pub struct Scratch {
    pub url: String,
    cleanup: Option<Box<dyn FnOnce()>>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(cleanup) = self.cleanup.take() {
            cleanup();
        }
    }
}

pub fn sqlite(name: &str) -> Scratch {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!(
        "sqlite://{}",
        dir.path().join(format!("{name}.db")).display()
    );
    Scratch {
        url,
        cleanup: Some(Box::new(move || drop(dir))),
    }
}

/// A fresh schema on `CLARION_TEST_DATABASE_URL` (default the local test
/// server).
#[cfg(feature = "postgres")]
pub fn postgres(name: &str) -> Scratch {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let base = std::env::var("CLARION_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let schema = format!("clarion_bench_{name}_{}", std::process::id());
    let mut admin = diesel::PgConnection::establish(&base).expect("PostgreSQL for the benchmark");
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .unwrap();
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}options=-c%20search_path%3D{schema}");
    Scratch {
        url,
        cleanup: Some(Box::new(move || {
            let _ = admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        })),
    }
}
