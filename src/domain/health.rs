//! HTTP-7 readiness: whether the database answers at all.

use diesel::prelude::*;
use diesel::sql_types::Integer;

use crate::domain::engine::Engine;
use crate::error::Result;

impl Engine {
    /// One trivial typed statement on a pooled connection: the cheapest
    /// proof that the database is reachable (`/readyz`).
    pub(crate) fn ping(&self) -> Result<()> {
        self.read_one(|conn| {
            diesel::select(1.into_sql::<Integer>()).get_result::<i32>(conn)?;
            Ok(())
        })
    }

    /// PROD-2: whether the database answered the pool's last try, known
    /// without a connection.
    pub(crate) fn database_answers(&self) -> bool {
        self.pool.is_up()
    }
}
