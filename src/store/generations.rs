//! `record_generation`, `data_generation` and `retained_generation`: the
//! generations a sync takes, numbered once across every list; which
//! generation of a connection's data type readers see, and how many rows it
//! holds; and the generations newer syncs replaced, kept a while for
//! readers who pinned them.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict, Query};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use uuid::Uuid;

use entity::{
    company, connection, data_generation, record, record_generation, record_staging,
    retained_generation,
};

use super::layers::written::Layer;
use crate::data::DataType;

/// The published data of one connection that readers see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visible {
    /// The connection.
    pub connection_id: Uuid,
    /// Its current generation.
    pub generation: i64,
    /// How many rows the generation holds.
    pub record_count: i64,
    /// When the generation is layered, its base and maps: its own rows
    /// are then only the delta, and every read goes through the layer
    /// ([`super::layers::visible`]). `None` for a full generation.
    pub layer: Option<Arc<Layer>>,
}

/// `visible` with the layer of each layered generation among them, read
/// in one query (the generations' numbers' rows).
async fn with_layers(
    db: &impl ConnectionTrait,
    mut visible: Vec<Visible>,
) -> Result<Vec<Visible>, sea_orm::DbErr> {
    if visible.is_empty() {
        return Ok(visible);
    }
    let layered: Vec<(i64, i64, Vec<u8>)> = record_generation::Entity::find()
        .select_only()
        .column(record_generation::Column::Generation)
        .column(record_generation::Column::Base)
        .column(record_generation::Column::Layer)
        .filter(
            record_generation::Column::Generation.is_in(visible.iter().map(|one| one.generation)),
        )
        .filter(record_generation::Column::Base.is_not_null())
        .filter(record_generation::Column::Layer.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    for (generation, base, bytes) in layered {
        let layer = Layer::unpacked(base, &bytes).ok_or_else(|| {
            sea_orm::DbErr::Custom(format!("generation {generation}'s layer does not read"))
        })?;
        let layer = Arc::new(layer);
        for one in visible
            .iter_mut()
            .filter(|one| one.generation == generation)
        {
            one.layer = Some(Arc::clone(&layer));
        }
    }
    Ok(visible)
}

/// The generation readers currently see, 0 when the data type never synced.
pub async fn current_generation(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
) -> Result<i64, sea_orm::DbErr> {
    Ok(current(db, connection_id, data_type)
        .await?
        .map_or(0, |current| current.generation))
}

/// The generation readers currently see and its size, `None` when the data
/// type never synced.
pub async fn current(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
) -> Result<Option<Visible>, sea_orm::DbErr> {
    let Some(row) =
        data_generation::Entity::find_by_id((connection_id, data_type.name().to_owned()))
            .one(db)
            .await?
    else {
        return Ok(None);
    };
    let visible = Visible {
        connection_id,
        generation: row.generation,
        record_count: row.record_count,
        layer: None,
    };
    Ok(with_layers(db, vec![visible]).await?.pop())
}

/// Takes the next generation number for a sync of a connection's data
/// type, before the sync stages anything under it: greater than every
/// number taken before, for any list. The record tables are keyed by it
/// (with the record's id), so their index entries carry no connection or
/// data type, and a new generation's entries go in at their end.
pub async fn take_generation(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
) -> Result<i64, sea_orm::DbErr> {
    let taken = record_generation::Entity::insert(record_generation::ActiveModel {
        connection_id: Set(connection_id),
        data_type: Set(data_type.name().to_owned()),
        ..Default::default()
    })
    .exec(db)
    .await?;
    Ok(taken.last_insert_id)
}

/// The current generations of `data_type` across the connections of a
/// company of client `client_id`, in one query; empty when the company is
/// not that client's or none of its connections completed a sync.
pub async fn visible_generations(
    db: &impl ConnectionTrait,
    client_id: Uuid,
    company_id: Uuid,
    data_type: DataType,
) -> Result<Vec<Visible>, sea_orm::DbErr> {
    let rows = data_generation::Entity::find()
        .filter(
            data_generation::Column::ConnectionId
                .in_subquery(connections_of_company(client_id, company_id)),
        )
        .filter(data_generation::Column::DataType.eq(data_type.name()))
        .order_by_asc(data_generation::Column::ConnectionId)
        .all(db)
        .await?;
    let visible = rows
        .into_iter()
        .map(|row| Visible {
            connection_id: row.connection_id,
            generation: row.generation,
            record_count: row.record_count,
            layer: None,
        })
        .collect();
    with_layers(db, visible).await
}

/// The ids of the connections of a company of client `client_id`.
fn connections_of_company(
    client_id: Uuid,
    company_id: Uuid,
) -> sea_orm::sea_query::SelectStatement {
    Query::select()
        .column((connection::Entity, connection::Column::Id))
        .from(connection::Entity)
        .inner_join(
            company::Entity,
            Expr::col((company::Entity, company::Column::Id))
                .equals((connection::Entity, connection::Column::CompanyId)),
        )
        .and_where(Expr::col((connection::Entity, connection::Column::CompanyId)).eq(company_id))
        .and_where(Expr::col((company::Entity, company::Column::ClientId)).eq(client_id))
        .to_owned()
}

/// The generations `pinned` names (connection and generation), as readers
/// see them, when each is still readable: the current one, or one
/// superseded after `kept_since`. `None` when any is not (expired, or never
/// the company's); the order is `pinned`'s.
pub async fn pinned_generations(
    db: &impl ConnectionTrait,
    client_id: Uuid,
    company_id: Uuid,
    data_type: DataType,
    pinned: &[(Uuid, i64)],
    kept_since: DateTime<Utc>,
) -> Result<Option<Vec<Visible>>, sea_orm::DbErr> {
    let current = visible_generations(db, client_id, company_id, data_type).await?;
    let retained = retained_generation::Entity::find()
        .filter(
            retained_generation::Column::ConnectionId
                .in_subquery(connections_of_company(client_id, company_id)),
        )
        .filter(retained_generation::Column::DataType.eq(data_type.name()))
        .filter(retained_generation::Column::Superseded.gt(kept_since))
        .all(db)
        .await?;
    let found = pinned.iter().map(|&(connection_id, generation)| {
        let is_it =
            |one: &Visible| one.connection_id == connection_id && one.generation == generation;
        current.iter().find(|one| is_it(one)).cloned().or_else(|| {
            retained
                .iter()
                .map(|row| Visible {
                    connection_id: row.connection_id,
                    generation: row.generation,
                    record_count: row.record_count,
                    layer: None,
                })
                .find(is_it)
        })
    });
    match found.collect::<Option<Vec<Visible>>>() {
        Some(found) => with_layers(db, found).await.map(Some),
        None => Ok(None),
    }
}

/// Points readers at `generation` (inside the caller's transaction). The
/// generation they saw until now is retained from now on (the swap's own
/// time, not `completed`, which was taken before the rows moved), and the
/// one retained before it is not: at most two generations of a list exist
/// at once, the newest and the one it replaced ([`super::cleanup`] deletes
/// the rows of the others).
pub async fn publish(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
    record_count: i64,
    pull_operation_id: Uuid,
    completed: DateTime<Utc>,
) -> Result<(), sea_orm::DbErr> {
    let replaced =
        data_generation::Entity::find_by_id((connection_id, data_type.name().to_owned()))
            .one(db)
            .await?
            .filter(|replaced| replaced.generation != generation);
    if let Some(replaced) = replaced {
        retained_generation::Entity::insert(retained_generation::ActiveModel {
            connection_id: Set(connection_id),
            data_type: Set(data_type.name().to_owned()),
            generation: Set(replaced.generation),
            record_count: Set(replaced.record_count),
            superseded: Set(crate::timestamp::Timestamp::now()),
        })
        .on_conflict_do_nothing()
        .exec(db)
        .await?;
        retained_generation::Entity::delete_many()
            .filter(retained_generation::Column::ConnectionId.eq(connection_id))
            .filter(retained_generation::Column::DataType.eq(data_type.name()))
            .filter(retained_generation::Column::Generation.lt(replaced.generation))
            .exec(db)
            .await?;
    }
    let row = data_generation::ActiveModel {
        connection_id: Set(connection_id),
        data_type: Set(data_type.name().to_owned()),
        generation: Set(generation),
        record_count: Set(record_count),
        pull_operation_id: Set(pull_operation_id),
        completed: Set(completed),
    };
    data_generation::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([
                data_generation::Column::ConnectionId,
                data_generation::Column::DataType,
            ])
            .update_columns([
                data_generation::Column::Generation,
                data_generation::Column::RecordCount,
                data_generation::Column::PullOperationId,
                data_generation::Column::Completed,
            ])
            .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(())
}

/// Keeps readers on `generation`, a connection's current generation of
/// `data_type`, after the sync `pull_operation_id` found the list as it
/// holds it: the generation's row names that sync as its latest. Returns
/// whether readers still saw `generation` (otherwise nothing is written).
pub async fn confirm(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
    pull_operation_id: Uuid,
    completed: DateTime<Utc>,
) -> Result<bool, sea_orm::DbErr> {
    let confirmed = data_generation::Entity::update_many()
        .col_expr(
            data_generation::Column::PullOperationId,
            Expr::value(pull_operation_id),
        )
        .col_expr(data_generation::Column::Completed, Expr::value(completed))
        .filter(data_generation::Column::ConnectionId.eq(connection_id))
        .filter(data_generation::Column::DataType.eq(data_type.name()))
        .filter(data_generation::Column::Generation.eq(generation))
        .exec(db)
        .await?;
    Ok(confirmed.rows_affected == 1)
}

/// How many rows of a connection's data type exist that readers cannot
/// reach: every staged row, and the published rows of generations neither
/// current nor retained nor the base of a layered one (a run that did not
/// complete leaves none behind; for tests and checks).
pub async fn unreachable_rows(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
) -> Result<u64, sea_orm::DbErr> {
    let numbers = Query::select()
        .column(record_generation::Column::Generation)
        .from(record_generation::Entity)
        .and_where(Expr::col(record_generation::Column::ConnectionId).eq(connection_id))
        .and_where(Expr::col(record_generation::Column::DataType).eq(data_type.name()))
        .to_owned();
    let mut reachable = Query::select()
        .column(data_generation::Column::Generation)
        .from(data_generation::Entity)
        .and_where(Expr::col(data_generation::Column::ConnectionId).eq(connection_id))
        .and_where(Expr::col(data_generation::Column::DataType).eq(data_type.name()))
        .to_owned();
    reachable.union(
        sea_orm::sea_query::UnionType::All,
        Query::select()
            .column(retained_generation::Column::Generation)
            .from(retained_generation::Entity)
            .and_where(Expr::col(retained_generation::Column::ConnectionId).eq(connection_id))
            .and_where(Expr::col(retained_generation::Column::DataType).eq(data_type.name()))
            .to_owned(),
    );
    // A layered generation's base is read through it.
    reachable.union(
        sea_orm::sea_query::UnionType::All,
        Query::select()
            .column(record_generation::Column::Base)
            .from(record_generation::Entity)
            .and_where(Expr::col(record_generation::Column::ConnectionId).eq(connection_id))
            .and_where(Expr::col(record_generation::Column::DataType).eq(data_type.name()))
            .and_where(Expr::col(record_generation::Column::Base).is_not_null())
            .to_owned(),
    );
    let staged = record_staging::Entity::find()
        .filter(record_staging::Column::Generation.in_subquery(numbers.clone()))
        .count(db)
        .await?;
    let published = record::Entity::find()
        .filter(record::Column::Generation.in_subquery(numbers))
        .filter(record::Column::Generation.not_in_subquery(reachable))
        .count(db)
        .await?;
    Ok(staged + published)
}
