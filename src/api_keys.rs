//! API keys: creation, the bootstrap key, and lookup by credential.
//!
//! A key is 32 random bytes, base64url-encoded behind a `trb_` prefix. Only
//! its SHA-256 digest is stored. Keys are high-entropy, so a fast digest is
//! the right tool (slow password hashes guard guessable secrets); the lookup
//! by digest reveals nothing about the key through timing, and the final
//! comparison is constant-time anyway.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, Set, TransactionTrait,
};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use entity::{api_key, client};

use crate::timestamp::Timestamp;

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

/// Finds the client named `name`, creating it if needed. The insert comes
/// first, so a transaction that starts here takes SQLite's write lock before
/// it reads (a transaction that reads first cannot wait for the lock, and
/// fails while a sync engine writes).
async fn client_named(
    db: &impl ConnectionTrait,
    name: &str,
) -> Result<client::Model, sea_orm::DbErr> {
    let client = client::ActiveModel {
        id: Set(Uuid::now_v7()),
        name: Set(name.to_owned()),
        created: Set(Timestamp::now()),
    };
    client::Entity::insert(client)
        .on_conflict(
            OnConflict::column(client::Column::Name)
                .do_nothing()
                .to_owned(),
        )
        .try_insert()
        .exec(db)
        .await?;
    client::Entity::find()
        .filter(client::Column::Name.eq(name))
        .one(db)
        .await?
        .ok_or_else(|| sea_orm::DbErr::RecordNotFound(format!("client {name}")))
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
    client_for_digest(db, &digest(key)).await
}

async fn client_for_digest(
    db: &impl ConnectionTrait,
    presented: &str,
) -> Result<Option<Uuid>, sea_orm::DbErr> {
    let stored = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(presented))
        .one(db)
        .await?;
    Ok(stored
        .filter(|row| bool::from(row.key_hash.as_bytes().ct_eq(presented.as_bytes())))
        .map(|row| row.client_id))
}

/// How long a verified key is trusted without asking the database again.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(60);
/// The most keys remembered; reaching it forgets them all.
pub const KEY_CACHE_CAPACITY: usize = 10_000;

/// Keys recently found valid, by digest, with their client, so a client's
/// requests do not each pay a database round trip before their own work.
///
/// Keys cannot be revoked or moved to another client today, so an entry
/// cannot go stale; entries lapse after [`KEY_CACHE_TTL`] all the same, so
/// a revocation added later takes effect within it. Unknown keys are never
/// remembered (a stream of bad keys cannot fill the cache), and the cache
/// holds at most [`KEY_CACHE_CAPACITY`] keys.
#[derive(Debug, Default)]
pub struct KeyCache {
    entries: Mutex<HashMap<String, (Uuid, Instant)>>,
}

impl KeyCache {
    /// The client owning `key`, from the cache or the database.
    pub async fn client_for_key(
        &self,
        db: &impl ConnectionTrait,
        key: &str,
    ) -> Result<Option<Uuid>, sea_orm::DbErr> {
        let presented = digest(key);
        if let Some(client) = self.remembered(&presented, Instant::now()) {
            return Ok(Some(client));
        }
        let found = client_for_digest(db, &presented).await?;
        if let Some(client) = found {
            self.remember(presented, client, Instant::now());
        }
        Ok(found)
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Uuid, Instant)>> {
        // A panic while holding the lock leaves a map that is still valid.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn remembered(&self, digest: &str, now: Instant) -> Option<Uuid> {
        let mut entries = self.entries();
        match entries.get(digest) {
            Some((client, verified)) if now.duration_since(*verified) < KEY_CACHE_TTL => {
                Some(*client)
            }
            Some(_) => {
                entries.remove(digest);
                None
            }
            None => None,
        }
    }

    fn remember(&self, digest: String, client: Uuid, now: Instant) {
        let mut entries = self.entries();
        if entries.len() >= KEY_CACHE_CAPACITY {
            entries.clear();
        }
        entries.insert(digest, (client, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_cache_forgets_after_its_ttl_and_at_capacity() {
        let cache = KeyCache::default();
        let client = Uuid::from_u128(1);
        let start = Instant::now();
        cache.remember(digest("k"), client, start);
        assert_eq!(
            cache.remembered(&digest("k"), start + Duration::from_secs(59)),
            Some(client)
        );
        assert_eq!(cache.remembered(&digest("k"), start + KEY_CACHE_TTL), None);
        assert_eq!(
            cache.remembered(&digest("k"), start),
            None,
            "the lapsed entry is gone"
        );
        for index in 0..KEY_CACHE_CAPACITY {
            cache.remember(digest(&index.to_string()), client, start);
        }
        assert_eq!(cache.entries().len(), KEY_CACHE_CAPACITY);
        cache.remember(digest("one more"), client, start);
        assert_eq!(cache.entries().len(), 1);
        assert_eq!(cache.remembered(&digest("one more"), start), Some(client));
    }

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
