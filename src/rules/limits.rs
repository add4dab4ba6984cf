//! Every limit clarion enforces, in one place, with the checks and
//! messages derived from them: page sizes (LIST-4, DEL-3), wait times
//! (WAIT-1, WIRE-5), text caps in runes (ASK-2, VAL-5), counts (ASK-1,
//! ASK-2) and request sizes (WIRE-5).

use std::ops::RangeInclusive;
use std::time::Duration;

use crate::error::ValidationError;

/// A page of `list_pending` or `pending_deliveries` when no limit is given
/// (or one below 1).
pub const DEFAULT_PAGE_SIZE: i64 = 50;
/// The largest page; larger limits are clamped to it.
pub const MAX_PAGE_SIZE: i64 = 200;

/// How long a door lets one wait last (WAIT-1, HTTP-5): the timeout when
/// the caller names none, and the longest it serves; a longer timeout is
/// cut to `cap`. Each door names its own; the timeout itself is read by
/// one parser (a non-negative JSON integer of milliseconds, WAIT-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitBounds {
    /// The timeout when the caller names none.
    pub default: Duration,
    /// The longest wait served.
    pub cap: Duration,
}

impl WaitBounds {
    /// The wait this door serves for the timeout the caller asked for
    /// (`None`: not given).
    pub fn serve(&self, asked: Option<Duration>) -> Duration {
        asked.unwrap_or(self.default).min(self.cap)
    }

    /// True when the caller asked for more than the door serves: the
    /// door's cap, not the caller's own timeout, ends the wait (WAIT-1b).
    pub fn cuts(&self, asked: Option<Duration>) -> bool {
        asked.is_some_and(|asked| asked > self.cap)
    }
}

/// WIRE-5 (the JSON call, the C ABI, the command line) and the Rust API:
/// 30 s when none is given, at most ten minutes (WAIT-1).
pub const WIRE_WAIT: WaitBounds = WaitBounds {
    default: Duration::from_millis(30_000),
    cap: Duration::from_millis(600_000),
};

/// The HTTP door (HTTP-5): 25 s when none is given, cut at 55 s, so a
/// long poll ends before common 60 s proxy timeouts.
pub const HTTP_WAIT: WaitBounds = WaitBounds {
    default: Duration::from_millis(25_000),
    cap: Duration::from_millis(55_000),
};

/// The asking tools of `clarion mcp --ask-in` (MCPA-4): 45 s when none is
/// given, cut at 50 s, so a call ends before common 60 s client timeouts.
/// Every such wait ends as cut short (WAIT-1b): it never detaches.
pub const MCP_WAIT: WaitBounds = WaitBounds {
    default: Duration::from_millis(45_000),
    cap: Duration::from_millis(50_000),
};

/// `reject_reason` and each `custom_text` (VAL-5).
pub const MAX_FREE_TEXT_RUNES: usize = 2000;
/// A question's prompt (ASK-2).
pub const MAX_PROMPT_RUNES: usize = 4000;
/// A bundle's context (ASK-2).
pub const MAX_CONTEXT_RUNES: usize = 4000;
/// A question's title (ASK-2).
pub const MAX_TITLE_RUNES: usize = 120;
/// LIFE-12: a workspace's name and a task's title, in runes.
pub const MAX_NAME_RUNES: usize = 200;
/// An option's label (ASK-2).
pub const MAX_LABEL_RUNES: usize = 200;
/// An option's description (ASK-2).
pub const MAX_DESCRIPTION_RUNES: usize = 1000;

/// Questions in one bundle (ASK-1).
pub const QUESTIONS_PER_BUNDLE: RangeInclusive<usize> = 1..=4;
/// Options of one question (ASK-2).
pub const OPTIONS_PER_QUESTION: RangeInclusive<usize> = 2..=6;

/// The longest WIRE-5 request text; larger requests are a 400 before parsing.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// The deepest JSON nesting accepted: serde_json refuses anything deeper
/// with an error (no recursion past it), which becomes a 400.
pub const MAX_NESTING: usize = 128;

/// Task ids in one `pending_actions` request (REL-6): the membership check
/// stays small, and SQLite's bound-variable limit is never reached.
pub const MAX_TASK_IDS: usize = 1000;

/// EXP-4: how many due bundles one sweep settles at most, by default and
/// at the most.
pub const DEFAULT_SWEEP: i64 = 100;
/// See [`DEFAULT_SWEEP`].
pub const MAX_SWEEP: i64 = 1000;

/// EXP-4: a sweep's `limit`, defaulted and clamped to 1..=1,000.
pub fn sweep_limit(limit: Option<i64>) -> i64 {
    limit.unwrap_or(DEFAULT_SWEEP).clamp(1, MAX_SWEEP)
}

/// HOOK-2: how long one delivery may take before it counts as failed.
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// HOOK-2: the delay before the first retry of a failed delivery; each
/// later delay is twice the previous one, up to [`WEBHOOK_MAX_DELAY`].
pub const WEBHOOK_FIRST_RETRY: Duration = Duration::from_secs(5);
/// HOOK-2: the longest delay between two tries of one event.
pub const WEBHOOK_MAX_DELAY: Duration = Duration::from_secs(3600);
/// HOOK-2: once an event has been failing this long, its endpoint is
/// marked `failing` and is not tried again until `enable`.
pub const WEBHOOK_GIVE_UP: Duration = Duration::from_secs(3 * 24 * 3600);
/// HOOK-3: how long both secrets sign after a rotation, by default.
pub const WEBHOOK_OVERLAP: Duration = Duration::from_secs(24 * 3600);
/// PROD-4: how many endpoints one webhook worker delivers to at once,
/// each on a thread of its own; past it, endpoints with events wait their
/// turn, the least recently tried first.
pub const WEBHOOK_ENDPOINTS_AT_ONCE: usize = 64;
/// HOOK-1: the longest endpoint URL accepted, in characters.
pub const MAX_WEBHOOK_URL: usize = 2000;

/// HOOK-1's URL check (`domain::webhooks::check_url`) as one JSON Schema
/// pattern: `http://` or `https://` in any case, an optional user part
/// ending in `@`, a host that starts the authority, and no whitespace or
/// control character anywhere.
pub fn webhook_url_pattern() -> String {
    let refused = format!("{WHITESPACE_CLASS}\\u0000-\\u001F\\u007F-\\u009F");
    format!("^[Hh][Tt][Tt][Pp][Ss]?://([^{refused}/?#]*@)?[^{refused}/?#@:][^{refused}]*$")
}

/// HOOK-2: the delay before try `failures + 1` of one event, after
/// `failures` failed tries: the first retry delay, doubling, at most an
/// hour.
pub fn webhook_retry_delay(first_retry: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(32);
    first_retry
        .checked_mul(1u32 << doublings.min(31))
        .unwrap_or(WEBHOOK_MAX_DELAY)
        .min(WEBHOOK_MAX_DELAY)
}

/// EXP-1: how far after the ask a deadline may fall, in milliseconds
/// (1 s to 30 days); `expires_in_ms` and `expires_at` alike.
pub const DEADLINE_MS: RangeInclusive<u64> = 1_000..=2_592_000_000;

/// EXP-1: a deadline `micros` after the ask is within [`DEADLINE_MS`].
pub fn check_deadline_after(field: &str, micros: i128) -> Result<(), ValidationError> {
    let (low, high) = (*DEADLINE_MS.start(), *DEADLINE_MS.end());
    if micros < i128::from(low) * 1000 || micros > i128::from(high) * 1000 {
        return Err(ValidationError::new(
            field,
            format!("must fall 1 s to 30 days ({low} to {high} ms) after the ask"),
        ));
    }
    Ok(())
}

/// REL-6: a string clarion stores or binds holds no NUL character.
/// PostgreSQL refuses one in text (SQLite would store it), so it is a
/// validation error naming the field on both backends, never a `500`.
pub fn check_text(field: impl Into<String>, value: &str) -> Result<(), ValidationError> {
    if value.contains('\0') {
        return Err(ValidationError::new(
            field,
            "must not contain a NUL character",
        ));
    }
    Ok(())
}

/// REL-6 as a JSON Schema pattern (an ECMAScript regular expression): no NUL character. Every
/// string argument's published schema carries it.
pub const NO_NUL_PATTERN: &str = "^[^\\u0000]*$";

/// Whitespace as Rust's `str::trim` counts it (Unicode `White_Space`), as
/// a regular-expression class body.
const WHITESPACE_CLASS: &str =
    "\\t\\n\\u000B\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";

/// ASK-2's "non-empty after trimming" with REL-6 as one JSON Schema pattern:
/// at least one character that trimming keeps, and no NUL anywhere.
pub fn not_blank_pattern() -> String {
    format!("^[^\\u0000]*[^\\u0000{WHITESPACE_CLASS}][^\\u0000]*$")
}

/// ASK-2: `value` is not empty once trimmed.
pub fn check_not_blank(field: impl Into<String>, value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        return Err(ValidationError::new(field, "must not be empty"));
    }
    Ok(())
}

/// A required id: not empty (WIRE-5), and text clarion can store (REL-6).
pub fn check_id(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.is_empty() {
        return Err(ValidationError::new(field, "must not be empty"));
    }
    check_text(field, value)
}

/// PPL-1: a person's name in the directory, in runes.
pub const MAX_PERSON_NAME_RUNES: usize = 120;
/// PPL-1: an email address, in bytes (RFC 5321's path limit).
pub const MAX_EMAIL_BYTES: usize = 254;
/// PPL-2: the most members a workspace may have.
pub const MAX_MEMBERS: usize = 1000;
/// PPL-2: how many members a workspace may have.
pub const MEMBERS: RangeInclusive<usize> = 0..=MAX_MEMBERS;
/// PPL-1a: the most ids one `people` call names.
pub const MAX_PEOPLE_IDS: usize = 100;
/// PPL-1a: how many ids one `people` call names.
pub const PEOPLE_IDS: RangeInclusive<usize> = 1..=MAX_PEOPLE_IDS;

/// PPL-1: an email address as the directory keeps it: at most 254 bytes,
/// exactly one `@`, and no whitespace, control character or angle bracket
/// (nothing that could break a mail header or a page). Nothing more is
/// guessed: the host's address book is the source of truth.
pub fn check_email(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.len() > MAX_EMAIL_BYTES {
        return Err(ValidationError::new(
            field,
            format!(
                "must be at most {MAX_EMAIL_BYTES} bytes, got {}",
                value.len()
            ),
        ));
    }
    if value.matches('@').count() != 1 {
        return Err(ValidationError::new(field, "must contain exactly one @"));
    }
    if let Some(bad) = value
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>'))
    {
        return Err(ValidationError::new(
            field,
            format!("must not contain {bad:?} (whitespace, control characters and angle brackets are refused)"),
        ));
    }
    Ok(())
}

/// LIST-4, DEL-3: default when absent or below 1, clamped at the maximum.
pub fn page_size(limit: Option<i64>) -> i64 {
    match limit {
        Some(n) if n >= 1 => n.min(MAX_PAGE_SIZE),
        _ => DEFAULT_PAGE_SIZE,
    }
}

/// EVT-2: an events page when no limit is given or it is below 1.
pub const DEFAULT_EVENT_PAGE: i64 = 100;
/// EVT-2: the most events one call examines; larger limits are clamped.
pub const MAX_EVENT_PAGE: i64 = 1000;

/// EVT-2: how many events one `events_after` call examines.
pub fn event_page_size(limit: Option<i64>) -> i64 {
    match limit {
        Some(n) if n >= 1 => n.min(MAX_EVENT_PAGE),
        _ => DEFAULT_EVENT_PAGE,
    }
}

/// WAIT-1: the timeout actually waited, capped at ten minutes whichever
/// door asked.
pub fn wait_time(timeout: Duration) -> Duration {
    timeout.min(WIRE_WAIT.cap)
}

/// Runes (Unicode scalar values) of the raw value: not bytes, not UTF-16
/// units, and counted before any trimming (ASK-2, VAL-5).
pub fn runes(text: &str) -> usize {
    text.chars().count()
}

/// `field` is stored text: no NUL (REL-6), and at most `max` runes.
pub fn check_runes(
    field: impl Into<String>,
    value: &str,
    max: usize,
) -> Result<(), ValidationError> {
    let field = field.into();
    check_text(field.clone(), value)?;
    let count = runes(value);
    if count > max {
        return Err(ValidationError::new(
            field,
            format!("must be at most {max} characters, got {count}"),
        ));
    }
    Ok(())
}

/// `field` holds a number of `items` within `range`.
pub fn check_count(
    field: impl Into<String>,
    count: usize,
    range: &RangeInclusive<usize>,
    items: &str,
) -> Result<(), ValidationError> {
    if range.contains(&count) {
        return Ok(());
    }
    Err(ValidationError::new(
        field,
        format!(
            "expected {} to {} {items}, got {count}",
            range.start(),
            range.end()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The class the published pattern calls whitespace is exactly what
    /// `str::trim` removes, so the schema and ASK-2's check agree.
    #[test]
    fn whitespace_class_is_what_trim_removes() {
        let class = WHITESPACE_CLASS
            .replace("\\t", "\u{9}")
            .replace("\\n", "\u{a}");
        let mut listed = Vec::new();
        let mut rest = class.as_str();
        while !rest.is_empty() {
            let (c, after) = if let Some(hex) = rest.strip_prefix("\\u") {
                let code = u32::from_str_radix(&hex[..4], 16).unwrap();
                (char::from_u32(code).unwrap(), &hex[4..])
            } else if let Some(after) = rest.strip_prefix("\\f") {
                ('\u{c}', after)
            } else if let Some(after) = rest.strip_prefix("\\r") {
                ('\r', after)
            } else {
                let c = rest.chars().next().unwrap();
                (c, &rest[c.len_utf8()..])
            };
            if let Some(after) = after.strip_prefix('-') {
                let hex = after.strip_prefix("\\u").unwrap();
                let end = char::from_u32(u32::from_str_radix(&hex[..4], 16).unwrap()).unwrap();
                listed.extend(c..=end);
                rest = &hex[4..];
            } else {
                listed.push(c);
                rest = after;
            }
        }
        let trimmed: Vec<char> = (0..=char::MAX as u32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .collect();
        listed.sort();
        assert_eq!(listed, trimmed);
    }
}
