//! Where the connectors reach their platforms: one [`PlatformConfig`] per
//! platform (its API base and token URL, `TRIBUTARY_<KEY>_API_BASE` and
//! `TRIBUTARY_<KEY>_TOKEN_URL`; the real hosts when unset), and what every
//! call shares (the timeout and the retry policy).

use std::collections::HashMap;
use std::time::Duration;

use super::kit::http::RetryPolicy;

/// Where one platform's API and token endpoint are; `None` means the real
/// platform's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlatformConfig {
    /// The API's base URL (`TRIBUTARY_<KEY>_API_BASE`).
    pub api_base: Option<String>,
    /// The OAuth token endpoint (`TRIBUTARY_<KEY>_TOKEN_URL`).
    pub token_url: Option<String>,
    /// The OAuth authorize endpoint the link flow sends end customers to
    /// (`TRIBUTARY_<KEY>_AUTHORIZE_URL`).
    pub authorize_url: Option<String>,
    /// Records asked for per page, where the platform lets us choose; `None`:
    /// the connector's default. (Tests use small pages to page a few records.)
    pub page_size: Option<u64>,
}

impl PlatformConfig {
    /// The API base, without a trailing `/`: the configured one, or `default`.
    pub fn api_base_or(&self, default: &str) -> String {
        self.api_base
            .as_deref()
            .unwrap_or(default)
            .trim_end_matches('/')
            .to_owned()
    }

    /// The token endpoint: the configured one, or `default`.
    pub fn token_url_or(&self, default: &str) -> String {
        self.token_url.clone().unwrap_or_else(|| default.to_owned())
    }

    /// The authorize endpoint: the configured one, or `default`.
    pub fn authorize_url_or(&self, default: &str) -> String {
        self.authorize_url
            .clone()
            .unwrap_or_else(|| default.to_owned())
    }

    /// The configured API base, without a trailing `/`.
    pub fn api_base(&self) -> Option<String> {
        self.api_base
            .as_deref()
            .map(|base| base.trim_end_matches('/').to_owned())
    }

    /// The page size: the configured one within `1..=max`, or `default`.
    pub fn page_size_or(&self, default: u64, max: u64) -> u64 {
        self.page_size.unwrap_or(default).clamp(1, max)
    }
}

/// How the connectors reach their platforms.
#[derive(Debug, Clone)]
pub struct PlatformsConfig {
    /// Per platform key; a platform not listed reaches its real hosts.
    pub platforms: HashMap<String, PlatformConfig>,
    /// The timeout of each HTTP call.
    pub timeout: Duration,
    /// Retries of failed calls.
    pub retry: RetryPolicy,
}

impl Default for PlatformsConfig {
    fn default() -> Self {
        Self {
            platforms: HashMap::new(),
            timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
        }
    }
}

impl PlatformsConfig {
    /// The configuration of `platform_key` (its real hosts when unset).
    pub fn platform(&self, platform_key: &str) -> PlatformConfig {
        self.platforms
            .get(platform_key)
            .cloned()
            .unwrap_or_default()
    }

    /// Every platform pointed at `config` (a test's fake platform).
    pub fn every_platform(mut self, config: &PlatformConfig) -> Self {
        for platform in super::all() {
            if platform.connector.is_some() {
                self.platforms
                    .insert(platform.platform_key.to_owned(), config.clone());
            }
        }
        self
    }
}

/// The name of a platform's variable: `TRIBUTARY_<KEY>_<WHAT>`, the key in
/// upper case with `-` as `_` (`TRIBUTARY_ZOHO_BOOKS_API_BASE`).
pub fn variable(platform_key: &str, what: &str) -> String {
    format!(
        "TRIBUTARY_{}_{what}",
        platform_key.to_ascii_uppercase().replace('-', "_")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_named_after_the_platform_key() {
        assert_eq!(
            variable("zoho-books", "API_BASE"),
            "TRIBUTARY_ZOHO_BOOKS_API_BASE"
        );
        assert_eq!(variable("xero", "TOKEN_URL"), "TRIBUTARY_XERO_TOKEN_URL");
    }

    #[test]
    fn bases_lose_their_trailing_slash() {
        let config = PlatformConfig {
            api_base: Some("http://127.0.0.1:9/".to_owned()),
            ..PlatformConfig::default()
        };
        assert_eq!(config.api_base_or("https://x"), "http://127.0.0.1:9");
        assert_eq!(
            PlatformConfig::default().api_base_or("https://x/"),
            "https://x"
        );
    }
}
