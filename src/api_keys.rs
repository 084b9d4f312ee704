//! API keys: creation (on the command line and over the API), listing,
//! deletion, the bootstrap key, and lookup by credential.
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
use sea_orm::sea_query::Expr;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, TransactionTrait,
};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use entity::{api_key, client};

use crate::error::{Error, FieldError};
use crate::paging::PageRequest;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// The client the bootstrap key and the first-run key belong to.
pub const DEFAULT_CLIENT: &str = "default";

/// A freshly created key: the only time the key itself exists outside the caller.
pub struct NewApiKey {
    /// The key to hand to the user.
    pub key: String,
    /// The client it authenticates as.
    pub client_name: String,
    /// The stored row (its id, name and creation time; never the key).
    pub row: api_key::Model,
}

/// The most keys one client may hold at once.
pub const MAX_KEYS_PER_CLIENT: u64 = 10;
/// Longest accepted key name, in characters, after trimming.
pub const MAX_KEY_NAME_CHARS: usize = 200;
/// The name of a key made with `tributary api-key create` without `--name`.
pub const COMMAND_LINE_KEY_NAME: &str = "created on the command line";

/// The name of a key `POST /apiKeys` made without one.
pub const API_KEY_NAME: &str = "created through the API";
/// The name of the key made at the first start of an empty database.
pub const FIRST_KEY_NAME: &str = "first key, created at the first start";
/// The name of the key an operator supplies as the bootstrap key.
pub const BOOTSTRAP_KEY_NAME: &str = "bootstrap key (TRIBUTARY_BOOTSTRAP_API_KEY)";

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
    name: &str,
) -> Result<api_key::Model, sea_orm::DbErr> {
    api_key::ActiveModel {
        id: Set(Uuid::now_v7()),
        client_id: Set(client_id),
        key_hash: Set(digest(key)),
        created: Set(Timestamp::now()),
        name: Set(name.to_owned()),
        last_used: Set(None),
    }
    .insert(db)
    .await
}

/// Checks a key's name and returns it trimmed.
pub fn validate_key_name(name: &str) -> Result<&str, Error> {
    let trimmed = name.trim();
    let chars = trimmed.chars().count();
    if chars == 0 || chars > MAX_KEY_NAME_CHARS {
        return Err(Error::Invalid(vec![FieldError::new(
            "name",
            format!(
                "must be 1 to {MAX_KEY_NAME_CHARS} characters with at least one that is not a space (got {chars})"
            ),
        )]));
    }
    Ok(trimmed)
}

/// Creates a new key named `name` for the client `client_name` (created if
/// new), on an operator's command: the per-client limit does not apply.
pub async fn create(
    db: &DatabaseConnection,
    client_name: &str,
    name: &str,
) -> Result<NewApiKey, sea_orm::DbErr> {
    let txn = db.begin().await?;
    let client = client_named(&txn, client_name).await?;
    let key = generate_key();
    let row = store_key(&txn, client.id, &key, name).await?;
    txn.commit().await?;
    Ok(NewApiKey {
        key,
        client_name: client.name,
        row,
    })
}

/// The client named `name`, as a tenant, if it exists (the command line
/// acts for a client by name).
pub async fn tenant_named(db: &impl ConnectionTrait, name: &str) -> Result<Option<Tenant>, Error> {
    Ok(client::Entity::find()
        .filter(client::Column::Name.eq(name))
        .one(db)
        .await?
        .map(|client| Tenant {
            client_id: client.id,
        }))
}

/// Takes the write lock on the tenant's client row, first thing in a
/// transaction: concurrent creations and deletions of its keys then happen
/// one after another, so neither the limit nor the last key can be raced
/// past (and on SQLite the transaction holds the write lock before it reads).
pub(crate) async fn lock_client(db: &impl ConnectionTrait, tenant: Tenant) -> Result<(), Error> {
    client::Entity::update_many()
        .col_expr(client::Column::Name, Expr::col(client::Column::Name))
        .filter(client::Column::Id.eq(tenant.client_id))
        .exec(db)
        .await?;
    Ok(())
}

async fn key_count(db: &impl ConnectionTrait, tenant: Tenant) -> Result<u64, Error> {
    Ok(api_key::Entity::find()
        .filter(api_key::Column::ClientId.eq(tenant.client_id))
        .count(db)
        .await?)
}

/// Creates a key named `name` for the tenant; 409 once it holds
/// [`MAX_KEYS_PER_CLIENT`].
pub async fn create_for(
    db: &DatabaseConnection,
    tenant: Tenant,
    name: &str,
) -> Result<NewApiKey, Error> {
    let name = validate_key_name(name)?;
    let txn = db.begin().await?;
    lock_client(&txn, tenant).await?;
    if key_count(&txn, tenant).await? >= MAX_KEYS_PER_CLIENT {
        return Err(Error::conflict(format!(
            "You already have {MAX_KEYS_PER_CLIENT} API keys, the most a client may hold. \
             Delete one you no longer use first."
        )));
    }
    let key = generate_key();
    let row = store_key(&txn, tenant.client_id, &key, name).await?;
    let client = client::Entity::find_by_id(tenant.client_id)
        .one(&txn)
        .await?
        .ok_or_else(|| Error::internal(anyhow::anyhow!("the tenant's client row is missing")))?;
    txn.commit().await?;
    Ok(NewApiKey {
        key,
        client_name: client.name,
        row,
    })
}

fn key_not_found(api_key_id: Uuid) -> Error {
    Error::not_found(format!("No API key with id {api_key_id}."))
}

/// One page of the tenant's keys, oldest first (ties by id), and the total.
pub async fn list(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    page: PageRequest,
) -> Result<(Vec<api_key::Model>, u64), Error> {
    let of_tenant = api_key::Entity::find().filter(api_key::Column::ClientId.eq(tenant.client_id));
    let total = of_tenant.clone().count(db).await?;
    let rows = of_tenant
        .order_by_asc(api_key::Column::Created)
        .order_by_asc(api_key::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((rows, total))
}

/// The tenant's key `api_key_id`, or 404 (also for other tenants' ids).
pub async fn find(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    api_key_id: Uuid,
) -> Result<api_key::Model, Error> {
    api_key::Entity::find_by_id(api_key_id)
        .filter(api_key::Column::ClientId.eq(tenant.client_id))
        .one(db)
        .await?
        .ok_or_else(|| key_not_found(api_key_id))
}

/// Deletes the tenant's key `api_key_id` and forgets it in `cache` at once;
/// other processes' caches forget it within [`KEY_CACHE_TTL`]. The client's
/// last key cannot be deleted (409): nothing could authenticate as it after.
pub async fn delete(
    db: &DatabaseConnection,
    cache: &KeyCache,
    tenant: Tenant,
    api_key_id: Uuid,
) -> Result<(), Error> {
    let txn = db.begin().await?;
    lock_client(&txn, tenant).await?;
    let row = find(&txn, tenant, api_key_id).await?;
    if key_count(&txn, tenant).await? <= 1 {
        return Err(Error::conflict(
            "This is your last API key: deleting it would leave nothing that can call the API. \
             Create another key first.",
        ));
    }
    api_key::Entity::delete_by_id(row.id).exec(&txn).await?;
    txn.commit().await?;
    cache.forget(&row.key_hash);
    Ok(())
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
        None => drop(store_key(&txn, client.id, key, BOOTSTRAP_KEY_NAME).await?),
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
    create(db, DEFAULT_CLIENT, FIRST_KEY_NAME).await.map(Some)
}

/// The client a key authenticates as, if it is a known key.
pub async fn client_for_key(
    db: &impl ConnectionTrait,
    key: &str,
) -> Result<Option<Uuid>, sea_orm::DbErr> {
    Ok(key_for_digest(db, &digest(key))
        .await?
        .map(|verified| verified.client_id))
}

/// A key found by its digest: its id and its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct VerifiedKey {
    key_id: Uuid,
    client_id: Uuid,
}

async fn key_for_digest(
    db: &impl ConnectionTrait,
    presented: &str,
) -> Result<Option<VerifiedKey>, sea_orm::DbErr> {
    let stored = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(presented))
        .one(db)
        .await?;
    Ok(stored
        .filter(|row| bool::from(row.key_hash.as_bytes().ct_eq(presented.as_bytes())))
        .map(|row| VerifiedKey {
            key_id: row.id,
            client_id: row.client_id,
        }))
}

/// Records that key `key_id` authenticated a request now. Called when the
/// database verifies a key (a cache miss), so `last_used` is exact to within
/// [`KEY_CACHE_TTL`] and costs one write per key and process a minute at most.
async fn mark_used(db: &impl ConnectionTrait, key_id: Uuid) -> Result<(), sea_orm::DbErr> {
    api_key::Entity::update_many()
        .col_expr(api_key::Column::LastUsed, Expr::value(Timestamp::now()))
        .filter(api_key::Column::Id.eq(key_id))
        .exec(db)
        .await
        .map(drop)
}

/// How long a verified key is trusted without asking the database again.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(60);
/// The most keys remembered; reaching it forgets them all.
pub const KEY_CACHE_CAPACITY: usize = 10_000;

/// Keys recently found valid, by digest, with their client, so a client's
/// requests do not each pay a database round trip before their own work.
///
/// A key deleted through this process is forgotten at once; one deleted
/// through another process (several instances on one database) keeps
/// working here until its entry lapses, after [`KEY_CACHE_TTL`]. Unknown
/// keys are never remembered (a stream of bad keys cannot fill the cache),
/// and the cache holds at most [`KEY_CACHE_CAPACITY`] keys.
#[derive(Debug, Default)]
pub struct KeyCache {
    entries: Mutex<HashMap<String, (Uuid, Instant)>>,
}

impl KeyCache {
    /// The client owning `key`, from the cache or the database (which then
    /// also records the key's use).
    pub async fn client_for_key(
        &self,
        db: &impl ConnectionTrait,
        key: &str,
    ) -> Result<Option<Uuid>, sea_orm::DbErr> {
        let presented = digest(key);
        if let Some(client) = self.remembered(&presented, Instant::now()) {
            return Ok(Some(client));
        }
        let Some(found) = key_for_digest(db, &presented).await? else {
            return Ok(None);
        };
        if let Err(error) = mark_used(db, found.key_id).await {
            // The request goes on: when a key was last used is worth less
            // than the call it authenticates.
            tracing::warn!(key_id = %found.key_id, %error, "could not record an API key's use");
        }
        self.remember(presented, found.client_id, Instant::now());
        Ok(Some(found.client_id))
    }

    /// Forgets the key whose stored digest is `key_hash` (it was deleted).
    pub fn forget(&self, key_hash: &str) {
        self.entries().remove(key_hash);
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
