//! Reading a company's synced data: the tenant check, the "not synced
//! yet" answer, and the pages.
//!
//! Each read sees one snapshot, so a sync publishing and deleting
//! generations meanwhile cannot yield an empty or mixed page: the invoices
//! of a company with one connection come from one SQL statement (its own
//! snapshot); every other read runs in a read-only transaction (REPEATABLE
//! READ on PostgreSQL; a read transaction on SQLite, whose WAL gives it a
//! snapshot) in which the generation, the count and the page are read.

use sea_orm::{
    AccessMode, DatabaseConnection, DatabaseTransaction, DbBackend, IsolationLevel,
    TransactionTrait,
};
use uuid::Uuid;

use entity::{customer, invoice};

use super::records::InvoiceStatus;
use super::store::{self, PageReads, Visible, data_type_name};
use crate::companies;
use crate::error::{Error, Problem, Remedy};
use crate::paging::PageRequest;
use crate::platforms::DataType;
use crate::tenant::Tenant;

async fn generations(
    db: &impl sea_orm::ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
) -> Result<Vec<Visible>, Error> {
    let visible = store::visible_generations(db, tenant.client_id, company_id, data_type).await?;
    if !visible.is_empty() {
        return Ok(visible);
    }
    // Nothing visible: an unknown (or another client's) company, or no sync yet.
    companies::find(db, tenant, company_id).await?;
    Err(Error::Conflict(
        Problem::new(format!(
            "The {} of company {company_id} are not synced yet.",
            data_type_name(data_type)
        ))
        .with_remedy(Remedy::QueueSync {
            company_id,
            data_type: data_type_name(data_type).to_owned(),
        }),
    ))
}

async fn snapshot(db: &DatabaseConnection) -> Result<DatabaseTransaction, Error> {
    Ok(match db.get_database_backend() {
        DbBackend::Postgres => {
            db.begin_with_config(
                Some(IsolationLevel::RepeatableRead),
                Some(AccessMode::ReadOnly),
            )
            .await?
        }
        _ => db.begin().await?,
    })
}

/// One page of the company's invoices (optionally of one status) and the total.
pub async fn invoices(
    db: &DatabaseConnection,
    reads: PageReads,
    tenant: Tenant,
    company_id: Uuid,
    status: Option<InvoiceStatus>,
    page: PageRequest,
) -> Result<(Vec<invoice::Model>, u64), Error> {
    let status = status.map(InvoiceStatus::as_str);
    if reads == PageReads::Ordinals
        && let Some(found) =
            store::invoices_page_of_one(db, tenant.client_id, company_id, status, page).await?
    {
        return Ok(found);
    }
    let txn = snapshot(db).await?;
    let visible = generations(&txn, tenant, company_id, DataType::Invoices).await?;
    let found = store::invoices_page(&txn, &visible, status, page, reads).await?;
    txn.commit().await?;
    Ok(found)
}

/// One page of the company's customers and the total.
pub async fn customers(
    db: &DatabaseConnection,
    reads: PageReads,
    tenant: Tenant,
    company_id: Uuid,
    page: PageRequest,
) -> Result<(Vec<customer::Model>, u64), Error> {
    let txn = snapshot(db).await?;
    let visible = generations(&txn, tenant, company_id, DataType::Customers).await?;
    let found = store::customers_page(&txn, &visible, page, reads).await?;
    txn.commit().await?;
    Ok(found)
}
