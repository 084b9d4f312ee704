//! Reading one synced record by its platform id in the generations readers
//! see (one primary-key lookup per connection).

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;

use entity::record;

use super::generations::Visible;
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
    let generations = visible.iter().fold(Condition::any(), |any, one| {
        any.add(
            Condition::all()
                .add(record::Column::ConnectionId.eq(one.connection_id))
                .add(record::Column::Generation.eq(one.generation)),
        )
    });
    record::Entity::find()
        .select_only()
        .column(record::Column::ConnectionId)
        .column(record::Column::Body)
        .filter(record::Column::DataType.eq(data_type.name()))
        .filter(record::Column::RecordId.eq(record_id))
        .filter(generations)
        .order_by_asc(record::Column::ConnectionId)
        .into_tuple()
        .all(db)
        .await
}
