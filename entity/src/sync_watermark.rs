//! Where a connection's data type's next incremental fetch starts: the
//! platform's time at the start of the last published fetch, and when the
//! last full fetch was published.

use sea_orm::entity::prelude::*;

/// A row of `sync_watermark`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sync_watermark")]
pub struct Model {
    /// The connection.
    #[sea_orm(primary_key, auto_increment = false)]
    pub connection_id: Uuid,
    /// The data type.
    #[sea_orm(primary_key, auto_increment = false)]
    pub data_type: String,
    /// The platform's time (its `Date` header, else tributary's clock) when
    /// the last published fetch began: the next one asks for what changed
    /// since, less the connector's overlap.
    pub changes_since: DateTimeUtc,
    /// When the last full fetch was published (tributary's clock): a
    /// reconciling full fetch is due a set time after it.
    pub full_fetched: DateTimeUtc,
    /// The platform's own cursor the last published fetch ended with, where
    /// it keeps one (Plaid's `next_cursor`): the next fetch resumes there.
    pub cursor: Option<String>,
}

/// Tables a watermark refers to.
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
