//! One record of a layered generation by its id: its delta's row when the
//! sync changed or added it, else its base's unless the layer hides it
//! (a record that left the list). Two primary-key probes at most.

use sea_orm::ConnectionTrait;

use super::LayerMap;
use crate::store::lookups::each_looked_up;

/// The JSON of the record `record_id` in the layered generation `map`
/// describes (base rows under `base`, delta rows under `delta`); `None`
/// when it holds no such record.
pub async fn find(
    db: &impl ConnectionTrait,
    (base, delta): (i64, i64),
    map: &LayerMap,
    record_id: &str,
) -> Result<Option<String>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let wanted = || std::iter::once(sea_orm::Value::from(record_id));
    let in_delta = each_looked_up(backend, delta, "record_id", "body", wanted());
    if let Some(row) = db.query_one_raw(in_delta).await? {
        return Ok(Some(row.try_get("", "body")?));
    }
    let in_base = each_looked_up(backend, base, "record_id", "ordinal, body", wanted());
    let Some(row) = db.query_one_raw(in_base).await? else {
        return Ok(None);
    };
    let ordinal: i64 = row.try_get("", "ordinal")?;
    let kept = u32::try_from(ordinal)
        .ok()
        .and_then(|ordinal| map.base_position(ordinal))
        .is_some();
    Ok(if kept {
        Some(row.try_get("", "body")?)
    } else {
        None
    })
}
