//! A client's webhook endpoint: where events are sent, which ones, and its
//! signing secrets sealed with AES-256-GCM (the current one, and the one it
//! replaced while that still signs alongside).

use sea_orm::entity::prelude::*;

/// A row of `webhook_endpoint`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_endpoint")]
pub struct Model {
    /// The endpoint's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The client (tenant) whose events it receives.
    pub client_id: Uuid,
    /// The `http` or `https` URL events are posted to.
    pub url: String,
    /// Free text about the endpoint.
    pub description: Option<String>,
    /// The event types it receives, as a JSON array of names; empty: all.
    pub event_types: String,
    /// Whether events are sent to it.
    pub enabled: bool,
    /// Why tributary disabled it (410 Gone, or five days of failures).
    pub disabled_reason: Option<String>,
    /// Since when every attempt has failed; `None` after a success.
    pub failing_since: Option<DateTimeUtc>,
    /// When it was created.
    pub created: DateTimeUtc,
    /// When it was last changed.
    pub updated: DateTimeUtc,
    /// The id of the encryption key that sealed the current secret.
    pub secret_key_id: String,
    /// The current secret's AES-GCM nonce.
    pub secret_nonce: Vec<u8>,
    /// The current signing secret, sealed, with its GCM tag.
    pub secret_ciphertext: Vec<u8>,
    /// The key id of the replaced secret, while it still signs.
    pub previous_key_id: Option<String>,
    /// The replaced secret's nonce.
    pub previous_nonce: Option<Vec<u8>>,
    /// The replaced secret, sealed.
    pub previous_ciphertext: Option<Vec<u8>>,
    /// Until when the replaced secret signs alongside the current one.
    pub previous_expires: Option<DateTimeUtc>,
}

/// Tables an endpoint refers to.
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
