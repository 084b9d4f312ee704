//! Zoho Books' connector: invoices and contacts (`GET
//! /books/v3/invoices?organization_id=…&page=&per_page=`, paged by
//! `page_context.has_more_page`), with the `Zoho-oauthtoken` scheme; the
//! rest of the ledger is read in [`super::ledger`]. The API
//! lives on the organisation's data centre: the `api_domain` of the last
//! token answer when there is one, else the data centre's; tokens refresh at
//! that centre's accounts server (client credentials in the form body) and
//! are not rotated. After a first sync, only the invoices changed are asked
//! for (`last_modified_time`); contacts have no such filter and are fetched
//! whole every time. Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::mapping::{ContactsPage, InvoicesPage, OrganizationsAnswer, check_code};
use super::{ZohoBooksAuthorization, ZohoDataCenter};
use crate::data::accounts::Accounts;
use crate::data::bill_payments::BillPayments;
use crate::data::bills::Bills;
use crate::data::company_info::CompanyInfos;
use crate::data::credit_notes::CreditNotes;
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::Items;
use crate::data::journal_entries::JournalEntries;
use crate::data::payments::Payments;
use crate::data::suppliers::Suppliers;
use crate::data::tax_rates::TaxRates;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::link::{Grant, LinkSpec, Organization};

/// Records asked for per page by default (the API's maximum is 200).
pub const PAGE_SIZE: u64 = 200;

/// Where every Zoho user starts to authorize a client with Multi-DC on;
/// Zoho names the user's data centre on the callback.
const AUTHORIZE_URL: &str = "https://accounts.zoho.com/oauth/v2/auth";

/// The Zoho Books connector.
#[derive(Debug)]
pub struct ZohoBooksConnector {
    api_base: Option<String>,
    authorize_url: String,
    token_url: Option<String>,
    page_size: u64,
    pub(super) http: PlatformHttp,
}

impl Configured for ZohoBooksConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's data centre: https://www.zohoapis.<dc>; an api_domain in Zoho's token answer wins",
    );
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's data centre: https://accounts.zoho.<dc>/oauth/v2/token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            token_url: config.token_url.clone(),
            page_size: config.page_size_or(PAGE_SIZE, 200),
            http,
        }
    }
}

impl ZohoBooksConnector {
    /// `path` of the Books API: on the `api_domain` Zoho gave, else the
    /// configured base, else the data centre's domain.
    pub(super) fn books_url(&self, credentials: &ZohoBooksAuthorization, path: &str) -> String {
        let base = credentials
            .api_domain
            .clone()
            .or_else(|| self.api_base.clone())
            .unwrap_or_else(|| credentials.data_center.hosts().0.to_owned());
        format!("{base}/books/v3/{path}")
    }

    /// A call for page `page` of the list at `path`.
    pub(super) fn list<'a>(
        &self,
        credentials: &'a ZohoBooksAuthorization,
        path: &str,
        what: &'static str,
        page: PageNumber,
    ) -> Call<'a> {
        Call::get(
            Self::PLATFORM,
            what,
            self.books_url(credentials, path),
            auth(credentials),
        )
        .query("organization_id", &credentials.organization_id)
        .query("page", page.0)
        .query("per_page", self.page_size)
    }
}

/// The data centre a link flow's callback names, or why it cannot be stored.
fn data_center_of(callback: &BTreeMap<String, String>) -> Result<ZohoDataCenter, ConnectorError> {
    let location = callback.get("location").map(String::as_str);
    let server = callback.get("accounts-server").map(String::as_str);
    ZohoDataCenter::of_callback(location, server).ok_or_else(|| {
        ConnectorError::Failed(format!(
            "the Zoho account is in a data centre tributary cannot reach yet ({})",
            location.or(server).unwrap_or("unnamed")
        ))
    })
}

pub(super) fn auth(credentials: &ZohoBooksAuthorization) -> Auth<'_> {
    Auth::Scheme("Zoho-oauthtoken", credentials.tokens.access_token.expose())
}

impl Connector for ZohoBooksConnector {
    type Credentials = ZohoBooksAuthorization;
    const PLATFORM: &'static str = "Zoho Books";
    /// Zoho Books: 100 calls a minute per organization; the daily quota depends on the plan and
    /// is not counted here. Both answer the same 429 without `Retry-After` (NOTES.md): after one,
    /// every process holds off the minute; a call refused again right after that wait finds the
    /// day spent, and nothing is asked of the organization for an hour.
    const LIMITS: Limits = Limits::per_minute(100)
        .throttled_wait(Duration::from_secs(60))
        .spent_quota_hold(Duration::from_secs(60 * 60));

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices,
            Customers,
            Accounts,
            Suppliers,
            TaxRates,
            Bills,
            Payments,
            BillPayments,
            CreditNotes,
            Items,
            CompanyInfos,
            JournalEntries
        ]
    }

    /// `access_type=offline` for a refresh token and `prompt=consent` for
    /// one on every consent, not only the first.
    fn link_spec(&self) -> Option<LinkSpec> {
        let token_url = self
            .token_url
            .clone()
            .unwrap_or_else(|| format!("{}/oauth/v2/token", ZohoDataCenter::Com.hosts().1));
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                token_url,
                ClientAuth::RequestBody,
                &[
                    "ZohoBooks.invoices.READ",
                    "ZohoBooks.contacts.READ",
                    "ZohoBooks.settings.READ",
                    "ZohoBooks.accountants.READ",
                    "ZohoBooks.bills.READ",
                    "ZohoBooks.creditnotes.READ",
                    "ZohoBooks.customerpayments.READ",
                    "ZohoBooks.vendorpayments.READ",
                ],
            )
            .scopes_separated_by(",")
            .with_parameters(&[("access_type", "offline"), ("prompt", "consent")]),
        )
    }

    /// The code is exchanged at the accounts server of the user's data
    /// centre, which the callback names (`accounts-server`): only one of
    /// Zoho's own is sent the client secret.
    fn code_token_url(
        &self,
        spec: &LinkSpec,
        callback: &BTreeMap<String, String>,
    ) -> Result<String, ConnectorError> {
        if let Some(configured) = &self.token_url {
            return Ok(configured.clone());
        }
        let centre = data_center_of(callback)?;
        if let Some(server) = callback.get("accounts-server")
            && server.trim_end_matches('/') != centre.hosts().1
        {
            return Err(ConnectorError::Failed(
                "Zoho's callback named an accounts server that is not Zoho's".to_owned(),
            ));
        }
        if callback.contains_key("location") || callback.contains_key("accounts-server") {
            return Ok(format!("{}/oauth/v2/token", centre.hosts().1));
        }
        Ok(spec.token_url.clone())
    }

    /// `GET /organizations` on the user's data centre (the token answer's
    /// `api_domain`): every organization the token reaches.
    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let centre = data_center_of(&grant.callback)?;
        let base = grant
            .token_field("api_domain")
            .map(str::to_owned)
            .or_else(|| self.api_base.clone())
            .unwrap_or_else(|| centre.hosts().0.to_owned());
        let call = Call::get(
            Self::PLATFORM,
            "a list of organizations",
            format!("{base}/books/v3/organizations"),
            Auth::Scheme("Zoho-oauthtoken", &grant.access_token),
        );
        let body: OrganizationsAnswer = self.http.json(&call).await?;
        check_code(body.code, body.message)?;
        Ok(body
            .organizations
            .into_iter()
            .map(|organization| Organization {
                name: organization
                    .name
                    .unwrap_or_else(|| organization.organization_id.clone()),
                id: organization.organization_id,
                handle: None,
            })
            .collect())
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        body.insert("organizationId".to_owned(), organization.id.clone().into());
        let centre = data_center_of(&grant.callback).unwrap_or_default();
        body.insert("dataCenter".to_owned(), centre.body_value().into());
        serde_json::Value::Object(body)
    }

    fn token_endpoint(&self, credentials: &ZohoBooksAuthorization) -> Option<TokenEndpoint> {
        let url = self
            .token_url
            .clone()
            .unwrap_or_else(|| format!("{}/oauth/v2/token", credentials.data_center.hosts().1));
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// `GET /organizations` lists the organizations the token reaches: it
    /// must reach ours.
    async fn verify(&self, credentials: &ZohoBooksAuthorization) -> Result<(), ConnectorError> {
        let url = self.books_url(credentials, "organizations");
        let call = Call::get(
            Self::PLATFORM,
            "a list of organizations",
            url,
            auth(credentials),
        );
        let body: OrganizationsAnswer = self.http.json(&call).await?;
        check_code(body.code, body.message)?;
        let organization_id = &credentials.organization_id;
        let reached = body
            .organizations
            .iter()
            .map(|organization| organization.organization_id.as_str());
        require_reach(organization_id, reached, |count| {
            format!(
                "Zoho Books accepted the access token, but organization {organization_id} is not among \
                 the {count} it gives access to"
            )
        })
    }
}

/// `last_modified_time` as Zoho's document gives it (`YYYY-MM-DDTHH:MM:SS`
/// and the offset without a colon, as in `2013-11-18T02:02:51-0800`), in UTC.
pub fn last_modified_time(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%S%z").to_string()
}

impl ZohoBooksConnector {
    /// A page of invoices (modified after `since`, when given).
    async fn invoices(
        &self,
        credentials: &ZohoBooksAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(credentials, "invoices", "a page of invoices", page);
        let call = match since {
            Some(since) => call.query("last_modified_time", last_modified_time(since)),
            None => call,
        };
        let body: InvoicesPage = self.http.json(&call).await?;
        check_code(body.code, body.message)?;
        let read = body
            .invoices
            .read(|invoice| invoice.into_record().map(Some));
        Ok(Fetched::read(
            read,
            page.next(body.page_context.is_some_and(|page| page.has_more_page)),
        ))
    }
}

impl Syncs<Invoices> for ZohoBooksConnector {
    /// A voided invoice keeps its id with status `void`, but a deleted one
    /// just stops being listed, and Zoho has no deleted-since filter
    /// (`NOTES.md`): a daily full fetch reconciles.
    const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &ZohoBooksAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

/// Contacts keep [`Syncs::CHANGES`] at `None`: `GET /contacts` has no
/// modified-since filter (`NOTES.md`), so every sync fetches them whole.
impl Syncs<Customers> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "contacts", "a page of contacts", page)
            .query("filter_by", "Status.All");
        let body: ContactsPage = self.http.json(&call).await?;
        check_code(body.code, body.message)?;
        let read = body
            .contacts
            .read(|contact| Ok(contact.is_customer().then(|| contact.into_record())));
        Ok(Fetched::read(
            read,
            page.next(body.page_context.is_some_and(|page| page.has_more_page)),
        ))
    }
}
