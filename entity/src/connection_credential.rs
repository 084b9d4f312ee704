//! A connection's credential: the authorization body sealed with
//! AES-256-GCM, beside the non-secret facts the API shows.

use sea_orm::entity::prelude::*;

/// A row of `connection_credential`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "connection_credential")]
pub struct Model {
    /// The connection this credential authorizes.
    #[sea_orm(primary_key, auto_increment = false)]
    pub connection_id: Uuid,
    /// The platform's organization identifier (not secret).
    pub organization_id: String,
    /// When the access token expires, if it does.
    pub access_token_expires_at: Option<DateTimeUtc>,
    /// When the authorization was last replaced.
    pub updated: DateTimeUtc,
    /// The id of the encryption key that sealed `ciphertext`.
    pub key_id: String,
    /// The AES-GCM nonce.
    pub nonce: Vec<u8>,
    /// The sealed authorization body (JSON), with its GCM tag.
    pub ciphertext: Vec<u8>,
    /// Who is refreshing the tokens now (one refresh per connection at a time).
    pub refresh_lease_owner: Option<String>,
    /// When that refresh lease lapses, if its holder died.
    pub refresh_lease_expires_at: Option<DateTimeUtc>,
}

/// Tables a credential refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The connection it authorizes.
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
