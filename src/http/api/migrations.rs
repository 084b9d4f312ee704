//! `/migrations`: managed migrations. A batch of companies' tokens from one
//! platform, validated whole (or only validated, `dryRun`), its checklist,
//! the canary, proceeding, retries, cancelling, its rows and its report.

mod payloads;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, PlainText};
use poem_openapi::{ApiResponse, OpenApi};
use uuid::Uuid;

use crate::error::Error;
use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status};
use crate::http::json_body::JsonBody;
use crate::http::paging::{ListLocation, Paged};
use crate::http::state::AppState;
use crate::managed_migrations::report;
use crate::managed_migrations::{self, BatchInput, Created, RowInput, checklist};
use crate::paging::{self, PageRequest};
use crate::tenant::Tenant;

use payloads::what_to_do;
pub use payloads::{
    AttestationInput, Migration, MigrationChecklistItem, MigrationCreation, MigrationInput,
    MigrationPlan, MigrationReport, MigrationRow, MigrationRowCounts, MigrationRowInput,
};

/// Managed migration endpoints.
pub struct MigrationsApi;

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
                    migration: Some(Migration::of(summary, &state.public_url)).into(),
                };
                MigrationCreated::Created(Json(creation), location, None)
            }
            Created::Existing(summary) => {
                let location = format!("/migrations/{}", summary.batch.id);
                let creation = MigrationCreation {
                    plan: None.into(),
                    migration: Some(Migration::of(summary, &state.public_url)).into(),
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
        let results = batches
            .into_iter()
            .map(|summary| Migration::of(summary, &state.public_url))
            .collect();
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
        Ok(MigrationFound::Ok(Json(Migration::of(
            summary,
            &state.public_url,
        ))))
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
        Ok(MigrationFound::Ok(Json(Migration::of(
            summary,
            &state.public_url,
        ))))
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
        Ok(MigrationAccepted::Accepted(Json(Migration::of(
            summary,
            &state.public_url,
        ))))
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
        Ok(MigrationAccepted::Accepted(Json(Migration::of(
            summary,
            &state.public_url,
        ))))
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
        Ok(MigrationAccepted::Accepted(Json(Migration::of(
            summary,
            &state.public_url,
        ))))
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
        Ok(MigrationFound::Ok(Json(Migration::of(
            summary,
            &state.public_url,
        ))))
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
