//! A company: one end customer of a client, owner of data connections.

use sea_orm::entity::prelude::*;

/// A row of `company`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "company")]
pub struct Model {
    /// The company's id, `companyId` in the API.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The client (tenant) that owns the company.
    pub client_id: Uuid,
    /// Display name, trimmed, 1 to 200 characters.
    pub name: String,
    /// Optional free text, up to 2000 characters.
    pub description: Option<String>,
    /// When the company was created.
    pub created: DateTimeUtc,
    /// When a sync of the company's data last completed.
    pub last_sync: Option<DateTimeUtc>,
}

/// Tables a company refers to.
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
