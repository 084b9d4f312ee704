//! Writing a running sync's pages into `record_staging`, under the
//! generation it will publish.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, DbBackend, EntityTrait, Set, Statement};
use serde::Serialize;
use uuid::Uuid;

use entity::record_staging;

use crate::data::records::{Row, Stamp};
use crate::data::{DataType, Records};
use crate::error::Error;
use crate::timestamp::Timestamp;

/// Rows per insert statement on SQLite (8 values a row, well under its limit).
const INSERT_BATCH: usize = 500;

/// Where a page of staged rows belongs.
#[derive(Debug, Clone, Copy)]
pub struct Staging {
    /// The connection synced.
    pub connection_id: Uuid,
    /// Its company.
    pub company_id: Uuid,
    /// The generation being written.
    pub generation: i64,
    /// When our copy changes (the `modifiedDate` of every row written).
    pub modified: DateTime<Utc>,
}

/// Writes one page of records into the staging table. A record the platform
/// sent twice is kept once, as last sent ([`Records::rows`]).
///
/// On PostgreSQL the page goes as one JSON parameter that the server
/// expands with `json_to_recordset`: one short statement per page instead
/// of eight bound values per row, which is most of a large sync's time.
pub async fn stage(
    db: &impl ConnectionTrait,
    staging: Staging,
    records: &Records,
) -> Result<(), Error> {
    let stamp = Stamp {
        connection_id: staging.connection_id,
        modified: Timestamp(staging.modified),
    };
    let rows = records.rows(&stamp).map_err(Error::internal)?;
    if rows.is_empty() {
        return Ok(());
    }
    let data_type = records.data_type();
    if db.get_database_backend() == DbBackend::Postgres {
        return stage_as_json(db, staging, data_type, &rows).await;
    }
    for batch in rows.chunks(INSERT_BATCH) {
        let models = batch.iter().map(|row| record_staging::ActiveModel {
            connection_id: Set(staging.connection_id),
            data_type: Set(data_type.name().to_owned()),
            generation: Set(staging.generation),
            record_id: Set(row.id.clone()),
            company_id: Set(staging.company_id),
            sort_key: Set(row.sort_key.clone()),
            filter_value: Set(row.filter_value.as_deref().map(str::to_owned)),
            body: Set(row.body.clone()),
        });
        record_staging::Entity::insert_many(models)
            .on_conflict(
                OnConflict::columns([
                    record_staging::Column::ConnectionId,
                    record_staging::Column::DataType,
                    record_staging::Column::Generation,
                    record_staging::Column::RecordId,
                ])
                .update_columns([
                    record_staging::Column::CompanyId,
                    record_staging::Column::SortKey,
                    record_staging::Column::FilterValue,
                    record_staging::Column::Body,
                ])
                .to_owned(),
            )
            .exec(db)
            .await?;
    }
    Ok(())
}

/// A staged row as PostgreSQL's `json_to_recordset` reads it. The body goes
/// in as a string within the page's JSON: PostgreSQL then parses it once, as
/// part of the page, instead of validating every body again as `json` (the
/// serializer wrote it; it is valid).
#[derive(Serialize)]
struct JsonRow<'a> {
    record_id: &'a str,
    sort_key: &'a str,
    filter_value: Option<&'a str>,
    body: &'a str,
}

async fn stage_as_json(
    db: &impl ConnectionTrait,
    staging: Staging,
    data_type: DataType,
    rows: &[Row],
) -> Result<(), Error> {
    let page: Vec<JsonRow> = rows
        .iter()
        .map(|row| JsonRow {
            record_id: &row.id,
            sort_key: &row.sort_key,
            filter_value: row.filter_value.as_deref(),
            body: &row.body,
        })
        .collect();
    let page = serde_json::to_string(&page).map_err(Error::internal)?;
    db.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        STAGE_FROM_JSON,
        [
            staging.connection_id.into(),
            data_type.name().into(),
            staging.generation.into(),
            staging.company_id.into(),
            page.into(),
        ],
    ))
    .await?;
    Ok(())
}

/// `$1` connection, `$2` data type, `$3` generation, `$4` company, `$5` the rows.
const STAGE_FROM_JSON: &str = "INSERT INTO record_staging (connection_id, data_type, generation, \
     record_id, company_id, sort_key, filter_value, body) \
     SELECT $1, $2, $3, record_id, $4, sort_key, filter_value, body \
     FROM json_to_recordset($5::json) AS page(record_id text, sort_key text, filter_value text, \
     body text) \
     ON CONFLICT (connection_id, data_type, generation, record_id) DO UPDATE SET \
     company_id = excluded.company_id, sort_key = excluded.sort_key, \
     filter_value = excluded.filter_value, body = excluded.body";
