//! Connectors: one per platform, all behind one trait. A connector fetches
//! a data type page by page, given the connection's opened credentials, says
//! how its tokens are refreshed, and can prove a set of tokens works.
//!
//! The connectors live in their platforms' folders: the sandbox's
//! synthetic data, and Xero, QuickBooks Online and Zoho Books through
//! their documented APIs; [`super::kit`] holds what they share.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::kit::http;
use super::{quickbooks_online, sandbox, xero, zoho_books};
use crate::platforms::DataType;
use crate::sync::records::{Customer, Invoice};

/// One page of records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Records {
    /// Invoices.
    Invoices(Vec<Invoice>),
    /// Customers.
    Customers(Vec<Customer>),
}

impl Records {
    /// How many records the page holds.
    pub fn len(&self) -> usize {
        match self {
            Self::Invoices(records) => records.len(),
            Self::Customers(records) => records.len(),
        }
    }

    /// Whether the page is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A page and where the next one starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The records.
    pub records: Records,
    /// The cursor of the next page; `None` on the last page.
    pub next: Option<String>,
    /// How many records the whole data type holds, when the platform says.
    pub total: Option<u64>,
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
}

/// Fetches a platform's data.
pub trait Connector: Send + Sync {
    /// The page of `data_type` starting at `cursor` (`None` for the first).
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>>;

    /// Where and how this connection's tokens are refreshed; `None` when
    /// they are not (tokens that never expire, or no connector support).
    fn token_endpoint(&self, _credentials: &Value) -> Option<super::kit::oauth::TokenEndpoint> {
        None
    }

    /// One cheap authenticated call proving the credentials work for their
    /// organisation; `None` when this connector cannot check them.
    fn verify<'a>(
        &'a self,
        _credentials: &'a Value,
    ) -> Option<BoxFuture<'a, Result<(), ConnectorError>>> {
        None
    }
}

/// Where one platform's API and token endpoint are; `None` means the real
/// platform's.
#[derive(Debug, Clone, Default)]
pub struct PlatformUrls {
    /// The API's base URL (`TRIBUTARY_<PLATFORM>_API_BASE`).
    pub api_base: Option<String>,
    /// The OAuth token endpoint (`TRIBUTARY_<PLATFORM>_TOKEN_URL`).
    pub token_url: Option<String>,
    /// Records asked for per page, where the platform lets us choose
    /// (QuickBooks' `MAXRESULTS`, Zoho's `per_page`); `None`: the connector's default.
    pub page_size: Option<u64>,
}

/// How the platform connectors reach their platforms.
#[derive(Debug, Clone)]
pub struct PlatformsConfig {
    /// Xero.
    pub xero: PlatformUrls,
    /// QuickBooks Online.
    pub quickbooks_online: PlatformUrls,
    /// Zoho Books (a base URL here wins over every data centre's).
    pub zoho_books: PlatformUrls,
    /// The timeout of each HTTP call.
    pub timeout: Duration,
    /// Retries of failed calls.
    pub retry: http::RetryPolicy,
}

impl Default for PlatformsConfig {
    fn default() -> Self {
        Self {
            xero: PlatformUrls::default(),
            quickbooks_online: PlatformUrls::default(),
            zoho_books: PlatformUrls::default(),
            timeout: Duration::from_secs(30),
            retry: http::RetryPolicy::default(),
        }
    }
}

/// The connectors available to the sync engine, by platform key.
#[derive(Clone, Default)]
pub struct Connectors {
    by_platform: HashMap<String, Arc<dyn Connector>>,
}

impl Connectors {
    /// The connectors tributary ships, against the real platforms.
    pub fn standard() -> Self {
        match Self::for_platforms(&PlatformsConfig::default()) {
            Ok(connectors) => connectors,
            Err(error) => {
                tracing::error!(error = %error, "the HTTP client failed to start; only the sandbox syncs");
                Self::default().with("sandbox", Arc::new(sandbox::connector::SandboxConnector))
            }
        }
    }

    /// The connectors tributary ships, reaching the platforms as `config` says.
    pub fn for_platforms(config: &PlatformsConfig) -> anyhow::Result<Self> {
        let http = http::PlatformHttp::new(config.timeout, config.retry.clone())?;
        Ok(Self::default()
            .with("sandbox", Arc::new(sandbox::connector::SandboxConnector))
            .with(
                "xero",
                Arc::new(xero::connector::XeroConnector::new(
                    &config.xero,
                    http.clone(),
                )),
            )
            .with(
                "quickbooks-online",
                Arc::new(quickbooks_online::connector::QuickBooksConnector::new(
                    &config.quickbooks_online,
                    http.clone(),
                )),
            )
            .with(
                "zoho-books",
                Arc::new(zoho_books::connector::ZohoBooksConnector::new(
                    &config.zoho_books,
                    http,
                )),
            ))
    }

    /// Adds or replaces the connector of `platform_key`.
    pub fn with(mut self, platform_key: &str, connector: Arc<dyn Connector>) -> Self {
        self.by_platform.insert(platform_key.to_owned(), connector);
        self
    }

    /// The connector of `platform_key`, if one exists.
    pub fn get(&self, platform_key: &str) -> Option<Arc<dyn Connector>> {
        self.by_platform.get(platform_key).cloned()
    }
}
