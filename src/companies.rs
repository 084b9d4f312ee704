//! Companies: validation of their fields and every query on the `company`
//! table, always scoped to the calling tenant.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};
use uuid::Uuid;

use entity::{company, connection};

use crate::error::{Error, FieldError};
use crate::paging::PageRequest;
use crate::store;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::webhooks::{self, Event, EventType};

/// Longest accepted company name, in characters, after trimming.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest accepted description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;

/// A company's editable fields, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompanyFields {
    name: String,
    description: Option<String>,
}

impl CompanyFields {
    /// Trims the name and checks both lengths; every problem is reported.
    pub fn parse(name: &str, description: Option<String>) -> Result<Self, Error> {
        let name = name.trim();
        let mut errors = Vec::new();
        let name_chars = name.chars().count();
        if name_chars == 0 {
            errors.push(FieldError::new(
                "name",
                "must not be empty or only whitespace",
            ));
        } else if name_chars > MAX_NAME_CHARS {
            errors.push(FieldError::new(
                "name",
                format!("must be at most {MAX_NAME_CHARS} characters (got {name_chars})"),
            ));
        }
        if let Some(description) = &description {
            let chars = description.chars().count();
            if chars > MAX_DESCRIPTION_CHARS {
                errors.push(FieldError::new(
                    "description",
                    format!("must be at most {MAX_DESCRIPTION_CHARS} characters (got {chars})"),
                ));
            }
        }
        if errors.is_empty() {
            Ok(Self {
                name: name.to_owned(),
                description,
            })
        } else {
            Err(Error::Invalid(errors))
        }
    }
}

fn not_found(company_id: Uuid) -> Error {
    Error::not_found(format!("No company with id {company_id}."))
}

/// Creates a company for `tenant`, announcing `company.created`.
pub async fn create(
    db: &DatabaseConnection,
    tenant: Tenant,
    fields: CompanyFields,
) -> Result<company::Model, Error> {
    let txn = db.begin().await?;
    let company = insert(&txn, tenant, fields).await?;
    txn.commit().await?;
    Ok(company)
}

/// Creates a company for `tenant` inside the caller's transaction,
/// announcing `company.created` with it.
pub async fn insert(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    fields: CompanyFields,
) -> Result<company::Model, Error> {
    let company = company::ActiveModel {
        id: Set(Uuid::now_v7()),
        client_id: Set(tenant.client_id),
        name: Set(fields.name),
        description: Set(fields.description),
        created: Set(Timestamp::now()),
        last_sync: Set(None),
    }
    .insert(db)
    .await?;
    webhooks::record(db, event(EventType::CompanyCreated, &company)).await?;
    Ok(company)
}

/// A company event: its id and name.
fn event(event_type: EventType, company: &company::Model) -> Event {
    let data = serde_json::json!({"companyId": company.id, "name": company.name});
    Event::new(event_type, company.client_id, data)
}

/// The tenant's company `company_id`, or 404 (also for other tenants' ids).
pub async fn find(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
) -> Result<company::Model, Error> {
    company::Entity::find_by_id(company_id)
        .filter(company::Column::ClientId.eq(tenant.client_id))
        .one(db)
        .await?
        .ok_or_else(|| not_found(company_id))
}

/// One page of the tenant's companies, oldest first (ties by id), and the total.
pub async fn list(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    page: PageRequest,
) -> Result<(Vec<company::Model>, u64), Error> {
    let of_tenant = company::Entity::find().filter(company::Column::ClientId.eq(tenant.client_id));
    let total = of_tenant.clone().count(db).await?;
    let rows = of_tenant
        .order_by_asc(company::Column::Created)
        .order_by_asc(company::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((rows, total))
}

/// Replaces the name and description of the tenant's company.
pub async fn replace(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    fields: CompanyFields,
) -> Result<company::Model, Error> {
    let mut company = find(db, tenant, company_id).await?.into_active_model();
    company.name = Set(fields.name);
    company.description = Set(fields.description);
    match company.update(db).await {
        Ok(updated) => Ok(updated),
        // Deleted between the read and the write.
        Err(sea_orm::DbErr::RecordNotUpdated) => Err(not_found(company_id)),
        Err(error) => Err(error.into()),
    }
}

/// The client owning company `company_id` (the engine's view), if it exists.
pub async fn owner(
    db: &impl ConnectionTrait,
    company_id: Uuid,
) -> Result<Option<Uuid>, sea_orm::DbErr> {
    Ok(company::Entity::find_by_id(company_id)
        .one(db)
        .await?
        .map(|company| company.client_id))
}

/// Records that a sync of the company completed at `at` (inside the
/// completing transaction).
pub async fn record_sync(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<(), sea_orm::DbErr> {
    company::Entity::update_many()
        .col_expr(company::Column::LastSync, at.into())
        .filter(company::Column::Id.eq(company_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes the tenant's company, announcing `company.deleted`.
pub async fn delete(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
) -> Result<(), Error> {
    let company = find(db, tenant, company_id).await?;
    // One transaction: the record tables have no foreign key to cascade
    // from, so their rows go with the company or not at all; and the event
    // goes with them. The company's connections are read first, under a
    // lock that keeps any from being added meanwhile: on PostgreSQL the
    // company's row; on SQLite the database's one write lock, taken by
    // BEGIN IMMEDIATE (a transaction that reads first cannot write once
    // another connection has written meanwhile: SQLITE_BUSY_SNAPSHOT).
    // Deleting the company cascades to the connections, and to their
    // operations, so it waits for a sync's staging write still holding one;
    // their synced data goes after that, so what such a write staged goes too.
    let txn = db
        .begin_with_options(TransactionOptions {
            sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
            ..TransactionOptions::default()
        })
        .await?;
    if txn.get_database_backend() == DbBackend::Postgres {
        company::Entity::find_by_id(company_id)
            .lock_exclusive()
            .one(&txn)
            .await?;
    }
    let connections: Vec<Uuid> = connection::Entity::find()
        .select_only()
        .column(connection::Column::Id)
        .filter(connection::Column::CompanyId.eq(company_id))
        .into_tuple()
        .all(&txn)
        .await?;
    let deleted = company::Entity::delete_many()
        .filter(company::Column::Id.eq(company_id))
        .filter(company::Column::ClientId.eq(tenant.client_id))
        .exec(&txn)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(not_found(company_id));
    }
    store::delete_synced_data(&txn, &connections).await?;
    webhooks::record(&txn, event(EventType::CompanyDeleted, &company)).await?;
    txn.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_bounded() {
        let fields = CompanyFields::parse("  Acme Ltd \n", None).expect("valid");
        assert_eq!(fields.name, "Acme Ltd");
        assert!(CompanyFields::parse("   ", None).is_err());
        assert!(CompanyFields::parse(&"é".repeat(200), None).is_ok());
        assert!(CompanyFields::parse(&"é".repeat(201), None).is_err());
    }

    #[test]
    fn every_invalid_field_is_reported() {
        let Err(Error::Invalid(errors)) = CompanyFields::parse("", Some("x".repeat(2001))) else {
            panic!("expected a validation error");
        };
        let fields: Vec<_> = errors.iter().map(|e| e.item_id.as_str()).collect();
        assert_eq!(fields, ["name", "description"]);
    }
}
