//! Connectors: how tributary talks to a platform. A platform's connector
//! implements [`Connector`] (its credentials are the typed authorization
//! body the connection was validated with) and [`Syncs<D>`] for each data
//! type it fetches, page by page. The engine drives every connector alike
//! through [`AnyConnector`], which hands them their typed credentials;
//! [`Connectors`] ([`kinds`]) holds one per platform.

mod kinds;
mod macros;

pub use kinds::{Configured, ConnectorKind, Connectors, Endpoint};
pub(crate) use macros::{changed_syncs, syncs, whole_syncs};

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::kit::limits::Limits;
use super::kit::oauth::TokenEndpoint;
use super::link::{Grant, LinkSpec, Organization};
use crate::data::{DataType, Definition, Records};

/// A page and where the next one starts.
#[derive(Debug)]
pub struct Page {
    /// The records.
    pub records: Records,
    /// The cursor of the next page; `None` on the last page.
    pub next: Option<String>,
    /// How many records the whole data type holds, when the platform says.
    pub total: Option<u64>,
    /// Whether the sync fetches the platform's whole list ([`Syncs::WHOLE_LIST`]).
    pub whole_list: bool,
    /// The records of the page the connector could not read.
    pub issues: Vec<RecordIssue>,
    /// On the last page, where the platform resumes its changes next time,
    /// when it keeps a cursor of its own for that (Plaid's `next_cursor`).
    pub resume: Option<String>,
    /// The ids of records the platform says it deleted since the fetch's
    /// start (Plaid's `removed`): flagged `isDeleted` at once.
    pub removed: Vec<String>,
}

/// Where a fetch of what changed starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// The watermark less the connector's overlap: the platform's time when
    /// the last published fetch began, less [`Changes::overlap`].
    pub time: DateTime<Utc>,
    /// The platform's own cursor the last published fetch ended with, where
    /// the platform keeps one ([`Fetched::resume`]).
    pub cursor: Option<String>,
}

/// A page of one data type's records, as a connector returns it.
#[derive(Debug)]
pub struct Fetched<R> {
    /// The records, typed.
    pub records: Vec<R>,
    /// The records the platform sent that the connector could not read
    /// (`kit::records`): each costs itself, not the page.
    pub issues: Vec<RecordIssue>,
    /// The cursor of the next page; `None` on the last page.
    pub next: Option<String>,
    /// How many records the whole data type holds, when the platform says.
    pub total: Option<u64>,
    /// On the last page: the platform's own cursor to resume its changes
    /// from next time, where it keeps one (Plaid's `next_cursor`); the engine
    /// keeps it with the watermark and hands it back in [`Since::cursor`].
    pub resume: Option<String>,
    /// The ids of records the platform says it deleted since [`Since`]
    /// (Plaid's `removed`): each is flagged `isDeleted` at once.
    pub removed: Vec<String>,
}

impl<R> Fetched<R> {
    /// A page of `records`, all of them read, continuing at `next`.
    pub fn all(records: Vec<R>, next: Option<String>) -> Self {
        Self {
            records,
            issues: Vec::new(),
            next,
            total: None,
            resume: None,
            removed: Vec::new(),
        }
    }

    /// A page as `read` (records and issues), continuing at `next`.
    pub fn read(read: super::kit::records::Read<R>, next: Option<String>) -> Self {
        Self {
            records: read.records,
            issues: read.issues,
            next,
            total: None,
            resume: None,
            removed: Vec::new(),
        }
    }

    /// The same page, saying the platform's list holds `total` records.
    pub fn of_total(self, total: Option<u64>) -> Self {
        Self { total, ..self }
    }

    /// The same page, saying where the platform resumes its changes next time.
    pub fn resuming(self, resume: Option<String>) -> Self {
        Self { resume, ..self }
    }

    /// The same page, naming the records the platform deleted.
    pub fn removing(self, removed: Vec<String>) -> Self {
        Self { removed, ..self }
    }
}

/// A record the platform sent that the connector could not read: named by
/// its id where the id could be read, with the field and the reason, never
/// with what the record holds. The rest of its page is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordIssue {
    /// The record's id at the platform, when it could be read.
    pub record_id: Option<String>,
    /// The field at fault, as a path in the platform's record
    /// (`LineItems[0].UnitAmount`), when one is.
    pub field: Option<String>,
    /// Why it cannot be read.
    pub reason: String,
}

/// Why a fetch failed, in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectorError {
    /// The platform rejected the credentials: the connection needs new tokens.
    #[error("{0}")]
    Auth(String),
    /// The platform rejected the access token (401): a refresh may cure it.
    #[error("{0}")]
    Expired(String),
    /// The platform failed or answered nonsense.
    #[error("{0}")]
    Failed(String),
    /// The platform could not be reached, or kept failing, through every retry.
    #[error("{0}")]
    Unavailable(String),
    /// The platform's quota for this organization is spent (a daily limit),
    /// and the message says when it can be called again.
    #[error("{0}")]
    RateLimited(String),
    /// The platform refused this data to the consent the tokens carry (a
    /// scope or role it lacks): the data type cannot sync, but the
    /// connection still works for the others and stays linked.
    #[error("{0}")]
    Permissions(String),
}

/// A platform's connector.
pub trait Connector: Send + Sync + Sized + 'static {
    /// The connection's authorization body as validated and stored (the
    /// platform's `...Authorization` type).
    type Credentials: DeserializeOwned + Send + Sync;

    /// The platform's name, for messages.
    const PLATFORM: &'static str;

    /// The platform's documented call limits for one OAuth application and
    /// organization (its `NOTES.md` cites them): every sync's calls are
    /// paced under them, across processes.
    const LIMITS: Limits;

    /// The data types it fetches: `syncs![Self: Invoices, Customers]`.
    fn syncs() -> Vec<Fetcher<Self>>;

    /// Where and how this connection's tokens are refreshed; `None` when
    /// they are not (tokens that never expire).
    fn token_endpoint(&self, _credentials: &Self::Credentials) -> Option<TokenEndpoint> {
        None
    }

    /// One cheap authenticated call proving the credentials work for their
    /// organisation.
    fn verify(
        &self,
        credentials: &Self::Credentials,
    ) -> impl Future<Output = Result<(), ConnectorError>> + Send;

    /// How an end customer links this platform through tributary's hosted
    /// flow; `None` (the default) when it cannot be linked yet, with
    /// [`Connector::LINK_UNAVAILABLE`] saying why.
    fn link_spec(&self) -> Option<LinkSpec> {
        None
    }

    /// Why the platform cannot be linked through tributary when
    /// [`Connector::link_spec`] is `None`.
    const LINK_UNAVAILABLE: &'static str = "tributary does not run this platform's authorization step yet: \
         migrate tokens your own application obtained with PUT .../authorization";

    /// Where the callback's code is exchanged: the spec's `token_url`
    /// unless the callback names the platform's site for this customer
    /// (Zoho's `accounts-server`, NetSuite's `company`), which must then be
    /// one of the platform's own before the client secret is sent there.
    fn code_token_url(
        &self,
        spec: &LinkSpec,
        _callback: &BTreeMap<String, String>,
    ) -> Result<String, ConnectorError> {
        Ok(spec.token_url.clone())
    }

    /// After the code exchange: the organizations the grant reaches, as the
    /// platform documents finding them (a callback parameter, a field of the
    /// token answer, or a call).
    fn organizations(
        &self,
        _grant: &Grant,
    ) -> impl Future<Output = Result<Vec<Organization>, ConnectorError>> + Send {
        async { Ok(Vec::new()) }
    }

    /// The authorization body (as `PUT .../authorization` takes it) for one
    /// organization of the grant.
    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let _ = organization;
        Value::Object(grant.token_body())
    }

    /// Lets go of every organization the consent reached but `keep` (all
    /// of them when `None`: the flow failed), where one consent covers
    /// several (Xero), so that one consent's tokens serve one connection.
    fn release(
        &self,
        _grant: &Grant,
        _keep: Option<&Organization>,
    ) -> impl Future<Output = Result<(), ConnectorError>> + Send {
        async { Ok(()) }
    }
}

/// How a connector asks its platform for what changed in a data type since
/// a time ([`Syncs::changed_page`]), where the platform documents a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Changes {
    /// How much earlier than the watermark (the platform's time when the last
    /// published fetch began) the next fetch asks from: records written as
    /// that fetch began, a filter's inclusive or exclusive bound and clock
    /// differences between the platform's servers are asked for again, and
    /// upserted by id.
    pub overlap: Duration,
    /// Whether what changed includes what the platform deleted.
    pub deletions: Deletions,
}

/// Whether a platform's changes carry its deletions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletions {
    /// The changes tell of deletions: a deleted record comes back changed
    /// (a `DELETED` or `VOIDED` status, a tombstone) and its mapping flags
    /// it, or the platform lists the deleted ids ([`Fetched::removing`]:
    /// Plaid's `removed`, Sage's `deleted_since`), flagged at once. No
    /// reconciliation is needed, though `?full=true` still runs one.
    InChanges,
    /// A deleted record just stops being listed: only a full fetch finds it
    /// (the engine runs one a set time after the last).
    OnlyByFullFetch,
}

impl Changes {
    /// The overlap most platforms get: five minutes.
    pub const OVERLAP: Duration = Duration::from_secs(5 * 60);

    /// Changes with the usual overlap, whose `deletions` are as said.
    pub const fn with(deletions: Deletions) -> Self {
        Self {
            overlap: Self::OVERLAP,
            deletions,
        }
    }
}

/// A data type a connector fetches.
pub trait Syncs<D: Definition>: Connector {
    /// Whether a sync fetches the platform's whole list of `D`: only then is
    /// a record the previous sync had and this one lacks a record the
    /// platform deleted (flagged `isDeleted`). A connector that asks for a
    /// window (the last 89 days) says `false`: what leaves the window
    /// leaves the list, unflagged.
    const WHOLE_LIST: bool = true;

    /// How the platform says what changed in `D` since a time; `None` (the
    /// default) when it cannot, and every sync fetches the whole list.
    const CHANGES: Option<Changes> = None;

    /// The page of `D`'s records starting at `cursor` (`None` for the first).
    fn page(
        &self,
        credentials: &Self::Credentials,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<Fetched<D::Record>, ConnectorError>> + Send;

    /// The page starting at `cursor` of `D`'s records that changed at the
    /// platform since `since` (its time already less [`Changes::overlap`]),
    /// by the platform's filter; only called when [`Syncs::CHANGES`] is `Some`.
    fn changed_page(
        &self,
        credentials: &Self::Credentials,
        since: Since,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<Fetched<D::Record>, ConnectorError>> + Send {
        let _ = since;
        self.page(credentials, cursor)
    }
}

/// A page function of connector `C`: its credentials, where changes are
/// asked since (`None`: the whole list) and a cursor in, a page of records out.
type FetchPage<C> = for<'a> fn(
    &'a C,
    &'a <C as Connector>::Credentials,
    Option<Since>,
    Option<String>,
) -> BoxFuture<'a, Result<Page, ConnectorError>>;

/// The page function of one data type of connector `C`.
pub struct Fetcher<C: Connector> {
    /// The data type.
    pub data_type: DataType,
    /// How the platform says what changed in it, where it can.
    pub changes: Option<Changes>,
    fetch: FetchPage<C>,
}

impl<C: Connector> Fetcher<C> {
    /// `C`'s pages of `D`.
    pub fn of<D: Definition>() -> Self
    where
        C: Syncs<D>,
    {
        Self {
            data_type: DataType::of::<D>(),
            changes: <C as Syncs<D>>::CHANGES,
            fetch: fetch_page::<C, D>,
        }
    }
}

fn fetch_page<'a, C: Syncs<D>, D: Definition>(
    connector: &'a C,
    credentials: &'a C::Credentials,
    since: Option<Since>,
    cursor: Option<String>,
) -> BoxFuture<'a, Result<Page, ConnectorError>> {
    Box::pin(async move {
        let (fetched, whole_list) = match (since, <C as Syncs<D>>::CHANGES) {
            (Some(since), Some(_)) => (
                <C as Syncs<D>>::changed_page(connector, credentials, since, cursor).await?,
                false,
            ),
            _ => (
                <C as Syncs<D>>::page(connector, credentials, cursor).await?,
                <C as Syncs<D>>::WHOLE_LIST,
            ),
        };
        Ok(Page {
            records: Records::of::<D>(fetched.records),
            next: fetched.next,
            total: fetched.total,
            whole_list,
            issues: fetched.issues,
            resume: fetched.resume,
            removed: fetched.removed,
        })
    })
}

/// A verification's last step: the organisations the token reaches
/// (`reached`) must include the connection's (`wanted`, any letter case);
/// else the platform accepted the token for someone else's, which
/// `complaint` says given how many it reaches.
pub fn require_reach<'a>(
    wanted: &str,
    reached: impl IntoIterator<Item = &'a str>,
    complaint: impl FnOnce(usize) -> String,
) -> Result<(), ConnectorError> {
    let mut count = 0;
    for id in reached {
        if id.eq_ignore_ascii_case(wanted) {
            return Ok(());
        }
        count += 1;
    }
    Err(ConnectorError::Auth(complaint(count)))
}

/// A connector as the engine drives it: credentials as stored (the sealed
/// JSON body), any data type. Every [`Connector`] is one; tests implement it
/// directly to stand in for a platform.
pub trait AnyConnector: Send + Sync {
    /// The page of `data_type` starting at `cursor` (`None` for the first):
    /// of the whole list, or of what changed since `since` where
    /// [`AnyConnector::changes`] says the platform can tell.
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>>;

    /// How the platform says what changed in `data_type`; `None` when it
    /// cannot (every sync fetches the whole list).
    fn changes(&self, _data_type: DataType) -> Option<Changes> {
        None
    }

    /// The platform's call limits ([`Connector::LIMITS`]); none for a
    /// stand-in that calls no platform.
    fn limits(&self) -> Limits {
        Limits::NONE
    }

    /// Where and how this connection's tokens are refreshed; `None` when
    /// they are not.
    fn token_endpoint(&self, _credentials: &Value) -> Option<TokenEndpoint> {
        None
    }

    /// One cheap authenticated call proving the credentials work; `None`
    /// when this connector cannot check them.
    fn verify<'a>(
        &'a self,
        _credentials: &'a Value,
    ) -> Option<BoxFuture<'a, Result<(), ConnectorError>>> {
        None
    }

    /// How the platform is linked through the hosted flow, or why it cannot be.
    fn link_spec(&self) -> Result<LinkSpec, &'static str> {
        Err("tributary has no connector for this platform")
    }

    /// Where the callback's code is exchanged.
    fn code_token_url(
        &self,
        spec: &LinkSpec,
        _callback: &BTreeMap<String, String>,
    ) -> Result<String, ConnectorError> {
        Ok(spec.token_url.clone())
    }

    /// The organizations a grant reaches.
    fn organizations<'a>(
        &'a self,
        _grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<Organization>, ConnectorError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// The authorization body for one organization of the grant.
    fn link_body(&self, grant: &Grant, _organization: &Organization) -> Value {
        Value::Object(grant.token_body())
    }

    /// Lets go of every organization the consent reached but `keep`.
    fn release<'a>(
        &'a self,
        _grant: &'a Grant,
        _keep: Option<&'a Organization>,
    ) -> BoxFuture<'a, Result<(), ConnectorError>> {
        Box::pin(async { Ok(()) })
    }
}

/// The typed credentials in a stored body.
fn typed<C: Connector>(credentials: &Value) -> Result<C::Credentials, ConnectorError> {
    <C::Credentials as Deserialize>::deserialize(credentials).map_err(|_| {
        ConnectorError::Failed(format!(
            "the stored {} authorization cannot be read",
            C::PLATFORM
        ))
    })
}

impl<C: Connector> AnyConnector for C {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(async move {
            let credentials = typed::<C>(credentials)?;
            let Some(fetcher) = C::syncs()
                .into_iter()
                .find(|fetcher| fetcher.data_type == data_type)
            else {
                return Err(ConnectorError::Failed(format!(
                    "{} has no {data_type} to sync",
                    C::PLATFORM
                )));
            };
            (fetcher.fetch)(self, &credentials, since, cursor).await
        })
    }

    fn changes(&self, data_type: DataType) -> Option<Changes> {
        C::syncs()
            .into_iter()
            .find(|fetcher| fetcher.data_type == data_type)
            .and_then(|fetcher| fetcher.changes)
    }

    fn limits(&self) -> Limits {
        C::LIMITS
    }

    fn token_endpoint(&self, credentials: &Value) -> Option<TokenEndpoint> {
        let credentials = typed::<C>(credentials).ok()?;
        Connector::token_endpoint(self, &credentials)
    }

    fn verify<'a>(
        &'a self,
        credentials: &'a Value,
    ) -> Option<BoxFuture<'a, Result<(), ConnectorError>>> {
        Some(Box::pin(async move {
            let credentials = typed::<C>(credentials)?;
            Connector::verify(self, &credentials).await
        }))
    }

    fn link_spec(&self) -> Result<LinkSpec, &'static str> {
        Connector::link_spec(self).ok_or(C::LINK_UNAVAILABLE)
    }

    fn code_token_url(
        &self,
        spec: &LinkSpec,
        callback: &BTreeMap<String, String>,
    ) -> Result<String, ConnectorError> {
        Connector::code_token_url(self, spec, callback)
    }

    fn organizations<'a>(
        &'a self,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<Organization>, ConnectorError>> {
        Box::pin(Connector::organizations(self, grant))
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        Connector::link_body(self, grant, organization)
    }

    fn release<'a>(
        &'a self,
        grant: &'a Grant,
        keep: Option<&'a Organization>,
    ) -> BoxFuture<'a, Result<(), ConnectorError>> {
        Box::pin(Connector::release(self, grant, keep))
    }
}
