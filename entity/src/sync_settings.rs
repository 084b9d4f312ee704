//! A tenant's sync settings: which data types `POST .../data/all` queues.

use sea_orm::entity::prelude::*;

/// A row of `sync_settings`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sync_settings")]
pub struct Model {
    /// The tenant (client).
    #[sea_orm(primary_key, auto_increment = false)]
    pub client_id: Uuid,
    /// The data types `data/all` queues, as a JSON array of names; null: every one the platform syncs.
    pub data_types: Option<String>,
    /// When they were last set.
    pub updated: DateTimeUtc,
}

/// Tables sync settings refer to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The owning tenant.
    #[sea_orm(
        belongs_to = "super::client::Entity",
        from = "Column::ClientId",
        to = "super::client::Column::Id",
        on_delete = "Cascade"
    )]
    Client,
}

impl ActiveModelBehavior for ActiveModel {}
