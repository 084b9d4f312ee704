//! Pull operations (the sync queue), the current generation of each synced
//! data type, and the synced invoices and customers.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `pull_operation`, `data_generation`, `invoice` and `customer`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(PullOperation::Table)
                    .col(pk_uuid(PullOperation::Id))
                    .col(uuid(PullOperation::CompanyId))
                    .col(uuid(PullOperation::ConnectionId))
                    .col(string_len(PullOperation::DataType, 32))
                    .col(string_len(PullOperation::Status, 16))
                    .col(timestamp_with_time_zone(PullOperation::Requested))
                    .col(timestamp_with_time_zone_null(PullOperation::Started))
                    .col(timestamp_with_time_zone_null(PullOperation::Completed))
                    .col(integer(PullOperation::Progress).default(0))
                    .col(big_integer(PullOperation::RecordsFetched).default(0))
                    .col(text_null(PullOperation::ErrorMessage))
                    .col(string_len_null(PullOperation::LeaseOwner, 128))
                    .col(timestamp_with_time_zone_null(PullOperation::LeaseExpiresAt))
                    .col(integer(PullOperation::Attempts).default(0))
                    .foreign_key(
                        ForeignKey::create()
                            .from(PullOperation::Table, PullOperation::CompanyId)
                            .to(Company::Table, Company::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(PullOperation::Table, PullOperation::ConnectionId)
                            .to(Connection::Table, Connection::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // Workers claim the oldest claimable operation.
        manager
            .create_index(
                Index::create()
                    .name("pull_operation_status_requested")
                    .table(PullOperation::Table)
                    .col(PullOperation::Status)
                    .col(PullOperation::Requested)
                    .to_owned(),
            )
            .await?;
        // A company's history, newest first.
        manager
            .create_index(
                Index::create()
                    .name("pull_operation_company_requested")
                    .table(PullOperation::Table)
                    .col(PullOperation::CompanyId)
                    .col(PullOperation::Requested)
                    .col(PullOperation::Id)
                    .to_owned(),
            )
            .await?;
        // At most one queued or running operation per connection and data
        // type, even when two triggers race: the second insert fails and the
        // trigger returns the first. Same syntax on SQLite and PostgreSQL.
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE UNIQUE INDEX pull_operation_one_active \
                 ON pull_operation (connection_id, data_type) \
                 WHERE status IN ('Queued', 'Fetching')",
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(DataGeneration::Table)
                    .col(uuid(DataGeneration::ConnectionId))
                    .col(string_len(DataGeneration::DataType, 32))
                    .col(big_integer(DataGeneration::Generation))
                    .col(big_integer(DataGeneration::RecordCount))
                    .col(uuid(DataGeneration::PullOperationId))
                    .col(timestamp_with_time_zone(DataGeneration::Completed))
                    .primary_key(
                        Index::create()
                            .col(DataGeneration::ConnectionId)
                            .col(DataGeneration::DataType),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(DataGeneration::Table, DataGeneration::ConnectionId)
                            .to(Connection::Table, Connection::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Invoice::Table)
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
                    // Money in ten-thousandths of the currency unit: exact integers.
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
                    .foreign_key(
                        ForeignKey::create()
                            .from(Invoice::Table, Invoice::ConnectionId)
                            .to(Connection::Table, Connection::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            (
                "invoice_company_order",
                vec![Invoice::CompanyId, Invoice::IssueDate, Invoice::InvoiceId],
            ),
            (
                "invoice_company_status_order",
                vec![
                    Invoice::CompanyId,
                    Invoice::Status,
                    Invoice::IssueDate,
                    Invoice::InvoiceId,
                ],
            ),
        ] {
            let mut index = Index::create().name(name).table(Invoice::Table).to_owned();
            for column in columns {
                index.col(column);
            }
            manager.create_index(index).await?;
        }

        manager
            .create_table(
                Table::create()
                    .table(Customer::Table)
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
                    .foreign_key(
                        ForeignKey::create()
                            .from(Customer::Table, Customer::ConnectionId)
                            .to(Connection::Table, Connection::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("customer_company_order")
                    .table(Customer::Table)
                    .col(Customer::CompanyId)
                    .col(Customer::CustomerName)
                    .col(Customer::CustomerId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            Customer::Table.into_iden(),
            Invoice::Table.into_iden(),
            DataGeneration::Table.into_iden(),
            PullOperation::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Company {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Connection {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum PullOperation {
    Table,
    Id,
    CompanyId,
    ConnectionId,
    DataType,
    Status,
    Requested,
    Started,
    Completed,
    Progress,
    RecordsFetched,
    ErrorMessage,
    LeaseOwner,
    LeaseExpiresAt,
    Attempts,
}

#[derive(DeriveIden)]
enum DataGeneration {
    Table,
    ConnectionId,
    DataType,
    Generation,
    RecordCount,
    PullOperationId,
    Completed,
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
}
