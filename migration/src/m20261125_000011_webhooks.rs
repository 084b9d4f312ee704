//! Webhooks: each client's endpoints (with their signing secrets sealed),
//! the events written in the same transaction as the change that caused
//! them (the outbox), one delivery per endpoint and event, and each
//! delivery's attempts. Also the sync requests (`POST .../data/all` and
//! `.../data/queue/{dataType}`) and their pull operations, so that
//! `read.completed` is sent once per request, when all of them have ended.

use sea_orm_migration::{prelude::*, schema::*};

/// Creates the webhook and sync request tables.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(WebhookEndpoint::Table)
                    .col(pk_uuid(WebhookEndpoint::Id))
                    .col(uuid(WebhookEndpoint::ClientId))
                    .col(string_len(WebhookEndpoint::Url, 2048))
                    .col(string_len_null(WebhookEndpoint::Description, 2000))
                    .col(text(WebhookEndpoint::EventTypes))
                    .col(boolean(WebhookEndpoint::Enabled))
                    .col(text_null(WebhookEndpoint::DisabledReason))
                    .col(timestamp_with_time_zone_null(WebhookEndpoint::FailingSince))
                    .col(timestamp_with_time_zone(WebhookEndpoint::Created))
                    .col(timestamp_with_time_zone(WebhookEndpoint::Updated))
                    .col(string_len(WebhookEndpoint::SecretKeyId, 64))
                    .col(blob(WebhookEndpoint::SecretNonce))
                    .col(blob(WebhookEndpoint::SecretCiphertext))
                    .col(string_len_null(WebhookEndpoint::PreviousKeyId, 64))
                    .col(blob_null(WebhookEndpoint::PreviousNonce))
                    .col(blob_null(WebhookEndpoint::PreviousCiphertext))
                    .col(timestamp_with_time_zone_null(
                        WebhookEndpoint::PreviousExpires,
                    ))
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookEndpoint::Table, WebhookEndpoint::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("webhook_endpoint_client")
                    .table(WebhookEndpoint::Table)
                    .col(WebhookEndpoint::ClientId)
                    .col(WebhookEndpoint::Created)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WebhookMessage::Table)
                    .col(pk_uuid(WebhookMessage::Id))
                    .col(uuid(WebhookMessage::ClientId))
                    .col(string_len(WebhookMessage::EventType, 64))
                    .col(timestamp_with_time_zone(WebhookMessage::Created))
                    .col(text(WebhookMessage::Payload))
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookMessage::Table, WebhookMessage::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("webhook_message_client")
                    .table(WebhookMessage::Table)
                    .col(WebhookMessage::ClientId)
                    .col(WebhookMessage::Created)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WebhookDelivery::Table)
                    .col(pk_uuid(WebhookDelivery::Id))
                    .col(uuid(WebhookDelivery::MessageId))
                    .col(uuid(WebhookDelivery::EndpointId))
                    .col(string_len(WebhookDelivery::Status, 16))
                    .col(integer(WebhookDelivery::Attempts))
                    .col(timestamp_with_time_zone_null(WebhookDelivery::NextAttempt))
                    .col(string_len_null(WebhookDelivery::LeaseOwner, 64))
                    .col(timestamp_with_time_zone_null(WebhookDelivery::LeaseExpires))
                    .col(timestamp_with_time_zone(WebhookDelivery::Created))
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookDelivery::Table, WebhookDelivery::MessageId)
                            .to(WebhookMessage::Table, WebhookMessage::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookDelivery::Table, WebhookDelivery::EndpointId)
                            .to(WebhookEndpoint::Table, WebhookEndpoint::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // The deliverer's claim: pending deliveries by when they are due.
        manager
            .create_index(
                Index::create()
                    .name("webhook_delivery_due")
                    .table(WebhookDelivery::Table)
                    .col(WebhookDelivery::Status)
                    .col(WebhookDelivery::NextAttempt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("webhook_delivery_endpoint")
                    .table(WebhookDelivery::Table)
                    .col(WebhookDelivery::EndpointId)
                    .col(WebhookDelivery::Created)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("webhook_delivery_message")
                    .table(WebhookDelivery::Table)
                    .col(WebhookDelivery::MessageId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WebhookAttempt::Table)
                    .col(pk_uuid(WebhookAttempt::Id))
                    .col(uuid(WebhookAttempt::DeliveryId))
                    .col(timestamp_with_time_zone(WebhookAttempt::Attempted))
                    .col(integer_null(WebhookAttempt::StatusCode))
                    .col(big_integer(WebhookAttempt::DurationMs))
                    .col(string_len(WebhookAttempt::Outcome, 16))
                    .col(text_null(WebhookAttempt::Error))
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookAttempt::Table, WebhookAttempt::DeliveryId)
                            .to(WebhookDelivery::Table, WebhookDelivery::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("webhook_attempt_delivery")
                    .table(WebhookAttempt::Table)
                    .col(WebhookAttempt::DeliveryId)
                    .col(WebhookAttempt::Attempted)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(SyncRequest::Table)
                    .col(pk_uuid(SyncRequest::Id))
                    .col(uuid(SyncRequest::CompanyId))
                    .col(timestamp_with_time_zone(SyncRequest::Created))
                    .col(timestamp_with_time_zone_null(SyncRequest::Completed))
                    .foreign_key(
                        ForeignKey::create()
                            .from(SyncRequest::Table, SyncRequest::CompanyId)
                            .to(Company::Table, Company::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(SyncRequestOperation::Table)
                    .col(uuid(SyncRequestOperation::RequestId))
                    .col(uuid(SyncRequestOperation::OperationId))
                    .primary_key(
                        Index::create()
                            .col(SyncRequestOperation::RequestId)
                            .col(SyncRequestOperation::OperationId),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(SyncRequestOperation::Table, SyncRequestOperation::RequestId)
                            .to(SyncRequest::Table, SyncRequest::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(
                                SyncRequestOperation::Table,
                                SyncRequestOperation::OperationId,
                            )
                            .to(PullOperation::Table, PullOperation::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // An operation's end finds the requests it belongs to.
        manager
            .create_index(
                Index::create()
                    .name("sync_request_operation_operation")
                    .table(SyncRequestOperation::Table)
                    .col(SyncRequestOperation::OperationId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            SyncRequestOperation::Table.into_iden(),
            SyncRequest::Table.into_iden(),
            WebhookAttempt::Table.into_iden(),
            WebhookDelivery::Table.into_iden(),
            WebhookMessage::Table.into_iden(),
            WebhookEndpoint::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum WebhookEndpoint {
    Table,
    Id,
    ClientId,
    Url,
    Description,
    EventTypes,
    Enabled,
    DisabledReason,
    FailingSince,
    Created,
    Updated,
    SecretKeyId,
    SecretNonce,
    SecretCiphertext,
    PreviousKeyId,
    PreviousNonce,
    PreviousCiphertext,
    PreviousExpires,
}

#[derive(DeriveIden)]
enum WebhookMessage {
    Table,
    Id,
    ClientId,
    EventType,
    Created,
    Payload,
}

#[derive(DeriveIden)]
enum WebhookDelivery {
    Table,
    Id,
    MessageId,
    EndpointId,
    Status,
    Attempts,
    NextAttempt,
    LeaseOwner,
    LeaseExpires,
    Created,
}

#[derive(DeriveIden)]
enum WebhookAttempt {
    Table,
    Id,
    DeliveryId,
    Attempted,
    StatusCode,
    DurationMs,
    Outcome,
    Error,
}

#[derive(DeriveIden)]
enum SyncRequest {
    Table,
    Id,
    CompanyId,
    Created,
    Completed,
}

#[derive(DeriveIden)]
enum SyncRequestOperation {
    Table,
    RequestId,
    OperationId,
}

#[derive(DeriveIden)]
enum Client {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Company {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum PullOperation {
    Table,
    Id,
}
