//! One table for the synced records of every data type: `record` (published,
//! numbered) and `record_staging` (a running sync's), each row with its
//! list's sort key and filter value in typed columns and the record as the
//! API shows it as JSON. Replaces the per-type `invoice`, `customer` and
//! their staging tables; published rows move over with their ordinals, so
//! every page reads the same before and after.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use rust_decimal::Decimal;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;
use sea_orm_migration::sea_orm::{
    ConnectionTrait, DbBackend, QueryResult, Statement, Value as SeaValue,
};
use serde_json::{Map, Value, json};
use uuid::Uuid;

/// Creates the generic tables and moves the invoices and customers into them.
#[derive(DeriveMigrationName)]
pub struct Migration;

/// Rows read per batch while moving.
const BATCH: u64 = 2000;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_generic_tables(manager).await?;
        move_invoices_up(manager).await?;
        move_customers_up(manager).await?;
        for table in ["invoice_staging", "customer_staging", "invoice", "customer"] {
            manager
                .drop_table(Table::drop().table(Alias::new(table)).to_owned())
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_typed_tables(manager).await?;
        move_invoices_down(manager).await?;
        move_customers_down(manager).await?;
        for table in [Record::Table.into_iden(), RecordStaging::Table.into_iden()] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

async fn create_generic_tables(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    let postgres = manager.get_database_backend() == DbBackend::Postgres;
    // Byte order for what lists are ordered by, so PostgreSQL orders exactly
    // as SQLite does whatever the database's collation (and sorts faster).
    let binary = |column: ColumnDef| {
        let mut column = column;
        if postgres {
            column.extra("COLLATE \"C\"");
        }
        column
    };
    manager
        .create_table(
            Table::create()
                .table(Record::Table)
                .col(uuid(Record::ConnectionId))
                .col(string_len(Record::DataType, 32))
                .col(big_integer(Record::Generation))
                .col(binary(string_len(Record::RecordId, 256)))
                .col(uuid(Record::CompanyId))
                .col(binary(text(Record::SortKey)))
                .col(string_len_null(Record::FilterValue, 64))
                .col(text(Record::Body))
                .col(big_integer(Record::Ordinal))
                .col(big_integer_null(Record::FilterOrdinal))
                .primary_key(
                    Index::create()
                        .col(Record::ConnectionId)
                        .col(Record::DataType)
                        .col(Record::Generation)
                        .col(Record::RecordId),
                )
                .foreign_key(
                    ForeignKey::create()
                        .from(Record::Table, Record::ConnectionId)
                        .to(Connection::Table, Connection::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
    // Page N of a connection's list is a range of ordinals; of a filtered
    // list, a range of filter ordinals within one filter value.
    manager
        .create_index(
            Index::create()
                .name("record_ordinal")
                .table(Record::Table)
                .col(Record::ConnectionId)
                .col(Record::DataType)
                .col(Record::Generation)
                .col(Record::Ordinal)
                .unique()
                .to_owned(),
        )
        .await?;
    manager
        .create_index(
            Index::create()
                .name("record_filter_ordinal")
                .table(Record::Table)
                .col(Record::ConnectionId)
                .col(Record::DataType)
                .col(Record::Generation)
                .col(Record::FilterValue)
                .col(Record::FilterOrdinal)
                .unique()
                .to_owned(),
        )
        .await?;
    // Deleting a company deletes its staged rows by company.
    manager
        .create_table(
            Table::create()
                .table(RecordStaging::Table)
                .col(uuid(RecordStaging::ConnectionId))
                .col(string_len(RecordStaging::DataType, 32))
                .col(big_integer(RecordStaging::Generation))
                .col(binary(string_len(RecordStaging::RecordId, 256)))
                .col(uuid(RecordStaging::CompanyId))
                .col(binary(text(RecordStaging::SortKey)))
                .col(string_len_null(RecordStaging::FilterValue, 64))
                .col(text(RecordStaging::Body))
                .primary_key(
                    Index::create()
                        .col(RecordStaging::ConnectionId)
                        .col(RecordStaging::DataType)
                        .col(RecordStaging::Generation)
                        .col(RecordStaging::RecordId),
                )
                .to_owned(),
        )
        .await?;
    if postgres {
        // Staged rows are worth nothing after a crash (the run restarts and
        // discards them), so they skip the write-ahead log.
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE record_staging SET UNLOGGED")
            .await?;
    }
    Ok(())
}

/// Reads the rows `select` gives in key order, `BATCH` at a time (keyset:
/// every batch starts after the last key read, so the cost stays flat), turns
/// each batch into rows of `insert` with `each`, and inserts them. Every
/// source is keyed by connection, generation, and the record's id (`id`).
async fn batches(
    manager: &SchemaManager<'_>,
    select: &str,
    id: &str,
    mut each: impl FnMut(&[QueryResult]) -> Result<Vec<Vec<SeaValue>>, DbErr>,
    insert: &InsertStatement,
) -> Result<(), DbErr> {
    let db = manager.get_connection();
    let backend = manager.get_database_backend();
    let order = format!("ORDER BY connection_id, generation, {id} LIMIT {BATCH}");
    let mut after: Option<(Uuid, i64, String)> = None;
    loop {
        let statement = match &after {
            None => Statement::from_string(backend, format!("{select} {order}")),
            Some((connection_id, generation, last)) => Statement::from_sql_and_values(
                backend,
                format!("{select} AND (connection_id, generation, {id}) > ($1, $2, $3) {order}"),
                [
                    (*connection_id).into(),
                    (*generation).into(),
                    last.clone().into(),
                ],
            ),
        };
        let rows = db.query_all_raw(statement).await?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = Some((
            last.try_get("", "connection_id")?,
            last.try_get("", "generation")?,
            last.try_get("", id)?,
        ));
        let values = each(&rows)?;
        for chunk in values.chunks(250) {
            let mut statement = insert.clone();
            for row in chunk {
                statement
                    .values(row.iter().cloned().map(SimpleExpr::from))
                    .map_err(|error| DbErr::Custom(error.to_string()))?;
            }
            db.execute(&statement).await?;
        }
    }
}

fn record_insert() -> InsertStatement {
    Query::insert()
        .into_table(Record::Table)
        .columns([
            Record::ConnectionId,
            Record::DataType,
            Record::Generation,
            Record::RecordId,
            Record::CompanyId,
            Record::SortKey,
            Record::FilterValue,
            Record::Body,
            Record::Ordinal,
            Record::FilterOrdinal,
        ])
        .to_owned()
}

async fn move_invoices_up(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    batches(
        manager,
        "SELECT connection_id, generation, invoice_id, company_id, invoice_number, customer_id, \
         customer_name, issue_date, due_date, paid_on_date, currency, sub_total, total_tax_amount, \
         total_amount, amount_due, status, line_items, note, modified_date, source_modified_date, \
         ordinal, status_ordinal FROM invoice WHERE TRUE",
        "invoice_id",
        |rows| rows.iter().map(invoice_up).collect(),
        &record_insert(),
    )
    .await
}

fn invoice_up(row: &QueryResult) -> Result<Vec<SeaValue>, DbErr> {
    let connection_id: Uuid = row.try_get("", "connection_id")?;
    let invoice_id: String = row.try_get("", "invoice_id")?;
    let issue_date: NaiveDate = row.try_get("", "issue_date")?;
    let status: String = row.try_get("", "status")?;
    let customer_id: Option<String> = row.try_get("", "customer_id")?;
    let customer_name: Option<String> = row.try_get("", "customer_name")?;
    let line_items: String = row.try_get("", "line_items")?;
    let line_items: Vec<Value> = serde_json::from_str::<Vec<Map<String, Value>>>(&line_items)
        .map_err(|error| DbErr::Custom(format!("invoice {invoice_id}: line items: {error}")))?
        .into_iter()
        .map(|line| {
            let amount = |key: &str| money(line.get(key).and_then(Value::as_i64).unwrap_or(0));
            json!({
                "description": line.get("description").cloned().unwrap_or(Value::String(String::new())),
                "unitAmount": amount("unitAmount"),
                "quantity": quantity(line.get("quantity").and_then(Value::as_i64).unwrap_or(0)),
                "discountAmount": amount("discountAmount"),
                "subTotal": amount("subTotal"),
                "taxAmount": amount("taxAmount"),
                "totalAmount": amount("totalAmount"),
            })
        })
        .collect();
    let body = json!({
        "connectionId": connection_id,
        "invoiceId": invoice_id,
        "invoiceNumber": row.try_get::<Option<String>>("", "invoice_number")?,
        "customerRef": customer_id.map(|id| json!({"id": id, "companyName": customer_name})),
        "issueDate": day(issue_date),
        "dueDate": row.try_get::<Option<NaiveDate>>("", "due_date")?.map(day),
        "paidOnDate": row.try_get::<Option<NaiveDate>>("", "paid_on_date")?.map(day),
        "currency": row.try_get::<String>("", "currency")?,
        "subTotal": money(row.try_get("", "sub_total")?),
        "totalTaxAmount": money(row.try_get("", "total_tax_amount")?),
        "totalAmount": money(row.try_get("", "total_amount")?),
        "amountDue": money(row.try_get("", "amount_due")?),
        "status": status,
        "lineItems": line_items,
        "note": row.try_get::<Option<String>>("", "note")?,
        "modifiedDate": time(row.try_get("", "modified_date")?),
        "sourceModifiedDate": row.try_get::<Option<DateTime<Utc>>>("", "source_modified_date")?.map(time),
    });
    Ok(vec![
        connection_id.into(),
        "invoices".into(),
        row.try_get::<i64>("", "generation")?.into(),
        invoice_id.into(),
        row.try_get::<Uuid>("", "company_id")?.into(),
        day(issue_date).into(),
        Some(status).into(),
        body.to_string().into(),
        row.try_get::<i64>("", "ordinal")?.into(),
        Some(row.try_get::<i64>("", "status_ordinal")?).into(),
    ])
}

async fn move_customers_up(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    batches(
        manager,
        "SELECT connection_id, generation, customer_id, company_id, customer_name, email_address, \
         phone, default_currency, status, modified_date, source_modified_date, ordinal FROM customer \
         WHERE TRUE",
        "customer_id",
        |rows| rows.iter().map(customer_up).collect(),
        &record_insert(),
    )
    .await
}

fn customer_up(row: &QueryResult) -> Result<Vec<SeaValue>, DbErr> {
    let connection_id: Uuid = row.try_get("", "connection_id")?;
    let customer_id: String = row.try_get("", "customer_id")?;
    let customer_name: String = row.try_get("", "customer_name")?;
    let body = json!({
        "connectionId": connection_id,
        "customerId": customer_id,
        "customerName": customer_name,
        "emailAddress": row.try_get::<Option<String>>("", "email_address")?,
        "phone": row.try_get::<Option<String>>("", "phone")?,
        "defaultCurrency": row.try_get::<Option<String>>("", "default_currency")?,
        "status": row.try_get::<String>("", "status")?,
        "modifiedDate": time(row.try_get("", "modified_date")?),
        "sourceModifiedDate": row.try_get::<Option<DateTime<Utc>>>("", "source_modified_date")?.map(time),
    });
    Ok(vec![
        connection_id.into(),
        "customers".into(),
        row.try_get::<i64>("", "generation")?.into(),
        customer_id.into(),
        row.try_get::<Uuid>("", "company_id")?.into(),
        customer_name.into(),
        Option::<String>::None.into(),
        body.to_string().into(),
        row.try_get::<i64>("", "ordinal")?.into(),
        Option::<i64>::None.into(),
    ])
}

/// A date as the API writes it.
fn day(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// A time as the API writes it: RFC 3339 UTC with microseconds.
fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Ten-thousandths as the API writes money: two places, four when finer.
fn money(ten_thousandths: i64) -> String {
    if ten_thousandths % 100 == 0 {
        Decimal::new(ten_thousandths / 100, 2).to_string()
    } else {
        Decimal::new(ten_thousandths, 4).normalize().to_string()
    }
}

/// Ten-thousandths as the API writes quantities: without trailing zeros.
fn quantity(ten_thousandths: i64) -> String {
    Decimal::new(ten_thousandths, 4).normalize().to_string()
}

/// The API's decimal string back in ten-thousandths.
fn ten_thousandths(text: Option<&str>) -> Result<i64, DbErr> {
    let text = text.unwrap_or("0");
    let decimal: Decimal = text
        .parse()
        .map_err(|_| DbErr::Custom(format!("not a decimal: {text:?}")))?;
    let scaled = decimal * Decimal::from(10_000);
    <i64 as TryFrom<Decimal>>::try_from(scaled.trunc())
        .map_err(|_| DbErr::Custom(format!("out of range: {text:?}")))
}

/// The old invoice table's columns and key, shared by `invoice` and `invoice_staging`.
fn invoice_table(table: impl IntoIden) -> TableCreateStatement {
    Table::create()
        .table(table)
        .col(uuid(Invoice::ConnectionId))
        .col(big_integer(Invoice::Generation))
        .col(string_len(Invoice::InvoiceId, 256))
        .col(uuid(Invoice::CompanyId))
        .col(string_len_null(Invoice::InvoiceNumber, 256))
        .col(string_len_null(Invoice::CustomerId, 256))
        .col(string_len_null(Invoice::CustomerName, 512))
        .col(date(Invoice::IssueDate))
        .col(date_null(Invoice::DueDate))
        .col(date_null(Invoice::PaidOnDate))
        .col(string_len(Invoice::Currency, 3))
        .col(big_integer(Invoice::SubTotal))
        .col(big_integer(Invoice::TotalTaxAmount))
        .col(big_integer(Invoice::TotalAmount))
        .col(big_integer(Invoice::AmountDue))
        .col(string_len(Invoice::Status, 16))
        .col(text(Invoice::LineItems))
        .col(text_null(Invoice::Note))
        .col(timestamp_with_time_zone(Invoice::ModifiedDate))
        .col(timestamp_with_time_zone_null(Invoice::SourceModifiedDate))
        .primary_key(
            Index::create()
                .col(Invoice::ConnectionId)
                .col(Invoice::Generation)
                .col(Invoice::InvoiceId),
        )
        .to_owned()
}

/// The old customer table's columns and key, shared by `customer` and `customer_staging`.
fn customer_table(table: impl IntoIden) -> TableCreateStatement {
    Table::create()
        .table(table)
        .col(uuid(Customer::ConnectionId))
        .col(big_integer(Customer::Generation))
        .col(string_len(Customer::CustomerId, 256))
        .col(uuid(Customer::CompanyId))
        .col(string_len(Customer::CustomerName, 512))
        .col(string_len_null(Customer::EmailAddress, 512))
        .col(string_len_null(Customer::Phone, 128))
        .col(string_len_null(Customer::DefaultCurrency, 3))
        .col(string_len(Customer::Status, 16))
        .col(timestamp_with_time_zone(Customer::ModifiedDate))
        .col(timestamp_with_time_zone_null(Customer::SourceModifiedDate))
        .primary_key(
            Index::create()
                .col(Customer::ConnectionId)
                .col(Customer::Generation)
                .col(Customer::CustomerId),
        )
        .to_owned()
}

/// Deleted with its connection.
fn of_connection(table: impl IntoIden, column: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(table, column)
        .to(Connection::Table, Connection::Id)
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

async fn create_typed_tables(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            invoice_table(Invoice::Table)
                .col(big_integer(Invoice::Ordinal).default(0))
                .col(big_integer(Invoice::StatusOrdinal).default(0))
                .foreign_key(&mut of_connection(Invoice::Table, Invoice::ConnectionId))
                .to_owned(),
        )
        .await?;
    manager
        .create_table(
            customer_table(Customer::Table)
                .col(big_integer(Customer::Ordinal).default(0))
                .foreign_key(&mut of_connection(Customer::Table, Customer::ConnectionId))
                .to_owned(),
        )
        .await?;
    for (name, table, columns) in [
        (
            "invoice_ordinal",
            Invoice::Table.into_iden(),
            vec![
                Invoice::ConnectionId.into_iden(),
                Invoice::Generation.into_iden(),
                Invoice::Ordinal.into_iden(),
            ],
        ),
        (
            "invoice_status_ordinal",
            Invoice::Table.into_iden(),
            vec![
                Invoice::ConnectionId.into_iden(),
                Invoice::Generation.into_iden(),
                Invoice::Status.into_iden(),
                Invoice::StatusOrdinal.into_iden(),
            ],
        ),
        (
            "customer_ordinal",
            Customer::Table.into_iden(),
            vec![
                Customer::ConnectionId.into_iden(),
                Customer::Generation.into_iden(),
                Customer::Ordinal.into_iden(),
            ],
        ),
    ] {
        let mut index = Index::create().name(name).table(table).unique().to_owned();
        for column in columns {
            index.col(column);
        }
        manager.create_index(index).await?;
    }
    // The staging tables as they were: the data in them is a running sync's,
    // which restarts, so none is carried over.
    manager
        .create_table(invoice_table(InvoiceStaging::Table))
        .await?;
    manager
        .create_table(customer_table(CustomerStaging::Table))
        .await?;
    if manager.get_database_backend() == DbBackend::Postgres {
        let db = manager.get_connection();
        db.execute_unprepared("ALTER TABLE invoice_staging SET UNLOGGED")
            .await?;
        db.execute_unprepared("ALTER TABLE customer_staging SET UNLOGGED")
            .await?;
    }
    Ok(())
}

/// A published record's fields, read back from its JSON.
fn record_body(row: &QueryResult) -> Result<Map<String, Value>, DbErr> {
    let body: String = row.try_get("", "body")?;
    serde_json::from_str(&body).map_err(|error| DbErr::Custom(format!("record body: {error}")))
}

fn text_of(body: &Map<String, Value>, key: &str) -> Option<String> {
    body.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn date_of(body: &Map<String, Value>, key: &str) -> Result<Option<NaiveDate>, DbErr> {
    text_of(body, key)
        .map(|text| {
            NaiveDate::parse_from_str(&text, "%Y-%m-%d")
                .map_err(|_| DbErr::Custom(format!("{key}: not a date")))
        })
        .transpose()
}

fn time_of(body: &Map<String, Value>, key: &str) -> Result<Option<DateTime<Utc>>, DbErr> {
    text_of(body, key)
        .map(|text| {
            DateTime::parse_from_rfc3339(&text)
                .map(|at| at.with_timezone(&Utc))
                .map_err(|_| DbErr::Custom(format!("{key}: not a time")))
        })
        .transpose()
}

async fn move_invoices_down(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    let insert = Query::insert()
        .into_table(Invoice::Table)
        .columns([
            Invoice::ConnectionId,
            Invoice::Generation,
            Invoice::InvoiceId,
            Invoice::CompanyId,
            Invoice::InvoiceNumber,
            Invoice::CustomerId,
            Invoice::CustomerName,
            Invoice::IssueDate,
            Invoice::DueDate,
            Invoice::PaidOnDate,
            Invoice::Currency,
            Invoice::SubTotal,
            Invoice::TotalTaxAmount,
            Invoice::TotalAmount,
            Invoice::AmountDue,
            Invoice::Status,
            Invoice::LineItems,
            Invoice::Note,
            Invoice::ModifiedDate,
            Invoice::SourceModifiedDate,
            Invoice::Ordinal,
            Invoice::StatusOrdinal,
        ])
        .to_owned();
    batches(
        manager,
        "SELECT connection_id, generation, record_id, company_id, body, ordinal, filter_ordinal \
         FROM record WHERE data_type = 'invoices'",
        "record_id",
        |rows| rows.iter().map(invoice_down).collect(),
        &insert,
    )
    .await
}

fn invoice_down(row: &QueryResult) -> Result<Vec<SeaValue>, DbErr> {
    let body = record_body(row)?;
    let amount = |key: &str| ten_thousandths(body.get(key).and_then(Value::as_str));
    let customer = body.get("customerRef").and_then(Value::as_object);
    let mut lines = Vec::new();
    for line in body
        .get("lineItems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let field = |key: &str| ten_thousandths(line.get(key).and_then(Value::as_str));
        lines.push(json!({
            "description": line.get("description").cloned().unwrap_or(Value::String(String::new())),
            "unitAmount": field("unitAmount")?,
            "quantity": field("quantity")?,
            "discountAmount": field("discountAmount")?,
            "subTotal": field("subTotal")?,
            "taxAmount": field("taxAmount")?,
            "totalAmount": field("totalAmount")?,
        }));
    }
    Ok(vec![
        row.try_get::<Uuid>("", "connection_id")?.into(),
        row.try_get::<i64>("", "generation")?.into(),
        row.try_get::<String>("", "record_id")?.into(),
        row.try_get::<Uuid>("", "company_id")?.into(),
        text_of(&body, "invoiceNumber").into(),
        customer.and_then(|customer| text_of(customer, "id")).into(),
        customer
            .and_then(|customer| text_of(customer, "companyName"))
            .into(),
        date_of(&body, "issueDate")?.into(),
        date_of(&body, "dueDate")?.into(),
        date_of(&body, "paidOnDate")?.into(),
        text_of(&body, "currency").unwrap_or_default().into(),
        amount("subTotal")?.into(),
        amount("totalTaxAmount")?.into(),
        amount("totalAmount")?.into(),
        amount("amountDue")?.into(),
        text_of(&body, "status").unwrap_or_default().into(),
        Value::Array(lines).to_string().into(),
        text_of(&body, "note").into(),
        time_of(&body, "modifiedDate")?.into(),
        time_of(&body, "sourceModifiedDate")?.into(),
        row.try_get::<i64>("", "ordinal")?.into(),
        row.try_get::<Option<i64>>("", "filter_ordinal")?
            .unwrap_or(0)
            .into(),
    ])
}

async fn move_customers_down(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    let insert = Query::insert()
        .into_table(Customer::Table)
        .columns([
            Customer::ConnectionId,
            Customer::Generation,
            Customer::CustomerId,
            Customer::CompanyId,
            Customer::CustomerName,
            Customer::EmailAddress,
            Customer::Phone,
            Customer::DefaultCurrency,
            Customer::Status,
            Customer::ModifiedDate,
            Customer::SourceModifiedDate,
            Customer::Ordinal,
        ])
        .to_owned();
    batches(
        manager,
        "SELECT connection_id, generation, record_id, company_id, body, ordinal \
         FROM record WHERE data_type = 'customers'",
        "record_id",
        |rows| rows.iter().map(customer_down).collect(),
        &insert,
    )
    .await
}

fn customer_down(row: &QueryResult) -> Result<Vec<SeaValue>, DbErr> {
    let body = record_body(row)?;
    Ok(vec![
        row.try_get::<Uuid>("", "connection_id")?.into(),
        row.try_get::<i64>("", "generation")?.into(),
        row.try_get::<String>("", "record_id")?.into(),
        row.try_get::<Uuid>("", "company_id")?.into(),
        text_of(&body, "customerName").unwrap_or_default().into(),
        text_of(&body, "emailAddress").into(),
        text_of(&body, "phone").into(),
        text_of(&body, "defaultCurrency").into(),
        text_of(&body, "status").unwrap_or_default().into(),
        time_of(&body, "modifiedDate")?.into(),
        time_of(&body, "sourceModifiedDate")?.into(),
        row.try_get::<i64>("", "ordinal")?.into(),
    ])
}

#[derive(DeriveIden)]
enum Connection {
    Table,
    Id,
}

#[derive(DeriveIden)]
#[expect(
    clippy::enum_variant_names,
    reason = "the variants are the table's column names"
)]
enum Record {
    Table,
    ConnectionId,
    DataType,
    Generation,
    RecordId,
    CompanyId,
    SortKey,
    FilterValue,
    Body,
    Ordinal,
    FilterOrdinal,
}

#[derive(DeriveIden)]
enum RecordStaging {
    Table,
    ConnectionId,
    DataType,
    Generation,
    RecordId,
    CompanyId,
    SortKey,
    FilterValue,
    Body,
}

#[derive(DeriveIden)]
#[expect(
    clippy::enum_variant_names,
    reason = "the variants are the table's column names"
)]
enum Invoice {
    Table,
    ConnectionId,
    Generation,
    InvoiceId,
    CompanyId,
    InvoiceNumber,
    CustomerId,
    CustomerName,
    IssueDate,
    DueDate,
    PaidOnDate,
    Currency,
    SubTotal,
    TotalTaxAmount,
    TotalAmount,
    AmountDue,
    Status,
    LineItems,
    Note,
    ModifiedDate,
    SourceModifiedDate,
    Ordinal,
    StatusOrdinal,
}

#[derive(DeriveIden)]
enum InvoiceStaging {
    Table,
}

#[derive(DeriveIden)]
#[expect(
    clippy::enum_variant_names,
    reason = "the variants are the table's column names"
)]
enum Customer {
    Table,
    ConnectionId,
    Generation,
    CustomerId,
    CompanyId,
    CustomerName,
    EmailAddress,
    Phone,
    DefaultCurrency,
    Status,
    ModifiedDate,
    SourceModifiedDate,
    Ordinal,
}

#[derive(DeriveIden)]
enum CustomerStaging {
    Table,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_as_the_api_writes_them_and_read_back_exactly() {
        for (stored, written) in [
            (0, "0.00"),
            (11_278_100, "1127.81"),
            (-100, "-0.01"),
            (-5, "-0.0005"),
            (12_345, "1.2345"),
        ] {
            assert_eq!(money(stored), written);
            assert_eq!(ten_thousandths(Some(written)).ok(), Some(stored));
        }
        assert_eq!(quantity(15_000), "1.5");
        assert_eq!(quantity(30_000), "3");
        assert_eq!(ten_thousandths(Some("3")).ok(), Some(30_000));
    }
}
