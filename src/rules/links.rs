//! LINK-1: what an answer link says and how it is signed — data and pure
//! functions, no I/O. The token is `v1.<payload>.<mac>`, base64url without
//! padding: the payload a JSON array `[pending_id, user_id, opens_until,
//! answers_until, link_id]` (times in microseconds), the MAC HMAC-SHA256 of
//! `v1.<payload>` under a link key. Keys live in the database
//! (`domain::links`); this module only signs and checks with the bytes it
//! is given.

#![cfg_attr(not(all(feature = "http", feature = "webhooks")), allow(dead_code))] // links are read by the HTTP door and sent by the workers

use std::ops::RangeInclusive;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// LINK-1: `ttl_ms` when omitted: a day.
pub const DEFAULT_LINK_TTL: Duration = Duration::from_secs(24 * 3600);
/// LINK-1: the range of `ttl_ms`: a minute to a week.
pub const LINK_TTL_MS: RangeInclusive<u64> = 60_000..=7 * 24 * 3600 * 1000;
/// LINK-1: how long a retired key still verifies.
pub const RETIRED_KEY_VERIFIES: Duration = Duration::from_secs(7 * 24 * 3600);
/// LINK-2: the longest token that can verify, in bytes.
pub const MAX_TOKEN_BYTES: usize = 512;
/// LINK-1: a key's size, in bytes (256 bits).
pub const KEY_BYTES: usize = 32;
/// The token's version and the prefix the MAC covers with the payload.
const VERSION: &str = "v1";

/// What a link grants: `user_id` may open `pending_id`'s page until
/// `opens_until`, and answer or vote on it until `answers_until` (the
/// earlier of the link's end and the bundle's deadline), once, as the use
/// named `link_id` (LINK-3).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkClaims {
    /// The bundle.
    pub pending_id: String,
    /// The person.
    pub user_id: String,
    /// Microseconds: the page and `GET /api/v1/link/bundle` answer until then.
    pub opens_until: i64,
    /// Microseconds: POSTs are accepted until then.
    pub answers_until: i64,
    /// The link's unique id: what its use is recorded under.
    pub link_id: String,
}

impl LinkClaims {
    /// The link's payload, base64url.
    fn payload(&self) -> String {
        let array = (
            &self.pending_id,
            &self.user_id,
            self.opens_until,
            self.answers_until,
            &self.link_id,
        );
        // A tuple of strings and integers always serializes.
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&array).unwrap_or_default())
    }

    /// The signed token under `key`.
    pub fn sign(&self, key: &[u8]) -> String {
        let signed = format!("{VERSION}.{}", self.payload());
        let mac = URL_SAFE_NO_PAD.encode(mac_of(key, &signed).finalize().into_bytes());
        format!("{signed}.{mac}")
    }
}

/// HMAC-SHA256 over `signed`, keyed with `key` (any length is a valid
/// HMAC key).
fn mac_of(key: &[u8], signed: &str) -> Hmac<Sha256> {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(signed.as_bytes());
    mac
}

impl LinkClaims {
    /// What a POST through this link uses up (LINK-3).
    pub fn use_of(&self) -> LinkUse {
        LinkUse {
            link_id: self.link_id.clone(),
            answers_until: self.answers_until,
        }
    }
}

/// LINK-3: the use of a link a win or a vote records, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkUse {
    /// The link's id.
    pub link_id: String,
    /// Until when its POSTs were accepted: the record is kept that long.
    pub answers_until: i64,
}

/// A token taken apart, its MAC not yet checked.
#[derive(Debug)]
pub struct Unverified<'t> {
    signed: &'t str,
    mac: Vec<u8>,
    claims: LinkClaims,
}

impl Unverified<'_> {
    /// Whether `key` signed it, compared in constant time (LINK-5).
    pub fn signed_with(&self, key: &[u8]) -> bool {
        mac_of(key, self.signed).verify_slice(&self.mac).is_ok()
    }

    /// What it says; to be trusted only after [`signed_with`](Self::signed_with).
    pub fn into_claims(self) -> LinkClaims {
        self.claims
    }
}

/// Takes a token apart: `None` for anything that is not a well-formed
/// `v1` token of at most [`MAX_TOKEN_BYTES`] (LINK-2: empty, NUL,
/// non-ASCII, too long, malformed all end here, alike).
pub fn parse(token: &str) -> Option<Unverified<'_>> {
    if token.is_empty() || token.len() > MAX_TOKEN_BYTES || !token.is_ascii() {
        return None;
    }
    let (signed, mac) = token.rsplit_once('.')?;
    let (version, payload) = signed.split_once('.')?;
    if version != VERSION {
        return None;
    }
    let mac = URL_SAFE_NO_PAD.decode(mac).ok()?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let (pending_id, user_id, opens_until, answers_until, link_id): (
        String,
        String,
        i64,
        i64,
        String,
    ) = serde_json::from_slice(&bytes).ok()?;
    Some(Unverified {
        signed,
        mac,
        claims: LinkClaims {
            pending_id,
            user_id,
            opens_until,
            answers_until,
            link_id,
        },
    })
}

/// LINK-1: the id of the link a mail or a relay payload carries for
/// `user_id` about the event at `position`: the same on every resend.
pub fn derived_link_id(position: &str, user_id: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(b"clarion link\0");
    digest.update(position.as_bytes());
    digest.update(b"\0");
    digest.update(user_id.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest.finalize()[..16])
}

/// LINK-1: a fresh link's id from 16 random bytes.
pub fn random_link_id(bytes: &[u8; 16]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// LINK-1: where a token is opened: `<base>/a/<token>`, or the relative
/// `/a/<token>` without a public URL.
pub fn link_url(public_url: Option<&str>, token: &str) -> String {
    let base = public_url.unwrap_or("").trim_end_matches('/');
    format!("{base}{LINK_PATH}{token}")
}

/// LINK-2: the path under which links open.
pub const LINK_PATH: &str = "/a/";

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> LinkClaims {
        LinkClaims {
            pending_id: "p1".into(),
            user_id: "alice".into(),
            opens_until: 10,
            answers_until: 5,
            link_id: "id".into(),
        }
    }

    #[test]
    fn link_1_a_token_verifies_under_its_key_only() {
        let token = claims().sign(&[7; KEY_BYTES]);
        assert!(token.starts_with("v1."));
        let parsed = parse(&token).expect("parses");
        assert!(parsed.signed_with(&[7; KEY_BYTES]));
        assert!(!parsed.signed_with(&[8; KEY_BYTES]));
        assert_eq!(parsed.into_claims(), claims());
    }

    #[test]
    fn link_2_malformed_tokens_do_not_parse() {
        let token = claims().sign(&[7; KEY_BYTES]);
        for bad in [
            "",
            "v1",
            "v1.",
            "v2.abc.def",
            "v1.\0.x",
            "v1.é.x",
            &token[..token.len() - 60],
            &"a".repeat(MAX_TOKEN_BYTES + 1),
        ] {
            assert!(
                parse(bad).is_none_or(|p| !p.signed_with(&[7; KEY_BYTES])),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn link_1_a_derived_id_is_stable_per_event_and_person() {
        assert_eq!(derived_link_id("12", "a"), derived_link_id("12", "a"));
        assert_ne!(derived_link_id("12", "a"), derived_link_id("12", "b"));
        assert_ne!(derived_link_id("12", "a"), derived_link_id("13", "a"));
    }
}
