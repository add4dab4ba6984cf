//! Database URLs: which backend, and where.

use std::path::Path;

use super::error::OpenError;

/// Which database a handle talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite, bundled: one file, the embedded default.
    Sqlite,
    /// PostgreSQL (cargo feature `postgres`): several processes, one database.
    Postgres,
}

impl Backend {
    /// The backend's name as people write it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// A parsed database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A SQLite database file; created if missing, in a directory that must exist.
    Sqlite { path: String },
    /// A PostgreSQL connection URL, passed to libpq unchanged.
    Postgres { url: String },
}

impl Target {
    /// Parses `sqlite://<path>` (so `sqlite:///abs/path.db`), a bare path, or
    /// `postgres://…` / `postgresql://…`. Anything else that looks like a URL
    /// is refused rather than mistaken for a file name.
    pub(crate) fn parse(url: &str) -> Result<Target, OpenError> {
        let invalid = |reason: &str| OpenError::InvalidUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        if url.trim().is_empty() {
            return Err(invalid("the URL is empty"));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Target::Postgres {
                url: url.to_owned(),
            });
        }
        let path = match url.strip_prefix("sqlite://") {
            Some(path) => path,
            None if url.contains("://") => {
                return Err(invalid(
                    "unknown scheme; use sqlite://<path>, a plain file path, or postgres://",
                ))
            }
            None => url,
        };
        if path.is_empty() {
            return Err(invalid("the SQLite path is empty"));
        }
        if path == ":memory:" || path.starts_with("file:") {
            return Err(invalid(
                "in-memory and URI-style SQLite databases are not supported; give a file path",
            ));
        }
        if let Some(parent) = Path::new(path).parent() {
            if !parent.as_os_str().is_empty() && !parent.is_dir() {
                return Err(invalid(&format!(
                    "directory {} does not exist",
                    parent.display()
                )));
            }
        }
        Ok(Target::Sqlite {
            path: path.to_owned(),
        })
    }

    /// The same text for every URL naming this database in this process:
    /// a SQLite path canonicalized (a plain path and `sqlite://` alike), a
    /// PostgreSQL URL as given.
    pub(crate) fn identity(&self) -> String {
        match self {
            Target::Sqlite { path } => {
                let canonical = std::fs::canonicalize(path).map_or_else(
                    |_| path.clone(),
                    |canonical| canonical.to_string_lossy().into_owned(),
                );
                format!("sqlite:{canonical}")
            }
            Target::Postgres { url } => url.clone(),
        }
    }

    pub(crate) fn backend(&self) -> Backend {
        match self {
            Target::Sqlite { .. } => Backend::Sqlite,
            Target::Postgres { .. } => Backend::Postgres,
        }
    }
}
