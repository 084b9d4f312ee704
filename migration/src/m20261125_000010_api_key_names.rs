//! API keys managed over the API: each key gets a name and the time it was
//! last used, and a client's keys are listed by client.

use sea_orm_migration::{prelude::*, schema::*};

/// What keys made before keys had names are called.
const NAME_OF_EARLIER_KEYS: &str = "created before keys had names";

/// Adds `api_key.name` and `api_key.last_used`, and an index on the client.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per statement.
        manager
            .alter_table(
                Table::alter()
                    .table(ApiKey::Table)
                    .add_column(string_len(ApiKey::Name, 200).default(NAME_OF_EARLIER_KEYS))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(ApiKey::Table)
                    .add_column(timestamp_with_time_zone_null(ApiKey::LastUsed))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("api_key_client")
                    .table(ApiKey::Table)
                    .col(ApiKey::ClientId)
                    .col(ApiKey::Created)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("api_key_client")
                    .table(ApiKey::Table)
                    .to_owned(),
            )
            .await?;
        for column in [ApiKey::LastUsed, ApiKey::Name] {
            manager
                .alter_table(
                    Table::alter()
                        .table(ApiKey::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum ApiKey {
    Table,
    ClientId,
    Created,
    Name,
    LastUsed,
}
