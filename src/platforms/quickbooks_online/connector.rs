//! QuickBooks Online's connector: invoices, customers, the chart of
//! accounts, vendors, tax rates, bills, payments, bill payments, credit
//! memos, items and journal entries through the query
//! endpoint (`GET /v3/company/{realmId}/query?query=select * from Invoice
//! STARTPOSITION n MAXRESULTS m`), on the production or sandbox host as the
//! authorization says; tokens refresh at Intuit's token endpoint (HTTP
//! Basic), and the refresh token may change on any refresh. After a first
//! sync, only what changed is asked for, with `Metadata.LastUpdatedTime >
//! '<time>'` in the query's `where`. Sources: `NOTES.md`.

mod journal_report;
mod syncs;
use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};
use std::time::Duration;

use super::QuickBooksOnlineAuthorization;
use super::company::{CompanyInfoAnswer, ItemList, PreferencesAnswer};
use super::mapping::{
    AccountList, CreditMemoList, CustomerList, InvoiceList, QueryAnswer, TaxRateList, VendorList,
};
use super::settlements::{BillList, BillPaymentList, PaymentList};
use crate::data::accounts::{Account, Accounts};
use crate::data::bill_payments::{BillPayment, BillPayments};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::{Item, Items};
use crate::data::journal_entries::{JournalEntries, JournalEntry};
use crate::data::payments::{Payment, Payments};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::authorization::Environment;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::Offset;
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// The real production API.
pub const API_BASE: &str = "https://quickbooks.api.intuit.com";
/// The real sandbox API (Intuit's sandbox companies).
pub const SANDBOX_API_BASE: &str = "https://sandbox-quickbooks.api.intuit.com";
/// The real token endpoint.
pub const TOKEN_URL: &str = "https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer";
/// Records asked for per query by default: the most `MAXRESULTS` takes
/// (1000, against a default of 100: NOTES.md, "Limits"), so a full sync
/// costs a tenth of the calls.
pub const PAGE_SIZE: u64 = 1000;
/// The API minor version the field mapping was written against.
const MINOR_VERSION: &str = "75";

/// The QuickBooks Online connector.
#[derive(Debug)]
pub struct QuickBooksConnector {
    api_base: Option<String>,
    token_url: String,
    authorize_url: String,
    page_size: u64,
    http: PlatformHttp,
}

/// Intuit's authorize endpoint (the same for production and sandbox companies).
pub const AUTHORIZE_URL: &str = "https://appcenter.intuit.com/connect/oauth2";

impl Configured for QuickBooksConnector {
    /// One host per environment, chosen per connection.
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://quickbooks.api.intuit.com or https://sandbox-quickbooks.api.intuit.com",
    );
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            token_url: config.token_url_or(TOKEN_URL),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

impl QuickBooksConnector {
    /// The company's API root: the configured base, else the host of the
    /// connection's environment.
    fn company_url(&self, credentials: &QuickBooksOnlineAuthorization) -> String {
        let base = match (&self.api_base, credentials.environment) {
            (Some(base), _) => base.as_str(),
            (None, Environment::Sandbox) => SANDBOX_API_BASE,
            (None, Environment::Production) => API_BASE,
        };
        format!("{base}/v3/company/{}", credentials.realm_id)
    }

    /// One query of the query endpoint, a page of it from `start`.
    async fn query<T: serde::de::DeserializeOwned + Default>(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        what: &'static str,
        select: &str,
        start: Offset,
    ) -> Result<T, ConnectorError> {
        let query = format!(
            "{select} STARTPOSITION {} MAXRESULTS {}",
            start.0, self.page_size
        );
        let call = Call::get(
            Self::PLATFORM,
            what,
            format!("{}/query", self.company_url(credentials)),
            Auth::bearer(&credentials.tokens),
        )
        .query("query", query)
        .query("minorversion", MINOR_VERSION);
        let answer: QueryAnswer<T> = self.http.json(&call).await.map_err(company_refused)?;
        Ok(answer.query_response)
    }
}

/// QuickBooks has one scope for every entity (`com.intuit.quickbooks.accounting`),
/// so its 403 (`ApplicationAuthorizationFailed`, errorCode 003100: the app may
/// no longer reach the company) is about the company, not one data type: the
/// connection needs new authorization (NOTES.md, "Errors").
fn company_refused(error: ConnectorError) -> ConnectorError {
    match error {
        ConnectorError::Permissions(message) => ConnectorError::Auth(format!(
            "{message}: QuickBooks no longer lets the application read this company; have its user \
             reconnect it"
        )),
        other => other,
    }
}

/// The select statement of `entity`: its own `condition` (if any) and,
/// when `since` is given, only what changed since then
/// (`Metadata.LastUpdatedTime > '<time>'`), joined with `and`, the only
/// conjunction the query language has.
fn select(entity: &str, condition: Option<&str>, since: Option<DateTime<Utc>>) -> String {
    let changed =
        since.map(|since| format!("Metadata.LastUpdatedTime > '{}'", last_updated(since)));
    let conditions: Vec<String> = condition
        .map(str::to_owned)
        .into_iter()
        .chain(changed)
        .collect();
    if conditions.is_empty() {
        format!("select * from {entity}")
    } else {
        format!("select * from {entity} where {}", conditions.join(" and "))
    }
}

/// A `LastUpdatedTime` literal as Intuit's query example writes one
/// (`'2011-08-10T10:20:30-0700'`: to the second, with its offset), in UTC.
pub fn last_updated(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%S%z").to_string()
}

/// What QuickBooks' changes say of deletions: nothing. The query endpoint
/// does not return deleted entities (`NOTES.md`; only CDC does, which is not
/// used), so a daily full fetch reconciles.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl QuickBooksConnector {
    /// A page of invoices from `cursor` (changed since `since`, when given).
    async fn invoices(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("Invoice", None, since);
        let list: InvoiceList = self
            .query(credentials, "a page of invoices", &select, start)
            .await?;
        let returned = list.invoice.len();
        let read = list.invoice.read(|invoice| invoice.into_record().map(Some));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }

    /// A page of customers from `cursor`, inactive ones included (changed
    /// since `since`, when given).
    async fn customers(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        // Without the filter the API returns active customers only.
        let select = select("Customer", Some("Active in (true, false)"), since);
        let list: CustomerList = self
            .query(credentials, "a page of customers", &select, start)
            .await?;
        let returned = list.customer.len();
        let read = list
            .customer
            .read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }
}

impl QuickBooksConnector {
    /// A page of the chart of accounts from `cursor`, inactive accounts
    /// included (QuickBooks does not delete an account: it makes it
    /// inactive).
    async fn accounts(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("Account", Some("Active in (true, false)"), None);
        let list: AccountList = self
            .query(credentials, "a page of accounts", &select, start)
            .await?;
        let returned = list.account.len();
        let read = list.account.read(|account| Ok(Some(account.into_record())));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }
}

impl QuickBooksConnector {
    /// A page of vendors (suppliers) from `cursor`, inactive ones included
    /// (changed since `since`, when given).
    async fn suppliers(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        // Without the filter the API returns active vendors only.
        let select = select("Vendor", Some("Active in (true, false)"), since);
        let list: VendorList = self
            .query(credentials, "a page of suppliers", &select, start)
            .await?;
        let returned = list.vendor.len();
        let read = list.vendor.read(|vendor| Ok(Some(vendor.into_supplier())));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }
}

impl QuickBooksConnector {
    /// A page of tax rates from `cursor`, inactive ones included.
    async fn tax_rates(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("TaxRate", Some("Active in (true, false)"), None);
        let list: TaxRateList = self
            .query(credentials, "a page of tax rates", &select, start)
            .await?;
        let returned = list.tax_rate.len();
        let read = list.tax_rate.read(|rate| Ok(Some(rate.into_record())));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }
}

impl QuickBooksConnector {
    /// A page of bills from `cursor` (changed since `since`, when given).
    async fn bills(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("Bill", None, since);
        let list: BillList = self
            .query(credentials, "a page of bills", &select, start)
            .await?;
        let returned = list.bill.len();
        let read = list.bill.read(|bill| bill.into_record().map(Some));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }

    /// A page of payments received from `cursor` (changed since `since`,
    /// when given).
    async fn payments(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("Payment", None, since);
        let list: PaymentList = self
            .query(credentials, "a page of payments", &select, start)
            .await?;
        let returned = list.payment.len();
        let read = list.payment.read(|payment| payment.into_record().map(Some));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }
}

impl QuickBooksConnector {
    /// A page of payments to vendors from `cursor` (changed since `since`,
    /// when given).
    async fn bill_payments(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("BillPayment", None, since);
        let list: BillPaymentList = self
            .query(credentials, "a page of bill payments", &select, start)
            .await?;
        let returned = list.bill_payment.len();
        let read = list
            .bill_payment
            .read(|payment| payment.into_record().map(Some));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }
}

impl QuickBooksConnector {
    /// A page of credit memos (sales credit notes) from `cursor` (changed
    /// since `since`, when given).
    async fn credit_notes(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("CreditMemo", None, since);
        let list: CreditMemoList = self
            .query(credentials, "a page of credit notes", &select, start)
            .await?;
        let returned = list.credit_memo.len();
        let read = list.credit_memo.read(|memo| memo.into_record().map(Some));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }
}

impl QuickBooksConnector {
    /// A page of items from `cursor`, inactive ones included.
    async fn items(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let start = Offset::from_cursor(Self::PLATFORM, cursor, 1)?;
        let select = select("Item", Some("Active in (true, false)"), None);
        let list: ItemList = self
            .query(credentials, "a page of items", &select, start)
            .await?;
        let returned = list.item.len();
        let read = list.item.read(|item| Ok(item.into_record()));
        Ok(Fetched::read(read, start.next(returned, self.page_size)))
    }

    /// The company: `GET /companyinfo/{realmId}`, and its home currency
    /// from `GET /preferences` (the company info has none).
    async fn company_info(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let company_url = self.company_url(credentials);
        let auth = Auth::bearer(&credentials.tokens);
        let url = format!("{company_url}/companyinfo/{}", credentials.realm_id);
        let call = Call::get(Self::PLATFORM, "company information", url, auth)
            .query("minorversion", MINOR_VERSION);
        let answer: CompanyInfoAnswer = self.http.json(&call).await.map_err(company_refused)?;
        let url = format!("{company_url}/preferences");
        let call = Call::get(
            Self::PLATFORM,
            "the company's preferences",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .query("minorversion", MINOR_VERSION);
        let preferences: PreferencesAnswer =
            self.http.json(&call).await.map_err(company_refused)?;
        let realm_id = credentials.realm_id.to_string();
        let company = answer
            .company_info
            .into_record(&realm_id, preferences.home_currency());
        Ok(Fetched::all(vec![company], None))
    }
}

impl Connector for QuickBooksConnector {
    type Credentials = QuickBooksOnlineAuthorization;
    const PLATFORM: &'static str = "QuickBooks Online";
    /// QuickBooks Online: 500 calls a minute per company, 10 a second and 10 at once per company
    /// and application (NOTES.md): 8 a second keeps both rates. A 429 sends no `Retry-After`;
    /// Intuit says to wait 60 seconds.
    const LIMITS: Limits = Limits::per_second(8)
        .concurrent(10)
        .throttled_wait(Duration::from_secs(60));

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Bills, Payments, BillPayments, CreditNotes,
            Items, CompanyInfos, JournalEntries
        ]
    }

    fn token_endpoint(
        &self,
        _credentials: &QuickBooksOnlineAuthorization,
    ) -> Option<TokenEndpoint> {
        let endpoint = TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::Basic,
            &self.http,
        );
        Some(endpoint)
    }

    /// Intuit's code flow: the accounting scope; the company is the
    /// `realmId` the callback carries (one per consent).
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(LinkSpec::code_flow(
            self.authorize_url.clone(),
            self.token_url.clone(),
            ClientAuth::Basic,
            &["com.intuit.quickbooks.accounting"],
        ))
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let realm = grant.given("realmId").filter(|realm| {
            !realm.is_empty() && realm.len() <= 32 && realm.bytes().all(|b| b.is_ascii_digit())
        });
        let Some(realm) = realm else {
            return Err(ConnectorError::Failed(
                "QuickBooks sent no company (`realmId`) on the callback".to_owned(),
            ));
        };
        Ok(vec![Organization {
            id: realm.to_owned(),
            name: format!("QuickBooks company {realm}"),
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("realmId".to_owned(), organization.id.clone().into());
        Value::Object(body)
    }

    /// `GET /companyinfo/{realmId}` answers only for the token's own company.
    async fn verify(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
    ) -> Result<(), ConnectorError> {
        let url = format!(
            "{}/companyinfo/{}",
            self.company_url(credentials),
            credentials.realm_id
        );
        let auth = Auth::bearer(&credentials.tokens);
        let call = Call::get(Self::PLATFORM, "company information", url, auth)
            .query("minorversion", MINOR_VERSION);
        let _: CompanyInfoAnswer = self.http.json(&call).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn the_filter_joins_an_entitys_own_condition_with_and() {
        let since = Utc.with_ymd_and_hms(2026, 11, 27, 8, 55, 0).single();
        assert_eq!(select("Invoice", None, None), "select * from Invoice");
        assert_eq!(
            select("Invoice", None, since),
            "select * from Invoice where Metadata.LastUpdatedTime > '2026-11-27T08:55:00+0000'"
        );
        assert_eq!(
            select("Customer", Some("Active in (true, false)"), since),
            "select * from Customer where Active in (true, false) and Metadata.LastUpdatedTime > '2026-11-27T08:55:00+0000'"
        );
    }
}
