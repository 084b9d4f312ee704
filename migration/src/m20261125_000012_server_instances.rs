//! The serving processes sharing a database, each seen within the last
//! seconds, so that they split each client's request quota between them.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `server_instance`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ServerInstance::Table)
                    .col(pk_uuid(ServerInstance::Id))
                    .col(timestamp_with_time_zone(ServerInstance::LastSeen))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ServerInstance::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum ServerInstance {
    Table,
    Id,
    LastSeen,
}
