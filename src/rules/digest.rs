//! AUD-5: the digests of the attempt ledger, and the one SHA-256 hex form
//! clarion stores (token digests too). A digest is the lowercase hex
//! SHA-256 of a compact JSON text: UTF-8, no whitespace, non-ASCII
//! characters unescaped — exactly what `serde_json::to_string` writes.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// AUD-5: the digest of `value` as compact JSON, keys in its declared order.
pub(crate) fn of_json(value: &impl Serialize) -> String {
    match serde_json::to_vec(value) {
        Ok(text) => sha256_hex(&text),
        // Only a map with non-string keys fails; no submission has one.
        Err(_) => sha256_hex(b""),
    }
}

/// AUD-5: what a cancel hashes.
pub(crate) const CANCEL: &str = r#"{"cancel":true}"#;
/// AUD-5: what an `expire` settlement hashes.
pub(crate) const EXPIRE: &str = r#"{"expire":true}"#;
