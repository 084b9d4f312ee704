//! A serving process, as its heartbeat last recorded it.

use sea_orm::entity::prelude::*;

/// A row of `server_instance`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "server_instance")]
pub struct Model {
    /// The process's id, new at each start.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// When its heartbeat last ran.
    pub last_seen: DateTimeUtc,
}

/// No relations.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
