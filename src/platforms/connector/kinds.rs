//! How each platform's connector is made and found: [`ConnectorKind`] (a
//! catalogue entry's way to build its connector, and what it syncs),
//! [`Endpoint`] (where it calls when nothing is configured), [`Configured`]
//! and [`Connectors`] (one built connector per platform, for the engine).

use std::collections::HashMap;
use std::sync::Arc;

use super::{AnyConnector, Connector};
use crate::data::DataType;
use crate::platforms::config::{PlatformConfig, PlatformsConfig};
use crate::platforms::kit::http::PlatformHttp;

/// How a platform's connector is made, for its catalogue entry.
#[derive(Clone, Copy)]
pub struct ConnectorKind {
    build: fn(&PlatformConfig, PlatformHttp) -> Arc<dyn AnyConnector>,
    data_types: fn() -> Vec<DataType>,
    incremental: fn() -> Vec<DataType>,
    /// The name its connector gives the platform in messages and to
    /// [`super::kit::http::CallObserver`] (`Connector::PLATFORM`).
    pub connector_name: &'static str,
    /// Where its API is when nothing is configured.
    pub api_base: Endpoint,
    /// Where its token endpoint is when nothing is configured.
    pub token_url: Endpoint,
}

/// Where a connector reaches one of its platform's endpoints when nothing is
/// configured: what `--<key>-api-base` and `--<key>-token-url` override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// One URL for every connection.
    Fixed(&'static str),
    /// One per connection (a data centre, an environment), chosen as described.
    PerConnection(&'static str),
    /// None: the connector calls no platform (the sandbox), so nothing to configure.
    Unused,
}

impl Endpoint {
    /// Whether the endpoint is called, so configuring it means something.
    pub fn is_used(self) -> bool {
        self != Endpoint::Unused
    }
}

impl std::fmt::Debug for ConnectorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectorKind")
            .field("data_types", &(self.data_types)())
            .finish_non_exhaustive()
    }
}

/// A connector made from its platform's configuration.
pub trait Configured: Connector {
    /// Where its API is when nothing is configured.
    const API_BASE: Endpoint;
    /// Where its token endpoint is when nothing is configured.
    const TOKEN_URL: Endpoint;

    /// The connector, reaching its platform where `config` says.
    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self;
}

impl ConnectorKind {
    /// The connector `C`.
    pub const fn of<C: Configured>() -> Self {
        Self {
            build: build::<C>,
            data_types: data_types::<C>,
            incremental: incremental::<C>,
            connector_name: C::PLATFORM,
            api_base: C::API_BASE,
            token_url: C::TOKEN_URL,
        }
    }

    /// The data types it fetches.
    pub fn data_types(&self) -> Vec<DataType> {
        (self.data_types)()
    }

    /// The data types whose syncs after the first ask only for what changed.
    pub fn incremental(&self) -> Vec<DataType> {
        (self.incremental)()
    }
}

fn build<C: Configured>(config: &PlatformConfig, http: PlatformHttp) -> Arc<dyn AnyConnector> {
    Arc::new(C::new(config, http))
}

fn data_types<C: Connector>() -> Vec<DataType> {
    C::syncs()
        .into_iter()
        .map(|fetcher| fetcher.data_type)
        .collect()
}

fn incremental<C: Connector>() -> Vec<DataType> {
    C::syncs()
        .into_iter()
        .filter(|fetcher| fetcher.changes.is_some())
        .map(|fetcher| fetcher.data_type)
        .collect()
}

/// The connectors available to the sync engine, by platform key.
#[derive(Clone, Default)]
pub struct Connectors {
    by_platform: HashMap<String, Arc<dyn AnyConnector>>,
    /// The HTTP client the connectors share (the link flow's code exchange uses it too).
    http: Option<PlatformHttp>,
}

impl Connectors {
    /// The connectors tributary ships, against the real platforms.
    pub fn standard() -> Self {
        match Self::for_platforms(&PlatformsConfig::default()) {
            Ok(connectors) => connectors,
            Err(error) => {
                tracing::error!(error = %error, "the HTTP client failed to start; no platform syncs");
                Self::default()
            }
        }
    }

    /// The connectors tributary ships, reaching the platforms as `config` says.
    pub fn for_platforms(config: &PlatformsConfig) -> anyhow::Result<Self> {
        let http = PlatformHttp::new(config.timeout, config.retry.clone())?;
        let mut connectors = Self {
            http: Some(http.clone()),
            ..Self::default()
        };
        for platform in crate::platforms::all() {
            if let Some(kind) = platform.connector {
                let connector = (kind.build)(&config.platform(platform.platform_key), http.clone());
                connectors = connectors.with(platform.platform_key, connector);
            }
        }
        Ok(connectors)
    }

    /// Adds or replaces the connector of `platform_key`.
    pub fn with(mut self, platform_key: &str, connector: Arc<dyn AnyConnector>) -> Self {
        self.by_platform.insert(platform_key.to_owned(), connector);
        self
    }

    /// The HTTP client the connectors share, when they were built to reach platforms.
    pub fn http(&self) -> Option<&PlatformHttp> {
        self.http.as_ref()
    }

    /// The connector of `platform_key`, if one exists.
    pub fn get(&self, platform_key: &str) -> Option<Arc<dyn AnyConnector>> {
        self.by_platform.get(platform_key).cloned()
    }
}
