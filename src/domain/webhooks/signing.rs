//! HOOK-3, Standard Webhooks: what a delivery's body is, and how it is
//! signed — HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`
//! keyed with the secret's decoded bytes, standard base64, `v1,` before
//! it, one signature per signing secret separated by a space.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::domain::events::Logged;
use crate::domain::webhooks::endpoint::SECRET_PREFIX;
use crate::store::Timestamp;

/// HOOK-3: the compact body of an event's delivery: `{"type",
/// "timestamp", "data": {"position", "pending_id", "task_id",
/// "workspace_id", "kind", "event"}}`, `event` its EVT-2 `data`; and,
/// for an endpoint that takes them, `links` after `event` (LINK-4).
pub(crate) fn event_body(event: &Logged, links: Option<Value>) -> String {
    let mut body = serde_json::json!({
        "type": event.event_type,
        "timestamp": event.at,
        "data": {
            "position": event.position.to_string(),
            "pending_id": event.pending_id,
            "task_id": event.task_id,
            "workspace_id": event.workspace_id,
            "kind": event.kind,
            "event": event.data_value(),
        },
    });
    // The map keeps its keys' order (`preserve_order`): `links` is last.
    if let (Some(links), Some(data)) = (links, body["data"].as_object_mut()) {
        data.insert("links".to_owned(), links);
    }
    body.to_string()
}

/// HOOK-3: `webhook test`'s body: a `webhook.test` event with empty data.
pub(crate) fn test_body(now: Timestamp) -> String {
    serde_json::json!({"type": "webhook.test", "timestamp": now, "data": {}}).to_string()
}

/// HOOK-3: an event's `webhook-id`, the same for every attempt of it.
pub(crate) fn event_id(event: &Logged) -> String {
    format!("evt_{}", event.position)
}

/// HOOK-3: the key bytes of a secret (what follows `whsec_`, decoded).
fn secret_key(secret: &str) -> Option<Vec<u8>> {
    STANDARD
        .decode(secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret))
        .ok()
}

/// One `v1,<base64>` signature with `secret`; `None` for a secret that
/// does not decode (clarion writes none such).
fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key = secret_key(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// HOOK-3: the `webhook-signature` header: one signature per secret, the
/// newest first (`v1,<new> v1,<old>` during a rotation's overlap).
pub(crate) fn signature_header(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .filter_map(|secret| signature(secret, id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HOOK-3: the Standard Webhooks specification's published test
    /// vector, reproduced exactly: the signed content, the key decoding
    /// and the base64 alphabet are the reference's.
    #[test]
    fn hook_3_the_specifications_test_vector() {
        let header = signature_header(
            &["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(header, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    /// HOOK-3: during an overlap both secrets sign, the newest first, one
    /// space between.
    #[test]
    fn hook_3_two_secrets_sign_newest_first() {
        let old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let new = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
        let both = signature_header(
            &[new, old],
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        let (first, second) = both.split_once(' ').unwrap();
        assert!(first.starts_with("v1,") && first != second);
        assert_eq!(second, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }
}
