//! `record_key`: the values of the fields a data type declares as keys
//! (references, dates, amounts, currency, `modifiedDate`) of a published
//! generation, in value order, with the ordinal of the record holding each,
//! in blocks of a thousand or so (the first and last value of each say which
//! blocks a comparison needs), so a query on them reads its matches without
//! reading the records; and `record_generation.keyed_fields`, the fields a
//! generation's keys were built for (older generations have none and are read
//! as before).

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

/// Creates `record_key` and `record_generation.keyed_fields`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        // Values compare by byte (`COLLATE "C"` on PostgreSQL, SQLite's
        // default), as the lists' own order and the queries compare text.
        // A block's entries are read whole and are mostly integers: stored
        // out of line uncompressed on PostgreSQL, not compressed and
        // decompressed at every read.
        db.execute_unprepared(if manager.get_database_backend() == DbBackend::Postgres {
            "CREATE TABLE record_key (\
               generation BIGINT NOT NULL, field VARCHAR(64) NOT NULL, block INTEGER NOT NULL, \
               first_value TEXT COLLATE \"C\" NOT NULL, last_value TEXT COLLATE \"C\" NOT NULL, \
               size INTEGER NOT NULL, entries BYTEA NOT NULL, \
               PRIMARY KEY (generation, field, block)); \
             ALTER TABLE record_key ALTER COLUMN entries SET STORAGE EXTERNAL"
        } else {
            "CREATE TABLE record_key (\
               generation INTEGER NOT NULL, field varchar(64) NOT NULL, block INTEGER NOT NULL, \
               first_value TEXT NOT NULL, last_value TEXT NOT NULL, \
               size INTEGER NOT NULL, entries BLOB NOT NULL, \
               PRIMARY KEY (generation, field, block))"
        })
        .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(RecordGeneration::Table)
                    .add_column(ColumnDef::new(RecordGeneration::KeyedFields).text().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(RecordGeneration::Table)
                    .drop_column(RecordGeneration::KeyedFields)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_table(Table::drop().table(RecordKey::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum RecordGeneration {
    Table,
    KeyedFields,
}

#[derive(DeriveIden)]
enum RecordKey {
    Table,
}
