//! One webhook endpoint's row (HOOK-1, HOOK-6): what `webhook_list` shows
//! of it, and what the worker and the signer read.

use diesel::prelude::*;

use crate::domain::events::Position;
use crate::error::{Entity, Error, Result};
use crate::rules::vocabulary::WebhookState;
use crate::store::schema::webhooks;
use crate::store::{AnyConnection, Timestamp};

/// HOOK-3: a secret's prefix; the rest is standard, padded base64 of 32
/// random bytes from the operating system.
pub(crate) const SECRET_PREFIX: &str = "whsec_";

/// An endpoint as `webhook_list` shows it (HOOK-6): never its secret.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct WebhookView {
    /// Its id.
    pub id: String,
    /// Where it is delivered.
    pub url: String,
    /// The event types it receives; empty: all.
    pub events: Vec<String>,
    /// The workspace it is narrowed to; `""`: every workspace.
    pub workspace_id: String,
    /// `enabled`, `failing` or `disabled`.
    pub state: String,
    /// The position of the last event delivered or passed over (`""`
    /// before the first event).
    pub cursor: String,
    /// The events after the cursor.
    pub backlog: i64,
    /// Why the last attempt failed; `""` after a success.
    pub last_error: String,
    /// When it was last tried; `""` if never.
    #[serde(with = "crate::store::clock::or_empty")]
    #[schemars(schema_with = "crate::store::clock::or_empty::schema")]
    pub last_attempt_at: Option<Timestamp>,
    /// When the failing event is tried again; `""` when none waits.
    #[serde(with = "crate::store::clock::or_empty")]
    #[schemars(schema_with = "crate::store::clock::or_empty::schema")]
    pub next_attempt_at: Option<Timestamp>,
    /// HOOK-5: the last `enable` skipped the events after this position …
    pub skipped_after: String,
    /// … through this one (both `""` when it skipped nothing).
    pub skipped_through: String,
    /// Whether it may be delivered inside this machine or its network
    /// (a loopback, private, link-local or metadata address) and carry
    /// userinfo.
    pub allow_private: bool,
    /// LINK-4: whether its `bundle.asked`, `bundle.reminded` and
    /// `bundle.escalated` payloads carry each recipient's answer link (a
    /// relay that messages each person privately).
    pub links: bool,
}

/// One endpoint's row. (Without the `webhooks` feature nothing delivers,
/// so nothing reads its secrets.)
#[derive(Debug, Clone, Queryable)]
#[cfg_attr(not(feature = "webhooks"), allow(dead_code))]
pub(crate) struct Endpoint {
    pub id: String,
    pub url: String,
    pub events: String,
    pub workspace_id: String,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_until: Option<i64>,
    pub state: String,
    pub cursor: String,
    pub last_error: String,
    pub last_attempt_at: Option<i64>,
    pub next_attempt_at: Option<i64>,
    pub skipped_after: String,
    pub skipped_through: String,
    pub delivered: i64,
    pub failed: i64,
    pub allow_private: bool,
    pub links: bool,
}

/// The columns of an [`Endpoint`].
#[diesel::dsl::auto_type]
pub(crate) fn endpoint_columns() -> _ {
    (
        webhooks::id,
        webhooks::url,
        webhooks::events,
        webhooks::workspace_id,
        webhooks::secret,
        webhooks::previous_secret,
        webhooks::previous_until,
        webhooks::state,
        webhooks::cursor,
        webhooks::last_error,
        webhooks::last_attempt_at,
        webhooks::next_attempt_at,
        webhooks::skipped_after,
        webhooks::skipped_through,
        webhooks::delivered,
        webhooks::failed,
        webhooks::allow_private,
        webhooks::links,
    )
}

impl Endpoint {
    pub(crate) fn cursor_position(&self) -> Option<Position> {
        Position::parse(&self.cursor).ok().flatten()
    }

    /// HOOK-6: how it shows, with `backlog` events after its cursor.
    pub(crate) fn view(self, backlog: i64) -> WebhookView {
        WebhookView {
            events: split_events(&self.events),
            state: WebhookState::from_stored(&self.state).as_str().to_owned(),
            last_attempt_at: self.last_attempt_at.map(Timestamp::from_micros),
            next_attempt_at: self.next_attempt_at.map(Timestamp::from_micros),
            id: self.id,
            url: self.url,
            workspace_id: self.workspace_id,
            cursor: self.cursor,
            backlog,
            last_error: self.last_error,
            skipped_after: self.skipped_after,
            skipped_through: self.skipped_through,
            allow_private: self.allow_private,
            links: self.links,
        }
    }
}

fn split_events(stored: &str) -> Vec<String> {
    stored
        .split(',')
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// One endpoint, or the not-found of HOOK-1.
pub(crate) fn load(conn: &mut AnyConnection, id: &str) -> Result<Endpoint> {
    webhooks::table
        .find(id)
        .select(endpoint_columns())
        .first(conn)
        .optional()?
        .ok_or(Error::NotFound(Entity::Webhook))
}
