//! One company of a migration batch: the partner's reference, the company
//! and connection it got, its state, its tokens sealed until they are
//! stored on the connection, and a worker's lease on it.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

/// Where a migration row stands.
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
pub enum RowState {
    /// Not imported yet; its tokens wait sealed.
    #[sea_orm(string_value = "Pending")]
    Pending,
    /// Its company and connection exist and hold its tokens (the row's own
    /// copy is gone).
    #[sea_orm(string_value = "Imported")]
    Imported,
    /// The platform accepted its tokens.
    #[sea_orm(string_value = "Verified")]
    Verified,
    /// Its first sync is running.
    #[sea_orm(string_value = "Syncing")]
    Syncing,
    /// Its first sync completed.
    #[sea_orm(string_value = "Synced")]
    Synced,
    /// It stopped: `failure` says why and `remedy` what to do.
    #[sea_orm(string_value = "Failed")]
    Failed,
    /// The batch was cancelled before it was imported; its tokens were dropped.
    #[sea_orm(string_value = "Cancelled")]
    Cancelled,
}

/// A row of `migration_row`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "migration_row")]
pub struct Model {
    /// The row's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// Its batch.
    pub batch_id: Uuid,
    /// The client (the batch's), for finding earlier rows of a reference.
    pub client_id: Uuid,
    /// The platform (the batch's).
    pub platform_key: String,
    /// Its place in the batch, from 0.
    pub position: i32,
    /// The partner's reference for the company.
    pub external_reference: String,
    /// The name of the company to create, when none was named by id.
    pub company_name: Option<String>,
    /// The company, once known (given, found or created).
    pub company_id: Option<Uuid>,
    /// The connection, once created or found.
    pub connection_id: Option<Uuid>,
    /// The platform's organization id from its authorization body (not secret).
    pub organization_id: String,
    /// Where it stands.
    pub state: RowState,
    /// The key sealing its tokens, until they are stored on the connection.
    pub key_id: Option<String>,
    /// The nonce of its sealed tokens.
    pub nonce: Option<Vec<u8>>,
    /// Its sealed tokens; `None` once stored on the connection or dropped.
    pub ciphertext: Option<Vec<u8>>,
    /// Attempts at its current step that found the platform unavailable.
    pub attempts: i32,
    /// Not before this time (a platform asked to wait).
    pub next_attempt: Option<DateTimeUtc>,
    /// The worker advancing it now, if any.
    pub lease_owner: Option<String>,
    /// Until when that worker holds it.
    pub lease_expires: Option<DateTimeUtc>,
    /// Its first sync's request, once queued.
    pub sync_request_id: Option<Uuid>,
    /// Whether verifying it refreshed its tokens.
    pub refreshed: bool,
    /// Records its first sync fetched, per data type (JSON object).
    pub records: Option<String>,
    /// Why it failed.
    pub failure: Option<String>,
    /// What to do about the failure.
    pub remedy: Option<String>,
    /// When it was imported.
    pub imported: Option<DateTimeUtc>,
    /// When its tokens were verified.
    pub verified: Option<DateTimeUtc>,
    /// When its first sync completed.
    pub synced: Option<DateTimeUtc>,
    /// When it last changed.
    pub updated: DateTimeUtc,
}

/// Tables a row refers to.
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
