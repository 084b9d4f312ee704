//! Zoho Books: invoices and contacts (`GET /books/v3/invoices?organization_id=…
//! &page=&per_page=`, paged by `page_context.has_more_page`), with the
//! `Zoho-oauthtoken` scheme. The API lives on the organisation's data
//! centre: the `api_domain` of the last token response when there is one,
//! else the data centre's default; tokens refresh at that centre's accounts
//! server and are not rotated.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;

use crate::platforms::DataType;
use crate::platforms::connector::{Connector, ConnectorError, Page, PlatformUrls, Records};
use crate::platforms::kit::http::PlatformHttp;
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::oauth::{self, ClientAuth, TokenEndpoint};
use crate::sync::records::{Customer, CustomerStatus, Invoice, InvoiceStatus, Money};

/// Records asked for per page by default (the API's maximum is 200).
pub const PAGE_SIZE: u64 = 200;
const PLATFORM: &str = "Zoho Books";

/// The Zoho Books connector.
#[derive(Debug)]
pub struct ZohoBooksConnector {
    api_base: Option<String>,
    token_url: Option<String>,
    page_size: u64,
    http: PlatformHttp,
}

/// The API domain and accounts server of a data centre (`dataCenter` of the body).
pub fn data_center_hosts(data_center: &str) -> (&'static str, &'static str) {
    match data_center {
        "eu" => ("https://www.zohoapis.eu", "https://accounts.zoho.eu"),
        "in" => ("https://www.zohoapis.in", "https://accounts.zoho.in"),
        "com.au" => (
            "https://www.zohoapis.com.au",
            "https://accounts.zoho.com.au",
        ),
        "jp" => ("https://www.zohoapis.jp", "https://accounts.zoho.jp"),
        "ca" => ("https://www.zohoapis.ca", "https://accounts.zohocloud.ca"),
        "com.cn" => (
            "https://www.zohoapis.com.cn",
            "https://accounts.zoho.com.cn",
        ),
        "sa" => ("https://www.zohoapis.sa", "https://accounts.zoho.sa"),
        _ => ("https://www.zohoapis.com", "https://accounts.zoho.com"),
    }
}

fn data_center(credentials: &Value) -> &str {
    credentials
        .get("dataCenter")
        .and_then(Value::as_str)
        .unwrap_or("com")
}

impl ZohoBooksConnector {
    /// A connector reaching Zoho where `urls` says (each data centre's real hosts by default).
    pub fn new(urls: &PlatformUrls, http: PlatformHttp) -> Self {
        Self {
            api_base: urls
                .api_base
                .as_ref()
                .map(|base| base.trim_end_matches('/').to_owned()),
            token_url: urls.token_url.clone(),
            page_size: urls.page_size.unwrap_or(PAGE_SIZE).clamp(1, 200),
            http,
        }
    }

    fn books_url(&self, credentials: &Value, path: &str) -> String {
        let base = credentials
            .get("apiDomain")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| self.api_base.clone())
            .unwrap_or_else(|| data_center_hosts(data_center(credentials)).0.to_owned());
        format!("{base}/books/v3/{path}")
    }

    async fn page(
        &self,
        credentials: &Value,
        data_type: DataType,
        cursor: Option<String>,
    ) -> Result<Page, ConnectorError> {
        let access_token = oauth::access_token(credentials)?;
        let organization_id = organization_id(credentials)?;
        let page: u64 = match cursor {
            None => 1,
            Some(cursor) => cursor
                .parse()
                .map_err(|_| ConnectorError::Failed(format!("invalid Zoho cursor {cursor:?}")))?,
        };
        let mut query = vec![
            ("organization_id", organization_id.to_owned()),
            ("page", page.to_string()),
            ("per_page", self.page_size.to_string()),
        ];
        let path = match data_type {
            DataType::Invoices => "invoices",
            DataType::Customers => {
                query.push(("filter_by", "Status.All".to_owned()));
                "contacts"
            }
        };
        let url = self.books_url(credentials, path);
        let authorization = format!("Zoho-oauthtoken {access_token}");
        let build = |client: &reqwest::Client| {
            client
                .get(&url)
                .query(&query)
                .header(reqwest::header::AUTHORIZATION, &authorization)
                .header(reqwest::header::ACCEPT, "application/json")
        };
        let secrets = [access_token];
        let (records, context) = match data_type {
            DataType::Invoices => {
                let body: InvoicesPage = self
                    .http
                    .get_json(PLATFORM, "a page of invoices", build, &secrets)
                    .await?;
                check_code(body.code, body.message)?;
                let invoices = body
                    .invoices
                    .into_iter()
                    .map(ZohoInvoice::into_record)
                    .collect::<Result<Vec<_>, _>>()?;
                (Records::Invoices(invoices), body.page_context)
            }
            DataType::Customers => {
                let body: ContactsPage = self
                    .http
                    .get_json(PLATFORM, "a page of contacts", build, &secrets)
                    .await?;
                check_code(body.code, body.message)?;
                let customers = body
                    .contacts
                    .into_iter()
                    .filter(|contact| contact.contact_type.as_deref() != Some("vendor"))
                    .map(ZohoContact::into_record)
                    .collect();
                (Records::Customers(customers), body.page_context)
            }
        };
        let more = context.is_some_and(|context| context.has_more_page);
        Ok(Page {
            records,
            next: more.then(|| (page + 1).to_string()),
            total: None,
        })
    }

    async fn check(&self, credentials: &Value) -> Result<(), ConnectorError> {
        let access_token = oauth::access_token(credentials)?;
        let organization_id = organization_id(credentials)?;
        let url = self.books_url(credentials, "organizations");
        let authorization = format!("Zoho-oauthtoken {access_token}");
        let body: OrganizationsAnswer = self
            .http
            .get_json(
                PLATFORM,
                "a list of organizations",
                |client| {
                    client
                        .get(&url)
                        .header(reqwest::header::AUTHORIZATION, &authorization)
                        .header(reqwest::header::ACCEPT, "application/json")
                },
                &[access_token],
            )
            .await?;
        check_code(body.code, body.message)?;
        if body
            .organizations
            .iter()
            .any(|organization| organization.organization_id == organization_id)
        {
            Ok(())
        } else {
            Err(ConnectorError::Auth(format!(
                "Zoho Books accepted the access token, but organization {organization_id} is not among \
                 the {} it gives access to",
                body.organizations.len()
            )))
        }
    }
}

impl Connector for ZohoBooksConnector {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(self.page(credentials, data_type, cursor))
    }

    fn token_endpoint(&self, credentials: &Value) -> Option<TokenEndpoint> {
        let url = self.token_url.clone().unwrap_or_else(|| {
            format!(
                "{}/oauth/v2/token",
                data_center_hosts(data_center(credentials)).1
            )
        });
        Some(TokenEndpoint {
            platform: PLATFORM,
            url,
            client_auth: ClientAuth::RequestBody,
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

fn organization_id(credentials: &Value) -> Result<&str, ConnectorError> {
    credentials
        .get("organizationId")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ConnectorError::Failed(
                "the stored Zoho Books authorization has no organization id".to_owned(),
            )
        })
}

/// Zoho answers `code` 0 on success; anything else is an error in words.
fn check_code(code: Option<i64>, message: Option<String>) -> Result<(), ConnectorError> {
    match code {
        None | Some(0) => Ok(()),
        Some(code) => Err(ConnectorError::Failed(format!(
            "Zoho Books answered code {code}: {}",
            message.unwrap_or_default()
        ))),
    }
}

/// Zoho's invoice status; a sent invoice with a smaller balance than its
/// total is part paid whatever its overdue state.
pub fn invoice_status(status: &str, total: Money, balance: Money) -> InvoiceStatus {
    match status {
        "draft" | "pending_approval" | "approved" => InvoiceStatus::Draft,
        "sent" | "viewed" | "overdue" | "unpaid" if balance > Money(0) && balance < total => {
            InvoiceStatus::PartiallyPaid
        }
        "sent" | "viewed" | "overdue" | "unpaid" => InvoiceStatus::Submitted,
        "partially_paid" => InvoiceStatus::PartiallyPaid,
        "paid" => InvoiceStatus::Paid,
        "void" => InvoiceStatus::Void,
        _ => InvoiceStatus::Unknown,
    }
}

#[derive(Deserialize)]
struct PageContext {
    #[serde(default)]
    has_more_page: bool,
}

#[derive(Deserialize)]
struct InvoicesPage {
    code: Option<i64>,
    message: Option<String>,
    #[serde(default)]
    invoices: Vec<ZohoInvoice>,
    page_context: Option<PageContext>,
}

#[derive(Deserialize)]
struct ContactsPage {
    code: Option<i64>,
    message: Option<String>,
    #[serde(default)]
    contacts: Vec<ZohoContact>,
    page_context: Option<PageContext>,
}

#[derive(Deserialize)]
struct OrganizationsAnswer {
    code: Option<i64>,
    message: Option<String>,
    #[serde(default)]
    organizations: Vec<Organization>,
}

#[derive(Deserialize)]
struct Organization {
    organization_id: String,
}

#[derive(Deserialize)]
struct ZohoInvoice {
    invoice_id: String,
    invoice_number: Option<String>,
    customer_id: Option<String>,
    customer_name: Option<String>,
    status: Option<String>,
    date: Option<String>,
    due_date: Option<String>,
    currency_code: Option<String>,
    total: Option<Amount>,
    balance: Option<Amount>,
    sub_total: Option<Amount>,
    tax_total: Option<Amount>,
    reference_number: Option<String>,
    last_payment_date: Option<String>,
    last_modified_time: Option<String>,
}

fn amount(value: Option<Amount>) -> Money {
    value.map(Amount::money).unwrap_or_default()
}

impl ZohoInvoice {
    fn into_record(self) -> Result<Invoice, ConnectorError> {
        let issue_date = self.date.as_deref().and_then(json::date).ok_or_else(|| {
            ConnectorError::Failed(format!(
                "Zoho Books invoice {} has no readable date; the previous data is kept",
                self.invoice_id
            ))
        })?;
        let total = amount(self.total);
        let balance = amount(self.balance);
        // The list carries totals, not lines; tax only where it is given.
        let tax = amount(self.tax_total);
        let status = invoice_status(self.status.as_deref().unwrap_or(""), total, balance);
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number),
            customer_id: json::non_empty(self.customer_id),
            customer_name: json::non_empty(self.customer_name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: if status == InvoiceStatus::Paid {
                self.last_payment_date.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(Money(total.0 - tax.0), Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due: balance,
            status,
            line_items: Vec::new(),
            note: json::non_empty(self.reference_number),
            source_modified_date: self.last_modified_time.as_deref().and_then(json::datetime),
            invoice_id: self.invoice_id,
        })
    }
}

#[derive(Deserialize)]
struct ZohoContact {
    contact_id: String,
    contact_name: Option<String>,
    company_name: Option<String>,
    contact_type: Option<String>,
    status: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    mobile: Option<String>,
    currency_code: Option<String>,
    last_modified_time: Option<String>,
}

impl ZohoContact {
    fn into_record(self) -> Customer {
        Customer {
            customer_name: json::non_empty(self.company_name)
                .or_else(|| json::non_empty(self.contact_name))
                .unwrap_or_else(|| self.contact_id.clone()),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone).or_else(|| json::non_empty(self.mobile)),
            default_currency: json::non_empty(self.currency_code),
            status: match self.status.as_deref() {
                Some("inactive") => CustomerStatus::Archived,
                _ => CustomerStatus::Active,
            },
            source_modified_date: self.last_modified_time.as_deref().and_then(json::datetime),
            customer_id: self.contact_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoho_statuses_map_with_their_balance() {
        let total = Money(1_000_000);
        assert_eq!(invoice_status("draft", total, total), InvoiceStatus::Draft);
        assert_eq!(
            invoice_status("sent", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("overdue", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("overdue", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("partially_paid", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status("paid", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(invoice_status("void", total, total), InvoiceStatus::Void);
        assert_eq!(
            invoice_status("whatever", total, total),
            InvoiceStatus::Unknown
        );
    }

    #[test]
    fn each_data_centre_has_its_hosts() {
        assert_eq!(data_center_hosts("eu").0, "https://www.zohoapis.eu");
        assert_eq!(data_center_hosts("ca").1, "https://accounts.zohocloud.ca");
        assert_eq!(data_center_hosts("com").1, "https://accounts.zoho.com");
    }
}
