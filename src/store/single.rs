//! Reading one synced record by its platform id in the generations readers
//! see (one primary-key lookup per connection).

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use uuid::Uuid;

use entity::record;

use super::generations::Visible;
use super::pages::in_generations;
use crate::data::DataType;

/// The record of `data_type` with the platform id `record_id` in each of
/// the `visible` generations that holds one: `(connection, its JSON)`, by
/// connection id.
pub async fn find(
    db: &impl ConnectionTrait,
    visible: &[Visible],
    data_type: DataType,
    record_id: &str,
) -> Result<Vec<(Uuid, String)>, sea_orm::DbErr> {
    if visible.is_empty() {
        return Ok(Vec::new());
    }
    record::Entity::find()
        .select_only()
        .column(record::Column::ConnectionId)
        .column(record::Column::Body)
        .filter(record::Column::DataType.eq(data_type.name()))
        .filter(record::Column::RecordId.eq(record_id))
        .filter(in_generations(db.get_database_backend(), visible))
        .order_by_asc(record::Column::ConnectionId)
        .into_tuple()
        .all(db)
        .await
}
