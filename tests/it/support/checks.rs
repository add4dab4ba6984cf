//! Assertions and pinned bytes several suites check.

use std::path::Path;

use clarion::{envelope, Clarion, Error, Principal, ValidationError};

/// The 409 body of a bundle that is no longer active (WIRE-1).
pub const NO_LONGER_ACTIVE_BODY: &str = r#"{"error":"clarification request is no longer active"}"#;

/// REL-1 after a race for `pending_id` across entry points: exactly one
/// racer claimed it, and every racer's response (its WIRE-2 JSON text) is
/// the stored response byte for byte. `round` names the race in failures.
pub fn assert_one_winner_and_the_stored_response<'a>(
    db: &Clarion,
    pending_id: &str,
    results: impl Iterator<Item = (bool, &'a String)> + Clone,
    round: usize,
) {
    assert_eq!(
        results.clone().filter(|(claimed, _)| *claimed).count(),
        1,
        "round {round}"
    );
    let stored = db
        .get_bundle(&Principal::System, pending_id)
        .unwrap()
        .response
        .unwrap();
    let stored = envelope::response(&stored).to_string();
    for (_, response) in results {
        assert_eq!(response, &stored, "round {round}");
    }
}

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
