//! `record_generation.base` and `layer`: for a layered generation, the full
//! generation it reads its unchanged rows from, and how its positions map
//! to that base's rows and its own (the whole list's map, then one per
//! filter value its change touched, packed: `store::layers::written`). A
//! full generation has neither.

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
                    .add_column(ColumnDef::new(RecordGeneration::Base).big_integer().null())
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(RecordGeneration::Table)
                    .add_column(ColumnDef::new(RecordGeneration::Layer).blob().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [RecordGeneration::Layer, RecordGeneration::Base] {
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
    Base,
    Layer,
}
