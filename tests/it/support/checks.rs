//! Assertions and pinned bytes several suites check.

use std::path::Path;

use clarion::{Error, ValidationError};

/// The 409 body of a bundle that is no longer active (WIRE-1).
pub const NO_LONGER_ACTIVE_BODY: &str = r#"{"error":"clarification request is no longer active"}"#;

/// Asserts a validation error that names exactly `field`, and returns it.
pub fn assert_invalid<T: std::fmt::Debug>(
    result: clarion::Result<T>,
    field: &str,
) -> ValidationError {
    match result {
        Err(Error::Validation(error)) => {
            assert_eq!(error.field, field, "wrong field named: {error}");
            error
        }
        other => panic!("expected a validation error naming {field}, got {other:?}"),
    }
}

/// insta settings for the reviewed snapshots under the repository's
/// `snapshots/`, named without a module prefix.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// Replaces each internal error's reference (`ref <16 hex digits>`, REL-6)
/// with `ref <ref>`, so snapshots pin the body's shape while each run logs
/// under a fresh reference. A reference of any other shape stays as it is
/// and fails the snapshot.
pub fn redact_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("(ref ") {
        let (before, after) = rest.split_at(at + 5);
        out.push_str(before);
        let digits = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        if digits == 16 && after[16..].starts_with(')') {
            out.push_str("<ref>");
            rest = &after[16..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}
