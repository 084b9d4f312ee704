//! Where synced records live, and how a sync swaps them in.
//!
//! Each (connection, data type) has a current generation in
//! `data_generation`; readers see only rows of that generation. A sync
//! writes its rows under the next generation in short batches, then one
//! short transaction points `data_generation` at it, so readers move from
//! the previous complete data to the new complete data in one step, never
//! seeing half a sync; the superseded rows are deleted afterwards.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use uuid::Uuid;

use entity::{customer, data_generation, invoice};

use super::connectors::Records;
use super::records::{Customer, Invoice};
use crate::error::ApiError;
use crate::integrations::DataType;
use crate::paging::PageRequest;

/// Rows per insert statement (well under SQLite's and PostgreSQL's parameter limits).
const INSERT_BATCH: usize = 500;

/// The stored name of a data type.
pub fn data_type_name(data_type: DataType) -> &'static str {
    match data_type {
        DataType::Invoices => "invoices",
        DataType::Customers => "customers",
    }
}

/// Reads a stored or requested data type name.
pub fn parse_data_type(name: &str) -> Option<DataType> {
    [DataType::Invoices, DataType::Customers]
        .into_iter()
        .find(|data_type| data_type_name(*data_type) == name)
}

/// The generation readers currently see, 0 when the data type never synced.
pub async fn current_generation(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
) -> Result<i64, sea_orm::DbErr> {
    Ok(
        data_generation::Entity::find_by_id((connection_id, data_type_name(data_type).to_owned()))
            .one(db)
            .await?
            .map_or(0, |row| row.generation),
    )
}

/// Which generations of a connection's data type to delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generations {
    /// Exactly this one (a run's own staging).
    Exactly(i64),
    /// Every one newer than this (leftovers of abandoned runs, never published).
    Above(i64),
    /// Every one older than this (superseded by a published one).
    Below(i64),
}

/// Deletes the rows of `data_type` of a connection in `which` generations.
pub async fn delete_generations(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    which: Generations,
) -> Result<(), sea_orm::DbErr> {
    macro_rules! delete_from {
        ($entity:ident) => {{
            let generation = $entity::Column::Generation;
            let scope = match which {
                Generations::Exactly(value) => generation.eq(value),
                Generations::Above(value) => generation.gt(value),
                Generations::Below(value) => generation.lt(value),
            };
            $entity::Entity::delete_many()
                .filter($entity::Column::ConnectionId.eq(connection_id))
                .filter(scope)
                .exec(db)
                .await?;
        }};
    }
    match data_type {
        DataType::Invoices => delete_from!(invoice),
        DataType::Customers => delete_from!(customer),
    }
    Ok(())
}

/// Where a batch of staged rows belongs.
#[derive(Debug, Clone, Copy)]
pub struct Staging {
    /// The connection synced.
    pub connection_id: Uuid,
    /// Its company.
    pub company_id: Uuid,
    /// The generation being written.
    pub generation: i64,
    /// When our copy changes (the `modifiedDate` of every row written).
    pub modified: DateTime<Utc>,
}

/// Writes one page of records into the staging generation.
pub async fn stage(
    db: &impl ConnectionTrait,
    staging: Staging,
    records: Records,
) -> Result<(), ApiError> {
    match records {
        Records::Invoices(invoices) => {
            for batch in invoices.chunks(INSERT_BATCH) {
                let rows = batch
                    .iter()
                    .map(|record| invoice_row(staging, record))
                    .collect::<Result<Vec<_>, _>>()?;
                invoice::Entity::insert_many(rows).exec(db).await?;
            }
        }
        Records::Customers(customers) => {
            for batch in customers.chunks(INSERT_BATCH) {
                let rows = batch.iter().map(|record| customer_row(staging, record));
                customer::Entity::insert_many(rows).exec(db).await?;
            }
        }
    }
    Ok(())
}

fn invoice_row(staging: Staging, record: &Invoice) -> Result<invoice::ActiveModel, ApiError> {
    Ok(invoice::ActiveModel {
        connection_id: Set(staging.connection_id),
        generation: Set(staging.generation),
        invoice_id: Set(record.invoice_id.clone()),
        company_id: Set(staging.company_id),
        invoice_number: Set(record.invoice_number.clone()),
        customer_id: Set(record.customer_id.clone()),
        customer_name: Set(record.customer_name.clone()),
        issue_date: Set(record.issue_date),
        due_date: Set(record.due_date),
        paid_on_date: Set(record.paid_on_date),
        currency: Set(record.currency.clone()),
        sub_total: Set(record.sub_total.0),
        total_tax_amount: Set(record.total_tax_amount.0),
        total_amount: Set(record.total_amount.0),
        amount_due: Set(record.amount_due.0),
        status: Set(record.status.as_str().to_owned()),
        line_items: Set(serde_json::to_string(&record.line_items).map_err(ApiError::internal)?),
        note: Set(record.note.clone()),
        modified_date: Set(staging.modified),
        source_modified_date: Set(record.source_modified_date),
    })
}

fn customer_row(staging: Staging, record: &Customer) -> customer::ActiveModel {
    customer::ActiveModel {
        connection_id: Set(staging.connection_id),
        generation: Set(staging.generation),
        customer_id: Set(record.customer_id.clone()),
        company_id: Set(staging.company_id),
        customer_name: Set(record.customer_name.clone()),
        email_address: Set(record.email_address.clone()),
        phone: Set(record.phone.clone()),
        default_currency: Set(record.default_currency.clone()),
        status: Set(record.status.as_str().to_owned()),
        modified_date: Set(staging.modified),
        source_modified_date: Set(record.source_modified_date),
    }
}

/// Points readers at `generation` (inside the caller's transaction).
pub async fn publish(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
    record_count: i64,
    pull_operation_id: Uuid,
    completed: DateTime<Utc>,
) -> Result<(), sea_orm::DbErr> {
    let row = data_generation::ActiveModel {
        connection_id: Set(connection_id),
        data_type: Set(data_type_name(data_type).to_owned()),
        generation: Set(generation),
        record_count: Set(record_count),
        pull_operation_id: Set(pull_operation_id),
        completed: Set(completed),
    };
    data_generation::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([
                data_generation::Column::ConnectionId,
                data_generation::Column::DataType,
            ])
            .update_columns([
                data_generation::Column::Generation,
                data_generation::Column::RecordCount,
                data_generation::Column::PullOperationId,
                data_generation::Column::Completed,
            ])
            .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(())
}

/// The current generations of `data_type` across a company's connections;
/// `None` when none has ever completed a sync.
pub async fn visible_generations(
    db: &impl ConnectionTrait,
    connection_ids: Vec<Uuid>,
    data_type: DataType,
) -> Result<Option<Vec<(Uuid, i64)>>, sea_orm::DbErr> {
    let rows = data_generation::Entity::find()
        .filter(data_generation::Column::ConnectionId.is_in(connection_ids))
        .filter(data_generation::Column::DataType.eq(data_type_name(data_type)))
        .all(db)
        .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        rows.into_iter()
            .map(|row| (row.connection_id, row.generation))
            .collect(),
    ))
}

fn visible(
    connection: impl ColumnTrait,
    generation: impl ColumnTrait,
    generations: &[(Uuid, i64)],
) -> Condition {
    generations
        .iter()
        .fold(Condition::any(), |any, (connection_id, current)| {
            any.add(
                Condition::all()
                    .add(connection.eq(*connection_id))
                    .add(generation.eq(*current)),
            )
        })
}

/// One page of a company's invoices, newest issue date first (ties by
/// connection, then invoice id), optionally of one status, and the total.
pub async fn invoices_page(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    generations: &[(Uuid, i64)],
    status: Option<&str>,
    page: PageRequest,
) -> Result<(Vec<invoice::Model>, u64), sea_orm::DbErr> {
    let mut query = invoice::Entity::find()
        .filter(invoice::Column::CompanyId.eq(company_id))
        .filter(visible(
            invoice::Column::ConnectionId,
            invoice::Column::Generation,
            generations,
        ));
    if let Some(status) = status {
        query = query.filter(invoice::Column::Status.eq(status));
    }
    let total = query.clone().count(db).await?;
    let rows = query
        .order_by_desc(invoice::Column::IssueDate)
        .order_by_asc(invoice::Column::ConnectionId)
        .order_by_asc(invoice::Column::InvoiceId)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((rows, total))
}

/// One page of a company's customers, by name (ties by connection, then id), and the total.
pub async fn customers_page(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    generations: &[(Uuid, i64)],
    page: PageRequest,
) -> Result<(Vec<customer::Model>, u64), sea_orm::DbErr> {
    let query = customer::Entity::find()
        .filter(customer::Column::CompanyId.eq(company_id))
        .filter(visible(
            customer::Column::ConnectionId,
            customer::Column::Generation,
            generations,
        ));
    let total = query.clone().count(db).await?;
    let rows = query
        .order_by_asc(customer::Column::CustomerName)
        .order_by_asc(customer::Column::ConnectionId)
        .order_by_asc(customer::Column::CustomerId)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((rows, total))
}

/// How many rows of a generation exist (for tests and checks).
pub async fn generation_size(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
) -> Result<u64, sea_orm::DbErr> {
    match data_type {
        DataType::Invoices => {
            invoice::Entity::find()
                .filter(invoice::Column::ConnectionId.eq(connection_id))
                .filter(invoice::Column::Generation.eq(generation))
                .count(db)
                .await
        }
        DataType::Customers => {
            customer::Entity::find()
                .filter(customer::Column::ConnectionId.eq(connection_id))
                .filter(customer::Column::Generation.eq(generation))
                .count(db)
                .await
        }
    }
}
