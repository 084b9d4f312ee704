//! `/companies/{companyId}/data...` and `/dataStatus`: triggering syncs,
//! their history and status, and the synced invoices and customers.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use rust_decimal::Decimal;
use sea_orm::{ActiveEnum, Iterable};
use serde::Serialize;
use uuid::Uuid;

use entity::{customer, invoice, pull_operation};

use crate::error::FieldError;
use crate::http::api::ApiTags;
use crate::http::error::{ApiError, ErrorResponses, status};
use crate::http::json_response::SerdeJson;
use crate::http::paging::{ListLocation, Paged};
use crate::http::schema::Described;
use crate::http::state::AppState;
use crate::http::types::{Amount, Nullable, Timestamp};
use crate::paging::{self, PageRequest};
use crate::platforms::DataType;
use crate::sync::operations::{self, HistoryFilter, PullStatus};
use crate::sync::reads;
use crate::sync::records::{CustomerStatus, InvoiceStatus, LineItem, Money};
use crate::sync::store::{data_type_name, parse_data_type};
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
    /// Why it failed, in words to act on; null unless `Failed`, `AuthError` or `Cancelled`.
    pub error_message: Nullable<String>,
}

impl TryFrom<pull_operation::Model> for PullOperation {
    type Error = ApiError;

    fn try_from(row: pull_operation::Model) -> Result<Self, ApiError> {
        let corrupt = |what: &str| {
            ApiError::internal(anyhow::anyhow!(
                "stored pull operation has an unknown {what}"
            ))
        };
        Ok(Self {
            pull_operation_id: row.id,
            company_id: row.company_id,
            connection_id: row.connection_id,
            data_type: parse_data_type(&row.data_type)
                .ok_or_else(|| corrupt("data type"))?
                .into(),
            status: row.status.into(),
            requested: row.requested.into(),
            started: row.started.map(Timestamp).into(),
            completed: row.completed.map(Timestamp).into(),
            progress: row.progress,
            records_fetched: row.records_fetched,
            error_message: row.error_message.into(),
        })
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

/// A customer an invoice is addressed to.
#[derive(Debug, Clone, Object, Serialize)]
#[oai(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct CustomerRef {
    /// The platform's id of the customer.
    pub id: String,
    /// The customer's name; null when the platform gives none.
    pub company_name: Nullable<String>,
}

/// One line of an invoice. Amounts are exact decimals, as strings.
#[derive(Debug, Clone, Object, Serialize)]
#[oai(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct InvoiceLineItem {
    /// What was sold.
    pub description: String,
    /// Price of one unit, before tax.
    pub unit_amount: Amount,
    /// Units sold.
    pub quantity: Amount,
    /// Discount on the line.
    pub discount_amount: Amount,
    /// Line total before tax.
    pub sub_total: Amount,
    /// Tax on the line.
    pub tax_amount: Amount,
    /// Line total including tax.
    pub total_amount: Amount,
}

impl From<LineItem> for InvoiceLineItem {
    fn from(item: LineItem) -> Self {
        Self {
            description: item.description,
            unit_amount: Amount(item.unit_amount.to_decimal()),
            quantity: Amount(Decimal::new(item.quantity.0, Money::SCALE).normalize()),
            discount_amount: Amount(item.discount_amount.to_decimal()),
            sub_total: Amount(item.sub_total.to_decimal()),
            tax_amount: Amount(item.tax_amount.to_decimal()),
            total_amount: Amount(item.total_amount.to_decimal()),
        }
    }
}

/// A sales invoice synced from a platform. Amounts are exact decimals, as strings.
#[derive(Debug, Clone, Object, Serialize)]
#[oai(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    /// The platform's id of the invoice.
    pub invoice_id: String,
    /// The connection it was synced from.
    pub connection_id: Uuid,
    /// The number people see; null when the platform gives none.
    pub invoice_number: Nullable<String>,
    /// The customer invoiced; null when the platform gives none.
    pub customer_ref: Nullable<CustomerRef>,
    /// Issue date.
    pub issue_date: NaiveDate,
    /// Due date; null if none.
    pub due_date: Nullable<NaiveDate>,
    /// When it was fully paid; null unless `Paid`.
    pub paid_on_date: Nullable<NaiveDate>,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Total before tax.
    pub sub_total: Amount,
    /// Total tax.
    pub total_tax_amount: Amount,
    /// Total including tax.
    pub total_amount: Amount,
    /// Amount still owed.
    pub amount_due: Amount,
    /// Status in tributary's vocabulary.
    pub status: InvoiceStatus,
    /// The invoice's lines.
    pub line_items: Vec<InvoiceLineItem>,
    /// A note on the invoice; null if none.
    pub note: Nullable<String>,
    /// When tributary's copy last changed.
    pub modified_date: Timestamp,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Nullable<Timestamp>,
}

impl TryFrom<invoice::Model> for Invoice {
    type Error = ApiError;

    fn try_from(row: invoice::Model) -> Result<Self, ApiError> {
        let line_items: Vec<LineItem> =
            serde_json::from_str(&row.line_items).map_err(ApiError::internal)?;
        let status = InvoiceStatus::parse_loose(&row.status).unwrap_or(InvoiceStatus::Unknown);
        Ok(Self {
            invoice_id: row.invoice_id,
            connection_id: row.connection_id,
            invoice_number: row.invoice_number.into(),
            customer_ref: row
                .customer_id
                .map(|id| CustomerRef {
                    id,
                    company_name: row.customer_name.into(),
                })
                .into(),
            issue_date: row.issue_date,
            due_date: row.due_date.into(),
            paid_on_date: row.paid_on_date.into(),
            currency: row.currency,
            sub_total: Amount(Money(row.sub_total).to_decimal()),
            total_tax_amount: Amount(Money(row.total_tax_amount).to_decimal()),
            total_amount: Amount(Money(row.total_amount).to_decimal()),
            amount_due: Amount(Money(row.amount_due).to_decimal()),
            status,
            line_items: line_items.into_iter().map(InvoiceLineItem::from).collect(),
            note: row.note.into(),
            modified_date: row.modified_date.into(),
            source_modified_date: row.source_modified_date.map(Timestamp).into(),
        })
    }
}

/// A customer synced from a platform.
#[derive(Debug, Clone, Object, Serialize)]
#[oai(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct Customer {
    /// The platform's id of the customer.
    pub customer_id: String,
    /// The connection it was synced from.
    pub connection_id: Uuid,
    /// The customer's (company) name.
    pub customer_name: String,
    /// Contact e-mail; null if none.
    pub email_address: Nullable<String>,
    /// Contact phone; null if none.
    pub phone: Nullable<String>,
    /// ISO 4217 code of the currency it is invoiced in; null if unknown.
    pub default_currency: Nullable<String>,
    /// Whether it is in use.
    pub status: CustomerStatus,
    /// When tributary's copy last changed.
    pub modified_date: Timestamp,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Nullable<Timestamp>,
}

impl From<customer::Model> for Customer {
    fn from(row: customer::Model) -> Self {
        Self {
            customer_id: row.customer_id,
            connection_id: row.connection_id,
            customer_name: row.customer_name,
            email_address: row.email_address.into(),
            phone: row.phone.into(),
            default_currency: row.default_currency.into(),
            status: if row.status == CustomerStatus::Archived.as_str() {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            modified_date: row.modified_date.into(),
            source_modified_date: row.source_modified_date.map(Timestamp).into(),
        }
    }
}

/// Answer of the sync triggers.
#[derive(ApiResponse)]
pub enum Queued {
    /// The pull operations queued, or already queued or running, one per data type of each `Linked` connection.
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

/// Answer of `listInvoices`.
#[derive(ApiResponse)]
pub enum InvoicePage {
    /// A page of the company's invoices.
    #[oai(status = 200)]
    Ok(SerdeJson<Paged<Invoice>>),
}

/// Answer of `listCustomers`.
#[derive(ApiResponse)]
pub enum CustomerPage {
    /// A page of the company's customers.
    #[oai(status = 200)]
    Ok(SerdeJson<Paged<Customer>>),
}

type TriggerErrors = ErrorResponses<
    { status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND | status::CONFLICT },
>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type DataErrors = ErrorResponses<
    { status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND | status::CONFLICT },
>;

fn requested_invoice_status(text: Option<&str>) -> Result<Option<InvoiceStatus>, ApiError> {
    text.map(|text| {
        InvoiceStatus::parse_loose(text).ok_or_else(|| {
            let allowed: Vec<&str> = InvoiceStatus::ALL
                .iter()
                .map(|status| status.as_str())
                .collect();
            ApiError::validation(vec![FieldError::new(
                "status",
                format!("must be one of {} (any case)", allowed.join(", ")),
            )])
        })
    })
    .transpose()
}

fn requested_pull_status(text: Option<&str>) -> Result<Option<PullStatus>, ApiError> {
    text.map(|text| {
        operations::pull_status_named(text).ok_or_else(|| {
            let allowed: Vec<String> = PullStatus::iter().map(|status| status.to_value()).collect();
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
    /// connection of the company and answers 202 with them. A data type
    /// already queued or running is not queued twice: its operation is
    /// returned. Nothing syncs unless you call this (or `queueDataType`);
    /// in particular, not after a token migration. 409 when the company has
    /// no `Linked` connection.
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
    ) -> Result<Queued, TriggerErrors> {
        let queued = operations::queue_all(&state.db, tenant, company_id.0).await?;
        state.sync_wake.notify_waiters();
        Ok(Queued::Accepted(Json(operations_of(queued)?)))
    }

    /// Sync one data type
    ///
    /// Queues `dataType` (`invoices` or `customers`) for every `Linked`
    /// connection that syncs it, like `syncAllData`.
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
        /// The data type: `invoices` or `customers`.
        #[oai(name = "dataType")]
        data_type: Path<String>,
    ) -> Result<Queued, TriggerErrors> {
        let data_type = operations::requested_data_type("dataType", &data_type.0)?;
        let queued = operations::queue_one(&state.db, tenant, company_id.0, data_type).await?;
        state.sync_wake.notify_waiters();
        Ok(Queued::Accepted(Json(operations_of(queued)?)))
    }

    /// List pull operations
    ///
    /// The company's pull operations, newest first, optionally of one data
    /// type and one status (both carried into `_links`).
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
        /// Only operations of this data type: `invoices` or `customers`.
        #[oai(name = "dataType")]
        data_type: Query<Option<String>>,
        /// Only operations in this status (`Queued`, `Fetching`, `Complete`, `Failed`, `AuthError`, `Cancelled`; any case).
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
            .filter("dataType", filter.data_type.map(data_type_name))
            .filter("status", filter.status.map(|status| status.to_value()));
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
                    data_type_name(status.data_type).to_owned(),
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

    /// List invoices
    ///
    /// The company's synced invoices, newest issue date first (ties broken by
    /// connection, then invoice id), optionally of one `status`
    /// (`status=paid` works; `totalResults` counts after the filter, and the
    /// filter is carried into `_links`). While a sync runs, the last complete
    /// data is served. 409 until the first sync of invoices completes.
    #[oai(
        path = "/companies/:companyId/data/invoices",
        method = "get",
        operation_id = "listInvoices"
    )]
    #[expect(
        clippy::too_many_arguments,
        reason = "each query parameter is one argument"
    )]
    async fn list_invoices(
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
        /// Only invoices in this status: `Draft`, `Submitted`, `PartiallyPaid`, `Paid`, `Void` or `Unknown` (any case).
        status: Query<Option<String>>,
    ) -> Result<InvoicePage, DataErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let status = requested_invoice_status(status.0.as_deref())?;
        let (rows, total) = reads::invoices(
            &state.db,
            state.page_reads,
            tenant,
            company_id.0,
            status,
            page,
        )
        .await?;
        let results = rows
            .into_iter()
            .map(Invoice::try_from)
            .collect::<Result<_, _>>()?;
        let location = ListLocation::new(request.uri().path())
            .filter("status", status.map(InvoiceStatus::as_str));
        Ok(InvoicePage::Ok(SerdeJson::new(&Paged::new(
            results, total, page, &location,
        ))?))
    }

    /// List customers
    ///
    /// The company's synced customers, by name (ties broken by connection,
    /// then customer id). 409 until the first sync of customers completes.
    #[oai(
        path = "/companies/:companyId/data/customers",
        method = "get",
        operation_id = "listCustomers"
    )]
    async fn list_customers(
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
    ) -> Result<CustomerPage, DataErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let (rows, total) =
            reads::customers(&state.db, state.page_reads, tenant, company_id.0, page).await?;
        let results = rows.into_iter().map(Customer::from).collect();
        let location = ListLocation::new(request.uri().path());
        Ok(CustomerPage::Ok(SerdeJson::new(&Paged::new(
            results, total, page, &location,
        ))?))
    }
}
