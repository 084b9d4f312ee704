//! The outbox and what can be seen and done with it: recording an event
//! with its deliveries, listing an endpoint's deliveries with their
//! attempts, retrying a message, replaying everything since a time, and
//! dropping messages past their retention.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    Iterable, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, TransactionTrait,
};
use uuid::Uuid;

use entity::webhook_delivery::{self, DeliveryStatus};
use entity::{webhook_attempt, webhook_endpoint, webhook_message};

use super::endpoints::{self, receives};
use super::{Event, EventType};
use crate::error::Error;
use crate::paging::PageRequest;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// How long events are kept for retries and replays, in days.
pub const MESSAGE_RETENTION_DAYS: i64 = 30;
/// The most messages one replay queues.
pub const MAX_REPLAY_MESSAGES: u64 = 10_000;

/// Records `event` in the outbox, inside the caller's transaction, with a
/// pending delivery to every enabled endpoint of its client that wants it.
pub async fn record(db: &impl ConnectionTrait, event: Event) -> Result<(), sea_orm::DbErr> {
    let id = Uuid::now_v7();
    let created = Timestamp::now();
    let payload = serde_json::json!({
        "id": id,
        "type": event.event_type.name(),
        "timestamp": Timestamp(created).to_rfc3339(),
        "data": event.data,
    });
    webhook_message::ActiveModel {
        id: Set(id),
        client_id: Set(event.client_id),
        event_type: Set(event.event_type.name().to_owned()),
        created: Set(created),
        payload: Set(payload.to_string()),
    }
    .insert(db)
    .await?;
    let wanting = endpoints::enabled_of(db, event.client_id).await?;
    for endpoint in wanting
        .iter()
        .filter(|endpoint| receives(endpoint, event.event_type))
    {
        queue(db, id, endpoint.id, created).await?;
    }
    Ok(())
}

/// A pending delivery of message `message_id` to `endpoint_id`, due at `due`.
async fn queue(
    db: &impl ConnectionTrait,
    message_id: Uuid,
    endpoint_id: Uuid,
    due: DateTime<Utc>,
) -> Result<webhook_delivery::Model, sea_orm::DbErr> {
    webhook_delivery::ActiveModel {
        id: Set(Uuid::now_v7()),
        message_id: Set(message_id),
        endpoint_id: Set(endpoint_id),
        status: Set(DeliveryStatus::Pending),
        attempts: Set(0),
        next_attempt: Set(Some(due)),
        lease_owner: Set(None),
        lease_expires: Set(None),
        created: Set(Timestamp::now()),
    }
    .insert(db)
    .await
}

/// Every delivery status's name, in documentation order.
pub fn status_names() -> Vec<String> {
    DeliveryStatus::iter()
        .map(|status| status.to_value())
        .collect()
}

/// The delivery status named `text` (any case), or 400 naming `status`.
pub fn status_named(text: &str) -> Result<DeliveryStatus, Error> {
    DeliveryStatus::iter()
        .find(|status| status.to_value().eq_ignore_ascii_case(text))
        .ok_or_else(|| {
            let names = status_names();
            Error::invalid(
                "status",
                format!("must be one of {} (any case)", names.join(", ")),
            )
        })
}

/// A delivery as listed: the delivery, its event's type, and its attempts, oldest first.
#[derive(Debug, Clone)]
pub struct DeliveryView {
    /// The delivery.
    pub delivery: webhook_delivery::Model,
    /// Its event's type name.
    pub event_type: String,
    /// Its attempts, oldest first.
    pub attempts: Vec<webhook_attempt::Model>,
}

/// One page of the deliveries to the tenant's endpoint, newest first (ties
/// by id), optionally only those in `status`, and the total.
pub async fn list(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    endpoint_id: Uuid,
    status: Option<DeliveryStatus>,
    page: PageRequest,
) -> Result<(Vec<DeliveryView>, u64), Error> {
    endpoints::find(db, tenant, endpoint_id).await?;
    let mut of_endpoint = webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::EndpointId.eq(endpoint_id));
    if let Some(status) = status {
        of_endpoint = of_endpoint.filter(webhook_delivery::Column::Status.eq(status));
    }
    let total = of_endpoint.clone().count(db).await?;
    let deliveries = of_endpoint
        .order_by_desc(webhook_delivery::Column::Created)
        .order_by_desc(webhook_delivery::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .find_also_related(webhook_message::Entity)
        .all(db)
        .await?;
    let ids: Vec<Uuid> = deliveries.iter().map(|(delivery, _)| delivery.id).collect();
    let mut attempts: HashMap<Uuid, Vec<webhook_attempt::Model>> = HashMap::new();
    for attempt in webhook_attempt::Entity::find()
        .filter(webhook_attempt::Column::DeliveryId.is_in(ids))
        .order_by_asc(webhook_attempt::Column::Attempted)
        .order_by_asc(webhook_attempt::Column::Id)
        .all(db)
        .await?
    {
        attempts
            .entry(attempt.delivery_id)
            .or_default()
            .push(attempt);
    }
    let views = deliveries
        .into_iter()
        .map(|(delivery, message)| DeliveryView {
            event_type: message.map(|m| m.event_type).unwrap_or_default(),
            attempts: attempts.remove(&delivery.id).unwrap_or_default(),
            delivery,
        })
        .collect();
    Ok((views, total))
}

fn message_not_found(message_id: Uuid) -> Error {
    Error::not_found(format!("No webhook message with id {message_id}."))
}

/// Sends the tenant's message `message_id` again, now: a new delivery to
/// `only` (an endpoint of the tenant's, enabled), or to every enabled
/// endpoint that wants its type. Its earlier deliveries stay as they were.
pub async fn retry(
    db: &DatabaseConnection,
    tenant: Tenant,
    message_id: Uuid,
    only: Option<Uuid>,
) -> Result<Vec<webhook_delivery::Model>, Error> {
    let message = webhook_message::Entity::find_by_id(message_id)
        .filter(webhook_message::Column::ClientId.eq(tenant.client_id))
        .one(db)
        .await?
        .ok_or_else(|| message_not_found(message_id))?;
    let event_type = EventType::named(&message.event_type);
    let targets: Vec<webhook_endpoint::Model> = match only {
        Some(endpoint_id) => {
            let endpoint = endpoints::find(db, tenant, endpoint_id).await?;
            endpoints::ensure_enabled(&endpoint)?;
            vec![endpoint]
        }
        None => endpoints::enabled_of(db, tenant.client_id)
            .await?
            .into_iter()
            .filter(|endpoint| event_type.is_some_and(|event| receives(endpoint, event)))
            .collect(),
    };
    if targets.is_empty() {
        return Err(Error::conflict(format!(
            "No enabled endpoint receives {} events: create or enable one first, or name one with `endpointId`.",
            message.event_type
        )));
    }
    let txn = db.begin().await?;
    let mut queued = Vec::with_capacity(targets.len());
    for endpoint in targets {
        queued.push(queue(&txn, message.id, endpoint.id, Timestamp::now()).await?);
    }
    txn.commit().await?;
    Ok(queued)
}

/// Queues to the tenant's enabled endpoint `endpoint_id` every message
/// since `since` (within the retention) of a type it receives, oldest
/// first; the number queued.
pub async fn replay(
    db: &DatabaseConnection,
    tenant: Tenant,
    endpoint_id: Uuid,
    since: DateTime<Utc>,
) -> Result<u64, Error> {
    let endpoint = endpoints::find(db, tenant, endpoint_id).await?;
    endpoints::ensure_enabled(&endpoint)?;
    let wanted: Vec<&str> = EventType::ALL
        .into_iter()
        .filter(|event| receives(&endpoint, *event))
        .map(EventType::name)
        .collect();
    let messages = webhook_message::Entity::find()
        .select_only()
        .column(webhook_message::Column::Id)
        .filter(webhook_message::Column::ClientId.eq(tenant.client_id))
        .filter(webhook_message::Column::Created.gte(since))
        .filter(webhook_message::Column::EventType.is_in(wanted))
        .order_by_asc(webhook_message::Column::Created)
        .order_by_asc(webhook_message::Column::Id)
        .limit(MAX_REPLAY_MESSAGES + 1)
        .into_tuple::<Uuid>()
        .all(db)
        .await?;
    if messages.len() as u64 > MAX_REPLAY_MESSAGES {
        return Err(Error::invalid(
            "since",
            format!(
                "selects more than {MAX_REPLAY_MESSAGES} messages, the most one replay sends; \
                 replay from a later time, then from where that ended"
            ),
        ));
    }
    let txn = db.begin().await?;
    let now = Timestamp::now();
    for message_id in &messages {
        queue(&txn, *message_id, endpoint.id, now).await?;
    }
    txn.commit().await?;
    Ok(messages.len() as u64)
}

/// Deletes messages (and their deliveries and attempts) older than the
/// retention; the number deleted.
pub async fn drop_expired(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> Result<u64, sea_orm::DbErr> {
    let before = now - TimeDelta::days(MESSAGE_RETENTION_DAYS);
    let deleted = webhook_message::Entity::delete_many()
        .filter(webhook_message::Column::Created.lt(before))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected)
}

/// Stops the pending deliveries of endpoint `endpoint_id` (it was disabled
/// or deleted) from being attempted: they end `Failed`.
pub async fn abandon_pending(
    db: &impl ConnectionTrait,
    endpoint_id: Uuid,
) -> Result<(), sea_orm::DbErr> {
    webhook_delivery::Entity::update_many()
        .col_expr(
            webhook_delivery::Column::Status,
            Expr::value(DeliveryStatus::Failed),
        )
        .col_expr(
            webhook_delivery::Column::NextAttempt,
            Option::<DateTime<Utc>>::None.into(),
        )
        .filter(webhook_delivery::Column::EndpointId.eq(endpoint_id))
        .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending))
        .exec(db)
        .await?;
    Ok(())
}
