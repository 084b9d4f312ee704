//! A pull operation names the records its connector could not read: the
//! first few (`record_issues`, JSON: id, field, reason) and how many in all
//! (`record_issue_count`). One unreadable record costs that record, not the
//! sync.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

/// Adds `pull_operation.record_issues` and `pull_operation.record_issue_count`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite takes one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(PullOperation::Table)
                    .add_column(text_null(PullOperation::RecordIssues))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(PullOperation::Table)
                    .add_column(big_integer(PullOperation::RecordIssueCount).default(0))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [PullOperation::RecordIssueCount, PullOperation::RecordIssues] {
            manager
                .alter_table(
                    Table::alter()
                        .table(PullOperation::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum PullOperation {
    Table,
    RecordIssues,
    RecordIssueCount,
}
