//! Sage Business Cloud Accounting's connector: API v3.1's sales invoices
//! (`GET /sales_invoices`) and customer contacts (`GET
//! /contacts?contact_type_id=CUSTOMER`), with every attribute (the rest of
//! the ledger in [`super::ledger`]), for the
//! business named by the `X-Business` header; paged by `page` and
//! `items_per_page` (200, the maximum) until the answer's `$next` is null.
//! Tokens refresh at Sage's OAuth server (client credentials in the form
//! body), last five minutes and rotate on every refresh. After a first sync,
//! only what changed is asked for (`updated_or_created_since`), then what
//! was deleted (`deleted_since`), whose ids are flagged at once. Sources:
//! `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::SageBusinessCloudAuthorization;
use super::mapping::{Link, ListPage, SageBusiness, SageContact, SageInvoice};
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
use crate::platforms::kit::json;
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::Each;
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// Records asked for per page by default: Sage's maximum.
pub const PAGE_SIZE: u64 = 200;

const API_BASE: &str = "https://api.accounting.sage.com/v3.1";
const TOKEN_URL: &str = "https://oauth.accounting.sage.com/token";
const AUTHORIZE_URL: &str = "https://www.sageone.com/oauth2/auth/central?filter=apiv3.1";

/// The cursor of a changed fetch's last step: what its lists deleted since.
const DELETED: &str = "deleted";

/// The Sage Business Cloud Accounting connector.
#[derive(Debug)]
pub struct SageBusinessCloudConnector {
    pub(super) api_base: String,
    token_url: String,
    authorize_url: String,
    page_size: u64,
    pub(super) http: PlatformHttp,
}

impl Configured for SageBusinessCloudConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            token_url: config.token_url_or(TOKEN_URL),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            page_size: config.page_size_or(PAGE_SIZE, 200),
            http,
        }
    }
}

impl SageBusinessCloudConnector {
    /// A page of a list of the connection's business, with every attribute;
    /// of what was updated or created since `since`, when given
    /// (`updated_or_created_since`).
    pub(super) fn list<'a>(
        &self,
        credentials: &'a SageBusinessCloudAuthorization,
        path: &str,
        what: &'static str,
        page: PageNumber,
        since: Option<DateTime<Utc>>,
    ) -> Call<'a> {
        let url = format!("{}/{path}", self.api_base);
        let call = Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens))
            .header("X-Business", &credentials.business_id)
            .query("page", page.0)
            .query("items_per_page", self.page_size)
            .query("attributes", "all");
        match since {
            Some(since) => call.query("updated_or_created_since", updated_or_created_since(since)),
            None => call,
        }
    }

    /// A page of sales invoices (updated or created since `since`, when given).
    async fn invoices(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        if let Some(deleted) = self
            .deleted_step(credentials, &[SALES_INVOICES], since, cursor.as_deref())
            .await?
        {
            return Ok(deleted);
        }
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(
            credentials,
            "sales_invoices",
            "a page of sales invoices",
            page,
            since,
        );
        let (invoices, next, total) = self.fetch::<SageInvoice>(&call, page).await?;
        let read = invoices.read(|invoice| invoice.into_record().map(Some));
        Ok(then_deleted(
            Fetched::read(read, next).of_total(total),
            since,
        ))
    }

    /// A page of customer contacts (updated or created since `since`, when given).
    async fn contacts(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        if let Some(deleted) = self
            .deleted_step(credentials, &[CONTACTS], since, cursor.as_deref())
            .await?
        {
            return Ok(deleted);
        }
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "contacts", "a page of contacts", page, since)
            .query("contact_type_id", "CUSTOMER");
        let (contacts, next, _) = self.fetch::<SageContact>(&call, page).await?;
        let read =
            contacts.read(|contact| Ok(contact.is_customer().then(|| contact.into_record())));
        Ok(then_deleted(Fetched::read(read, next), since))
    }

    /// Fetches a page of `call` and says where the next starts: Sage names
    /// the next page in `$next` (null on the last), and serves the last
    /// page again for a page beyond it, so a page numbered below the one
    /// asked for ends the list too.
    pub(super) async fn fetch<T: DeserializeOwned>(
        &self,
        call: &Call<'_>,
        page: PageNumber,
    ) -> Result<(Each<T>, Option<String>, Option<u64>), ConnectorError> {
        let body: ListPage<Each<T>> = self.http.json(call).await?;
        let more = body.more_after(page);
        Ok((body.items, page.next(more), body.total))
    }

    /// The last step of a changed fetch (`since` given, the cursor
    /// [`DELETED`]): no records, and the ids of what each of `lists`
    /// deleted since `since`, for the engine to flag deleted at once.
    /// `None` for every other step.
    pub(super) async fn deleted_step<R>(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        lists: &[DeletedList],
        since: Option<DateTime<Utc>>,
        cursor: Option<&str>,
    ) -> Result<Option<Fetched<R>>, ConnectorError> {
        let Some(since) = since.filter(|_| cursor == Some(DELETED)) else {
            return Ok(None);
        };
        let mut removed = Vec::new();
        for list in lists {
            removed.append(&mut self.deleted_since(credentials, list, since).await?);
        }
        Ok(Some(Fetched::all(Vec::new(), None).removing(removed)))
    }

    /// The ids of what `list` deleted since `since`, over every page of
    /// `GET /<list>?deleted_since=<since>` (not inclusive): the list's own
    /// answer, whose `$items` are the deleted resources (`id`, with
    /// `deleted_at`; `NOTES.md`, "Incremental fetch"). Only the ids are
    /// read, so no `attributes` are asked for.
    async fn deleted_since(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        list: &DeletedList,
        since: DateTime<Utc>,
    ) -> Result<Vec<String>, ConnectorError> {
        let url = format!("{}/{}", self.api_base, list.path);
        let mut ids = Vec::new();
        let mut page = PageNumber(1);
        loop {
            let call = Call::get(
                Self::PLATFORM,
                list.what,
                url.clone(),
                Auth::bearer(&credentials.tokens),
            )
            .header("X-Business", &credentials.business_id)
            .query("page", page.0)
            .query("items_per_page", self.page_size)
            .query("deleted_since", updated_or_created_since(since));
            let body: ListPage<Vec<Link>> = self.http.json(&call).await?;
            let more = body.more_after(page);
            ids.extend(
                body.items
                    .into_iter()
                    .filter_map(|deleted| json::non_empty(deleted.id)),
            );
            if !more {
                return Ok(ids);
            }
            page = PageNumber(page.0 + 1);
        }
    }
}

/// A list whose deletions Sage lists (`deleted_since`): its path and what
/// a page of it is called in errors.
pub(super) struct DeletedList {
    /// The list's path under the API base (`sales_invoices`).
    pub(super) path: &'static str,
    /// A page of its deletions, as errors name it.
    pub(super) what: &'static str,
}

/// Sales invoices' deletions.
const SALES_INVOICES: DeletedList = DeletedList {
    path: "sales_invoices",
    what: "a page of deleted sales invoices",
};

/// Contacts' deletions, of every type: Sage's documents do not say that
/// `contact_type_id` narrows them, and an id that was no customer (or no
/// supplier) is in no previous copy, so flags nothing.
pub(super) const CONTACTS: DeletedList = DeletedList {
    path: "contacts",
    what: "a page of deleted contacts",
};

/// A page of a fetch, continuing after its last page of a changed fetch
/// (`since` given) with the [`DELETED`] step.
pub(super) fn then_deleted<R>(fetched: Fetched<R>, since: Option<DateTime<Utc>>) -> Fetched<R> {
    match (&fetched.next, since) {
        (None, Some(_)) => Fetched {
            next: Some(DELETED.to_owned()),
            ..fetched
        },
        _ => fetched,
    }
}

impl Connector for SageBusinessCloudConnector {
    type Credentials = SageBusinessCloudAuthorization;
    const PLATFORM: &'static str = "Sage Business Cloud Accounting";
    /// Sage Business Cloud Accounting: 100 calls a minute per business, the lower of the published
    /// figures (NOTES.md).
    const LIMITS: Limits = Limits::per_minute(100);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Bills, Payments, BillPayments, CreditNotes,
            Items, CompanyInfos, JournalEntries
        ]
    }

    fn token_endpoint(
        &self,
        _credentials: &SageBusinessCloudAuthorization,
    ) -> Option<TokenEndpoint> {
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// Sage's central sign-in for API v3.1 (`readonly`); one user may
    /// reach several businesses (`GET /businesses`): the customer chooses.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(LinkSpec::code_flow(
            self.authorize_url.clone(),
            self.token_url.clone(),
            ClientAuth::RequestBody,
            &["readonly"],
        ))
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let url = format!("{}/businesses", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "a list of businesses",
            url,
            Auth::Bearer(&grant.access_token),
        )
        .query("items_per_page", 200);
        let body: ListPage<Vec<SageBusiness>> = self.http.json(&call).await?;
        Ok(body
            .items
            .into_iter()
            .map(|business| Organization {
                name: business.displayed_as.unwrap_or_else(|| business.id.clone()),
                id: business.id,
                handle: None,
            })
            .collect())
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("businessId".to_owned(), organization.id.clone().into());
        Value::Object(body)
    }

    /// `GET /businesses` lists the businesses the token's user reaches: it
    /// must list ours.
    async fn verify(
        &self,
        credentials: &SageBusinessCloudAuthorization,
    ) -> Result<(), ConnectorError> {
        let url = format!("{}/businesses", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "a list of businesses",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .query("items_per_page", 200);
        let body: ListPage<Vec<SageBusiness>> = self.http.json(&call).await?;
        let business_id = &credentials.business_id;
        let reached = body.items.iter().map(|business| business.id.as_str());
        require_reach(business_id, reached, |count| {
            format!(
                "Sage Business Cloud Accounting accepted the access token, but business {business_id} is not among the {count} \
                 it gives access to (GET /businesses)"
            )
        })
    }
}

/// `updated_or_created_since` (and `deleted_since`) as an RFC 3339 UTC
/// timestamp, one of the two forms Sage documents (`2019-03-21T09:23:00Z`;
/// the other is a date).
pub fn updated_or_created_since(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// What Sage's changes say of deletions, for lists with `deleted_since`: a
/// voided invoice is updated and comes back; a deleted resource is listed
/// by `deleted_since`, read as a changed fetch's last step, and its id
/// flagged at once (`NOTES.md`).
pub(super) const CHANGES: Option<Changes> = Some(Changes::with(Deletions::InChanges));

/// For lists Sage gives no `deleted_since` (ledger accounts, tax rates): a
/// deleted one just stops being listed, so a daily full fetch reconciles.
pub(super) const CHANGES_WITHOUT_DELETIONS: Option<Changes> =
    Some(Changes::with(Deletions::OnlyByFullFetch));

impl Syncs<Invoices> for SageBusinessCloudConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for SageBusinessCloudConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.contacts(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.contacts(credentials, Some(since.time), cursor).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn since() -> Option<DateTime<Utc>> {
        Utc.with_ymd_and_hms(2026, 11, 27, 8, 55, 0).single()
    }

    #[test]
    fn a_changed_fetch_ends_with_the_deleted_step_and_a_full_one_does_not() {
        let last = || Fetched::<Invoice>::all(Vec::new(), None);
        assert_eq!(then_deleted(last(), since()).next.as_deref(), Some(DELETED));
        assert_eq!(then_deleted(last(), None).next, None);
        let more = Fetched::<Invoice>::all(Vec::new(), Some("2".to_owned()));
        assert_eq!(then_deleted(more, since()).next.as_deref(), Some("2"));
    }

    #[test]
    fn deleted_since_is_an_rfc_3339_utc_timestamp() {
        let since = since().expect("a time");
        assert_eq!(updated_or_created_since(since), "2026-11-27T08:55:00Z");
    }

    #[test]
    fn a_page_of_deletions_ends_where_next_is_null_or_sage_served_an_earlier_page() {
        let page = |next: Option<&str>, served: Option<u64>| ListPage::<Vec<Link>> {
            items: Vec::new(),
            next: next.map(str::to_owned),
            total: None,
            page: served,
        };
        assert!(page(Some("/sales_invoices?page=3"), Some(2)).more_after(PageNumber(2)));
        assert!(!page(None, Some(2)).more_after(PageNumber(2)));
        assert!(!page(Some(" "), None).more_after(PageNumber(2)));
        assert!(!page(Some("/sales_invoices?page=3"), Some(2)).more_after(PageNumber(3)));
    }
}
