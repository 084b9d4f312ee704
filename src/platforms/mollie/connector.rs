//! Mollie's connector: the Orders API (`GET /v2/orders`), the Customers
//! API (`GET /v2/customers`) and each website profile's payments
//! (`GET /v2/profiles`, then `GET /v2/payments?profileId=`), paged by cursor: a page of `limit` records,
//! the next one `from` the record Mollie's `_links.next` names (HAL), with
//! the organization's OAuth access token as a bearer token. Tokens refresh
//! at Mollie's token endpoint (HTTP Basic). Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use serde::de::DeserializeOwned;

use super::MollieAuthorization;
use super::mapping::{
    EmbeddedCustomers, EmbeddedOrders, EmbeddedPayments, EmbeddedProfiles, ListPage,
    Organization as MollieOrganization,
};
use crate::data::customers::{Customer, Customers};
use crate::data::orders::{Order, Orders};
use crate::data::payments::{Payment, Payments};
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
        self.list_of(credentials, what, list, None, cursor).await
    }

    /// [`Self::list`], of one website profile when `profile` is given (an
    /// OAuth token must name one for profile-level lists: `profileId`).
    async fn list_of<E: DeserializeOwned>(
        &self,
        credentials: &MollieAuthorization,
        what: &'static str,
        list: &str,
        profile: Option<&str>,
        cursor: Option<String>,
    ) -> Result<(Option<E>, Option<String>), ConnectorError> {
        let url = format!("{}/v2/{list}", self.api_base);
        let mut call = Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens))
            .accept(HAL_JSON)
            .query("limit", self.page_size);
        if let Some(profile) = profile {
            call = call.query("profileId", profile);
        }
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

impl MollieConnector {
    /// Every website profile of the organization (`GET /v2/profiles`, each
    /// page).
    async fn profiles(
        &self,
        credentials: &MollieAuthorization,
    ) -> Result<Vec<String>, ConnectorError> {
        let mut profiles = Vec::new();
        let mut cursor = None;
        loop {
            let (embedded, next) = self
                .list::<EmbeddedProfiles>(credentials, "the website profiles", "profiles", cursor)
                .await?;
            let listed = embedded
                .map(|embedded| embedded.profiles)
                .unwrap_or_default();
            let read = listed.read(|profile| Ok(Some(profile.id)));
            // A profile left out would lose its payments (flagged deleted):
            // one that cannot be read fails the sync instead.
            if !read.issues.is_empty() {
                return Err(ConnectorError::Failed(format!(
                    "{}: a website profile cannot be read, so its payments cannot be listed; the previous \
                     data is kept",
                    Self::PLATFORM
                )));
            }
            profiles.extend(read.records);
            match next {
                Some(from) => cursor = Some(from),
                None => return Ok(profiles),
            }
        }
    }
}

/// Where a payments sync stands: the profiles left (the first the one being
/// read) and where in the first the next page starts, as one cursor
/// (`from@profile,profile`).
fn payments_cursor(from: Option<&str>, profiles: &[String]) -> Option<String> {
    (!profiles.is_empty()).then(|| format!("{}@{}", from.unwrap_or_default(), profiles.join(",")))
}

impl Connector for MollieConnector {
    type Credentials = MollieAuthorization;
    const PLATFORM: &'static str = "Mollie";
    /// Mollie publishes no call numbers (NOTES.md): its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Customers, Orders, Payments]
    }

    fn token_endpoint(&self, _credentials: &MollieAuthorization) -> Option<TokenEndpoint> {
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::Basic,
            &self.http,
        ))
    }

    /// Mollie Connect: read scopes of orders, customers, website profiles
    /// and payments, and of the organization, which `GET
    /// /v2/organizations/me` names.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                self.token_url.clone(),
                ClientAuth::Basic,
                &[
                    "organizations.read",
                    "orders.read",
                    "customers.read",
                    "profiles.read",
                    "payments.read",
                ],
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

/// Payments, per website profile: an OAuth token lists a profile's payments
/// only with its `profileId`, so the first page lists the profiles and each
/// profile's payments follow, by `from` (NOTES.md, "Payments"). Only paid
/// payments are money received.
impl Syncs<Payments> for MollieConnector {
    async fn page(
        &self,
        credentials: &MollieAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let (profiles, from): (Vec<String>, Option<String>) = match cursor {
            None => (self.profiles(credentials).await?, None),
            Some(cursor) => {
                let (from, profiles) = cursor.split_once('@').ok_or_else(|| {
                    ConnectorError::Failed(format!(
                        "the Mollie payments cursor {cursor:?} names no profile"
                    ))
                })?;
                (
                    profiles.split(',').map(str::to_owned).collect(),
                    crate::platforms::kit::json::non_empty(Some(from.to_owned())),
                )
            }
        };
        let Some(profile) = profiles.first() else {
            return Ok(Fetched::all(Vec::new(), None));
        };
        let (embedded, next) = self
            .list_of::<EmbeddedPayments>(
                credentials,
                "a page of payments",
                "payments",
                Some(profile),
                from,
            )
            .await?;
        let read = embedded
            .map(|embedded| embedded.payments)
            .unwrap_or_default()
            .read(|payment| {
                if payment.is_paid() {
                    payment.into_record().map(Some)
                } else {
                    Ok(None)
                }
            });
        let next = match next {
            Some(from) => payments_cursor(Some(&from), &profiles),
            None => payments_cursor(None, &profiles[1..]),
        };
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
