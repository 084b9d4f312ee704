//! Incremental fetches: `sync_watermark` keeps, per connection and data
//! type, the platform's time at the start of the last published fetch (what
//! the next one asks for changes since), the platform's own cursor where it
//! keeps one (Plaid's `next_cursor`) and when the last full fetch was
//! published (when a reconciling full fetch is due); a pull operation says
//! how it fetched (`fetch_mode`: `Full` or `Incremental`) and whether a full
//! fetch was asked for (`full_requested`).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

/// Creates `sync_watermark`; adds `pull_operation.fetch_mode` and
/// `pull_operation.full_requested`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(SyncWatermark::Table)
                    .col(uuid(SyncWatermark::ConnectionId))
                    .col(string_len(SyncWatermark::DataType, 32))
                    .col(timestamp_with_time_zone(SyncWatermark::ChangesSince))
                    .col(timestamp_with_time_zone(SyncWatermark::FullFetched))
                    .col(text_null(SyncWatermark::Cursor))
                    .primary_key(
                        Index::create()
                            .col(SyncWatermark::ConnectionId)
                            .col(SyncWatermark::DataType),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(SyncWatermark::Table, SyncWatermark::ConnectionId)
                            .to(Connection::Table, Connection::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // SQLite takes one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(PullOperation::Table)
                    .add_column(string_null(PullOperation::FetchMode))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(PullOperation::Table)
                    .add_column(boolean(PullOperation::FullRequested).default(false))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [PullOperation::FullRequested, PullOperation::FetchMode] {
            manager
                .alter_table(
                    Table::alter()
                        .table(PullOperation::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_table(Table::drop().table(SyncWatermark::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum SyncWatermark {
    Table,
    ConnectionId,
    DataType,
    ChangesSince,
    FullFetched,
    Cursor,
}

#[derive(DeriveIden)]
enum Connection {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum PullOperation {
    Table,
    FetchMode,
    FullRequested,
}
