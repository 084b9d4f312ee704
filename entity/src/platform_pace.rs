//! The calls tributary made, or reserved, to one platform for one OAuth
//! application and organization: what paces every worker and process
//! sharing the database under the platform's documented limits.

use sea_orm::entity::prelude::*;

/// A row of `platform_pace`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "platform_pace")]
pub struct Model {
    /// A digest of the platform, OAuth application and organization the
    /// limits apply to (neither identifier is stored as such).
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// The platform's key (`xero`), for operators reading the table.
    pub platform: String,
    /// Bumped by every write: a writer that read an older version retries,
    /// so processes sharing the row never lose each other's calls.
    pub version: i64,
    /// When the latest calls go (Unix milliseconds, comma-separated,
    /// ascending), as many as the platform's rolling window allows: the
    /// next call goes once the oldest of them has left the window.
    pub calls: String,
    /// The calls in progress, where the platform limits how many may be:
    /// `place@expiry` each (a random number, Unix milliseconds), so a
    /// process that dies mid-call frees its place when the expiry passes.
    pub in_flight: String,
    /// No call before this time (Unix milliseconds): a `Retry-After` the
    /// platform asked for.
    pub hold_until: i64,
    /// The UTC day `day_calls` counts (days since the Unix epoch).
    pub day: i64,
    /// The calls made that day, or more when the platform says its daily
    /// quota holds less (other applications share it).
    pub day_calls: i64,
}

/// `platform_pace` refers to no other table.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
