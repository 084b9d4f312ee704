//! Stored records gain `isDeleted` (false): the field every record now
//! has, so that records synced before it read like those synced after. A
//! record's JSON written by a sync ends with its `modifiedDate` in a fixed
//! width (45 characters from `"modifiedDate"` to the closing brace), and
//! the flag goes before it; one written by the generic-records migration
//! (`modifiedDate` before `sourceModifiedDate`) gets it last.

use sea_orm_migration::prelude::*;

/// Rewrites the JSON of every stored and staged record.
#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLES: [&str; 2] = ["record", "record_staging"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for table in TABLES {
            db.execute_unprepared(&format!(
                "UPDATE {table} SET body = substr(body, 1, length(body) - 45) \
                 || '\"isDeleted\":false,' || substr(body, length(body) - 44) \
                 WHERE substr(body, length(body) - 44, 16) = '\"modifiedDate\":\"'"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "UPDATE {table} SET body = substr(body, 1, length(body) - 1) \
                 || ',\"isDeleted\":false}}' \
                 WHERE body NOT LIKE '%\"isDeleted\":%' AND body LIKE '{{%}}'"
            ))
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for table in TABLES {
            db.execute_unprepared(&format!(
                "UPDATE {table} SET body = substr(body, 1, length(body) - 63) \
                 || substr(body, length(body) - 44) \
                 WHERE substr(body, length(body) - 62, 18) = '\"isDeleted\":false,'"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "UPDATE {table} SET body = substr(body, 1, length(body) - 19) || '}}' \
                 WHERE substr(body, length(body) - 18) = ',\"isDeleted\":false}}'"
            ))
            .await?;
        }
        Ok(())
    }
}
