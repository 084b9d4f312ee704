//! Stripe's connector: the connected account's invoices (`GET /v1/invoices`,
//! with any lines beyond the embedded ones from `GET
//! /v1/invoices/{id}/lines`) and customers (`GET /v1/customers`), `limit`
//! paged by `starting_after=<last id>` while `has_more`, with the Connect
//! OAuth access token (the account's own secret key) as a bearer token and
//! the API version pinned by `Stripe-Version`. The token does not expire: it
//! is refreshed only after a 401 and only when the authorization holds a
//! refresh token (at `connect.stripe.com/oauth/token`, the platform's secret
//! key as `client_secret`). Payments are its succeeded charges (`GET
//! /v1/charges`) and refunds (`GET /v1/refunds`), company info its account
//! (`GET /v1/account`). Sources: `NOTES.md`.

use super::StripeAuthorization;
use super::mapping::{Account, List, StripeCustomer, StripeInvoice, StripeLine};
use super::money_in::{StripeAccount, StripeCharge, StripeRefund};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::payments::{Payment, Payments};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::limits::Limits;
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::records::{Read, Unreadable};
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// Records asked for per page by default: Stripe's maximum.
pub const PAGE_SIZE: u64 = 100;
/// The API version every call asks for (the field set `mapping` reads).
pub const API_VERSION: &str = "2024-06-20";

const API_BASE: &str = "https://api.stripe.com";
const TOKEN_URL: &str = "https://connect.stripe.com/oauth/token";
const AUTHORIZE_URL: &str = "https://connect.stripe.com/oauth/authorize";

/// The Stripe connector.
#[derive(Debug)]
pub struct StripeConnector {
    api_base: String,
    token_url: String,
    authorize_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for StripeConnector {
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

impl StripeConnector {
    /// `GET /v1/<path>` as the connected account.
    fn get<'a>(
        &self,
        credentials: &'a StripeAuthorization,
        path: &str,
        what: &'static str,
    ) -> Call<'a> {
        Call::get(
            Self::PLATFORM,
            what,
            format!("{}/v1/{path}", self.api_base),
            Auth::Bearer(credentials.token.access_token.expose()),
        )
        .header("stripe-version", API_VERSION)
    }

    /// One page of a list: `limit` records after `cursor` (an object id).
    fn list<'a>(
        &self,
        credentials: &'a StripeAuthorization,
        path: &str,
        what: &'static str,
        cursor: Option<String>,
    ) -> Call<'a> {
        let call = self
            .get(credentials, path, what)
            .query("limit", self.page_size);
        match cursor {
            Some(after) => call.query("starting_after", after),
            None => call,
        }
    }

    /// The lines of `invoice` after the embedded ones, when Stripe says there
    /// are more than it embedded; a line that cannot be read makes the
    /// invoice unreadable (`Ok(Err(..))`).
    async fn remaining_lines(
        &self,
        credentials: &StripeAuthorization,
        invoice: &str,
        mut lines: Vec<StripeLine>,
    ) -> Result<Result<Vec<StripeLine>, Unreadable>, ConnectorError> {
        loop {
            let after = lines.last().and_then(|line| line.id.clone());
            let path = format!("invoices/{invoice}/lines");
            let page: List<StripeLine> = self
                .http
                .json(&self.list(credentials, &path, "an invoice's lines", after.clone()))
                .await?;
            let more = page.has_more && !page.data.is_empty();
            match page.data.all("lines.data") {
                Ok(read) => lines.extend(read),
                Err(problem) => return Ok(Err(problem)),
            }
            let advanced = lines.last().and_then(|line| line.id.clone());
            if !more || advanced.is_none() || advanced == after {
                return Ok(Ok(lines));
            }
        }
    }
}

/// The cursor after a page: the last object's id, while Stripe has more.
fn next_cursor(has_more: bool, last: Option<&str>) -> Option<String> {
    if has_more {
        last.map(str::to_owned)
    } else {
        None
    }
}

impl Connector for StripeConnector {
    type Credentials = StripeAuthorization;
    const PLATFORM: &'static str = "Stripe";
    /// Stripe: 25 calls a second per endpoint (within 100 a second in live mode, 25 in a sandbox)
    /// (NOTES.md).
    const LIMITS: Limits = Limits::per_second(25);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Customers, Payments, CompanyInfos]
    }

    /// Only a connection holding a refresh token can be refreshed; Connect
    /// access tokens never expire, so this is used after a 401 alone.
    fn token_endpoint(&self, credentials: &StripeAuthorization) -> Option<TokenEndpoint> {
        credentials.refresh_token.as_ref()?;
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// Stripe Connect OAuth (Standard accounts): `read_write` (`read_only`
    /// is for Stripe Apps only); the connected account is the token answer's
    /// `stripe_user_id`.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(LinkSpec::code_flow(
            self.authorize_url.clone(),
            self.token_url.clone(),
            ClientAuth::RequestBody,
            &["read_write"],
        ))
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let Some(account) = grant.token_field("stripe_user_id") else {
            return Err(ConnectorError::Failed(
                "Stripe's token answer names no account (`stripe_user_id`)".to_owned(),
            ));
        };
        Ok(vec![Organization {
            id: account.to_owned(),
            name: account.to_owned(),
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = serde_json::Map::new();
        body.insert("stripeUserId".to_owned(), organization.id.clone().into());
        body.insert("accessToken".to_owned(), grant.access_token.clone().into());
        if let Some(refresh_token) = &grant.refresh_token {
            body.insert("refreshToken".to_owned(), refresh_token.clone().into());
        }
        Value::Object(body)
    }

    /// `GET /v1/account` names the account the token belongs to: it must be
    /// the connection's `stripeUserId`.
    async fn verify(&self, credentials: &StripeAuthorization) -> Result<(), ConnectorError> {
        let account: Account = self
            .http
            .json(&self.get(credentials, "account", "the account"))
            .await?;
        let wanted = &credentials.stripe_user_id;
        require_reach(wanted, [account.id.as_str()], |_| {
            format!(
                "Stripe accepted the access token, but it belongs to account {}, not {wanted}",
                account.id
            )
        })
    }
}

impl Syncs<Invoices> for StripeConnector {
    async fn page(
        &self,
        credentials: &StripeAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let call = self.list(credentials, "invoices", "a page of invoices", cursor);
        let page: List<StripeInvoice> = self.http.json(&call).await?;
        let next = next_cursor(page.has_more, page.data.last_id().as_deref());
        let mut read = Read::default();
        for entry in page.data.entries() {
            let (mut invoice, named) = match entry {
                Ok(readable) => readable,
                Err(issue) => {
                    read.issues.push(issue);
                    continue;
                }
            };
            let lines = match invoice.lines.take() {
                Some(lines) => {
                    let more = lines.has_more;
                    match lines.data.all("lines.data") {
                        Ok(embedded) if more => {
                            self.remaining_lines(credentials, &invoice.id, embedded)
                                .await?
                        }
                        embedded => embedded,
                    }
                }
                None => Ok(Vec::new()),
            };
            match lines.and_then(|lines| invoice.into_record(lines)) {
                Ok(record) => read.records.push(record),
                Err(problem) => read.issues.push(named.issue(problem)),
            }
        }
        Ok(Fetched::read(read, next))
    }
}

impl Syncs<Customers> for StripeConnector {
    async fn page(
        &self,
        credentials: &StripeAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let call = self.list(credentials, "customers", "a page of customers", cursor);
        let page: List<StripeCustomer> = self.http.json(&call).await?;
        let next = next_cursor(page.has_more, page.data.last_id().as_deref());
        let read = page.data.read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, next))
    }
}

/// Payments are two lists in turn: the charges, then the refunds. A cursor
/// names the list and, past its first page, the last object read
/// (`charges:ch_…`, `refunds`, `refunds:re_…`).
fn payments_cursor(list: &str, next: Option<String>) -> Option<String> {
    match (list, next) {
        (_, Some(after)) => Some(format!("{list}:{after}")),
        ("charges", None) => Some("refunds".to_owned()),
        (_, None) => None,
    }
}

/// Succeeded charges as payments, then succeeded refunds as negative ones;
/// both lists whole on every sync (a charge is refunded, or a pending one
/// succeeds, long after it was created, which is all Stripe filters on).
impl Syncs<Payments> for StripeConnector {
    async fn page(
        &self,
        credentials: &StripeAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let (list, after) = match cursor.as_deref() {
            None => ("charges", None),
            Some(cursor) => match cursor.split_once(':') {
                Some((list @ ("charges" | "refunds"), after)) => (list, Some(after.to_owned())),
                None if cursor == "refunds" => ("refunds", None),
                _ => {
                    return Err(ConnectorError::Failed(format!(
                        "the Stripe payments cursor {cursor:?} names neither charges nor refunds"
                    )));
                }
            },
        };
        if list == "charges" {
            let call = self.list(credentials, "charges", "a page of charges", after);
            let page: List<StripeCharge> = self.http.json(&call).await?;
            let next = next_cursor(page.has_more, page.data.last_id().as_deref());
            let read = page.data.read(|charge| {
                if charge.is_money_in() {
                    charge.into_record().map(Some)
                } else {
                    Ok(None)
                }
            });
            Ok(Fetched::read(read, payments_cursor("charges", next)))
        } else {
            let call = self.list(credentials, "refunds", "a page of refunds", after);
            let page: List<StripeRefund> = self.http.json(&call).await?;
            let next = next_cursor(page.has_more, page.data.last_id().as_deref());
            let read = page.data.read(|refund| {
                if refund.is_money_out() {
                    refund.into_record().map(Some)
                } else {
                    Ok(None)
                }
            });
            Ok(Fetched::read(read, payments_cursor("refunds", next)))
        }
    }
}

/// The connected account, one call.
impl Syncs<CompanyInfos> for StripeConnector {
    async fn page(
        &self,
        credentials: &StripeAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let account: StripeAccount = self
            .http
            .json(&self.get(credentials, "account", "the account"))
            .await?;
        Ok(Fetched::all(vec![account.into_record()], None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_page_starts_after_the_last_object_while_stripe_has_more() {
        assert_eq!(next_cursor(true, Some("in_3")).as_deref(), Some("in_3"));
        assert_eq!(next_cursor(false, Some("in_3")), None);
        assert_eq!(next_cursor(true, None), None);
    }
}
