//! Generations kept after a newer sync replaced them, so that a client
//! paging through a list keeps reading the snapshot it started on.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `retained_generation`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(RetainedGeneration::Table)
                    .col(uuid(RetainedGeneration::ConnectionId))
                    .col(string_len(RetainedGeneration::DataType, 32))
                    .col(big_integer(RetainedGeneration::Generation))
                    .col(big_integer(RetainedGeneration::RecordCount))
                    .col(timestamp_with_time_zone(RetainedGeneration::Superseded))
                    .primary_key(
                        Index::create()
                            .col(RetainedGeneration::ConnectionId)
                            .col(RetainedGeneration::DataType)
                            .col(RetainedGeneration::Generation),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(RetainedGeneration::Table, RetainedGeneration::ConnectionId)
                            .to(Connection::Table, Connection::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // The sweep finds expired generations by when they were superseded.
        manager
            .create_index(
                Index::create()
                    .name("retained_generation_superseded")
                    .table(RetainedGeneration::Table)
                    .col(RetainedGeneration::Superseded)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(RetainedGeneration::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum RetainedGeneration {
    Table,
    ConnectionId,
    DataType,
    Generation,
    RecordCount,
    Superseded,
}

#[derive(DeriveIden)]
enum Connection {
    Table,
    Id,
}
