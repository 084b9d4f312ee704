//! One event on its way to one endpoint: its state, how many attempts it
//! took, when the next is due, and the deliverer's lease on it.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

/// Where a delivery stands.
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
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(16))")]
pub enum DeliveryStatus {
    /// Not delivered yet: an attempt is due at `nextAttempt`.
    #[sea_orm(string_value = "Pending")]
    Pending,
    /// The endpoint answered 2xx.
    #[sea_orm(string_value = "Succeeded")]
    Succeeded,
    /// Every attempt failed, or the endpoint answered 410 Gone; no more attempts.
    #[sea_orm(string_value = "Failed")]
    Failed,
}

/// A row of `webhook_delivery`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_delivery")]
pub struct Model {
    /// The delivery's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The event delivered.
    pub message_id: Uuid,
    /// Where to.
    pub endpoint_id: Uuid,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts made so far.
    pub attempts: i32,
    /// When the next attempt is due, while `Pending`.
    pub next_attempt: Option<DateTimeUtc>,
    /// The deliverer attempting it now, if any.
    pub lease_owner: Option<String>,
    /// Until when that deliverer holds it.
    pub lease_expires: Option<DateTimeUtc>,
    /// When it was queued (the event, a retry or a replay).
    pub created: DateTimeUtc,
}

/// Tables a delivery refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The event.
    #[sea_orm(
        belongs_to = "super::webhook_message::Entity",
        from = "Column::MessageId",
        to = "super::webhook_message::Column::Id",
        on_delete = "Cascade"
    )]
    Message,
    /// The endpoint.
    #[sea_orm(
        belongs_to = "super::webhook_endpoint::Entity",
        from = "Column::EndpointId",
        to = "super::webhook_endpoint::Column::Id",
        on_delete = "Cascade"
    )]
    Endpoint,
}

impl Related<super::webhook_message::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Message.def()
    }
}

impl Related<super::webhook_endpoint::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Endpoint.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
