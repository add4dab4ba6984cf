//! People (PPL-1, PPL-1a, PPL-2): the directory and workspace members the
//! host mirrors (host operations: no principal), and the names and
//! identity a caller may read.

use crate::domain::people::{Caller, Person, UserCursor, UserPage, UserUpsert};

use crate::doors::operations::Operation;
use crate::error::Result;

use crate::rules::principal::Principal;

use crate::handle::clarion::Clarion;

impl Clarion {
    /// PPL-1: adds the person to the directory, or sets the name and
    /// email given and empties those cleared.
    pub fn upsert_user(&self, user: UserUpsert<'_>) -> Result<()> {
        self.engine.upsert_user(user)
    }

    /// PPL-1: removes the person from the directory and from every
    /// workspace's members (an unknown id too); ownership stays.
    pub fn delete_user(&self, user_id: &str) -> Result<()> {
        self.engine.delete_user(user_id)
    }

    /// PPL-1: one page of the directory by user id, after `cursor`;
    /// `limit` as LIST-4 (default 50, at most 200).
    pub fn list_users(&self, cursor: Option<&UserCursor>, limit: Option<i64>) -> Result<UserPage> {
        self.engine.list_users(cursor, limit)
    }

    /// PPL-2: replaces the workspace's member set (0 to 1,000 distinct
    /// ids) and appends one `workspace.members` event.
    pub fn set_members(&self, workspace_id: &str, members: &[String]) -> Result<()> {
        self.engine.set_members(workspace_id, members)
    }

    /// PPL-2: the workspace's members, sorted.
    pub fn members(&self, workspace_id: &str) -> Result<Vec<String>> {
        self.engine.members(workspace_id)
    }

    /// PPL-1a: the names of those of `user_ids` (1 to 100) that the
    /// principal may know of, in the order given; never an email.
    pub fn people(&self, principal: &Principal, user_ids: &[String]) -> Result<Vec<Person>> {
        self.engine
            .people(&Operation::People.admit(principal, self.channel)?, user_ids)
    }

    /// PPL-1a: who the bundle reaches (its workspace's owner, then
    /// its members by id), each with its name in the directory (`""` if
    /// none); nobody for a bundle in no, a dangling or an unowned
    /// workspace. A bundle the principal cannot see is the not-found.
    pub fn reached(&self, principal: &Principal, pending_id: &str) -> Result<Vec<Person>> {
        self.engine.reached(
            &Operation::People.admit(principal, self.channel)?,
            pending_id,
        )
    }

    /// PPL-1a: who the principal is, with its user's name.
    pub fn whoami(&self, principal: &Principal) -> Result<Caller> {
        self.engine
            .whoami(&Operation::Whoami.admit(principal, self.channel)?)
    }
}
