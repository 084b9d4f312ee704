//! Clients (tenants), their API keys, and their companies.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `client`, `api_key` and `company`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Client::Table)
                    .col(pk_uuid(Client::Id))
                    .col(string_len_uniq(Client::Name, 200))
                    .col(timestamp_with_time_zone(Client::Created))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ApiKey::Table)
                    .col(pk_uuid(ApiKey::Id))
                    .col(uuid(ApiKey::ClientId))
                    // Hex SHA-256 of the key: the key itself is never stored.
                    .col(string_len_uniq(ApiKey::KeyHash, 64))
                    .col(timestamp_with_time_zone(ApiKey::Created))
                    .foreign_key(
                        ForeignKey::create()
                            .from(ApiKey::Table, ApiKey::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Company::Table)
                    .col(pk_uuid(Company::Id))
                    .col(uuid(Company::ClientId))
                    .col(string_len(Company::Name, 200))
                    .col(text_null(Company::Description))
                    .col(timestamp_with_time_zone(Company::Created))
                    .col(timestamp_with_time_zone_null(Company::LastSync))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Company::Table, Company::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;

        // The companies list reads one tenant's rows oldest first, ties by id.
        manager
            .create_index(
                Index::create()
                    .name("company_client_created_id")
                    .table(Company::Table)
                    .col(Company::ClientId)
                    .col(Company::Created)
                    .col(Company::Id)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            Company::Table.into_iden(),
            ApiKey::Table.into_iden(),
            Client::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Client {
    Table,
    Id,
    Name,
    Created,
}

#[derive(DeriveIden)]
enum ApiKey {
    Table,
    Id,
    ClientId,
    KeyHash,
    Created,
}

#[derive(DeriveIden)]
enum Company {
    Table,
    Id,
    ClientId,
    Name,
    Description,
    Created,
    LastSync,
}
