//! Platform limits kept across processes: `platform_pace` holds, per
//! platform, OAuth application and organization, the calls in the
//! platform's rolling window, the calls in progress, a `Retry-After` hold
//! and the day's count.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

/// Creates `platform_pace`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(PlatformPace::Table)
                    .col(string_len(PlatformPace::Key, 64).primary_key())
                    .col(string_len(PlatformPace::Platform, 64))
                    .col(big_integer(PlatformPace::Version))
                    .col(text(PlatformPace::Calls))
                    .col(text(PlatformPace::InFlight))
                    .col(big_integer(PlatformPace::HoldUntil))
                    .col(big_integer(PlatformPace::Day))
                    .col(big_integer(PlatformPace::DayCalls))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(PlatformPace::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum PlatformPace {
    Table,
    Key,
    Platform,
    Version,
    Calls,
    InFlight,
    HoldUntil,
    Day,
    DayCalls,
}
