//! Records the platform deleted: those of the previous generation that a
//! sync did not bring back, read in batches so that the run can stage them
//! again, flagged (`data::records::deleted`).

use sea_orm::{ConnectionTrait, Statement};
use uuid::Uuid;

use crate::data::{DataType, Row};

/// How many missing records one read returns.
pub const MISSING_BATCH: u64 = 1_000;

/// Up to [`MISSING_BATCH`] records of the connection's `previous`
/// generation of `data_type` that generation `staged` has not staged, by
/// record id after `after`: a keyset walk, so that the whole previous list is
/// compared once however many batches it takes.
pub async fn missing(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    previous: i64,
    staged: i64,
    after: Option<&str>,
) -> Result<Vec<Row>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let mut values: Vec<sea_orm::Value> = vec![
        connection_id.into(),
        data_type.name().into(),
        previous.into(),
        staged.into(),
    ];
    let after = match after {
        Some(after) => {
            values.push(after.into());
            " AND p.record_id > $5"
        }
        None => "",
    };
    let sql = format!(
        "SELECT p.record_id, p.sort_key, p.filter_value, p.body FROM record p \
         WHERE p.connection_id = $1 AND p.data_type = $2 AND p.generation = $3{after} \
         AND NOT EXISTS (SELECT 1 FROM record_staging s WHERE s.connection_id = $1 \
                         AND s.data_type = $2 AND s.generation = $4 AND s.record_id = p.record_id) \
         ORDER BY p.record_id LIMIT {MISSING_BATCH}"
    );
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
        .await?;
    rows.iter()
        .map(|row| {
            let filter_value: Option<String> = row.try_get("", "filter_value")?;
            Ok(Row {
                id: row.try_get("", "record_id")?,
                sort_key: row.try_get("", "sort_key")?,
                filter_value: filter_value.map(Into::into),
                body: row.try_get("", "body")?,
            })
        })
        .collect()
}
