//! A partner's reference for a company on one platform, and the company and
//! connection its imports went into: every import of the reference locks
//! this row first, so two imports of it (from two batches, in two
//! processes) never create two companies.

use sea_orm::entity::prelude::*;

/// A row of `migration_reference`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "migration_reference")]
pub struct Model {
    /// The client.
    #[sea_orm(primary_key, auto_increment = false)]
    pub client_id: Uuid,
    /// The platform.
    #[sea_orm(primary_key, auto_increment = false)]
    pub platform_key: String,
    /// The partner's reference.
    #[sea_orm(primary_key, auto_increment = false)]
    pub external_reference: String,
    /// The company its last import went into.
    pub company_id: Option<Uuid>,
    /// The connection its last import went into.
    pub connection_id: Option<Uuid>,
}

/// Tables a reference refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The client.
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
