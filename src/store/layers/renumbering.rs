//! A resync's renumbering kept with the generation it numbered
//! (`record_generation.renumbered_from` and `renumbering`), so that any
//! process reading that generation's lists can carry over what it
//! remembered of the previous one (`sync::list_orders`).

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use entity::record_generation;

use super::LayerMap;

/// Keeps with `generation` that it was numbered from `previous` as `map`
/// says (the previous generation as the base, the stamped rows as the
/// delta).
pub async fn keep(
    db: &impl ConnectionTrait,
    generation: i64,
    previous: i64,
    map: &LayerMap,
) -> Result<(), sea_orm::DbErr> {
    record_generation::Entity::update_many()
        .col_expr(
            record_generation::Column::RenumberedFrom,
            Expr::value(previous),
        )
        .col_expr(
            record_generation::Column::Renumbering,
            Expr::value(map.packed()),
        )
        .filter(record_generation::Column::Generation.eq(generation))
        .exec(db)
        .await?;
    Ok(())
}

/// The generation `generation` was numbered from, when a resync kept its
/// renumbering.
pub async fn renumbered_from(
    db: &impl ConnectionTrait,
    generation: i64,
) -> Result<Option<i64>, sea_orm::DbErr> {
    let from: Option<Option<i64>> = record_generation::Entity::find_by_id(generation)
        .select_only()
        .column(record_generation::Column::RenumberedFrom)
        .into_tuple()
        .one(db)
        .await?;
    Ok(from.flatten())
}

/// How `generation` was numbered from the generation
/// [`renumbered_from`] names; `None` when no renumbering was kept or it
/// does not read.
pub async fn renumbering(
    db: &impl ConnectionTrait,
    generation: i64,
) -> Result<Option<LayerMap>, sea_orm::DbErr> {
    let packed: Option<Option<Vec<u8>>> = record_generation::Entity::find_by_id(generation)
        .select_only()
        .column(record_generation::Column::Renumbering)
        .into_tuple()
        .one(db)
        .await?;
    Ok(packed
        .flatten()
        .and_then(|bytes| LayerMap::unpacked(&bytes)))
}
