//! A client: the tenant that owns API keys and everything created with them.

use sea_orm::entity::prelude::*;

/// A row of `client`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "client")]
pub struct Model {
    /// The client's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The client's unique name, as given to `tributary api-key create --client`.
    #[sea_orm(unique)]
    pub name: String,
    /// When the client was created.
    pub created: DateTimeUtc,
}

/// Tables that refer to a client.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The client's API keys.
    #[sea_orm(has_many = "super::api_key::Entity")]
    ApiKey,
    /// The client's companies.
    #[sea_orm(has_many = "super::company::Entity")]
    Company,
}

impl Related<super::api_key::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ApiKey.def()
    }
}

impl Related<super::company::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Company.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
