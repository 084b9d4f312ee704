//! Managed migrations: many companies' tokens moved from a partner's own
//! OAuth application in one supervised batch, following the
//! specification's process: the checklist of steps 1-4 ([`checklist`]),
//! a canary company imported, verified and synced alone (step 5), then the
//! rest (step 6), each row idempotent and resumable ([`runner`]), and the
//! handover report ([`report`]). Batches are validated whole before
//! anything is stored ([`validation`]). Only this module writes
//! `migration_batch`, `migration_row`, `migration_attestation` and
//! `migration_reference`.

pub mod checklist;
mod creation;
mod lifecycle;
pub mod report;
pub mod runner;
mod settling;
mod steps;
pub mod validation;

use std::collections::{BTreeMap, HashMap};

use sea_orm::{
    ActiveEnum, ColumnTrait, ConnectionTrait, EntityTrait, Iterable, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use entity::{migration_batch, migration_row};

pub use entity::migration_batch::BatchState;
pub use entity::migration_row::RowState;

use crate::crypto::{Keyring, Sealed};
use crate::error::{Error, Problem, Remedy};
use crate::paging::PageRequest;
use crate::tenant::Tenant;
use crate::vault::{self, Owner, Rotation};

pub use checklist::{ChecklistItem, ChecklistStep};
pub use creation::create;
pub use lifecycle::{cancel, proceed, retry_failed, start};
pub use runner::{MigrationConfig, Runner};
pub use validation::Plan;

/// The most rows one batch holds.
pub const MAX_ROWS: usize = 10_000;

/// One company of a batch, as sent: the partner's reference for it, the
/// company (a name to create one, or an existing company's id), and the
/// platform's authorization body.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RowInput {
    /// The partner's reference for the company, unique in the batch.
    pub external_reference: String,
    /// The name of the company to create.
    #[serde(default)]
    pub company_name: Option<String>,
    /// An existing company to connect instead.
    #[serde(default)]
    pub company_id: Option<Uuid>,
    /// The platform's authorization body (its tokens).
    pub authorization: Value,
}

impl std::fmt::Debug for RowInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowInput")
            .field("external_reference", &self.external_reference)
            .field("company_name", &self.company_name)
            .field("company_id", &self.company_id)
            .field("authorization", &"<redacted>")
            .finish()
    }
}

/// A batch, as sent.
#[derive(Debug, Clone)]
pub struct BatchInput {
    /// The platform every row migrates from.
    pub platform_key: String,
    /// The partner's reference for the batch: sending it again finds this batch.
    pub reference: Option<String>,
    /// Prove each row's tokens with the platform.
    pub verify: bool,
    /// Sync each row after its import.
    pub sync: bool,
    /// The external reference of the canary row; the first row when absent.
    pub canary_reference: Option<String>,
    /// The companies.
    pub rows: Vec<RowInput>,
}

/// What `create` did.
#[derive(Debug)]
pub enum Created {
    /// A dry run: the batch is valid, and this is what it would do.
    DryRun(Plan),
    /// A new batch, and what validation found.
    New(Plan, BatchSummary),
    /// The batch with the same reference and rows, sent before.
    Existing(BatchSummary),
}

/// A batch with its checklist, its rows' counts by state and its canary.
#[derive(Debug, Clone)]
pub struct BatchSummary {
    /// The batch.
    pub batch: migration_batch::Model,
    /// Steps 1-4 of the process, done or not.
    pub checklist: Vec<ChecklistItem>,
    /// How many rows are in each state (every state listed).
    pub counts: BTreeMap<String, u64>,
    /// The canary row.
    pub canary: migration_row::Model,
}

/// A state's name (`Pending`).
pub fn row_state_name(state: RowState) -> String {
    state.to_value()
}

/// The row state named `text`, ignoring case.
pub fn row_state_named(text: &str) -> Option<RowState> {
    RowState::iter().find(|state| state.to_value().eq_ignore_ascii_case(text))
}

/// Reads the `state` filter of a row list; 400 listing the states otherwise.
pub fn requested_row_state(text: &str) -> Result<RowState, Error> {
    row_state_named(text).ok_or_else(|| {
        Error::invalid(
            "state",
            format!("must be one of: {}", row_state_names().join(", ")),
        )
    })
}

/// Every row state's name.
pub fn row_state_names() -> Vec<String> {
    RowState::iter().map(|state| state.to_value()).collect()
}

/// How far a row goes: its batch's options, or, for the canary, all the way.
fn target(batch: &migration_batch::Model, row_id: Uuid) -> RowState {
    if row_id == batch.canary_row_id || batch.sync {
        RowState::Synced
    } else if batch.verify {
        RowState::Verified
    } else {
        RowState::Imported
    }
}

fn rank(state: RowState) -> u8 {
    match state {
        RowState::Pending => 0,
        RowState::Imported => 1,
        RowState::Verified => 2,
        RowState::Syncing => 3,
        RowState::Synced => 4,
        RowState::Failed | RowState::Cancelled => 5,
    }
}

/// Whether a row in `state`, going as far as `target`, has ended.
pub fn has_ended(state: RowState, target: RowState) -> bool {
    match state {
        RowState::Failed | RowState::Cancelled | RowState::Synced => true,
        RowState::Syncing => false,
        _ => rank(state) >= rank(target),
    }
}

/// The states of rows that still have a step to take towards `target`
/// (a worker takes them), not counting `Syncing` (the sync engine's).
fn workable_states(target: RowState) -> Vec<RowState> {
    RowState::iter()
        .filter(|state| *state != RowState::Syncing && !has_ended(*state, target))
        .collect()
}

fn not_found(migration_id: Uuid) -> Error {
    Error::not_found(format!("No migration with id {migration_id}."))
}

/// The tenant's batch `migration_id`, or 404.
pub async fn find_batch(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    migration_id: Uuid,
) -> Result<migration_batch::Model, Error> {
    migration_batch::Entity::find_by_id(migration_id)
        .filter(migration_batch::Column::ClientId.eq(tenant.client_id))
        .one(db)
        .await?
        .ok_or_else(|| not_found(migration_id))
}

/// The tenant's batch with its checklist, counts and canary.
pub async fn find(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    migration_id: Uuid,
) -> Result<BatchSummary, Error> {
    let batch = find_batch(db, tenant, migration_id).await?;
    summary(db, batch).await
}

/// A batch's summary.
pub async fn summary(
    db: &impl ConnectionTrait,
    batch: migration_batch::Model,
) -> Result<BatchSummary, Error> {
    let checklist = checklist::items(db, &batch).await?;
    let counts = counts(db, batch.id).await?;
    let canary = migration_row::Entity::find_by_id(batch.canary_row_id)
        .one(db)
        .await?
        .ok_or_else(|| Error::internal(anyhow::anyhow!("batch {} has no canary row", batch.id)))?;
    Ok(BatchSummary {
        batch,
        checklist,
        counts,
        canary,
    })
}

/// How many of the batch's rows are in each state.
pub async fn counts(
    db: &impl ConnectionTrait,
    batch_id: Uuid,
) -> Result<BTreeMap<String, u64>, Error> {
    let grouped: Vec<(RowState, i64)> = migration_row::Entity::find()
        .select_only()
        .column(migration_row::Column::State)
        .column_as(migration_row::Column::Id.count(), "count")
        .filter(migration_row::Column::BatchId.eq(batch_id))
        .group_by(migration_row::Column::State)
        .into_tuple()
        .all(db)
        .await?;
    let mut counts: BTreeMap<String, u64> = RowState::iter()
        .map(|state| (state.to_value(), 0))
        .collect();
    for (state, count) in grouped {
        counts.insert(state.to_value(), u64::try_from(count).unwrap_or(0));
    }
    Ok(counts)
}

/// The tenant's batches, newest first, and their total.
pub async fn list(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    page: PageRequest,
) -> Result<(Vec<BatchSummary>, u64), Error> {
    let query = migration_batch::Entity::find()
        .filter(migration_batch::Column::ClientId.eq(tenant.client_id));
    let total = query.clone().count(db).await?;
    let batches = query
        .order_by_desc(migration_batch::Column::Created)
        .order_by_desc(migration_batch::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((summaries(db, batches).await?, total))
}

/// The summaries of several batches, in a handful of queries whatever
/// their number (a page may hold 5,000).
async fn summaries(
    db: &impl ConnectionTrait,
    batches: Vec<migration_batch::Model>,
) -> Result<Vec<BatchSummary>, Error> {
    let mut checklists = checklist::items_of(db, &batches).await?;
    let ids: Vec<Uuid> = batches.iter().map(|batch| batch.id).collect();
    let canary_ids: Vec<Uuid> = batches.iter().map(|batch| batch.canary_row_id).collect();
    let mut counted: HashMap<Uuid, BTreeMap<String, u64>> = HashMap::new();
    let mut canaries: HashMap<Uuid, migration_row::Model> = HashMap::new();
    for (ids, canary_ids) in ids.chunks(500).zip(canary_ids.chunks(500)) {
        let grouped: Vec<(Uuid, RowState, i64)> = migration_row::Entity::find()
            .select_only()
            .column(migration_row::Column::BatchId)
            .column(migration_row::Column::State)
            .column_as(migration_row::Column::Id.count(), "count")
            .filter(migration_row::Column::BatchId.is_in(ids.iter().copied()))
            .group_by(migration_row::Column::BatchId)
            .group_by(migration_row::Column::State)
            .into_tuple()
            .all(db)
            .await?;
        for (batch_id, state, count) in grouped {
            counted
                .entry(batch_id)
                .or_default()
                .insert(state.to_value(), u64::try_from(count).unwrap_or(0));
        }
        for canary in migration_row::Entity::find()
            .filter(migration_row::Column::Id.is_in(canary_ids.iter().copied()))
            .all(db)
            .await?
        {
            canaries.insert(canary.id, canary);
        }
    }
    batches
        .into_iter()
        .map(|batch| {
            let mut counts: BTreeMap<String, u64> = RowState::iter()
                .map(|state| (state.to_value(), 0))
                .collect();
            counts.extend(counted.remove(&batch.id).unwrap_or_default());
            let canary = canaries.remove(&batch.canary_row_id).ok_or_else(|| {
                Error::internal(anyhow::anyhow!("batch {} has no canary row", batch.id))
            })?;
            Ok(BatchSummary {
                checklist: checklists.remove(&batch.id).unwrap_or_default(),
                counts,
                canary,
                batch,
            })
        })
        .collect()
}

/// A page of the batch's rows in batch order, optionally in one state, and
/// their total.
pub async fn rows(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    migration_id: Uuid,
    state: Option<RowState>,
    page: PageRequest,
) -> Result<(Vec<migration_row::Model>, u64), Error> {
    find_batch(db, tenant, migration_id).await?;
    let mut query =
        migration_row::Entity::find().filter(migration_row::Column::BatchId.eq(migration_id));
    if let Some(state) = state {
        query = query.filter(migration_row::Column::State.eq(state));
    }
    let total = query.clone().count(db).await?;
    let rows = query
        .order_by_asc(migration_row::Column::Position)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((rows, total))
}

fn sealed_of(row: &migration_row::Model) -> Option<Sealed> {
    Some(Sealed {
        key_id: row.key_id.clone()?,
        nonce: row.nonce.clone()?,
        ciphertext: row.ciphertext.clone()?,
    })
}

/// The key ids rows' waiting tokens are sealed with.
pub async fn key_ids(db: &impl ConnectionTrait) -> Result<Vec<String>, sea_orm::DbErr> {
    let ids: Vec<Option<String>> = migration_row::Entity::find()
        .select_only()
        .column(migration_row::Column::KeyId)
        .filter(migration_row::Column::KeyId.is_not_null())
        .distinct()
        .into_tuple()
        .all(db)
        .await?;
    Ok(ids.into_iter().flatten().collect())
}

/// Re-seals every row's waiting tokens under the keyring's current key,
/// each only over the ciphertext that was read.
pub async fn rotate(db: &impl ConnectionTrait, keyring: &Keyring) -> anyhow::Result<Rotation> {
    let mut rotation = Rotation::default();
    let mut after = Uuid::nil();
    loop {
        let batch = migration_row::Entity::find()
            .filter(migration_row::Column::Id.gt(after))
            .filter(migration_row::Column::Ciphertext.is_not_null())
            .order_by_asc(migration_row::Column::Id)
            .limit(500)
            .all(db)
            .await?;
        let Some(last) = batch.last() else { break };
        after = last.id;
        for row in batch {
            let Some(sealed) = sealed_of(&row) else {
                continue;
            };
            let Some(resealed) = vault::reseal(keyring, Owner::MigrationRow(row.id), &sealed)?
            else {
                rotation.current += 1;
                continue;
            };
            let updated = migration_row::Entity::update_many()
                .col_expr(migration_row::Column::KeyId, resealed.key_id.into())
                .col_expr(migration_row::Column::Nonce, resealed.nonce.into())
                .col_expr(
                    migration_row::Column::Ciphertext,
                    resealed.ciphertext.into(),
                )
                .filter(migration_row::Column::Id.eq(row.id))
                .filter(migration_row::Column::Nonce.eq(sealed.nonce))
                .exec(db)
                .await?;
            if updated.rows_affected == 1 {
                rotation.rotated += 1;
            } else {
                rotation.remaining += 1;
            }
        }
    }
    Ok(rotation)
}

/// The remedy of a failure, stored with the row as JSON.
fn remedy_json(remedy: &Remedy) -> Option<String> {
    serde_json::to_string(remedy).ok()
}

/// A row's failure and remedy, as stored.
pub fn row_problem(row: &migration_row::Model) -> Option<Problem> {
    let message = row.failure.clone()?;
    let remedy = row
        .remedy
        .as_deref()
        .and_then(|remedy| serde_json::from_str(remedy).ok());
    Some(Problem { message, remedy })
}

/// A row's record counts per data type, as stored.
pub fn row_records(row: &migration_row::Model) -> BTreeMap<String, i64> {
    row.records
        .as_deref()
        .and_then(|records| serde_json::from_str(records).ok())
        .unwrap_or_default()
}
