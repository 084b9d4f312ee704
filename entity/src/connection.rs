//! A data connection: one company's link to one platform.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

/// A row of `connection`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "connection")]
pub struct Model {
    /// The connection's id, `connectionId` in the API.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The company the connection belongs to.
    pub company_id: Uuid,
    /// The platform's key in the integrations catalogue (`xero`, ...).
    pub platform_key: String,
    /// Where the connection stands.
    pub status: ConnectionStatus,
    /// When the connection was created.
    pub created: DateTimeUtc,
    /// When a sync of the connection's data last completed.
    pub last_sync: Option<DateTimeUtc>,
}

/// Where a connection stands.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    EnumIter,
    DeriveActiveEnum,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
pub enum ConnectionStatus {
    /// Created, not yet authorized.
    #[sea_orm(string_value = "PendingAuth")]
    PendingAuth,
    /// Authorized and usable.
    #[sea_orm(string_value = "Linked")]
    Linked,
    /// Severed by you; its synced data stays readable.
    #[sea_orm(string_value = "Unlinked")]
    Unlinked,
    /// The platform revoked or expired its access; synced data stays readable.
    #[sea_orm(string_value = "Deauthorized")]
    Deauthorized,
}

/// Tables a connection refers to, and that refer to it.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The owning company.
    #[sea_orm(
        belongs_to = "super::company::Entity",
        from = "Column::CompanyId",
        to = "super::company::Column::Id",
        on_delete = "Cascade"
    )]
    Company,
    /// The sealed credential, once authorized.
    #[sea_orm(has_one = "super::connection_credential::Entity")]
    Credential,
}

impl Related<super::company::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Company.def()
    }
}

impl Related<super::connection_credential::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Credential.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
