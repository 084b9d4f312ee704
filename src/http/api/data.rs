//! `/companies/{companyId}/data...` and `/dataStatus`: triggering syncs,
//! their history and status. The synced records' lists are in [`super::records`].

use std::collections::BTreeMap;

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use uuid::Uuid;

use entity::pull_operation;

use crate::data::DataType;
use crate::error::FieldError;
use crate::error::Problem;
use crate::http::api::ApiTags;
use crate::http::error::{ApiError, ErrorResponses, status, worded};
use crate::http::paging::{ListLocation, Paged};
use crate::http::schema::Described;
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::paging::{self, PageRequest};
use crate::platforms::connector;
use crate::sync::operations::{self, Fetch, FetchMode, HistoryFilter, PullStatus};
use crate::tenant::Tenant;

/// Data endpoints.
pub struct DataApi;

/// The sync of one data type of one connection.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct PullOperation {
    /// The operation's id.
    pub pull_operation_id: Uuid,
    /// The company whose data it syncs.
    pub company_id: Uuid,
    /// The connection it syncs from.
    pub connection_id: Uuid,
    /// The data type it syncs.
    pub data_type: Described<DataType>,
    /// Where it stands.
    pub status: Described<PullStatus>,
    /// When it was queued.
    pub requested: Timestamp,
    /// When a worker started it; null while queued.
    pub started: Nullable<Timestamp>,
    /// When it finished (in any final status); null until then.
    pub completed: Nullable<Timestamp>,
    /// Progress, 0 to 100.
    pub progress: i32,
    /// Records fetched so far.
    pub records_fetched: i64,
    /// The records the platform sent that could not be read (at most 20, the first found): each cost only itself,
    /// and kept its previously synced copy. Empty when every record was read.
    pub issues: Vec<RecordIssue>,
    /// How many more records could not be read than `issues` lists.
    pub issues_not_shown: i64,
    /// How it fetches: `Full` (the platform's whole list; records it no longer lists are flagged `isDeleted`) or
    /// `Incremental` (only what the platform says changed since the last sync; the other records keep their copies).
    /// Null until a worker starts it, and for operations that fetch nothing (`NotSupported`).
    pub fetch_mode: Nullable<Described<FetchMode>>,
    /// Why it failed or fetched nothing, in words to act on; null unless `Failed`, `AuthError`, `PermissionsError`, `RateLimitError`, `Cancelled` or `NotSupported`.
    pub error_message: Nullable<String>,
    /// While `Fetching`: when the worker's lease on it lapses. A working worker renews it every few seconds, so a time
    /// in the past means the worker stopped (its server died); another worker then takes the operation over, or ends it
    /// `Failed` after its last attempt. Until the lease lapses (at most 30 seconds) a dead worker's operation still
    /// shows `Fetching`. Null unless `Fetching`.
    pub lease_expires_at: Nullable<Timestamp>,
}

/// A record the platform sent that tributary could not read. Never shows what the record holds.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct RecordIssue {
    /// The record's id at the platform; null when the id itself could not be read.
    pub record_id: Nullable<String>,
    /// The field at fault, as a path in the platform's record (`LineItems[0].UnitAmount`); null when no one field is.
    pub field: Nullable<String>,
    /// Why it could not be read.
    pub reason: String,
}

impl From<connector::RecordIssue> for RecordIssue {
    fn from(issue: connector::RecordIssue) -> Self {
        Self {
            record_id: issue.record_id.into(),
            field: issue.field.into(),
            reason: issue.reason,
        }
    }
}

impl TryFrom<pull_operation::Model> for PullOperation {
    type Error = ApiError;

    fn try_from(row: pull_operation::Model) -> Result<Self, ApiError> {
        let corrupt = |what: &str| {
            ApiError::internal(anyhow::anyhow!(
                "stored pull operation has an unknown {what}"
            ))
        };
        let (issues, not_shown) = operations::issues::stored(&row);
        Ok(Self {
            pull_operation_id: row.id,
            company_id: row.company_id,
            connection_id: row.connection_id,
            data_type: DataType::named(&row.data_type)
                .ok_or_else(|| corrupt("data type"))?
                .into(),
            status: row.status.into(),
            requested: row.requested.into(),
            started: row.started.map(Timestamp).into(),
            completed: row.completed.map(Timestamp).into(),
            progress: row.progress,
            records_fetched: row.records_fetched,
            issues: issues.into_iter().map(RecordIssue::from).collect(),
            issues_not_shown: not_shown as i64,
            fetch_mode: row.fetch_mode.map(Described::from).into(),
            error_message: row
                .error_message
                .map(|message| {
                    let remedy = row
                        .error_remedy
                        .as_deref()
                        .and_then(|remedy| serde_json::from_str(remedy).ok());
                    worded(Problem { message, remedy })
                })
                .into(),
            lease_expires_at: row
                .lease_expires_at
                .filter(|_| row.status == PullStatus::Fetching)
                .map(Timestamp)
                .into(),
        })
    }
}

/// What `?full=` asks a queued sync to fetch.
fn fetch_asked(full: Option<bool>) -> Fetch {
    if full == Some(true) {
        Fetch::Full
    } else {
        Fetch::Due
    }
}

fn operations_of(rows: Vec<pull_operation::Model>) -> Result<Vec<PullOperation>, ApiError> {
    rows.into_iter().map(PullOperation::try_from).collect()
}

/// Where one data type of a company stands.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct DataTypeStatus {
    /// The data type.
    pub data_type: Described<DataType>,
    /// The status of its latest pull operation.
    pub current_status: Described<PullStatus>,
    /// When its data last completed a sync; null if never.
    pub last_successful_sync: Nullable<Timestamp>,
    /// Its latest pull operation.
    pub latest_sync_id: Uuid,
    /// Its latest completed pull operation; null if none.
    pub latest_successful_sync_id: Nullable<Uuid>,
}

/// Answer of the sync triggers.
#[derive(ApiResponse)]
pub enum Queued {
    /// The pull operations queued, or already queued or running, one per data type of each `Linked` connection (and, for one data type, a `NotSupported` one per `Linked` connection whose platform lacks it).
    #[oai(status = 202)]
    Accepted(Json<Vec<PullOperation>>),
}

/// Answer of `listPullOperations`.
#[derive(ApiResponse)]
pub enum PullOperationPage {
    /// A page of the company's pull operations, newest first.
    #[oai(status = 200)]
    Ok(Json<Paged<PullOperation>>),
}

/// Answer of `getPullOperation`.
#[derive(ApiResponse)]
pub enum PullOperationFound {
    /// The pull operation.
    #[oai(status = 200)]
    Ok(Json<PullOperation>),
}

/// Answer of `getDataStatus`.
#[derive(ApiResponse)]
pub enum DataStatusFound {
    /// Per data type that was ever queued, keyed by data type.
    #[oai(status = 200)]
    Ok(Json<BTreeMap<String, DataTypeStatus>>),
}

type TriggerErrors = ErrorResponses<
    { status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND | status::CONFLICT },
>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;

fn requested_pull_status(text: Option<&str>) -> Result<Option<PullStatus>, ApiError> {
    text.map(|text| {
        operations::pull_status_named(text).ok_or_else(|| {
            let allowed = operations::pull_status_names();
            ApiError::validation(vec![FieldError::new(
                "status",
                format!("must be one of {} (any case)", allowed.join(", ")),
            )])
        })
    })
    .transpose()
}

#[OpenApi(tag = "ApiTags::Data")]
impl DataApi {
    /// Sync all data
    ///
    /// Queues a pull operation for every data type of every `Linked`
    /// connection of the company (those your sync settings choose, when you
    /// set them: `PUT /syncSettings`) and answers 202 with them. A data type
    /// already queued or running is not queued twice: its operation is
    /// returned. Nothing syncs unless you call this (or `queueDataType`);
    /// in particular, not after a token migration. 409 when the company has
    /// no `Linked` connection, or none that syncs a data type you chose.
    ///
    /// After a data type's first complete sync, each sync fetches only what
    /// the platform says changed since the last one, where the platform can
    /// say (`fetchMode: Incremental`; `GET /integrations/{platformKey}`
    /// lists them in `incrementalDataTypes`). Where its changes do not carry what it
    /// deleted, the first sync a day after the last full fetch fetches the
    /// whole list again, flagging what it no longer lists (`Full`);
    /// `full=true` asks for the whole list now.
    #[oai(
        path = "/companies/:companyId/data/all",
        method = "post",
        operation_id = "syncAllData"
    )]
    async fn sync_all_data(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// `true`: fetch every data type's whole list from the platform, not
        /// only what changed since the last sync (a reconciliation: records the
        /// platform deleted are flagged `isDeleted`). An operation already
        /// running keeps the fetch it started with.
        full: Query<Option<bool>>,
    ) -> Result<Queued, TriggerErrors> {
        let fetch = fetch_asked(full.0);
        let queued = operations::queue_all(&state.db, tenant, company_id.0, fetch).await?;
        state.sync_wake.notify_waiters();
        Ok(Queued::Accepted(Json(operations_of(queued)?)))
    }

    /// Sync one data type
    ///
    /// Queues `dataType` for every `Linked` connection whose platform has
    /// it, like `syncAllData`. For each `Linked` connection whose platform
    /// does not have it (a bank has no invoices), the answer holds an
    /// operation that ended `NotSupported` at once, saying which data types
    /// that platform has (`GET /integrations/{platformKey}` lists them).
    /// `full=true` fetches the whole list, as for `syncAllData`.
    #[oai(
        path = "/companies/:companyId/data/queue/:dataType",
        method = "post",
        operation_id = "queueDataType"
    )]
    async fn queue_data_type(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The data type: `invoices`, `customers`, `orders`, `bankAccounts`, `bankTransactions`, `accounts`, `suppliers`, `taxRates`, `bills`, `payments`, `billPayments`, `creditNotes`, `items`, `companyInfo` or `journalEntries`.
        #[oai(name = "dataType")]
        data_type: Path<String>,
        /// `true`: fetch the platform's whole list, not only what changed since
        /// the last sync (a reconciliation: records the platform deleted are
        /// flagged `isDeleted`). An operation already running keeps the fetch
        /// it started with.
        full: Query<Option<bool>>,
    ) -> Result<Queued, TriggerErrors> {
        let data_type = operations::requested_data_type("dataType", &data_type.0)?;
        let fetch = fetch_asked(full.0);
        let queued =
            operations::queue_one(&state.db, tenant, company_id.0, data_type, fetch).await?;
        state.sync_wake.notify_waiters();
        Ok(Queued::Accepted(Json(operations_of(queued)?)))
    }

    /// List pull operations
    ///
    /// The company's pull operations, newest first, optionally of one data
    /// type and one status (both carried into `_links`). If the server
    /// running an operation dies, the operation still shows `Fetching` until
    /// its `leaseExpiresAt` (at most 30 seconds); then another worker takes
    /// it over. A `leaseExpiresAt` in the past tells a dead sync from a slow one.
    #[oai(
        path = "/companies/:companyId/data/history",
        method = "get",
        operation_id = "listPullOperations"
    )]
    #[expect(
        clippy::too_many_arguments,
        reason = "each query parameter is one argument"
    )]
    async fn list_pull_operations(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        request: &Request,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
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
        /// Only operations of this data type: `invoices`, `customers`, `orders`, `bankAccounts`, `bankTransactions`, `accounts`, `suppliers`, `taxRates`, `bills`, `payments`, `billPayments`, `creditNotes`, `items`, `companyInfo` or `journalEntries`.
        #[oai(name = "dataType")]
        data_type: Query<Option<String>>,
        /// Only operations in this status (`Queued`, `Fetching`, `Complete`, `Failed`, `AuthError`, `Cancelled`, `RateLimitError`, `PermissionsError`, `NotSupported`; any case).
        status: Query<Option<String>>,
    ) -> Result<PullOperationPage, ReadErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let filter = HistoryFilter {
            data_type: data_type
                .0
                .as_deref()
                .map(|text| operations::requested_data_type("dataType", text))
                .transpose()?,
            status: requested_pull_status(status.0.as_deref())?,
        };
        let (rows, total) =
            operations::history(&state.db, tenant, company_id.0, filter, page).await?;
        let location = ListLocation::new(request.uri().path())
            .filter("dataType", filter.data_type.map(DataType::name))
            .filter("status", filter.status.map(operations::pull_status_name));
        Ok(PullOperationPage::Ok(Json(Paged::new(
            operations_of(rows)?,
            total,
            page,
            &location,
        ))))
    }

    /// Get a pull operation
    #[oai(
        path = "/companies/:companyId/data/history/:pullOperationId",
        method = "get",
        operation_id = "getPullOperation"
    )]
    async fn get_pull_operation(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The pull operation's id.
        #[oai(name = "pullOperationId")]
        pull_operation_id: Path<Uuid>,
    ) -> Result<PullOperationFound, ReadErrors> {
        let row = operations::find(&state.db, tenant, company_id.0, pull_operation_id.0).await?;
        Ok(PullOperationFound::Ok(Json(row.try_into()?)))
    }

    /// Get data status
    ///
    /// For each data type ever queued for the company: the status of its
    /// latest pull operation, when its data last synced, and the ids of its
    /// latest and latest successful operations.
    #[oai(
        path = "/companies/:companyId/dataStatus",
        method = "get",
        operation_id = "getDataStatus"
    )]
    async fn get_data_status(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
    ) -> Result<DataStatusFound, ReadErrors> {
        let statuses = operations::data_status(&state.db, tenant, company_id.0).await?;
        let by_type = statuses
            .into_iter()
            .map(|status| {
                (
                    status.data_type.name().to_owned(),
                    DataTypeStatus {
                        data_type: status.data_type.into(),
                        current_status: status.current_status.into(),
                        last_successful_sync: status.last_successful_sync.map(Timestamp).into(),
                        latest_sync_id: status.latest_sync_id,
                        latest_successful_sync_id: status.latest_successful_sync_id.into(),
                    },
                )
            })
            .collect();
        Ok(DataStatusFound::Ok(Json(by_type)))
    }
}
