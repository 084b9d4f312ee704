//! Plaid's connector: an Item's accounts (`POST /accounts/get`) and its
//! transactions (`POST /transactions/sync`, followed by `next_cursor` while
//! `has_more`, the whole update gathered before it is returned). Every call
//! is a JSON `POST` carrying the Item's access token in its body and the
//! partner's Plaid API keys (`clientId` and `secret` of the authorization)
//! in the `PLAID-CLIENT-ID` and `PLAID-SECRET` headers; the host is the
//! connection's environment's. Access tokens do not expire: nothing is
//! refreshed, and an Item that needs its user again (`ITEM_LOGIN_REQUIRED`
//! and its kin) deauthorizes the connection. Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::PlaidAuthorization;
use super::mapping::{AccountsPage, PlaidTransaction, SyncPage};
use crate::data::bank_accounts::{BankAccount, BankAccounts};
use crate::data::bank_transactions::{BankTransaction, BankTransactions};
use crate::platforms::authorization::Environment;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::RecordIssue;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::records::Read;

/// Transaction updates asked for per `/transactions/sync` call: Plaid's maximum.
pub const PAGE_SIZE: u64 = 500;

/// The production host.
pub const API_BASE: &str = "https://production.plaid.com";
/// The sandbox host.
pub const SANDBOX_API_BASE: &str = "https://sandbox.plaid.com";
/// The API version every call asks for: the shape the mapping reads. Plaid's
/// OpenAPI document (plaid/plaid-openapi, `2020-09-14.yml`) makes the
/// `Plaid-Version` header part of every operation's security requirement
/// (`plaidVersion`, beside `clientId` and `secret`); without it Plaid
/// answers in the version the dashboard defaults to.
const PLAID_VERSION: &str = "2020-09-14";

/// How often one sync restarts an update Plaid changed while it was paged
/// (`TRANSACTIONS_SYNC_MUTATION_DURING_PAGINATION`) before giving up.
const RESTARTS: u32 = 3;

/// `/transactions/sync` calls one sync makes at most (500 updates each).
const MAX_CALLS: u32 = 2_000;

/// Plaid `error_code`s after which only the end customer (through Plaid
/// Link's update mode) or new keys can make the connection work again.
const NEEDS_NEW_AUTHORIZATION: &[&str] = &[
    "ITEM_LOGIN_REQUIRED",
    "ACCESS_NOT_GRANTED",
    "USER_PERMISSION_REVOKED",
    "ITEM_LOCKED",
    "ITEM_NOT_FOUND",
    "INVALID_ACCESS_TOKEN",
    "INVALID_API_KEYS",
];

/// The Plaid connector.
#[derive(Debug)]
pub struct PlaidConnector {
    api_base: Option<String>,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for PlaidConnector {
    /// One host per environment, chosen per connection.
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://production.plaid.com or https://sandbox.plaid.com",
    );
    /// Plaid access tokens do not expire: no token endpoint.
    const TOKEN_URL: Endpoint = Endpoint::Unused;

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

impl PlaidConnector {
    /// `POST <host><path>` with `body` (the access token added to it), the
    /// keys in Plaid's headers; Plaid's answer as `T`.
    async fn post<T: DeserializeOwned>(
        &self,
        credentials: &PlaidAuthorization,
        path: &str,
        what: &'static str,
        mut body: Value,
    ) -> Result<T, ConnectorError> {
        let (Some(client_id), Some(secret)) = (&credentials.client_id, &credentials.secret) else {
            return Err(ConnectorError::Auth(
                "Plaid needs your Plaid API keys to reach this Item: authorize the connection again \
                 with `clientId` and `secret` beside its access token"
                    .to_owned(),
            ));
        };
        let base = match (&self.api_base, credentials.environment) {
            (Some(base), _) => base.as_str(),
            (None, Environment::Sandbox) => SANDBOX_API_BASE,
            (None, Environment::Production) => API_BASE,
        };
        body["access_token"] = Value::String(credentials.token.access_token.expose().to_owned());
        let call = Call::post(
            Self::PLATFORM,
            what,
            format!("{base}{path}"),
            Auth::Header("plaid-secret", secret.expose()),
            body,
        )
        .header("plaid-client-id", client_id)
        .header("Plaid-Version", PLAID_VERSION);
        self.http.json(&call).await.map_err(needs_authorization)
    }

    /// The Item's accounts and the Item itself.
    async fn accounts(
        &self,
        credentials: &PlaidAuthorization,
    ) -> Result<AccountsPage, ConnectorError> {
        self.post(
            credentials,
            "/accounts/get",
            "the Item's accounts",
            json!({}),
        )
        .await
    }

    /// The Item's transactions as one update from `start` (the whole
    /// history from none; what changed since the sync that ended there from
    /// a cursor), following `next_cursor` while `has_more`. Modified
    /// transactions replace what an earlier page gave and removed ones go
    /// (named in [`Update::removed`] unless added back later in the same
    /// update); an update Plaid changes while it is paged restarts from
    /// `start`, as Plaid asks. A transaction that cannot be read is an issue
    /// until a later page modifies it readably or removes it.
    async fn transactions(
        &self,
        credentials: &PlaidAuthorization,
        start: Option<String>,
    ) -> Result<Update, ConnectorError> {
        let mut restarts = 0;
        'update: loop {
            let mut by_id: BTreeMap<String, PlaidTransaction> = BTreeMap::new();
            let mut unreadable: BTreeMap<String, RecordIssue> = BTreeMap::new();
            let mut unnamed: Vec<RecordIssue> = Vec::new();
            let mut removed: BTreeSet<String> = BTreeSet::new();
            let mut cursor: Option<String> = start.clone();
            for _ in 0..MAX_CALLS {
                let mut body = json!({"count": self.page_size});
                if let Some(cursor) = &cursor {
                    body["cursor"] = Value::String(cursor.clone());
                }
                let page: SyncPage = match self
                    .post(
                        credentials,
                        "/transactions/sync",
                        "a page of transactions",
                        body,
                    )
                    .await
                {
                    Err(ConnectorError::Failed(message))
                        if restarts < RESTARTS
                            && message.contains("TRANSACTIONS_SYNC_MUTATION_DURING_PAGINATION") =>
                    {
                        restarts += 1;
                        tracing::info!(
                            restarts,
                            "Plaid changed the transactions while they were paged: restarting"
                        );
                        continue 'update;
                    }
                    answer => answer?,
                };
                for entry in page.added.entries().chain(page.modified.entries()) {
                    match entry {
                        Ok((transaction, _)) => {
                            unreadable.remove(&transaction.transaction_id);
                            removed.remove(&transaction.transaction_id);
                            by_id.insert(transaction.transaction_id.clone(), transaction);
                        }
                        Err(issue) => match issue.record_id.clone() {
                            Some(id) => {
                                by_id.remove(&id);
                                unreadable.insert(id, issue);
                            }
                            None => unnamed.push(issue),
                        },
                    }
                }
                for gone in page.removed {
                    by_id.remove(&gone.transaction_id);
                    unreadable.remove(&gone.transaction_id);
                    removed.insert(gone.transaction_id);
                }
                if !page.has_more {
                    // An empty cursor: Plaid has no transactions for the Item yet.
                    let resume = Some(page.next_cursor).filter(|cursor| !cursor.is_empty());
                    return Ok(Update {
                        read: Read {
                            records: by_id.into_values().collect(),
                            issues: unreadable.into_values().chain(unnamed).collect(),
                        },
                        removed: removed.into_iter().collect(),
                        resume,
                    });
                }
                if page.next_cursor.is_empty() || cursor.as_deref() == Some(&page.next_cursor) {
                    return Err(ConnectorError::Failed(
                        "Plaid said more transactions follow but gave no new cursor; the previous data is kept"
                            .to_owned(),
                    ));
                }
                cursor = Some(page.next_cursor);
            }
            return Err(ConnectorError::Failed(format!(
                "Plaid kept naming more transactions after {MAX_CALLS} pages; the previous data is kept"
            )));
        }
    }
}

/// A Plaid error after which the Item needs its user (or the keys are
/// wrong) as an authorization failure, which deauthorizes the connection;
/// any other error as it is. Plaid answers these with 400 (its
/// `error_code` leads the message) or, for keys, possibly 401.
fn needs_authorization(error: ConnectorError) -> ConnectorError {
    match error {
        ConnectorError::Failed(message)
        | ConnectorError::Expired(message)
        | ConnectorError::Auth(message)
            if NEEDS_NEW_AUTHORIZATION
                .iter()
                .any(|code| message.contains(&format!("{code}:"))) =>
        {
            ConnectorError::Auth(format!(
                "{message}. The Item needs its owner: have them reconnect it through Plaid Link's update \
                 mode (or check your Plaid API keys), then authorize the connection again"
            ))
        }
        // Plaid tokens cannot be refreshed: a rejected one needs new authorization.
        ConnectorError::Expired(message) => ConnectorError::Auth(message),
        other => other,
    }
}

impl Connector for PlaidConnector {
    type Credentials = PlaidAuthorization;
    const PLATFORM: &'static str = "Plaid";
    /// Plaid: `/transactions/sync` takes 50 calls a minute per Item (NOTES.md).
    const LIMITS: Limits = Limits::per_minute(50);
    const LINK_UNAVAILABLE: &'static str = "Plaid has no authorization code: its Link widget (JavaScript, or Hosted Link) gives a `public_token` that is exchanged for an access token and `item_id`, and repairs an item in Link's update mode; tributary does not host Plaid Link yet, so migrate items with PUT .../authorization";

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: BankAccounts, BankTransactions]
    }

    /// `POST /accounts/get`: the keys, the access token and the Item all at
    /// once; the answer's Item must be the connection's.
    async fn verify(&self, credentials: &PlaidAuthorization) -> Result<(), ConnectorError> {
        let answer = self.accounts(credentials).await?;
        require_reach(&credentials.item_id, [answer.item.item_id.as_str()], |_| {
            format!(
                "the access token belongs to another Plaid Item than `{}`",
                credentials.item_id
            )
        })
    }
}

impl Syncs<BankAccounts> for PlaidConnector {
    async fn page(
        &self,
        credentials: &PlaidAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<BankAccount>, ConnectorError> {
        let answer = self.accounts(credentials).await?;
        let item = answer.item;
        let total = answer.accounts.len() as u64;
        let read = answer
            .accounts
            .read(|account| Ok(Some(account.into_record(&item))));
        Ok(Fetched::read(read, None).of_total(Some(total)))
    }
}

/// One `/transactions/sync` update, gathered.
struct Update {
    /// The transactions added or modified, and those that could not be read.
    read: Read<PlaidTransaction>,
    /// The ids of transactions removed (and not added back).
    removed: Vec<String>,
    /// The `next_cursor` of its last page: where the next update starts.
    resume: Option<String>,
}

impl Update {
    /// As one page of bank transactions, saying where the next update resumes.
    fn into_fetched(self) -> Fetched<BankTransaction> {
        let Update {
            read,
            removed,
            resume,
        } = self;
        let total = (read.records.len() + read.issues.len()) as u64;
        let records: Vec<BankTransaction> = read
            .records
            .into_iter()
            .map(PlaidTransaction::into_record)
            .collect();
        Fetched::read(
            Read {
                records,
                issues: read.issues,
            },
            None,
        )
        .of_total(Some(total))
        .resuming(resume)
        .removing(removed)
    }
}

/// Plaid's changes are an update from the cursor the last sync ended with,
/// removals included (`removed`): no reconciliation is needed.
const TRANSACTION_CHANGES: Option<Changes> = Some(Changes::with(Deletions::InChanges));

impl Syncs<BankTransactions> for PlaidConnector {
    const CHANGES: Option<Changes> = TRANSACTION_CHANGES;

    /// The whole history, from no cursor; its last `next_cursor` is kept.
    async fn page(
        &self,
        credentials: &PlaidAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<BankTransaction>, ConnectorError> {
        let update = self.transactions(credentials, None).await?;
        Ok(update.into_fetched())
    }

    /// What changed since the cursor the last published sync ended with
    /// (Plaid's own watermark: no clock, so `since.time` is not used). Without
    /// one (Plaid had no transactions for the Item then) the whole history.
    async fn changed_page(
        &self,
        credentials: &PlaidAuthorization,
        since: Since,
        _cursor: Option<String>,
    ) -> Result<Fetched<BankTransaction>, ConnectorError> {
        let update = self.transactions(credentials, since.cursor).await?;
        Ok(update.into_fetched())
    }
}
