//! Connectors: one per platform, all behind one trait. A connector fetches
//! a data type page by page, given the connection's opened credentials.

pub mod sandbox;

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::records::{Customer, Invoice};
use crate::integrations::DataType;

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
    /// Anything else: the platform failed, answered nonsense, or is unreachable.
    #[error("{0}")]
    Failed(String),
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
}

/// The connectors available to the sync engine, by platform key.
#[derive(Clone, Default)]
pub struct Connectors {
    by_platform: HashMap<String, Arc<dyn Connector>>,
}

impl Connectors {
    /// The connectors tributary ships.
    pub fn standard() -> Self {
        Self::default().with("sandbox", Arc::new(sandbox::SandboxConnector))
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
