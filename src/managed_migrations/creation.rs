//! Storing a batch: validated whole, its rows' tokens sealed, in one
//! transaction; a batch sent again under its reference is found instead.

use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, Set,
    TransactionTrait,
};
use uuid::Uuid;

use entity::{migration_batch, migration_row};

use super::{
    BatchInput, BatchState, BatchSummary, Created, RowState, find_batch, summary, validation,
};
use crate::crypto::Keyring;
use crate::error::Error;
use crate::platforms::connector::Connectors;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::vault::{self, Owner};

/// Validates `input` whole and, unless `dry_run`, stores it as a new
/// `Draft` batch with its rows' tokens sealed; a batch sent again with the
/// same reference and rows is found, not stored twice.
pub async fn create(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    tenant: Tenant,
    input: BatchInput,
    dry_run: bool,
) -> Result<Created, Error> {
    if let Some(reference) = &input.reference
        && let Some(existing) = by_reference(db, tenant, reference).await?
    {
        let found = same_batch(db, existing, &input).await?;
        if !dry_run {
            return Ok(Created::Existing(found));
        }
        // A dry run of a batch sent before is validated as if it were new
        // (its own waiting rows aside), and stores nothing either way.
        let validated =
            validation::validate(db, connectors, tenant, input, Some(found.batch.id)).await?;
        return Ok(Created::DryRun(validated.plan));
    }
    let validated = validation::validate(db, connectors, tenant, input, None).await?;
    if dry_run {
        return Ok(Created::DryRun(validated.plan));
    }
    let now = Timestamp::now();
    let batch_id = Uuid::now_v7();
    let row_ids: Vec<Uuid> = validated.rows.iter().map(|_| Uuid::now_v7()).collect();
    let canary_row_id = row_ids[validated.canary_position];
    let txn = db.begin().await?;
    let batch = migration_batch::ActiveModel {
        id: Set(batch_id),
        client_id: Set(tenant.client_id),
        platform_key: Set(validated.plan.platform.platform_key.to_owned()),
        reference: Set(validated.reference.clone()),
        state: Set(BatchState::Draft),
        verify: Set(validated.verify),
        sync: Set(validated.sync),
        canary_row_id: Set(canary_row_id),
        row_count: Set(i32::try_from(validated.rows.len()).unwrap_or(i32::MAX)),
        failure: Set(None),
        created: Set(now),
        started: Set(None),
        proceeded: Set(None),
        completed: Set(None),
    };
    let inserted = migration_batch::Entity::insert(batch)
        .on_conflict(
            OnConflict::columns([
                migration_batch::Column::ClientId,
                migration_batch::Column::Reference,
            ])
            .do_nothing()
            .to_owned(),
        )
        .exec_without_returning(&txn)
        .await?;
    if inserted == 0 {
        // The same reference, stored by a concurrent request meanwhile.
        txn.rollback().await?;
        let reference = validated.reference.clone().unwrap_or_default();
        let existing = by_reference(db, tenant, &reference)
            .await?
            .ok_or_else(|| Error::internal(anyhow::anyhow!("a batch's reference vanished")))?;
        let references: Vec<String> = validated
            .rows
            .iter()
            .map(|row| row.external_reference.clone())
            .collect();
        if existing.platform_key != validated.plan.platform.platform_key
            || stored_references(db, existing.id).await? != sorted(references)
        {
            return Err(reused_reference(&existing));
        }
        return Ok(Created::Existing(summary(db, existing).await?));
    }
    let platform_key = validated.plan.platform.platform_key;
    let mut models = Vec::with_capacity(validated.rows.len());
    for ((position, row), id) in validated.rows.into_iter().enumerate().zip(row_ids) {
        let sealed = vault::seal_json(keyring, Owner::MigrationRow(id), &row.accepted.sealed_body)
            .map_err(Error::internal)?;
        models.push(migration_row::ActiveModel {
            id: Set(id),
            batch_id: Set(batch_id),
            client_id: Set(tenant.client_id),
            platform_key: Set(platform_key.to_owned()),
            position: Set(i32::try_from(position).unwrap_or(i32::MAX)),
            external_reference: Set(row.external_reference),
            company_name: Set(row.company_name),
            company_id: Set(row.company_id),
            connection_id: Set(None),
            organization_id: Set(row.accepted.organization_id),
            state: Set(RowState::Pending),
            key_id: Set(Some(sealed.key_id)),
            nonce: Set(Some(sealed.nonce)),
            ciphertext: Set(Some(sealed.ciphertext)),
            attempts: Set(0),
            next_attempt: Set(None),
            lease_owner: Set(None),
            lease_expires: Set(None),
            sync_request_id: Set(None),
            refreshed: Set(false),
            records: Set(None),
            failure: Set(None),
            remedy: Set(None),
            imported: Set(None),
            verified: Set(None),
            synced: Set(None),
            updated: Set(now),
        });
    }
    // Bounded statements: 28 columns times 500 rows stays under both
    // databases' limits on bound values.
    let mut models = models.into_iter().peekable();
    while models.peek().is_some() {
        let chunk: Vec<_> = models.by_ref().take(500).collect();
        migration_row::Entity::insert_many(chunk)
            .exec_without_returning(&txn)
            .await?;
    }
    txn.commit().await?;
    let batch = find_batch(db, tenant, batch_id).await?;
    Ok(Created::New(validated.plan, summary(db, batch).await?))
}

async fn by_reference(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    reference: &str,
) -> Result<Option<migration_batch::Model>, Error> {
    Ok(migration_batch::Entity::find()
        .filter(migration_batch::Column::ClientId.eq(tenant.client_id))
        .filter(migration_batch::Column::Reference.eq(reference.trim()))
        .one(db)
        .await?)
}

fn sorted(mut references: Vec<String>) -> Vec<String> {
    references.sort();
    references
}

/// The external references of the batch's rows, sorted.
async fn stored_references(
    db: &impl ConnectionTrait,
    batch_id: Uuid,
) -> Result<Vec<String>, Error> {
    let stored: Vec<String> = migration_row::Entity::find()
        .select_only()
        .column(migration_row::Column::ExternalReference)
        .filter(migration_row::Column::BatchId.eq(batch_id))
        .into_tuple()
        .all(db)
        .await?;
    Ok(sorted(stored))
}

fn reused_reference(existing: &migration_batch::Model) -> Error {
    Error::conflict(format!(
        "Batch reference `{}` is already used by migration {} ({}, {} rows) with other rows: send a new \
         reference for a different batch.",
        existing.reference.as_deref().unwrap_or_default(),
        existing.id,
        existing.platform_key,
        existing.row_count
    ))
}

/// A batch sent again: the stored one if it is the same platform and the
/// same external references, a 409 otherwise.
async fn same_batch(
    db: &DatabaseConnection,
    existing: migration_batch::Model,
    input: &BatchInput,
) -> Result<BatchSummary, Error> {
    let sent: Vec<String> = input
        .rows
        .iter()
        .map(|row| row.external_reference.trim().to_owned())
        .collect();
    if existing.platform_key != input.platform_key
        || stored_references(db, existing.id).await? != sorted(sent)
    {
        return Err(reused_reference(&existing));
    }
    summary(db, existing).await
}
