//! `/migrations`: managed migrations. A batch of companies' tokens from one
//! platform, validated whole (or only validated, `dryRun`), its checklist,
//! the canary, proceeding, retries, cancelling, its rows and its report.

use std::collections::BTreeMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, PlainText};
use poem_openapi::{ApiResponse, Object, OpenApi};
use uuid::Uuid;

use crate::error::Error;
use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status, worded};
use crate::http::json_body::JsonBody;
use crate::http::paging::{ListLocation, Paged};
use crate::http::schema::Described;
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::managed_migrations::report::{self, Report};
use crate::managed_migrations::{
    self, BatchInput, BatchState, BatchSummary, ChecklistItem, ChecklistStep, Created, Plan,
    RowInput, RowState, checklist,
};
use crate::paging::{self, PageRequest};
use crate::tenant::Tenant;

/// Managed migration endpoints.
pub struct MigrationsApi;

/// A failure's remedy in words: what `worded` adds after the message.
fn what_to_do(problem: &crate::error::Problem) -> String {
    let message_len = problem.message.len();
    worded(problem.clone())
        .get(message_len..)
        .unwrap_or_default()
        .trim()
        .to_owned()
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
}

impl From<ChecklistItem> for MigrationChecklistItem {
    fn from(item: ChecklistItem) -> Self {
        Self {
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

impl From<BatchSummary> for Migration {
    fn from(summary: BatchSummary) -> Self {
        let batch = summary.batch;
        Self {
            id: batch.id,
            platform_key: batch.platform_key,
            reference: batch.reference.into(),
            state: Described(batch.state),
            verify: batch.verify,
            sync: batch.sync,
            row_count: batch.row_count,
            counts: (&summary.counts).into(),
            checklist: summary.checklist.into_iter().map(Into::into).collect(),
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

/// Answer of `createMigration`.
#[derive(ApiResponse)]
pub enum MigrationCreated {
    /// The batch was stored as `Draft` (or, for a reference sent before with the same rows,
    /// found: `Idempotent-Replayed: true`); `Location` is its path.
    #[oai(status = 201)]
    Created(
        Json<MigrationCreation>,
        /// The path of the batch.
        #[oai(header = "Location")]
        String,
        /// `true` when the batch was stored by an earlier request with the same reference.
        #[oai(header = "Idempotent-Replayed")]
        Option<String>,
    ),
    /// `dryRun=true`: the batch is valid, and `plan` says what it would do. Nothing was stored.
    #[oai(status = 200)]
    Validated(Json<MigrationCreation>),
}

/// Answer of the operations reading or changing one batch.
#[derive(ApiResponse)]
pub enum MigrationFound {
    /// The batch.
    #[oai(status = 200)]
    Ok(Json<Migration>),
}

/// Answer of `startMigration`, `proceedMigration` and `retryFailedMigrationRows`.
#[derive(ApiResponse)]
pub enum MigrationAccepted {
    /// Accepted: the rows are advanced in the background; follow `GET /migrations/{migrationId}`.
    #[oai(status = 202)]
    Accepted(Json<Migration>),
}

/// Answer of `listMigrations`.
#[derive(ApiResponse)]
pub enum MigrationPage {
    /// A page of your batches, newest first.
    #[oai(status = 200)]
    Ok(Json<Paged<Migration>>),
}

/// Answer of `listMigrationRows`.
#[derive(ApiResponse)]
pub enum MigrationRowPage {
    /// A page of the batch's rows, in batch order.
    #[oai(status = 200)]
    Ok(Json<Paged<MigrationRow>>),
}

/// Answer of `getMigrationReport`.
#[derive(ApiResponse)]
pub enum MigrationReportFound {
    /// The report.
    #[oai(status = 200)]
    Ok(Json<MigrationReport>),
}

/// Answer of `getMigrationReportCsv`.
#[derive(ApiResponse)]
pub enum MigrationReportCsv {
    /// The report as CSV: a header line, then one line per row.
    #[oai(status = 200, content_type = "text/csv; charset=utf-8")]
    Ok(PlainText<String>),
}

type CreateErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY | status::CONFLICT }>;
type ListErrors = ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST }>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type ChangeErrors = ErrorResponses<
    { status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND | status::CONFLICT },
>;
type AttestErrors = ErrorResponses<
    { status::AUTHENTICATED | status::JSON_BODY | status::NOT_FOUND | status::CONFLICT },
>;

#[OpenApi(tag = "ApiTags::Migrations")]
impl MigrationsApi {
    /// Create a migration batch
    ///
    /// Stores a batch of companies whose tokens your own OAuth application
    /// obtained on one platform, to move them to tributary in one supervised
    /// operation (the managed migration). The whole batch is validated first:
    /// every row's reference, its company (`companyName` to create one, or
    /// `companyId`), and its `authorization` against the platform's body
    /// schema; every problem is answered at once, by row and field
    /// (`rows[3].authorization.refreshToken`), with no value echoed. With
    /// `dryRun=true` nothing is stored and the answer says what the batch
    /// would do.
    ///
    /// A stored batch is `Draft`: nothing is imported until its checklist
    /// is done and `POST /migrations/{migrationId}/start` runs its canary.
    /// Tokens are sealed as they arrive, moved to the connection at import
    /// and dropped from the batch; they are never returned or reported.
    #[oai(
        path = "/migrations",
        method = "post",
        operation_id = "createMigration"
    )]
    async fn create_migration(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// `true`: validate only, store nothing (default `false`).
        #[oai(name = "dryRun")]
        dry_run: Query<Option<bool>>,
        body: JsonBody<MigrationInput>,
    ) -> Result<MigrationCreated, CreateErrors> {
        let body = body.0;
        let input = BatchInput {
            platform_key: body.platform_key,
            reference: body.reference,
            verify: body.verify.unwrap_or(true),
            sync: body.sync.unwrap_or(false),
            canary_reference: body.canary_reference,
            rows: body
                .rows
                .into_iter()
                .map(|row| RowInput {
                    external_reference: row.external_reference,
                    company_name: row.company_name,
                    company_id: row.company_id,
                    authorization: row.authorization,
                })
                .collect(),
        };
        let created = managed_migrations::create(
            &state.db,
            &state.keyring,
            &state.connectors,
            tenant,
            input,
            dry_run.0.unwrap_or(false),
        )
        .await?;
        Ok(match created {
            Created::DryRun(plan) => MigrationCreated::Validated(Json(MigrationCreation {
                plan: Some(plan.into()).into(),
                migration: None.into(),
            })),
            Created::New(plan, summary) => {
                let location = format!("/migrations/{}", summary.batch.id);
                let creation = MigrationCreation {
                    plan: Some(plan.into()).into(),
                    migration: Some(summary.into()).into(),
                };
                MigrationCreated::Created(Json(creation), location, None)
            }
            Created::Existing(summary) => {
                let location = format!("/migrations/{}", summary.batch.id);
                let creation = MigrationCreation {
                    plan: None.into(),
                    migration: Some(summary.into()).into(),
                };
                MigrationCreated::Created(Json(creation), location, Some("true".to_owned()))
            }
        })
    }

    /// List migration batches
    ///
    /// Your batches, newest first, in the paged envelope, each with its
    /// checklist, counts and canary.
    #[oai(path = "/migrations", method = "get", operation_id = "listMigrations")]
    async fn list_migrations(
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
    ) -> Result<MigrationPage, ListErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let (batches, total) = managed_migrations::list(&state.db, tenant, page).await?;
        let results = batches.into_iter().map(Migration::from).collect();
        let location = ListLocation::new(request.uri().path());
        Ok(MigrationPage::Ok(Json(Paged::new(
            results, total, page, &location,
        ))))
    }

    /// Get a migration batch
    ///
    /// The batch's state, its rows' counts per state, its checklist and its
    /// canary's result: records per data type, whether its tokens were
    /// refreshed, and any failure with what to do about it.
    #[oai(
        path = "/migrations/:migrationId",
        method = "get",
        operation_id = "getMigration"
    )]
    async fn get_migration(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
    ) -> Result<MigrationFound, ReadErrors> {
        let summary = managed_migrations::find(&state.db, tenant, migration_id.0).await?;
        Ok(MigrationFound::Ok(Json(summary.into())))
    }

    /// Attest a checklist step
    ///
    /// Records that a person did a step of the process that tributary cannot
    /// check: `migrationScheduled` (step 2), `callbackUrlAdded` (step 3, your
    /// OAuth application at the platform has tributary's callback URL) and
    /// `oldApplicationSyncDisabled` (step 4, your old application no longer
    /// syncs these companies, so it does not refresh their tokens). Who and
    /// when are recorded; attesting again replaces the record. Step 1,
    /// `oauthClientRegistered`, is checked by tributary (400 here): it is done
    /// once `PUT /integrations/{platformKey}/oauth-client` stored your OAuth
    /// client. Only before the batch starts (409 after).
    #[oai(
        path = "/migrations/:migrationId/checklist/:step",
        method = "put",
        operation_id = "attestMigrationStep"
    )]
    async fn attest_step(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
        /// The step: `migrationScheduled`, `callbackUrlAdded` or `oldApplicationSyncDisabled` (any case).
        step: Path<String>,
        body: JsonBody<AttestationInput>,
    ) -> Result<MigrationFound, AttestErrors> {
        let body = body.0;
        let summary = checklist::attest(
            &state.db,
            tenant,
            migration_id.0,
            &step.0,
            &body.attested_by,
            body.note,
        )
        .await?;
        Ok(MigrationFound::Ok(Json(summary.into())))
    }

    /// Start a migration's canary
    ///
    /// Step 5: once every checklist step is done (409 naming those that are
    /// not), the canary row is imported alone, its tokens verified with the
    /// platform (refreshed first with your OAuth client if they expire
    /// soon), and its first sync run. The batch is then `AwaitingProceed`
    /// (see `canary` for the records per data type) or, on any failure,
    /// `CanaryFailed` with the reason; nothing else is imported either way.
    /// Starting a batch whose canary failed runs the canary again.
    #[oai(
        path = "/migrations/:migrationId/start",
        method = "post",
        operation_id = "startMigration"
    )]
    async fn start_migration(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
    ) -> Result<MigrationAccepted, ChangeErrors> {
        let summary = managed_migrations::start(&state.db, tenant, migration_id.0).await?;
        state.migrations.wake();
        Ok(MigrationAccepted::Accepted(Json(summary.into())))
    }

    /// Proceed with a migration after its canary
    ///
    /// Step 6: imports the remaining rows, a few at a time per platform
    /// (waiting when the platform is unreachable or limits the rate), each
    /// verified and, if the batch asks, synced. A row that fails does not
    /// stop the others. Only a batch whose canary passed (`AwaitingProceed`)
    /// proceeds (409 otherwise). The batch is `Completed` when every row has
    /// ended; a server restart (even a crash) resumes it where it stopped.
    #[oai(
        path = "/migrations/:migrationId/proceed",
        method = "post",
        operation_id = "proceedMigration"
    )]
    async fn proceed_migration(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
    ) -> Result<MigrationAccepted, ChangeErrors> {
        let summary = managed_migrations::proceed(&state.db, tenant, migration_id.0).await?;
        state.migrations.wake();
        Ok(MigrationAccepted::Accepted(Json(summary.into())))
    }

    /// Retry a migration's failed rows
    ///
    /// Puts every `Failed` row back at the step it failed at (its import, if
    /// it was never imported; else its verification and sync), once you have
    /// fixed the cause (an OAuth client stored, a platform back). Rows whose
    /// tokens the platform rejected fail again: send their current tokens in
    /// a new batch with the same `externalReference`. For a running or
    /// completed batch (409 otherwise).
    #[oai(
        path = "/migrations/:migrationId/retryFailed",
        method = "post",
        operation_id = "retryFailedMigrationRows"
    )]
    async fn retry_failed(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
    ) -> Result<MigrationAccepted, ChangeErrors> {
        let summary = managed_migrations::retry_failed(&state.db, tenant, migration_id.0).await?;
        state.migrations.wake();
        Ok(MigrationAccepted::Accepted(Json(summary.into())))
    }

    /// Cancel a migration
    ///
    /// Rows not imported yet (waiting, or failed before their import) end
    /// `Cancelled` and their tokens are dropped; rows already imported keep
    /// their company and connection, and a first sync already running
    /// finishes. A completed batch can be cancelled too, to drop the tokens
    /// its failed rows still hold. 409 for a batch cancelled already.
    #[oai(
        path = "/migrations/:migrationId/cancel",
        method = "post",
        operation_id = "cancelMigration"
    )]
    async fn cancel_migration(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
    ) -> Result<MigrationFound, ChangeErrors> {
        let summary = managed_migrations::cancel(&state.db, tenant, migration_id.0).await?;
        Ok(MigrationFound::Ok(Json(summary.into())))
    }

    /// List a migration's rows
    ///
    /// The batch's rows in batch order, in the paged envelope, optionally
    /// only those in one state (`state=Failed`), each with its company and
    /// connection ids, record counts and any failure with what to do.
    #[oai(
        path = "/migrations/:migrationId/rows",
        method = "get",
        operation_id = "listMigrationRows"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_rows(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        request: &Request,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
        /// Only rows in this state: `Pending`, `Imported`, `Verified`, `Syncing`, `Synced`, `Failed` or `Cancelled` (any case).
        #[oai(name = "state")]
        row_state: Query<Option<String>>,
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
    ) -> Result<MigrationRowPage, ReadErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let wanted = row_state
            .0
            .as_deref()
            .map(managed_migrations::requested_row_state)
            .transpose()?;
        let (rows, total) =
            managed_migrations::rows(&state.db, tenant, migration_id.0, wanted, page).await?;
        let results = rows.into_iter().map(MigrationRow::from).collect();
        let location = ListLocation::new(request.uri().path())
            .filter("state", wanted.map(managed_migrations::row_state_name));
        Ok(MigrationRowPage::Ok(Json(Paged::new(
            results, total, page, &location,
        ))))
    }

    /// Get a migration's report
    ///
    /// The handover report: the batch, its counts, and every row with what
    /// was imported, verified and synced, record counts, and each failure
    /// with what to do about it. No token is in it. The same as CSV:
    /// `GET /migrations/{migrationId}/report.csv`.
    #[oai(
        path = "/migrations/:migrationId/report",
        method = "get",
        operation_id = "getMigrationReport"
    )]
    async fn get_report(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
    ) -> Result<MigrationReportFound, ReadErrors> {
        let report = report::report(&state.db, tenant, migration_id.0).await?;
        Ok(MigrationReportFound::Ok(Json(report.into())))
    }

    /// Get a migration's report as CSV
    ///
    /// The handover report for spreadsheets: a header line, then one line
    /// per row in batch order (`position`, `externalReference`,
    /// `platformKey`, `companyName`, `companyId`, `connectionId`,
    /// `organizationId`, `state`, `imported`, `verified`, `synced`,
    /// `refreshed`, `records` as `invoices=250;customers=40`, `failure`,
    /// `whatToDo`). Cells a spreadsheet would run as a formula start with an
    /// apostrophe. No token is in it.
    #[oai(
        path = "/migrations/:migrationId/report.csv",
        method = "get",
        operation_id = "getMigrationReportCsv"
    )]
    async fn get_report_csv(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The batch's id.
        #[oai(name = "migrationId")]
        migration_id: Path<Uuid>,
    ) -> Result<MigrationReportCsv, ReadErrors> {
        let report = report::report(&state.db, tenant, migration_id.0).await?;
        let text = report::to_csv(&report, |problem| {
            (problem.message.clone(), what_to_do(problem))
        })
        .map_err(Error::internal)?;
        Ok(MigrationReportCsv::Ok(PlainText(text)))
    }
}
