//! A managed migration batch: one platform, its options, the canary row,
//! and where the batch stands (checklist, canary, the rest, done).

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

/// Where a migration batch stands.
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
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(24))")]
pub enum BatchState {
    /// Stored and validated; waiting for its checklist and `POST .../start`.
    #[sea_orm(string_value = "Draft")]
    Draft,
    /// The canary row is being imported, verified and synced.
    #[sea_orm(string_value = "Canary")]
    Canary,
    /// The canary passed: waiting for `POST .../proceed`.
    #[sea_orm(string_value = "AwaitingProceed")]
    AwaitingProceed,
    /// The canary failed (`failure` says why); nothing else was imported.
    /// `POST .../start` runs the canary again.
    #[sea_orm(string_value = "CanaryFailed")]
    CanaryFailed,
    /// The remaining rows are being imported.
    #[sea_orm(string_value = "Running")]
    Running,
    /// Every row has ended (some may have failed: see the counts).
    #[sea_orm(string_value = "Completed")]
    Completed,
    /// Cancelled: rows not yet imported were dropped with their tokens.
    #[sea_orm(string_value = "Cancelled")]
    Cancelled,
}

/// A row of `migration_batch`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "migration_batch")]
pub struct Model {
    /// The batch's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The client it belongs to.
    pub client_id: Uuid,
    /// The platform every row migrates from.
    pub platform_key: String,
    /// The partner's reference for the whole batch (re-sending it finds this batch).
    pub reference: Option<String>,
    /// Where it stands.
    pub state: BatchState,
    /// Whether each row's tokens are proved with the platform.
    pub verify: bool,
    /// Whether each row is synced after its import (the canary always is).
    pub sync: bool,
    /// The row imported first, alone.
    pub canary_row_id: Uuid,
    /// How many rows it has.
    pub row_count: i32,
    /// Why the canary failed, while `CanaryFailed`.
    pub failure: Option<String>,
    /// When it was created.
    pub created: DateTimeUtc,
    /// When its canary was (last) started.
    pub started: Option<DateTimeUtc>,
    /// When the rest was allowed to proceed.
    pub proceeded: Option<DateTimeUtc>,
    /// When its last row ended, or it was cancelled.
    pub completed: Option<DateTimeUtc>,
}

/// Tables a batch refers to.
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
