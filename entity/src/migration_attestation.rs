//! A checklist step of a migration batch that a person attested: who, when,
//! and an optional note.

use sea_orm::entity::prelude::*;

/// A row of `migration_attestation`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "migration_attestation")]
pub struct Model {
    /// The batch.
    #[sea_orm(primary_key, auto_increment = false)]
    pub batch_id: Uuid,
    /// The step's name (`callbackUrlAdded`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub step: String,
    /// The person who attested it, as they named themselves.
    pub attested_by: String,
    /// What they added.
    pub note: Option<String>,
    /// When.
    pub attested: DateTimeUtc,
}

/// Tables an attestation refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The batch.
    #[sea_orm(
        belongs_to = "super::migration_batch::Entity",
        from = "Column::BatchId",
        to = "super::migration_batch::Column::Id",
        on_delete = "Cascade"
    )]
    Batch,
}

impl Related<super::migration_batch::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Batch.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
