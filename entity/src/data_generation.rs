//! The generation of a connection's data type that readers see: a sync
//! writes a new generation beside it and swaps this pointer atomically.

use sea_orm::entity::prelude::*;

/// A row of `data_generation`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "data_generation")]
pub struct Model {
    /// The connection.
    #[sea_orm(primary_key, auto_increment = false)]
    pub connection_id: Uuid,
    /// The data type.
    #[sea_orm(primary_key, auto_increment = false)]
    pub data_type: String,
    /// The generation readers see.
    pub generation: i64,
    /// How many records it holds.
    pub record_count: i64,
    /// The pull operation that wrote it.
    pub pull_operation_id: Uuid,
    /// When that operation completed.
    pub completed: DateTimeUtc,
}

/// Tables a generation refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The connection.
    #[sea_orm(
        belongs_to = "super::connection::Entity",
        from = "Column::ConnectionId",
        to = "super::connection::Column::Id",
        on_delete = "Cascade"
    )]
    Connection,
}

impl Related<super::connection::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Connection.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
