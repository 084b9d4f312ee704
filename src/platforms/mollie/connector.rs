//! Mollie's connector: the Orders API (`GET /v2/orders`) and the Customers
//! API (`GET /v2/customers`), paged by cursor: a page of `limit` records,
//! the next one `from` the record Mollie's `_links.next` names (HAL), with
//! the organization's OAuth access token as a bearer token. Tokens refresh
//! at Mollie's token endpoint (HTTP Basic). Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use serde::de::DeserializeOwned;

use super::MollieAuthorization;
use super::mapping::{
    EmbeddedCustomers, EmbeddedOrders, ListPage, Organization as MollieOrganization,
};
use crate::data::customers::{Customer, Customers};
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// Records asked for per page by default: Mollie's maximum.
pub const PAGE_SIZE: u64 = 250;

const API_BASE: &str = "https://api.mollie.com";
const TOKEN_URL: &str = "https://api.mollie.com/oauth2/tokens";
const AUTHORIZE_URL: &str = "https://my.mollie.com/oauth2/authorize";
/// The only media type Mollie's OpenAPI document gives its answers
/// (mollie/openapi); a strict server answers 406 to `application/json`.
const HAL_JSON: &str = "application/hal+json";

/// The Mollie connector.
#[derive(Debug)]
pub struct MollieConnector {
    api_base: String,
    token_url: String,
    authorize_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for MollieConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            token_url: config.token_url_or(TOKEN_URL),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

/// The `from` of a next-page URL: the id the next page starts at.
fn from_of(href: &str) -> Option<String> {
    let url = url::Url::parse(href).ok()?;
    url.query_pairs()
        .find(|(name, _)| name == "from")
        .map(|(_, value)| value.into_owned())
        .filter(|value| !value.is_empty())
}

impl MollieConnector {
    /// A page of `GET /v2/<list>`, from the record `cursor` names; the
    /// records and the next page's cursor (the `from` of `_links.next`).
    async fn list<E: DeserializeOwned>(
        &self,
        credentials: &MollieAuthorization,
        what: &'static str,
        list: &str,
        cursor: Option<String>,
    ) -> Result<(Option<E>, Option<String>), ConnectorError> {
        let url = format!("{}/v2/{list}", self.api_base);
        let mut call = Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens))
            .accept(HAL_JSON)
            .query("limit", self.page_size);
        if let NextLink::Given(from) = NextLink::from_cursor(cursor) {
            call = call.query("from", from);
        }
        let page: ListPage<E> = self.http.json(&call).await?;
        // Mollie's next link names its own host: tributary keeps calling the
        // configured base and takes only where the next page starts.
        let next = match page.next_href() {
            None => None,
            Some(href) => Some(from_of(href).ok_or_else(|| {
                ConnectorError::Failed(format!(
                    "Mollie answered {what} whose next link names no `from`; the previous data is kept"
                ))
            })?),
        };
        Ok((page.embedded, next))
    }
}

impl Connector for MollieConnector {
    type Credentials = MollieAuthorization;
    const PLATFORM: &'static str = "Mollie";
    /// Mollie publishes no call numbers (NOTES.md): its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Customers, Orders]
    }

    fn token_endpoint(&self, _credentials: &MollieAuthorization) -> Option<TokenEndpoint> {
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::Basic,
            &self.http,
        ))
    }

    /// Mollie Connect: read scopes of orders and customers, and of the
    /// organization, which `GET /v2/organizations/me` names.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                self.token_url.clone(),
                ClientAuth::Basic,
                &["organizations.read", "orders.read", "customers.read"],
            )
            .with_parameters(&[("approval_prompt", "auto")]),
        )
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let url = format!("{}/v2/organizations/me", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the organization",
            url,
            Auth::Bearer(&grant.access_token),
        )
        .accept(HAL_JSON);
        let organization: MollieOrganization = self.http.json(&call).await?;
        let Some(id) = organization.id else {
            return Err(ConnectorError::Failed(
                "Mollie named no organization".to_owned(),
            ));
        };
        Ok(vec![Organization {
            name: organization.name.unwrap_or_else(|| id.clone()),
            id,
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("organizationId".to_owned(), organization.id.clone().into());
        Value::Object(body)
    }

    /// `GET /v2/organizations/me` must answer the connection's organization.
    async fn verify(&self, credentials: &MollieAuthorization) -> Result<(), ConnectorError> {
        let url = format!("{}/v2/organizations/me", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the organization",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .accept(HAL_JSON);
        let organization: MollieOrganization = self.http.json(&call).await?;
        require_reach(
            &credentials.organization_id,
            organization.id.as_deref(),
            |_| {
                format!(
                    "Mollie accepted the access token, but for another organization than {}",
                    credentials.organization_id
                )
            },
        )
    }
}

impl Syncs<Orders> for MollieConnector {
    async fn page(
        &self,
        credentials: &MollieAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let (embedded, next) = self
            .list::<EmbeddedOrders>(credentials, "a page of orders", "orders", cursor)
            .await?;
        let read = embedded
            .map(|embedded| embedded.orders)
            .unwrap_or_default()
            .read(|order| order.into_record().map(Some));
        Ok(Fetched::read(read, next))
    }
}

impl Syncs<Customers> for MollieConnector {
    async fn page(
        &self,
        credentials: &MollieAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let (embedded, next) = self
            .list::<EmbeddedCustomers>(credentials, "a page of customers", "customers", cursor)
            .await?;
        let read = embedded
            .map(|embedded| embedded.customers)
            .unwrap_or_default()
            .read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_page_starts_from_the_id_in_mollies_next_link() {
        assert_eq!(
            from_of("https://api.mollie.com/v2/orders?from=ord_stTC2WHAuS&limit=5").as_deref(),
            Some("ord_stTC2WHAuS")
        );
        assert_eq!(from_of("https://api.mollie.com/v2/orders?limit=5"), None);
        assert_eq!(from_of("not a url"), None);
    }
}
