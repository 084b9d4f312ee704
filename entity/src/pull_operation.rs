//! A pull operation: the sync of one data type of one connection, queued,
//! claimed by a worker under a lease, and finished.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

/// A row of `pull_operation`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "pull_operation")]
pub struct Model {
    /// The operation's id, `pullOperationId` in the API.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The company whose data it syncs.
    pub company_id: Uuid,
    /// The connection it syncs from.
    pub connection_id: Uuid,
    /// The data type (`invoices`, `customers`).
    pub data_type: String,
    /// Where it stands.
    pub status: PullStatus,
    /// When it was queued.
    pub requested: DateTimeUtc,
    /// When a worker first started it.
    pub started: Option<DateTimeUtc>,
    /// When it finished, in any final status.
    pub completed: Option<DateTimeUtc>,
    /// 0 to 100.
    pub progress: i32,
    /// Records fetched so far.
    pub records_fetched: i64,
    /// Why it failed, for a person to act on.
    pub error_message: Option<String>,
    /// What the client can do about it, as JSON (the domain's `Remedy`).
    pub error_remedy: Option<String>,
    /// The worker holding the lease while `Fetching`.
    pub lease_owner: Option<String>,
    /// When the lease lapses unless renewed.
    pub lease_expires_at: Option<DateTimeUtc>,
    /// How many times a worker claimed it.
    pub attempts: i32,
    /// The first records the connector could not read, as JSON (a list of
    /// `{recordId, field, reason}`); null when none.
    pub record_issues: Option<String>,
    /// How many records the connector could not read, in all.
    pub record_issue_count: i64,
    /// How the run fetched: the platform's whole list or what changed
    /// since the last published fetch; null until a worker decides.
    pub fetch_mode: Option<FetchMode>,
    /// Whether a full fetch was asked for (`?full=true`).
    pub full_requested: bool,
}

/// How a pull operation fetched its data type.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    EnumIter,
    DeriveActiveEnum,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
pub enum FetchMode {
    /// The platform's whole list: records it no longer lists are flagged
    /// deleted. The first sync of a data type, a reconciliation (due a set
    /// time after the last one) and `?full=true` fetch so.
    #[sea_orm(string_value = "Full")]
    Full,
    /// Only what the platform says changed since the last published fetch
    /// (less an overlap); every other record keeps its copy.
    #[sea_orm(string_value = "Incremental")]
    Incremental,
}

/// Where a pull operation stands.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    EnumIter,
    DeriveActiveEnum,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
pub enum PullStatus {
    /// Waiting for a worker.
    #[sea_orm(string_value = "Queued")]
    Queued,
    /// A worker is fetching the data.
    #[sea_orm(string_value = "Fetching")]
    Fetching,
    /// Done: the data is readable.
    #[sea_orm(string_value = "Complete")]
    Complete,
    /// Failed; `errorMessage` says why. The previous data stays readable.
    #[sea_orm(string_value = "Failed")]
    Failed,
    /// The platform rejected the tokens; the connection is now `Deauthorized`.
    #[sea_orm(string_value = "AuthError")]
    AuthError,
    /// Stopped before it ran (its connection was unlinked or deauthorized).
    #[sea_orm(string_value = "Cancelled")]
    Cancelled,
    /// The platform's call quota for the connection's organization is spent
    /// (a daily limit): `errorMessage` says when the sync can continue. The
    /// previous data stays readable, and the next sync fetches what changed
    /// since the last completed one.
    #[sea_orm(string_value = "RateLimitError")]
    RateLimitError,
    /// The platform refused this data type to the connection's consent (a
    /// scope or role it lacks; `errorMessage` has the platform's words).
    /// The connection stays `Linked` and its other data types sync; the
    /// previous data stays readable. Reauthorizing with the scope cures it.
    #[sea_orm(string_value = "PermissionsError")]
    PermissionsError,
    /// The connection's platform does not have the data type asked for
    /// (`errorMessage` says which it has); nothing was fetched.
    #[sea_orm(string_value = "NotSupported")]
    NotSupported,
}

/// Tables a pull operation refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The connection it syncs from.
    #[sea_orm(
        belongs_to = "super::connection::Entity",
        from = "Column::ConnectionId",
        to = "super::connection::Column::Id",
        on_delete = "Cascade"
    )]
    Connection,
}

impl Related<super::connection::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Connection.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
