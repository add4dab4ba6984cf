//! Answer links (LINK-1, LINK-3, LINK-5): the keys in the database, minting
//! a link for a person who sees a bundle, checking a token against the
//! current keys, and recording a link's one use in the transaction of the
//! win or the vote it made. The token's format is `rules::links`'.

#![cfg_attr(not(all(feature = "http", feature = "webhooks")), allow(dead_code))] // links are read by the HTTP door and sent by the workers

use std::time::Duration;

use diesel::prelude::*;

use crate::domain::bundle::{visible_bundle_query, BundleRecord};
use crate::domain::engine::Engine;
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::capability::{admit_link, Access, Admitted};
use crate::rules::limits::check_text;
use crate::rules::links::{
    self, random_link_id, LinkClaims, LinkUse, DEFAULT_LINK_TTL, KEY_BYTES, LINK_TTL_MS,
    MAX_TOKEN_BYTES, RETIRED_KEY_VERIFIES,
};
use crate::rules::principal::Principal;
use crate::rules::visibility::Scope;
use crate::store::schema::{link_keys, link_uses};
use crate::store::{at_most_one, AnyConnection, Timestamp};

/// LINK-1: a link minted by `answer_link`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AnswerLink {
    /// Where the person opens it: `<public_url>/a/<token>`, or `/a/<token>`.
    pub url: String,
    /// Until when it answers: the earlier of its end and the bundle's
    /// deadline (its page opens until its end).
    pub expires_at: Timestamp,
}

/// What a link may do now, checked (LINK-2, LINK-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkPurpose {
    /// Open the page and read the bundle: until the link's end.
    Open,
    /// Answer, vote or cancel: until the earlier of its end and the deadline.
    Answer,
}

/// LINK-3: the caller a verified link makes: the user it names, limited
/// to its bundle and to the link routes, which alone make one.
#[derive(Debug, Clone)]
pub(crate) struct LinkCaller {
    principal: Principal,
    claims: LinkClaims,
}

impl LinkCaller {
    /// The one bundle it reaches.
    pub(crate) fn pending_id(&self) -> &str {
        &self.claims.pending_id
    }

    /// Admitted to an operation of `access` as that user, on channel
    /// `link`, carrying the link a win or a vote uses up (AUTH-2 as for
    /// the user's own call).
    pub(crate) fn admit(&self, access: Access) -> Result<Admitted<'_>> {
        admit_link(&self.principal, access, self.claims.use_of())
    }
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

/// LINK-1: `ttl_ms` in its range.
fn checked_ttl(ttl: Option<Duration>) -> Result<Duration, ValidationError> {
    let ttl = ttl.unwrap_or(DEFAULT_LINK_TTL);
    let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    if !LINK_TTL_MS.contains(&ms) {
        return Err(ValidationError::new(
            "ttl_ms",
            format!(
                "must be from {} to {} (a minute to a week)",
                LINK_TTL_MS.start(),
                LINK_TTL_MS.end()
            ),
        ));
    }
    Ok(ttl)
}

/// LINK-1: 256 bits from the OS, hex.
fn new_key() -> Result<(String, String)> {
    let mut bytes = [0u8; KEY_BYTES + 8];
    getrandom::fill(&mut bytes)
        .map_err(|error| Error::Internal(format!("no randomness from the OS: {error}")))?;
    let (secret, id) = bytes.split_at(KEY_BYTES);
    Ok((hex(id), hex(secret)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// The key that signs: the newest one not retired.
fn signing_key(conn: &mut AnyConnection) -> Result<Option<Vec<u8>>> {
    let secret: Option<String> = link_keys::table
        .filter(link_keys::retired_at.is_null())
        .order((link_keys::created_at.desc(), link_keys::id.desc()))
        .select(link_keys::secret)
        .first(conn)
        .optional()?;
    Ok(secret.and_then(|secret| unhex(&secret)))
}

/// LINK-1: the keys that verify at `now`: every current one and those
/// retired less than 7 days ago, read on every check.
fn verifying_keys(conn: &mut AnyConnection, now: i64) -> Result<Vec<Vec<u8>>> {
    let since = now.saturating_sub(micros(RETIRED_KEY_VERIFIES));
    let secrets: Vec<String> = link_keys::table
        .filter(
            link_keys::retired_at
                .is_null()
                .or(link_keys::retired_at.gt(since)),
        )
        .select(link_keys::secret)
        .load(conn)?;
    Ok(secrets.iter().filter_map(|secret| unhex(secret)).collect())
}

fn insert_key(conn: &mut AnyConnection, now: i64) -> Result<Vec<u8>> {
    let (id, secret) = new_key()?;
    diesel::insert_into(link_keys::table)
        .values((
            link_keys::id.eq(&id),
            link_keys::secret.eq(&secret),
            link_keys::created_at.eq(now),
        ))
        .execute(conn)?;
    unhex(&secret).ok_or_else(|| Error::Internal("a new link key is not hex".into()))
}

/// LINK-3, checked before any loser branch: a link already used is `410`.
pub(crate) fn check_unused(conn: &mut AnyConnection, link: &LinkUse) -> Result<()> {
    let used: Option<String> = link_uses::table
        .find(&link.link_id)
        .select(link_uses::link_id)
        .first(conn)
        .optional()?;
    match used {
        Some(_) => Err(Error::LinkUsed),
        None => Ok(()),
    }
}

/// LINK-3: records the link's one use, in the transaction of the win or
/// the vote it made. A use committed meanwhile by another transaction
/// makes this one [`Error::LinkUsed`], and it rolls back.
pub(crate) fn use_up(
    conn: &mut AnyConnection,
    link: &LinkUse,
    pending_id: &str,
    now: Timestamp,
) -> Result<()> {
    let row = (
        link_uses::link_id.eq(&link.link_id),
        link_uses::pending_id.eq(pending_id),
        link_uses::used_at.eq(now.as_micros()),
        link_uses::expires_at.eq(link.answers_until),
    );
    let inserted = per_backend!(conn, c => diesel::insert_into(link_uses::table)
        .values(row)
        .on_conflict_do_nothing()
        .execute(c))?;
    if inserted == 0 {
        return Err(Error::LinkUsed);
    }
    Ok(())
}

/// REL-8: link uses whose POSTs have ended, and keys retired 7 days ago.
pub(crate) fn prune(conn: &mut AnyConnection, now: i64) -> Result<usize> {
    let uses =
        diesel::delete(link_uses::table.filter(link_uses::expires_at.le(now))).execute(conn)?;
    let since = now.saturating_sub(micros(RETIRED_KEY_VERIFIES));
    let keys =
        diesel::delete(link_keys::table.filter(link_keys::retired_at.le(since))).execute(conn)?;
    Ok(uses + keys)
}

impl Engine {
    /// LINK-1: the key that signs, made on first use.
    fn link_key(&self) -> Result<Vec<u8>> {
        if let Some(key) = self.read(signing_key)? {
            return Ok(key);
        }
        let now = self.now().as_micros();
        self.write(|conn| match signing_key(conn)? {
            Some(key) => Ok(key),
            None => insert_key(conn, now),
        })
    }

    /// LINK-1 (`answer_link`): a link that lets `user_id` answer or vote
    /// on the bundle, for `ttl` (a day by default). The user must see the
    /// bundle now: otherwise the one not-found (AUTH-5).
    pub(crate) fn answer_link(
        &self,
        pending_id: &str,
        user_id: &str,
        ttl: Option<Duration>,
    ) -> Result<AnswerLink> {
        check_text("pending_id", pending_id)?;
        let person = Principal::user(user_id);
        person.check_text()?;
        let ttl = checked_ttl(ttl)?;
        let scope = Scope::of(&person).ok_or(Error::NotFound(Entity::Bundle))?;
        let now = self.now().as_micros();
        let bundle: Option<BundleRecord> = self.read(|conn| {
            Ok(at_most_one(
                visible_bundle_query(&scope, pending_id, now),
                conn,
            )?)
        })?;
        let bundle = bundle.ok_or(Error::NotFound(Entity::Bundle))?;
        let mut id = [0u8; 16];
        getrandom::fill(&mut id)
            .map_err(|error| Error::Internal(format!("no randomness from the OS: {error}")))?;
        let claims = claims_for(
            &bundle,
            user_id,
            now.saturating_add(micros(ttl)),
            random_link_id(&id),
        );
        let token = claims.sign(&self.link_key()?);
        if token.len() > MAX_TOKEN_BYTES {
            return Err(ValidationError::new(
                "user_id",
                format!("too long to fit a link of at most {MAX_TOKEN_BYTES} bytes"),
            )
            .into());
        }
        Ok(AnswerLink {
            url: links::link_url(self.public_url.as_deref(), &token),
            expires_at: Timestamp::from_micros(claims.answers_until),
        })
    }

    /// LINK-1 (`rotate_link_key`): a new key signs from now on; the keys
    /// before it verify for 7 more days, or, with `now`, are deleted, so
    /// every outstanding link stops at once.
    pub(crate) fn rotate_link_key(&self, now: bool) -> Result<()> {
        let at = self.now().as_micros();
        self.write(|conn| {
            if now {
                diesel::delete(link_keys::table).execute(conn)?;
            } else {
                diesel::update(link_keys::table.filter(link_keys::retired_at.is_null()))
                    .set(link_keys::retired_at.eq(Some(at)))
                    .execute(conn)?;
            }
            insert_key(conn, at)?;
            Ok(())
        })
    }

    /// LINK-2, LINK-3: the caller `token` makes, if it verifies under a current
    /// key and is still good for `purpose` — `None` for every reason it
    /// is not, alike. Whether the person still sees the bundle is the
    /// caller's next question (the visibility rule, as for any call).
    pub(crate) fn link_caller(
        &self,
        token: &str,
        purpose: LinkPurpose,
    ) -> Result<Option<LinkCaller>> {
        let Some(unverified) = links::parse(token) else {
            return Ok(None);
        };
        let now = self.now().as_micros();
        let keys = self.read(|conn| verifying_keys(conn, now))?;
        if !keys.iter().any(|key| unverified.signed_with(key)) {
            return Ok(None);
        }
        let claims = unverified.into_claims();
        let until = match purpose {
            LinkPurpose::Open => claims.opens_until,
            LinkPurpose::Answer => claims.answers_until,
        };
        Ok((now < until).then(|| LinkCaller {
            principal: Principal::user(claims.user_id.clone()),
            claims,
        }))
    }

    /// LINK-1, LINK-4: the link a mail or a relay payload carries for
    /// `user_id` about the event at `position` (of time `at`): derived
    /// from both, so a resend carries the same link, for a day from the
    /// event.
    pub(crate) fn derived_link(
        &self,
        bundle: &BundleRecord,
        position: &str,
        at: Timestamp,
        user_id: &str,
    ) -> Result<AnswerLink> {
        let opens_until = at.as_micros().saturating_add(micros(DEFAULT_LINK_TTL));
        let link_id = links::derived_link_id(position, user_id);
        let claims = claims_for(bundle, user_id, opens_until, link_id);
        let token = claims.sign(&self.link_key()?);
        Ok(AnswerLink {
            url: links::link_url(self.public_url.as_deref(), &token),
            expires_at: Timestamp::from_micros(claims.answers_until),
        })
    }
}

/// LINK-1: what a link for `user_id` on `bundle` says: it opens until
/// `opens_until` and answers until then or the bundle's deadline.
fn claims_for(
    bundle: &BundleRecord,
    user_id: &str,
    opens_until: i64,
    link_id: String,
) -> LinkClaims {
    let answers_until = bundle
        .expires_at
        .map_or(opens_until, |deadline| deadline.min(opens_until));
    LinkClaims {
        pending_id: bundle.pending_id.clone(),
        user_id: user_id.to_owned(),
        opens_until,
        answers_until,
        link_id,
    }
}
