//! Depth-independent pages: each synced row carries its dense 1-based place
//! in its list's default order (`ordinal`, and `status_ordinal` within its
//! status for invoices), numbered when a sync publishes; rows are staged
//! in their own tables until then.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;
use sea_orm_migration::sea_orm::DbBackend;

/// Adds the ordinals and their indexes, numbers existing rows, creates the
/// staging tables, and drops the company-wide sort indexes the ordinals
/// replace.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite takes one column per ALTER TABLE.
        for (table, column) in [
            (Invoice::Table.into_iden(), Invoice::Ordinal.into_iden()),
            (
                Invoice::Table.into_iden(),
                Invoice::StatusOrdinal.into_iden(),
            ),
            (Customer::Table.into_iden(), Customer::Ordinal.into_iden()),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(table)
                        .add_column(big_integer(column).default(0))
                        .to_owned(),
                )
                .await?;
        }
        let db = manager.get_connection();
        db.execute_unprepared(
            "UPDATE invoice SET ordinal = numbered.ordinal, status_ordinal = numbered.status_ordinal \
             FROM (SELECT connection_id, generation, invoice_id, \
                     row_number() OVER (PARTITION BY connection_id, generation \
                                        ORDER BY issue_date DESC, invoice_id) AS ordinal, \
                     row_number() OVER (PARTITION BY connection_id, generation, status \
                                        ORDER BY issue_date DESC, invoice_id) AS status_ordinal \
                   FROM invoice) AS numbered \
             WHERE invoice.connection_id = numbered.connection_id \
               AND invoice.generation = numbered.generation \
               AND invoice.invoice_id = numbered.invoice_id",
        )
        .await?;
        db.execute_unprepared(
            "UPDATE customer SET ordinal = numbered.ordinal \
             FROM (SELECT connection_id, generation, customer_id, \
                     row_number() OVER (PARTITION BY connection_id, generation \
                                        ORDER BY customer_name, customer_id) AS ordinal \
                   FROM customer) AS numbered \
             WHERE customer.connection_id = numbered.connection_id \
               AND customer.generation = numbered.generation \
               AND customer.customer_id = numbered.customer_id",
        )
        .await?;

        for (name, table) in [
            ("invoice_company_order", Invoice::Table.into_iden()),
            ("invoice_company_status_order", Invoice::Table.into_iden()),
            ("customer_company_order", Customer::Table.into_iden()),
        ] {
            manager
                .drop_index(Index::drop().name(name).table(table).to_owned())
                .await?;
        }
        // Page N of a connection's list is a range of these.
        manager
            .create_index(
                Index::create()
                    .name("invoice_ordinal")
                    .table(Invoice::Table)
                    .col(Invoice::ConnectionId)
                    .col(Invoice::Generation)
                    .col(Invoice::Ordinal)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("invoice_status_ordinal")
                    .table(Invoice::Table)
                    .col(Invoice::ConnectionId)
                    .col(Invoice::Generation)
                    .col(Invoice::Status)
                    .col(Invoice::StatusOrdinal)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("customer_ordinal")
                    .table(Customer::Table)
                    .col(Customer::ConnectionId)
                    .col(Customer::Generation)
                    .col(Customer::Ordinal)
                    .unique()
                    .to_owned(),
            )
            .await?;

        // The staging tables have no foreign key: checking one per staged row
        // was a third of a large sync's time. Deleting a connection or company
        // deletes its staged rows explicitly (`sync::store::delete_staging`).
        manager
            .create_table(
                Table::create()
                    .table(InvoiceStaging::Table)
                    .col(uuid(InvoiceStaging::ConnectionId))
                    .col(big_integer(InvoiceStaging::Generation))
                    .col(string_len(InvoiceStaging::InvoiceId, 256))
                    .col(uuid(InvoiceStaging::CompanyId))
                    .col(string_len_null(InvoiceStaging::InvoiceNumber, 256))
                    .col(string_len_null(InvoiceStaging::CustomerId, 256))
                    .col(string_len_null(InvoiceStaging::CustomerName, 512))
                    .col(date(InvoiceStaging::IssueDate))
                    .col(date_null(InvoiceStaging::DueDate))
                    .col(date_null(InvoiceStaging::PaidOnDate))
                    .col(string_len(InvoiceStaging::Currency, 3))
                    .col(big_integer(InvoiceStaging::SubTotal))
                    .col(big_integer(InvoiceStaging::TotalTaxAmount))
                    .col(big_integer(InvoiceStaging::TotalAmount))
                    .col(big_integer(InvoiceStaging::AmountDue))
                    .col(string_len(InvoiceStaging::Status, 16))
                    .col(text(InvoiceStaging::LineItems))
                    .col(text_null(InvoiceStaging::Note))
                    .col(timestamp_with_time_zone(InvoiceStaging::ModifiedDate))
                    .col(timestamp_with_time_zone_null(
                        InvoiceStaging::SourceModifiedDate,
                    ))
                    .primary_key(
                        Index::create()
                            .col(InvoiceStaging::ConnectionId)
                            .col(InvoiceStaging::Generation)
                            .col(InvoiceStaging::InvoiceId),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(CustomerStaging::Table)
                    .col(uuid(CustomerStaging::ConnectionId))
                    .col(big_integer(CustomerStaging::Generation))
                    .col(string_len(CustomerStaging::CustomerId, 256))
                    .col(uuid(CustomerStaging::CompanyId))
                    .col(string_len(CustomerStaging::CustomerName, 512))
                    .col(string_len_null(CustomerStaging::EmailAddress, 512))
                    .col(string_len_null(CustomerStaging::Phone, 128))
                    .col(string_len_null(CustomerStaging::DefaultCurrency, 3))
                    .col(string_len(CustomerStaging::Status, 16))
                    .col(timestamp_with_time_zone(CustomerStaging::ModifiedDate))
                    .col(timestamp_with_time_zone_null(
                        CustomerStaging::SourceModifiedDate,
                    ))
                    .primary_key(
                        Index::create()
                            .col(CustomerStaging::ConnectionId)
                            .col(CustomerStaging::Generation)
                            .col(CustomerStaging::CustomerId),
                    )
                    .to_owned(),
            )
            .await?;
        if manager.get_database_backend() == DbBackend::Postgres {
            // Staged rows are worth nothing after a crash (the run restarts
            // and discards them), so they skip the write-ahead log.
            db.execute_unprepared("ALTER TABLE invoice_staging SET UNLOGGED")
                .await?;
            db.execute_unprepared("ALTER TABLE customer_staging SET UNLOGGED")
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            CustomerStaging::Table.into_iden(),
            InvoiceStaging::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        for (name, table) in [
            ("customer_ordinal", Customer::Table.into_iden()),
            ("invoice_status_ordinal", Invoice::Table.into_iden()),
            ("invoice_ordinal", Invoice::Table.into_iden()),
        ] {
            manager
                .drop_index(Index::drop().name(name).table(table).to_owned())
                .await?;
        }
        for (table, column) in [
            (Customer::Table.into_iden(), Customer::Ordinal.into_iden()),
            (
                Invoice::Table.into_iden(),
                Invoice::StatusOrdinal.into_iden(),
            ),
            (Invoice::Table.into_iden(), Invoice::Ordinal.into_iden()),
        ] {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        for (name, table, columns) in [
            (
                "invoice_company_order",
                Invoice::Table.into_iden(),
                vec![
                    Invoice::CompanyId.into_iden(),
                    Invoice::IssueDate.into_iden(),
                    Invoice::InvoiceId.into_iden(),
                ],
            ),
            (
                "invoice_company_status_order",
                Invoice::Table.into_iden(),
                vec![
                    Invoice::CompanyId.into_iden(),
                    Invoice::Status.into_iden(),
                    Invoice::IssueDate.into_iden(),
                    Invoice::InvoiceId.into_iden(),
                ],
            ),
            (
                "customer_company_order",
                Customer::Table.into_iden(),
                vec![
                    Customer::CompanyId.into_iden(),
                    Customer::CustomerName.into_iden(),
                    Customer::CustomerId.into_iden(),
                ],
            ),
        ] {
            let mut index = Index::create().name(name).table(table).to_owned();
            for column in columns {
                index.col(column);
            }
            manager.create_index(index).await?;
        }
        Ok(())
    }
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
    IssueDate,
    Status,
    Ordinal,
    StatusOrdinal,
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
    Ordinal,
}

#[derive(DeriveIden)]
enum InvoiceStaging {
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
}

#[derive(DeriveIden)]
enum CustomerStaging {
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
}
