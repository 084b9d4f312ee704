//! Data connections: their lifecycle (create, list, unlink, delete) and
//! every query on `connection`, always scoped to the calling tenant through
//! the owning company; the engine's writes (a completed sync, a revoked
//! authorization) go through here too.
//!
//! - [`authorization`]: token migration (`PUT .../authorization`), with
//!   verification at the platform.
//! - [`credentials`]: the sealed authorization in `connection_credential`,
//!   its refresh lease, and key rotation.

pub mod authorization;
pub mod credentials;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, TransactionTrait,
};
use uuid::Uuid;

use entity::{connection, connection_credential};

pub use authorization::authorize;
pub use credentials::open_credential;
pub use entity::connection::ConnectionStatus;

use crate::companies;
use crate::error::{Error, FieldError, Remedy};
use crate::paging::PageRequest;
use crate::platforms::{self, Platform};
use crate::store;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::webhooks::{self, Event, EventType};

/// A connection with its non-secret authorization facts.
#[derive(Debug, Clone)]
pub struct ConnectionView {
    /// The row.
    pub connection: connection::Model,
    /// Its credential's facts, once authorized (never the sealed tokens' plaintext).
    pub credential: Option<CredentialFacts>,
}

/// What may be shown about a stored authorization.
#[derive(Debug, Clone)]
pub struct CredentialFacts {
    /// The platform's organization identifier.
    pub organization_id: String,
    /// When the access token expires, if it does.
    pub access_token_expires_at: Option<DateTime<Utc>>,
    /// When the authorization was last replaced.
    pub updated: DateTime<Utc>,
}

impl From<connection_credential::Model> for CredentialFacts {
    fn from(row: connection_credential::Model) -> Self {
        Self {
            organization_id: row.organization_id,
            access_token_expires_at: row.access_token_expires_at,
            updated: row.updated,
        }
    }
}

pub(super) fn not_found(connection_id: Uuid) -> Error {
    Error::not_found(format!(
        "No connection with id {connection_id} in this company."
    ))
}

pub(super) fn platform_of(row: &connection::Model) -> Result<&'static Platform, Error> {
    platforms::find(&row.platform_key).ok_or_else(|| {
        Error::internal(anyhow::anyhow!(
            "stored platform key {:?} is not in the catalogue",
            row.platform_key
        ))
    })
}

/// A connection event: its company, id, platform and status.
pub(crate) fn event(
    event_type: EventType,
    tenant: Tenant,
    connection: &connection::Model,
) -> Event {
    let data = serde_json::json!({
        "companyId": connection.company_id,
        "connectionId": connection.id,
        "platformKey": connection.platform_key,
        "status": connection.status.to_value(),
    });
    Event::new(event_type, tenant.client_id, data)
}

/// Creates a `PendingAuth` connection to `platform_key` for the tenant's
/// company, announcing `connection.created`.
pub async fn create(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    platform_key: &str,
) -> Result<ConnectionView, Error> {
    companies::find(db, tenant, company_id).await?;
    if platforms::find(platform_key).is_none() {
        return Err(Error::Invalid(vec![
            FieldError::new(
                "platformKey",
                format!("`{platform_key}` is not a known platform"),
            )
            .with_remedy(Remedy::ListPlatforms),
        ]));
    }
    let txn = db.begin().await?;
    let connection = insert(&txn, tenant, company_id, platform_key).await?;
    txn.commit().await?;
    Ok(ConnectionView {
        connection,
        credential: None,
    })
}

/// Creates a `PendingAuth` connection to `platform_key` for a company
/// already checked to be the tenant's, inside the caller's transaction,
/// announcing `connection.created` with it.
pub async fn insert(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    platform_key: &str,
) -> Result<connection::Model, Error> {
    let connection = connection::ActiveModel {
        id: Set(Uuid::now_v7()),
        company_id: Set(company_id),
        platform_key: Set(platform_key.to_owned()),
        status: Set(ConnectionStatus::PendingAuth),
        created: Set(Timestamp::now()),
        last_sync: Set(None),
    }
    .insert(db)
    .await?;
    webhooks::record(db, event(EventType::ConnectionCreated, tenant, &connection)).await?;
    Ok(connection)
}

/// Whether the company has a `Linked` connection (one a sync reads from).
pub async fn has_linked(db: &impl ConnectionTrait, company_id: Uuid) -> Result<bool, Error> {
    let linked = connection::Entity::find()
        .filter(connection::Column::CompanyId.eq(company_id))
        .filter(connection::Column::Status.eq(ConnectionStatus::Linked))
        .count(db)
        .await?;
    Ok(linked > 0)
}

/// The tenant company's connections to `platform_key`, oldest first.
pub async fn of_platform(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    platform_key: &str,
) -> Result<Vec<connection::Model>, Error> {
    Ok(connection::Entity::find()
        .filter(connection::Column::CompanyId.eq(company_id))
        .filter(connection::Column::PlatformKey.eq(platform_key))
        .order_by_asc(connection::Column::Created)
        .order_by_asc(connection::Column::Id)
        .all(db)
        .await?)
}

pub(super) async fn find_row(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<connection::Model, Error> {
    companies::find(db, tenant, company_id).await?;
    connection_of_company(db, company_id, connection_id).await
}

/// The connection of a company already checked to be the tenant's.
pub(super) async fn connection_of_company(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<connection::Model, Error> {
    connection::Entity::find_by_id(connection_id)
        .filter(connection::Column::CompanyId.eq(company_id))
        .one(db)
        .await?
        .ok_or_else(|| not_found(connection_id))
}

pub(super) async fn view_of(
    db: &impl ConnectionTrait,
    connection: connection::Model,
) -> Result<ConnectionView, Error> {
    let credential = connection_credential::Entity::find_by_id(connection.id)
        .one(db)
        .await?
        .map(CredentialFacts::from);
    Ok(ConnectionView {
        connection,
        credential,
    })
}

/// The tenant's connection `connection_id` of company `company_id`.
pub async fn find(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<ConnectionView, Error> {
    let row = find_row(db, tenant, company_id, connection_id).await?;
    view_of(db, row).await
}

/// One page of a company's connections, oldest first (ties by id), and the total.
pub async fn list(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    page: PageRequest,
) -> Result<(Vec<ConnectionView>, u64), Error> {
    companies::find(db, tenant, company_id).await?;
    let of_company =
        connection::Entity::find().filter(connection::Column::CompanyId.eq(company_id));
    let total = of_company.clone().count(db).await?;
    let rows = of_company
        .order_by_asc(connection::Column::Created)
        .order_by_asc(connection::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
    let mut credentials = connection_credential::Entity::find()
        .filter(connection_credential::Column::ConnectionId.is_in(ids))
        .all(db)
        .await?;
    let views = rows
        .into_iter()
        .map(|connection| {
            let credential = credentials
                .iter()
                .position(|credential| credential.connection_id == connection.id)
                .map(|index| CredentialFacts::from(credentials.swap_remove(index)));
            ConnectionView {
                connection,
                credential,
            }
        })
        .collect();
    Ok((views, total))
}

/// Unlinks a `Linked` connection; any other status is a conflict.
///
/// One conditional UPDATE decides, so a concurrent unlink or delete cannot
/// slip between a check and the write.
pub async fn unlink(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<ConnectionView, Error> {
    companies::find(db, tenant, company_id).await?;
    let updated = connection::Entity::update_many()
        .col_expr(
            connection::Column::Status,
            Expr::value(ConnectionStatus::Unlinked),
        )
        .filter(connection::Column::Id.eq(connection_id))
        .filter(connection::Column::CompanyId.eq(company_id))
        .filter(connection::Column::Status.eq(ConnectionStatus::Linked))
        .exec(db)
        .await?;
    let row = connection_of_company(db, company_id, connection_id).await?;
    if updated.rows_affected == 0 {
        return Err(Error::conflict(format!(
            "Only a Linked connection can be unlinked; this one is {}.",
            row.status.to_value()
        )));
    }
    view_of(db, row).await
}

/// Deletes a connection, announcing `connection.deleted`; the database
/// cascades to its stored tokens and operations, and its synced data goes
/// in the same transaction.
pub async fn delete(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<(), Error> {
    let connection = find_row(db, tenant, company_id, connection_id).await?;
    // One transaction: the record tables have no foreign key to cascade
    // from, so their rows go with the connection or not at all; and the
    // event goes with them.
    let txn = db.begin().await?;
    let deleted = connection::Entity::delete_many()
        .filter(connection::Column::Id.eq(connection_id))
        .filter(connection::Column::CompanyId.eq(company_id))
        .exec(&txn)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(not_found(connection_id));
    }
    store::delete_synced_data(&txn, &[connection_id]).await?;
    webhooks::record(
        &txn,
        event(EventType::ConnectionDeleted, tenant, &connection),
    )
    .await?;
    txn.commit().await?;
    Ok(())
}

/// Records that a sync of the connection completed at `at` (inside the
/// completing transaction).
pub async fn record_sync(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    at: DateTime<Utc>,
) -> Result<(), sea_orm::DbErr> {
    connection::Entity::update_many()
        .col_expr(connection::Column::LastSync, at.into())
        .filter(connection::Column::Id.eq(connection_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Marks the connection `Deauthorized`: the platform rejected its tokens.
pub async fn deauthorize(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
) -> Result<(), sea_orm::DbErr> {
    connection::Entity::update_many()
        .col_expr(
            connection::Column::Status,
            Expr::value(ConnectionStatus::Deauthorized),
        )
        .filter(connection::Column::Id.eq(connection_id))
        .exec(db)
        .await?;
    Ok(())
}

/// The connection `connection_id`, whoever's it is (the engine's view).
pub async fn for_sync(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
) -> Result<Option<connection::Model>, sea_orm::DbErr> {
    connection::Entity::find_by_id(connection_id).one(db).await
}
