//! The payloads of `/migrations`: a batch and its rows as sent, and the
//! batch, its checklist, rows, plan and report as answered (never a token).

use std::collections::BTreeMap;

use poem_openapi::Object;
use uuid::Uuid;

use crate::error::Problem;
use crate::http::error::sentence;
use crate::http::schema::Described;
use crate::http::types::{Nullable, Timestamp};
use crate::links::flow::Urls;
use crate::managed_migrations::report::Report;
use crate::managed_migrations::{
    self, BatchState, BatchSummary, ChecklistItem, ChecklistStep, Plan, RowState,
};

/// A failure's remedy in words (the sentence the error bodies add).
pub(super) fn what_to_do(problem: &Problem) -> String {
    problem.remedy.as_ref().map(sentence).unwrap_or_default()
}

/// One company of a batch, as sent.
#[derive(Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct MigrationRowInput {
    /// Your reference for the company (your own id for it), 1 to 200 characters, unique in the batch.
    /// A company sent again under the same reference, in this batch or a later one, keeps its company
    /// and connection: none is created twice.
    #[oai(validator(min_length = 1, max_length = 200))]
    pub external_reference: String,
    /// The name of the company to create. Send exactly one of `companyName` and `companyId`.
    #[oai(validator(max_length = 200))]
    pub company_name: Option<String>,
    /// An existing company of yours to connect instead of creating one.
    pub company_id: Option<Uuid>,
    /// The platform's authorization body: the schema named by the integration's
    /// `authorizationSchemaName` (the body `PUT .../authorization` takes). Sealed as soon as it
    /// arrives, stored on the connection at import, then dropped from the batch; never returned.
    pub authorization: serde_json::Value,
}

/// A batch of companies to migrate from one platform.
#[derive(Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct MigrationInput {
    /// The platform every row's tokens are from (`xero`); it must take migrated tokens and
    /// have a connector (the canary is verified and synced).
    #[oai(validator(min_length = 1, max_length = 64))]
    pub platform_key: String,
    /// Your reference for the batch, 1 to 200 characters. Sending a batch with a reference
    /// already used answers the stored batch (same rows) or 409 (other rows): a retried
    /// request never stores a batch twice.
    #[oai(validator(min_length = 1, max_length = 200))]
    pub reference: Option<String>,
    /// Prove each row's tokens with the platform after importing them (default `true`).
    pub verify: Option<bool>,
    /// Sync each row's data after importing (and verifying) it (default `false`). The canary
    /// is always verified and synced.
    pub sync: Option<bool>,
    /// The `externalReference` of the row to import first, alone, as the canary (default: the first row).
    #[oai(validator(min_length = 1, max_length = 200))]
    pub canary_reference: Option<String>,
    /// The companies, 1 to 10,000 (the request body may be up to 32 MiB).
    #[oai(validator(min_items = 1, max_items = 10000))]
    pub rows: Vec<MigrationRowInput>,
}

// The inputs carry tokens: their `Debug` never shows an authorization body.
impl std::fmt::Debug for MigrationRowInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MigrationRowInput")
            .field("external_reference", &self.external_reference)
            .field("company_name", &self.company_name)
            .field("company_id", &self.company_id)
            .field("authorization", &"<redacted>")
            .finish()
    }
}

impl std::fmt::Debug for MigrationInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MigrationInput")
            .field("platform_key", &self.platform_key)
            .field("reference", &self.reference)
            .field("rows", &self.rows.len())
            .finish_non_exhaustive()
    }
}

/// How many rows are in each state.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct MigrationRowCounts {
    /// Not imported yet.
    pub pending: u64,
    /// Imported (company, connection, tokens stored).
    pub imported: u64,
    /// Imported and accepted by the platform.
    pub verified: u64,
    /// First sync running.
    pub syncing: u64,
    /// First sync completed.
    pub synced: u64,
    /// Stopped with a reason.
    pub failed: u64,
    /// Dropped by a cancellation before their import.
    pub cancelled: u64,
}

impl From<&BTreeMap<String, u64>> for MigrationRowCounts {
    fn from(counts: &BTreeMap<String, u64>) -> Self {
        let count = |state: RowState| {
            counts
                .get(&managed_migrations::row_state_name(state))
                .copied()
                .unwrap_or(0)
        };
        Self {
            pending: count(RowState::Pending),
            imported: count(RowState::Imported),
            verified: count(RowState::Verified),
            syncing: count(RowState::Syncing),
            synced: count(RowState::Synced),
            failed: count(RowState::Failed),
            cancelled: count(RowState::Cancelled),
        }
    }
}

/// A step of the checklist (the specification's steps 1-4).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct MigrationChecklistItem {
    /// The step.
    pub step: Described<ChecklistStep>,
    /// Whether it is done.
    pub done: bool,
    /// `true`: tributary checks it itself; `false`: a person attests it.
    pub checked_by_tributary: bool,
    /// Who attested it; null if no one did (or tributary checks it).
    pub attested_by: Nullable<String>,
    /// Their note; null if none.
    pub note: Nullable<String>,
    /// When it was attested, or when what tributary checks was last set; null while not done.
    pub at: Nullable<Timestamp>,
    /// For `callbackUrlAdded`: the callback URL to add to your OAuth application (as `callbackUrl` of `GET /integrations/{platformKey}`); null for the other steps.
    pub callback_url: Nullable<String>,
}

impl MigrationChecklistItem {
    /// The step as answered; `callback_url` is the batch's platform's.
    fn of(item: ChecklistItem, callback_url: &str) -> Self {
        Self {
            callback_url: (item.step == ChecklistStep::CallbackUrlAdded)
                .then(|| callback_url.to_owned())
                .into(),
            step: Described(item.step),
            done: item.done,
            checked_by_tributary: item.checked_by_tributary,
            attested_by: item.attested_by.into(),
            note: item.note.into(),
            at: item.at.map(Timestamp).into(),
        }
    }
}

/// One company of a batch and how far it got. Never its tokens.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct MigrationRow {
    /// The row's id.
    pub id: Uuid,
    /// Its place in the batch, from 0 (`rows[N]` in validation errors).
    pub position: i32,
    /// Your reference for the company.
    pub external_reference: String,
    /// The name of the company to create; null when the row named a company by id.
    pub company_name: Nullable<String>,
    /// The company, once known (named, reused or created); null before the import.
    pub company_id: Nullable<Uuid>,
    /// The connection holding the tokens, once imported; null before.
    pub connection_id: Nullable<Uuid>,
    /// The platform's organization id from the authorization body (not secret).
    pub organization_id: String,
    /// Where it stands.
    pub state: Described<RowState>,
    /// Whether verifying it refreshed its tokens (the access token was expiring).
    pub refreshed: bool,
    /// Records its first sync fetched, per data type (`{"invoices": 250}`); empty before.
    pub records: BTreeMap<String, i64>,
    /// Why it failed; null unless `Failed`.
    pub failure: Nullable<String>,
    /// What to do about the failure; null unless `Failed`.
    pub what_to_do: Nullable<String>,
    /// When it is tried again after its platform could not be reached; null if not waiting.
    pub next_attempt: Nullable<Timestamp>,
    /// When it was imported.
    pub imported: Nullable<Timestamp>,
    /// When the platform accepted its tokens.
    pub verified: Nullable<Timestamp>,
    /// When its first sync completed.
    pub synced: Nullable<Timestamp>,
    /// When it last changed.
    pub updated: Timestamp,
}

impl From<entity::migration_row::Model> for MigrationRow {
    fn from(row: entity::migration_row::Model) -> Self {
        let problem = managed_migrations::row_problem(&row);
        let records = managed_migrations::row_records(&row);
        let waiting = row
            .next_attempt
            .filter(|_| row.state != RowState::Failed && row.attempts > 0);
        Self {
            id: row.id,
            position: row.position,
            external_reference: row.external_reference,
            company_name: row.company_name.into(),
            company_id: row.company_id.into(),
            connection_id: row.connection_id.into(),
            organization_id: row.organization_id,
            state: Described(row.state),
            refreshed: row.refreshed,
            records,
            failure: problem
                .as_ref()
                .map(|problem| problem.message.clone())
                .into(),
            what_to_do: problem
                .filter(|problem| problem.remedy.is_some())
                .map(|problem| what_to_do(&problem))
                .into(),
            next_attempt: waiting.map(Timestamp).into(),
            imported: row.imported.map(Timestamp).into(),
            verified: row.verified.map(Timestamp).into(),
            synced: row.synced.map(Timestamp).into(),
            updated: row.updated.into(),
        }
    }
}

/// A managed migration batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Migration {
    /// The batch's id, used as `{migrationId}` in paths.
    pub id: Uuid,
    /// The platform its tokens are from.
    pub platform_key: String,
    /// Your reference for the batch; null if none.
    pub reference: Nullable<String>,
    /// Where it stands.
    pub state: Described<BatchState>,
    /// Whether each row's tokens are proved with the platform.
    pub verify: bool,
    /// Whether each row is synced after its import.
    pub sync: bool,
    /// How many rows it has.
    pub row_count: i32,
    /// Rows per state.
    pub counts: MigrationRowCounts,
    /// The specification's steps 1-4; the batch starts only once all are done.
    pub checklist: Vec<MigrationChecklistItem>,
    /// The canary row (step 5): imported, verified and synced alone before the rest.
    pub canary: MigrationRow,
    /// Why the canary failed; null unless `CanaryFailed`.
    pub failure: Nullable<String>,
    /// When it was created.
    pub created: Timestamp,
    /// When its canary was (last) started.
    pub started: Nullable<Timestamp>,
    /// When the rest was allowed to proceed.
    pub proceeded: Nullable<Timestamp>,
    /// When its last row ended, or it was cancelled.
    pub completed: Nullable<Timestamp>,
}

impl Migration {
    /// The batch as answered, its checklist naming the platform's callback
    /// under `public_url`.
    pub fn of(summary: BatchSummary, public_url: &str) -> Self {
        let batch = summary.batch;
        let callback_url = Urls {
            public_base: public_url,
        }
        .callback(&batch.platform_key);
        Self {
            id: batch.id,
            platform_key: batch.platform_key,
            reference: batch.reference.into(),
            state: Described(batch.state),
            verify: batch.verify,
            sync: batch.sync,
            row_count: batch.row_count,
            counts: (&summary.counts).into(),
            checklist: summary
                .checklist
                .into_iter()
                .map(|item| MigrationChecklistItem::of(item, &callback_url))
                .collect(),
            canary: summary.canary.into(),
            failure: batch.failure.into(),
            created: batch.created.into(),
            started: batch.started.map(Timestamp).into(),
            proceeded: batch.proceeded.map(Timestamp).into(),
            completed: batch.completed.map(Timestamp).into(),
        }
    }
}

/// What a valid batch would do: the answer of a dry run, which stores nothing.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct MigrationPlan {
    /// The platform.
    pub platform_key: String,
    /// How many rows it has.
    pub rows: u64,
    /// Rows that would create a company.
    pub companies_to_create: u64,
    /// Rows naming an existing company by id.
    pub companies_named: u64,
    /// Rows whose `externalReference` an earlier batch imported: their company and connection are reused.
    pub references_imported_before: u64,
    /// The canary row's `externalReference`.
    pub canary_reference: String,
}

impl From<Plan> for MigrationPlan {
    fn from(plan: Plan) -> Self {
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        Self {
            platform_key: plan.platform.platform_key.to_owned(),
            rows: count(plan.rows),
            companies_to_create: count(plan.companies_to_create),
            companies_named: count(plan.companies_named),
            references_imported_before: count(plan.references_imported_before),
            canary_reference: plan.canary_reference,
        }
    }
}

/// The answer of `createMigration`: what the batch does and, unless it was a dry run, the batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct MigrationCreation {
    /// What the batch does, as validated now; null when the batch was found (sent before with
    /// the same reference) rather than validated again.
    pub plan: Nullable<MigrationPlan>,
    /// The stored batch; null on a dry run, which stores nothing.
    pub migration: Nullable<Migration>,
}

/// The handover report: every row with what was imported, verified and synced.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct MigrationReport {
    /// The batch.
    pub migration_id: Uuid,
    /// The platform.
    pub platform_key: String,
    /// The platform's name.
    pub platform_name: String,
    /// Where the batch stands.
    pub state: Described<BatchState>,
    /// When the report was made.
    pub generated: Timestamp,
    /// Rows per state.
    pub counts: MigrationRowCounts,
    /// Every row, in batch order.
    pub rows: Vec<MigrationRow>,
}

impl From<Report> for MigrationReport {
    fn from(report: Report) -> Self {
        Self {
            migration_id: report.batch.id,
            platform_key: report.batch.platform_key,
            platform_name: report.platform_name.to_owned(),
            state: Described(report.batch.state),
            generated: chrono::Utc::now().into(),
            counts: (&report.counts).into(),
            rows: report.rows.into_iter().map(Into::into).collect(),
        }
    }
}

/// Who attests a checklist step.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttestationInput {
    /// The person attesting it (their name or email), 1 to 200 characters.
    #[oai(validator(min_length = 1, max_length = 200, pattern = r"\S"))]
    pub attested_by: String,
    /// Anything worth recording (the scheduled date, the application's name), up to 2,000 characters.
    #[oai(validator(max_length = 2000))]
    pub note: Option<String>,
}
