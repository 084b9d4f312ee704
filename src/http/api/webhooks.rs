//! `/webhooks`: the calling client's webhook endpoints (create, list, read,
//! change, delete, rotate the signing secret), their deliveries, and
//! sending events again (one message, or everything since a time).

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use sea_orm::ActiveEnum;
use uuid::Uuid;

use entity::{webhook_attempt, webhook_delivery, webhook_endpoint};

use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status};
use crate::http::json_body::JsonBody;
use crate::http::paging::{ListLocation, Paged};
use crate::http::schema::Described;
use crate::http::state::AppState;
use crate::http::types::{Change, Nullable, Timestamp};
use crate::paging::{self, PageRequest};
use crate::tenant::Tenant;
use crate::webhooks::deliverer;
use crate::webhooks::deliveries::{self, DeliveryView};
use crate::webhooks::endpoints::{self, EndpointChanges, EndpointFields};
use crate::webhooks::{DeliveryStatus, EventType};

/// Webhook endpoints.
pub struct WebhooksApi;

/// A webhook endpoint: where tributary posts your events, signed.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct WebhookEndpoint {
    /// The endpoint's id, used as `{endpointId}` in paths.
    pub id: Uuid,
    /// The `http` or `https` URL events are posted to.
    pub url: String,
    /// Free text about the endpoint; null when not set.
    pub description: Nullable<String>,
    /// The event types it receives; empty: every type, including types added later.
    pub event_types: Vec<Described<EventType>>,
    /// Whether events are sent to it.
    pub enabled: bool,
    /// Why it is disabled: by you, after answering `410 Gone`, or after five days in which every attempt failed; null while enabled.
    pub disabled_reason: Nullable<String>,
    /// Since when every attempt to it has failed; null after a success.
    pub failing_since: Nullable<Timestamp>,
    /// Until when the secret replaced by the last rotation still signs alongside the new one; null when none does.
    pub previous_secret_expires: Nullable<Timestamp>,
    /// When it was created (RFC 3339, UTC).
    pub created: Timestamp,
    /// When it was last changed.
    pub updated: Timestamp,
}

impl From<webhook_endpoint::Model> for WebhookEndpoint {
    fn from(row: webhook_endpoint::Model) -> Self {
        Self {
            id: row.id,
            url: row.url.clone(),
            description: row.description.clone().into(),
            event_types: endpoints::event_types(&row)
                .into_iter()
                .map(Described)
                .collect(),
            enabled: row.enabled,
            disabled_reason: row.disabled_reason.clone().into(),
            failing_since: row.failing_since.map(Timestamp).into(),
            previous_secret_expires: row.previous_expires.map(Timestamp).into(),
            created: row.created.into(),
            updated: row.updated.into(),
        }
    }
}

/// An endpoint with its signing secret: the answer to its creation and to
/// each rotation, the only times the secret is shown.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct WebhookEndpointWithSecret {
    /// The endpoint.
    #[oai(flatten)]
    pub endpoint: WebhookEndpoint,
    /// The signing secret: `whsec_` and base64 of 32 random bytes. Store it now; it is not shown again. Verify each event's `webhook-signature` with it (any Standard Webhooks library does).
    pub secret: String,
}

/// A new endpoint.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookEndpointInput {
    /// The `http` or `https` URL to post events to: a host name or IPv4 address, an optional port, path and query in printable ASCII (percent-encode anything else); no credentials, no fragment; at most 2048 bytes.
    #[oai(validator(
        min_length = 1,
        max_length = 2048,
        pattern = r#"^[hH][tT][tT][pP][sS]?://(((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?)(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?([/?][!"$-~]*)?$"#
    ))]
    pub url: String,
    /// Optional free text, up to 2000 characters.
    #[oai(default, validator(max_length = 2000))]
    pub description: Nullable<String>,
    /// The event types to receive; absent or empty: all.
    #[oai(default)]
    pub event_types: Vec<Described<EventType>>,
    /// Whether to send events to it; default true.
    #[oai(default = "enabled_by_default")]
    pub enabled: bool,
}

fn enabled_by_default() -> bool {
    true
}

/// Changes to an endpoint; a field left out stays as it is.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookEndpointChanges {
    /// A new URL, of the same form as at creation.
    #[oai(validator(
        min_length = 1,
        max_length = 2048,
        pattern = r#"^[hH][tT][tT][pP][sS]?://(((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])|([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?)(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?([/?][!"$-~]*)?$"#
    ))]
    pub url: Option<String>,
    /// A new description; null clears it.
    #[oai(validator(max_length = 2000))]
    pub description: Change<String>,
    /// A new list of event types; empty: all.
    pub event_types: Option<Vec<Described<EventType>>>,
    /// `true` enables it (clearing why it was disabled); `false` disables it, ending its pending deliveries `Failed`.
    pub enabled: Option<bool>,
}

/// One attempt to deliver an event.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct WebhookAttempt {
    /// When it was made (tributary's clock).
    pub attempted: Timestamp,
    /// The HTTP status the endpoint answered; null when no answer came.
    pub status_code: Nullable<i32>,
    /// How long it took, in milliseconds.
    pub duration_ms: i64,
    /// `Succeeded` (2xx), `Failed` (any other status), `Timeout` (no answer within 15 s) or `Unreachable` (no connection).
    pub outcome: String,
    /// What went wrong, in words; null on success.
    pub error: Nullable<String>,
}

impl From<webhook_attempt::Model> for WebhookAttempt {
    fn from(row: webhook_attempt::Model) -> Self {
        Self {
            attempted: row.attempted.into(),
            status_code: row.status_code.into(),
            duration_ms: row.duration_ms,
            outcome: row.outcome,
            error: row.error.into(),
        }
    }
}

/// One event on its way to one endpoint.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// The delivery's id.
    pub id: Uuid,
    /// The event's id: the envelope's `id` and the `webhook-id` header; retry it with `POST /webhooks/messages/{messageId}/retry`.
    pub message_id: Uuid,
    /// The event's type.
    pub event_type: String,
    /// Where it stands.
    pub status: Described<DeliveryStatus>,
    /// Its attempts, oldest first.
    pub attempts: Vec<WebhookAttempt>,
    /// When the next attempt is due, while `Pending`.
    pub next_attempt: Nullable<Timestamp>,
    /// When it was queued: when the event happened, or when it was retried or replayed.
    pub created: Timestamp,
}

impl From<DeliveryView> for WebhookDelivery {
    fn from(view: DeliveryView) -> Self {
        let delivery: webhook_delivery::Model = view.delivery;
        Self {
            id: delivery.id,
            message_id: delivery.message_id,
            event_type: view.event_type,
            status: Described(delivery.status),
            attempts: view
                .attempts
                .into_iter()
                .map(WebhookAttempt::from)
                .collect(),
            next_attempt: delivery.next_attempt.map(Timestamp).into(),
            created: delivery.created.into(),
        }
    }
}

/// What to replay.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayInput {
    /// Every event from this time on (RFC 3339) is sent again; events are kept 30 days.
    pub since: Timestamp,
}

/// What a retry or replay queued.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Queued {
    /// Deliveries queued; each is attempted at once, then on the usual schedule.
    pub queued: u64,
}

/// Answer of `listWebhookEndpoints`.
#[derive(ApiResponse)]
pub enum EndpointPage {
    /// A page of your webhook endpoints.
    #[oai(status = 200)]
    Ok(Json<Paged<WebhookEndpoint>>),
}

/// Answer of `getWebhookEndpoint` and `updateWebhookEndpoint`.
#[derive(ApiResponse)]
pub enum EndpointFound {
    /// The endpoint (never its secret).
    #[oai(status = 200)]
    Ok(Json<WebhookEndpoint>),
}

/// Answer of `createWebhookEndpoint`.
#[derive(ApiResponse)]
pub enum EndpointCreated {
    /// Created; the body holds the signing secret, shown this once, and `Location` is its path.
    #[oai(status = 201)]
    Created(
        Json<WebhookEndpointWithSecret>,
        /// The path of the new endpoint.
        #[oai(header = "Location")]
        String,
    ),
}

/// Answer of `rotateWebhookSecret`.
#[derive(ApiResponse)]
pub enum SecretRotated {
    /// The endpoint and its new secret, shown this once.
    #[oai(status = 200)]
    Ok(Json<WebhookEndpointWithSecret>),
}

/// Answer of `deleteWebhookEndpoint`.
#[derive(ApiResponse)]
pub enum EndpointDeleted {
    /// Deleted, with its deliveries.
    #[oai(status = 204)]
    Deleted,
}

/// Answer of `listWebhookDeliveries`.
#[derive(ApiResponse)]
pub enum DeliveryPage {
    /// A page of the endpoint's deliveries, newest first.
    #[oai(status = 200)]
    Ok(Json<Paged<WebhookDelivery>>),
}

/// Answer of `retryWebhookMessage` and `replayWebhookMessages`.
#[derive(ApiResponse)]
pub enum QueuedAnswer {
    /// Queued: the deliveries appear in `GET .../deliveries` at once.
    #[oai(status = 202)]
    Accepted(Json<Queued>),
}

type ListErrors = ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST }>;
type CreateErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY | status::CONFLICT }>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type ChangeErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY | status::NOT_FOUND }>;
type ReplayErrors = ErrorResponses<
    { status::AUTHENTICATED | status::JSON_BODY | status::NOT_FOUND | status::CONFLICT },
>;
type RetryErrors = ErrorResponses<
    { status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND | status::CONFLICT },
>;

fn names(event_types: &[Described<EventType>]) -> Vec<String> {
    event_types
        .iter()
        .map(|event| event.0.name().to_owned())
        .collect()
}

#[OpenApi(tag = "ApiTags::Webhooks")]
impl WebhooksApi {
    /// List webhook endpoints
    ///
    /// Your webhook endpoints, oldest first (ties broken by id), in the paged
    /// envelope; never their secrets.
    #[oai(
        path = "/webhooks/endpoints",
        method = "get",
        operation_id = "listWebhookEndpoints"
    )]
    async fn list_endpoints(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        request: &Request,
        /// The page to return, from 1.
        #[oai(default = "paging::default_page", validator(minimum(value = "1")))]
        page: Query<i32>,
        /// Results per page, from 1 to 5000.
        #[oai(
            name = "pageSize",
            default = "paging::default_page_size",
            validator(minimum(value = "1"), maximum(value = "5000"))
        )]
        page_size: Query<i32>,
    ) -> Result<EndpointPage, ListErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let (rows, total) = endpoints::list(&state.db, tenant, page).await?;
        let results = rows.into_iter().map(WebhookEndpoint::from).collect();
        let location = ListLocation::new(request.uri().path());
        Ok(EndpointPage::Ok(Json(Paged::new(
            results, total, page, &location,
        ))))
    }

    /// Create a webhook endpoint
    ///
    /// From now on, each event of the types it receives is posted to `url` as
    /// JSON `{id, type, timestamp, data}`, signed as the Standard Webhooks
    /// specification says (`webhook-id`, `webhook-timestamp`,
    /// `webhook-signature`). The answer holds the signing secret, shown once.
    /// A client may have at most 50 endpoints (409 beyond). A `url` on a
    /// loopback or private address (`127.0.0.1`, `localhost`, `10.0.0.0/8`,
    /// ...) is refused with a 400 unless the installation sets
    /// `TRIBUTARY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES`.
    #[oai(
        path = "/webhooks/endpoints",
        method = "post",
        operation_id = "createWebhookEndpoint"
    )]
    async fn create_endpoint(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        body: JsonBody<WebhookEndpointInput>,
    ) -> Result<EndpointCreated, CreateErrors> {
        let input = body.0;
        let fields = EndpointFields::parse(
            &input.url,
            input.description.0,
            &names(&input.event_types),
            input.enabled,
            state.deliverer.allows_private_addresses(),
        )?;
        let (row, secret) = endpoints::create(&state.db, &state.keyring, tenant, fields).await?;
        let location = format!("/webhooks/endpoints/{}", row.id);
        let endpoint = WebhookEndpoint::from(row);
        Ok(EndpointCreated::Created(
            Json(WebhookEndpointWithSecret { endpoint, secret }),
            location,
        ))
    }

    /// Get a webhook endpoint
    #[oai(
        path = "/webhooks/endpoints/:endpointId",
        method = "get",
        operation_id = "getWebhookEndpoint"
    )]
    async fn get_endpoint(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The endpoint's id.
        #[oai(name = "endpointId")]
        endpoint_id: Path<Uuid>,
    ) -> Result<EndpointFound, ReadErrors> {
        let row = endpoints::find(&state.db, tenant, endpoint_id.0).await?;
        Ok(EndpointFound::Ok(Json(row.into())))
    }

    /// Change a webhook endpoint
    ///
    /// Changes the fields sent; the others stay. Disabling ends its pending
    /// deliveries `Failed` (replay them after enabling it again); enabling
    /// clears why it was disabled.
    #[oai(
        path = "/webhooks/endpoints/:endpointId",
        method = "patch",
        operation_id = "updateWebhookEndpoint"
    )]
    async fn update_endpoint(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The endpoint's id.
        #[oai(name = "endpointId")]
        endpoint_id: Path<Uuid>,
        body: JsonBody<WebhookEndpointChanges>,
    ) -> Result<EndpointFound, ChangeErrors> {
        let input = body.0;
        let changes = EndpointChanges {
            url: input.url,
            description: input.description.into_option(),
            event_types: input.event_types.as_deref().map(names),
            enabled: input.enabled,
        };
        let allow_private = state.deliverer.allows_private_addresses();
        let row =
            endpoints::update(&state.db, tenant, endpoint_id.0, changes, allow_private).await?;
        Ok(EndpointFound::Ok(Json(row.into())))
    }

    /// Delete a webhook endpoint
    ///
    /// Deletes the endpoint and its deliveries; nothing more is sent to it.
    #[oai(
        path = "/webhooks/endpoints/:endpointId",
        method = "delete",
        operation_id = "deleteWebhookEndpoint"
    )]
    async fn delete_endpoint(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The endpoint's id.
        #[oai(name = "endpointId")]
        endpoint_id: Path<Uuid>,
    ) -> Result<EndpointDeleted, ReadErrors> {
        endpoints::delete(&state.db, tenant, endpoint_id.0).await?;
        Ok(EndpointDeleted::Deleted)
    }

    /// Rotate a webhook endpoint's secret
    ///
    /// Gives the endpoint a new signing secret, shown in the answer only.
    /// For the next 24 hours every event carries two signatures, one per
    /// secret (`v1,<new> v1,<old>`), so your receiver keeps verifying while
    /// you deploy the new secret. Rotating again within those 24 hours drops
    /// the oldest secret.
    #[oai(
        path = "/webhooks/endpoints/:endpointId/rotateSecret",
        method = "post",
        operation_id = "rotateWebhookSecret"
    )]
    async fn rotate_secret(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The endpoint's id.
        #[oai(name = "endpointId")]
        endpoint_id: Path<Uuid>,
    ) -> Result<SecretRotated, ReadErrors> {
        let (row, secret) = endpoints::rotate_secret(
            &state.db,
            &state.keyring,
            tenant,
            endpoint_id.0,
            state.clock.now(),
        )
        .await?;
        let endpoint = WebhookEndpoint::from(row);
        Ok(SecretRotated::Ok(Json(WebhookEndpointWithSecret {
            endpoint,
            secret,
        })))
    }

    /// List an endpoint's deliveries
    ///
    /// The events sent (or on their way) to the endpoint, newest first, each
    /// with its attempts: when, the status code answered, how long it took.
    /// Never a secret, never what the endpoint answered.
    #[oai(
        path = "/webhooks/endpoints/:endpointId/deliveries",
        method = "get",
        operation_id = "listWebhookDeliveries"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_deliveries(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        request: &Request,
        /// The endpoint's id.
        #[oai(name = "endpointId")]
        endpoint_id: Path<Uuid>,
        /// Only deliveries in this state: `Pending`, `Succeeded` or `Failed` (any case).
        status: Query<Option<String>>,
        /// The page to return, from 1.
        #[oai(default = "paging::default_page", validator(minimum(value = "1")))]
        page: Query<i32>,
        /// Results per page, from 1 to 5000.
        #[oai(
            name = "pageSize",
            default = "paging::default_page_size",
            validator(minimum(value = "1"), maximum(value = "5000"))
        )]
        page_size: Query<i32>,
    ) -> Result<DeliveryPage, ReadErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let wanted = status
            .0
            .as_deref()
            .map(deliveries::status_named)
            .transpose()?;
        let (rows, total) =
            deliveries::list(&state.db, tenant, endpoint_id.0, wanted, page).await?;
        let results = rows.into_iter().map(WebhookDelivery::from).collect();
        let location = ListLocation::new(request.uri().path())
            .filter("status", wanted.map(|status| status.to_value()));
        Ok(DeliveryPage::Ok(Json(Paged::new(
            results, total, page, &location,
        ))))
    }

    /// Replay events to an endpoint
    ///
    /// Sends the endpoint again every event since `since` of a type it
    /// receives, oldest first, as new deliveries (at most 10,000 per replay;
    /// events are kept 30 days). The endpoint must be enabled.
    #[oai(
        path = "/webhooks/endpoints/:endpointId/replay",
        method = "post",
        operation_id = "replayWebhookMessages"
    )]
    async fn replay(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The endpoint's id.
        #[oai(name = "endpointId")]
        endpoint_id: Path<Uuid>,
        body: JsonBody<ReplayInput>,
    ) -> Result<QueuedAnswer, ReplayErrors> {
        let queued = deliveries::replay(&state.db, tenant, endpoint_id.0, body.0.since.0).await?;
        deliverer::wake(&state.deliverer);
        Ok(QueuedAnswer::Accepted(Json(Queued { queued })))
    }

    /// Retry a message
    ///
    /// Sends one event again, now: to the endpoint named by `endpointId`, or
    /// to every enabled endpoint that receives its type. Its earlier
    /// deliveries stay as they were. 409 when no enabled endpoint would
    /// receive it.
    #[oai(
        path = "/webhooks/messages/:messageId/retry",
        method = "post",
        operation_id = "retryWebhookMessage"
    )]
    async fn retry(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The event's id (`webhook-id`).
        #[oai(name = "messageId")]
        message_id: Path<Uuid>,
        /// Only to this endpoint of yours (enabled).
        #[oai(name = "endpointId")]
        endpoint_id: Query<Option<Uuid>>,
    ) -> Result<QueuedAnswer, RetryErrors> {
        let queued = deliveries::retry(&state.db, tenant, message_id.0, endpoint_id.0).await?;
        deliverer::wake(&state.deliverer);
        Ok(QueuedAnswer::Accepted(Json(Queued {
            queued: queued.len() as u64,
        })))
    }
}
