//! The platforms' options of the command line: where each connector
//! reaches its platform (`--<key>-api-base`, `--<key>-token-url`,
//! `--<key>-authorize-url`) and how long a call may wait.

use std::time::Duration;

use clap::{Arg, ArgMatches, Args, FromArgMatches};

use crate::platforms::config::{self, PlatformConfig, PlatformsConfig};
use crate::platforms::connector::{ConnectorKind, Endpoint};
use crate::platforms::kit::http::RetryPolicy;
use crate::platforms::{self, Platform};

/// Where the platform connectors reach their platforms (tests and proxies
/// point them elsewhere), and how long they wait. Each platform with a
/// connector has `--<key>-api-base` and `--<key>-token-url`, also read from
/// `TRIBUTARY_<KEY>_API_BASE` and `TRIBUTARY_<KEY>_TOKEN_URL`.
pub(super) struct PlatformOptions {
    /// The configured URLs, by platform key.
    urls: Vec<(&'static str, PlatformConfig)>,
    /// Seconds each call to a platform may take.
    timeout_secs: u64,
    /// The longest `Retry-After` (seconds) a rate-limited call waits.
    max_retry_after_secs: u64,
}

const TIMEOUT: &str = "platform-timeout-secs";
const MAX_RETRY_AFTER: &str = "platform-max-retry-after-secs";

/// The argument ids of one platform's URLs.
fn url_arguments(platform_key: &str) -> (String, String) {
    (
        format!("{platform_key}-api-base"),
        format!("{platform_key}-token-url"),
    )
}

/// The argument id of one platform's authorize endpoint (the link flow's).
fn authorize_argument(platform_key: &str) -> String {
    format!("{platform_key}-authorize-url")
}

/// The platforms whose connectors call out, so their URLs can be configured
/// (the sandbox's cannot: it calls nothing).
fn reaching_out() -> impl Iterator<Item = (&'static Platform, ConnectorKind)> {
    platforms::all().iter().filter_map(|platform| {
        platform
            .connector
            .filter(|connector| connector.api_base.is_used() || connector.token_url.is_used())
            .map(|connector| (*platform, connector))
    })
}

/// Where an endpoint is by default, in the words of `--help`.
fn described(endpoint: Endpoint) -> &'static str {
    match endpoint {
        Endpoint::Fixed(url) | Endpoint::PerConnection(url) => url,
        Endpoint::Unused => "none: not called",
    }
}

/// One platform URL option: `--<id>`, also read from
/// `TRIBUTARY_<KEY>_<suffix>`.
fn url_option(id: String, platform_key: &str, suffix: &str, help: String) -> Arg {
    Arg::new(id.clone())
        .long(id)
        .global(true)
        .env(config::variable(platform_key, suffix))
        .help(help)
}

impl Args for PlatformOptions {
    fn augment_args(mut command: clap::Command) -> clap::Command {
        for (platform, connector) in reaching_out() {
            let (api_base, token_url) = url_arguments(platform.platform_key);
            let key = platform.platform_key;
            command = command
                .arg(url_option(
                    api_base,
                    key,
                    "API_BASE",
                    format!(
                        "{} API base URL (default {})",
                        platform.name,
                        described(connector.api_base)
                    ),
                ))
                .arg(url_option(
                    token_url,
                    key,
                    "TOKEN_URL",
                    format!(
                        "{} OAuth token endpoint (default {})",
                        platform.name,
                        described(connector.token_url)
                    ),
                ))
                .arg(url_option(
                    authorize_argument(key),
                    key,
                    "AUTHORIZE_URL",
                    format!(
                        "{} OAuth authorize endpoint the link flow sends end customers to (default: the platform's)",
                        platform.name
                    ),
                ));
        }
        command
            .arg(
                Arg::new(TIMEOUT)
                    .long(TIMEOUT)
                    .global(true)
                    .env("TRIBUTARY_PLATFORM_TIMEOUT_SECS")
                    .value_parser(clap::value_parser!(u64))
                    .default_value("30")
                    .help("Seconds each call to a platform may take"),
            )
            .arg(
                Arg::new(MAX_RETRY_AFTER)
                    .long(MAX_RETRY_AFTER)
                    .global(true)
                    .env("TRIBUTARY_PLATFORM_MAX_RETRY_AFTER_SECS")
                    .value_parser(clap::value_parser!(u64))
                    .default_value("60")
                    .help("The longest Retry-After (seconds) a rate-limited call waits before retrying; longer fails the call"),
            )
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for PlatformOptions {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let urls = reaching_out()
            .map(|(platform, _)| {
                let (api_base, token_url) = url_arguments(platform.platform_key);
                let configured = PlatformConfig {
                    api_base: matches.get_one::<String>(&api_base).cloned(),
                    token_url: matches.get_one::<String>(&token_url).cloned(),
                    authorize_url: matches
                        .get_one::<String>(&authorize_argument(platform.platform_key))
                        .cloned(),
                    page_size: None,
                };
                (platform.platform_key, configured)
            })
            .collect();
        Ok(Self {
            urls,
            timeout_secs: matches.get_one::<u64>(TIMEOUT).copied().unwrap_or(30),
            max_retry_after_secs: matches
                .get_one::<u64>(MAX_RETRY_AFTER)
                .copied()
                .unwrap_or(60),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl PlatformOptions {
    pub(super) fn config(&self) -> PlatformsConfig {
        PlatformsConfig {
            platforms: self
                .urls
                .iter()
                .map(|(key, config)| ((*key).to_owned(), config.clone()))
                .collect(),
            timeout: Duration::from_secs(self.timeout_secs.max(1)),
            retry: RetryPolicy {
                max_retry_after: Duration::from_secs(self.max_retry_after_secs),
                ..RetryPolicy::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parsed;

    #[test]
    fn each_calling_connector_has_its_url_flags_before_or_after_the_command() {
        let cli = parsed(&[
            "--xero-api-base",
            "http://127.0.0.1:9001",
            "serve",
            "--zoho-books-token-url",
            "http://127.0.0.1:9002/token",
        ])
        .expect("parses");
        let config = cli.serve.platforms.config();
        let xero = config.platforms.get("xero").expect("xero is configurable");
        assert_eq!(xero.api_base.as_deref(), Some("http://127.0.0.1:9001"));
        assert_eq!(xero.token_url, None);
        let zoho = config
            .platforms
            .get("zoho-books")
            .expect("zoho is configurable");
        assert_eq!(
            zoho.token_url.as_deref(),
            Some("http://127.0.0.1:9002/token")
        );
        assert!(config.platforms.contains_key("quickbooks-online"));
    }

    #[test]
    fn platforms_that_call_nothing_have_no_url_flags() {
        assert!(parsed(&["--sandbox-api-base", "http://127.0.0.1:9"]).is_err());
        assert!(parsed(&["--quickbooks-desktop-api-base", "http://127.0.0.1:9"]).is_err());
        let cli = parsed(&[]).expect("parses");
        assert!(
            !cli.serve
                .platforms
                .config()
                .platforms
                .contains_key("sandbox")
        );
    }
}
