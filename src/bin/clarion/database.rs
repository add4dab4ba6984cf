//! Every subcommand opens its database here, so each reads the same
//! settings beside `--database-url`.

use clarion::Builder;

/// PROD-1: the environment variable that names PostgreSQL reached
/// directly, beside a `--database-url` that goes through a
/// transaction-mode pooler (`?pooler=transaction`): migrations and
/// `LISTEN` use it. Without it such a process sees other processes'
/// changes by polling.
pub const DIRECT_URL_VARIABLE: &str = "CLARION_DIRECT_DATABASE_URL";

/// A builder for `database_url` with the settings every subcommand shares.
pub fn builder(database_url: &str) -> Builder {
    let builder = clarion::Clarion::builder(database_url);
    match std::env::var(DIRECT_URL_VARIABLE) {
        Ok(direct) if !direct.is_empty() => builder.direct_url(&direct),
        _ => builder,
    }
}
