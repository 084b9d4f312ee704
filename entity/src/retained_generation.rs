//! A generation a newer sync replaced, kept for a while so that pages
//! pinned to it (through `_links`) can still be read.

use sea_orm::entity::prelude::*;

/// A row of `retained_generation`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "retained_generation")]
pub struct Model {
    /// The connection.
    #[sea_orm(primary_key, auto_increment = false)]
    pub connection_id: Uuid,
    /// The data type.
    #[sea_orm(primary_key, auto_increment = false)]
    pub data_type: String,
    /// The generation kept.
    #[sea_orm(primary_key, auto_increment = false)]
    pub generation: i64,
    /// How many records it holds.
    pub record_count: i64,
    /// When a newer generation replaced it.
    pub superseded: DateTimeUtc,
}

/// Tables a retained generation refers to.
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
