//! Each tenant's sync settings: the data types `POST .../data/all` queues.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `sync_settings`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(SyncSettings::Table)
                    .col(uuid(SyncSettings::ClientId).primary_key())
                    .col(text_null(SyncSettings::DataTypes))
                    .col(timestamp_with_time_zone(SyncSettings::Updated))
                    .foreign_key(
                        ForeignKey::create()
                            .from(SyncSettings::Table, SyncSettings::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(SyncSettings::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum SyncSettings {
    Table,
    ClientId,
    DataTypes,
    Updated,
}

#[derive(DeriveIden)]
enum Client {
    Table,
    Id,
}
