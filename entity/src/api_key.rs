//! An API key, stored only as the SHA-256 digest of the key.

use sea_orm::entity::prelude::*;

/// A row of `api_key`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_key")]
pub struct Model {
    /// The key's id (not secret; safe to log).
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The client the key authenticates as.
    pub client_id: Uuid,
    /// Lower-case hex SHA-256 of the key.
    #[sea_orm(unique)]
    pub key_hash: String,
    /// When the key was created.
    pub created: DateTimeUtc,
    /// What the key is for, as its creator named it (not secret).
    pub name: String,
    /// When the key last authenticated a request, to within the key cache's
    /// lifetime; `None` if never.
    pub last_used: Option<DateTimeUtc>,
}

/// Tables an API key refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The owning client.
    #[sea_orm(
        belongs_to = "super::client::Entity",
        from = "Column::ClientId",
        to = "super::client::Column::Id",
        on_delete = "Cascade"
    )]
    Client,
}

impl Related<super::client::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Client.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
