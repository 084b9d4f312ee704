//! `record` loses its foreign key to `connection` on PostgreSQL: the key
//! was checked once per row inserted, 2-3 s of a million-record sync, and
//! deleting a connection or company now deletes its records itself (as it
//! already did its staged rows). SQLite keeps the key: dropping a
//! constraint there means rebuilding the table, and its check is cheap.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

/// Drops `record_connection_id_fkey` (PostgreSQL).
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared(
                "ALTER TABLE record DROP CONSTRAINT IF EXISTS record_connection_id_fkey",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared(
                "ALTER TABLE record ADD CONSTRAINT record_connection_id_fkey \
                 FOREIGN KEY (connection_id) REFERENCES connection (id) ON DELETE CASCADE",
            )
            .await?;
        Ok(())
    }
}
