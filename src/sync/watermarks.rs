//! `sync_watermark`: where each connection's data type's next incremental
//! fetch starts (the platform's time when the last published fetch began)
//! and when its last full fetch was published. A watermark moves only in
//! the transaction that publishes a sync ([`advance`]), so a sync that fails
//! or is killed midway leaves the next one asking from the last published
//! watermark again. A connection keeps its organization (another one's
//! tokens are refused), so its watermarks stay true across reauthorization;
//! they go with the connection. Only this module writes the table.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, EntityTrait, Set};
use uuid::Uuid;

use entity::sync_watermark;

use crate::data::DataType;

/// A data type's watermark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watermark {
    /// The platform's time when the last published fetch began.
    pub changes_since: DateTime<Utc>,
    /// When the last full fetch was published.
    pub full_fetched: DateTime<Utc>,
    /// The platform's own cursor the last published fetch ended with.
    pub cursor: Option<String>,
}

/// How a sync being published fetched, for [`advance`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The platform's time when the sync's fetch began.
    pub fetch_began: DateTime<Utc>,
    /// When it was a full fetch, the time it is published at.
    pub full_at: Option<DateTime<Utc>>,
    /// The platform's own cursor its last page ended with, if any.
    pub cursor: Option<String>,
}

/// The watermark of the connection's `data_type`, if a sync published one.
pub async fn find(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
) -> Result<Option<Watermark>, sea_orm::DbErr> {
    let row = sync_watermark::Entity::find_by_id((connection_id, data_type.name().to_owned()))
        .one(db)
        .await?;
    Ok(row.map(|row| Watermark {
        changes_since: row.changes_since,
        full_fetched: row.full_fetched,
        cursor: row.cursor,
    }))
}

/// Moves the watermark of the connection's `data_type` to a sync being
/// published (inside the publishing transaction). A sync that was not a
/// full fetch keeps the time of the last one; the first sync of a data type
/// is always a full fetch.
pub async fn advance(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    published: Published,
) -> Result<(), sea_orm::DbErr> {
    // A sync that was not a full fetch leaves the last full fetch's time as
    // it is; were there no row (an incremental sync needs one), the next
    // sync is due to fetch whole.
    let full_fetched = published.full_at.unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
    let row = sync_watermark::ActiveModel {
        connection_id: Set(connection_id),
        data_type: Set(data_type.name().to_owned()),
        changes_since: Set(published.fetch_began),
        full_fetched: Set(full_fetched),
        cursor: Set(published.cursor),
    };
    let mut updated = vec![
        sync_watermark::Column::ChangesSince,
        sync_watermark::Column::Cursor,
    ];
    if published.full_at.is_some() {
        updated.push(sync_watermark::Column::FullFetched);
    }
    sync_watermark::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([
                sync_watermark::Column::ConnectionId,
                sync_watermark::Column::DataType,
            ])
            .update_columns(updated)
            .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(())
}
