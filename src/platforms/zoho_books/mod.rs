//! Zoho Books: its catalogue entry and authorization body; its connector
//! ([`connector`]: the organization's data centre, paging; [`ledger`]: the
//! accounting lists beyond sales) and the mapping of its records and
//! statuses ([`mapping`] for sales, [`chart`] for settings and the chart,
//! [`documents`] for bills and credit notes, [`settlements`] for payments,
//! [`journals`]). What these rely on, with sources:
//! `NOTES.md`.

pub mod chart;
pub mod connector;
pub mod documents;
pub mod journals;
pub mod ledger;
pub mod mapping;
pub mod settlements;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{LEDGER, Platform, SourceType};

/// Zoho Books in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "zoho-books",
    name: "Zoho Books",
    source_type: SourceType::Accounting,
    data_types: LEDGER,
    authorization: Some(BodyKind::of::<ZohoBooksAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::ZohoBooksConnector>()),
};

/// Zoho's data centres: each has its own accounts server and API domain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum ZohoDataCenter {
    /// United States: accounts.zoho.com, www.zohoapis.com (the default).
    #[default]
    #[serde(rename = "com")]
    Com,
    /// Europe: accounts.zoho.eu.
    #[serde(rename = "eu")]
    Eu,
    /// India: accounts.zoho.in.
    #[serde(rename = "in")]
    In,
    /// Australia: accounts.zoho.com.au.
    #[serde(rename = "com.au")]
    ComAu,
    /// Japan: accounts.zoho.jp.
    #[serde(rename = "jp")]
    Jp,
    /// Canada: accounts.zohocloud.ca.
    #[serde(rename = "ca")]
    Ca,
    /// China: accounts.zoho.com.cn.
    #[serde(rename = "com.cn")]
    ComCn,
    /// Saudi Arabia: accounts.zoho.sa.
    #[serde(rename = "sa")]
    Sa,
}

/// Zoho Books: a connection to one Zoho Books organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ZohoBooksAuthorization {
    /// The organization id (`organization_id` in `GET /books/v3/organizations`), sent as the `organization_id` query parameter.
    #[schemars(regex(pattern = r"^[0-9]{1,32}$"))]
    pub organization_id: String,
    /// The data centre the organization lives in (tokens only work there); default `com`.
    #[serde(default)]
    pub data_center: ZohoDataCenter,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
    /// Where this organization's API lives, as Zoho's last token answer
    /// said (`api_domain`); stored by refreshes, never sent by you.
    #[serde(default)]
    #[schemars(skip)]
    pub api_domain: Option<String>,
}

expiring_token_body!(ZohoBooksAuthorization => organization_id);

impl ZohoDataCenter {
    /// Every data centre, for finding one by its hosts.
    pub const ALL: [Self; 8] = [
        Self::Com,
        Self::Eu,
        Self::In,
        Self::ComAu,
        Self::Jp,
        Self::Ca,
        Self::ComCn,
        Self::Sa,
    ];

    /// The data centre of a link flow's callback: its `location` (Zoho's
    /// names: `us`, `eu`, `in`, `au`, `jp`, `ca`, `cn`, `sa`), else its
    /// `accounts-server`; `None` for a centre the body cannot name (`uk`,
    /// `ae`).
    pub fn of_callback(location: Option<&str>, accounts_server: Option<&str>) -> Option<Self> {
        match location {
            Some("us") => Some(Self::Com),
            Some("eu") => Some(Self::Eu),
            Some("in") => Some(Self::In),
            Some("au") => Some(Self::ComAu),
            Some("jp") => Some(Self::Jp),
            Some("ca") => Some(Self::Ca),
            Some("cn") => Some(Self::ComCn),
            Some("sa") => Some(Self::Sa),
            Some(_) => None,
            None => match accounts_server {
                Some(server) => Self::ALL
                    .into_iter()
                    .find(|centre| centre.hosts().1 == server.trim_end_matches('/')),
                None => Some(Self::Com),
            },
        }
    }

    /// Its name in the authorization body (`com`, `com.au`).
    pub fn body_value(self) -> &'static str {
        match self {
            Self::Com => "com",
            Self::Eu => "eu",
            Self::In => "in",
            Self::ComAu => "com.au",
            Self::Jp => "jp",
            Self::Ca => "ca",
            Self::ComCn => "com.cn",
            Self::Sa => "sa",
        }
    }

    /// The data centre's API domain and accounts server.
    pub fn hosts(self) -> (&'static str, &'static str) {
        match self {
            Self::Com => ("https://www.zohoapis.com", "https://accounts.zoho.com"),
            Self::Eu => ("https://www.zohoapis.eu", "https://accounts.zoho.eu"),
            Self::In => ("https://www.zohoapis.in", "https://accounts.zoho.in"),
            Self::ComAu => (
                "https://www.zohoapis.com.au",
                "https://accounts.zoho.com.au",
            ),
            Self::Jp => ("https://www.zohoapis.jp", "https://accounts.zoho.jp"),
            Self::Ca => ("https://www.zohoapis.ca", "https://accounts.zohocloud.ca"),
            Self::ComCn => (
                "https://www.zohoapis.com.cn",
                "https://accounts.zoho.com.cn",
            ),
            Self::Sa => ("https://www.zohoapis.sa", "https://accounts.zoho.sa"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_data_centre_has_its_hosts() {
        assert_eq!(ZohoDataCenter::Eu.hosts().0, "https://www.zohoapis.eu");
        assert_eq!(
            ZohoDataCenter::Ca.hosts().1,
            "https://accounts.zohocloud.ca"
        );
        assert_eq!(ZohoDataCenter::Com.hosts().1, "https://accounts.zoho.com");
    }
}
