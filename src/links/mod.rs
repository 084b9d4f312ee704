//! Connecting end customers through tributary: link sessions (a company's
//! one-time way to a linked connection), the tenant's link settings, and
//! the hosted flow they drive (the platform's authorize step as the tenant's
//! OAuth client, the callback, the organization, the connection).
//!
//! - [`settings`]: `link_settings` (the name customers see, redirect URLs,
//!   framing origins, what a first link fetches).
//! - [`sessions`]: `link_session` as the API creates and shows it.
//! - [`flow`]: the hosted steps, `link_attempt` (`state`, PKCE, the browser
//!   binding) and the end of a session (a linked connection, or a failure).
//!
//! Secrets a session handles are kept as digests (the link token, the
//! `state`, the browser's cookie) or sealed in the vault (the PKCE
//! verifier, a grant awaiting its organization), never in plain text.

pub mod flow;
pub mod sessions;
pub mod settings;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// How long a link session lasts.
pub const SESSION_LIFETIME: chrono::Duration = chrono::Duration::minutes(30);

/// How long one trip to a platform's authorize step may take (its `state`
/// is refused after that, and with its session in any case).
pub const ATTEMPT_LIFETIME: chrono::Duration = chrono::Duration::minutes(10);

/// A new random secret: 256 bits, base64url (a link token, a `state`, a
/// browser's cookie, a PKCE verifier).
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The SHA-256 digest (hex) under which a secret is stored and looked up.
pub fn digest(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_long_random_and_stored_as_digests() {
        let (one, two) = (random_secret(), random_secret());
        assert_ne!(one, two);
        assert_eq!(one.len(), 43, "256 bits in base64url");
        assert_eq!(digest(&one).len(), 64);
        assert_ne!(digest(&one), one);
    }
}
