//! A tenant's own OAuth application for one platform: the client id, and
//! the client secret sealed with AES-256-GCM. Used to refresh tokens.

use sea_orm::entity::prelude::*;

/// A row of `oauth_client`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oauth_client")]
pub struct Model {
    /// The tenant (client) that owns the OAuth application.
    #[sea_orm(primary_key, auto_increment = false)]
    pub client_id: Uuid,
    /// The platform's key in the catalogue.
    #[sea_orm(primary_key, auto_increment = false)]
    pub platform_key: String,
    /// The OAuth application's client id (not secret).
    pub oauth_client_id: String,
    /// When it was last set.
    pub updated: DateTimeUtc,
    /// The id of the encryption key that sealed `ciphertext`.
    pub key_id: String,
    /// The AES-GCM nonce.
    pub nonce: Vec<u8>,
    /// The sealed client secret, with its GCM tag.
    pub ciphertext: Vec<u8>,
}

/// Tables an OAuth client refers to.
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

impl Related<super::client::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Client.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
