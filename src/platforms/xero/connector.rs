//! Xero's connector: the Accounting API's sales invoices (`GET
//! /api.xro/2.0/Invoices`, `Type=="ACCREC"`) and contacts, page-numbered (100
//! a page), for the tenant named by the `xero-tenant-id` header; tokens
//! refresh at Xero's identity server (HTTP Basic) and rotate on every
//! refresh. After a first sync, only what changed is asked for, with the
//! `If-Modified-Since` header. Suppliers are the contacts marked
//! `IsSupplier`, bills the invoices of `Type=="ACCPAY"`, payments and bill
//! payments the receivable and payable kinds of `GET /Payments`; the chart of accounts (`GET
//! /Accounts`) and the tax rates (`GET /TaxRates`) are one call each, whole
//! every time. Sources: `NOTES.md`.

mod syncs;

use crate::platforms::kit::limits::{Limits, Quota, Remaining};
use chrono::{DateTime, Utc};

use super::XeroAuthorization;
use super::chart::{AccountsAnswer, TaxRatesAnswer};
use super::company::{AccountsByCode, ItemsAnswer, OrganisationAnswer};
use super::journals::{JOURNALS_PER_CALL, JournalsAnswer};
use super::mapping::{
    ContactsPage, CreditNotesPage, InvoicesPage, Pagination, XeroConnection, XeroCreditNote,
    XeroInvoice,
};
use super::payments::{Found, PaymentsPage, XeroPayment};
use crate::data::accounts::AccountRef;
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
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::Unreadable;
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// Records Xero returns per page.
pub const PAGE_SIZE: usize = 100;

/// The Xero connector.
#[derive(Debug)]
pub struct XeroConnector {
    api_base: String,
    token_url: String,
    authorize_url: String,
    http: PlatformHttp,
}

const API_BASE: &str = "https://api.xero.com";
const TOKEN_URL: &str = "https://identity.xero.com/connect/token";
const AUTHORIZE_URL: &str = "https://login.xero.com/identity/connect/authorize";

impl Configured for XeroConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            token_url: config.token_url_or(TOKEN_URL),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            http,
        }
    }
}

impl XeroConnector {
    /// A page of an Accounting API list, for the connection's tenant.
    /// Of the records changed since `since` when given (`If-Modified-Since`,
    /// in UTC: Xero's document gives the header as a `date-time`).
    fn list<'a>(
        &self,
        credentials: &'a XeroAuthorization,
        path: &str,
        what: &'static str,
        page: PageNumber,
        since: Option<DateTime<Utc>>,
    ) -> Call<'a> {
        let url = format!("{}/api.xro/2.0/{path}", self.api_base);
        let call = Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens))
            .header("xero-tenant-id", credentials.tenant_id)
            .query("page", page.0);
        match since {
            Some(since) => call.header("If-Modified-Since", modified_since(since)),
            None => call,
        }
    }

    /// A page of sales invoices (changed since `since`, when given).
    async fn invoices(
        &self,
        credentials: &XeroAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "Invoices", "a page of invoices", page, since)
            .query("where", "Type==\"ACCREC\"");
        let body: InvoicesPage = self.http.json(&call).await.map_err(refusal)?;
        let next = page.next(more(page, body.pagination.as_ref(), body.invoices.len()));
        let read = body.invoices.read(XeroInvoice::into_sale);
        Ok(Fetched::read(read, next)
            .of_total(body.pagination.and_then(|pagination| pagination.item_count)))
    }

    /// A page of contacts, archived ones included (changed since `since`, when given).
    async fn contacts(
        &self,
        credentials: &XeroAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "Contacts", "a page of contacts", page, since)
            .query("includeArchived", "true");
        let body: ContactsPage = self.http.json(&call).await.map_err(refusal)?;
        let next = page.next(more(page, body.pagination.as_ref(), body.contacts.len()));
        let read = body.contacts.read(|contact| Ok(contact.into_customer()));
        Ok(Fetched::read(read, next)
            .of_total(body.pagination.and_then(|pagination| pagination.item_count)))
    }
}

impl XeroConnector {
    /// A page of bills: the invoices of `Type=="ACCPAY"` (changed since
    /// `since`, when given); anything else Xero sends is left out.
    async fn bills(
        &self,
        credentials: &XeroAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "Invoices", "a page of bills", page, since)
            .query("where", "Type==\"ACCPAY\"");
        let body: InvoicesPage = self.http.json(&call).await.map_err(refusal)?;
        let next = page.next(more(page, body.pagination.as_ref(), body.invoices.len()));
        let read = body.invoices.read(XeroInvoice::into_purchase);
        Ok(Fetched::read(read, next)
            .of_total(body.pagination.and_then(|pagination| pagination.item_count)))
    }

    /// A page of sales credit notes (`where=Type=="ACCRECCREDIT"`, changed
    /// since `since` when given), with their allocations to invoices.
    async fn credit_notes(
        &self,
        credentials: &XeroAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(
                credentials,
                "CreditNotes",
                "a page of credit notes",
                page,
                since,
            )
            .query("where", "Type==\"ACCRECCREDIT\"");
        let body: CreditNotesPage = self.http.json(&call).await.map_err(refusal)?;
        let next = page.next(more(
            page,
            body.pagination.as_ref(),
            body.credit_notes.len(),
        ));
        let read = body.credit_notes.read(XeroCreditNote::into_sale);
        Ok(Fetched::read(read, next)
            .of_total(body.pagination.and_then(|pagination| pagination.item_count)))
    }

    /// A page of Xero's payments (changed since `since`, when given), read
    /// for one side by `read`. Xero lists money received and paid together,
    /// and its `where` on `PaymentType` is only fast for one type
    /// (NOTES.md), so the whole list is read and the other side's payments
    /// left out; a deleted payment of ours is named so that its stored copy
    /// is flagged at once.
    async fn payments_of<T>(
        &self,
        credentials: &XeroAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
        what: &'static str,
        read: fn(XeroPayment) -> Result<Found<T>, Unreadable>,
    ) -> Result<Fetched<T>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(credentials, "Payments", what, page, since);
        let body: PaymentsPage = self.http.json(&call).await.map_err(refusal)?;
        let next = page.next(more(page, body.pagination.as_ref(), body.payments.len()));
        let mut deleted = Vec::new();
        let records = body.payments.read(|payment| {
            Ok(match read(payment)? {
                Found::Record(record) => Some(*record),
                Found::Deleted(id) => {
                    deleted.push(id);
                    None
                }
                Found::NotOurs => None,
            })
        });
        Ok(Fetched::read(records, next).removing(deleted))
    }
}

impl XeroConnector {
    /// The whole chart of accounts: one call, no paging (Xero's document
    /// gives `GET /Accounts` no `page`), archived accounts included.
    async fn accounts(
        &self,
        credentials: &XeroAuthorization,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let url = format!("{}/api.xro/2.0/Accounts", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the chart of accounts",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .header("xero-tenant-id", credentials.tenant_id);
        let body: AccountsAnswer = self.http.json(&call).await.map_err(refusal)?;
        let read = body.accounts.read(|account| Ok(account.into_record()));
        Ok(Fetched::read(read, None))
    }
}

impl XeroConnector {
    /// Every item: one call, no paging (Xero's document gives `GET /Items`
    /// no `page`), after the chart of accounts, whose ids the items'
    /// account codes name. Whole every time: a deleted item leaves the list.
    async fn items(
        &self,
        credentials: &XeroAuthorization,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let accounts: AccountsByCode = self
            .accounts(credentials)
            .await?
            .records
            .into_iter()
            .filter_map(|account| {
                let code = account.nominal_code?;
                let reference = AccountRef {
                    id: account.account_id,
                    name: Some(account.account_name),
                };
                Some((code, reference))
            })
            .collect();
        let url = format!("{}/api.xro/2.0/Items", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the items",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .header("xero-tenant-id", credentials.tenant_id);
        let body: ItemsAnswer = self.http.json(&call).await.map_err(refusal)?;
        let read = body
            .items
            .read(|item| Ok(Some(item.into_record(&accounts))));
        Ok(Fetched::read(read, None))
    }

    /// The organisation: one call (`GET /Organisation`, a list of one).
    async fn organisation(
        &self,
        credentials: &XeroAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let url = format!("{}/api.xro/2.0/Organisation", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the organisation",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .header("xero-tenant-id", credentials.tenant_id);
        let body: OrganisationAnswer = self.http.json(&call).await.map_err(refusal)?;
        let read = body
            .organisations
            .read(|organisation| Ok(Some(organisation.into_record())));
        Ok(Fetched::read(read, None))
    }
}

impl XeroConnector {
    /// The journals numbered above `offset` (at most 100). The next page
    /// starts after the last one read; the last page says where the next
    /// sync resumes: after the highest number seen, since journals are only
    /// ever added.
    async fn journals(
        &self,
        credentials: &XeroAuthorization,
        offset: u64,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let url = format!("{}/api.xro/2.0/Journals", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "a page of journals",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .header("xero-tenant-id", credentials.tenant_id)
        .query("offset", offset);
        let body: JournalsAnswer = self.http.json(&call).await.map_err(refusal)?;
        let returned = body.journals.len();
        let highest = body
            .journals
            .last_read()
            .and_then(|journal| journal.journal_number)
            .map_or(offset, |number| number.max(offset));
        let read = body
            .journals
            .read(|journal| journal.into_record().map(Some));
        let fetched = if returned >= JOURNALS_PER_CALL && highest > offset {
            Fetched::read(read, Some(highest.to_string()))
        } else {
            Fetched::read(read, None).resuming(Some(highest.to_string()))
        };
        Ok(fetched)
    }

    /// Where a page of journals starts: after the journal number `cursor`
    /// names (or `from`, or the first journal).
    fn journal_offset(cursor: Option<String>, from: Option<String>) -> Result<u64, ConnectorError> {
        match cursor.or(from) {
            None => Ok(0),
            Some(text) => text.parse().map_err(|_| {
                ConnectorError::Failed(format!(
                    "{}: the journals' position \"{text}\" is not a journal number",
                    Self::PLATFORM
                ))
            }),
        }
    }
}

impl XeroConnector {
    /// Every tax rate: one call, no paging (Xero's document gives
    /// `GET /TaxRates` no `page`).
    async fn tax_rates(
        &self,
        credentials: &XeroAuthorization,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let url = format!("{}/api.xro/2.0/TaxRates", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the tax rates",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .header("xero-tenant-id", credentials.tenant_id);
        let body: TaxRatesAnswer = self.http.json(&call).await.map_err(refusal)?;
        let read = body.tax_rates.read(|rate| Ok(rate.into_record()));
        Ok(Fetched::read(read, None))
    }
}

/// Xero's two refusals, which invert the usual statuses (NOTES.md, "Errors"):
/// a scope the consent lacks answers 401 `AuthorizationUnsuccessful` (no
/// refresh cures it: the data type fails, the connection stays linked), and a
/// tenant no longer connected to the application answers 403
/// `AuthenticationUnsuccessful` (the connection needs new authorization).
fn refusal(error: ConnectorError) -> ConnectorError {
    match error {
        ConnectorError::Expired(message) if message.contains("AuthorizationUnsuccessful") => {
            ConnectorError::Permissions(message)
        }
        ConnectorError::Permissions(message) if message.contains("AuthenticationUnsuccessful") => {
            ConnectorError::Auth(format!(
                "{message}: the organisation is no longer connected to the application; have its user \
                 reconnect it"
            ))
        }
        other => other,
    }
}

impl XeroConnector {
    /// A page of the contacts that are suppliers, archived ones included
    /// (changed since `since`, when given): `where=IsSupplier==true` asks
    /// Xero for those alone, and each is checked again as it is read.
    async fn suppliers(
        &self,
        credentials: &XeroAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "Contacts", "a page of suppliers", page, since)
            .query("where", "IsSupplier==true")
            .query("includeArchived", "true");
        let body: ContactsPage = self.http.json(&call).await.map_err(refusal)?;
        let next = page.next(more(page, body.pagination.as_ref(), body.contacts.len()));
        let read = body.contacts.read(|contact| Ok(contact.into_supplier()));
        Ok(Fetched::read(read, next)
            .of_total(body.pagination.and_then(|pagination| pagination.item_count)))
    }
}

/// `If-Modified-Since` as Xero's document types it (`format: date-time`),
/// in UTC to the second.
pub fn modified_since(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// What Xero's changes say of deletions: a deleted or voided invoice keeps
/// its id with status `DELETED` or `VOIDED`, and contacts are archived, not
/// deleted; but Xero does not say that such a change moves `UpdatedDateUTC`
/// (`NOTES.md`), so a daily full fetch still reconciles.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

/// Whether a page-numbered list has pages after `page`: Xero says how many
/// there are; without that, a full page may be followed by another.
fn more(page: PageNumber, pagination: Option<&Pagination>, returned: usize) -> bool {
    match pagination.and_then(|pagination| pagination.page_count) {
        Some(count) => page.0 < count,
        None => returned >= PAGE_SIZE,
    }
}

impl Connector for XeroConnector {
    type Credentials = XeroAuthorization;
    const PLATFORM: &'static str = "Xero";
    /// Xero: 60 calls a minute, 5,000 a day and 5 at once per organization and application, with
    /// what is left of the minute and the day in `X-MinLimit-Remaining` and `X-DayLimit-Remaining`
    /// (NOTES.md).
    const LIMITS: Limits = Limits::per_minute(60)
        .daily(5_000)
        .concurrent(5)
        .remaining(&[
            Remaining {
                header: "x-minlimit-remaining",
                quota: Quota::Rate,
            },
            Remaining {
                header: "x-daylimit-remaining",
                quota: Quota::Daily,
            },
        ]);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Bills, Payments, BillPayments, CreditNotes,
            Items, CompanyInfos, JournalEntries
        ]
    }

    fn token_endpoint(&self, _credentials: &XeroAuthorization) -> Option<TokenEndpoint> {
        let endpoint = TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::Basic,
            &self.http,
        );
        Some(endpoint)
    }

    fn link_spec(&self) -> Option<LinkSpec> {
        Some(super::link::spec(&self.authorize_url, &self.token_url))
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        super::link::organizations(&self.http, &self.api_base, grant).await
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("tenantId".to_owned(), organization.id.clone().into());
        Value::Object(body)
    }

    async fn release(
        &self,
        grant: &Grant,
        keep: Option<&Organization>,
    ) -> Result<(), ConnectorError> {
        super::link::release(&self.http, &self.api_base, grant, keep).await
    }

    /// `GET /connections` lists the tenants the token reaches: it must reach ours.
    async fn verify(&self, credentials: &XeroAuthorization) -> Result<(), ConnectorError> {
        let url = format!("{}/connections", self.api_base);
        let auth = Auth::bearer(&credentials.tokens);
        let call = Call::get(Self::PLATFORM, "a list of connections", url, auth);
        let connections: Vec<XeroConnection> = self.http.json(&call).await?;
        let tenant_id = credentials.tenant_id.to_string();
        let reached = connections
            .iter()
            .map(|connection| connection.tenant_id.as_str());
        require_reach(&tenant_id, reached, |count| {
            format!(
                "Xero accepted the access token, but it is not connected to tenant {tenant_id} \
                 (GET /connections lists {count} other tenant(s))"
            )
        })
    }
}
