//! People (PPL-1, PPL-1a, PPL-2): the directory the host mirrors, each
//! workspace's members, the names a caller may read, and who a bundle
//! reaches. No visibility rule reads a name or an email; who sees
//! which bundle through membership is the visibility fragments' business,
//! not this module's.

use std::collections::{HashMap, HashSet};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use diesel::prelude::*;

use crate::domain::bundle::{visible_bundle_query, BundleRecord};
use crate::domain::change::Change;
use crate::domain::engine::Engine;
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::capability::Admitted;
use crate::rules::limits::{
    check_count, check_email, check_id, check_runes, check_text, page_size, MAX_PERSON_NAME_RUNES,
    MEMBERS, PEOPLE_IDS,
};
use crate::rules::principal::Principal;
use crate::rules::visibility::{self, Scope};
use crate::store::failpoints::points;
use crate::store::schema::{
    bundles, escalation_grants, tasks, users, workspace_members, workspaces,
};
use crate::store::{at_most_one, hold, AnyConnection, Hold, Reach};

/// A field of a directory entry that `upsert_user` can empty (PPL-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UserField {
    /// The person's name.
    Name,
    /// The person's email address.
    Email,
}

impl UserField {
    /// The word `clear` names it by.
    pub const fn as_str(self) -> &'static str {
        match self {
            UserField::Name => "name",
            UserField::Email => "email",
        }
    }

    /// The field this word names, if any.
    pub fn from_word(word: &str) -> Option<UserField> {
        [UserField::Name, UserField::Email]
            .into_iter()
            .find(|field| field.as_str() == word)
    }
}

/// Arguments of `upsert_user` (PPL-1). A name or email left unset (or
/// `""`) keeps the stored one, as LIFE-12; [`UserUpsert::clear`] empties
/// one.
///
/// ```
/// use clarion::{UserField, UserUpsert};
///
/// let upsert = UserUpsert::new("alice").name("Alice").clear(UserField::Email);
/// assert_eq!(upsert.user_id(), "alice");
/// ```
#[derive(Debug, Clone)]
pub struct UserUpsert<'a> {
    user_id: &'a str,
    name: Option<&'a str>,
    email: Option<&'a str>,
    clear: Vec<UserField>,
}

impl<'a> UserUpsert<'a> {
    /// An upsert of `user_id` that changes nothing but its existence.
    pub fn new(user_id: &'a str) -> Self {
        UserUpsert {
            user_id,
            name: None,
            email: None,
            clear: Vec::new(),
        }
    }

    /// Sets the name (at most 120 characters; `""` keeps the stored one).
    pub fn name(mut self, name: &'a str) -> Self {
        self.name = Some(name);
        self
    }

    /// Sets the email address (`""` keeps the stored one).
    pub fn email(mut self, email: &'a str) -> Self {
        self.email = Some(email);
        self
    }

    /// Empties a field (refused for a field also given).
    pub fn clear(mut self, field: UserField) -> Self {
        self.clear.push(field);
        self
    }

    /// The user.
    pub fn user_id(&self) -> &'a str {
        self.user_id
    }
}

/// One entry of the directory (PPL-1); `""` for a field never given.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct User {
    /// The host's id of the person.
    pub user_id: String,
    /// Their name for people; `""` if none.
    pub name: String,
    /// Their email address; `""` if none.
    pub email: String,
}

/// A position in `list_users`'s order (by `user_id`). Opaque on the wire
/// and versioned apart from the listings' cursors (PPL-1), so no listing
/// reads another's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserCursor {
    after: String,
}

const USER_CURSOR_VERSION: &str = "u1";

impl UserCursor {
    /// The wire form: base64url of `u1:<user_id>`.
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{USER_CURSOR_VERSION}:{}", self.after))
    }

    /// Reads a cursor from its wire form; anything else, another
    /// listing's cursor included, is a validation error naming `cursor`.
    pub fn parse(text: &str) -> std::result::Result<UserCursor, ValidationError> {
        let malformed = || ValidationError::new("cursor", "malformed cursor");
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| malformed())?;
        let text = String::from_utf8(bytes).map_err(|_| malformed())?;
        let (version, after) = text.split_once(':').ok_or_else(malformed)?;
        if version != USER_CURSOR_VERSION || after.is_empty() || after.contains('\0') {
            return Err(malformed());
        }
        Ok(UserCursor {
            after: after.to_owned(),
        })
    }
}

impl std::fmt::Display for UserCursor {
    /// The wire form ([`UserCursor::encode`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.encode())
    }
}

/// A page of the directory (PPL-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPage {
    /// The entries, by `user_id`.
    pub users: Vec<User>,
    /// Where the next page starts; `None` when nothing follows.
    pub next_cursor: Option<UserCursor>,
}

/// A name a caller may read (PPL-1a): never an email.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Person {
    /// The host's id of the person.
    pub user_id: String,
    /// Their name for people; `""` if the directory has none.
    pub name: String,
}

/// PPL-8: a person a bundle reaches who is in the directory and may act
/// on it now: whom mail (MAIL-1) and relay links (LINK-4) go to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(any(feature = "webhooks", feature = "mail")), allow(dead_code))] // for the workers
pub(crate) struct Recipient {
    /// The host's id of the person.
    pub user_id: String,
    /// Their name in the directory (`""` if none).
    pub name: String,
    /// Their email address (`""` if none).
    pub email: String,
}

/// Who is calling (PPL-1a): the principal's kind and ids, and the user's
/// name in the directory (`""` if none).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Caller {
    /// `system`, `user` or `agent`.
    pub kind: String,
    /// The user (an agent's too); `""` for `system`.
    pub user_id: String,
    /// The agent; `""` unless the caller is one.
    pub agent_id: String,
    /// The user's name in the directory; `""` if none.
    pub name: String,
}

/// PPL-1: a given name or email, checked; `None` keeps the stored one.
fn given<'a>(
    field: &str,
    value: Option<&'a str>,
    check: impl Fn(&str, &str) -> std::result::Result<(), ValidationError>,
) -> Result<Option<&'a str>> {
    match value.filter(|value| !value.is_empty()) {
        Some(value) => {
            check(field, value)?;
            Ok(Some(value))
        }
        None => Ok(None),
    }
}

/// PPL-2: each member a non-empty id, none twice; the error names the
/// offending `members[i]`.
fn check_members(members: &[String]) -> Result<()> {
    check_count("members", members.len(), &MEMBERS, "members")?;
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, member) in members.iter().enumerate() {
        let field = format!("members[{i}]");
        check_id(&field, member)?;
        if let Some(first) = seen.insert(member, i) {
            return Err(
                ValidationError::new(field, format!("duplicate of members[{first}]")).into(),
            );
        }
    }
    Ok(())
}

/// The workspace exists, or the not-found PPL-2 names.
fn require_workspace(conn: &mut AnyConnection, workspace_id: &str) -> Result<()> {
    let found: i64 = workspaces::table
        .filter(workspaces::id.eq(workspace_id))
        .count()
        .get_result(conn)?;
    if found == 0 {
        return Err(Error::NotFound(Entity::Workspace));
    }
    Ok(())
}

impl Engine {
    /// PPL-1: creates the directory entry, or sets the fields given and
    /// empties those cleared.
    pub(crate) fn upsert_user(&self, upsert: UserUpsert<'_>) -> Result<()> {
        let UserUpsert {
            user_id,
            name,
            email,
            clear,
        } = upsert;
        check_id("user_id", user_id)?;
        let name = given("name", name, |field, value| {
            check_runes(field, value, MAX_PERSON_NAME_RUNES)
        })?;
        let email = given("email", email, check_email)?;
        for (i, field) in clear.iter().enumerate() {
            let also_given = match field {
                UserField::Name => name.is_some(),
                UserField::Email => email.is_some(),
            };
            if also_given {
                return Err(ValidationError::new(
                    format!("clear[{i}]"),
                    format!("clears {}, which is also given", field.as_str()),
                )
                .into());
            }
        }
        let name = name.or(clear.contains(&UserField::Name).then_some(""));
        let email = email.or(clear.contains(&UserField::Email).then_some(""));
        self.change(|conn, _| {
            let inserted = per_backend!(conn, c => diesel::insert_into(users::table)
                .values((
                    users::user_id.eq(user_id),
                    users::name.eq(name.unwrap_or("")),
                    users::email.eq(email.unwrap_or("")),
                ))
                .on_conflict_do_nothing()
                .execute(c))?;
            if inserted == 0 {
                if let Some(name) = name {
                    diesel::update(users::table.find(user_id))
                        .set(users::name.eq(name))
                        .execute(conn)?;
                }
                if let Some(email) = email {
                    diesel::update(users::table.find(user_id))
                        .set(users::email.eq(email))
                        .execute(conn)?;
                }
            }
            Ok(())
        })
    }

    /// PPL-1: removes the entry and the user's memberships (an unknown id
    /// too, as LIFE-1). Ownership stays: a workspace keeps its `owner_id`.
    pub(crate) fn delete_user(&self, user_id: &str) -> Result<()> {
        check_id("user_id", user_id)?;
        self.change(|conn, changes| {
            // PPL-4: each membership removed serializes with claims in its
            // workspace, as `set_members` does (in id order: no cycles).
            let joined: Vec<String> = workspace_members::table
                .filter(workspace_members::user_id.eq(user_id))
                .select(workspace_members::workspace_id)
                .order(workspace_members::workspace_id)
                .load(conn)?;
            for workspace_id in &joined {
                hold(conn, Reach::Workspace(workspace_id), Hold::Exclusive)?;
            }
            diesel::delete(users::table.find(user_id)).execute(conn)?;
            diesel::delete(workspace_members::table.filter(workspace_members::user_id.eq(user_id)))
                .execute(conn)?;
            if !joined.is_empty() {
                // PPL-4: its waits answer the not-found at once (WAIT-3a).
                changes.push(Change::Everything);
            }
            Ok(())
        })
    }

    /// PPL-1: a page of the directory by `user_id`, LIST-4's limit.
    pub(crate) fn list_users(
        &self,
        cursor: Option<&UserCursor>,
        limit: Option<i64>,
    ) -> Result<UserPage> {
        let size = page_size(limit);
        self.read(|conn| {
            let mut query = users::table
                .select((users::user_id, users::name, users::email))
                .order(users::user_id)
                .limit(size + 1)
                .into_boxed();
            if let Some(cursor) = cursor {
                query = query.filter(users::user_id.gt(cursor.after.clone()));
            }
            let rows: Vec<(String, String, String)> = query.load(conn)?;
            let more = rows.len() as i64 > size;
            let users: Vec<User> = rows
                .into_iter()
                .take(size as usize)
                .map(|(user_id, name, email)| User {
                    user_id,
                    name,
                    email,
                })
                .collect();
            let next_cursor = match (more, users.last()) {
                (true, Some(last)) => Some(UserCursor {
                    after: last.user_id.clone(),
                }),
                _ => None,
            };
            Ok(UserPage { users, next_cursor })
        })
    }

    /// PPL-1a: who is calling, with the user's name in the directory.
    pub(crate) fn whoami(&self, caller: &Admitted<'_>) -> Result<Caller> {
        let principal = caller.principal();
        let (user_id, agent_id) = principal.ledger_ids();
        let name = if user_id.is_empty() {
            String::new()
        } else {
            self.read(|conn| {
                Ok(users::table
                    .find(user_id)
                    .select(users::name)
                    .first::<String>(conn)
                    .optional()?
                    .unwrap_or_default())
            })?
        };
        Ok(Caller {
            kind: principal.kind().to_owned(),
            user_id: user_id.to_owned(),
            agent_id: agent_id.to_owned(),
            name,
        })
    }

    /// PPL-1a: the names of those of `user_ids` in the directory that the
    /// caller may read, in the order given: the caller's own user, and
    /// whoever shares with it a workspace that has an owner, each as owner
    /// or member, and the escalation targets of a bundle the caller sees
    /// (the ids a bundle names; quorum's join with QUO); `system` reads
    /// every one.
    pub(crate) fn people(&self, caller: &Admitted<'_>, user_ids: &[String]) -> Result<Vec<Person>> {
        check_count("user_ids", user_ids.len(), &PEOPLE_IDS, "ids")?;
        for (i, user_id) in user_ids.iter().enumerate() {
            check_id(&format!("user_ids[{i}]"), user_id)?;
        }
        let mut asked: Vec<&str> = Vec::new();
        for user_id in user_ids {
            if !asked.contains(&user_id.as_str()) {
                asked.push(user_id);
            }
        }
        let principal = caller.principal();
        let now = self.now().as_micros();
        self.read(|conn| {
            let readable: Option<HashSet<String>> = match principal {
                Principal::System => None,
                _ => {
                    let (me, _) = principal.ledger_ids();
                    let mut readable = sharing_with(conn, me, &asked)?;
                    if let Some(scope) = Scope::of(principal) {
                        readable.extend(escalated_on_visible(conn, &scope, &asked, now)?);
                    }
                    Some(readable)
                }
            };
            let rows: Vec<(String, String)> = users::table
                .filter(users::user_id.eq_any(&asked))
                .select((users::user_id, users::name))
                .load(conn)?;
            let mut names: HashMap<String, String> = rows.into_iter().collect();
            Ok(asked
                .iter()
                .filter(|id| readable.as_ref().is_none_or(|ids| ids.contains(**id)))
                .filter_map(|id| {
                    names.remove(*id).map(|name| Person {
                        user_id: (*id).to_owned(),
                        name,
                    })
                })
                .collect())
        })
    }

    /// PPL-1a (`people {pending_id}`): who the bundle reaches, with
    /// their names in the directory (`""` for one not in it), for a
    /// caller who sees the bundle; an unseen or absent one is the one
    /// not-found (AUTH-5), as every per-bundle operation answers it.
    pub(crate) fn reached(&self, caller: &Admitted<'_>, pending_id: &str) -> Result<Vec<Person>> {
        check_text("pending_id", pending_id)?;
        let scope = caller.scope()?;
        let now = self.now().as_micros();
        self.read(|conn| {
            let bundle: Option<BundleRecord> =
                at_most_one(visible_bundle_query(scope, pending_id, now), conn)?;
            let bundle = bundle.ok_or(Error::NotFound(Entity::Bundle))?;
            let reach = reach_of_bundle(conn, &bundle, now)?;
            let rows: Vec<(String, String)> = users::table
                .filter(users::user_id.eq_any(&reach))
                .select((users::user_id, users::name))
                .load(conn)?;
            let mut names: HashMap<String, String> = rows.into_iter().collect();
            Ok(reach
                .into_iter()
                .map(|user_id| Person {
                    name: names.remove(&user_id).unwrap_or_default(),
                    user_id,
                })
                .collect())
        })
    }

    /// PPL-8: whom mail and relay links about the bundle go to now: the
    /// people it reaches (only those of `only`, when given: an
    /// escalation's `to`) who are in the directory and may still act — the
    /// bundle active, and for a quorum bundle, they may vote and have not
    /// (QUO-3b). Nobody for a bundle no longer active or gone. Read when
    /// the mail or payload is built.
    #[cfg_attr(not(any(feature = "webhooks", feature = "mail")), allow(dead_code))] // for the workers
    pub(crate) fn recipients(
        &self,
        pending_id: &str,
        only: Option<&[String]>,
    ) -> Result<Vec<Recipient>> {
        let now = self.now().as_micros();
        self.read(|conn| {
            let active: bool = diesel::select(diesel::dsl::exists(
                crate::rules::activeness::active_bundle_ids(now)
                    .filter(bundles::pending_id.eq(pending_id)),
            ))
            .get_result(conn)?;
            let Some((bundle, _)) = (if active {
                crate::domain::bundle::load_stored(conn, pending_id)?
            } else {
                None
            }) else {
                return Ok(Vec::new());
            };
            let mut reach = reach_of_bundle(conn, &bundle, now)?;
            if let Some(only) = only {
                reach.retain(|user_id| only.contains(user_id));
            }
            let quorum = crate::domain::bundle::shown_quorum(conn, &bundle, true, now)?;
            if let Some(shown) = &quorum {
                reach.retain(|user| shown.policy.may_vote(user) && !shown.has_voted(user));
            }
            let rows: Vec<(String, String, String)> = users::table
                .filter(users::user_id.eq_any(&reach))
                .select((users::user_id, users::name, users::email))
                .load(conn)?;
            let mut known: HashMap<String, (String, String)> = rows
                .into_iter()
                .map(|(user_id, name, email)| (user_id, (name, email)))
                .collect();
            Ok(reach
                .into_iter()
                .filter_map(|user_id| {
                    let (name, email) = known.remove(&user_id)?;
                    Some(Recipient {
                        user_id,
                        name,
                        email,
                    })
                })
                .collect())
        })
    }

    /// PPL-2: replaces the workspace's member set, and appends one
    /// `workspace.members` event with the new set, sorted.
    pub(crate) fn set_members(&self, workspace_id: &str, members: &[String]) -> Result<()> {
        check_id("workspace_id", workspace_id)?;
        check_members(members)?;
        let mut sorted: Vec<&str> = members.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        let at = self.now();
        self.change(|conn, changes| {
            // Two replacements of one set never interleave their deletes
            // and inserts (PostgreSQL; SQLite's write lock already does).
            hold(conn, Reach::Workspace(workspace_id), Hold::Exclusive)?;
            require_workspace(conn, workspace_id)?;
            diesel::delete(
                workspace_members::table.filter(workspace_members::workspace_id.eq(workspace_id)),
            )
            .execute(conn)?;
            let rows: Vec<_> = sorted
                .iter()
                .map(|user_id| {
                    (
                        workspace_members::workspace_id.eq(workspace_id),
                        workspace_members::user_id.eq(*user_id),
                    )
                })
                .collect();
            if !rows.is_empty() {
                // A multi-row insert is written per backend (SQLite has no
                // DEFAULT keyword in VALUES).
                per_backend!(conn, c => diesel::insert_into(workspace_members::table)
                    .values(&rows)
                    .execute(c))?;
            }
            // PPL-4: waits of a removed member answer the not-found at
            // once, here and in other processes (WAIT-3a).
            changes.push(Change::Everything);
            changes.append_members(conn, workspace_id, &sorted, at)?;
            self.failpoint(points::MEMBERS_BEFORE_COMMIT)
        })
    }

    /// PPL-2: the workspace's members, sorted.
    pub(crate) fn members(&self, workspace_id: &str) -> Result<Vec<String>> {
        check_id("workspace_id", workspace_id)?;
        self.read(|conn| {
            require_workspace(conn, workspace_id)?;
            Ok(workspace_members::table
                .filter(workspace_members::workspace_id.eq(workspace_id))
                .select(workspace_members::user_id)
                .order(workspace_members::user_id)
                .load(conn)?)
        })
    }
}

/// PPL-8, who a bundle reaches at `now`: through its task (see
/// [`reach_of_task`]), then its escalated users from their time on.
fn reach_of_bundle(
    conn: &mut AnyConnection,
    bundle: &BundleRecord,
    now: i64,
) -> Result<Vec<String>> {
    let mut reach = reach_of_task(conn, bundle.task_id.as_deref())?;
    let escalated: Vec<String> = escalation_grants::table
        .filter(escalation_grants::pending_id.eq(&bundle.pending_id))
        .filter(escalation_grants::visible_from.le(now))
        .select(escalation_grants::user_id)
        .order(escalation_grants::user_id)
        .load(conn)?;
    for user_id in escalated {
        if !reach.contains(&user_id) {
            reach.push(user_id);
        }
    }
    Ok(reach)
}

/// PPL-1a, who a bundle reaches: for a bundle of the task `task_id`,
/// through its workspace (AUTH-4), the owner, then the members by id (the
/// owner once), when the task names a workspace that exists and has an
/// owner; nobody for a bundle of no task, of a task in no workspace, in a
/// dangling one or in an unowned one (such a bundle is still visible to
/// every user, AUTH-3).
fn reach_of_task(conn: &mut AnyConnection, task_id: Option<&str>) -> Result<Vec<String>> {
    let Some(task_id) = task_id else {
        return Ok(Vec::new());
    };
    let workspace: Option<String> = tasks::table
        .find(task_id)
        .select(tasks::workspace_id)
        .first(conn)
        .optional()?;
    let Some(workspace) = workspace.filter(|id| !id.is_empty()) else {
        return Ok(Vec::new());
    };
    let owner: Option<String> = workspaces::table
        .find(&workspace)
        .select(workspaces::owner_id)
        .first(conn)
        .optional()?;
    let Some(owner) = owner.filter(|owner| !owner.is_empty()) else {
        return Ok(Vec::new());
    };
    let members: Vec<String> = workspace_members::table
        .filter(workspace_members::workspace_id.eq(&workspace))
        .filter(workspace_members::user_id.ne(&owner))
        .select(workspace_members::user_id)
        .order(workspace_members::user_id)
        .load(conn)?;
    Ok(std::iter::once(owner).chain(members).collect())
}

/// PPL-1a: which of `asked` are escalation targets of a bundle the scope
/// sees now (named by that bundle, whether or not their time has come).
fn escalated_on_visible(
    conn: &mut AnyConnection,
    scope: &Scope,
    asked: &[&str],
    now: i64,
) -> Result<Vec<String>> {
    let grants: Vec<(String, String)> = escalation_grants::table
        .filter(escalation_grants::user_id.eq_any(asked))
        .select((escalation_grants::pending_id, escalation_grants::user_id))
        .load(conn)?;
    if grants.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = grants
        .iter()
        .map(|(pending_id, _)| pending_id.as_str())
        .collect();
    let seen: HashSet<String> = bundles::table
        .filter(bundles::pending_id.eq_any(&ids))
        .filter(visibility::bundle_visible(scope, now))
        .select(bundles::pending_id)
        .load::<String>(conn)?
        .into_iter()
        .collect();
    Ok(grants
        .into_iter()
        .filter(|(pending_id, _)| seen.contains(pending_id))
        .map(|(_, user_id)| user_id)
        .collect())
}

/// PPL-1a: which of `asked` share with user `me` a workspace that has an
/// owner, both as its owner or among its members; `me` itself always.
fn sharing_with(conn: &mut AnyConnection, me: &str, asked: &[&str]) -> Result<HashSet<String>> {
    let mut found: HashSet<String> = asked
        .iter()
        .filter(|id| !me.is_empty() && **id == me)
        .map(|id| (*id).to_owned())
        .collect();
    if me.is_empty() {
        return Ok(found);
    }
    // The owned workspaces `me` owns or belongs to (an unowned one shares
    // nothing), a set no larger than the user's own workspaces.
    let owned: Vec<String> = workspaces::table
        .filter(workspaces::owner_id.eq(me))
        .select(workspaces::id)
        .load(conn)?;
    let joined: Vec<String> = workspace_members::table
        .inner_join(workspaces::table)
        .filter(workspace_members::user_id.eq(me))
        .filter(workspaces::owner_id.ne(""))
        .select(workspace_members::workspace_id)
        .load(conn)?;
    let mine: Vec<String> = owned.into_iter().chain(joined).collect();
    if mine.is_empty() {
        return Ok(found);
    }
    // Bounded so SQLite's limit on bound values is never reached.
    for chunk in mine.chunks(10_000) {
        let owners: Vec<String> = workspaces::table
            .filter(workspaces::id.eq_any(chunk))
            .filter(workspaces::owner_id.eq_any(asked))
            .select(workspaces::owner_id)
            .load(conn)?;
        let members: Vec<String> = workspace_members::table
            .filter(workspace_members::workspace_id.eq_any(chunk))
            .filter(workspace_members::user_id.eq_any(asked))
            .select(workspace_members::user_id)
            .load(conn)?;
        found.extend(owners);
        found.extend(members);
    }
    Ok(found)
}
