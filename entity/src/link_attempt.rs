//! One trip to a platform's authorize step from a link session: the `state`
//! it carried (as a digest), the browser and platform it is bound to, and
//! the PKCE verifier (sealed). Used once.

use sea_orm::entity::prelude::*;

/// A row of `link_attempt`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "link_attempt")]
pub struct Model {
    /// SHA-256 (hex) of the `state` sent to the platform.
    #[sea_orm(primary_key, auto_increment = false)]
    pub state_digest: String,
    /// The session.
    pub session_id: Uuid,
    /// The platform the state was issued for.
    pub platform_key: String,
    /// SHA-256 (hex) of the browser secret of the browser that started it.
    pub browser_digest: String,
    /// The id of the key that sealed `ciphertext`.
    pub key_id: String,
    /// The AES-GCM nonce.
    pub nonce: Vec<u8>,
    /// The sealed PKCE verifier and what the customer gave (the shop).
    pub ciphertext: Vec<u8>,
    /// When it was issued.
    pub created: DateTimeUtc,
    /// When it stops being accepted.
    pub expires_at: DateTimeUtc,
    /// When a callback used it.
    pub used: Option<DateTimeUtc>,
}

/// Tables a link attempt refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The session.
    #[sea_orm(
        belongs_to = "super::link_session::Entity",
        from = "Column::SessionId",
        to = "super::link_session::Column::Id",
        on_delete = "Cascade"
    )]
    LinkSession,
}

impl ActiveModelBehavior for ActiveModel {}
