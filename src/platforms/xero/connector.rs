//! Xero: the Accounting API's sales invoices (`GET /api.xro/2.0/Invoices`,
//! `Type=="ACCREC"`) and contacts, page-numbered (100 a page), for the
//! tenant named by the `xero-tenant-id` header; tokens refresh at Xero's
//! identity server and rotate on every refresh.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;

use crate::platforms::DataType;
use crate::platforms::connector::{Connector, ConnectorError, Page, PlatformUrls, Records};
use crate::platforms::kit::http::PlatformHttp;
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::oauth::{self, ClientAuth, TokenEndpoint};
use crate::sync::records::{Customer, CustomerStatus, Invoice, InvoiceStatus, LineItem, Money};

/// The real API.
pub const API_BASE: &str = "https://api.xero.com";
/// The real token endpoint.
pub const TOKEN_URL: &str = "https://identity.xero.com/connect/token";
/// Records Xero returns per page.
pub const PAGE_SIZE: usize = 100;
const PLATFORM: &str = "Xero";

/// The Xero connector.
#[derive(Debug)]
pub struct XeroConnector {
    api_base: String,
    token_url: String,
    http: PlatformHttp,
}

impl XeroConnector {
    /// A connector reaching Xero where `urls` says (the real one by default).
    pub fn new(urls: &PlatformUrls, http: PlatformHttp) -> Self {
        Self {
            api_base: urls
                .api_base
                .clone()
                .unwrap_or_else(|| API_BASE.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            token_url: urls
                .token_url
                .clone()
                .unwrap_or_else(|| TOKEN_URL.to_owned()),
            http,
        }
    }

    async fn page(
        &self,
        credentials: &Value,
        data_type: DataType,
        cursor: Option<String>,
    ) -> Result<Page, ConnectorError> {
        let tenant_id = tenant_id(credentials)?;
        let access_token = oauth::access_token(credentials)?;
        let page: u64 = match cursor {
            None => 1,
            Some(cursor) => cursor
                .parse()
                .map_err(|_| ConnectorError::Failed(format!("invalid Xero cursor {cursor:?}")))?,
        };
        let (path, query): (&str, Vec<(&str, String)>) = match data_type {
            DataType::Invoices => (
                "Invoices",
                vec![
                    ("page", page.to_string()),
                    ("where", "Type==\"ACCREC\"".to_owned()),
                ],
            ),
            DataType::Customers => (
                "Contacts",
                vec![
                    ("page", page.to_string()),
                    ("includeArchived", "true".to_owned()),
                ],
            ),
        };
        let url = format!("{}/api.xro/2.0/{path}", self.api_base);
        let build = |client: &reqwest::Client| {
            client
                .get(&url)
                .query(&query)
                .bearer_auth(access_token)
                .header("xero-tenant-id", tenant_id)
                .header(reqwest::header::ACCEPT, "application/json")
        };
        let secrets = [access_token];
        let (records, returned, pagination) = match data_type {
            DataType::Invoices => {
                let body: InvoicesPage = self
                    .http
                    .get_json(PLATFORM, "a page of invoices", build, &secrets)
                    .await?;
                let returned = body.invoices.len();
                let invoices = body
                    .invoices
                    .into_iter()
                    .filter(|invoice| invoice.kind.as_deref().is_none_or(|kind| kind == "ACCREC"))
                    .map(XeroInvoice::into_record)
                    .collect::<Result<Vec<_>, _>>()?;
                (Records::Invoices(invoices), returned, body.pagination)
            }
            DataType::Customers => {
                let body: ContactsPage = self
                    .http
                    .get_json(PLATFORM, "a page of contacts", build, &secrets)
                    .await?;
                let returned = body.contacts.len();
                let customers = body
                    .contacts
                    .into_iter()
                    .filter(XeroContact::is_customer)
                    .map(XeroContact::into_record)
                    .collect::<Result<Vec<_>, _>>()?;
                (Records::Customers(customers), returned, body.pagination)
            }
        };
        let more = match &pagination {
            Some(Pagination {
                page_count: Some(count),
                ..
            }) => page < *count,
            _ => returned >= PAGE_SIZE,
        };
        Ok(Page {
            records,
            next: more.then(|| (page + 1).to_string()),
            total: pagination.and_then(|pagination| pagination.item_count),
        })
    }

    async fn check(&self, credentials: &Value) -> Result<(), ConnectorError> {
        let tenant_id = tenant_id(credentials)?;
        let access_token = oauth::access_token(credentials)?;
        let url = format!("{}/connections", self.api_base);
        let connections: Vec<XeroConnection> = self
            .http
            .get_json(
                PLATFORM,
                "a list of connections",
                |client| {
                    client
                        .get(&url)
                        .bearer_auth(access_token)
                        .header(reqwest::header::ACCEPT, "application/json")
                },
                &[access_token],
            )
            .await?;
        if connections
            .iter()
            .any(|connection| connection.tenant_id.eq_ignore_ascii_case(tenant_id))
        {
            Ok(())
        } else {
            Err(ConnectorError::Auth(format!(
                "Xero accepted the access token, but it is not connected to tenant {tenant_id} \
                 (GET /connections lists {} other tenant(s))",
                connections.len()
            )))
        }
    }
}

impl Connector for XeroConnector {
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

fn tenant_id(credentials: &Value) -> Result<&str, ConnectorError> {
    credentials
        .get("tenantId")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ConnectorError::Failed("the stored Xero authorization has no tenant id".to_owned())
        })
}

/// Xero's invoice status, with the amounts that tell a part payment apart.
pub fn invoice_status(status: &str, amount_due: Money, amount_paid: Money) -> InvoiceStatus {
    match status {
        // SUBMITTED is "awaiting approval": not yet sent to the customer.
        "DRAFT" | "SUBMITTED" => InvoiceStatus::Draft,
        "AUTHORISED" if amount_due == Money(0) => InvoiceStatus::Paid,
        "AUTHORISED" if amount_paid > Money(0) => InvoiceStatus::PartiallyPaid,
        "AUTHORISED" => InvoiceStatus::Submitted,
        "PAID" => InvoiceStatus::Paid,
        "VOIDED" | "DELETED" => InvoiceStatus::Void,
        _ => InvoiceStatus::Unknown,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct InvoicesPage {
    invoices: Vec<XeroInvoice>,
    #[serde(rename = "pagination")]
    pagination: Option<Pagination>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ContactsPage {
    contacts: Vec<XeroContact>,
    #[serde(rename = "pagination")]
    pagination: Option<Pagination>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pagination {
    page_count: Option<u64>,
    item_count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct XeroConnection {
    tenant_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroInvoice {
    #[serde(rename = "InvoiceID")]
    invoice_id: String,
    invoice_number: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<String>,
    contact: Option<ContactRef>,
    date: Option<String>,
    due_date: Option<String>,
    fully_paid_on_date: Option<String>,
    currency_code: Option<String>,
    sub_total: Option<Amount>,
    total_tax: Option<Amount>,
    total: Option<Amount>,
    amount_due: Option<Amount>,
    amount_paid: Option<Amount>,
    amount_credited: Option<Amount>,
    status: Option<String>,
    line_amount_types: Option<String>,
    #[serde(default)]
    line_items: Vec<XeroLine>,
    reference: Option<String>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ContactRef {
    #[serde(rename = "ContactID")]
    contact_id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroLine {
    description: Option<String>,
    quantity: Option<Amount>,
    unit_amount: Option<Amount>,
    line_amount: Option<Amount>,
    tax_amount: Option<Amount>,
    discount_amount: Option<Amount>,
}

fn amount(value: Option<Amount>) -> Money {
    value.map(Amount::money).unwrap_or_default()
}

fn unreadable(invoice_id: &str, field: &str) -> ConnectorError {
    ConnectorError::Failed(format!(
        "Xero invoice {invoice_id} has no readable {field}; the previous data is kept"
    ))
}

impl XeroInvoice {
    fn into_record(self) -> Result<Invoice, ConnectorError> {
        let issue_date = self
            .date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| unreadable(&self.invoice_id, "Date"))?;
        let total = amount(self.total);
        let tax = amount(self.total_tax);
        let amount_due = amount(self.amount_due);
        let paid = Money(amount(self.amount_paid).0 + amount(self.amount_credited).0);
        let status = invoice_status(self.status.as_deref().unwrap_or(""), amount_due, paid);
        // Line amounts include tax when the invoice says so.
        let inclusive = self.line_amount_types.as_deref() == Some("Inclusive");
        let line_items = self
            .line_items
            .into_iter()
            .map(|line| {
                let line_amount = amount(line.line_amount);
                let tax_amount = amount(line.tax_amount);
                let (sub_total, total_amount) = if inclusive {
                    (Money(line_amount.0 - tax_amount.0), line_amount)
                } else {
                    (line_amount, Money(line_amount.0 + tax_amount.0))
                };
                LineItem {
                    description: line.description.unwrap_or_default(),
                    unit_amount: amount(line.unit_amount),
                    quantity: amount(line.quantity),
                    discount_amount: amount(line.discount_amount),
                    sub_total,
                    tax_amount,
                    total_amount,
                }
            })
            .collect();
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number),
            customer_id: self
                .contact
                .as_ref()
                .and_then(|contact| contact.contact_id.clone()),
            customer_name: self.contact.and_then(|contact| contact.name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::xero_date),
            paid_on_date: self.fully_paid_on_date.as_deref().and_then(json::xero_date),
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(Money(total.0 - tax.0), Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due,
            status,
            line_items,
            note: json::non_empty(self.reference),
            source_modified_date: self
                .updated_date_utc
                .as_deref()
                .and_then(json::xero_datetime),
            invoice_id: self.invoice_id,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroContact {
    #[serde(rename = "ContactID")]
    contact_id: String,
    name: Option<String>,
    email_address: Option<String>,
    #[serde(default)]
    phones: Vec<XeroPhone>,
    default_currency: Option<String>,
    contact_status: Option<String>,
    is_customer: Option<bool>,
    is_supplier: Option<bool>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroPhone {
    phone_type: Option<String>,
    phone_number: Option<String>,
    phone_area_code: Option<String>,
    phone_country_code: Option<String>,
}

impl XeroPhone {
    fn formatted(&self) -> Option<String> {
        let number = json::non_empty(self.phone_number.clone())?;
        let parts: Vec<String> = [
            self.phone_country_code.clone(),
            self.phone_area_code.clone(),
            Some(number),
        ]
        .into_iter()
        .filter_map(json::non_empty)
        .collect();
        Some(parts.join(" "))
    }
}

impl XeroContact {
    /// Suppliers that were never invoiced are not customers.
    fn is_customer(&self) -> bool {
        self.is_customer == Some(true) || self.is_supplier != Some(true)
    }

    fn into_record(self) -> Result<Customer, ConnectorError> {
        let phone = ["DEFAULT", "MOBILE", "DDI"].iter().find_map(|kind| {
            self.phones
                .iter()
                .filter(|phone| phone.phone_type.as_deref() == Some(kind))
                .find_map(XeroPhone::formatted)
        });
        Ok(Customer {
            customer_name: json::non_empty(self.name).unwrap_or_else(|| self.contact_id.clone()),
            email_address: json::non_empty(self.email_address),
            phone,
            default_currency: json::non_empty(self.default_currency),
            status: match self.contact_status.as_deref() {
                Some("ARCHIVED") | Some("GDPRREQUEST") => CustomerStatus::Archived,
                _ => CustomerStatus::Active,
            },
            source_modified_date: self
                .updated_date_utc
                .as_deref()
                .and_then(json::xero_datetime),
            customer_id: self.contact_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xero_statuses_map_with_their_amounts() {
        let due = Money(1_000_000);
        assert_eq!(invoice_status("DRAFT", due, Money(0)), InvoiceStatus::Draft);
        assert_eq!(
            invoice_status("SUBMITTED", due, Money(0)),
            InvoiceStatus::Draft
        );
        assert_eq!(
            invoice_status("AUTHORISED", due, Money(0)),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("AUTHORISED", due, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("AUTHORISED", Money(0), Money(5)),
            InvoiceStatus::Paid
        );
        assert_eq!(invoice_status("PAID", Money(0), due), InvoiceStatus::Paid);
        assert_eq!(invoice_status("VOIDED", due, Money(0)), InvoiceStatus::Void);
        assert_eq!(
            invoice_status("DELETED", due, Money(0)),
            InvoiceStatus::Void
        );
        assert_eq!(
            invoice_status("SOMETHING", due, Money(0)),
            InvoiceStatus::Unknown
        );
    }
}
