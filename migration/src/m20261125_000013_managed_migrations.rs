//! Managed migrations: a batch of companies' tokens imported in one
//! supervised operation (`POST /migrations`), its checklist attestations,
//! and one row per company with its state, its sealed tokens until they are
//! stored on the connection, and a worker's lease on it; and, per partner
//! reference, the company and connection it was imported into (the row
//! every import of that reference locks, so none is imported twice).

use sea_orm_migration::{prelude::*, schema::*};

/// Creates `migration_batch`, `migration_attestation`, `migration_row` and
/// `migration_reference`.
#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(MigrationBatch::Table)
                    .col(pk_uuid(MigrationBatch::Id))
                    .col(uuid(MigrationBatch::ClientId))
                    .col(string_len(MigrationBatch::PlatformKey, 64))
                    .col(string_len_null(MigrationBatch::Reference, 200))
                    .col(string_len(MigrationBatch::State, 24))
                    .col(boolean(MigrationBatch::Verify))
                    .col(boolean(MigrationBatch::Sync))
                    .col(uuid(MigrationBatch::CanaryRowId))
                    .col(integer(MigrationBatch::RowCount))
                    .col(text_null(MigrationBatch::Failure))
                    .col(timestamp_with_time_zone(MigrationBatch::Created))
                    .col(timestamp_with_time_zone_null(MigrationBatch::Started))
                    .col(timestamp_with_time_zone_null(MigrationBatch::Proceeded))
                    .col(timestamp_with_time_zone_null(MigrationBatch::Completed))
                    .foreign_key(
                        ForeignKey::create()
                            .from(MigrationBatch::Table, MigrationBatch::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // A re-sent batch is found by its reference.
        manager
            .create_index(
                Index::create()
                    .name("migration_batch_reference")
                    .table(MigrationBatch::Table)
                    .col(MigrationBatch::ClientId)
                    .col(MigrationBatch::Reference)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("migration_batch_state")
                    .table(MigrationBatch::Table)
                    .col(MigrationBatch::State)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(MigrationAttestation::Table)
                    .col(uuid(MigrationAttestation::BatchId))
                    .col(string_len(MigrationAttestation::Step, 32))
                    .col(string_len(MigrationAttestation::AttestedBy, 200))
                    .col(text_null(MigrationAttestation::Note))
                    .col(timestamp_with_time_zone(MigrationAttestation::Attested))
                    .primary_key(
                        Index::create()
                            .col(MigrationAttestation::BatchId)
                            .col(MigrationAttestation::Step),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(MigrationAttestation::Table, MigrationAttestation::BatchId)
                            .to(MigrationBatch::Table, MigrationBatch::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(MigrationRow::Table)
                    .col(pk_uuid(MigrationRow::Id))
                    .col(uuid(MigrationRow::BatchId))
                    .col(uuid(MigrationRow::ClientId))
                    .col(string_len(MigrationRow::PlatformKey, 64))
                    .col(integer(MigrationRow::Position))
                    .col(string_len(MigrationRow::ExternalReference, 200))
                    .col(string_len_null(MigrationRow::CompanyName, 200))
                    .col(uuid_null(MigrationRow::CompanyId))
                    .col(uuid_null(MigrationRow::ConnectionId))
                    .col(string_len(MigrationRow::OrganizationId, 255))
                    .col(string_len(MigrationRow::State, 16))
                    .col(string_len_null(MigrationRow::KeyId, 64))
                    .col(blob_null(MigrationRow::Nonce))
                    .col(blob_null(MigrationRow::Ciphertext))
                    .col(integer(MigrationRow::Attempts))
                    .col(timestamp_with_time_zone_null(MigrationRow::NextAttempt))
                    .col(string_len_null(MigrationRow::LeaseOwner, 64))
                    .col(timestamp_with_time_zone_null(MigrationRow::LeaseExpires))
                    .col(uuid_null(MigrationRow::SyncRequestId))
                    .col(boolean(MigrationRow::Refreshed))
                    .col(text_null(MigrationRow::Records))
                    .col(text_null(MigrationRow::Failure))
                    .col(text_null(MigrationRow::Remedy))
                    .col(timestamp_with_time_zone_null(MigrationRow::Imported))
                    .col(timestamp_with_time_zone_null(MigrationRow::Verified))
                    .col(timestamp_with_time_zone_null(MigrationRow::Synced))
                    .col(timestamp_with_time_zone(MigrationRow::Updated))
                    .foreign_key(
                        ForeignKey::create()
                            .from(MigrationRow::Table, MigrationRow::BatchId)
                            .to(MigrationBatch::Table, MigrationBatch::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // Rows in the batch's order, and the paged, state-filtered lists.
        manager
            .create_index(
                Index::create()
                    .name("migration_row_position")
                    .table(MigrationRow::Table)
                    .col(MigrationRow::BatchId)
                    .col(MigrationRow::Position)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("migration_row_state")
                    .table(MigrationRow::Table)
                    .col(MigrationRow::BatchId)
                    .col(MigrationRow::State)
                    .col(MigrationRow::Position)
                    .to_owned(),
            )
            .await?;
        // A row re-sent in a later batch finds the company its reference got.
        manager
            .create_index(
                Index::create()
                    .name("migration_row_reference")
                    .table(MigrationRow::Table)
                    .col(MigrationRow::ClientId)
                    .col(MigrationRow::PlatformKey)
                    .col(MigrationRow::ExternalReference)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(MigrationReference::Table)
                    .col(uuid(MigrationReference::ClientId))
                    .col(string_len(MigrationReference::PlatformKey, 64))
                    .col(string_len(MigrationReference::ExternalReference, 200))
                    .col(uuid_null(MigrationReference::CompanyId))
                    .col(uuid_null(MigrationReference::ConnectionId))
                    .primary_key(
                        Index::create()
                            .col(MigrationReference::ClientId)
                            .col(MigrationReference::PlatformKey)
                            .col(MigrationReference::ExternalReference),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(MigrationReference::Table, MigrationReference::ClientId)
                            .to(Client::Table, Client::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            MigrationReference::Table.into_iden(),
            MigrationRow::Table.into_iden(),
            MigrationAttestation::Table.into_iden(),
            MigrationBatch::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum MigrationBatch {
    Table,
    Id,
    ClientId,
    PlatformKey,
    Reference,
    State,
    Verify,
    Sync,
    CanaryRowId,
    RowCount,
    Failure,
    Created,
    Started,
    Proceeded,
    Completed,
}

#[derive(DeriveIden)]
enum MigrationAttestation {
    Table,
    BatchId,
    Step,
    AttestedBy,
    Note,
    Attested,
}

#[derive(DeriveIden)]
enum MigrationRow {
    Table,
    Id,
    BatchId,
    ClientId,
    PlatformKey,
    Position,
    ExternalReference,
    CompanyName,
    CompanyId,
    ConnectionId,
    OrganizationId,
    State,
    KeyId,
    Nonce,
    Ciphertext,
    Attempts,
    NextAttempt,
    LeaseOwner,
    LeaseExpires,
    SyncRequestId,
    Refreshed,
    Records,
    Failure,
    Remedy,
    Imported,
    Verified,
    Synced,
    Updated,
}

#[derive(DeriveIden)]
enum MigrationReference {
    Table,
    ClientId,
    PlatformKey,
    ExternalReference,
    CompanyId,
    ConnectionId,
}

#[derive(DeriveIden)]
enum Client {
    Table,
    Id,
}
