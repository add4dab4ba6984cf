//! Who is calling (AUTH-1): four kinds of principal, the grants an agent
//! may hold, and the one parser every door uses to build a principal from
//! its parts.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::error::ValidationError;
use crate::rules::limits::{check_id, check_text};
use crate::rules::vocabulary::DecidedBy;

/// What an API-key agent may do beyond nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grant {
    /// `questions:read`: list, get, wait on and count bundles.
    QuestionsRead,
    /// `questions:answer`: answer or reject bundles.
    QuestionsAnswer,
}

impl Grant {
    /// Every grant.
    pub const ALL: [Grant; 2] = [Grant::QuestionsRead, Grant::QuestionsAnswer];

    /// The grant's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Grant::QuestionsRead => "questions:read",
            Grant::QuestionsAnswer => "questions:answer",
        }
    }

    /// The grant a word names.
    pub fn parse(text: &str) -> Option<Grant> {
        Grant::ALL.into_iter().find(|grant| grant.as_str() == text)
    }
}

/// Who is calling (AUTH-1). Exactly four kinds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Principal {
    /// An internal caller, or a deployment with authentication off. Unscoped.
    System,
    /// A session-authenticated human.
    User {
        /// The user, who owns workspaces.
        user_id: String,
    },
    /// An API-key agent acting for its owner `user_id`.
    Agent {
        /// The owner the agent acts for.
        user_id: String,
        /// The agent itself, for audit.
        agent_id: String,
        /// What it may do beyond nothing.
        grants: BTreeSet<Grant>,
    },
    /// A credential the host cannot classify. Denied everything.
    Unclassified,
}

impl Principal {
    /// A user principal.
    pub fn user(user_id: impl Into<String>) -> Principal {
        Principal::User {
            user_id: user_id.into(),
        }
    }

    /// An agent principal acting for `user_id`.
    pub fn agent(
        user_id: impl Into<String>,
        agent_id: impl Into<String>,
        grants: impl IntoIterator<Item = Grant>,
    ) -> Principal {
        Principal::Agent {
            user_id: user_id.into(),
            agent_id: agent_id.into(),
            grants: grants.into_iter().collect(),
        }
    }

    /// `system`, `user`, `agent` or `unclassified`.
    pub fn kind(&self) -> &'static str {
        match self.decides_as() {
            Some(decided) => decided.as_str(),
            None => "unclassified",
        }
    }

    /// WIRE-2: who this principal is when it decides a bundle; `None` for
    /// one that can decide nothing (AUTH-1).
    pub fn decides_as(&self) -> Option<DecidedBy> {
        match self {
            Principal::System => Some(DecidedBy::System),
            Principal::User { .. } => Some(DecidedBy::User),
            Principal::Agent { .. } => Some(DecidedBy::Agent),
            Principal::Unclassified => None,
        }
    }

    /// AUD-1: the user and agent ids of a ledger entry, `""` where the
    /// kind has none.
    pub(crate) fn ledger_ids(&self) -> (&str, &str) {
        match self {
            Principal::System | Principal::Unclassified => ("", ""),
            Principal::User { user_id } => (user_id, ""),
            Principal::Agent {
                user_id, agent_id, ..
            } => (user_id, agent_id),
        }
    }

    /// WIRE-6: is this principal the stored resolver (CLAIM-3: kind and
    /// audit id)? Never for a deadline's resolution (no principal is the
    /// deadline), nor where none was recorded (DM-1). An agent's audit id
    /// is `user/agent`, so a user id holding `/` could pass for another
    /// agent of a user whose id is its prefix; ids are the host's, which
    /// keeps them apart.
    pub fn is_resolver(&self, kind: Option<&str>, id: Option<&str>) -> bool {
        match (self.decides_as(), kind, id) {
            (Some(decides_as), Some(kind), Some(id)) => {
                decides_as.as_str() == kind && self.audit_id() == id
            }
            _ => false,
        }
    }

    /// QUO-3: the user id a person votes with; `None` for every other
    /// principal (agents never vote; `system` overrides).
    pub fn voting_id(&self) -> Option<&str> {
        match self {
            Principal::User { user_id } => Some(user_id),
            _ => None,
        }
    }

    /// The id recorded for audit: the user id, `user/agent` for an agent.
    pub fn audit_id(&self) -> String {
        match self {
            Principal::System | Principal::Unclassified => String::new(),
            Principal::User { user_id } => user_id.clone(),
            Principal::Agent {
                user_id, agent_id, ..
            } => format!("{user_id}/{agent_id}"),
        }
    }

    /// REL-6: the principal's ids are text clarion can bind (no NUL).
    pub fn check_text(&self) -> Result<(), ValidationError> {
        if let Principal::User { user_id } | Principal::Agent { user_id, .. } = self {
            check_text("principal.user_id", user_id)?;
        }
        if let Principal::Agent { agent_id, .. } = self {
            check_text("principal.agent_id", agent_id)?;
        }
        Ok(())
    }

    /// The one principal parser (AUTH-1): builds a principal from its parts
    /// as every door spells them. An unknown kind, or a user or agent
    /// without `user_id`, is refused; an agent without grants holds none.
    /// Errors name the part (`kind`, `user_id`, `grants[1]`).
    pub fn from_parts<'a>(
        kind: &str,
        user_id: Option<&str>,
        agent_id: Option<&str>,
        grants: impl IntoIterator<Item = &'a str>,
    ) -> Result<Principal, ValidationError> {
        let user_id = || match user_id {
            None => Err(ValidationError::new("user_id", "required")),
            Some(user_id) => check_id("user_id", user_id).map(|()| user_id.to_owned()),
        };
        check_text("agent_id", agent_id.unwrap_or_default())?;
        match kind {
            "system" => Ok(Principal::System),
            "unclassified" => Ok(Principal::Unclassified),
            "user" => Ok(Principal::user(user_id()?)),
            "agent" => {
                let user_id = user_id()?;
                let grants = grants
                    .into_iter()
                    .enumerate()
                    .map(|(index, text)| {
                        Grant::parse(text).ok_or_else(|| {
                            ValidationError::new(
                                format!("grants[{index}]"),
                                format!(
                                    "unknown grant {text:?} (expected {})",
                                    Grant::ALL.map(Grant::as_str).join(" or ")
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Principal::agent(
                    user_id,
                    agent_id.unwrap_or_default(),
                    grants,
                ))
            }
            other => Err(ValidationError::new(
                "kind",
                format!("unknown kind {other:?} (expected system, user, agent or unclassified)"),
            )),
        }
    }

    /// The WIRE-5 JSON form, which the JSON door reads back.
    pub fn to_wire(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A principal as written out (WIRE-5): its kind first, then
/// what the kind has.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schemars(rename = "Principal")]
enum Written<'a> {
    System,
    User {
        user_id: &'a str,
    },
    Agent {
        user_id: &'a str,
        agent_id: &'a str,
        #[schemars(with = "Vec<GrantWord>")]
        grants: Vec<&'static str>,
    },
    Unclassified,
}

/// A grant's word (the schema of `grants`).
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
enum GrantWord {
    #[serde(rename = "questions:read")]
    Read,
    #[serde(rename = "questions:answer")]
    Answer,
}

impl<'a> From<&'a Principal> for Written<'a> {
    fn from(principal: &'a Principal) -> Self {
        match principal {
            Principal::System => Written::System,
            Principal::Unclassified => Written::Unclassified,
            Principal::User { user_id } => Written::User { user_id },
            Principal::Agent {
                user_id,
                agent_id,
                grants,
            } => Written::Agent {
                user_id,
                agent_id,
                grants: grants.iter().map(|grant| grant.as_str()).collect(),
            },
        }
    }
}

impl serde::Serialize for Principal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written::from(self).serialize(serializer)
    }
}

impl schemars::JsonSchema for Principal {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Written::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Written::json_schema(generator)
    }
}

impl std::str::FromStr for Principal {
    type Err = String;

    /// The command-line form: `system`, `unclassified`, `user:<id>`, or
    /// `agent:<user>/<agent>[:<grant>,<grant>]`, read into parts for
    /// [`Principal::from_parts`].
    fn from_str(text: &str) -> Result<Principal, String> {
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let refused = |error: ValidationError| format!("principal {text:?}: {error}");
        match kind {
            "system" | "unclassified" if rest.is_empty() => {
                Principal::from_parts(kind, None, None, []).map_err(refused)
            }
            "user" => Principal::from_parts(kind, Some(rest), None, []).map_err(refused),
            "agent" => {
                let (who, grants) = rest.split_once(':').unwrap_or((rest, ""));
                let Some((user_id, agent_id)) = who
                    .split_once('/')
                    .filter(|(u, a)| !u.is_empty() && !a.is_empty())
                else {
                    return Err(format!("agent principal {text:?} needs <user>/<agent>"));
                };
                let grants = grants.split(',').filter(|grant| !grant.is_empty());
                Principal::from_parts(kind, Some(user_id), Some(agent_id), grants).map_err(refused)
            }
            _ => Err(format!(
                "unknown principal {text:?}: use system, user:<id> or agent:<user>/<agent>:<grants>"
            )),
        }
    }
}
