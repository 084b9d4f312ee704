//! Data connections of companies, and their sealed credentials.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `connection` and `connection_credential`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Connection::Table)
                    .col(pk_uuid(Connection::Id))
                    .col(uuid(Connection::CompanyId))
                    .col(string_len(Connection::PlatformKey, 64))
                    .col(string_len(Connection::Status, 32))
                    .col(timestamp_with_time_zone(Connection::Created))
                    .col(timestamp_with_time_zone_null(Connection::LastSync))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Connection::Table, Connection::CompanyId)
                            .to(Company::Table, Company::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // A company's connections, oldest first, ties by id.
        manager
            .create_index(
                Index::create()
                    .name("connection_company_created_id")
                    .table(Connection::Table)
                    .col(Connection::CompanyId)
                    .col(Connection::Created)
                    .col(Connection::Id)
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ConnectionCredential::Table)
                    .col(pk_uuid(ConnectionCredential::ConnectionId))
                    // Non-secret facts shown in the API.
                    .col(string_len(ConnectionCredential::OrganizationId, 512))
                    .col(timestamp_with_time_zone_null(
                        ConnectionCredential::AccessTokenExpiresAt,
                    ))
                    .col(timestamp_with_time_zone(ConnectionCredential::Updated))
                    // The sealed authorization body: AES-256-GCM under `key_id`.
                    .col(string_len(ConnectionCredential::KeyId, 64))
                    .col(blob(ConnectionCredential::Nonce))
                    .col(blob(ConnectionCredential::Ciphertext))
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                ConnectionCredential::Table,
                                ConnectionCredential::ConnectionId,
                            )
                            .to(Connection::Table, Connection::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            ConnectionCredential::Table.into_iden(),
            Connection::Table.into_iden(),
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
    CompanyId,
    PlatformKey,
    Status,
    Created,
    LastSync,
}

#[derive(DeriveIden)]
enum ConnectionCredential {
    Table,
    ConnectionId,
    OrganizationId,
    AccessTokenExpiresAt,
    Updated,
    KeyId,
    Nonce,
    Ciphertext,
}
