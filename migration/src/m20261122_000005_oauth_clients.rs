//! Tenants' own OAuth applications (client id and sealed secret, per
//! platform), and the refresh lease on a connection's credential that keeps
//! one refresh per connection at a time across workers and processes.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `oauth_client`; adds the refresh lease to `connection_credential`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(OauthClient::Table)
                    .col(uuid(OauthClient::ClientId))
                    .col(string_len(OauthClient::PlatformKey, 64))
                    .col(string_len(OauthClient::OauthClientId, 1024))
                    .col(timestamp_with_time_zone(OauthClient::Updated))
                    // The sealed client secret: AES-256-GCM under `key_id`.
                    .col(string_len(OauthClient::KeyId, 64))
                    .col(blob(OauthClient::Nonce))
                    .col(blob(OauthClient::Ciphertext))
                    .primary_key(
                        Index::create()
                            .col(OauthClient::ClientId)
                            .col(OauthClient::PlatformKey),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(OauthClient::Table, OauthClient::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // SQLite adds one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(ConnectionCredential::Table)
                    .add_column(string_len_null(
                        ConnectionCredential::RefreshLeaseOwner,
                        128,
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(ConnectionCredential::Table)
                    .add_column(timestamp_with_time_zone_null(
                        ConnectionCredential::RefreshLeaseExpiresAt,
                    ))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            ConnectionCredential::RefreshLeaseExpiresAt,
            ConnectionCredential::RefreshLeaseOwner,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(ConnectionCredential::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_table(Table::drop().table(OauthClient::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Client {
    Table,
    Id,
}

#[derive(DeriveIden)]
#[expect(
    clippy::enum_variant_names,
    reason = "the OAuth application's client id column is `oauth_client_id`"
)]
enum OauthClient {
    Table,
    ClientId,
    PlatformKey,
    OauthClientId,
    Updated,
    KeyId,
    Nonce,
    Ciphertext,
}

#[derive(DeriveIden)]
enum ConnectionCredential {
    Table,
    RefreshLeaseOwner,
    RefreshLeaseExpiresAt,
}
