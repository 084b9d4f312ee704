//! QuickBooks Online: invoices and customers through the query endpoint
//! (`GET /v3/company/{realmId}/query?query=select * from Invoice
//! STARTPOSITION n MAXRESULTS m`), on the production or sandbox host as the
//! authorization says; tokens refresh at Intuit's token endpoint, and the
//! refresh token may change on any refresh.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;

use crate::platforms::DataType;
use crate::platforms::connector::{Connector, ConnectorError, Page, PlatformUrls, Records};
use crate::platforms::kit::http::PlatformHttp;
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::oauth::{self, ClientAuth, TokenEndpoint};
use crate::sync::records::{Customer, CustomerStatus, Invoice, InvoiceStatus, LineItem, Money};

/// The real production API.
pub const API_BASE: &str = "https://quickbooks.api.intuit.com";
/// The real sandbox API (Intuit's sandbox companies).
pub const SANDBOX_API_BASE: &str = "https://sandbox-quickbooks.api.intuit.com";
/// The real token endpoint.
pub const TOKEN_URL: &str = "https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer";
/// Records asked for per query by default (the API allows up to 1000).
pub const PAGE_SIZE: u64 = 100;
/// The API minor version the field mapping was written against.
const MINOR_VERSION: &str = "75";
const PLATFORM: &str = "QuickBooks Online";

/// The QuickBooks Online connector.
#[derive(Debug)]
pub struct QuickBooksConnector {
    api_base: Option<String>,
    token_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl QuickBooksConnector {
    /// A connector reaching QuickBooks where `urls` says (the real hosts by default).
    pub fn new(urls: &PlatformUrls, http: PlatformHttp) -> Self {
        Self {
            api_base: urls
                .api_base
                .as_ref()
                .map(|base| base.trim_end_matches('/').to_owned()),
            token_url: urls
                .token_url
                .clone()
                .unwrap_or_else(|| TOKEN_URL.to_owned()),
            page_size: urls.page_size.unwrap_or(PAGE_SIZE).clamp(1, 1000),
            http,
        }
    }

    fn company_url(&self, credentials: &Value) -> Result<String, ConnectorError> {
        let realm_id = credentials
            .get("realmId")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ConnectorError::Failed(
                    "the stored QuickBooks authorization has no realm id".to_owned(),
                )
            })?;
        let base = match &self.api_base {
            Some(base) => base.as_str(),
            None if credentials.get("environment").and_then(Value::as_str) == Some("sandbox") => {
                SANDBOX_API_BASE
            }
            None => API_BASE,
        };
        Ok(format!("{base}/v3/company/{realm_id}"))
    }

    async fn page(
        &self,
        credentials: &Value,
        data_type: DataType,
        cursor: Option<String>,
    ) -> Result<Page, ConnectorError> {
        let access_token = oauth::access_token(credentials)?;
        let start: u64 = match cursor {
            None => 1,
            Some(cursor) => cursor.parse().map_err(|_| {
                ConnectorError::Failed(format!("invalid QuickBooks cursor {cursor:?}"))
            })?,
        };
        let size = self.page_size;
        let query = match data_type {
            DataType::Invoices => {
                format!("select * from Invoice STARTPOSITION {start} MAXRESULTS {size}")
            }
            // Without the filter the API returns active customers only.
            DataType::Customers => format!(
                "select * from Customer where Active in (true, false) STARTPOSITION {start} MAXRESULTS {size}"
            ),
        };
        let url = format!("{}/query", self.company_url(credentials)?);
        let build = |client: &reqwest::Client| {
            client
                .get(&url)
                .query(&[("query", query.as_str()), ("minorversion", MINOR_VERSION)])
                .bearer_auth(access_token)
                .header(reqwest::header::ACCEPT, "application/json")
        };
        let secrets = [access_token];
        let (records, returned) = match data_type {
            DataType::Invoices => {
                let body: QueryAnswer<InvoiceList> = self
                    .http
                    .get_json(PLATFORM, "a page of invoices", build, &secrets)
                    .await?;
                let invoices = body.query_response.invoice;
                let returned = invoices.len();
                let invoices = invoices
                    .into_iter()
                    .map(QboInvoice::into_record)
                    .collect::<Result<Vec<_>, _>>()?;
                (Records::Invoices(invoices), returned)
            }
            DataType::Customers => {
                let body: QueryAnswer<CustomerList> = self
                    .http
                    .get_json(PLATFORM, "a page of customers", build, &secrets)
                    .await?;
                let customers = body.query_response.customer;
                let returned = customers.len();
                let customers = customers
                    .into_iter()
                    .map(QboCustomer::into_record)
                    .collect();
                (Records::Customers(customers), returned)
            }
        };
        let more = returned as u64 >= size;
        Ok(Page {
            records,
            next: more.then(|| (start + size).to_string()),
            total: None,
        })
    }

    async fn check(&self, credentials: &Value) -> Result<(), ConnectorError> {
        let access_token = oauth::access_token(credentials)?;
        let company = self.company_url(credentials)?;
        let realm_id = company.rsplit('/').next().unwrap_or_default().to_owned();
        let url = format!("{company}/companyinfo/{realm_id}");
        let _: CompanyInfoAnswer = self
            .http
            .get_json(
                PLATFORM,
                "company information",
                |client| {
                    client
                        .get(&url)
                        .query(&[("minorversion", MINOR_VERSION)])
                        .bearer_auth(access_token)
                        .header(reqwest::header::ACCEPT, "application/json")
                },
                &[access_token],
            )
            .await?;
        Ok(())
    }
}

impl Connector for QuickBooksConnector {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(self.page(credentials, data_type, cursor))
    }

    fn token_endpoint(&self, _credentials: &Value) -> Option<TokenEndpoint> {
        Some(TokenEndpoint {
            platform: PLATFORM,
            url: self.token_url.clone(),
            client_auth: ClientAuth::Basic,
            http: self.http.clone(),
        })
    }

    fn verify<'a>(
        &'a self,
        credentials: &'a Value,
    ) -> Option<BoxFuture<'a, Result<(), ConnectorError>>> {
        Some(Box::pin(self.check(credentials)))
    }
}

/// QuickBooks has no invoice status: it follows from the balance against
/// the total. A voided invoice keeps its lines at zero and a "Voided" note.
pub fn invoice_status(total: Money, balance: Money, voided: bool) -> InvoiceStatus {
    if voided {
        InvoiceStatus::Void
    } else if balance <= Money(0) {
        InvoiceStatus::Paid
    } else if balance < total {
        InvoiceStatus::PartiallyPaid
    } else {
        InvoiceStatus::Submitted
    }
}

#[derive(Deserialize)]
struct QueryAnswer<T> {
    #[serde(rename = "QueryResponse")]
    query_response: T,
}

#[derive(Deserialize)]
struct InvoiceList {
    #[serde(rename = "Invoice", default)]
    invoice: Vec<QboInvoice>,
}

#[derive(Deserialize)]
struct CustomerList {
    #[serde(rename = "Customer", default)]
    customer: Vec<QboCustomer>,
}

#[derive(Deserialize)]
struct CompanyInfoAnswer {
    #[serde(rename = "CompanyInfo")]
    _company_info: Value,
}

#[derive(Deserialize)]
struct Reference {
    value: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TaxDetail {
    total_tax: Option<Amount>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct MetaData {
    last_updated_time: Option<String>,
}

#[derive(Deserialize)]
struct Memo {
    value: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboInvoice {
    id: String,
    doc_number: Option<String>,
    txn_date: Option<String>,
    due_date: Option<String>,
    currency_ref: Option<Reference>,
    customer_ref: Option<Reference>,
    total_amt: Option<Amount>,
    balance: Option<Amount>,
    txn_tax_detail: Option<TaxDetail>,
    #[serde(default)]
    line: Vec<QboLine>,
    private_note: Option<String>,
    customer_memo: Option<Memo>,
    meta_data: Option<MetaData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboLine {
    description: Option<String>,
    amount: Option<Amount>,
    detail_type: Option<String>,
    sales_item_line_detail: Option<SalesItemLineDetail>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SalesItemLineDetail {
    unit_price: Option<Amount>,
    qty: Option<Amount>,
}

fn amount(value: Option<Amount>) -> Money {
    value.map(Amount::money).unwrap_or_default()
}

impl QboInvoice {
    fn into_record(self) -> Result<Invoice, ConnectorError> {
        let issue_date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| {
                ConnectorError::Failed(format!(
                    "QuickBooks invoice {} has no readable TxnDate; the previous data is kept",
                    self.id
                ))
            })?;
        let total = amount(self.total_amt);
        let balance = amount(self.balance);
        let tax = self
            .txn_tax_detail
            .and_then(|detail| detail.total_tax)
            .map(Amount::money)
            .unwrap_or_default();
        let voided = total == Money(0)
            && self
                .private_note
                .as_deref()
                .is_some_and(|note| note.trim_start().starts_with("Voided"));
        let line_items = self
            .line
            .into_iter()
            .filter(|line| line.detail_type.as_deref() == Some("SalesItemLineDetail"))
            .map(|line| {
                let detail = line.sales_item_line_detail;
                let line_amount = amount(line.amount);
                let (unit, quantity) = match detail {
                    Some(detail) => (amount(detail.unit_price), amount(detail.qty)),
                    None => (line_amount, Money(10_000)),
                };
                LineItem {
                    description: line.description.unwrap_or_default(),
                    unit_amount: unit,
                    quantity,
                    discount_amount: Money(0),
                    sub_total: line_amount,
                    tax_amount: Money(0),
                    total_amount: line_amount,
                }
            })
            .collect();
        Ok(Invoice {
            invoice_number: json::non_empty(self.doc_number),
            customer_id: self
                .customer_ref
                .as_ref()
                .and_then(|customer| customer.value.clone()),
            customer_name: self.customer_ref.and_then(|customer| customer.name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            sub_total: Money(total.0 - tax.0),
            total_tax_amount: tax,
            total_amount: total,
            amount_due: balance,
            status: invoice_status(total, balance, voided),
            line_items,
            note: self
                .customer_memo
                .and_then(|memo| json::non_empty(memo.value))
                .or_else(|| json::non_empty(self.private_note)),
            source_modified_date: self
                .meta_data
                .and_then(|meta| meta.last_updated_time)
                .as_deref()
                .and_then(json::datetime),
            invoice_id: self.id,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboCustomer {
    id: String,
    display_name: Option<String>,
    company_name: Option<String>,
    primary_email_addr: Option<EmailAddress>,
    primary_phone: Option<Phone>,
    currency_ref: Option<Reference>,
    active: Option<bool>,
    meta_data: Option<MetaData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct EmailAddress {
    address: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Phone {
    free_form_number: Option<String>,
}

impl QboCustomer {
    fn into_record(self) -> Customer {
        Customer {
            customer_name: json::non_empty(self.company_name)
                .or_else(|| json::non_empty(self.display_name))
                .unwrap_or_else(|| self.id.clone()),
            email_address: self
                .primary_email_addr
                .and_then(|email| json::non_empty(email.address)),
            phone: self
                .primary_phone
                .and_then(|phone| json::non_empty(phone.free_form_number)),
            default_currency: self.currency_ref.and_then(|currency| currency.value),
            status: if self.active == Some(false) {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: self
                .meta_data
                .and_then(|meta| meta.last_updated_time)
                .as_deref()
                .and_then(json::datetime),
            customer_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quickbooks_statuses_follow_the_balance() {
        let total = Money(1_000_000);
        assert_eq!(
            invoice_status(total, total, false),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status(total, Money(1), false),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status(total, Money(0), false), InvoiceStatus::Paid);
        assert_eq!(
            invoice_status(Money(0), Money(0), true),
            InvoiceStatus::Void
        );
    }
}
