//! Zettle's connector: the Purchase API v2 (`GET /purchases/v2`), paged by
//! `limit` and the previous page's `lastPurchaseHash` until a page comes
//! back empty, most recent first (`descending=true`), with the
//! organization's OAuth access token as a bearer token. Refund purchases
//! are not orders: they make the purchases they refund `Refunded` or
//! `PartiallyRefunded`, read from the same page or by id
//! (`GET /purchase/v2/{uuid}`). Tokens refresh at Zettle's OAuth host
//! (client credentials in the form body), where `GET /users/self` verifies
//! the organization. Sources: `NOTES.md`.

use super::ZettleAuthorization;
use super::mapping::{Purchase, PurchasePage, UserSelf, refunds_by_original};
use crate::data::money::Money;
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::limits::Limits;
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::{self, Read, Unreadable};
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;

/// Purchases asked for per page by default (Zettle allows 1–1000 and
/// warns against large pages).
pub const PAGE_SIZE: u64 = 200;
/// Zettle's largest `limit`.
const MAX_PAGE_SIZE: u64 = 1000;

const API_BASE: &str = "https://purchase.izettle.com";
const TOKEN_URL: &str = "https://oauth.zettle.com/token";
const AUTHORIZE_URL: &str = "https://oauth.zettle.com/authorize";

/// The Zettle connector.
#[derive(Debug)]
pub struct ZettleConnector {
    api_base: String,
    token_url: String,
    authorize_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for ZettleConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            token_url: config.token_url_or(TOKEN_URL),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            page_size: config.page_size_or(PAGE_SIZE, MAX_PAGE_SIZE),
            http,
        }
    }
}

/// `GET /users/self` on the OAuth host: the token URL's host and path
/// without its final `/token`.
fn user_url(token_url: &str) -> String {
    let base = token_url.trim_end_matches('/');
    let base = base.strip_suffix("/token").unwrap_or(base);
    format!("{base}/users/self")
}

impl ZettleConnector {
    /// One purchase by id (`GET /purchase/v2/{uuid}`): a refund purchase
    /// not on the page of the purchase it refunds.
    /// What refund purchase `id` gave back, or why it cannot be read (which
    /// makes the purchase it refunds unreadable too).
    async fn refunded_by(
        &self,
        credentials: &ZettleAuthorization,
        id: &str,
    ) -> Result<Result<Money, Unreadable>, ConnectorError> {
        let url = format!("{}/purchase/v2/{id}", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "a refund purchase",
            url,
            Auth::bearer(&credentials.tokens),
        );
        let answer: Box<RawValue> = self.http.json(&call).await?;
        Ok(match records::single::<Purchase>(&answer) {
            Ok((refund, _)) => refund.refunded_amount(),
            Err(issue) => Err(Unreadable::field(
                "refundedByPurchaseUUIDs1",
                format!("a refund purchase cannot be read: {}", issue.reason),
            )),
        })
    }
}

impl Connector for ZettleConnector {
    type Credentials = ZettleAuthorization;
    const PLATFORM: &'static str = "Zettle";
    /// Zettle publishes no call numbers (NOTES.md): its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Orders]
    }

    fn token_endpoint(&self, _credentials: &ZettleAuthorization) -> Option<TokenEndpoint> {
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// Zettle's code flow: purchases and the user's organization
    /// (`GET /users/self` on the OAuth host names it).
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(LinkSpec::code_flow(
            self.authorize_url.clone(),
            self.token_url.clone(),
            ClientAuth::RequestBody,
            &["READ:PURCHASE", "READ:USERINFO"],
        ))
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let call = Call::get(
            Self::PLATFORM,
            "the user",
            user_url(&self.token_url),
            Auth::Bearer(&grant.access_token),
        );
        let user: UserSelf = self.http.json(&call).await?;
        let Some(organization) = user.organization_uuid else {
            return Err(ConnectorError::Failed(
                "Zettle named no organization".to_owned(),
            ));
        };
        Ok(vec![Organization {
            name: organization.clone(),
            id: organization,
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert(
            "organizationUuid".to_owned(),
            organization.id.clone().into(),
        );
        Value::Object(body)
    }

    /// `GET https://oauth.zettle.com/users/self` must answer the
    /// connection's `organizationUuid`.
    async fn verify(&self, credentials: &ZettleAuthorization) -> Result<(), ConnectorError> {
        let call = Call::get(
            Self::PLATFORM,
            "the user",
            user_url(&self.token_url),
            Auth::bearer(&credentials.tokens),
        );
        let user: UserSelf = self.http.json(&call).await?;
        let wanted = credentials.organization_uuid.to_string();
        require_reach(&wanted, user.organization_uuid.as_deref(), |_| {
            format!("Zettle accepted the access token, but for another organization than {wanted}")
        })
    }
}

impl Syncs<Orders> for ZettleConnector {
    async fn page(
        &self,
        credentials: &ZettleAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let url = format!("{}/purchases/v2", self.api_base);
        let mut call = Call::get(
            Self::PLATFORM,
            "a page of purchases",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .query("limit", self.page_size)
        .query("descending", "true");
        let sent = match NextLink::from_cursor(cursor) {
            NextLink::Given(hash) => {
                call = call.query("lastPurchaseHash", hash.clone());
                Some(hash)
            }
            NextLink::First => None,
        };
        let page: PurchasePage = self.http.json(&call).await?;
        // "Continue ... until you receive an empty result."
        let next = if page.purchases.is_empty() {
            None
        } else {
            match NextLink::next(page.last_purchase_hash.clone()) {
                Some(hash) if Some(&hash) != sent.as_ref() => Some(hash),
                _ => {
                    return Err(ConnectorError::Failed(
                        "Zettle answered a page of purchases without a new lastPurchaseHash; the previous data is kept"
                            .to_owned(),
                    ));
                }
            }
        };
        let mut read = Read::default();
        let mut readable = Vec::with_capacity(page.purchases.len());
        // A refund purchase of this page that cannot be read is not asked
        // for again: the purchase it refunds cannot be read either.
        let mut refunded_by = HashMap::new();
        for entry in page.purchases.entries() {
            match entry {
                Ok(purchase) => readable.push(purchase),
                Err(issue) => {
                    if let Some(id) = &issue.record_id {
                        let problem = Unreadable::field(
                            "refundedByPurchaseUUIDs1",
                            "a refund purchase cannot be read",
                        );
                        refunded_by.insert(id.clone(), Err(problem));
                    }
                    read.issues.push(issue);
                }
            }
        }
        let (refunds, purchases): (Vec<_>, Vec<_>) = readable
            .into_iter()
            .partition(|(purchase, _)| purchase.refund);
        refunded_by.extend(refunds_by_original(
            refunds.iter().map(|(refund, _)| refund),
        ));
        for (purchase, named) in purchases {
            let mut refunded: Result<Option<Money>, Unreadable> = Ok(None);
            for refund_id in purchase.refunded_by.clone() {
                let amount = match refunded_by.get(&refund_id) {
                    Some(amount) => amount.clone(),
                    None => {
                        let amount = self.refunded_by(credentials, &refund_id).await?;
                        refunded_by.insert(refund_id, amount.clone());
                        amount
                    }
                };
                refunded = refunded.and_then(|so_far| {
                    amount.map(|amount| Some(so_far.unwrap_or_default() + amount))
                });
            }
            match refunded.and_then(|refunded| purchase.into_record(refunded)) {
                Ok(record) => read.records.push(record),
                Err(problem) => read.issues.push(named.issue(problem)),
            }
        }
        Ok(Fetched::read(read, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_is_asked_of_the_token_urls_host() {
        assert_eq!(
            user_url("https://oauth.zettle.com/token"),
            "https://oauth.zettle.com/users/self"
        );
        assert_eq!(
            user_url("http://127.0.0.1:4000/token/"),
            "http://127.0.0.1:4000/users/self"
        );
    }
}
