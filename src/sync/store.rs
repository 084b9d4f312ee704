//! Where synced records live, how a sync swaps them in, and how pages are
//! read.
//!
//! Each (connection, data type) has a current generation in
//! `data_generation`; readers see only rows of that generation. A sync
//! writes its rows into a staging table under the next generation in short
//! batches; the transaction that completes it moves them into the readable
//! table in one sorted `INSERT … SELECT`, numbering each row densely in the
//! list's default order (`ordinal`, and `status_ordinal` within its status),
//! and points `data_generation` at the new generation with its row count.
//! Readers therefore move from the previous complete data to the new
//! complete data in one step, never seeing half a sync, and page N of a
//! connection's list is a range of ordinals: its cost does not depend on N,
//! and `totalResults` is a stored count or one index lookup. The superseded
//! rows and the staging are deleted afterwards.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict, Query};

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbBackend, EntityTrait, FromQueryResult, Iterable,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set, Statement,
};
use serde::Serialize;
use uuid::Uuid;

use entity::{
    company, connection, customer, customer_staging, data_generation, invoice, invoice_staging,
};

use super::records::{Customer, Invoice, LineItem};
use crate::error::Error;
use crate::paging::PageRequest;
use crate::platforms::DataType;
use crate::platforms::connector::Records;
use crate::timestamp::Timestamp;

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

/// Deletes the rows of `data_type` of a connection in `which` generations,
/// staged or published.
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
        DataType::Invoices => {
            delete_from!(invoice_staging);
            delete_from!(invoice);
        }
        DataType::Customers => {
            delete_from!(customer_staging);
            delete_from!(customer);
        }
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

/// Writes one page of records into the staging tables. A record the
/// platform sent twice (page-numbered paging over data that changes during
/// the sync) is kept once, as last sent.
///
/// On PostgreSQL the page goes as one JSON parameter that the server
/// expands with `json_to_recordset`: one short statement per page instead
/// of twenty bound values per row, which is most of a large sync's time.
pub async fn stage(
    db: &impl ConnectionTrait,
    staging: Staging,
    records: Records,
) -> Result<(), Error> {
    if db.get_database_backend() == DbBackend::Postgres {
        return stage_as_json(db, staging, records).await;
    }
    match records {
        Records::Invoices(invoices) => {
            let invoices = last_of_each(invoices, |record| &record.invoice_id);
            for batch in invoices.chunks(INSERT_BATCH) {
                let rows = batch
                    .iter()
                    .map(|record| invoice_row(staging, record))
                    .collect::<Result<Vec<_>, _>>()?;
                invoice_staging::Entity::insert_many(rows)
                    .on_conflict(
                        OnConflict::columns([
                            invoice_staging::Column::ConnectionId,
                            invoice_staging::Column::Generation,
                            invoice_staging::Column::InvoiceId,
                        ])
                        .update_columns(invoice_staging::Column::iter().filter(|column| {
                            !matches!(
                                column,
                                invoice_staging::Column::ConnectionId
                                    | invoice_staging::Column::Generation
                                    | invoice_staging::Column::InvoiceId
                            )
                        }))
                        .to_owned(),
                    )
                    .exec(db)
                    .await?;
            }
        }
        Records::Customers(customers) => {
            let customers = last_of_each(customers, |record| &record.customer_id);
            for batch in customers.chunks(INSERT_BATCH) {
                let rows = batch.iter().map(|record| customer_row(staging, record));
                customer_staging::Entity::insert_many(rows)
                    .on_conflict(
                        OnConflict::columns([
                            customer_staging::Column::ConnectionId,
                            customer_staging::Column::Generation,
                            customer_staging::Column::CustomerId,
                        ])
                        .update_columns(customer_staging::Column::iter().filter(|column| {
                            !matches!(
                                column,
                                customer_staging::Column::ConnectionId
                                    | customer_staging::Column::Generation
                                    | customer_staging::Column::CustomerId
                            )
                        }))
                        .to_owned(),
                    )
                    .exec(db)
                    .await?;
            }
        }
    }
    Ok(())
}

/// A staged invoice as PostgreSQL's `json_to_recordset` reads it.
#[derive(Serialize)]
struct InvoiceJson<'a> {
    invoice_id: &'a str,
    invoice_number: Option<&'a str>,
    customer_id: Option<&'a str>,
    customer_name: Option<&'a str>,
    issue_date: NaiveDate,
    due_date: Option<NaiveDate>,
    paid_on_date: Option<NaiveDate>,
    currency: &'a str,
    sub_total: i64,
    total_tax_amount: i64,
    total_amount: i64,
    amount_due: i64,
    status: &'static str,
    line_items: &'a [LineItem],
    note: Option<&'a str>,
    source_modified_date: Option<Timestamp>,
}

/// A staged customer as PostgreSQL's `json_to_recordset` reads it.
#[derive(Serialize)]
struct CustomerJson<'a> {
    customer_id: &'a str,
    customer_name: &'a str,
    email_address: Option<&'a str>,
    phone: Option<&'a str>,
    default_currency: Option<&'a str>,
    status: &'static str,
    source_modified_date: Option<Timestamp>,
}

async fn stage_as_json(
    db: &impl ConnectionTrait,
    staging: Staging,
    records: Records,
) -> Result<(), Error> {
    let (sql, rows) = match records {
        Records::Invoices(invoices) => {
            let invoices = last_of_each(invoices, |record| &record.invoice_id);
            let rows: Vec<InvoiceJson> = invoices
                .iter()
                .map(|record| InvoiceJson {
                    invoice_id: &record.invoice_id,
                    invoice_number: record.invoice_number.as_deref(),
                    customer_id: record.customer_id.as_deref(),
                    customer_name: record.customer_name.as_deref(),
                    issue_date: record.issue_date,
                    due_date: record.due_date,
                    paid_on_date: record.paid_on_date,
                    currency: &record.currency,
                    sub_total: record.sub_total.0,
                    total_tax_amount: record.total_tax_amount.0,
                    total_amount: record.total_amount.0,
                    amount_due: record.amount_due.0,
                    status: record.status.as_str(),
                    line_items: &record.line_items,
                    note: record.note.as_deref(),
                    source_modified_date: record.source_modified_date.map(Timestamp),
                })
                .collect();
            let rows = serde_json::to_string(&rows).map_err(Error::internal)?;
            (STAGE_INVOICES_FROM_JSON, rows)
        }
        Records::Customers(customers) => {
            let customers = last_of_each(customers, |record| &record.customer_id);
            let rows: Vec<CustomerJson> = customers
                .iter()
                .map(|record| CustomerJson {
                    customer_id: &record.customer_id,
                    customer_name: &record.customer_name,
                    email_address: record.email_address.as_deref(),
                    phone: record.phone.as_deref(),
                    default_currency: record.default_currency.as_deref(),
                    status: record.status.as_str(),
                    source_modified_date: record.source_modified_date.map(Timestamp),
                })
                .collect();
            let rows = serde_json::to_string(&rows).map_err(Error::internal)?;
            (STAGE_CUSTOMERS_FROM_JSON, rows)
        }
    };
    db.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        [
            staging.connection_id.into(),
            staging.generation.into(),
            staging.company_id.into(),
            staging.modified.into(),
            rows.into(),
        ],
    ))
    .await?;
    Ok(())
}

/// `$1` connection, `$2` generation, `$3` company, `$4` modified, `$5` the rows.
const STAGE_INVOICES_FROM_JSON: &str = "INSERT INTO invoice_staging (connection_id, generation, \
     company_id, modified_date, invoice_id, invoice_number, customer_id, customer_name, issue_date, \
     due_date, paid_on_date, currency, sub_total, total_tax_amount, total_amount, amount_due, status, \
     line_items, note, source_modified_date) \
     SELECT $1, $2, $3, $4, invoice_id, invoice_number, customer_id, customer_name, issue_date, \
     due_date, paid_on_date, currency, sub_total, total_tax_amount, total_amount, amount_due, status, \
     line_items::text, note, source_modified_date \
     FROM json_to_recordset($5::json) AS page(invoice_id text, invoice_number text, customer_id text, \
     customer_name text, issue_date date, due_date date, paid_on_date date, currency text, \
     sub_total bigint, total_tax_amount bigint, total_amount bigint, amount_due bigint, status text, \
     line_items json, note text, source_modified_date timestamptz) \
     ON CONFLICT (connection_id, generation, invoice_id) DO UPDATE SET \
     company_id = excluded.company_id, modified_date = excluded.modified_date, \
     invoice_number = excluded.invoice_number, customer_id = excluded.customer_id, \
     customer_name = excluded.customer_name, issue_date = excluded.issue_date, \
     due_date = excluded.due_date, paid_on_date = excluded.paid_on_date, \
     currency = excluded.currency, sub_total = excluded.sub_total, \
     total_tax_amount = excluded.total_tax_amount, total_amount = excluded.total_amount, \
     amount_due = excluded.amount_due, status = excluded.status, line_items = excluded.line_items, \
     note = excluded.note, source_modified_date = excluded.source_modified_date";

/// `$1` connection, `$2` generation, `$3` company, `$4` modified, `$5` the rows.
const STAGE_CUSTOMERS_FROM_JSON: &str = "INSERT INTO customer_staging (connection_id, generation, \
     company_id, modified_date, customer_id, customer_name, email_address, phone, default_currency, \
     status, source_modified_date) \
     SELECT $1, $2, $3, $4, customer_id, customer_name, email_address, phone, default_currency, \
     status, source_modified_date \
     FROM json_to_recordset($5::json) AS page(customer_id text, customer_name text, \
     email_address text, phone text, default_currency text, status text, \
     source_modified_date timestamptz) \
     ON CONFLICT (connection_id, generation, customer_id) DO UPDATE SET \
     company_id = excluded.company_id, modified_date = excluded.modified_date, \
     customer_name = excluded.customer_name, email_address = excluded.email_address, \
     phone = excluded.phone, default_currency = excluded.default_currency, \
     status = excluded.status, source_modified_date = excluded.source_modified_date";

/// The records with repeated ids reduced to the last one sent, in first-seen
/// order (one insert statement may not touch a row twice).
fn last_of_each<T>(records: Vec<T>, id: impl Fn(&T) -> &String) -> Vec<T> {
    let mut place: HashMap<String, usize> = HashMap::with_capacity(records.len());
    let mut kept: Vec<T> = Vec::with_capacity(records.len());
    for record in records {
        match place.get(id(&record)) {
            Some(&index) => kept[index] = record,
            None => {
                place.insert(id(&record).clone(), kept.len());
                kept.push(record);
            }
        }
    }
    kept
}

fn invoice_row(staging: Staging, record: &Invoice) -> Result<invoice_staging::ActiveModel, Error> {
    Ok(invoice_staging::ActiveModel {
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
        line_items: Set(serde_json::to_string(&record.line_items).map_err(Error::internal)?),
        note: Set(record.note.clone()),
        modified_date: Set(staging.modified),
        source_modified_date: Set(record.source_modified_date),
    })
}

fn customer_row(staging: Staging, record: &Customer) -> customer_staging::ActiveModel {
    customer_staging::ActiveModel {
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

/// The invoice columns a sync copies from staging, in table order.
const INVOICE_COLUMNS: &str = "connection_id, generation, invoice_id, company_id, invoice_number, \
     customer_id, customer_name, issue_date, due_date, paid_on_date, currency, sub_total, \
     total_tax_amount, total_amount, amount_due, status, line_items, note, modified_date, \
     source_modified_date";

/// The customer columns a sync copies from staging, in table order.
const CUSTOMER_COLUMNS: &str = "connection_id, generation, customer_id, company_id, \
     customer_name, email_address, phone, default_currency, status, modified_date, \
     source_modified_date";

/// Moves a run's staged rows into the readable table, numbering each in
/// its list's default order (the same order [`invoices_page`] and
/// [`customers_page`] read): one sorted `INSERT … SELECT` inside the
/// caller's transaction. Returns how many rows moved.
pub async fn number_staged(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
) -> Result<u64, sea_orm::DbErr> {
    let sql = match data_type {
        DataType::Invoices => format!(
            "INSERT INTO invoice ({INVOICE_COLUMNS}, ordinal, status_ordinal) \
             SELECT {INVOICE_COLUMNS}, \
                    row_number() OVER (ORDER BY issue_date DESC, invoice_id), \
                    row_number() OVER (PARTITION BY status ORDER BY issue_date DESC, invoice_id) \
             FROM invoice_staging WHERE connection_id = $1 AND generation = $2"
        ),
        DataType::Customers => format!(
            "INSERT INTO customer ({CUSTOMER_COLUMNS}, ordinal) \
             SELECT {CUSTOMER_COLUMNS}, row_number() OVER (ORDER BY customer_name, customer_id) \
             FROM customer_staging WHERE connection_id = $1 AND generation = $2"
        ),
    };
    if db.get_database_backend() == DbBackend::Postgres {
        // The two window sorts of a large sync fit in memory instead of
        // spilling to disk (this transaction only).
        db.execute_unprepared("SET LOCAL work_mem = '256MB'")
            .await?;
    }
    let moved = db
        .execute_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [connection_id.into(), generation.into()],
        ))
        .await?;
    Ok(moved.rows_affected())
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

/// Deletes the staged (unpublished) rows of a connection's data type, of
/// every generation up to `through` (all of them when `None`). A run that
/// has just published passes its own generation: the next run may already
/// be staging the one after.
pub async fn clear_staging(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    through: Option<i64>,
) -> Result<(), sea_orm::DbErr> {
    match data_type {
        DataType::Invoices => {
            let mut delete = invoice_staging::Entity::delete_many()
                .filter(invoice_staging::Column::ConnectionId.eq(connection_id));
            if let Some(through) = through {
                delete = delete.filter(invoice_staging::Column::Generation.lte(through));
            }
            delete.exec(db).await?;
        }
        DataType::Customers => {
            let mut delete = customer_staging::Entity::delete_many()
                .filter(customer_staging::Column::ConnectionId.eq(connection_id));
            if let Some(through) = through {
                delete = delete.filter(customer_staging::Column::Generation.lte(through));
            }
            delete.exec(db).await?;
        }
    }
    Ok(())
}

/// Whose staged rows [`delete_staging`] deletes.
#[derive(Debug, Clone, Copy)]
pub enum StagingOf {
    /// One connection's.
    Connection(Uuid),
    /// Every connection's of a company.
    Company(Uuid),
}

/// Deletes staged rows of a deleted connection or company (the staging
/// tables have no foreign key to cascade from). Run after the delete: a
/// sync still running for them can stage nothing more, as its next write
/// finds its pull operation gone.
pub async fn delete_staging(
    db: &impl ConnectionTrait,
    of: StagingOf,
) -> Result<(), sea_orm::DbErr> {
    match of {
        StagingOf::Connection(id) => {
            invoice_staging::Entity::delete_many()
                .filter(invoice_staging::Column::ConnectionId.eq(id))
                .exec(db)
                .await?;
            customer_staging::Entity::delete_many()
                .filter(customer_staging::Column::ConnectionId.eq(id))
                .exec(db)
                .await?;
        }
        StagingOf::Company(id) => {
            invoice_staging::Entity::delete_many()
                .filter(invoice_staging::Column::CompanyId.eq(id))
                .exec(db)
                .await?;
            customer_staging::Entity::delete_many()
                .filter(customer_staging::Column::CompanyId.eq(id))
                .exec(db)
                .await?;
        }
    }
    Ok(())
}

/// The published data of one connection that readers see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visible {
    /// The connection.
    pub connection_id: Uuid,
    /// Its current generation.
    pub generation: i64,
    /// How many rows the generation holds.
    pub record_count: i64,
}

/// How list pages are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PageReads {
    /// A page is a range of the stored ordinals and the total a stored
    /// count: the cost does not grow with the page number.
    #[default]
    Ordinals,
    /// `OFFSET` and `COUNT(*)` on every request, as most services do; kept
    /// only so the benchmark can measure the difference in one run.
    OffsetAndCount,
}

/// The current generations of `data_type` across the connections of a
/// company of client `client_id`, in one query; empty when the company is
/// not that client's or none of its connections completed a sync.
pub async fn visible_generations(
    db: &impl ConnectionTrait,
    client_id: Uuid,
    company_id: Uuid,
    data_type: DataType,
) -> Result<Vec<Visible>, sea_orm::DbErr> {
    let connections_of_company = Query::select()
        .column((connection::Entity, connection::Column::Id))
        .from(connection::Entity)
        .inner_join(
            company::Entity,
            Expr::col((company::Entity, company::Column::Id))
                .equals((connection::Entity, connection::Column::CompanyId)),
        )
        .and_where(Expr::col((connection::Entity, connection::Column::CompanyId)).eq(company_id))
        .and_where(Expr::col((company::Entity, company::Column::ClientId)).eq(client_id))
        .to_owned();
    let rows = data_generation::Entity::find()
        .filter(data_generation::Column::ConnectionId.in_subquery(connections_of_company))
        .filter(data_generation::Column::DataType.eq(data_type_name(data_type)))
        .order_by_asc(data_generation::Column::ConnectionId)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| Visible {
            connection_id: row.connection_id,
            generation: row.generation,
            record_count: row.record_count,
        })
        .collect())
}

/// Rows of the visible generations whose ordinal is at most `bound`.
fn visible_up_to(
    connection: impl ColumnTrait,
    generation: impl ColumnTrait,
    ordinal: impl ColumnTrait,
    visible: &[Visible],
    bound: u64,
) -> Condition {
    visible.iter().fold(Condition::any(), |any, current| {
        any.add(
            Condition::all()
                .add(connection.eq(current.connection_id))
                .add(generation.eq(current.generation))
                .add(ordinal.lte(bound)),
        )
    })
}

/// The ordinals `(after, through]` that make up `page` of one list.
fn ordinal_range(page: PageRequest) -> (u64, u64) {
    let after = page.offset();
    (after, after.saturating_add(page.limit()))
}

/// One page of a company's invoices, newest issue date first (ties by
/// connection, then invoice id), optionally of one status, and the total.
///
/// A company with one connection is read by [`invoices_page_of_one`]; this
/// reads the rest (and the naive build). The total is each generation's
/// count (or, by status, its highest status ordinal). Connections are merged
/// by their common order: the first `offset + limit` rows of the merge come
/// from the first `offset + limit` of each connection, so each contributes a
/// prefix, bounded by the depth.
pub async fn invoices_page(
    db: &impl ConnectionTrait,
    visible: &[Visible],
    status: Option<&str>,
    page: PageRequest,
    reads: PageReads,
) -> Result<(Vec<invoice::Model>, u64), sea_orm::DbErr> {
    let ordinal = match status {
        Some(_) => invoice::Column::StatusOrdinal,
        None => invoice::Column::Ordinal,
    };
    let with_status = |query: Select<invoice::Entity>| match status {
        Some(status) => query.filter(invoice::Column::Status.eq(status)),
        None => query,
    };
    let (_, through) = ordinal_range(page);
    match (visible, reads) {
        ([one], PageReads::OffsetAndCount) => {
            let query = with_status(invoice::Entity::find())
                .filter(invoice::Column::ConnectionId.eq(one.connection_id))
                .filter(invoice::Column::Generation.eq(one.generation));
            let total = query.clone().count(db).await?;
            let rows = query
                .order_by_asc(ordinal)
                .offset(page.offset())
                .limit(page.limit())
                .all(db)
                .await?;
            Ok((rows, total))
        }
        _ => {
            let mut total = 0;
            for one in visible {
                total += match status {
                    None => one.record_count as u64,
                    Some(_) => invoices_of_status(db, one, with_status).await?,
                };
            }
            let rows = with_status(invoice::Entity::find())
                .filter(visible_up_to(
                    invoice::Column::ConnectionId,
                    invoice::Column::Generation,
                    ordinal,
                    visible,
                    through,
                ))
                .order_by_desc(invoice::Column::IssueDate)
                .order_by_asc(invoice::Column::ConnectionId)
                .order_by_asc(invoice::Column::InvoiceId)
                .offset(page.offset())
                .limit(page.limit())
                .all(db)
                .await?;
            Ok((rows, total))
        }
    }
}

/// [`invoices_page`] for the common case of a company whose invoices come
/// from one connection, in one statement (a statement reads one snapshot,
/// so no transaction is needed): the visible generation, the total and the
/// page's rows together. `None` when the company has no visible invoices
/// or several connections' worth; the caller then takes the general path.
pub async fn invoices_page_of_one(
    db: &impl ConnectionTrait,
    client_id: Uuid,
    company_id: Uuid,
    status: Option<&str>,
    page: PageRequest,
) -> Result<Option<(Vec<invoice::Model>, u64)>, sea_orm::DbErr> {
    let (after, through) = ordinal_range(page);
    // (the total, which rows of the generation, their order); the total is
    // computed once per visible connection, in `v`, not once per row.
    let (total, join, order) = match status {
        None => (
            "dg.record_count",
            "i.ordinal > $3 AND i.ordinal <= $4",
            "i.ordinal",
        ),
        Some(_) => (
            "(SELECT x.status_ordinal FROM invoice x WHERE x.connection_id = dg.connection_id \
              AND x.generation = dg.generation AND x.status = $5 \
              ORDER BY x.status_ordinal DESC LIMIT 1)",
            "i.status = $5 AND i.status_ordinal > $3 AND i.status_ordinal <= $4",
            "i.status_ordinal",
        ),
    };
    let sql = format!(
        "WITH v AS (SELECT dg.connection_id, dg.generation, {total} AS visible_total \
                    FROM data_generation dg \
                    JOIN connection c ON c.id = dg.connection_id \
                    JOIN company co ON co.id = c.company_id \
                    WHERE c.company_id = $1 AND co.client_id = $2 AND dg.data_type = 'invoices') \
         SELECT (SELECT count(*) FROM v) AS visible_connections, v.visible_total, i.* \
         FROM v LEFT JOIN invoice i ON (SELECT count(*) FROM v) = 1 \
              AND i.connection_id = v.connection_id AND i.generation = v.generation AND {join} \
         ORDER BY v.connection_id, {order}"
    );
    let mut values: Vec<sea_orm::Value> = vec![
        company_id.into(),
        client_id.into(),
        (after as i64).into(),
        (through as i64).into(),
    ];
    if let Some(status) = status {
        values.push(status.into());
    }
    let found = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            values,
        ))
        .await?;
    let Some(first) = found.first() else {
        return Ok(None);
    };
    let connections: i64 = first.try_get("", "visible_connections")?;
    if connections != 1 {
        return Ok(None);
    }
    let total: Option<i64> = first.try_get("", "visible_total")?;
    let mut rows = Vec::with_capacity(found.len());
    for row in &found {
        // The one row of an empty page carries the visible generation only.
        let invoice_id: Option<String> = row.try_get("", "invoice_id")?;
        if invoice_id.is_some() {
            rows.push(invoice::Model::from_query_result(row, "")?);
        }
    }
    Ok(Some((rows, total.unwrap_or(0) as u64)))
}

/// How many of one connection's visible invoices match the status filter:
/// the highest status ordinal, one index lookup.
async fn invoices_of_status(
    db: &impl ConnectionTrait,
    one: &Visible,
    with_status: impl Fn(Select<invoice::Entity>) -> Select<invoice::Entity>,
) -> Result<u64, sea_orm::DbErr> {
    // `ORDER BY … DESC LIMIT 1` rather than `max()`: the planner turns
    // `max()` into this index descent only when its statistics are fresh,
    // and right after a sync's bulk insert they are not.
    let highest: Option<i64> = with_status(invoice::Entity::find())
        .select_only()
        .column(invoice::Column::StatusOrdinal)
        .filter(invoice::Column::ConnectionId.eq(one.connection_id))
        .filter(invoice::Column::Generation.eq(one.generation))
        .order_by_desc(invoice::Column::StatusOrdinal)
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    Ok(highest.unwrap_or(0) as u64)
}

/// One page of a company's customers, by name (ties by connection, then id),
/// and the total; read like [`invoices_page`].
pub async fn customers_page(
    db: &impl ConnectionTrait,
    visible: &[Visible],
    page: PageRequest,
    reads: PageReads,
) -> Result<(Vec<customer::Model>, u64), sea_orm::DbErr> {
    let total = visible.iter().map(|one| one.record_count as u64).sum();
    let (after, through) = ordinal_range(page);
    match (visible, reads) {
        ([one], PageReads::Ordinals) => {
            let rows = customer::Entity::find()
                .filter(customer::Column::ConnectionId.eq(one.connection_id))
                .filter(customer::Column::Generation.eq(one.generation))
                .filter(customer::Column::Ordinal.gt(after))
                .filter(customer::Column::Ordinal.lte(through))
                .order_by_asc(customer::Column::Ordinal)
                .all(db)
                .await?;
            Ok((rows, total))
        }
        ([one], PageReads::OffsetAndCount) => {
            let query = customer::Entity::find()
                .filter(customer::Column::ConnectionId.eq(one.connection_id))
                .filter(customer::Column::Generation.eq(one.generation));
            let total = query.clone().count(db).await?;
            let rows = query
                .order_by_asc(customer::Column::Ordinal)
                .offset(page.offset())
                .limit(page.limit())
                .all(db)
                .await?;
            Ok((rows, total))
        }
        _ => {
            let rows = customer::Entity::find()
                .filter(visible_up_to(
                    customer::Column::ConnectionId,
                    customer::Column::Generation,
                    customer::Column::Ordinal,
                    visible,
                    through,
                ))
                .order_by_asc(customer::Column::CustomerName)
                .order_by_asc(customer::Column::ConnectionId)
                .order_by_asc(customer::Column::CustomerId)
                .offset(page.offset())
                .limit(page.limit())
                .all(db)
                .await?;
            Ok((rows, total))
        }
    }
}

/// How many rows of a generation exist, staged or published (for tests and checks).
pub async fn generation_size(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
) -> Result<u64, sea_orm::DbErr> {
    macro_rules! count_in {
        ($entity:ident) => {
            $entity::Entity::find()
                .filter($entity::Column::ConnectionId.eq(connection_id))
                .filter($entity::Column::Generation.eq(generation))
                .count(db)
                .await?
        };
    }
    Ok(match data_type {
        DataType::Invoices => count_in!(invoice_staging) + count_in!(invoice),
        DataType::Customers => count_in!(customer_staging) + count_in!(customer),
    })
}
