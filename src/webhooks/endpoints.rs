//! Webhook endpoints: validation, every query on `webhook_endpoint` (scoped
//! to the calling tenant), their signing secrets (sealed by the vault,
//! shown once), secret rotation, and disabling.

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, TransactionTrait,
};
use uuid::Uuid;

use entity::webhook_endpoint;

use super::EventType;
use super::addresses;
use super::deliveries;
use super::signature;
use crate::crypto::{Keyring, Sealed};
use crate::error::{Error, FieldError};
use crate::paging::PageRequest;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::vault::{self, Owner, Rotation};

/// Longest accepted URL, in bytes.
pub const MAX_URL_BYTES: usize = 2048;
/// Longest accepted description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// The most endpoints one client may have.
pub const MAX_ENDPOINTS_PER_CLIENT: u64 = 50;
/// How long a replaced secret keeps signing alongside its successor.
pub const PREVIOUS_SECRET_SIGNS_FOR: TimeDelta = TimeDelta::hours(24);

/// An endpoint's fields as a client sets them, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointFields {
    url: String,
    description: Option<String>,
    event_types: Vec<EventType>,
    enabled: bool,
}

/// Changes to an endpoint; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct EndpointChanges {
    /// A new URL.
    pub url: Option<String>,
    /// A new description; `Some(None)` clears it.
    pub description: Option<Option<String>>,
    /// A new list of event types (empty: all).
    pub event_types: Option<Vec<String>>,
    /// Enable or disable it.
    pub enabled: Option<bool>,
}

/// Checks an endpoint's URL; `allow_private` is this installation's
/// `TRIBUTARY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES`: without it an address
/// literal that is not public, or `localhost`, is refused here rather than
/// failing every delivery later.
fn check_url(url: &str, allow_private: bool, errors: &mut Vec<FieldError>) -> String {
    let url = url.trim();
    let problem = if url.len() > MAX_URL_BYTES {
        Some(format!("must be at most {MAX_URL_BYTES} bytes"))
    } else {
        match url::Url::parse(url) {
            Err(error) => Some(format!("is not an absolute URL ({error})")),
            Ok(parsed) if !matches!(parsed.scheme(), "http" | "https") => {
                Some("must be an http or https URL".to_owned())
            }
            Ok(parsed) if parsed.host_str().is_none_or(str::is_empty) => {
                Some("must name a host".to_owned())
            }
            Ok(parsed) if !parsed.username().is_empty() || parsed.password().is_some() => Some(
                "must not carry credentials (they would be shown to every key of yours); \
                 verify the `webhook-signature` header instead"
                    .to_owned(),
            ),
            Ok(parsed) if parsed.fragment().is_some() => {
                Some("must not have a fragment (`#...`)".to_owned())
            }
            Ok(parsed) if !allow_private => addresses::refused_host(&parsed).map(|host| {
                format!(
                    "names a host webhooks may not reach: {}",
                    addresses::refusal(&host)
                )
            }),
            Ok(_) => None,
        }
    };
    if let Some(problem) = problem {
        errors.push(FieldError::new("url", problem));
    }
    url.to_owned()
}

fn check_description(description: Option<String>, errors: &mut Vec<FieldError>) -> Option<String> {
    if let Some(text) = &description {
        let chars = text.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            errors.push(FieldError::new(
                "description",
                format!("must be at most {MAX_DESCRIPTION_CHARS} characters (got {chars})"),
            ));
        }
    }
    description
}

fn check_event_types(names: &[String], errors: &mut Vec<FieldError>) -> Vec<EventType> {
    let mut types = Vec::new();
    for (index, name) in names.iter().enumerate() {
        match EventType::named(name) {
            Some(event) if !types.contains(&event) => types.push(event),
            Some(_) => {}
            None => {
                let known: Vec<&str> = EventType::ALL.into_iter().map(EventType::name).collect();
                errors.push(FieldError::new(
                    format!("eventTypes[{index}]"),
                    format!(
                        "`{name}` is not an event type; they are {}",
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    types
}

impl EndpointFields {
    /// Checks every field; every problem is reported. `allow_private`:
    /// whether webhooks may reach private addresses here.
    pub fn parse(
        url: &str,
        description: Option<String>,
        event_types: &[String],
        enabled: bool,
        allow_private: bool,
    ) -> Result<Self, Error> {
        let mut errors = Vec::new();
        let url = check_url(url, allow_private, &mut errors);
        let description = check_description(description, &mut errors);
        let event_types = check_event_types(event_types, &mut errors);
        if errors.is_empty() {
            Ok(Self {
                url,
                description,
                event_types,
                enabled,
            })
        } else {
            Err(Error::Invalid(errors))
        }
    }
}

fn not_found(endpoint_id: Uuid) -> Error {
    Error::not_found(format!("No webhook endpoint with id {endpoint_id}."))
}

/// The tenant's endpoint, read inside `txn` after a write to its row: the
/// transaction then holds the row (and, on SQLite, the write lock, which a
/// transaction that reads first cannot wait for) before anything is read.
async fn find_for_change(
    txn: &impl ConnectionTrait,
    tenant: Tenant,
    endpoint_id: Uuid,
) -> Result<webhook_endpoint::Model, Error> {
    let touched = webhook_endpoint::Entity::update_many()
        .col_expr(
            webhook_endpoint::Column::Updated,
            Expr::value(Timestamp::now()),
        )
        .filter(webhook_endpoint::Column::Id.eq(endpoint_id))
        .filter(webhook_endpoint::Column::ClientId.eq(tenant.client_id))
        .exec(txn)
        .await?;
    if touched.rows_affected == 0 {
        return Err(not_found(endpoint_id));
    }
    find(txn, tenant, endpoint_id).await
}

/// The event types an endpoint receives; empty: all.
pub fn event_types(endpoint: &webhook_endpoint::Model) -> Vec<EventType> {
    serde_json::from_str::<Vec<String>>(&endpoint.event_types)
        .unwrap_or_default()
        .iter()
        .filter_map(|name| EventType::named(name))
        .collect()
}

/// Whether `endpoint` wants events of `event_type`.
pub fn receives(endpoint: &webhook_endpoint::Model, event_type: EventType) -> bool {
    let wanted = event_types(endpoint);
    wanted.is_empty() || wanted.contains(&event_type)
}

fn stored_event_types(types: &[EventType]) -> String {
    serde_json::Value::from(types.iter().map(|event| event.name()).collect::<Vec<_>>()).to_string()
}

/// A new endpoint, and its secret written out: the only time it is shown.
pub async fn create(
    db: &DatabaseConnection,
    keyring: &Keyring,
    tenant: Tenant,
    fields: EndpointFields,
) -> Result<(webhook_endpoint::Model, String), Error> {
    let id = Uuid::now_v7();
    let secret = signature::generate_secret();
    let sealed =
        vault::seal(keyring, Owner::WebhookEndpoint(id), &secret).map_err(Error::internal)?;
    let now = Timestamp::now();
    let txn = db.begin().await?;
    // The count and the insert under the client row's lock: concurrent
    // creations cannot pass the limit together.
    crate::api_keys::lock_client(&txn, tenant).await?;
    let existing = webhook_endpoint::Entity::find()
        .filter(webhook_endpoint::Column::ClientId.eq(tenant.client_id))
        .count(&txn)
        .await?;
    if existing >= MAX_ENDPOINTS_PER_CLIENT {
        return Err(Error::conflict(format!(
            "You already have {MAX_ENDPOINTS_PER_CLIENT} webhook endpoints, the most a client may have. \
             Delete one first, or subscribe an existing one to more event types."
        )));
    }
    let endpoint = webhook_endpoint::ActiveModel {
        id: Set(id),
        client_id: Set(tenant.client_id),
        url: Set(fields.url),
        description: Set(fields.description),
        event_types: Set(stored_event_types(&fields.event_types)),
        enabled: Set(fields.enabled),
        disabled_reason: Set(None),
        failing_since: Set(None),
        created: Set(now),
        updated: Set(now),
        secret_key_id: Set(sealed.key_id),
        secret_nonce: Set(sealed.nonce),
        secret_ciphertext: Set(sealed.ciphertext),
        previous_key_id: Set(None),
        previous_nonce: Set(None),
        previous_ciphertext: Set(None),
        previous_expires: Set(None),
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok((endpoint, signature::written(&secret)))
}

/// The tenant's endpoint `endpoint_id`, or 404 (also for other tenants' ids).
pub async fn find(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    endpoint_id: Uuid,
) -> Result<webhook_endpoint::Model, Error> {
    webhook_endpoint::Entity::find_by_id(endpoint_id)
        .filter(webhook_endpoint::Column::ClientId.eq(tenant.client_id))
        .one(db)
        .await?
        .ok_or_else(|| not_found(endpoint_id))
}

/// One page of the tenant's endpoints, oldest first (ties by id), and the total.
pub async fn list(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    page: PageRequest,
) -> Result<(Vec<webhook_endpoint::Model>, u64), Error> {
    let of_tenant = webhook_endpoint::Entity::find()
        .filter(webhook_endpoint::Column::ClientId.eq(tenant.client_id));
    let total = of_tenant.clone().count(db).await?;
    let rows = of_tenant
        .order_by_asc(webhook_endpoint::Column::Created)
        .order_by_asc(webhook_endpoint::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((rows, total))
}

/// The client's enabled endpoints (the outbox's fan-out).
pub async fn enabled_of(
    db: &impl ConnectionTrait,
    client_id: Uuid,
) -> Result<Vec<webhook_endpoint::Model>, sea_orm::DbErr> {
    webhook_endpoint::Entity::find()
        .filter(webhook_endpoint::Column::ClientId.eq(client_id))
        .filter(webhook_endpoint::Column::Enabled.eq(true))
        .all(db)
        .await
}

/// 409 unless `endpoint` is enabled.
pub fn ensure_enabled(endpoint: &webhook_endpoint::Model) -> Result<(), Error> {
    if endpoint.enabled {
        return Ok(());
    }
    Err(Error::conflict(format!(
        "Webhook endpoint {} is disabled{}. Enable it first (PATCH it with `\"enabled\": true`).",
        endpoint.id,
        endpoint
            .disabled_reason
            .as_deref()
            .map(|reason| format!(": {reason}"))
            .unwrap_or_default()
    )))
}

/// Applies `changes` to the tenant's endpoint. Enabling clears why it was
/// disabled; disabling ends its pending deliveries `Failed`.
/// `allow_private` as for [`EndpointFields::parse`].
pub async fn update(
    db: &DatabaseConnection,
    tenant: Tenant,
    endpoint_id: Uuid,
    changes: EndpointChanges,
    allow_private: bool,
) -> Result<webhook_endpoint::Model, Error> {
    let mut errors = Vec::new();
    let url = changes
        .url
        .map(|url| check_url(&url, allow_private, &mut errors));
    let description = changes
        .description
        .map(|description| check_description(description, &mut errors));
    let event_types = changes
        .event_types
        .map(|names| check_event_types(&names, &mut errors));
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    let txn = db.begin().await?;
    let current = find_for_change(&txn, tenant, endpoint_id).await?;
    let was_enabled = current.enabled;
    let mut endpoint = current.into_active_model();
    if let Some(url) = url {
        endpoint.url = Set(url);
    }
    if let Some(description) = description {
        endpoint.description = Set(description);
    }
    if let Some(types) = event_types {
        endpoint.event_types = Set(stored_event_types(&types));
    }
    match changes.enabled {
        Some(true) if !was_enabled => {
            endpoint.enabled = Set(true);
            endpoint.disabled_reason = Set(None);
            endpoint.failing_since = Set(None);
        }
        Some(false) if was_enabled => {
            endpoint.enabled = Set(false);
            endpoint.disabled_reason = Set(Some("disabled by you".to_owned()));
            deliveries::abandon_pending(&txn, endpoint_id).await?;
        }
        _ => {}
    }
    endpoint.updated = Set(Timestamp::now());
    let updated = endpoint.update(&txn).await?;
    txn.commit().await?;
    Ok(updated)
}

/// Deletes the tenant's endpoint, with its deliveries.
pub async fn delete(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    endpoint_id: Uuid,
) -> Result<(), Error> {
    let deleted = webhook_endpoint::Entity::delete_many()
        .filter(webhook_endpoint::Column::Id.eq(endpoint_id))
        .filter(webhook_endpoint::Column::ClientId.eq(tenant.client_id))
        .exec(db)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(not_found(endpoint_id));
    }
    Ok(())
}

/// Gives the tenant's endpoint a new secret, returned written out (the
/// only time it is shown); the one it replaces keeps signing alongside for
/// [`PREVIOUS_SECRET_SIGNS_FOR`] (a secret replaced before that is dropped).
pub async fn rotate_secret(
    db: &DatabaseConnection,
    keyring: &Keyring,
    tenant: Tenant,
    endpoint_id: Uuid,
    now: DateTime<Utc>,
) -> Result<(webhook_endpoint::Model, String), Error> {
    let secret = signature::generate_secret();
    let sealed = vault::seal(keyring, Owner::WebhookEndpoint(endpoint_id), &secret)
        .map_err(Error::internal)?;
    let txn = db.begin().await?;
    let current = find_for_change(&txn, tenant, endpoint_id).await?;
    let mut endpoint = current.clone().into_active_model();
    endpoint.previous_key_id = Set(Some(current.secret_key_id));
    endpoint.previous_nonce = Set(Some(current.secret_nonce));
    endpoint.previous_ciphertext = Set(Some(current.secret_ciphertext));
    endpoint.previous_expires = Set(Some(now + PREVIOUS_SECRET_SIGNS_FOR));
    endpoint.secret_key_id = Set(sealed.key_id);
    endpoint.secret_nonce = Set(sealed.nonce);
    endpoint.secret_ciphertext = Set(sealed.ciphertext);
    endpoint.updated = Set(Timestamp::now());
    let updated = endpoint.update(&txn).await?;
    txn.commit().await?;
    Ok((updated, signature::written(&secret)))
}

fn current_sealed(endpoint: &webhook_endpoint::Model) -> Sealed {
    Sealed {
        key_id: endpoint.secret_key_id.clone(),
        nonce: endpoint.secret_nonce.clone(),
        ciphertext: endpoint.secret_ciphertext.clone(),
    }
}

fn previous_sealed(endpoint: &webhook_endpoint::Model) -> Option<Sealed> {
    match (
        &endpoint.previous_key_id,
        &endpoint.previous_nonce,
        &endpoint.previous_ciphertext,
    ) {
        (Some(key_id), Some(nonce), Some(ciphertext)) => Some(Sealed {
            key_id: key_id.clone(),
            nonce: nonce.clone(),
            ciphertext: ciphertext.clone(),
        }),
        _ => None,
    }
}

/// The secrets that sign for `endpoint` at `now`: the current one, and the
/// one it replaced while that still signs.
pub fn signing_secrets(
    keyring: &Keyring,
    endpoint: &webhook_endpoint::Model,
    now: DateTime<Utc>,
) -> anyhow::Result<Vec<Vec<u8>>> {
    let owner = Owner::WebhookEndpoint(endpoint.id);
    let mut secrets = vec![vault::open(keyring, owner, &current_sealed(endpoint))?];
    if endpoint.previous_expires.is_some_and(|until| now < until)
        && let Some(previous) = previous_sealed(endpoint)
    {
        secrets.push(vault::open(keyring, owner, &previous)?);
    }
    Ok(secrets)
}

/// Disables endpoint `endpoint_id` for `reason` (tributary's decision: 410
/// Gone, or failures for too long) and ends its pending deliveries.
pub async fn disable(
    db: &impl ConnectionTrait,
    endpoint_id: Uuid,
    reason: &str,
) -> Result<(), sea_orm::DbErr> {
    webhook_endpoint::Entity::update_many()
        .col_expr(webhook_endpoint::Column::Enabled, Expr::value(false))
        .col_expr(
            webhook_endpoint::Column::DisabledReason,
            Expr::value(reason.to_owned()),
        )
        .col_expr(
            webhook_endpoint::Column::Updated,
            Expr::value(Timestamp::now()),
        )
        .filter(webhook_endpoint::Column::Id.eq(endpoint_id))
        .exec(db)
        .await?;
    deliveries::abandon_pending(db, endpoint_id).await
}

/// Records an attempt's outcome on the endpoint: a success clears
/// `failing_since`; a failure sets it if unset. Returns since when the
/// endpoint has been failing (`None` after a success).
pub async fn record_outcome(
    db: &impl ConnectionTrait,
    endpoint_id: Uuid,
    succeeded: bool,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, sea_orm::DbErr> {
    if succeeded {
        webhook_endpoint::Entity::update_many()
            .col_expr(
                webhook_endpoint::Column::FailingSince,
                Option::<DateTime<Utc>>::None.into(),
            )
            .filter(webhook_endpoint::Column::Id.eq(endpoint_id))
            .exec(db)
            .await?;
        return Ok(None);
    }
    webhook_endpoint::Entity::update_many()
        .col_expr(webhook_endpoint::Column::FailingSince, Expr::value(now))
        .filter(webhook_endpoint::Column::Id.eq(endpoint_id))
        .filter(webhook_endpoint::Column::FailingSince.is_null())
        .exec(db)
        .await?;
    Ok(webhook_endpoint::Entity::find_by_id(endpoint_id)
        .one(db)
        .await?
        .and_then(|endpoint| endpoint.failing_since))
}

/// The key ids the stored secrets are sealed with.
pub async fn key_ids(db: &impl ConnectionTrait) -> Result<Vec<String>, sea_orm::DbErr> {
    let rows: Vec<(String, Option<String>)> = webhook_endpoint::Entity::find()
        .select_only()
        .column(webhook_endpoint::Column::SecretKeyId)
        .column(webhook_endpoint::Column::PreviousKeyId)
        .into_tuple()
        .all(db)
        .await?;
    let mut ids: Vec<String> = rows
        .into_iter()
        .flat_map(|(current, previous)| std::iter::once(current).chain(previous))
        .collect();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// Re-seals every endpoint's secrets under the keyring's current key.
pub async fn rotate_sealing(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
) -> anyhow::Result<Rotation> {
    let mut rotation = Rotation::default();
    for row in webhook_endpoint::Entity::find().all(db).await? {
        let owner = Owner::WebhookEndpoint(row.id);
        let current = vault::reseal(keyring, owner, &current_sealed(&row))?;
        let previous = match previous_sealed(&row) {
            Some(sealed) => vault::reseal(keyring, owner, &sealed)?,
            None => None,
        };
        if current.is_none() && previous.is_none() {
            rotation.current += 1;
            continue;
        }
        let mut update = webhook_endpoint::Entity::update_many()
            .filter(webhook_endpoint::Column::Id.eq(row.id))
            .filter(webhook_endpoint::Column::SecretNonce.eq(row.secret_nonce.clone()));
        if let Some(sealed) = current {
            update = update
                .col_expr(
                    webhook_endpoint::Column::SecretKeyId,
                    Expr::value(sealed.key_id),
                )
                .col_expr(
                    webhook_endpoint::Column::SecretNonce,
                    Expr::value(sealed.nonce),
                )
                .col_expr(
                    webhook_endpoint::Column::SecretCiphertext,
                    Expr::value(sealed.ciphertext),
                );
        }
        if let Some(sealed) = previous {
            update = update
                .col_expr(
                    webhook_endpoint::Column::PreviousKeyId,
                    Expr::value(sealed.key_id),
                )
                .col_expr(
                    webhook_endpoint::Column::PreviousNonce,
                    Expr::value(sealed.nonce),
                )
                .col_expr(
                    webhook_endpoint::Column::PreviousCiphertext,
                    Expr::value(sealed.ciphertext),
                );
        }
        if update.exec(db).await?.rows_affected == 1 {
            rotation.rotated += 1;
        } else {
            rotation.remaining += 1;
        }
    }
    Ok(rotation)
}
