//! Which pull operations a sync request queued (or joined, when one was
//! already queued or running).

use sea_orm::entity::prelude::*;

/// A row of `sync_request_operation`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sync_request_operation")]
pub struct Model {
    /// The request.
    #[sea_orm(primary_key, auto_increment = false)]
    pub request_id: Uuid,
    /// One of its pull operations.
    #[sea_orm(primary_key, auto_increment = false)]
    pub operation_id: Uuid,
}

/// Tables it refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The request.
    #[sea_orm(
        belongs_to = "super::sync_request::Entity",
        from = "Column::RequestId",
        to = "super::sync_request::Column::Id",
        on_delete = "Cascade"
    )]
    Request,
    /// The pull operation.
    #[sea_orm(
        belongs_to = "super::pull_operation::Entity",
        from = "Column::OperationId",
        to = "super::pull_operation::Column::Id",
        on_delete = "Cascade"
    )]
    Operation,
}

impl Related<super::sync_request::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Request.def()
    }
}

impl Related<super::pull_operation::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Operation.def()
    }
}

impl Related<Entity> for super::pull_operation::Entity {
    fn to() -> RelationDef {
        Relation::Operation.def().rev()
    }
}

impl ActiveModelBehavior for ActiveModel {}
