//! API tokens and web sessions (HTTP-4): who a bearer token or a session
//! cookie names. Only SHA-256 digests are stored, so neither a token nor a
//! session id can be read back from the database; a token's text is shown
//! once, when it is made. A session lives 12 hours and dies with its
//! token (the lookup joins a live token; revoking deletes its sessions).

use std::time::Duration;

use base64::Engine as _;
use diesel::prelude::*;

use crate::domain::engine::Engine;
use crate::error::{Entity, Error, Result, ValidationError};
use crate::rules::limits::check_text;
use crate::rules::principal::Principal;
use crate::store::schema::{api_tokens, web_sessions};
use crate::store::{at_most_one, Timestamp};

/// How long a web session lives (HTTP-4).
pub const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);

/// Every token starts with this, so a leaked one is easy to recognise
/// (secret scanners, logs).
pub const TOKEN_PREFIX: &str = "clr_";

/// The hex digits of a digest that name a token in listings (its id).
const ID_DIGITS: usize = 12;

/// The fewest hex digits `revoke` accepts as an id prefix, so a typo does
/// not revoke a token by accident.
const MIN_ID_PREFIX: usize = 6;

/// A token as `clarion token list` shows it: never its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// The first 12 hex digits of the token's SHA-256: its public name.
    pub id: String,
    /// Whom the token authenticates as.
    pub principal: Principal,
    /// A note for people (`--label`).
    pub label: String,
    /// When it was made.
    pub created_at: Timestamp,
    /// When it was revoked, if it was.
    pub revoked_at: Option<Timestamp>,
}

/// A fresh token: its text, shown once, and what is stored about it.
#[derive(Debug, Clone)]
pub struct NewToken {
    /// The secret itself: `clr_` and 43 base64url characters (256 bits).
    pub token: String,
    /// What the database keeps.
    pub info: TokenInfo,
}

/// A fresh web session: the cookie's value, shown once.
#[derive(Debug, Clone)]
pub struct WebSession {
    /// The session id (256 random bits, base64url); only its digest is
    /// stored.
    pub id: String,
    /// When the session ends.
    pub expires_at: Timestamp,
}

/// What [`Engine::live_credentials`] found: the principal each live
/// token and each live web session names, by the secret as given.
#[derive(Debug, Default)]
pub(crate) struct LiveCredentials {
    pub(crate) tokens: std::collections::HashMap<String, Principal>,
    pub(crate) sessions: std::collections::HashMap<String, Principal>,
}

#[derive(Queryable)]
struct TokenRow {
    digest: String,
    principal_kind: String,
    user_id: String,
    agent_id: String,
    grants: String,
    label: String,
    created_at: i64,
    revoked_at: Option<i64>,
}

/// The columns of a [`TokenRow`], in its fields' order: written once.
#[diesel::dsl::auto_type]
fn token_columns() -> _ {
    (
        api_tokens::digest,
        api_tokens::principal_kind,
        api_tokens::user_id,
        api_tokens::agent_id,
        api_tokens::grants,
        api_tokens::label,
        api_tokens::created_at,
        api_tokens::revoked_at,
    )
}

impl TokenRow {
    /// The stored principal, through the one principal parser. A row
    /// clarion did not write and cannot read names nobody (`None`): its
    /// token is refused, never taken as `unclassified`.
    fn principal(&self) -> Option<Principal> {
        let user_id = (!self.user_id.is_empty()).then_some(self.user_id.as_str());
        let agent_id = (!self.agent_id.is_empty()).then_some(self.agent_id.as_str());
        Principal::from_parts(
            &self.principal_kind,
            user_id,
            agent_id,
            self.grants.split_whitespace(),
        )
        .ok()
    }

    fn info(&self) -> Option<TokenInfo> {
        Some(TokenInfo {
            id: self.digest.chars().take(ID_DIGITS).collect(),
            principal: self.principal()?,
            label: self.label.clone(),
            created_at: Timestamp::from_micros(self.created_at),
            revoked_at: self.revoked_at.map(Timestamp::from_micros),
        })
    }
}

/// Lower-case hex SHA-256 of `secret`.
fn digest(secret: &str) -> String {
    crate::rules::digest::sha256_hex(secret.as_bytes())
}

/// 32 bytes from the operating system's generator, base64url.
fn random_secret() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| Error::Internal(format!("no randomness from the OS: {error}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The principal's parts as stored (WIRE-5's names).
fn parts(principal: &Principal) -> (&'static str, String, String, String) {
    match principal {
        Principal::System | Principal::Unclassified => (
            principal.kind(),
            String::new(),
            String::new(),
            String::new(),
        ),
        Principal::User { user_id } => (
            principal.kind(),
            user_id.clone(),
            String::new(),
            String::new(),
        ),
        Principal::Agent {
            user_id,
            agent_id,
            grants,
        } => (
            principal.kind(),
            user_id.clone(),
            agent_id.clone(),
            grants
                .iter()
                .map(|grant| grant.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

impl Engine {
    /// HTTP-4: makes a token for `principal` and stores its digest. The
    /// returned text is the only copy.
    pub(crate) fn add_token(&self, principal: &Principal, label: &str) -> Result<NewToken> {
        principal.check_text()?;
        check_text("label", label)?;
        if matches!(principal, Principal::Unclassified) {
            // AUTH-1: an unclassified principal may do nothing; a token for
            // one could only ever be refused.
            return Err(ValidationError::new("principal", "a token cannot be unclassified").into());
        }
        let token = format!("{TOKEN_PREFIX}{}", random_secret()?);
        let digest = digest(&token);
        let (kind, user_id, agent_id, grants) = parts(principal);
        let created_at = self.now();
        self.write(|conn| {
            diesel::insert_into(api_tokens::table)
                .values((
                    api_tokens::digest.eq(&digest),
                    api_tokens::principal_kind.eq(kind),
                    api_tokens::user_id.eq(&user_id),
                    api_tokens::agent_id.eq(&agent_id),
                    api_tokens::grants.eq(&grants),
                    api_tokens::label.eq(label),
                    api_tokens::created_at.eq(created_at.as_micros()),
                ))
                .execute(conn)?;
            Ok(())
        })?;
        Ok(NewToken {
            token,
            info: TokenInfo {
                id: digest[..ID_DIGITS].to_owned(),
                principal: principal.clone(),
                label: label.to_owned(),
                created_at,
                revoked_at: None,
            },
        })
    }

    /// Every token, oldest first, revoked ones included.
    pub(crate) fn list_tokens(&self) -> Result<Vec<TokenInfo>> {
        let rows: Vec<TokenRow> = self.read_one(|conn| {
            Ok(api_tokens::table
                .select(token_columns())
                .order((api_tokens::created_at, api_tokens::digest))
                .load(conn)?)
        })?;
        Ok(rows.iter().filter_map(TokenRow::info).collect())
    }

    /// Whether any token may still sign in (`clarion serve` refuses to
    /// start without one unless told whom to serve: HTTP-4).
    pub(crate) fn has_live_tokens(&self) -> Result<bool> {
        let found: Option<String> = self.read_one(|conn| {
            Ok(at_most_one(
                api_tokens::table
                    .filter(api_tokens::revoked_at.is_null())
                    .select(api_tokens::digest)
                    .limit(1),
                conn,
            )?)
        })?;
        Ok(found.is_some())
    }

    /// Revokes the token named by `id_or_token`: the token itself, or a
    /// prefix (at least 6 hex digits) of its id that names exactly one.
    /// Its web sessions end with it. Revoking twice is harmless.
    pub(crate) fn revoke_token(&self, id_or_token: &str) -> Result<TokenInfo> {
        check_text("id", id_or_token)?;
        let now = self.now().as_micros();
        let pattern = if id_or_token.starts_with(TOKEN_PREFIX) {
            None
        } else {
            let prefix = id_or_token.to_ascii_lowercase();
            if prefix.len() < MIN_ID_PREFIX || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ValidationError::new(
                    "id",
                    format!("give the token, or at least {MIN_ID_PREFIX} hex digits of its id"),
                )
                .into());
            }
            Some(prefix)
        };
        let row = self.write(|conn| {
            let mut rows: Vec<TokenRow> = match &pattern {
                None => api_tokens::table
                    .find(digest(id_or_token))
                    .select(token_columns())
                    .load(conn)?,
                Some(prefix) => api_tokens::table
                    .filter(api_tokens::digest.like(format!("{prefix}%")))
                    .select(token_columns())
                    .limit(2)
                    .load(conn)?,
            };
            if rows.len() > 1 {
                return Err(ValidationError::new(
                    "id",
                    "names more than one token: give more digits",
                )
                .into());
            }
            let mut row = rows.pop().ok_or(Error::NotFound(Entity::Token))?;
            if row.revoked_at.is_none() {
                diesel::update(api_tokens::table.find(&row.digest))
                    .set(api_tokens::revoked_at.eq(now))
                    .execute(conn)?;
                row.revoked_at = Some(now);
            }
            diesel::delete(web_sessions::table.filter(web_sessions::token_digest.eq(&row.digest)))
                .execute(conn)?;
            Ok(row)
        })?;
        row.info()
            .ok_or_else(|| Error::Internal("a stored token names no principal".into()))
    }

    /// HTTP-4: the principal of a live bearer token; `None` for an
    /// unknown or revoked one.
    pub(crate) fn token_principal(&self, token: &str) -> Result<Option<Principal>> {
        Ok(self.live_token(token)?.and_then(|row| row.principal()))
    }

    fn live_token(&self, token: &str) -> Result<Option<TokenRow>> {
        if check_text("token", token).is_err() {
            return Ok(None);
        }
        let digest = digest(token);
        self.read_one(|conn| {
            Ok(at_most_one(
                api_tokens::table
                    .find(&digest)
                    .filter(api_tokens::revoked_at.is_null())
                    .select(token_columns()),
                conn,
            )?)
        })
    }

    /// HTTP-4: signs in with a live token: a new session of 12 hours, or
    /// `None` when the token is unknown or revoked.
    pub(crate) fn open_web_session(&self, token: &str) -> Result<Option<WebSession>> {
        let Some(row) = self.live_token(token)? else {
            return Ok(None);
        };
        let id = random_secret()?;
        let now = self.now();
        let lifetime = i64::try_from(SESSION_LIFETIME.as_micros()).unwrap_or(i64::MAX);
        let expires_at = Timestamp::from_micros(now.as_micros().saturating_add(lifetime));
        let session_digest = digest(&id);
        let opened = self.write(|conn| {
            // Expired sessions go as new ones come, so the table stays small.
            diesel::delete(
                web_sessions::table.filter(web_sessions::expires_at.le(now.as_micros())),
            )
            .execute(conn)?;
            // The token may have been revoked since it was read.
            let live: Option<String> = at_most_one(
                api_tokens::table
                    .find(&row.digest)
                    .filter(api_tokens::revoked_at.is_null())
                    .select(api_tokens::digest),
                conn,
            )?;
            if live.is_none() {
                return Ok(false);
            }
            diesel::insert_into(web_sessions::table)
                .values((
                    web_sessions::digest.eq(&session_digest),
                    web_sessions::token_digest.eq(&row.digest),
                    web_sessions::created_at.eq(now.as_micros()),
                    web_sessions::expires_at.eq(expires_at.as_micros()),
                ))
                .execute(conn)?;
            Ok(true)
        })?;
        Ok(opened.then_some(WebSession { id, expires_at }))
    }

    /// HTTP-4: the principal of a live session (not expired, its token not
    /// revoked); `None` otherwise.
    pub(crate) fn web_session_principal(&self, session_id: &str) -> Result<Option<Principal>> {
        Ok(self
            .live_web_session(session_id)?
            .and_then(|(row, _)| row.principal()))
    }

    /// HTTP-10: when a live session expires; `None` for one that is not
    /// live.
    pub(crate) fn web_session_expires_at(&self, session_id: &str) -> Result<Option<Timestamp>> {
        Ok(self
            .live_web_session(session_id)?
            .map(|(_, expires_at)| Timestamp::from_micros(expires_at)))
    }

    /// A live session (not expired, its token not revoked): its token's
    /// row and its expiry.
    fn live_web_session(&self, session_id: &str) -> Result<Option<(TokenRow, i64)>> {
        if check_text("session", session_id).is_err() {
            return Ok(None);
        }
        let now = self.now().as_micros();
        let session_digest = digest(session_id);
        self.read_one(|conn| {
            Ok(at_most_one(
                web_sessions::table
                    .inner_join(api_tokens::table)
                    .filter(web_sessions::digest.eq(&session_digest))
                    .filter(web_sessions::expires_at.gt(now))
                    .filter(api_tokens::revoked_at.is_null())
                    .select((token_columns(), web_sessions::expires_at)),
                conn,
            )?)
        })
    }

    /// HTTP-10, HTTP-14: whom each live token and each live web session
    /// names now, in one statement: the credential checks of one wake-up
    /// of the event streams. Unknown, revoked and expired ones are absent.
    pub(crate) fn live_credentials(
        &self,
        tokens: &[&str],
        sessions: &[&str],
    ) -> Result<LiveCredentials> {
        let by_digest = |secrets: &[&str]| -> std::collections::HashMap<String, String> {
            secrets
                .iter()
                .filter(|secret| check_text("credential", secret).is_ok())
                .map(|secret| (digest(secret), (*secret).to_owned()))
                .collect()
        };
        let (token_digests, session_digests) = (by_digest(tokens), by_digest(sessions));
        let mut live = LiveCredentials::default();
        if token_digests.is_empty() && session_digests.is_empty() {
            return Ok(live);
        }
        let now = self.now().as_micros();
        let rows: Vec<(Option<String>, TokenRow)> = self.read_one(|conn| {
            let tokens: Vec<&str> = token_digests.keys().map(String::as_str).collect();
            let sessions: Vec<&str> = session_digests.keys().map(String::as_str).collect();
            Ok(api_tokens::table
                .left_join(
                    web_sessions::table.on(web_sessions::token_digest
                        .eq(api_tokens::digest)
                        .and(web_sessions::digest.eq_any(sessions))
                        .and(web_sessions::expires_at.gt(now))),
                )
                .filter(api_tokens::revoked_at.is_null())
                .filter(
                    api_tokens::digest
                        .eq_any(tokens)
                        .or(web_sessions::digest.is_not_null()),
                )
                .select((web_sessions::digest.nullable(), token_columns()))
                .load(conn)?)
        })?;
        for (session, row) in rows {
            let Some(principal) = row.principal() else {
                continue;
            };
            if let Some(token) = token_digests.get(&row.digest) {
                live.tokens.insert(token.clone(), principal.clone());
            }
            if let Some(session) = session.and_then(|digest| session_digests.get(&digest)) {
                live.sessions.insert(session.clone(), principal);
            }
        }
        Ok(live)
    }

    /// HTTP-4: signs out: the session ends now. Unknown sessions are
    /// ignored.
    pub(crate) fn close_web_session(&self, session_id: &str) -> Result<()> {
        if check_text("session", session_id).is_err() {
            return Ok(());
        }
        let session_digest = digest(session_id);
        self.write(|conn| {
            diesel::delete(web_sessions::table.find(&session_digest)).execute(conn)?;
            Ok(())
        })
    }
}
