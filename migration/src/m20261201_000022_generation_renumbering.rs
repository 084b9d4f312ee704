//! `record_generation.renumbered_from` and `renumbering`: for a generation a
//! resync numbered by carrying its previous generation's places over, which
//! generation that was and where each of its rows went (the replaced rows
//! and where the changed ones sit, a few bytes per change), so that the
//! order of a query remembered for the previous generation is carried over
//! too instead of read again from every record.

use sea_orm_migration::prelude::*;

/// Adds the two columns.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(RecordGeneration::Table)
                    .add_column(
                        ColumnDef::new(RecordGeneration::RenumberedFrom)
                            .big_integer()
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(RecordGeneration::Table)
                    .add_column(ColumnDef::new(RecordGeneration::Renumbering).blob().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            RecordGeneration::Renumbering,
            RecordGeneration::RenumberedFrom,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(RecordGeneration::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum RecordGeneration {
    Table,
    RenumberedFrom,
    Renumbering,
}
