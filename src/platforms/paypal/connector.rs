//! PayPal's connector: the merchant's invoices from the Invoicing API v2 —
//! `GET /v2/invoicing/invoices?page=&page_size=&total_required=true` (1-based
//! pages while `page < total_pages`) for their ids, then `GET
//! /v2/invoicing/invoices/{id}` for each one's amounts, items and payments
//! (the list gives only summaries) — on the live or sandbox host as the
//! authorization's `environment` says, with the merchant's access token as
//! a bearer token. Tokens refresh at that host's `/v1/oauth2/token` (HTTP
//! Basic); PayPal does not rotate the refresh token. PayPal has no
//! customers API. Payments are the invoices' recorded payments and refunds,
//! read from the same details ([`super::payments`]). Sources: `NOTES.md`.

use super::PayPalAuthorization;
use super::mapping::{InvoicesPage, PayPalInvoice};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::payments::{Payment, Payments};
use crate::platforms::authorization::Environment;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::limits::Limits;
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::{self, Read, Unreadable};
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::value::RawValue;

/// The live API.
pub const API_BASE: &str = "https://api-m.paypal.com";
/// The sandbox API.
pub const SANDBOX_API_BASE: &str = "https://api-m.sandbox.paypal.com";
/// The token endpoint's path on either host.
const TOKEN_PATH: &str = "/v1/oauth2/token";
/// Log in with PayPal's authorize step (live accounts).
const AUTHORIZE_URL: &str = "https://www.paypal.com/signin/authorize";
/// What Log in with PayPal is asked for: the account's attributes (its
/// `payer_id`) and the Invoicing API.
const LINK_SCOPES: &[&str] = &[
    "openid",
    "https://uri.paypal.com/services/paypalattributes",
    "https://uri.paypal.com/services/invoicing",
];
/// Invoices asked for per page by default (the largest page size PayPal
/// documents for its invoice searches).
pub const PAGE_SIZE: u64 = 100;

/// The PayPal connector.
#[derive(Debug)]
pub struct PayPalConnector {
    api_base: Option<String>,
    authorize_url: String,
    token_url: Option<String>,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for PayPalConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://api-m.paypal.com or https://api-m.sandbox.paypal.com",
    );
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://api-m.paypal.com/v1/oauth2/token or \
         https://api-m.sandbox.paypal.com/v1/oauth2/token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            token_url: config.token_url.clone(),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

/// The host of the connection's environment.
fn environment_host(credentials: &PayPalAuthorization) -> &'static str {
    match credentials.environment {
        Environment::Production => API_BASE,
        Environment::Sandbox => SANDBOX_API_BASE,
    }
}

/// The page after `page` of `total_pages`; when PayPal gives no total, the
/// next one while pages come back full.
fn next_page(
    page: PageNumber,
    total_pages: Option<u64>,
    returned: usize,
    size: u64,
) -> Option<String> {
    let more = match total_pages {
        Some(total) => page.0 < total && returned > 0,
        None => returned as u64 >= size && returned > 0,
    };
    page.next(more)
}

impl PayPalConnector {
    /// `GET <path>` of the connection's host, fetching `what`.
    fn get<'a>(
        &self,
        credentials: &'a PayPalAuthorization,
        path: &str,
        what: &'static str,
    ) -> Call<'a> {
        let base = self
            .api_base
            .as_deref()
            .unwrap_or_else(|| environment_host(credentials));
        Call::get(
            Self::PLATFORM,
            what,
            format!("{base}{path}"),
            Auth::bearer(&credentials.tokens),
        )
    }

    /// One page of the invoice list.
    fn list<'a>(&self, credentials: &'a PayPalAuthorization, page: u64, size: u64) -> Call<'a> {
        self.get(credentials, "/v2/invoicing/invoices", "a page of invoices")
            .query("page", page)
            .query("page_size", size)
            .query("total_required", "true")
    }
}

impl Connector for PayPalConnector {
    type Credentials = PayPalAuthorization;
    const PLATFORM: &'static str = "PayPal";
    /// PayPal publishes no call numbers (NOTES.md): its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Payments]
    }

    /// Log in with PayPal (`flowEntry=static`), live accounts; the code is
    /// exchanged with the client in HTTP Basic.
    fn link_spec(&self) -> Option<LinkSpec> {
        let token_url = self
            .token_url
            .clone()
            .unwrap_or_else(|| format!("{API_BASE}{TOKEN_PATH}"));
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                token_url,
                ClientAuth::Basic,
                LINK_SCOPES,
            )
            .with_parameters(&[("flowEntry", "static")]),
        )
    }

    /// `GET /v1/identity/oauth2/userinfo?schema=paypalv1.1`: the account's
    /// `payer_id` (one account per consent) and its business name.
    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let base = self.api_base.as_deref().unwrap_or(API_BASE);
        let call = Call::get(
            Self::PLATFORM,
            "the account's identity",
            format!("{base}/v1/identity/oauth2/userinfo"),
            Auth::Bearer(&grant.access_token),
        )
        .query("schema", "paypalv1.1");
        let user: serde_json::Value = self.http.json(&call).await?;
        let Some(payer) = user.get("payer_id").and_then(serde_json::Value::as_str) else {
            return Err(ConnectorError::Failed(
                "PayPal's userinfo named no account (`payer_id`)".to_owned(),
            ));
        };
        let name = ["business_name", "name"]
            .iter()
            .find_map(|field| user.get(*field).and_then(serde_json::Value::as_str))
            .unwrap_or(payer);
        Ok(vec![Organization {
            id: payer.to_owned(),
            name: name.to_owned(),
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        body.insert("payerId".to_owned(), organization.id.clone().into());
        body.insert("environment".to_owned(), "production".into());
        serde_json::Value::Object(body)
    }

    fn token_endpoint(&self, credentials: &PayPalAuthorization) -> Option<TokenEndpoint> {
        let url = self
            .token_url
            .clone()
            .unwrap_or_else(|| format!("{}{TOKEN_PATH}", environment_host(credentials)));
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &url,
            ClientAuth::Basic,
            &self.http,
        ))
    }

    /// One invoice of the merchant's (`page_size=1`): proves the token and
    /// its invoicing scope. The list names no payer id to compare (that
    /// needs the identity API and a scope migrated tokens may lack).
    async fn verify(&self, credentials: &PayPalAuthorization) -> Result<(), ConnectorError> {
        let _: InvoicesPage = self.http.json(&self.list(credentials, 1, 1)).await?;
        Ok(())
    }
}

impl PayPalConnector {
    /// A page of the invoice list, each invoice read from its detail and
    /// turned into records by `records` (an invoice, or its payments); an
    /// invoice that cannot be read is the page's issue, the rest kept.
    async fn details<R>(
        &self,
        credentials: &PayPalAuthorization,
        cursor: Option<String>,
        records: impl Fn(PayPalInvoice) -> Result<Vec<R>, Unreadable>,
    ) -> Result<(Read<R>, Option<String>, Option<u64>), ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let list: InvoicesPage = self
            .http
            .json(&self.list(credentials, page.0, self.page_size))
            .await?;
        let next = next_page(page, list.total_pages, list.items.len(), self.page_size);
        let mut read = Read::default();
        for entry in list.items.entries() {
            let summary = match entry {
                Ok((summary, _)) => summary,
                Err(issue) => {
                    read.issues.push(issue);
                    continue;
                }
            };
            let path = format!("/v2/invoicing/invoices/{}", summary.id);
            let answer: Box<RawValue> = self
                .http
                .json(&self.get(credentials, &path, "an invoice"))
                .await?;
            match records::single::<PayPalInvoice>(&answer) {
                Ok((invoice, named)) => match records(invoice) {
                    Ok(found) => read.records.extend(found),
                    Err(problem) => read.issues.push(named.issue(problem)),
                },
                Err(issue) => read.issues.push(issue),
            }
        }
        Ok((read, next, list.total_items))
    }
}

impl Syncs<Invoices> for PayPalConnector {
    async fn page(
        &self,
        credentials: &PayPalAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let (read, next, total) = self
            .details(credentials, cursor, |invoice| {
                invoice.into_record().map(|record| vec![record])
            })
            .await?;
        Ok(Fetched::read(read, next).of_total(total))
    }
}

/// Payments are read from the same invoice details as invoices (the
/// Invoicing API lists no payments of its own): the same calls again, each
/// invoice giving its payments and refunds. PayPal's list has no
/// modified-since filter, so both are fetched whole.
impl Syncs<Payments> for PayPalConnector {
    async fn page(
        &self,
        credentials: &PayPalAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let (read, next, _) = self
            .details(credentials, cursor, PayPalInvoice::into_payments)
            .await?;
        Ok(Fetched::read(read, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_total_pages_or_else_full_pages() {
        assert_eq!(
            next_page(PageNumber(1), Some(3), 100, 100).as_deref(),
            Some("2")
        );
        assert_eq!(next_page(PageNumber(3), Some(3), 100, 100), None);
        assert_eq!(next_page(PageNumber(1), Some(3), 0, 100), None);
        assert_eq!(
            next_page(PageNumber(1), None, 100, 100).as_deref(),
            Some("2")
        );
        assert_eq!(next_page(PageNumber(1), None, 40, 100), None);
    }
}
