//! A request to sync (`POST .../data/all` or `.../data/queue/{dataType}`):
//! completed once every pull operation it queued has ended.

use sea_orm::entity::prelude::*;

/// A row of `sync_request`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sync_request")]
pub struct Model {
    /// The request's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The company synced.
    pub company_id: Uuid,
    /// When it was made.
    pub created: DateTimeUtc,
    /// When its last pull operation ended; `None` until then.
    pub completed: Option<DateTimeUtc>,
}

/// Tables a sync request refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The company.
    #[sea_orm(
        belongs_to = "super::company::Entity",
        from = "Column::CompanyId",
        to = "super::company::Column::Id",
        on_delete = "Cascade"
    )]
    Company,
}

impl Related<super::company::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Company.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
