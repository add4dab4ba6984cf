//! Time and identity sources (DM-2). Both are injectable so tests and
//! snapshots are deterministic.

use std::fmt;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};

/// A UTC instant with microsecond precision, stored as microseconds since the
/// Unix epoch so that ordering and equality are exact on both backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The instant `micros` microseconds after the Unix epoch.
    pub const fn from_micros(micros: i64) -> Self {
        Timestamp(micros)
    }

    /// Microseconds since the Unix epoch, as stored.
    pub const fn as_micros(self) -> i64 {
        self.0
    }

    /// Parses RFC 3339 (any offset, any precision up to nanoseconds;
    /// sub-microsecond digits are truncated).
    pub fn parse_rfc3339(text: &str) -> Option<Self> {
        let parsed = DateTime::parse_from_rfc3339(text).ok()?;
        Some(Timestamp(parsed.with_timezone(&Utc).timestamp_micros()))
    }

    /// Parses RFC 3339 like [`Timestamp::parse_rfc3339`], but rounds
    /// sub-microsecond digits up: the earliest stored instant that is not
    /// before `text` (a `>=` lower bound stays exact).
    pub fn parse_rfc3339_ceil(text: &str) -> Option<Self> {
        let parsed = DateTime::parse_from_rfc3339(text).ok()?;
        let micros = parsed.with_timezone(&Utc).timestamp_micros();
        let extra = parsed.timestamp_subsec_nanos() % 1000 != 0;
        Some(Timestamp(micros + i64::from(extra)))
    }

    /// Parses RFC 3339 exactly: at most six fractional digits (EXP-6: a
    /// deadline is stored as given, never rounded).
    pub fn parse_rfc3339_exact(text: &str) -> Option<Self> {
        let fraction = text.split_once('.').map_or(0, |(_, rest)| {
            rest.bytes().take_while(u8::is_ascii_digit).count()
        });
        if fraction > 6 {
            return None;
        }
        Timestamp::parse_rfc3339(text)
    }

    /// RFC 3339 with exactly six fractional digits and `Z` (DM-2).
    pub fn to_rfc3339(self) -> String {
        match DateTime::<Utc>::from_timestamp_micros(self.0) {
            Some(instant) => instant.to_rfc3339_opts(SecondsFormat::Micros, true),
            // Out of chrono's range: only reachable through a degraded row.
            None => String::new(),
        }
    }

    /// Whole seconds from `self` to `later`, floored at zero (LIST-6 age).
    pub fn whole_seconds_until(self, later: Timestamp) -> i64 {
        (later.0.saturating_sub(self.0) / 1_000_000).max(0)
    }
}

/// On the wire a time is its RFC 3339 text (DM-2).
impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339, UTC, exactly six fractional digits (DM-2).",
        })
    }
}

/// A time that may be missing, written `""` when it is (WIRE-2's
/// `responded_at` of a degraded row).
pub(crate) mod or_empty {
    use super::Timestamp;

    pub(crate) fn serialize<S: serde::Serializer>(
        at: &Option<Timestamp>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&at.map(Timestamp::to_rfc3339).unwrap_or_default())
    }

    pub(crate) fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "RFC 3339, UTC, exactly six fractional digits; \"\" when none was recorded.",
        })
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

/// Where clarion reads the time.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp(Utc::now().timestamp_micros())
    }
}

/// A clock that moves only when told to; for tests and reproducible demos.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        ManualClock(AtomicI64::new(start.0))
    }

    /// Moves the clock to `at`.
    pub fn set(&self, at: Timestamp) {
        self.0.store(at.0, Ordering::SeqCst);
    }

    /// Moves the clock forward.
    pub fn advance_micros(&self, micros: i64) {
        self.0.fetch_add(micros, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

/// What an identifier is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// A bundle's `pending_id`.
    Bundle,
    /// A turn's id.
    Turn,
    /// A webhook endpoint's id (HOOK-1).
    Webhook,
}

/// Where clarion takes new identifiers (`pending_id`, turn ids).
pub trait IdSource: Send + Sync + 'static {
    /// A new, unique id.
    fn new_id(&self, kind: IdKind) -> String;
}

/// UUIDv7 identifiers: unique across processes and roughly time-ordered,
/// which keeps primary-key inserts local in the index.
#[derive(Debug, Default, Clone, Copy)]
pub struct UuidV7Ids;

impl IdSource for UuidV7Ids {
    fn new_id(&self, _kind: IdKind) -> String {
        uuid::Uuid::now_v7().to_string()
    }
}

/// `pending-000001`, `turn-000001`, `webhook-000001`, …: deterministic, for tests and snapshots.
#[derive(Debug, Default)]
pub struct SequentialIds {
    bundles: AtomicU64,
    turns: AtomicU64,
    webhooks: AtomicU64,
}

impl IdSource for SequentialIds {
    fn new_id(&self, kind: IdKind) -> String {
        let (prefix, counter) = match kind {
            IdKind::Bundle => ("pending", &self.bundles),
            IdKind::Turn => ("turn", &self.turns),
            IdKind::Webhook => ("webhook", &self.webhooks),
        };
        format!("{prefix}-{:06}", counter.fetch_add(1, Ordering::SeqCst) + 1)
    }
}
