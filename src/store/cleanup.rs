//! Deleting what readers no longer see: superseded and abandoned
//! generations, a run's staging, and the staged rows of a deleted
//! connection or company (the staging table has no foreign key to cascade
//! from).

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use uuid::Uuid;

use entity::{record, record_staging};

use crate::data::DataType;

/// Which generations of a connection's data type to delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generations {
    /// Exactly this one (a run's own staging).
    Exactly(i64),
    /// Every one newer than this (leftovers of abandoned runs, never published).
    Above(i64),
    /// Every one older than this (superseded by a published one).
    Below(i64),
}

/// Deletes the rows of `data_type` of a connection in `which` generations,
/// staged or published.
pub async fn delete_generations(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    which: Generations,
) -> Result<(), sea_orm::DbErr> {
    let in_staging = match which {
        Generations::Exactly(value) => record_staging::Column::Generation.eq(value),
        Generations::Above(value) => record_staging::Column::Generation.gt(value),
        Generations::Below(value) => record_staging::Column::Generation.lt(value),
    };
    record_staging::Entity::delete_many()
        .filter(record_staging::Column::ConnectionId.eq(connection_id))
        .filter(record_staging::Column::DataType.eq(data_type.name()))
        .filter(in_staging)
        .exec(db)
        .await?;
    let published = match which {
        Generations::Exactly(value) => record::Column::Generation.eq(value),
        Generations::Above(value) => record::Column::Generation.gt(value),
        Generations::Below(value) => record::Column::Generation.lt(value),
    };
    record::Entity::delete_many()
        .filter(record::Column::ConnectionId.eq(connection_id))
        .filter(record::Column::DataType.eq(data_type.name()))
        .filter(published)
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes the staged (unpublished) rows of a connection's data type, of
/// every generation up to `through` (all of them when `None`). A run that
/// has just published passes its own generation: the next run may already
/// be staging the one after.
pub async fn clear_staging(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    through: Option<i64>,
) -> Result<(), sea_orm::DbErr> {
    let mut delete = record_staging::Entity::delete_many()
        .filter(record_staging::Column::ConnectionId.eq(connection_id))
        .filter(record_staging::Column::DataType.eq(data_type.name()));
    if let Some(through) = through {
        delete = delete.filter(record_staging::Column::Generation.lte(through));
    }
    delete.exec(db).await?;
    Ok(())
}

/// Whose staged rows [`delete_staging`] deletes.
#[derive(Debug, Clone, Copy)]
pub enum StagingOf {
    /// One connection's.
    Connection(Uuid),
    /// Every connection's of a company.
    Company(Uuid),
}

/// Deletes staged rows of a deleted connection or company. Run after the
/// delete, in its transaction: a sync still running for them can stage
/// nothing more, as its next write finds its pull operation gone.
pub async fn delete_staging(
    db: &impl ConnectionTrait,
    of: StagingOf,
) -> Result<(), sea_orm::DbErr> {
    let whose = match of {
        StagingOf::Connection(id) => record_staging::Column::ConnectionId.eq(id),
        StagingOf::Company(id) => record_staging::Column::CompanyId.eq(id),
    };
    record_staging::Entity::delete_many()
        .filter(whose)
        .exec(db)
        .await?;
    Ok(())
}
