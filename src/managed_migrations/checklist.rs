//! Steps 1-4 of the managed migration process, before any token is used:
//! the OAuth application's client registered (tributary checks it), the
//! migration scheduled, tributary's callback URL added to the partner's
//! OAuth application, and syncing disabled in the old application (people
//! attest these: who, when, a note). A batch starts only once all are done.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use entity::{migration_attestation, migration_batch, oauth_client};

use super::{BatchState, BatchSummary, find, find_batch};
use crate::error::{Error, FieldError, Problem, Remedy};
use crate::tenant::Tenant;

/// A step of the checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChecklistStep {
    /// Step 1: your OAuth application's client id and secret are stored with
    /// `PUT /integrations/{platformKey}/oauth-client`; tributary checks this one.
    OauthClientRegistered,
    /// Step 2: the migration is scheduled with the support team (attested).
    MigrationScheduled,
    /// Step 3: tributary's callback URL (`callbackUrl` of
    /// `GET /integrations/{platformKey}`, `<public URL>/oauth/<platformKey>/callback`)
    /// is added to your OAuth application at the platform (attested).
    CallbackUrlAdded,
    /// Step 4: syncing is disabled in your old application for every company
    /// in the batch, so two applications do not refresh the same tokens (attested).
    OldApplicationSyncDisabled,
}

impl ChecklistStep {
    /// Every step, in the process's order.
    pub const ALL: [ChecklistStep; 4] = [
        Self::OauthClientRegistered,
        Self::MigrationScheduled,
        Self::CallbackUrlAdded,
        Self::OldApplicationSyncDisabled,
    ];

    /// The step's name in paths and bodies.
    pub fn name(self) -> &'static str {
        match self {
            Self::OauthClientRegistered => "oauthClientRegistered",
            Self::MigrationScheduled => "migrationScheduled",
            Self::CallbackUrlAdded => "callbackUrlAdded",
            Self::OldApplicationSyncDisabled => "oldApplicationSyncDisabled",
        }
    }

    /// The step named `text`, ignoring case.
    pub fn named(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|step| step.name().eq_ignore_ascii_case(text))
    }

    /// Whether tributary checks it itself (no one attests it).
    pub fn checked_by_tributary(self) -> bool {
        matches!(self, Self::OauthClientRegistered)
    }
}

/// A step, done or not, and how it is known.
#[derive(Debug, Clone)]
pub struct ChecklistItem {
    /// The step.
    pub step: ChecklistStep,
    /// Whether it is done.
    pub done: bool,
    /// Whether tributary checked it (else a person attested it).
    pub checked_by_tributary: bool,
    /// Who attested it.
    pub attested_by: Option<String>,
    /// Their note.
    pub note: Option<String>,
    /// When it was attested, or when what tributary checked was last set.
    pub at: Option<DateTime<Utc>>,
}

/// The batch's checklist, in order.
pub async fn items(
    db: &impl ConnectionTrait,
    batch: &migration_batch::Model,
) -> Result<Vec<ChecklistItem>, Error> {
    let mut checklists = items_of(db, std::slice::from_ref(batch)).await?;
    Ok(checklists.remove(&batch.id).unwrap_or_default())
}

/// The checklists of several batches of one client, by batch, in two
/// queries whatever their number.
pub async fn items_of(
    db: &impl ConnectionTrait,
    batches: &[migration_batch::Model],
) -> Result<HashMap<Uuid, Vec<ChecklistItem>>, Error> {
    let ids: Vec<Uuid> = batches.iter().map(|batch| batch.id).collect();
    let mut attested: HashMap<Uuid, Vec<migration_attestation::Model>> = HashMap::new();
    for chunk in ids.chunks(500) {
        for row in migration_attestation::Entity::find()
            .filter(migration_attestation::Column::BatchId.is_in(chunk.iter().copied()))
            .all(db)
            .await?
        {
            attested.entry(row.batch_id).or_default().push(row);
        }
    }
    let clients: Vec<Uuid> = batches.iter().map(|batch| batch.client_id).collect();
    let oauth_clients = oauth_client::Entity::find()
        .filter(oauth_client::Column::ClientId.is_in(clients))
        .all(db)
        .await?;
    let mut checklists = HashMap::new();
    for batch in batches {
        let client = oauth_clients.iter().find(|client| {
            client.client_id == batch.client_id && client.platform_key == batch.platform_key
        });
        let attested = attested
            .get(&batch.id)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let items = ChecklistStep::ALL
            .into_iter()
            .map(|step| {
                if step.checked_by_tributary() {
                    return ChecklistItem {
                        step,
                        done: client.is_some(),
                        checked_by_tributary: true,
                        attested_by: None,
                        note: None,
                        at: client.map(|client| client.updated),
                    };
                }
                let attestation = attested.iter().find(|row| row.step == step.name());
                ChecklistItem {
                    step,
                    done: attestation.is_some(),
                    checked_by_tributary: false,
                    attested_by: attestation.map(|row| row.attested_by.clone()),
                    note: attestation.and_then(|row| row.note.clone()),
                    at: attestation.map(|row| row.attested),
                }
            })
            .collect();
        checklists.insert(batch.id, items);
    }
    Ok(checklists)
}

/// 409 naming every step not done, and what to do about the first.
pub(super) fn require_done(
    batch: &migration_batch::Model,
    items: &[ChecklistItem],
) -> Result<(), Error> {
    let missing: Vec<&ChecklistItem> = items.iter().filter(|item| !item.done).collect();
    let Some(first) = missing.first() else {
        return Ok(());
    };
    let names: Vec<&str> = missing.iter().map(|item| item.step.name()).collect();
    let remedy = if first.step.checked_by_tributary() {
        Remedy::SetOAuthClient {
            platform_key: batch.platform_key.clone(),
        }
    } else {
        Remedy::AttestChecklistStep {
            migration_id: batch.id,
            step: first.step.name().to_owned(),
        }
    };
    Err(Error::Conflict(
        Problem::new(format!(
            "Migration {} cannot start before its checklist is done; not done: {}.",
            batch.id,
            names.join(", ")
        ))
        .with_remedy(remedy),
    ))
}

/// The longest `attestedBy`, in characters.
pub const MAX_ATTESTED_BY_CHARS: usize = 200;
/// The longest note, in characters.
pub const MAX_NOTE_CHARS: usize = 2000;

/// Records that `attested_by` did `step` for the tenant's batch (again: the
/// latest attestation replaces an earlier one), while the batch has not
/// started its canary.
pub async fn attest(
    db: &DatabaseConnection,
    tenant: Tenant,
    migration_id: Uuid,
    step: &str,
    attested_by: &str,
    note: Option<String>,
) -> Result<BatchSummary, Error> {
    let batch = find_batch(db, tenant, migration_id).await?;
    let step = ChecklistStep::named(step).ok_or_else(|| {
        Error::invalid(
            "step",
            format!(
                "must be one of: {}",
                ChecklistStep::ALL
                    .iter()
                    .filter(|step| !step.checked_by_tributary())
                    .map(|step| step.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    if step.checked_by_tributary() {
        return Err(Error::Invalid(vec![
            FieldError::new(
                "step",
                "oauthClientRegistered is checked by tributary, not attested: it is done once your OAuth \
                 client for the platform is stored",
            )
            .with_remedy(Remedy::SetOAuthClient {
                platform_key: batch.platform_key.clone(),
            }),
        ]));
    }
    let attested_by = attested_by.trim();
    let mut errors = Vec::new();
    let chars = attested_by.chars().count();
    if chars == 0 || chars > MAX_ATTESTED_BY_CHARS {
        errors.push(FieldError::new(
            "attestedBy",
            format!("must be 1 to {MAX_ATTESTED_BY_CHARS} characters, not only whitespace"),
        ));
    }
    if note
        .as_ref()
        .is_some_and(|note| note.chars().count() > MAX_NOTE_CHARS)
    {
        errors.push(FieldError::new(
            "note",
            format!("must be at most {MAX_NOTE_CHARS} characters"),
        ));
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    if !matches!(batch.state, BatchState::Draft | BatchState::CanaryFailed) {
        return Err(Error::conflict(format!(
            "Migration {migration_id} is {:?}: its checklist was settled when it started.",
            batch.state
        )));
    }
    migration_attestation::Entity::insert(migration_attestation::ActiveModel {
        batch_id: Set(migration_id),
        step: Set(step.name().to_owned()),
        attested_by: Set(attested_by.to_owned()),
        note: Set(note),
        attested: Set(Utc::now()),
    })
    .on_conflict(
        OnConflict::columns([
            migration_attestation::Column::BatchId,
            migration_attestation::Column::Step,
        ])
        .update_columns([
            migration_attestation::Column::AttestedBy,
            migration_attestation::Column::Note,
            migration_attestation::Column::Attested,
        ])
        .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    find(db, tenant, migration_id).await
}
