//! An event for a client's webhooks, written in the same transaction as the
//! change that caused it: the outbox the deliverer sends from.

use sea_orm::entity::prelude::*;

/// A row of `webhook_message`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_message")]
pub struct Model {
    /// The event's id: the envelope's `id` and the `webhook-id` header.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The client (tenant) it is for.
    pub client_id: Uuid,
    /// Its type (`company.created`).
    pub event_type: String,
    /// When it happened.
    pub created: DateTimeUtc,
    /// The envelope `{id, type, timestamp, data}` exactly as it is sent and signed.
    pub payload: String,
}

/// Tables a message refers to.
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
