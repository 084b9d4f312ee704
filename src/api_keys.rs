//! API keys: creation, the bootstrap key, and lookup by credential.
//!
//! A key is 32 random bytes, base64url-encoded behind a `trb_` prefix. Only
//! its SHA-256 digest is stored. Keys are high-entropy, so a fast digest is
//! the right tool (slow password hashes guard guessable secrets); the lookup
//! by digest reveals nothing about the key through timing, and the final
//! comparison is constant-time anyway.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, Set, TransactionTrait,
};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use entity::{api_key, client};

use crate::types::Timestamp;

/// The client the bootstrap key and the first-run key belong to.
pub const DEFAULT_CLIENT: &str = "default";

/// A freshly created key: the only time the key itself exists outside the caller.
pub struct NewApiKey {
    /// The key to hand to the user.
    pub key: String,
    /// The client it authenticates as.
    pub client_name: String,
}

/// Longest accepted client name, in characters.
pub const MAX_CLIENT_NAME_CHARS: usize = 200;

/// Why a key or client name is refused.
#[derive(Debug, thiserror::Error)]
pub enum InvalidInput {
    /// The key cannot be sent as a Basic credential.
    #[error(
        "an API key must be 1 to 512 printable characters without `:` or spaces \
         (it is sent as a Basic credential)"
    )]
    Key,
    /// The client name is empty or too long.
    #[error("a client name must be 1 to 200 characters, not only spaces")]
    ClientName,
}

/// Checks a key chosen by an operator (the bootstrap key).
pub fn validate_key(key: &str) -> Result<(), InvalidInput> {
    let acceptable =
        (1..=512).contains(&key.len()) && key.chars().all(|c| c.is_ascii_graphic() && c != ':');
    if acceptable {
        Ok(())
    } else {
        Err(InvalidInput::Key)
    }
}

/// Checks a client name and returns it trimmed.
pub fn validate_client_name(name: &str) -> Result<&str, InvalidInput> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_CLIENT_NAME_CHARS {
        return Err(InvalidInput::ClientName);
    }
    Ok(name)
}

/// Hex SHA-256 of a key, as stored.
fn digest(key: &str) -> String {
    let hash = Sha256::digest(key.as_bytes());
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn generate_key() -> String {
    let mut bytes = [0_u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("trb_{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Finds the client named `name`, creating it if needed.
async fn client_named(
    db: &impl ConnectionTrait,
    name: &str,
) -> Result<client::Model, sea_orm::DbErr> {
    if let Some(existing) = client::Entity::find()
        .filter(client::Column::Name.eq(name))
        .one(db)
        .await?
    {
        return Ok(existing);
    }
    client::ActiveModel {
        id: Set(Uuid::now_v7()),
        name: Set(name.to_owned()),
        created: Set(Timestamp::now()),
    }
    .insert(db)
    .await
}

async fn store_key(
    db: &impl ConnectionTrait,
    client_id: Uuid,
    key: &str,
) -> Result<(), sea_orm::DbErr> {
    api_key::ActiveModel {
        id: Set(Uuid::now_v7()),
        client_id: Set(client_id),
        key_hash: Set(digest(key)),
        created: Set(Timestamp::now()),
    }
    .insert(db)
    .await
    .map(drop)
}

/// Creates a new key for the client `client_name` (created if new).
pub async fn create(
    db: &DatabaseConnection,
    client_name: &str,
) -> Result<NewApiKey, sea_orm::DbErr> {
    let txn = db.begin().await?;
    let client = client_named(&txn, client_name).await?;
    let key = generate_key();
    store_key(&txn, client.id, &key).await?;
    txn.commit().await?;
    Ok(NewApiKey {
        key,
        client_name: client.name,
    })
}

/// Makes sure `key` authenticates as the default client; a no-op when it
/// already does. A key that belongs to another client is refused.
pub async fn ensure_bootstrap(db: &DatabaseConnection, key: &str) -> anyhow::Result<()> {
    validate_key(key)?;
    let txn = db.begin().await?;
    let client = client_named(&txn, DEFAULT_CLIENT).await?;
    let existing = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(digest(key)))
        .one(&txn)
        .await?;
    match existing {
        Some(row) if row.client_id == client.id => {}
        Some(_) => anyhow::bail!(
            "the bootstrap API key already belongs to another client than `{DEFAULT_CLIENT}`"
        ),
        None => store_key(&txn, client.id, key).await?,
    }
    txn.commit().await?;
    Ok(())
}

/// Creates a key for the default client if the database has no key at all.
pub async fn create_first_if_none(
    db: &DatabaseConnection,
) -> Result<Option<NewApiKey>, sea_orm::DbErr> {
    if api_key::Entity::find().count(db).await? > 0 {
        return Ok(None);
    }
    create(db, DEFAULT_CLIENT).await.map(Some)
}

/// The client a key authenticates as, if it is a known key.
pub async fn client_for_key(
    db: &impl ConnectionTrait,
    key: &str,
) -> Result<Option<Uuid>, sea_orm::DbErr> {
    let presented = digest(key);
    let stored = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(presented.as_str()))
        .one(db)
        .await?;
    Ok(stored
        .filter(|row| bool::from(row.key_hash.as_bytes().ct_eq(presented.as_bytes())))
        .map(|row| row.client_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_distinct_and_prefixed() {
        let (first, second) = (generate_key(), generate_key());
        assert_ne!(first, second);
        assert!(
            first.starts_with("trb_") && first.len() == 4 + 43,
            "{first}"
        );
    }

    #[test]
    fn operator_keys_and_client_names_are_checked() {
        assert!(validate_key("bootstrap-key_1.x").is_ok());
        for bad in ["", "a:b", "has space", "tab\there", &"k".repeat(513)] {
            assert!(validate_key(bad).is_err(), "{bad:?}");
        }
        assert_eq!(validate_client_name("  acme ").ok(), Some("acme"));
        assert!(validate_client_name("   ").is_err());
        assert!(validate_client_name(&"n".repeat(201)).is_err());
    }

    #[test]
    fn the_digest_is_lower_case_hex_sha256() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
