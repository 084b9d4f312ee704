//! The hosted link flow: each tenant's link settings, link sessions (a
//! token's digest, scoped to a company and optionally a connection), and
//! the authorize attempts they make (`state` digests, single use).

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `link_settings`, `link_session` and `link_attempt`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(LinkSettings::Table)
                    .col(uuid(LinkSettings::ClientId).primary_key())
                    .col(string_len_null(LinkSettings::DisplayName, 100))
                    .col(text(LinkSettings::AllowedRedirectUrls))
                    .col(text(LinkSettings::AllowedFrameOrigins))
                    .col(text_null(LinkSettings::FetchOnFirstLink))
                    .col(timestamp_with_time_zone(LinkSettings::Updated))
                    .foreign_key(
                        ForeignKey::create()
                            .from(LinkSettings::Table, LinkSettings::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(LinkSession::Table)
                    .col(uuid(LinkSession::Id).primary_key())
                    .col(uuid(LinkSession::ClientId))
                    .col(uuid(LinkSession::CompanyId))
                    .col(uuid_null(LinkSession::ConnectionId))
                    .col(string_len_null(LinkSession::PlatformKey, 64))
                    .col(text_null(LinkSession::RedirectUrl))
                    .col(string_len_uniq(LinkSession::TokenDigest, 64))
                    .col(string_len_null(LinkSession::BrowserDigest, 64))
                    .col(string_len(LinkSession::Status, 16))
                    .col(text_null(LinkSession::Failure))
                    .col(integer_null(LinkSession::StatusCode))
                    .col(uuid_null(LinkSession::ResultConnectionId))
                    .col(string_len_null(LinkSession::ChosenPlatformKey, 64))
                    .col(text_null(LinkSession::Organizations))
                    .col(string_len_null(LinkSession::GrantKeyId, 64))
                    .col(blob_null(LinkSession::GrantNonce))
                    .col(blob_null(LinkSession::GrantCiphertext))
                    .col(timestamp_with_time_zone(LinkSession::Created))
                    .col(timestamp_with_time_zone(LinkSession::ExpiresAt))
                    .col(timestamp_with_time_zone_null(LinkSession::Ended))
                    .foreign_key(
                        ForeignKey::create()
                            .from(LinkSession::Table, LinkSession::CompanyId)
                            .to(Company::Table, Company::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("link_session_company")
                    .table(LinkSession::Table)
                    .col(LinkSession::CompanyId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(LinkAttempt::Table)
                    .col(string_len(LinkAttempt::StateDigest, 64).primary_key())
                    .col(uuid(LinkAttempt::SessionId))
                    .col(string_len(LinkAttempt::PlatformKey, 64))
                    .col(string_len(LinkAttempt::BrowserDigest, 64))
                    .col(string_len(LinkAttempt::KeyId, 64))
                    .col(blob(LinkAttempt::Nonce))
                    .col(blob(LinkAttempt::Ciphertext))
                    .col(timestamp_with_time_zone(LinkAttempt::Created))
                    .col(timestamp_with_time_zone(LinkAttempt::ExpiresAt))
                    .col(timestamp_with_time_zone_null(LinkAttempt::Used))
                    .foreign_key(
                        ForeignKey::create()
                            .from(LinkAttempt::Table, LinkAttempt::SessionId)
                            .to(LinkSession::Table, LinkSession::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("link_attempt_session")
                    .table(LinkAttempt::Table)
                    .col(LinkAttempt::SessionId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            LinkAttempt::Table.into_iden(),
            LinkSession::Table.into_iden(),
            LinkSettings::Table.into_iden(),
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
}

#[derive(DeriveIden)]
enum Company {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum LinkSettings {
    Table,
    ClientId,
    DisplayName,
    AllowedRedirectUrls,
    AllowedFrameOrigins,
    FetchOnFirstLink,
    Updated,
}

#[derive(DeriveIden)]
enum LinkSession {
    Table,
    Id,
    ClientId,
    CompanyId,
    ConnectionId,
    PlatformKey,
    RedirectUrl,
    TokenDigest,
    BrowserDigest,
    Status,
    Failure,
    StatusCode,
    ResultConnectionId,
    ChosenPlatformKey,
    Organizations,
    GrantKeyId,
    GrantNonce,
    GrantCiphertext,
    Created,
    ExpiresAt,
    Ended,
}

#[derive(DeriveIden)]
enum LinkAttempt {
    Table,
    StateDigest,
    SessionId,
    PlatformKey,
    BrowserDigest,
    KeyId,
    Nonce,
    Ciphertext,
    Created,
    ExpiresAt,
    Used,
}
