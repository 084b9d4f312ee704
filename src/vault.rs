//! The credential vault: every secret tributary stores (a connection's
//! authorization body, a tenant's OAuth client secret, a link flow's grant
//! and PKCE verifier) is sealed with the
//! keyring ([`crate::crypto`]) and bound to the row that owns it, so a
//! ciphertext copied to another row fails to open. Rotation re-seals each
//! secret under the current key, one at a time.

use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

use crate::crypto::{Keyring, Sealed};

/// Whose secret it is: the binding sealed into it.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'a> {
    /// A connection's stored authorization body.
    Connection(Uuid),
    /// A tenant's OAuth client secret for a platform.
    OAuthClient {
        /// The tenant.
        client_id: Uuid,
        /// The platform.
        platform_key: &'a str,
    },
    /// A webhook endpoint's signing secrets.
    WebhookEndpoint(Uuid),
    /// A managed migration row's authorization body, until it is stored on
    /// the row's connection.
    MigrationRow(Uuid),
    /// A link session's grant, while its end customer chooses an organization.
    LinkSession(Uuid),
    /// A link attempt's PKCE verifier and inputs, bound to its `state` digest.
    LinkAttempt(&'a str),
}

impl Owner<'_> {
    /// The associated data bound into the ciphertext.
    fn binding(&self) -> String {
        match self {
            Self::Connection(id) => format!("tributary/connection-credential/{id}"),
            Self::OAuthClient {
                client_id,
                platform_key,
            } => format!("tributary/oauth-client/{client_id}/{platform_key}"),
            Self::WebhookEndpoint(id) => format!("tributary/webhook-endpoint/{id}"),
            Self::MigrationRow(id) => format!("tributary/migration-row/{id}"),
            Self::LinkSession(id) => format!("tributary/link-session/{id}"),
            Self::LinkAttempt(state_digest) => format!("tributary/link-attempt/{state_digest}"),
        }
    }
}

impl std::fmt::Display for Owner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Connection(id) => write!(f, "connection {id}"),
            Self::OAuthClient { platform_key, .. } => write!(f, "OAuth client for {platform_key}"),
            Self::WebhookEndpoint(id) => write!(f, "webhook endpoint {id}"),
            Self::MigrationRow(id) => write!(f, "migration row {id}"),
            Self::LinkSession(id) => write!(f, "link session {id}"),
            Self::LinkAttempt(_) => write!(f, "link attempt"),
        }
    }
}

/// Seals `plaintext` for `owner` under the current key.
pub fn seal(keyring: &Keyring, owner: Owner<'_>, plaintext: &[u8]) -> anyhow::Result<Sealed> {
    keyring.seal(plaintext, &owner.binding())
}

/// Opens `owner`'s sealed secret.
pub fn open(keyring: &Keyring, owner: Owner<'_>, sealed: &Sealed) -> anyhow::Result<Vec<u8>> {
    keyring
        .open(sealed, &owner.binding())
        .map_err(|error| anyhow::anyhow!("{owner}: {error}"))
}

/// Seals `value`, as JSON, for `owner`.
pub fn seal_json(
    keyring: &Keyring,
    owner: Owner<'_>,
    value: &impl Serialize,
) -> anyhow::Result<Sealed> {
    seal(keyring, owner, &serde_json::to_vec(value)?)
}

/// Opens `owner`'s sealed JSON.
pub fn open_json<T: DeserializeOwned>(
    keyring: &Keyring,
    owner: Owner<'_>,
    sealed: &Sealed,
) -> anyhow::Result<T> {
    let plaintext = open(keyring, owner, sealed)?;
    serde_json::from_slice(&plaintext).map_err(|error| anyhow::anyhow!("{owner}: {error}"))
}

/// `sealed` re-sealed under the current key; `None` when it already is.
pub fn reseal(
    keyring: &Keyring,
    owner: Owner<'_>,
    sealed: &Sealed,
) -> anyhow::Result<Option<Sealed>> {
    if sealed.key_id == keyring.current_key_id() {
        return Ok(None);
    }
    let plaintext = open(keyring, owner, sealed)?;
    seal(keyring, owner, &plaintext).map(Some)
}

/// How a rotation of one kind of secret went.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    /// Secrets re-sealed under the current key.
    pub rotated: u64,
    /// Secrets already under the current key.
    pub current: u64,
    /// Secrets replaced while the rotation read them, still under an older
    /// key: run the rotation again.
    pub remaining: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_opens_only_for_its_owner_and_reseals_once() {
        let old = crate::crypto::generate_key_entry();
        let new = crate::crypto::generate_key_entry();
        let before = Keyring::parse(&old).expect("a key");
        let after = Keyring::parse(&format!("{new},{old}")).expect("two keys");
        let owner = Owner::Connection(Uuid::from_u128(1));
        let sealed =
            seal_json(&before, owner, &serde_json::json!({"accessToken": "t"})).expect("sealed");
        let other = Owner::Connection(Uuid::from_u128(2));
        assert!(open(&before, other, &sealed).is_err());
        let resealed = reseal(&after, owner, &sealed)
            .expect("resealed")
            .expect("under the new key");
        assert_eq!(resealed.key_id, after.current_key_id());
        assert!(reseal(&after, owner, &resealed).expect("checked").is_none());
        let opened: serde_json::Value = open_json(&after, owner, &resealed).expect("opens");
        assert_eq!(opened["accessToken"], "t");
    }
}
