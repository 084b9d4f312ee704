//! Oracle NetSuite's connector: SuiteQL requests (`POST
//! /services/rest/query/v1/suiteql` with `Prefer: transient`) on the account's own
//! host, paged by `limit`/`offset` while `hasMore`, in windows ordered by id (a query
//! pages at most 100 000 rows, so each window restarts after the last id seen). An
//! invoice page is two queries: the invoices, then their lines. Tokens refresh at the
//! account's token endpoint (HTTP Basic) and, for a confidential client, are not
//! rotated. After a first sync, only what changed is asked for: the same queries
//! with `lastmodifieddate > TO_TIMESTAMP(…)`, a day earlier than the watermark (the
//! account's time zone applies to the literal). Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};

use serde::de::DeserializeOwned;
use serde_json::json;

use super::NetSuiteAuthorization;
use super::mapping::SuiteQlPage;
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
    Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::records::{Keyed, Unreadable};
use crate::platforms::link::{Grant, LinkSpec, Organization};

/// Rows asked for per page by default (SuiteQL's maximum `limit` is 1000).
pub const PAGE_SIZE: u64 = 1000;
/// The most rows one SuiteQL query pages through.
const WINDOW: u64 = 100_000;

/// Where a user whose account is not known yet authorizes: NetSuite sends
/// them on to their account and names it on the callback (`company`).
const AUTHORIZE_URL: &str = "https://system.netsuite.com/app/login/oauth2/authorize.nl";

/// The NetSuite connector.
#[derive(Debug)]
pub struct NetSuiteConnector {
    api_base: Option<String>,
    authorize_url: String,
    token_url: Option<String>,
    pub(super) page_size: u64,
    http: PlatformHttp,
}

impl Configured for NetSuiteConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's account: https://<accountId>.suitetalk.api.netsuite.com (the id in lower case, _ as -)",
    );
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's account: https://<accountId>.suitetalk.api.netsuite.com/services/rest/auth/oauth2/v1/token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            token_url: config.token_url.clone(),
            page_size: config.page_size_or(PAGE_SIZE, 1000),
            http,
        }
    }
}

/// The account's host: `https://<account>.suitetalk.api.netsuite.com`, the
/// account id in lower case with `_` as `-` (`1234567_SB1` → `1234567-sb1`).
pub fn account_host(account_id: &str) -> String {
    format!(
        "https://{}.suitetalk.api.netsuite.com",
        account_id.to_ascii_lowercase().replace('_', "-")
    )
}

/// Where a SuiteQL listing stands: rows with an id above `after`, from
/// `offset` within that window.
/// The NetSuite account a link flow's callback names (`company`), when it
/// is an account id.
fn account_of(callback: &BTreeMap<String, String>) -> Result<&str, ConnectorError> {
    callback
        .get("company")
        .map(String::as_str)
        .filter(|account| {
            !account.is_empty()
                && account.len() <= 64
                && account
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .ok_or_else(|| {
            ConnectorError::Failed(
                "NetSuite named no account (`company`) on the callback".to_owned(),
            )
        })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    pub(super) after: u64,
    pub(super) offset: u64,
}

impl Window {
    /// The window a cursor (`after:offset`) names; the start without one.
    pub(super) fn from_cursor(cursor: Option<String>) -> Result<Self, ConnectorError> {
        let Some(cursor) = cursor else {
            return Ok(Self {
                after: 0,
                offset: 0,
            });
        };
        let parsed = cursor.split_once(':').and_then(|(after, offset)| {
            Some(Self {
                after: after.parse().ok()?,
                offset: offset.parse().ok()?,
            })
        });
        parsed.ok_or_else(|| ConnectorError::Failed(format!("invalid NetSuite cursor {cursor:?}")))
    }

    /// The next page's cursor when NetSuite has more: the next offset, or a new
    /// window after `last_id` when the next page would pass the query's limit.
    pub(super) fn next(
        self,
        has_more: bool,
        page_size: u64,
        last_id: Option<&str>,
    ) -> Option<String> {
        if !has_more {
            return None;
        }
        let offset = self.offset + page_size;
        if offset + page_size <= WINDOW {
            return Some(format!("{}:{offset}", self.after));
        }
        let last = last_id.and_then(|id| id.parse::<u64>().ok())?;
        Some(format!("{last}:0"))
    }
}

impl NetSuiteConnector {
    /// The REST root of the connection's account (or the configured base).
    fn rest_url(&self, credentials: &NetSuiteAuthorization) -> String {
        let base = self
            .api_base
            .clone()
            .unwrap_or_else(|| account_host(&credentials.account_id));
        format!("{base}/services/rest")
    }

    /// One page of a SuiteQL query. A table the role may not read (or whose
    /// feature is off) is a 400 naming the record as not found: that is a
    /// permission this data type lacks, not a failure of the connection.
    pub(super) async fn suiteql<T: DeserializeOwned>(
        &self,
        credentials: &NetSuiteAuthorization,
        what: &'static str,
        query: &str,
        limit: u64,
        offset: u64,
    ) -> Result<SuiteQlPage<T>, ConnectorError> {
        let url = format!("{}/query/v1/suiteql", self.rest_url(credentials));
        let auth = Auth::bearer(&credentials.tokens);
        let call = Call::post(Self::PLATFORM, what, url, auth, json!({ "q": query }))
            .header("Prefer", "transient")
            .query("limit", limit)
            .query("offset", offset);
        self.http.json(&call).await.map_err(missing_permission)
    }

    /// Every row of `query` (which names the records `ids`, numeric ids
    /// only), every page of it; a row that cannot be read makes the record
    /// it belongs to unreadable (by its id), its field under `part`.
    pub(super) async fn every_row<T: DeserializeOwned + Keyed>(
        &self,
        credentials: &NetSuiteAuthorization,
        what: &'static str,
        query: &str,
        part: &str,
        ids: &[u64],
    ) -> Result<(Vec<T>, BTreeMap<String, Unreadable>), ConnectorError> {
        let mut unreadable = BTreeMap::new();
        let mut rows = Vec::new();
        if ids.is_empty() {
            return Ok((rows, unreadable));
        }
        let mut offset = 0;
        loop {
            let page: SuiteQlPage<T> = self
                .suiteql(credentials, what, query, PAGE_SIZE, offset)
                .await?;
            for entry in page.items.entries() {
                match entry {
                    Ok((row, _)) => rows.push(row),
                    Err(issue) => {
                        if let Some(record) = issue.record_id {
                            let field = issue
                                .field
                                .map_or(part.to_owned(), |field| format!("{part}.{field}"));
                            unreadable.insert(record, Unreadable::field(field, issue.reason));
                        }
                    }
                }
            }
            if !page.has_more {
                return Ok((rows, unreadable));
            }
            offset += PAGE_SIZE;
        }
    }
}

/// Numeric ids as a SuiteQL list (`1, 2, 3`).
pub(super) fn id_list(ids: &[u64]) -> String {
    ids.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The role's permission (and NetSuite's menu path) that lets SuiteQL read
/// each table tributary queries (`NOTES.md`, "Accounting model").
const PERMISSIONS: &[(&str, &str)] = &[
    ("transaction", "Transactions › Find Transaction"),
    ("transactionline", "Transactions › Find Transaction"),
    (
        "transactionaccountingline",
        "Transactions › Find Transaction",
    ),
    ("nexttransactionlinelink", "Transactions › Find Transaction"),
    ("customer", "Lists › Customers"),
    ("vendor", "Lists › Vendors"),
    ("account", "Lists › Accounts"),
    ("item", "Lists › Items"),
    ("salestaxitem", "Lists › Tax Records"),
    ("subsidiary", "Lists › Subsidiaries"),
    ("accountingperiod", "Setup › Manage Accounting Periods"),
    ("currency", "Lists › Currency"),
];

/// A 400 whose detail says `Record '<table>' was not found` as the
/// permission the role lacks; any other error unchanged.
fn missing_permission(error: ConnectorError) -> ConnectorError {
    let ConnectorError::Failed(message) = &error else {
        return error;
    };
    let Some(table) = message
        .split_once("Record '")
        .and_then(|(_, rest)| rest.split_once("' was not found"))
        .map(|(table, _)| table)
    else {
        return error;
    };
    let permission = PERMISSIONS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(table))
        .map_or("the permission for it", |(_, permission)| permission);
    ConnectorError::Permissions(format!(
        "NetSuite's role cannot read `{table}`: it needs {permission}, or the feature that table \
         belongs to is not enabled ({message})"
    ))
}

/// The condition on `column` (a `lastmodifieddate`) of what changed after
/// `since`, when given: `TO_TIMESTAMP` with an explicit format, as SuiteQL
/// reads a bare date string by the account's date-format preference; empty
/// for a full fetch.
pub(super) fn modified_since(column: &str, since: Option<DateTime<Utc>>) -> String {
    match since {
        Some(since) => format!(
            " AND {column} > TO_TIMESTAMP('{}', 'YYYY-MM-DD HH24:MI:SS')",
            since.format("%Y-%m-%d %H:%M:%S")
        ),
        None => String::new(),
    }
}

/// How NetSuite tells what changed: SuiteQL compares the literal in the
/// time zone of the account (or its user), which tributary does not know, so
/// changes are asked for from a day before the watermark (every zone is
/// less than a day from UTC); voided invoices stay, but deleted records are
/// not in SuiteQL's `transaction` or `customer`, so a daily full fetch
/// reconciles (`NOTES.md`).
pub(super) const CHANGES: Option<Changes> = Some(Changes {
    overlap: Duration::from_secs(24 * 60 * 60),
    deletions: Deletions::OnlyByFullFetch,
});

impl Connector for NetSuiteConnector {
    type Credentials = NetSuiteAuthorization;
    const PLATFORM: &'static str = "NetSuite";
    /// NetSuite governs concurrency per account: 5 requests at once on an account without
    /// SuiteCloud Plus (NOTES.md).
    const LIMITS: Limits = Limits::NONE.concurrent(5);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Bills, Payments, BillPayments,
            CreditNotes, Items, CompanyInfos, JournalEntries
        ]
    }

    /// PKCE with S256 (NetSuite refuses `plain`); `rest_webservices` is
    /// the scope of SuiteQL. The token endpoint is the account's own
    /// ([`Connector::code_token_url`]).
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                self.token_url.clone().unwrap_or_default(),
                ClientAuth::Basic,
                &["rest_webservices"],
            )
            .with_pkce(),
        )
    }

    /// The account the callback names (`company`), on whose own host the
    /// code is exchanged: only an account id (letters, digits, `_`) makes
    /// a host.
    fn code_token_url(
        &self,
        spec: &LinkSpec,
        callback: &BTreeMap<String, String>,
    ) -> Result<String, ConnectorError> {
        if self.token_url.is_some() {
            return Ok(spec.token_url.clone());
        }
        let account = account_of(callback)?;
        Ok(format!(
            "{}/services/rest/auth/oauth2/v1/token",
            account_host(account)
        ))
    }

    /// One account per consent: the callback's `company` (with a sandbox's
    /// `_SB1` suffix, as the body keeps it).
    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let account = account_of(&grant.callback)?;
        Ok(vec![Organization {
            id: account.to_owned(),
            name: format!("NetSuite account {account}"),
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        body.insert("accountId".to_owned(), organization.id.clone().into());
        serde_json::Value::Object(body)
    }

    fn token_endpoint(&self, credentials: &NetSuiteAuthorization) -> Option<TokenEndpoint> {
        let url = self.token_url.clone().unwrap_or_else(|| {
            format!(
                "{}/services/rest/auth/oauth2/v1/token",
                account_host(&credentials.account_id)
            )
        });
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &url,
            ClientAuth::Basic,
            &self.http,
        ))
    }

    /// One row of SuiteQL on the account's own host: the host is the account,
    /// so an answer proves the token works for it (and may read transactions).
    async fn verify(&self, credentials: &NetSuiteAuthorization) -> Result<(), ConnectorError> {
        let query = "SELECT t.id FROM transaction t WHERE t.type = 'CustInvc'";
        let _: SuiteQlPage<serde_json::Value> = self
            .suiteql(credentials, "a test query", query, 1, 0)
            .await?;
        Ok(())
    }
}

impl Syncs<Invoices> for NetSuiteConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &NetSuiteAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for NetSuiteConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &NetSuiteAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, Some(since.time), cursor).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_host_is_lower_case_with_dashes() {
        assert_eq!(
            account_host("1234567_SB1"),
            "https://1234567-sb1.suitetalk.api.netsuite.com"
        );
    }

    #[test]
    fn windows_page_by_offset_and_restart_after_the_last_id_before_the_cap() {
        let start = Window::from_cursor(None).expect("the start");
        assert_eq!(start.next(true, 1000, Some("7")).as_deref(), Some("0:1000"));
        assert_eq!(start.next(false, 1000, Some("7")), None);
        let late = Window::from_cursor(Some("0:99000".to_owned())).expect("a cursor");
        assert_eq!(
            late.next(true, 1000, Some("123456")).as_deref(),
            Some("123456:0")
        );
        assert!(Window::from_cursor(Some("x".to_owned())).is_err());
    }
}
