//! Signing as the Standard Webhooks specification says: HMAC-SHA256, keyed
//! with the secret's bytes (the base64 after `whsec_`), over
//! `{webhook-id}.{webhook-timestamp}.{body}`, sent as `v1,<base64>`; one
//! such signature per secret that signs, separated by spaces.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// The prefix of a written secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// Random bytes in a new secret (the specification asks for 24 to 64).
pub const SECRET_BYTES: usize = 32;

/// A new secret's bytes.
pub fn generate_secret() -> Vec<u8> {
    let mut bytes = vec![0_u8; SECRET_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    bytes
}

/// A secret as shown to its owner: `whsec_` and the bytes in base64.
pub fn written(secret: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(secret))
}

/// One `v1,<base64>` signature of `body` sent as `id` at `timestamp`.
pub fn sign(secret: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The `webhook-signature` header: a signature per secret, space-separated.
pub fn header(secrets: &[Vec<u8>], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|secret| sign(secret, id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of the specification's reference libraries.
    #[test]
    fn signs_the_reference_vector() {
        let secret = STANDARD
            .decode("C2FVsBQIhrscChlQIMV+b5sSYspob7oD")
            .expect("base64");
        let body = br#"{"email":"test@example.com","username":"test_user"}"#;
        assert_eq!(
            sign(&secret, "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk", 1649367553, body),
            "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
        );
    }

    #[test]
    fn secrets_are_written_with_their_prefix() {
        let secret = generate_secret();
        assert_eq!(secret.len(), SECRET_BYTES);
        let shown = written(&secret);
        assert!(shown.starts_with("whsec_"));
        assert_eq!(STANDARD.decode(&shown[6..]).expect("base64"), secret);
        assert_ne!(generate_secret(), secret);
    }

    #[test]
    fn one_signature_per_secret() {
        let header = header(&[vec![1; 32], vec![2; 32]], "id", 1, b"{}");
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|part| part.starts_with("v1,")));
        assert_ne!(parts[0], parts[1]);
    }
}
