//! Zettle's connector: the Purchase API v2 (`GET /purchases/v2`), paged
//! oldest first (`descending=false`) by `limit` and the previous page's
//! `lastPurchaseHash` until a page comes back empty, with the
//! organization's OAuth access token as a bearer token. The hash the empty
//! page was asked after is where new purchases will follow: it is kept with
//! the watermark, and the next sync asks only what came after it. Refund
//! purchases are not orders: they make the purchases they refund `Refunded`
//! or `PartiallyRefunded`, read from the same page or by id
//! (`GET /purchase/v2/{uuid}`), and a refund whose purchase is not on its
//! page has that purchase fetched by id and sent again with its refunds.
//! Tokens refresh at Zettle's OAuth host (client credentials in the form
//! body), where `GET /users/self` verifies the organization. Sources:
//! `NOTES.md`.

use super::ZettleAuthorization;
use super::mapping::{Purchase, PurchasePage, UserSelf, refunds_by_original};
use crate::data::money::Money;
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher,
    RecordIssue, Since, Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::limits::Limits;
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::{self, Each, Named, Read, Unreadable};
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Purchases asked for per page by default: Zettle's largest `limit`
/// (1–1000; Z1 warns only against asking for every purchase at once).
pub const PAGE_SIZE: u64 = MAX_PAGE_SIZE;
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

/// One purchase fetched by id: read, unreadable (its issue), or `None`
/// when Zettle has no such purchase (404: older than its three years).
type ById = Option<Result<(Purchase, Named), RecordIssue>>;

impl ZettleConnector {
    /// One purchase by id (`GET /purchase/v2/{uuid}`, Z1 "Fetch purchase by
    /// id"), `what` naming it in messages.
    async fn purchase(
        &self,
        credentials: &ZettleAuthorization,
        id: &str,
        what: &'static str,
    ) -> Result<ById, ConnectorError> {
        let url = format!("{}/purchase/v2/{id}", self.api_base);
        let call = Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens));
        let answer: Option<Box<RawValue>> = self.http.json_if_found(&call).await?;
        Ok(answer.map(|answer| records::single::<Purchase>(&answer)))
    }

    /// What refund purchase `id` (not on the page of the purchase it
    /// refunds) gave back, or why it cannot be known (which makes the
    /// purchase it refunds unreadable too).
    async fn refunded_by(
        &self,
        credentials: &ZettleAuthorization,
        id: &str,
    ) -> Result<Result<Money, Unreadable>, ConnectorError> {
        Ok(
            match self.purchase(credentials, id, "a refund purchase").await? {
                Some(Ok((refund, _))) => refund.refunded_amount(),
                Some(Err(issue)) => Err(Unreadable::field(
                    "refundedByPurchaseUUIDs1",
                    format!("a refund purchase cannot be read: {}", issue.reason),
                )),
                None => Err(Unreadable::field(
                    "refundedByPurchaseUUIDs1",
                    "Zettle has no refund purchase by that id",
                )),
            },
        )
    }

    /// The page of purchases after `after` (a `lastPurchaseHash`; from the
    /// oldest Zettle keeps without one), oldest first. An empty page ends
    /// the fetch and says where the next one resumes: the hash it was asked
    /// after, the last page's, or none when Zettle has no purchase at all.
    async fn purchases(
        &self,
        credentials: &ZettleAuthorization,
        after: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let url = format!("{}/purchases/v2", self.api_base);
        let mut call = Call::get(
            Self::PLATFORM,
            "a page of purchases",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .query("limit", self.page_size)
        // Oldest first, so that the last page's hash is where new purchases follow.
        .query("descending", "false");
        let sent = match NextLink::from_cursor(after) {
            NextLink::Given(hash) => {
                call = call.query("lastPurchaseHash", hash.clone());
                Some(hash)
            }
            NextLink::First => None,
        };
        let page: PurchasePage = self.http.json(&call).await?;
        // "Continue ... until you receive an empty result."
        if page.purchases.is_empty() {
            return Ok(Fetched::all(Vec::new(), None).resuming(sent));
        }
        let next = match NextLink::next(page.last_purchase_hash.clone()) {
            Some(hash) if Some(&hash) != sent.as_ref() => hash,
            _ => {
                return Err(ConnectorError::Failed(
                    "Zettle answered a page of purchases without a new lastPurchaseHash; the previous data is kept"
                        .to_owned(),
                ));
            }
        };
        let read = self.orders(credentials, page.purchases).await?;
        Ok(Fetched::read(read, Some(next)))
    }

    /// The orders of a page of purchases. A refund purchase is not an
    /// order: what it gave back counts in the purchase it refunds, and when
    /// that purchase is not on this page (an earlier page or sync had it),
    /// it is fetched by id and sent again with every refund it lists, so
    /// that its status follows refunds that arrive after it.
    async fn orders(
        &self,
        credentials: &ZettleAuthorization,
        page: Each<Purchase>,
    ) -> Result<Read<Order>, ConnectorError> {
        let mut read = Read::default();
        let mut readable = Vec::with_capacity(page.len());
        let mut on_page = HashSet::new();
        // A refund purchase of this page that cannot be read is not asked
        // for again: the purchase it refunds cannot be read either.
        let mut refunded_by = HashMap::new();
        for entry in page.entries() {
            match entry {
                Ok((purchase, named)) => {
                    on_page.extend(purchase.id());
                    readable.push((purchase, named));
                }
                Err(issue) => {
                    if let Some(id) = &issue.record_id {
                        on_page.insert(id.clone());
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
        let (refunds, mut purchases): (Vec<_>, Vec<_>) = readable
            .into_iter()
            .partition(|(purchase, _)| purchase.refund);
        refunded_by.extend(refunds_by_original(
            refunds.iter().map(|(refund, _)| refund),
        ));
        let elsewhere: BTreeSet<String> = refunds
            .iter()
            .filter_map(|(refund, _)| refund.refunds())
            .filter(|original| !on_page.contains(original))
            .collect();
        for original in elsewhere {
            match self
                .purchase(credentials, &original, "a refunded purchase")
                .await?
            {
                Some(Ok((purchase, named))) if !purchase.refund => {
                    purchases.push((purchase, named))
                }
                // A refund naming a refund: no order to update.
                Some(Ok(_)) => {}
                Some(Err(issue)) => read.issues.push(issue),
                // Past Zettle's three years: nothing to read it from, and
                // its copy, if any, stays as it was.
                None => tracing::warn!(
                    purchase = %original,
                    "Zettle no longer has a purchase refunded since; its copy is kept as it was"
                ),
            }
        }
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
        Ok(read)
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

/// Purchases are immutable and never deleted (Z1); what changes an order
/// is a refund, which arrives as a new purchase after the stored hash and
/// sends its purchase again ([`ZettleConnector::orders`]). Nothing to
/// reconcile, so no periodic full fetch (`?full=true` still runs one).
const ORDER_CHANGES: Option<Changes> = Some(Changes::with(Deletions::InChanges));

impl Syncs<Orders> for ZettleConnector {
    const CHANGES: Option<Changes> = ORDER_CHANGES;

    /// Every purchase, oldest first; the last page's hash is kept.
    async fn page(
        &self,
        credentials: &ZettleAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.purchases(credentials, cursor).await
    }

    /// The purchases after the hash the last published sync ended with
    /// (Zettle's own watermark: no clock, so `since.time` is not used).
    /// Without one (a sync from before hashes were kept, or no purchase
    /// then) every purchase, so that nothing is skipped.
    async fn changed_page(
        &self,
        credentials: &ZettleAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.purchases(credentials, cursor.or(since.cursor)).await
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
