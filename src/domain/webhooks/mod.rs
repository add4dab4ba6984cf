//! Webhook endpoints (HOOK-1, HOOK-5, HOOK-6): where the event log is
//! delivered, managed by `system` through every door. Each endpoint has
//! its own cursor in the log; the worker (`worker.rs`, feature `webhooks`)
//! delivers what follows it, signed (`signing.rs`).

mod endpoint;
#[cfg(feature = "webhooks")]
pub(crate) mod signing;
pub(crate) mod target;
#[cfg(feature = "webhooks")]
pub(crate) mod worker;

use std::time::Duration;

pub use endpoint::WebhookView;
use endpoint::{endpoint_columns, load, Endpoint, SECRET_PREFIX};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use diesel::prelude::*;

use crate::domain::engine::Engine;
use crate::domain::events::{self, Position};
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::limits::{check_id, check_text, MAX_WEBHOOK_URL};
use crate::rules::vocabulary::{EventType, WebhookState};
use crate::store::schema::webhooks;
use crate::store::{AnyConnection, IdKind};

/// Arguments of `webhook_add` (HOOK-1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookAdd {
    /// An absolute `http` or `https` URL.
    pub url: String,
    /// The event types it receives (EVT-1); empty: all of them.
    pub events: Vec<String>,
    /// Only events whose bundle's workspace is this one; empty: every
    /// workspace.
    pub workspace_id: String,
    /// Whether it may be delivered to a loopback, private, link-local or
    /// cloud-metadata address, or carry userinfo (a local relay); false
    /// refuses such a URL and fails a delivery that would reach one.
    pub allow_private: bool,
    /// LINK-4: whether its `bundle.asked`, `bundle.reminded` and
    /// `bundle.escalated` payloads carry the answer links of the people
    /// the bundle reaches (credentials: for a relay that messages each
    /// person privately).
    pub links: bool,
}

/// An endpoint's id and its secret, shown once (`webhook_add`,
/// `webhook_rotate`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct WebhookSecret {
    /// The endpoint.
    pub id: String,
    /// `whsec_` and the standard base64 of 32 random bytes: what a
    /// receiver verifies signatures with. Nothing shows it again.
    pub secret: String,
}

/// HOOK-1: an absolute `http` or `https` URL with a host; anything else
/// is a validation error naming `url`. (The client parses it again when it
/// sends; this keeps a URL that can never be delivered out of the table.)
pub(crate) fn check_url(url: &str) -> std::result::Result<(), ValidationError> {
    let refuse = |why: &str| ValidationError::new("url", why.to_owned());
    check_text("url", url)?;
    // Characters, as its JSON Schema's `maxLength` counts.
    if url.chars().count() > MAX_WEBHOOK_URL {
        return Err(refuse("longer than 2000 characters"));
    }
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .ok_or_else(|| refuse("must be an absolute http or https URL"))?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, host)| host);
    if host.is_empty() || host.starts_with(':') {
        return Err(refuse("must name a host"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refuse("must not contain spaces or control characters"));
    }
    Ok(())
}

/// HOOK-1: the event types as stored (comma-separated, in the log's own
/// order, each once); an unknown one is a validation error naming it.
fn stored_events(events: &[String]) -> std::result::Result<String, ValidationError> {
    for (index, word) in events.iter().enumerate() {
        if EventType::from_word(word).is_none() {
            let known: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
            return Err(ValidationError::new(
                format!("events[{index}]"),
                format!("unknown event type {word:?}: one of {}", known.join(", ")),
            ));
        }
    }
    Ok(EventType::ALL
        .iter()
        .map(|t| t.as_str())
        .filter(|word| events.iter().any(|given| given == word))
        .collect::<Vec<_>>()
        .join(","))
}

/// HOOK-1: a new secret: `whsec_` and the standard, padded base64 of 32
/// random bytes from the operating system.
fn new_secret() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| Error::Internal(format!("no randomness for a webhook secret: {error}")))?;
    Ok(format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes)))
}

/// HOOK-6: every endpoint, oldest first, with the count of events after
/// its cursor.
fn with_backlogs(conn: &mut AnyConnection) -> Result<Vec<(Endpoint, i64)>> {
    let endpoints: Vec<Endpoint> = webhooks::table
        .order((webhooks::created_at, webhooks::id))
        .select(endpoint_columns())
        .load(conn)?;
    endpoints
        .into_iter()
        .map(|endpoint| {
            let backlog = events::count_after(conn, endpoint.cursor_position())?;
            Ok((endpoint, backlog))
        })
        .collect()
}

/// HOOK-5: where the log must be kept from: the lowest cursor among the
/// enabled and failing endpoints (`None`: no endpoint keeps anything).
pub(crate) fn retained_from(engine: &Engine) -> Result<Option<Position>> {
    let cursors: Vec<String> = engine.read(|conn| {
        Ok(webhooks::table
            .filter(webhooks::state.ne(WebhookState::Disabled.as_str()))
            .select(webhooks::cursor)
            .load(conn)?)
    })?;
    Ok(cursors
        .iter()
        .map(|cursor| Position::parse(cursor).ok().flatten().unwrap_or_default())
        .min())
}

impl Engine {
    /// HOOK-1: a new endpoint, enabled, starting at the head of the log
    /// (it receives what is appended after it was added).
    pub(crate) fn webhook_add(&self, add: &WebhookAdd) -> Result<WebhookSecret> {
        check_url(&add.url)?;
        // PROD-4: where it points, as it resolves now (again at delivery).
        target::check_target(&add.url, add.allow_private)?;
        let events = stored_events(&add.events)?;
        check_text("workspace_id", &add.workspace_id)?;
        let secret = new_secret()?;
        let id = self.new_id(IdKind::Webhook);
        let now = self.now().as_micros();
        self.write(|conn| {
            let head = events::head_in(conn)?;
            diesel::insert_into(webhooks::table)
                .values((
                    webhooks::id.eq(&id),
                    webhooks::url.eq(&add.url),
                    webhooks::events.eq(&events),
                    webhooks::workspace_id.eq(&add.workspace_id),
                    webhooks::secret.eq(&secret),
                    webhooks::state.eq(WebhookState::Enabled.as_str()),
                    webhooks::cursor.eq(head.map(|head| head.to_string()).unwrap_or_default()),
                    webhooks::created_at.eq(now),
                    webhooks::allow_private.eq(add.allow_private),
                    webhooks::links.eq(add.links),
                ))
                .execute(conn)?;
            Ok(())
        })?;
        Ok(WebhookSecret { id, secret })
    }

    /// HOOK-6: every endpoint, oldest first, with its backlog; never a
    /// secret.
    pub(crate) fn webhook_list(&self) -> Result<Vec<WebhookView>> {
        let endpoints = self.read(with_backlogs)?;
        Ok(endpoints
            .into_iter()
            .map(|(endpoint, backlog)| endpoint.view(backlog))
            .collect())
    }

    /// HOOK-1, HOOK-5: enabled again; it resumes at its cursor when no
    /// event after it was pruned, else at the head of the log, noting the
    /// range it skipped. A failing endpoint's failure is forgotten.
    pub(crate) fn webhook_enable(&self, id: &str) -> Result<()> {
        check_id("id", id)?;
        self.write(|conn| {
            let endpoint = load(conn, id)?;
            let cursor = endpoint.cursor_position().unwrap_or_default();
            let pruned = events::pruned_through(conn)?;
            let update = (
                webhooks::state.eq(WebhookState::Enabled.as_str()),
                webhooks::failing_since.eq(None::<i64>),
                webhooks::failures.eq(0),
                webhooks::next_attempt_at.eq(None::<i64>),
            );
            diesel::update(webhooks::table.find(id))
                .set(update)
                .execute(conn)?;
            if pruned.is_some_and(|pruned| cursor < pruned) {
                let head = events::head_in(conn)?
                    .map(|head| head.to_string())
                    .unwrap_or_default();
                diesel::update(webhooks::table.find(id))
                    .set((
                        webhooks::skipped_after.eq(&endpoint.cursor),
                        webhooks::skipped_through.eq(&head),
                        webhooks::cursor.eq(&head),
                    ))
                    .execute(conn)?;
            }
            Ok(())
        })
    }

    /// HOOK-1, HOOK-5: no longer delivered; its events are not kept.
    pub(crate) fn webhook_disable(&self, id: &str) -> Result<()> {
        self.set_webhook_state(id, WebhookState::Disabled)
    }

    /// HOOK-2: `410 Gone` disables; the give-up time marks it failing.
    pub(crate) fn set_webhook_state(&self, id: &str, state: WebhookState) -> Result<()> {
        check_id("id", id)?;
        self.write(|conn| {
            load(conn, id)?;
            diesel::update(webhooks::table.find(id))
                .set(webhooks::state.eq(state.as_str()))
                .execute(conn)?;
            Ok(())
        })
    }

    /// HOOK-1: gone, with its secret.
    pub(crate) fn webhook_remove(&self, id: &str) -> Result<()> {
        check_id("id", id)?;
        self.write(|conn| {
            let deleted = diesel::delete(webhooks::table.find(id)).execute(conn)?;
            if deleted == 0 {
                return Err(Error::NotFound(Entity::Webhook));
            }
            Ok(())
        })
    }

    /// HOOK-3: a new secret; for `overlap` the previous one signs too.
    pub(crate) fn webhook_rotate(&self, id: &str, overlap: Duration) -> Result<WebhookSecret> {
        check_id("id", id)?;
        let secret = new_secret()?;
        let until = self
            .now()
            .as_micros()
            .saturating_add(i64::try_from(overlap.as_micros()).unwrap_or(i64::MAX));
        self.write(|conn| {
            let endpoint = load(conn, id)?;
            diesel::update(webhooks::table.find(id))
                .set((
                    webhooks::secret.eq(&secret),
                    webhooks::previous_secret.eq(Some(&endpoint.secret)),
                    webhooks::previous_until.eq(Some(until)),
                ))
                .execute(conn)?;
            Ok(())
        })?;
        Ok(WebhookSecret {
            id: id.to_owned(),
            secret,
        })
    }

    /// HOOK-3's `webhook test`: the endpoint's URL and signing secrets now.
    #[cfg(feature = "webhooks")]
    pub(crate) fn webhook_endpoint(&self, id: &str) -> Result<Endpoint> {
        check_id("id", id)?;
        self.read(|conn| load(conn, id))
    }

    /// HOOK-6: per endpoint, its delivered and failed counts and its
    /// backlog; for `/metrics`.
    pub(crate) fn webhook_figures(&self) -> Result<Vec<WebhookFigures>> {
        let endpoints = self.read(with_backlogs)?;
        Ok(endpoints
            .into_iter()
            .map(|(endpoint, backlog)| WebhookFigures {
                backlog,
                failing: WebhookState::from_stored(&endpoint.state) == WebhookState::Failing,
                id: endpoint.id,
                delivered: endpoint.delivered,
                failed: endpoint.failed,
            })
            .collect())
    }
}

/// One endpoint's figures for `/metrics` (HOOK-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookFigures {
    /// The endpoint.
    pub id: String,
    /// Events delivered to it (2xx answers).
    pub delivered: i64,
    /// Attempts that failed.
    pub failed: i64,
    /// Events after its cursor.
    pub backlog: i64,
    /// Whether it is marked failing.
    pub failing: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for good in [
            "http://127.0.0.1:9000/hook",
            "https://example.com",
            "HTTPS://Example.com/a?b#c",
        ] {
            assert!(check_url(good).is_ok(), "{good}");
        }
        for bad in [
            "ftp://example.com",
            "example.com/hook",
            "/relative",
            "https://",
            "http://:80/x",
            "javascript:alert(1)",
            "http://exa mple.com",
            "",
        ] {
            assert_eq!(check_url(bad).unwrap_err().field, "url", "{bad}");
        }
    }

    #[test]
    fn events_are_known_words_in_log_order() {
        assert_eq!(stored_events(&[]).unwrap(), "");
        assert_eq!(
            stored_events(&["bundle.closed".into(), "bundle.asked".into()]).unwrap(),
            "bundle.asked,bundle.closed"
        );
        assert_eq!(
            stored_events(&["bundle.asked".into(), "bundle.deleted".into()])
                .unwrap_err()
                .field,
            "events[1]"
        );
    }
}
