//! The authorization body of each platform that supports self-service
//! migration: the platform's own organization identifier, named the way its
//! API names it, plus the OAuth tokens your application holds.
//!
//! These types are the source of the `...Authorization` schemas in
//! `openapi.yaml` and of `authorizationSchema` in `GET /integrations/{key}`;
//! their doc comments are the documentation partners read.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Deserialize;
use uuid::Uuid;

use super::numbers::{InvoiceCount, Seconds, Seed, WholeNumber};
use super::tokens::{ExpiringTokens, Expiry, LongLivedToken, Secret, expiry};
use crate::error::FieldError;

/// What every authorization body tells us beyond its tokens.
pub trait AuthorizationBody: serde::de::DeserializeOwned + JsonSchema {
    /// The platform's organization identifier, shown on the connection.
    fn organization_id(&self) -> String;
    /// When the access token expires; an error names the field at fault.
    fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError>;
}

/// Which of a platform's environments the tokens belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    /// Live data (the default).
    #[default]
    Production,
    /// The platform's developer sandbox.
    Sandbox,
}

/// Xero: a connection to one Xero organisation.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct XeroAuthorization {
    /// The organisation's tenant id (`tenantId` in `GET https://api.xero.com/connections`), sent as the `xero-tenant-id` header.
    pub tenant_id: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// QuickBooks Online: a connection to one QuickBooks company.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuickBooksOnlineAuthorization {
    /// The company's realm id (`realmId` on the OAuth redirect), used in API paths `/v3/company/{realmId}`.
    #[schemars(regex(pattern = r"^[0-9]{1,32}$"))]
    pub realm_id: String,
    /// `production` (default) or `sandbox` (Intuit's sandbox companies).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// FreeAgent: a connection to one FreeAgent company (tokens are per company).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FreeAgentAuthorization {
    /// The company's FreeAgent subdomain (`subdomain` in `GET /v2/company`), e.g. `acme` for acme.freeagent.com.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub subdomain: String,
    /// `production` (default) or `sandbox` (api.sandbox.freeagent.com).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// FreshBooks: a connection to one FreshBooks business.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FreshBooksAuthorization {
    /// The accounting account id (`account_id` of the business in `GET /auth/api/v1/users/me`), used in `/accounting/account/{accountId}/...`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9]{1,32}$"))]
    pub account_id: String,
    /// The business id (`business_memberships[].business.id`), used by the projects and time-tracking APIs.
    pub business_id: Option<WholeNumber>,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
}

/// Sage Business Cloud Accounting: a connection to one Sage business.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SageBusinessCloudAuthorization {
    /// The business id (`id` in `GET /v3.1/businesses`, 32 hexadecimal characters), sent as the `X-Business` header.
    #[schemars(regex(pattern = r"^[0-9a-f]{32}$"))]
    pub business_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Oracle NetSuite: a connection to one NetSuite account.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetSuiteAuthorization {
    /// The account id (e.g. `1234567` or `1234567_SB1` for a sandbox), as in `https://<accountId>.suitetalk.api.netsuite.com`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub account_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Dynamics 365 Business Central: a connection to one company of one environment.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BusinessCentralAuthorization {
    /// The Microsoft Entra tenant (directory) id or domain that owns the environment.
    #[schemars(length(min = 1, max = 256))]
    pub tenant_id: String,
    /// The environment name, e.g. `production`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub environment_name: String,
    /// The company id (`id` in `GET .../api/v2.0/companies`).
    pub company_id: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// MYOB Business (AccountRight): a connection to one company file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MyobAuthorization {
    /// The company file id (`Id` in `GET https://api.myob.com/accountright/`).
    pub company_file_id: Uuid,
    /// The company file URI (`Uri` in the same list), e.g. `https://arl2.api.myob.com/accountright/<id>`.
    #[schemars(url, length(max = 2048))]
    pub company_file_uri: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Exact Online's country sites: tokens and data live on one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExactRegion {
    /// start.exactonline.nl
    Nl,
    /// start.exactonline.be
    Be,
    /// start.exactonline.de
    De,
    /// start.exactonline.fr
    Fr,
    /// start.exactonline.es
    Es,
    /// start.exactonline.co.uk
    Uk,
    /// start.exactonline.com (United States)
    Us,
}

/// Exact Online: a connection to one division (administration).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExactOnlineAuthorization {
    /// The division number (`CurrentDivision` in `GET /api/v1/current/Me`), used in paths `/api/v1/{division}/...`.
    pub division: WholeNumber,
    /// The country site the division lives on.
    pub region: ExactRegion,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Shopify: a connection to one shop. Legacy offline tokens never expire;
/// expiring offline tokens come with a refresh token and an expiry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShopifyAuthorization {
    /// The shop's permanent domain, `{shop}.myshopify.com`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}\.myshopify\.com$"))]
    pub shop_domain: String,
    /// The offline access token.
    pub access_token: Secret,
    /// The refresh token of an expiring offline token; absent for a legacy non-expiring token. With it, `expiresIn` or `expiresAt` is required.
    pub refresh_token: Option<Secret>,
    /// Seconds until an expiring offline token expires, counted from this request.
    pub expires_in: Option<Seconds>,
    /// When an expiring offline token expires (RFC 3339).
    pub expires_at: Option<DateTime<Utc>>,
}

/// Square: a connection to one seller (merchant).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SquareAuthorization {
    /// The seller's merchant id (`merchant_id` in the ObtainToken response).
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub merchant_id: String,
    /// `production` (default) or `sandbox` (connect.squareupsandbox.com).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Stripe (Connect OAuth): a connection to one connected account. Connect
/// access tokens do not expire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StripeAuthorization {
    /// The connected account id (`stripe_user_id` in the OAuth token response), `acct_...`.
    #[schemars(regex(pattern = r"^acct_[A-Za-z0-9]{1,64}$"))]
    pub stripe_user_id: String,
    /// The OAuth token (its field sits directly in this object).
    #[serde(flatten)]
    pub token: LongLivedToken,
    /// The refresh token from the same response, if you kept it.
    pub refresh_token: Option<Secret>,
}

/// PayPal: a connection to one merchant account.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PayPalAuthorization {
    /// The merchant's payer id (13 characters, `payer_id` of the account).
    #[schemars(regex(pattern = r"^[A-Z0-9]{13}$"))]
    pub payer_id: String,
    /// `production` (default) or `sandbox`.
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// BigCommerce: a connection to one store. App tokens do not expire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BigCommerceAuthorization {
    /// The store hash (from `context: stores/{store_hash}` in the token response), used in `/stores/{storeHash}/v3`.
    #[schemars(regex(pattern = r"^[a-z0-9]{1,32}$"))]
    pub store_hash: String,
    /// The OAuth token (its field sits directly in this object).
    #[serde(flatten)]
    pub token: LongLivedToken,
}

/// Selling Partner API regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AmazonRegion {
    /// North America: sellingpartnerapi-na.amazon.com.
    Na,
    /// Europe: sellingpartnerapi-eu.amazon.com.
    Eu,
    /// Far East: sellingpartnerapi-fe.amazon.com.
    Fe,
}

/// Amazon Seller Central (Selling Partner API): a connection to one selling partner.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AmazonSellerCentralAuthorization {
    /// The selling partner id (`selling_partner_id` on the authorization redirect).
    #[schemars(regex(pattern = r"^[A-Z0-9]{1,32}$"))]
    pub selling_partner_id: String,
    /// The Selling Partner API region of the seller's marketplaces.
    pub region: AmazonRegion,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// eBay: a connection to one eBay user (eBay tokens are per user).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EbayAuthorization {
    /// The user's immutable id (`userId` from the Commerce Identity API `getUser`).
    #[schemars(length(min = 1, max = 256))]
    pub user_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Zettle: a connection to one Zettle organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZettleAuthorization {
    /// The organization's UUID (`organizationUuid` in `GET https://oauth.zettle.com/users/self`).
    pub organization_uuid: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Plaid: a connection to one Item (a login at one institution). Plaid
/// access tokens do not expire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlaidAuthorization {
    /// The Item's id (`item_id` from `/item/public_token/exchange`).
    #[schemars(length(min = 1, max = 256))]
    pub item_id: String,
    /// `production` (default) or `sandbox`; it selects Plaid's host.
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth token (its field sits directly in this object).
    #[serde(flatten)]
    pub token: LongLivedToken,
}

/// TrueLayer (Data API): a connection to one end user's bank via one provider.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrueLayerAuthorization {
    /// The connection's credentials id (`credentials_id` in `GET /data/v1/me`): one per end user and bank.
    #[schemars(length(min = 1, max = 256))]
    pub credentials_id: String,
    /// The provider id of the bank (`provider.provider_id` in the same answer, e.g. `ob-monzo`).
    #[schemars(regex(pattern = r"^[a-z0-9-]{1,64}$"))]
    pub provider_id: String,
    /// `production` (default) or `sandbox` (truelayer-sandbox.com).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// Mollie: a connection to one Mollie organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MollieAuthorization {
    /// The organization id (`org_...`, the OAuth `uid`).
    #[schemars(regex(pattern = r"^org_[A-Za-z0-9]{1,64}$"))]
    pub organization_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

/// tributary's synthetic platform, for demos, tests and benchmarks: its
/// data is generated from `seed` and `invoiceCount`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxAuthorization {
    /// An identifier you choose for the synthetic organization, starting with `sbx-` (so a sandbox body is never mistaken for a real platform's).
    #[schemars(regex(pattern = r"^sbx-[A-Za-z0-9._-]{1,60}$"))]
    pub organization_id: String,
    /// Any non-empty string; the sandbox accepts every token.
    pub access_token: Secret,
    /// Optional refresh token.
    pub refresh_token: Option<Secret>,
    /// Optional seconds until the access token expires.
    pub expires_in: Option<Seconds>,
    /// How many invoices the synthetic organization has (default 250).
    #[schemars(extend("default" = 250))]
    pub invoice_count: Option<InvoiceCount>,
    /// The seed of the synthetic data: the same seed always yields the same data (default 0).
    #[schemars(extend("default" = 0))]
    pub seed: Option<Seed>,
}

/// Bodies made of an organization identifier and [`ExpiringTokens`].
macro_rules! expiring_token_bodies {
    ($($body:ty => $organization:ident),* $(,)?) => {$(
        impl AuthorizationBody for $body {
            fn organization_id(&self) -> String {
                self.$organization.to_string()
            }
            fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError> {
                self.tokens.expiry(now)
            }
        }
    )*};
}

expiring_token_bodies! {
    XeroAuthorization => tenant_id,
    QuickBooksOnlineAuthorization => realm_id,
    FreeAgentAuthorization => subdomain,
    FreshBooksAuthorization => account_id,
    ZohoBooksAuthorization => organization_id,
    SageBusinessCloudAuthorization => business_id,
    NetSuiteAuthorization => account_id,
    BusinessCentralAuthorization => company_id,
    MyobAuthorization => company_file_id,
    ExactOnlineAuthorization => division,
    SquareAuthorization => merchant_id,
    PayPalAuthorization => payer_id,
    AmazonSellerCentralAuthorization => selling_partner_id,
    EbayAuthorization => user_id,
    ZettleAuthorization => organization_uuid,
    TrueLayerAuthorization => credentials_id,
    MollieAuthorization => organization_id,
}

/// Bodies made of an organization identifier and a [`LongLivedToken`].
macro_rules! long_lived_token_bodies {
    ($($body:ty => $organization:ident),* $(,)?) => {$(
        impl AuthorizationBody for $body {
            fn organization_id(&self) -> String {
                self.$organization.to_string()
            }
            fn expiry(&self, _now: DateTime<Utc>) -> Result<Expiry, FieldError> {
                Ok(Expiry::Never)
            }
        }
    )*};
}

long_lived_token_bodies! {
    StripeAuthorization => stripe_user_id,
    BigCommerceAuthorization => store_hash,
    PlaidAuthorization => item_id,
}

impl AuthorizationBody for ShopifyAuthorization {
    fn organization_id(&self) -> String {
        self.shop_domain.clone()
    }

    /// An expiring offline token (with a refresh token) must say when it
    /// expires; a legacy token has neither.
    fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError> {
        let has_refresh_token = self.refresh_token.is_some();
        let found = expiry(self.expires_in, self.expires_at, has_refresh_token, now)?;
        if !has_refresh_token && found != Expiry::Never {
            return Err(FieldError::new(
                "refreshToken",
                "is required with an expiry: an expiring offline token cannot be kept alive without it",
            ));
        }
        Ok(found)
    }
}

impl AuthorizationBody for SandboxAuthorization {
    fn organization_id(&self) -> String {
        self.organization_id.clone()
    }

    fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError> {
        expiry(self.expires_in, None, false, now)
    }
}
