//! Webhooks (the Standard Webhooks specification): each client's endpoints,
//! the events tributary tells them about, and their delivery.
//!
//! An event is written with [`record`] inside the transaction of the change
//! that causes it (an outbox), with one pending delivery per enabled
//! endpoint that wants its type; so a change that commits has its event, and
//! one that rolls back has none, whenever the process dies. The
//! [`deliverer`] sends pending deliveries, signed, and retries failures on a
//! fixed schedule; several processes on one database share the work under
//! leases, so each attempt is made by one of them.
//!
//! - [`endpoints`]: `webhook_endpoint` (endpoints and their sealed secrets).
//! - [`deliveries`]: `webhook_message`, `webhook_delivery`, `webhook_attempt`
//!   (the outbox, listing, retry and replay).
//! - [`deliverer`]: the background sender; [`signature`]: `webhook-signature`;
//!   [`addresses`]: which addresses it may reach.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

pub mod addresses;
pub mod deliverer;
pub mod deliveries;
pub mod endpoints;
pub mod signature;

pub use deliveries::record;
pub use entity::webhook_delivery::DeliveryStatus;

/// What happened, as the envelope's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "EventType")]
pub enum EventType {
    /// A company was created.
    #[serde(rename = "company.created")]
    CompanyCreated,
    /// A company was deleted, with everything it owned.
    #[serde(rename = "company.deleted")]
    CompanyDeleted,
    /// A connection was created (`PendingAuth`).
    #[serde(rename = "connection.created")]
    ConnectionCreated,
    /// A connection was authorized: tokens migrated with `PUT .../authorization`, or a re-authorization.
    #[serde(rename = "connection.connected")]
    ConnectionConnected,
    /// The platform rejected a connection's tokens; it is `Deauthorized` until authorized again.
    #[serde(rename = "connection.deauthorized")]
    ConnectionDeauthorized,
    /// A `Deauthorized` connection is `Linked` again: through a link session or a token migration.
    #[serde(rename = "connection.reconnected")]
    ConnectionReconnected,
    /// A link session ended without linking: the end customer declined, the platform refused, or the organization was not the connection's.
    #[serde(rename = "connection.failed")]
    ConnectionFailed,
    /// A connection was deleted, with its synced data.
    #[serde(rename = "connection.deleted")]
    ConnectionDeleted,
    /// Every pull operation of one sync request (`data/all` or `data/queue`) has ended; each data type's status and records count.
    #[serde(rename = "read.completed")]
    ReadCompleted,
    /// A pull operation ended `Failed`, `AuthError`, `PermissionsError` or `RateLimitError`: that data type was not synced (`status` says which).
    #[serde(rename = "dataType.syncFailed")]
    DataTypeSyncFailed,
    /// Your client used up its request quota: requests are refused with 429 until it refills (at most once a minute per server).
    #[serde(rename = "rateLimit.reached")]
    RateLimitReached,
}

impl EventType {
    /// Every event type, in the order the docs list them.
    pub const ALL: [EventType; 11] = [
        Self::CompanyCreated,
        Self::CompanyDeleted,
        Self::ConnectionCreated,
        Self::ConnectionConnected,
        Self::ConnectionDeauthorized,
        Self::ConnectionReconnected,
        Self::ConnectionFailed,
        Self::ConnectionDeleted,
        Self::ReadCompleted,
        Self::DataTypeSyncFailed,
        Self::RateLimitReached,
    ];

    /// Its name on the wire (`company.created`).
    pub fn name(self) -> &'static str {
        match self {
            Self::CompanyCreated => "company.created",
            Self::CompanyDeleted => "company.deleted",
            Self::ConnectionCreated => "connection.created",
            Self::ConnectionConnected => "connection.connected",
            Self::ConnectionDeauthorized => "connection.deauthorized",
            Self::ConnectionReconnected => "connection.reconnected",
            Self::ConnectionFailed => "connection.failed",
            Self::ConnectionDeleted => "connection.deleted",
            Self::ReadCompleted => "read.completed",
            Self::DataTypeSyncFailed => "dataType.syncFailed",
            Self::RateLimitReached => "rateLimit.reached",
        }
    }

    /// The event type named `name`, if there is one.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.name() == name)
    }
}

/// An event about to be recorded: its type and its `data`.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened.
    pub event_type: EventType,
    /// The client (tenant) it is for.
    pub client_id: Uuid,
    /// The envelope's `data`: ids and states, never a secret.
    pub data: Value,
}

impl Event {
    /// An event of `event_type` for `client_id`.
    pub fn new(event_type: EventType, client_id: Uuid, data: Value) -> Self {
        Self {
            event_type,
            client_id,
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for event in EventType::ALL {
            assert_eq!(EventType::named(event.name()), Some(event));
            assert_eq!(
                serde_json::to_value(event).expect("serializes"),
                Value::String(event.name().to_owned())
            );
        }
        assert_eq!(EventType::named("company.updated"), None);
    }
}
