//! TrueLayer's connector: the Data API v1's accounts (`GET
//! /data/v1/accounts`, each with its `/balance`) and their transactions
//! (`/transactions` over the last 89 days, posted, and `/transactions/pending`),
//! one account per page, with the end user's access token as a bearer
//! token; the host is the connection's environment's. Tokens refresh at
//! the auth server's `/connect/token` (client id and secret in the form)
//! and a returned refresh token replaces the stored one. A lapsed consent
//! (TrueLayer's 90 days, a revocation, an SCA window) is an authorization
//! failure that names it. Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{Duration, Utc};
use serde::de::DeserializeOwned;

use super::TrueLayerAuthorization;
use super::mapping::{Balance, Me, Results, TrueLayerAccount, TrueLayerTransaction};
use crate::data::bank_accounts::{BankAccount, BankAccounts};
use crate::data::bank_transactions::{BankTransaction, BankTransactionStatus, BankTransactions};
use crate::platforms::authorization::Environment;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::records::{Each, Read};
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// The live Data API host.
pub const API_BASE: &str = "https://api.truelayer.com";
/// The sandbox Data API host.
pub const SANDBOX_API_BASE: &str = "https://api.truelayer-sandbox.com";
/// The live token endpoint.
pub const TOKEN_URL: &str = "https://auth.truelayer.com/connect/token";
/// The sandbox token endpoint.
pub const SANDBOX_TOKEN_URL: &str = "https://auth.truelayer-sandbox.com/connect/token";
/// The live auth dialog.
pub const AUTHORIZE_URL: &str = "https://auth.truelayer.com/";

/// Days of posted transactions asked for: within the 90 days most banks
/// allow without a fresh strong customer authentication.
pub const HISTORY_DAYS: i64 = 89;

/// The TrueLayer connector.
#[derive(Debug)]
pub struct TrueLayerConnector {
    api_base: Option<String>,
    token_url: Option<String>,
    authorize_url: String,
    http: PlatformHttp,
}

impl Configured for TrueLayerConnector {
    /// One host per environment, chosen per connection.
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://api.truelayer.com or https://api.truelayer-sandbox.com",
    );
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://auth.truelayer.com/connect/token or https://auth.truelayer-sandbox.com/connect/token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            token_url: config.token_url.clone(),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            http,
        }
    }
}

/// A 403 from the Data API (`access_denied`, `sca_exceeded`) as the
/// authorization failure it is, saying what to do; any other error as it is.
fn consent_lapsed(error: ConnectorError) -> ConnectorError {
    match error {
        ConnectorError::Auth(message) | ConnectorError::Permissions(message) => {
            ConnectorError::Auth(format!(
                "{message}. The end user's consent has lapsed (TrueLayer connections last 90 days), was \
             revoked, or the bank's strong-authentication window has passed: have them reconnect \
             through TrueLayer, then authorize the connection again"
            ))
        }
        other => other,
    }
}

impl TrueLayerConnector {
    /// The Data API root of the connection's environment.
    fn base<'a>(&'a self, credentials: &TrueLayerAuthorization) -> &'a str {
        match (&self.api_base, credentials.environment) {
            (Some(base), _) => base.as_str(),
            (None, Environment::Sandbox) => SANDBOX_API_BASE,
            (None, Environment::Production) => API_BASE,
        }
    }

    /// `GET <host>/data/v1<path>` as `T`.
    async fn get<T: DeserializeOwned>(
        &self,
        credentials: &TrueLayerAuthorization,
        what: &'static str,
        path: &str,
        query: &[(&'static str, String)],
    ) -> Result<T, ConnectorError> {
        let url = format!("{}/data/v1{path}", self.base(credentials));
        let mut call = Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens));
        for &(name, ref value) in query {
            call = call.query(name, value);
        }
        self.http.json(&call).await.map_err(consent_lapsed)
    }

    /// The connection's accounts.
    async fn accounts(
        &self,
        credentials: &TrueLayerAuthorization,
    ) -> Result<Each<TrueLayerAccount>, ConnectorError> {
        let page: Results<Each<TrueLayerAccount>> = self
            .get(credentials, "the accounts", "/accounts", &[])
            .await?;
        Ok(page.results)
    }

    /// An account's posted transactions of the last [`HISTORY_DAYS`] and its pending ones.
    async fn transactions(
        &self,
        credentials: &TrueLayerAuthorization,
        account_id: &str,
    ) -> Result<Read<BankTransaction>, ConnectorError> {
        let to = Utc::now();
        let from = to - Duration::days(HISTORY_DAYS);
        let format = "%Y-%m-%dT%H:%M:%SZ";
        let window = [
            ("from", from.format(format).to_string()),
            ("to", to.format(format).to_string()),
        ];
        let path = format!("/accounts/{}/transactions", encode(account_id));
        let posted: Results<Each<TrueLayerTransaction>> = self
            .get(credentials, "an account's transactions", &path, &window)
            .await?;
        let pending: Results<Each<TrueLayerTransaction>> = self
            .get(
                credentials,
                "an account's pending transactions",
                &format!("{path}/pending"),
                &[],
            )
            .await?;
        let mut read = posted.results.read(|transaction| {
            transaction
                .into_record(account_id, BankTransactionStatus::Posted)
                .map(Some)
        });
        let pending = pending.results.read(|transaction| {
            transaction
                .into_record(account_id, BankTransactionStatus::Pending)
                .map(Some)
        });
        read.records.extend(pending.records);
        read.issues.extend(pending.issues);
        Ok(read)
    }
}

/// A path segment with everything but unreserved characters percent-encoded.
fn encode(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

impl Connector for TrueLayerConnector {
    type Credentials = TrueLayerAuthorization;
    const PLATFORM: &'static str = "TrueLayer";
    /// TrueLayer's limits are the banks' own, per account and endpoint (NOTES.md): none tributary
    /// can declare; its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: BankAccounts, BankTransactions]
    }

    fn token_endpoint(&self, credentials: &TrueLayerAuthorization) -> Option<TokenEndpoint> {
        let url = match (&self.token_url, credentials.environment) {
            (Some(url), _) => url.as_str(),
            (None, Environment::Sandbox) => SANDBOX_TOKEN_URL,
            (None, Environment::Production) => TOKEN_URL,
        };
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// TrueLayer's auth dialog (live banks, UK open banking and OAuth
    /// providers; PKCE): the Data API's read scopes and `offline_access`;
    /// `GET /data/v1/me` names the connection's credentials and bank.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                self.token_url
                    .clone()
                    .unwrap_or_else(|| TOKEN_URL.to_owned()),
                ClientAuth::RequestBody,
                &[
                    "info",
                    "accounts",
                    "balance",
                    "transactions",
                    "offline_access",
                ],
            )
            .with_pkce()
            .with_parameters(&[("providers", "uk-ob-all uk-oauth-all")]),
        )
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let base = self.api_base.as_deref().unwrap_or(API_BASE);
        let url = format!("{base}/data/v1/me");
        let call = Call::get(
            Self::PLATFORM,
            "the connection's metadata",
            url,
            Auth::Bearer(&grant.access_token),
        );
        let me: Results<Vec<Me>> = self.http.json(&call).await?;
        Ok(me
            .results
            .into_iter()
            .filter_map(|me| {
                let provider = me.provider?;
                let provider_id = provider.provider_id?;
                Some(Organization {
                    id: me.credentials_id?,
                    name: provider.display_name.unwrap_or_else(|| provider_id.clone()),
                    handle: Some(provider_id),
                })
            })
            .collect())
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("credentialsId".to_owned(), organization.id.clone().into());
        body.insert(
            "providerId".to_owned(),
            organization.handle.clone().unwrap_or_default().into(),
        );
        Value::Object(body)
    }

    /// `GET /data/v1/me`: the connection the token reaches must be ours
    /// (its `credentials_id`).
    async fn verify(&self, credentials: &TrueLayerAuthorization) -> Result<(), ConnectorError> {
        let me: Results<Vec<Me>> = self
            .get(credentials, "the connection's metadata", "/me", &[])
            .await?;
        require_reach(
            &credentials.credentials_id,
            me.results
                .iter()
                .filter_map(|me| me.credentials_id.as_deref()),
            |_| {
                format!(
                    "the access token belongs to another TrueLayer connection than `{}`",
                    credentials.credentials_id
                )
            },
        )
    }
}

impl Syncs<BankAccounts> for TrueLayerConnector {
    async fn page(
        &self,
        credentials: &TrueLayerAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<BankAccount>, ConnectorError> {
        let accounts = self.accounts(credentials).await?;
        let total = accounts.len() as u64;
        let mut read = Read::default();
        for entry in accounts.entries() {
            let account = match entry {
                Ok((account, _)) => account,
                Err(issue) => {
                    read.issues.push(issue);
                    continue;
                }
            };
            let path = format!("/accounts/{}/balance", encode(&account.account_id));
            let balance: Results<Vec<Balance>> = self
                .get(credentials, "an account's balance", &path, &[])
                .await?;
            read.records
                .push(account.into_record(balance.results.into_iter().next()));
        }
        Ok(Fetched::read(read, None).of_total(Some(total)))
    }
}

impl Syncs<BankTransactions> for TrueLayerConnector {
    /// The last [`HISTORY_DAYS`] only.
    const WHOLE_LIST: bool = false;

    /// One account's transactions per page. The first page lists the
    /// accounts; the cursor is the JSON array of the accounts still to do.
    async fn page(
        &self,
        credentials: &TrueLayerAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<BankTransaction>, ConnectorError> {
        let remaining: Vec<String> = match cursor {
            None => {
                self.accounts(credentials)
                    .await?
                    .read(|account| Ok(Some(account.account_id)))
                    .records
            }
            Some(cursor) => serde_json::from_str(&cursor).map_err(|_| {
                ConnectorError::Failed("a TrueLayer transactions cursor is not readable".to_owned())
            })?,
        };
        let Some((account_id, rest)) = remaining.split_first() else {
            return Ok(Fetched::all(Vec::new(), None).of_total(Some(0)));
        };
        let read = self.transactions(credentials, account_id).await?;
        let next = if rest.is_empty() {
            None
        } else {
            Some(serde_json::to_string(rest).map_err(|_| {
                ConnectorError::Failed(
                    "a TrueLayer transactions cursor could not be made".to_owned(),
                )
            })?)
        };
        Ok(Fetched::read(read, next))
    }
}
