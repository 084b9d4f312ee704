//! A failed pull operation keeps what the client can do about it beside its
//! message (`error_remedy`, JSON): the domain names the action, the API
//! words it, so stored messages carry no URLs.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

/// Adds `pull_operation.error_remedy`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(PullOperation::Table)
                    .add_column(text_null(PullOperation::ErrorRemedy))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(PullOperation::Table)
                    .drop_column(PullOperation::ErrorRemedy)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum PullOperation {
    Table,
    ErrorRemedy,
}
