//! People (PPL-1, PPL-1a, PPL-2): the directory and workspace members,
//! managed by the host (`system`, section 25), and the names and identity
//! a caller may read; on the command line `clarion user …`, `clarion
//! members …` and `clarion whoami`.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use crate::domain::engine::Engine;
use crate::domain::people::{Caller, Person, UserCursor, UserField, UserPage, UserUpsert};
use crate::doors::args::{given, Id};
use crate::doors::envelope::bodies::{CallerBody, MembersBody, OkBody, PeopleBody, UserPageBody};
use crate::doors::operations::declare::{
    positional, CliArg, CliCommand, CliValue, Declared, Refusal,
};
use crate::doors::operations::webhooks::NoArgs;
use crate::error::{Result, ValidationError};
use crate::rules::capability::{Access, Admitted, HOST, READ};
use crate::rules::limits::{MAX_EMAIL_BYTES, MAX_MEMBERS, MAX_PEOPLE_IDS, MAX_PERSON_NAME_RUNES};

/// The group of the directory's subcommands: `clarion user …`.
const USER: &str = "user";
/// The group of `clarion members set`, beside `clarion members W`.
const MEMBERS_GROUP: &str = "members";

/// `upsert_user`'s arguments (PPL-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpsertUserArgs {
    /// The host's id of the person.
    user_id: Id,
    /// Their name for people, at most 120 characters; `""` or omitted
    /// keeps the stored one.
    #[schemars(length(max = MAX_PERSON_NAME_RUNES))]
    name: Option<String>,
    /// Their email address: at most 254 bytes, exactly one `@`, no
    /// whitespace, control characters or angle brackets; `""` or omitted
    /// keeps the stored one.
    #[serde(default)]
    #[schemars(schema_with = "email_schema")]
    email: Option<String>,
    /// Fields to empty, by the words name and email; a field given is not
    /// also cleared.
    #[serde(default)]
    #[schemars(schema_with = "clear_schema")]
    clear: Option<Vec<String>>,
}

/// PPL-1: an email address, or `""`/`null` for none given.
fn email_schema(_: &mut SchemaGenerator) -> Schema {
    // The rest of PPL-1's rule (one `@`, no whitespace, control
    // character or angle bracket, 254 bytes rather than characters) is
    // its parser's, as the description says.
    json_schema!({
        "type": ["string", "null"],
        "maxLength": MAX_EMAIL_BYTES,
    })
}

/// PPL-1: the fields `clear` may name.
fn clear_schema(_: &mut SchemaGenerator) -> Schema {
    let words: Vec<&str> = [UserField::Name, UserField::Email]
        .iter()
        .map(|field| field.as_str())
        .collect();
    json_schema!({
        "type": ["array", "null"],
        "items": {"type": "string", "enum": words},
    })
}

/// `upsert_user` (PPL-1).
pub(crate) struct UpsertUser;

impl Declared for UpsertUser {
    const NAME: &'static str = "upsert_user";
    // PPL-1.
    const SUMMARY: &'static str = "Adds a person to the directory, or sets their name and email \
        where given and empties those cleared.";
    const ACCESS: Access = HOST;
    type Args = UpsertUserArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: USER,
        args: &[
            positional("user_id"),
            CliArg {
                arg: "clear",
                flag: "clear",
                value: CliValue::List,
            },
        ],
        ..CliCommand::new(
            "add",
            "Add a person to the directory, or change their name or email.",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: UpsertUserArgs) -> Result<()> {
        let (name, email) = (given(args.name), given(args.email));
        let mut upsert = UserUpsert::new(&args.user_id);
        if let Some(name) = &name {
            upsert = upsert.name(name);
        }
        if let Some(email) = &email {
            upsert = upsert.email(email);
        }
        for (i, word) in args.clear.unwrap_or_default().iter().enumerate() {
            let field = UserField::from_word(word).ok_or_else(|| {
                ValidationError::new(
                    format!("clear[{i}]"),
                    format!("unknown field {word:?}: name or email"),
                )
            })?;
            upsert = upsert.clear(field);
        }
        engine.upsert_user(upsert)
    }
}

/// A person, by id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UserIdArgs {
    /// The host's id of the person.
    user_id: Id,
}

/// `delete_user` (PPL-1).
pub(crate) struct DeleteUser;

impl Declared for DeleteUser {
    const NAME: &'static str = "delete_user";
    // PPL-1.
    const SUMMARY: &'static str = "Removes a person from the directory and from every \
        workspace's members; the workspaces they own keep them as owner.";
    const ACCESS: Access = HOST;
    type Args = UserIdArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: USER,
        args: &[positional("user_id")],
        ..CliCommand::new(
            "remove",
            "Remove a person from the directory and every member set.",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: UserIdArgs) -> Result<()> {
        engine.delete_user(&args.user_id)
    }
}

/// `list_users`'s arguments (PPL-1).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListUsersArgs {
    /// `next_cursor` of the previous page (`""`: the first page); another
    /// listing's cursor is refused.
    cursor: Option<String>,
    /// Page size: default 50; below 1 means 50; above 200 is 200.
    limit: Option<i64>,
}

/// `list_users` (PPL-1).
pub(crate) struct ListUsers;

impl Declared for ListUsers {
    const NAME: &'static str = "list_users";
    // PPL-1.
    const SUMMARY: &'static str = "One page of the directory, by user id.";
    const ACCESS: Access = HOST;
    type Args = ListUsersArgs;
    type Reply = UserPage;
    type Body<'a> = UserPageBody<'a>;
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: USER,
        ..CliCommand::new("list", "List the directory, by user id.")
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: ListUsersArgs) -> Result<UserPage> {
        let cursor = given(args.cursor)
            .map(|text| UserCursor::parse(&text))
            .transpose()?;
        engine.list_users(cursor.as_ref(), args.limit)
    }
}

/// `people`'s arguments (PPL-1a): exactly one of `user_ids` (names of
/// these people) and `pending_id` (who that bundle reaches).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [
    {"required": ["user_ids"], "properties": {"user_ids": {"type": "array"},
        "pending_id": {"enum": ["", null]}}},
    {"required": ["pending_id"], "properties": {"pending_id": {"type": "string", "minLength": 1},
        "user_ids": {"enum": [null]}}},
]))]
pub(crate) struct PeopleArgs {
    /// The ids to name, 1 to 100.
    #[schemars(length(min = 1, max = MAX_PEOPLE_IDS))]
    user_ids: Option<Vec<Id>>,
    /// A bundle the caller sees: who it reaches, owner first.
    pending_id: Option<String>,
}

/// `people` (PPL-1a).
pub(crate) struct People;

impl Declared for People {
    const NAME: &'static str = "people";
    // PPL-1a.
    const SUMMARY: &'static str = "The names of the given people the caller may know of: \
        itself, and who shares an owned workspace with it; or who a bundle the caller sees \
        reaches: its workspace's owner, then its members. Never an email.";
    const ACCESS: Access = READ;
    type Args = PeopleArgs;
    type Reply = Vec<Person>;
    type Body<'a> = PeopleBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];

    fn perform(engine: &Engine, caller: &Admitted<'_>, args: PeopleArgs) -> Result<Vec<Person>> {
        match (args.user_ids, given(args.pending_id)) {
            (Some(user_ids), None) => {
                let user_ids: Vec<String> = user_ids.into_iter().map(|id| id.0).collect();
                engine.people(caller, &user_ids)
            }
            (None, Some(pending_id)) => engine.reached(caller, &pending_id),
            // Named as a missing `user_ids` was before `pending_id` came.
            _ => Err(ValidationError::new(
                "user_ids",
                "give exactly one of user_ids and pending_id",
            )
            .into()),
        }
    }
}

/// `whoami` (PPL-1a).
pub(crate) struct Whoami;

impl Declared for Whoami {
    const NAME: &'static str = "whoami";
    // PPL-1a.
    const SUMMARY: &'static str = "Who the caller is: its kind, ids and name in the directory.";
    const ACCESS: Access = READ;
    type Args = NoArgs;
    type Reply = Caller;
    type Body<'a> = CallerBody<'a>;
    const CLI: &'static [CliCommand] = &[CliCommand::new(
        "whoami",
        "Say who --as is: kind, ids and name in the directory.",
    )];

    fn perform(engine: &Engine, caller: &Admitted<'_>, _: NoArgs) -> Result<Caller> {
        engine.whoami(caller)
    }
}

/// `set_members`'s arguments (PPL-2).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetMembersArgs {
    /// The workspace, which must exist.
    workspace_id: Id,
    /// Its whole new member set: 0 to 1,000 distinct user ids (the owner
    /// among them or not; none need be in the directory).
    #[schemars(length(max = MAX_MEMBERS))]
    members: Vec<Id>,
}

/// `set_members` (PPL-2).
pub(crate) struct SetMembers;

impl Declared for SetMembers {
    const NAME: &'static str = "set_members";
    // PPL-2.
    const SUMMARY: &'static str = "Replaces a workspace's member set, appending one \
        workspace.members event.";
    const ACCESS: Access = HOST;
    type Args = SetMembersArgs;
    type Reply = ();
    type Body<'a> = OkBody;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];
    const CLI: &'static [CliCommand] = &[CliCommand {
        group: MEMBERS_GROUP,
        args: &[
            positional("workspace_id"),
            CliArg {
                arg: "members",
                flag: "",
                value: CliValue::List,
            },
        ],
        ..CliCommand::new(
            "set",
            "Replace a workspace's members with these users (none: no members).",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: SetMembersArgs) -> Result<()> {
        let members: Vec<String> = args.members.into_iter().map(|id| id.0).collect();
        engine.set_members(&args.workspace_id, &members)
    }
}

/// A workspace, by id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkspaceIdArgs {
    /// The workspace, which must exist.
    workspace_id: Id,
}

/// `members` (PPL-2).
pub(crate) struct Members;

impl Declared for Members {
    const NAME: &'static str = "members";
    // PPL-2.
    const SUMMARY: &'static str = "A workspace's members, sorted.";
    const ACCESS: Access = HOST;
    type Args = WorkspaceIdArgs;
    type Reply = Vec<String>;
    type Body<'a> = MembersBody<'a>;
    const REFUSALS: &'static [Refusal] = &[Refusal::NotFound];
    const CLI: &'static [CliCommand] = &[CliCommand {
        args: &[positional("workspace_id")],
        ..CliCommand::new(
            "members",
            "List a workspace's members (`members set` replaces them).",
        )
    }];

    fn perform(engine: &Engine, _: &Admitted<'_>, args: WorkspaceIdArgs) -> Result<Vec<String>> {
        engine.members(&args.workspace_id)
    }
}
