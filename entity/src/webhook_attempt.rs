//! One attempt to deliver an event: when, what the endpoint answered and
//! how long it took. Never a secret, never the endpoint's answer body.

use sea_orm::entity::prelude::*;

/// A row of `webhook_attempt`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_attempt")]
pub struct Model {
    /// The attempt's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The delivery it was for.
    pub delivery_id: Uuid,
    /// When it was made.
    pub attempted: DateTimeUtc,
    /// The HTTP status the endpoint answered; `None` when none came.
    pub status_code: Option<i32>,
    /// How long it took, in milliseconds.
    pub duration_ms: i64,
    /// `Succeeded`, `Failed`, `Timeout` or `Unreachable`.
    pub outcome: String,
    /// What went wrong, in words (no secret, no answer body).
    pub error: Option<String>,
}

/// Tables an attempt refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The delivery.
    #[sea_orm(
        belongs_to = "super::webhook_delivery::Entity",
        from = "Column::DeliveryId",
        to = "super::webhook_delivery::Column::Id",
        on_delete = "Cascade"
    )]
    Delivery,
}

impl Related<super::webhook_delivery::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Delivery.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
