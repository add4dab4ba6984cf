//! PPL-5: a scoped principal's page is the merge of one ordered walk per
//! *arm* — each owner key it may see (`''` and its user's, OPS-3a), each
//! workspace it belongs to but does not own (its workspace key), and its
//! escalation grants — read in one statement per round, each arm cut at a
//! budget.
//!
//! A round reads at most `budget` rows of each arm it names. Rows up to the
//! page's last position are final once every arm that may still hold an
//! earlier row has been read past that position, so a round only reads
//! again the arms that have not (their budget doubled, at most the page).
//! An owner of any number of workspaces walks two owner ranges and the
//! grants in one round; a member of fifty reads about two pages' worth of
//! rows plus one index descent per arm, whatever the number of bundles
//! behind each key (see `docs/architecture.md`).

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::Integer;

use crate::error::Result;
use crate::rules::visibility::{self, Scope};
use crate::store::AnyConnection;

/// The keyed arms of a scoped principal's walk; the grants' arm comes after
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Arms {
    /// Owner keys: `''` (what every user sees), then its user's.
    pub(crate) owners: Vec<String>,
    /// Workspace keys: the workspaces its user belongs to and that someone
    /// else owns, each once.
    pub(crate) workspaces: Vec<String>,
}

impl Arms {
    /// The arms of `scope`, read in the caller's snapshot.
    pub(crate) fn of(conn: &mut AnyConnection, scope: &Scope) -> Result<Arms> {
        let owners: Vec<String> = visibility::owner_keys(scope)
            .unwrap_or_default()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut workspaces: Vec<String> = if scope.user_id.is_empty() {
            Vec::new()
        } else {
            visibility::joined_workspaces(&scope.user_id).load(conn)?
        };
        workspaces.sort_unstable();
        workspaces.dedup();
        Ok(Arms { owners, workspaces })
    }

    /// How many arms the walk merges, the grants' included.
    pub(crate) fn count(&self) -> usize {
        self.owners.len() + self.workspaces.len() + 1
    }

    /// The index of the grants' arm.
    pub(crate) fn grants(&self) -> usize {
        self.owners.len() + self.workspaces.len()
    }

    /// One round's statement: for each `(arm, budget)` in `asked`, the
    /// query `owner(key, budget)`, `workspace(key, budget)` or
    /// `grants(budget)` builds for it.
    pub(crate) fn round<'k, O, W, G>(
        &'k self,
        asked: &[(usize, i64)],
        owner: impl Fn(&'k str, i64) -> O,
        workspace: impl Fn(&'k str, i64) -> W,
        grants: impl FnOnce(i64) -> G,
    ) -> Round<O, W, G> {
        let tag = |arm: usize| i32::try_from(arm).unwrap_or(i32::MAX);
        let in_workspaces = |arm: usize| arm.checked_sub(self.owners.len());
        Round {
            owners: asked
                .iter()
                .filter_map(|&(arm, budget)| {
                    let key = self.owners.get(arm)?;
                    Some((tag(arm), owner(key, budget)))
                })
                .collect(),
            workspaces: asked
                .iter()
                .filter_map(|&(arm, budget)| {
                    let key = self.workspaces.get(in_workspaces(arm)?)?;
                    Some((tag(arm), workspace(key, budget)))
                })
                .collect(),
            grants: asked
                .iter()
                .find(|&&(arm, _)| arm == self.grants())
                .map(|&(arm, budget)| (tag(arm), grants(budget))),
        }
    }
}

/// One round's statement: each arm's query, tagged with its index, as
/// `SELECT <arm> AS arm, walk.* FROM (<query>) AS walk UNION ALL …`.
pub(crate) struct Round<O, W, G> {
    owners: Vec<(i32, O)>,
    workspaces: Vec<(i32, W)>,
    grants: Option<(i32, G)>,
}

impl<O, W, G> QueryId for Round<O, W, G> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<O: Query, W, G> Query for Round<O, W, G> {
    type SqlType = (Integer, O::SqlType);
}

impl<O, W, G, DB> QueryFragment<DB> for Round<O, W, G>
where
    DB: Backend,
    O: QueryFragment<DB>,
    W: QueryFragment<DB>,
    G: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let owners = self
            .owners
            .iter()
            .map(|(arm, query)| (*arm, query as &dyn QueryFragment<DB>));
        let workspaces = self
            .workspaces
            .iter()
            .map(|(arm, query)| (*arm, query as &dyn QueryFragment<DB>));
        let grants = self
            .grants
            .iter()
            .map(|(arm, query)| (*arm, query as &dyn QueryFragment<DB>));
        for (n, (arm, query)) in owners.chain(workspaces).chain(grants).enumerate() {
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

impl<O, W, G, Conn> RunQueryDsl<Conn> for Round<O, W, G> {}

/// The arms of a principal that belongs to no workspace it does not own:
/// the owner keys `''` and its user's, and its grants.
pub(crate) const OWNER_ARMS: usize = 3;

/// Merges the arms' ordered walks into the first `page` rows, in the order
/// `position` gives. `round(asked)` reads, for each `(arm, budget)` asked,
/// at most `budget` rows of that arm, in order from the page's start,
/// tagged with the arm.
///
/// An arm is read again while its last row lies before the page's last
/// position and it was cut short of the page. Its budget doubles, except
/// for the arm whose last row comes first: every row read up to that row
/// is on the page, so it is given the rest of the page at once. Where the
/// page lies in one workspace's range (workspaces asked one after
/// another), the second round completes it.
pub(crate) fn merge<R, P: Ord + Eq>(
    arm_count: usize,
    page: usize,
    mut round: impl FnMut(&[(usize, i64)]) -> Result<Vec<(i32, R)>>,
    position: impl Fn(&R) -> P,
) -> Result<Vec<R>> {
    let page = page.max(1);
    let mut read: Vec<Vec<R>> = (0..arm_count).map(|_| Vec::new()).collect();
    // An owner's three arms read a page each, in one round; more arms read
    // two pages' worth spread over them, one round when they interleave.
    let first = if arm_count <= OWNER_ARMS {
        page
    } else {
        (2 * page).div_ceil(arm_count).max(2).min(page)
    };
    let mut budgets = vec![first; arm_count];
    let mut asked: Vec<usize> = (0..arm_count).collect();
    loop {
        for &arm in &asked {
            read[arm].clear();
        }
        let this_round: Vec<(usize, i64)> = asked
            .iter()
            .map(|&arm| (arm, i64::try_from(budgets[arm]).unwrap_or(i64::MAX)))
            .collect();
        for (arm, row) in round(&this_round)? {
            if let Some(rows) = usize::try_from(arm).ok().and_then(|arm| read.get_mut(arm)) {
                rows.push(row);
            }
        }
        let mut positions: Vec<P> = read.iter().flatten().map(&position).collect();
        positions.sort_unstable();
        // A granted bundle may also come through its key's arm.
        positions.dedup();
        let last = positions.get(page - 1);
        // An arm cut at its budget short of the page may hold rows before
        // the page's last position (or, short of a page, any row) that this
        // round missed.
        asked = (0..arm_count)
            .filter(|&arm| read[arm].len() == budgets[arm] && budgets[arm] < page)
            .filter(|&arm| match (last, read[arm].last()) {
                (Some(last), Some(row)) => position(row) < *last,
                _ => true,
            })
            .collect();
        if asked.is_empty() {
            break;
        }
        let frontier = asked
            .iter()
            .copied()
            .min_by_key(|&arm| read[arm].last().map(&position));
        for &arm in &asked {
            budgets[arm] = (budgets[arm] * 2).min(page);
        }
        if let Some(arm) = frontier {
            if let Some(row) = read[arm].last() {
                // Rows at or before the frontier's last row are all on the
                // page: it can add no more than the rest.
                let at = position(row);
                let before = positions.partition_point(|p| *p <= at);
                let rest = read[arm].len() + page.saturating_sub(before);
                budgets[arm] = budgets[arm].max(rest).min(page);
            }
        }
    }
    let mut rows: Vec<R> = read.into_iter().flatten().collect();
    rows.sort_by_key(|row| position(row));
    rows.dedup_by_key(|row| position(row));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::merge;

    /// Merges `arms` (each sorted) as a round reads them: at most `budget`
    /// rows of each asked arm, from its start.
    fn merged(arms: &[Vec<u32>], page: usize) -> (Vec<u32>, usize) {
        let mut rounds = 0;
        let rows = merge(
            arms.len(),
            page,
            |asked| {
                rounds += 1;
                Ok(asked
                    .iter()
                    .flat_map(|&(arm, budget)| {
                        arms[arm]
                            .iter()
                            .take(budget as usize)
                            .map(move |&row| (arm as i32, row))
                    })
                    .collect())
            },
            |row| *row,
        )
        .unwrap();
        (rows.into_iter().take(page).collect(), rounds)
    }

    fn expected(arms: &[Vec<u32>], page: usize) -> Vec<u32> {
        let mut all: Vec<u32> = arms.iter().flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        all.truncate(page);
        all
    }

    /// PPL-5: whatever the arms hold — interleaved, one arm holding the
    /// page, empty arms, a row in two arms (a granted bundle also in its
    /// workspace's range) — the merge is the first page of their union.
    #[test]
    fn ppl_5_the_merge_is_the_first_page_of_the_union() {
        let interleaved: Vec<Vec<u32>> = (0..50)
            .map(|arm| (0..100).map(|i| i * 50 + arm).collect())
            .collect();
        let blocks: Vec<Vec<u32>> = (0..50)
            .map(|arm| (0..100).map(|i| arm * 100 + i).collect())
            .collect();
        let mut shared = blocks.clone();
        shared.push(vec![5, 150, 9_999]);
        let sparse = vec![vec![], vec![7], vec![], vec![1, 2, 3], vec![]];
        for (name, arms) in [
            ("interleaved", &interleaved),
            ("blocks", &blocks),
            ("shared", &shared),
            ("sparse", &sparse),
        ] {
            for page in [1, 2, 51, 201] {
                let (rows, rounds) = merged(arms, page);
                assert_eq!(rows, expected(arms, page), "{name}, page {page}");
                assert!(rounds <= 8, "{name}, page {page}: {rounds} rounds");
            }
        }
        // Interleaved arms need one round; an owner's three arms too;
        // a page inside one arm's block, two.
        assert_eq!(merged(&interleaved, 51).1, 1);
        assert_eq!(merged(&blocks[..3], 51).1, 1);
        assert_eq!(merged(&blocks, 51).1, 2);
    }
}
