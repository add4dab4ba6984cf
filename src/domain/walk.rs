//! PPL-5: a scoped principal's page is the merge of one ordered walk per
//! *arm* — each access key it may see (`''`, the workspaces it owns, the
//! workspaces it belongs to) and its escalation grants — read in one
//! statement per round, each arm cut at a budget.
//!
//! A round reads at most `budget` rows of each arm it names. Rows up to the
//! page's last position are final once every arm that may still hold an
//! earlier row has been read past that position, so a round only reads
//! again the arms that have not (their budget doubled, at most the page).
//! A user in one or two workspaces needs one round; a member of fifty reads
//! about two pages' worth of rows plus one index descent per arm, whatever
//! the number of bundles behind each key (see `docs/architecture.md`).

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::Integer;

use crate::error::Result;
use crate::rules::visibility::{self, Scope};
use crate::store::AnyConnection;

/// The access keys of a scoped principal's arms: `''` (what every user
/// sees), then the workspaces its user owns or belongs to, each once.
pub(crate) fn access_keys(conn: &mut AnyConnection, scope: &Scope) -> Result<Vec<String>> {
    let mut keys = vec![String::new()];
    if scope.user_id.is_empty() {
        return Ok(keys);
    }
    let owned: Vec<String> = visibility::owned_workspaces(&scope.user_id).load(conn)?;
    let joined: Vec<String> = visibility::joined_workspaces(&scope.user_id).load(conn)?;
    let mut workspaces: Vec<String> = owned.into_iter().chain(joined).collect();
    workspaces.sort_unstable();
    workspaces.dedup();
    keys.extend(workspaces.into_iter().filter(|key| !key.is_empty()));
    Ok(keys)
}

/// One round's statement: each arm's query, tagged with its index, as
/// `SELECT <arm>, walk.* FROM (<query>) AS walk UNION ALL …`. The arms are
/// the key arms (all of one query type) and, optionally, the grants' arm.
pub(crate) struct Round<K, G> {
    pub(crate) keys: Vec<(i32, K)>,
    pub(crate) grants: Option<(i32, G)>,
}

impl<K, G> QueryId for Round<K, G> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<K: Query, G> Query for Round<K, G> {
    type SqlType = (Integer, K::SqlType);
}

impl<K, G, DB> QueryFragment<DB> for Round<K, G>
where
    DB: Backend,
    K: QueryFragment<DB>,
    G: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let arms = self
            .keys
            .iter()
            .map(|(arm, query)| (*arm, query as &dyn QueryFragment<DB>))
            .chain(
                self.grants
                    .iter()
                    .map(|(arm, query)| (*arm, query as &dyn QueryFragment<DB>)),
            );
        for (n, (arm, query)) in arms.enumerate() {
            if n > 0 {
                out.push_sql(" UNION ALL ");
            }
            // The arm's index is ours, never input: written as a literal so
            // both engines type it as an integer.
            out.push_sql(&format!("SELECT {arm} AS arm, walk.* FROM ("));
            query.walk_ast(out.reborrow())?;
            out.push_sql(") AS walk");
        }
        Ok(())
    }
}

impl<K, G, Conn> RunQueryDsl<Conn> for Round<K, G> {}

/// Merges the arms' ordered walks into the first `page` rows, in the order
/// `position` gives. `round(arms, budget)` reads at most `budget` rows of
/// each named arm, in order from the page's start, tagged with the arm.
pub(crate) fn merge<R, P: Ord + Eq>(
    arm_count: usize,
    page: usize,
    mut round: impl FnMut(&[usize], i64) -> Result<Vec<(i32, R)>>,
    position: impl Fn(&R) -> P,
) -> Result<Vec<R>> {
    let mut read: Vec<Vec<R>> = (0..arm_count).map(|_| Vec::new()).collect();
    let mut exhausted = vec![false; arm_count];
    let mut asked: Vec<usize> = (0..arm_count).collect();
    // Two pages' worth spread over the arms: one round when they interleave.
    let mut budget = (2 * page).div_ceil(arm_count.max(1)).clamp(2, page.max(2));
    loop {
        for &arm in &asked {
            read[arm].clear();
        }
        for (arm, row) in round(&asked, budget as i64)? {
            if let Some(rows) = usize::try_from(arm).ok().and_then(|arm| read.get_mut(arm)) {
                rows.push(row);
            }
        }
        for &arm in &asked {
            exhausted[arm] = read[arm].len() < budget;
        }
        let mut positions: Vec<P> = read.iter().flatten().map(&position).collect();
        positions.sort_unstable();
        // A granted bundle may also come through its key's arm.
        positions.dedup();
        let last = positions.into_iter().nth(page.saturating_sub(1));
        // An arm read to its budget may hold rows before the page's last
        // position (or, short of a page, any row) that this round missed.
        asked = (0..arm_count)
            .filter(|&arm| !exhausted[arm])
            .filter(|&arm| match (&last, read[arm].last()) {
                (Some(last), Some(row)) => position(row) < *last,
                _ => true,
            })
            .collect();
        if asked.is_empty() || budget >= page {
            break;
        }
        budget = (budget * 2).min(page);
    }
    let mut rows: Vec<R> = read.into_iter().flatten().collect();
    rows.sort_by_key(|row| position(row));
    rows.dedup_by_key(|row| position(row));
    Ok(rows)
}
