//! Exact Online's connector: a division's sales invoices with their lines
//! (`GET /api/v1/{division}/salesinvoice/SalesInvoices?$expand=SalesInvoiceLines`)
//! and its sales accounts (`/crm/Accounts?$filter=IsSales eq true`), paged by
//! the OData `d.__next` link, on the division's country site. Tokens refresh
//! at that site's `/api/oauth2/token` (client credentials in the form body)
//! and rotate on every refresh. After a first sync, only what changed is
//! asked for (`$filter=Modified ge datetime'…'`). Sources: `NOTES.md`.

use crate::platforms::kit::limits::{Limits, Quota, Remaining};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::mapping::{Division, ExactAccount, ExactInvoice, InvoiceId, Me, OData, ODataRecords};
use super::{ExactOnlineAuthorization, REGIONS};
use crate::data::accounts::Accounts;
use crate::data::bills::Bills;
use crate::data::company_info::CompanyInfos;
use crate::data::credit_notes::CreditNotes;
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::Items;
use crate::data::journal_entries::JournalEntries;
use crate::data::suppliers::Suppliers;
use crate::data::tax_rates::TaxRates;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::{Each, Keyed};
use crate::platforms::link::{Ask, Grant, LinkSpec, Organization};

/// The invoice fields read, lines included (`$select` with `$expand`).
pub(super) const INVOICE_FIELDS: &str = "InvoiceID,InvoiceNumber,InvoiceTo,InvoiceToName,InvoiceDate,DueDate,\
Currency,AmountFCExclVat,VATAmountFC,AmountFC,Status,Type,Description,Remarks,Modified,\
SalesInvoiceLines/Description,SalesInvoiceLines/Quantity,SalesInvoiceLines/UnitPrice,\
SalesInvoiceLines/AmountFC,SalesInvoiceLines/VATAmountFC,SalesInvoiceLines/GLAccount,\
SalesInvoiceLines/GLAccountDescription";
/// The account fields read.
const ACCOUNT_FIELDS: &str = "ID,Code,Name,Email,Phone,Blocked,EndDate,SalesCurrency,Modified";

/// The Exact Online connector.
#[derive(Debug)]
pub struct ExactOnlineConnector {
    api_base: Option<String>,
    authorize_url: Option<String>,
    token_url: Option<String>,
    http: PlatformHttp,
}

impl Configured for ExactOnlineConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's region: https://start.exactonline.<nl|be|de|fr|es|co.uk|com>",
    );
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's region: https://start.exactonline.<nl|be|de|fr|es|co.uk|com>/api/oauth2/token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            authorize_url: config.authorize_url.clone(),
            token_url: config.token_url.clone(),
            http,
        }
    }
}

impl ExactOnlineConnector {
    /// The site's root: the configured base, else the region's site.
    fn base(&self, credentials: &ExactOnlineAuthorization) -> String {
        self.api_base
            .clone()
            .unwrap_or_else(|| credentials.region.host().to_owned())
    }

    /// The first page of a division's `resource`, or the page Exact's
    /// `__next` named (only ever on the same site: the token goes nowhere
    /// else).
    pub(super) async fn list_page<T: serde::de::DeserializeOwned + Keyed>(
        &self,
        credentials: &ExactOnlineAuthorization,
        what: &'static str,
        query: &[(&'static str, &str)],
        resource: &str,
        cursor: Option<String>,
    ) -> Result<(Each<T>, Option<String>), ConnectorError> {
        let base = self.base(credentials);
        let auth = Auth::bearer(&credentials.tokens);
        let call = match NextLink::from_cursor(cursor) {
            NextLink::First => {
                let url = format!("{base}/api/v1/{}/{resource}", credentials.division);
                query.iter().fold(
                    Call::get(Self::PLATFORM, what, url, auth),
                    |call, &(name, value)| call.query(name, value),
                )
            }
            NextLink::Given(url) => {
                if !url.starts_with(&format!("{base}/api/v1/")) {
                    return Err(ConnectorError::Failed(
                        "Exact Online named a next page outside its API; the previous data is kept"
                            .to_owned(),
                    ));
                }
                Call::get(Self::PLATFORM, what, url, auth)
            }
        };
        let answer: ODataRecords<T> = self.http.json(&call).await?;
        let next = NextLink::next(answer.d.next);
        if next.is_some() && answer.d.results.is_empty() {
            return Err(ConnectorError::Failed(format!(
                "Exact Online answered {what} with no records but a next page; the previous data is kept"
            )));
        }
        Ok((answer.d.results, next))
    }
}

impl Connector for ExactOnlineConnector {
    type Credentials = ExactOnlineAuthorization;
    const PLATFORM: &'static str = "Exact Online";
    /// Exact Online: 60 calls a minute and 5,000 a day per company and application, with what is
    /// left in `X-RateLimit-Minutely-Remaining` and `X-RateLimit-Remaining` (NOTES.md).
    const LIMITS: Limits = Limits::per_minute(60).daily(5_000).remaining(&[
        Remaining {
            header: "x-ratelimit-minutely-remaining",
            quota: Quota::Rate,
        },
        Remaining {
            header: "x-ratelimit-remaining",
            quota: Quota::Daily,
        },
    ]);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Bills, CreditNotes, Items,
            CompanyInfos, JournalEntries
        ]
    }

    /// The country site is asked first: tokens and data live on one. Exact
    /// takes no `scope` (the app's registration holds them).
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url
                    .clone()
                    .unwrap_or_else(|| "{host}/api/oauth2/auth".to_owned()),
                self.token_url
                    .clone()
                    .unwrap_or_else(|| "{host}/api/oauth2/token".to_owned()),
                ClientAuth::RequestBody,
                &[],
            )
            .asking(Ask::Region(REGIONS)),
        )
    }

    /// The divisions the user granted on the consent form:
    /// `GET /current/Me` for the current division, through which
    /// `GET /{division}/hrm/Divisions` lists the granted ones.
    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let base = self
            .api_base
            .clone()
            .or_else(|| grant.inputs.get("host").cloned())
            .ok_or_else(|| ConnectorError::Failed("no Exact Online site was chosen".to_owned()))?;
        let auth = Auth::Bearer(&grant.access_token);
        let me = Call::get(
            Self::PLATFORM,
            "the current user",
            format!("{base}/api/v1/current/Me"),
            auth,
        )
        .query("$select", "CurrentDivision");
        let answer: OData<Me> = self.http.json(&me).await?;
        let Some(current) = answer.d.results.first().and_then(|me| me.current_division) else {
            return Err(ConnectorError::Failed(
                "Exact Online named no current division for the user".to_owned(),
            ));
        };
        let divisions = Call::get(
            Self::PLATFORM,
            "the divisions granted",
            format!("{base}/api/v1/{current}/hrm/Divisions"),
            auth,
        )
        .query("$select", "Code,Description");
        let answer: OData<Division> = self.http.json(&divisions).await.map_err(|error| {
            ConnectorError::Failed(format!(
                "{error}. If Exact says the user's division is not within the division scope, \
                 grant your current division too, or switch to a granted one in Exact, and try again"
            ))
        })?;
        Ok(answer
            .d
            .results
            .into_iter()
            .map(|division| Organization {
                id: division.code.to_string(),
                name: division
                    .description
                    .unwrap_or_else(|| format!("Division {}", division.code)),
                handle: None,
            })
            .collect())
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        let division = organization.id.parse::<i64>().map_or_else(
            |_| serde_json::Value::from(organization.id.clone()),
            serde_json::Value::from,
        );
        body.insert("division".to_owned(), division);
        if let Some(region) = grant.inputs.get("region") {
            body.insert("region".to_owned(), region.clone().into());
        }
        serde_json::Value::Object(body)
    }

    fn token_endpoint(&self, credentials: &ExactOnlineAuthorization) -> Option<TokenEndpoint> {
        let url = self
            .token_url
            .clone()
            .unwrap_or_else(|| format!("{}/api/oauth2/token", credentials.region.host()));
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// `GET /api/v1/current/Me` proves the token; one invoice id of the
    /// connection's division proves it reaches that division.
    async fn verify(&self, credentials: &ExactOnlineAuthorization) -> Result<(), ConnectorError> {
        let base = self.base(credentials);
        let auth = Auth::bearer(&credentials.tokens);
        let me = Call::get(
            Self::PLATFORM,
            "the current user",
            format!("{base}/api/v1/current/Me"),
            auth,
        )
        .query("$select", "CurrentDivision");
        let answer: OData<Me> = self.http.json(&me).await?;
        if answer.d.results.is_empty() {
            return Err(ConnectorError::Auth(
                "Exact Online answered GET /current/Me without a user".to_owned(),
            ));
        }
        let division = credentials.division;
        let probe = Call::get(
            Self::PLATFORM,
            "an invoice of the division",
            format!("{base}/api/v1/{division}/salesinvoice/SalesInvoices"),
            auth,
        )
        .query("$select", "InvoiceID")
        .query("$top", 1);
        let _: OData<InvoiceId> = self.http.json(&probe).await.map_err(|error| {
            let reason = match error {
                ConnectorError::Auth(message)
                | ConnectorError::Expired(message)
                | ConnectorError::Permissions(message)
                | ConnectorError::Failed(message) => message,
                unavailable @ (ConnectorError::Unavailable(_) | ConnectorError::RateLimited(_)) => {
                    return unavailable;
                }
            };
            ConnectorError::Auth(format!(
                "Exact Online accepted the access token, but not for division {division} ({reason})"
            ))
        })?;
        Ok(())
    }
}

impl ExactOnlineConnector {
    /// A page of sales invoices with their lines, credit notes left out
    /// (modified since `since`, when given).
    async fn invoices(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let filter = since.map(modified_since);
        let mut first = vec![
            ("$select", INVOICE_FIELDS),
            ("$expand", "SalesInvoiceLines"),
        ];
        if let Some(filter) = &filter {
            first.push(("$filter", filter.as_str()));
        }
        let (invoices, next) = self
            .list_page::<ExactInvoice>(
                credentials,
                "a page of invoices",
                &first,
                "salesinvoice/SalesInvoices",
                cursor,
            )
            .await?;
        let read = invoices.read(|invoice| {
            if invoice.is_credit_note() {
                Ok(None)
            } else {
                invoice.into_record().map(Some)
            }
        });
        Ok(Fetched::read(read, next))
    }

    /// A page of sales accounts (modified since `since`, when given).
    async fn accounts(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let filter = match since {
            Some(since) => format!("IsSales eq true and {}", modified_since(since)),
            None => "IsSales eq true".to_owned(),
        };
        let first = [("$select", ACCOUNT_FIELDS), ("$filter", filter.as_str())];
        let (accounts, next) = self
            .list_page::<ExactAccount>(
                credentials,
                "a page of accounts",
                &first,
                "crm/Accounts",
                cursor,
            )
            .await?;
        let read = accounts.read(|account| Ok(Some(account.into_record())));
        Ok(Fetched::read(read, next))
    }
}

/// The OData condition `Modified ge datetime'…'`: Exact's `datetime`
/// literal carries no offset (`YYYY-MM-DDTHH:mm:ss`), and the time is
/// written as UTC's wall clock. Whether Exact reads it as UTC or as the
/// site's local time is not confirmed (`NOTES.md`); [`CHANGES`]'s overlap
/// covers either.
pub fn modified_since(since: DateTime<Utc>) -> String {
    format!(
        "Modified ge datetime'{}'",
        since.format("%Y-%m-%dT%H:%M:%S")
    )
}

/// What Exact's changes say: nothing of deletions (a deleted invoice or
/// account just stops being listed, and Exact voids by credit note), so a
/// daily full fetch reconciles. The overlap is twelve hours, not five
/// minutes, while the timezone of `Modified` is not confirmed: a UTC wall
/// clock read as a European site's local time asks from earlier than meant,
/// and read on an American clock (the `.com` site) at most ten hours later.
pub(super) const CHANGES: Option<Changes> = Some(Changes {
    overlap: Duration::from_secs(12 * 60 * 60),
    deletions: Deletions::OnlyByFullFetch,
});

impl Syncs<Invoices> for ExactOnlineConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &ExactOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for ExactOnlineConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &ExactOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.accounts(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.accounts(credentials, Some(since.time), cursor).await
    }
}
