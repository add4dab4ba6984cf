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
    /// A PostgreSQL database, perhaps behind a pooler.
    Postgres(PgTarget),
}

/// How a handle reaches a PostgreSQL database (PROD-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PgTarget {
    /// The URL libpq gets: the one given, without clarion's `pooler`.
    pub(crate) url: String,
    /// `pooler=transaction`: every transaction may run on another server
    /// connection, so nothing may outlive one — no named prepared
    /// statement, no session setting, no `LISTEN`.
    pub(crate) pooled: bool,
    /// A URL straight to the server (no pooler), for migrations and
    /// `LISTEN`.
    pub(crate) direct_url: Option<String>,
}

impl PgTarget {
    /// Where `LISTEN` can work: the direct URL, else the URL itself unless
    /// a transaction pooler stands in front of it (then, none: other
    /// processes' changes are seen by polling).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))] // PostgreSQL only
    pub(crate) fn listen_url(&self) -> Option<&str> {
        match (&self.direct_url, self.pooled) {
            (Some(direct), _) => Some(direct),
            (None, false) => Some(&self.url),
            (None, true) => None,
        }
    }

    /// Where migrations run: the direct URL when there is one (a pooler's
    /// query timeouts are not meant for DDL). Through a transaction pooler
    /// they work too: their lock is the transaction's own.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))] // PostgreSQL only
    pub(crate) fn migrate_url(&self) -> (&str, bool) {
        match &self.direct_url {
            Some(direct) => (direct, false),
            None => (&self.url, self.pooled),
        }
    }
}

/// The URL query parameter that names the pooler in front of the server;
/// clarion reads it and removes it (libpq refuses parameters it does not
/// know).
const POOLER_PARAMETER: &str = "pooler";

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
        if is_postgres_url(url) {
            let (url, pooled) = take_pooler(url).map_err(|reason| invalid(&reason))?;
            return Ok(Target::Postgres(PgTarget {
                url,
                pooled,
                direct_url: None,
            }));
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

    /// PROD-1: the URL straight to the PostgreSQL server, used for
    /// migrations and `LISTEN` beside a pooled URL.
    pub(crate) fn with_direct_url(self, direct: Option<&str>) -> Result<Target, OpenError> {
        let Some(direct) = direct else {
            return Ok(self);
        };
        let invalid = |reason: &str| OpenError::InvalidUrl {
            url: direct.to_owned(),
            reason: reason.to_owned(),
        };
        match self {
            Target::Sqlite { .. } => Err(invalid(
                "a direct URL goes with a PostgreSQL database URL, not a SQLite one",
            )),
            Target::Postgres(target) => {
                if !is_postgres_url(direct) {
                    return Err(invalid("a direct URL is a postgres:// URL"));
                }
                if take_pooler(direct).map_or(true, |(_, pooled)| pooled) {
                    return Err(invalid("a direct URL reaches the server without a pooler"));
                }
                Ok(Target::Postgres(PgTarget {
                    direct_url: Some(direct.to_owned()),
                    ..target
                }))
            }
        }
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
            Target::Postgres(target) => target.url.clone(),
        }
    }

    pub(crate) fn backend(&self) -> Backend {
        match self {
            Target::Sqlite { .. } => Backend::Sqlite,
            Target::Postgres(_) => Backend::Postgres,
        }
    }
}

fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// Splits clarion's `pooler` parameter off a PostgreSQL URL: the URL
/// without it, and whether it says `transaction`. Any other value is
/// refused, so a misspelt mode never runs with named statements behind a
/// transaction pooler.
fn take_pooler(url: &str) -> Result<(String, bool), String> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), false));
    };
    let mut pooled = false;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some((POOLER_PARAMETER, "transaction")) => pooled = true,
            Some((POOLER_PARAMETER, "session" | "none")) => pooled = false,
            Some((POOLER_PARAMETER, other)) => {
                return Err(format!(
                    "pooler={other}: say pooler=transaction behind a transaction-mode pooler \
                     (or session, the default)"
                ))
            }
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, pooled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prod_1_the_pooler_parameter_is_read_and_removed() {
        let parsed = |url: &str| match Target::parse(url) {
            Ok(Target::Postgres(target)) => (target.url, target.pooled),
            other => panic!("{url}: {other:?}"),
        };
        assert_eq!(
            parsed("postgres://u@h:6432/db?pooler=transaction"),
            ("postgres://u@h:6432/db".to_owned(), true)
        );
        assert_eq!(
            parsed("postgres://u@h/db?sslmode=disable&pooler=transaction&connect_timeout=2"),
            (
                "postgres://u@h/db?sslmode=disable&connect_timeout=2".to_owned(),
                true
            )
        );
        assert_eq!(
            parsed("postgres://u@h/db?pooler=session"),
            ("postgres://u@h/db".to_owned(), false)
        );
        assert_eq!(
            parsed("postgres://u@h/db?sslmode=disable"),
            ("postgres://u@h/db?sslmode=disable".to_owned(), false)
        );
        assert!(Target::parse("postgres://u@h/db?pooler=statement").is_err());
    }

    #[test]
    fn prod_1_a_direct_url_goes_beside_a_postgres_url_only() {
        let pooled = Target::parse("postgres://u@h:6432/db?pooler=transaction").unwrap();
        let Ok(Target::Postgres(target)) = pooled
            .clone()
            .with_direct_url(Some("postgres://u@h:5432/db"))
        else {
            panic!("a direct URL beside a pooled one");
        };
        assert_eq!(target.listen_url(), Some("postgres://u@h:5432/db"));
        assert_eq!(target.migrate_url(), ("postgres://u@h:5432/db", false));
        let Target::Postgres(alone) = pooled.clone() else {
            unreachable!()
        };
        assert_eq!(alone.listen_url(), None);
        assert!(pooled
            .clone()
            .with_direct_url(Some("postgres://u@h:6432/db?pooler=transaction"))
            .is_err());
        assert!(pooled.with_direct_url(Some("/tmp/x.db")).is_err());
        let sqlite = Target::parse("/tmp/x.db").unwrap();
        assert!(sqlite.with_direct_url(Some("postgres://u@h/db")).is_err());
    }
}
