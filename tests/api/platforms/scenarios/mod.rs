//! One scenario set for every platform: the behaviours every connector
//! shares (rate limits and server errors, a malformed page, a record it
//! cannot read, refresh on a 401 and before expiry, `invalid_grant`, a token
//! that cannot be refreshed, verification at migration, the data types it
//! lacks) are written once here and run against each platform's fake. What
//! differs per platform is its data: a [`Case`] in `<platform>/mod.rs`
//! (its fake, its authorization body, the data type it syncs in these
//! scenarios and what a full sync of it takes, its error bodies and the
//! words tributary is expected to show). `platform_scenarios!` turns a case
//! into one `#[tokio::test]` per scenario, named
//! `platforms::<platform>::scenarios::<scenario>`, each run on SQLite and
//! PostgreSQL. A platform's own quirks stay as tests in its module. The
//! resync scenarios (`changes`: with a modified-since filter; `unfiltered`:
//! without one) are invoked apart, with what each platform adds.

pub mod changes;
mod records;
mod report;
mod tokens;
pub mod unfiltered;
mod verification;

use futures::future::BoxFuture;
use serde_json::Value;
use uuid::Uuid;

use client::types::{ConnectionStatus, PullOperation, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake};
use super::{authorize, latest, options_for};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, json};

pub use records::{
    a_malformed_page_fails_the_sync_and_keeps_the_previous_data,
    a_record_the_connector_cannot_read_costs_that_record,
    a_refused_scope_fails_the_data_type_and_keeps_the_connection,
    an_unknown_account_fails_with_the_platforms_answer,
    rate_limits_wait_for_retry_after_and_server_errors_are_retried,
    the_data_types_it_lacks_are_refused_without_asking_the_platform,
};
pub use tokens::{
    a_rejected_token_that_cannot_be_refreshed_deauthorizes_without_a_refresh,
    a_token_about_to_expire_is_refreshed_before_the_first_call,
    an_access_token_rejected_mid_sync_is_refreshed_and_the_new_tokens_are_stored_before_use,
    invalid_grant_deauthorizes_the_connection_with_the_platforms_reason,
};
pub use verification::{
    an_expired_token_is_verified_by_a_refresh_and_a_refused_refresh_stores_nothing,
    verification_accepts_working_tokens_and_rejects_others_storing_nothing,
};

/// Everything the shared scenarios need to know of one platform.
pub struct Case {
    /// The platform key (`xero`, `amazon-seller-central`).
    pub key: &'static str,
    /// Its name where tributary says what it lacks (`Amazon Seller Central`).
    pub name: &'static str,
    /// Starts its fake, set up as the platform behaves.
    pub fake: fn() -> BoxFuture<'static, Fake>,
    /// The page size these scenarios run with (`None`: the connector's own).
    pub page_size: Option<u64>,
    /// Its authorization body, with the access token expiring in
    /// `expires_in` seconds where its tokens expire.
    pub authorization: fn(expires_in: i64) -> Value,
    /// The access token the fake accepts.
    pub access: &'static str,
    /// The refresh token the fake accepts (the body's).
    pub refresh: &'static str,
    /// An `expires_in` that is not due for a refresh.
    pub lasting: i64,
    /// The fields of the body a refresh keeps as they were (`tenantId`).
    pub kept: &'static [&'static str],
    /// What it syncs in these scenarios, and what a full sync takes.
    pub sync: Synced,
    /// The data types it syncs (`GET /integrations/{key}`'s `dataTypes`).
    pub syncs: &'static [&'static str],
    /// Its error answers.
    pub errors: Errors,
    /// Its pages, as the malformed-page and unreadable-record scenarios change them.
    pub pages: Pages,
    /// How its tokens are refreshed, where they are.
    pub refresh_with: Option<Refresh>,
    /// A body whose rejected token cannot be refreshed, where one exists.
    pub unrefreshable: Option<Unrefreshable>,
    /// Verification at migration.
    pub verification: Verification,
    /// An authorization naming an account the platform does not know.
    pub unknown_account: Option<Another>,
}

/// The data type the scenarios sync, and what a full sync of it is.
pub struct Synced {
    /// As in the API's paths (`invoices`, `bankTransactions`).
    pub data_type: &'static str,
    /// Records stored after a full sync.
    pub records: usize,
    /// API calls a full sync makes (every page, and whatever else it asks).
    pub calls: usize,
}

/// What the platform answers when things go wrong, and what tributary says.
pub struct Errors {
    /// A 429's body (sent with `Retry-After`).
    pub rate_limited: &'static str,
    /// Extra headers of its 429 (its own rate-limit headers).
    pub rate_limit_headers: &'static [(&'static str, &'static str)],
    /// What the operation says of a 429 whose `Retry-After` is too long.
    pub rate_limited_says: &'static str,
    /// A 500's body, which a retry gets past.
    pub server_error: &'static str,
    /// The status and body of an answer that keeps failing.
    pub unavailable: (u16, &'static str),
    /// What the operation says of it.
    pub unavailable_says: &'static str,
    /// How it refuses the data type to a consent without its scope, where
    /// that can be told from a token it no longer accepts.
    pub refused: Refused,
}

/// How a platform refuses a data type the consent does not cover.
pub enum Refused {
    /// With this answer (status, body), which tributary quotes (`says`).
    Scope {
        status: u16,
        body: &'static str,
        says: &'static str,
    },
    /// Its refusal cannot be told from a token it rejects (why, in words):
    /// the token scenarios cover it.
    AsARejectedToken(&'static str),
}

/// Where a malformed page is cut, after the answers before it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The first page of the list is cut off.
    FirstPage,
    /// The first page is whole, the second is cut off.
    SecondPage,
}

/// The platform's pages of `Synced::data_type`.
pub struct Pages {
    /// The answers a sync gets before its first page (Square's locations,
    /// Amazon's marketplaces); usually none.
    pub prelude: fn(&Fake) -> Vec<Answer>,
    /// The first page, as the platform answers it.
    pub first: fn(&Fake) -> Answer,
    /// Which page the malformed-page scenario cuts off.
    pub cut: Cut,
    /// A page cut off mid-way.
    pub truncated: &'static str,
    /// What the operation says of it.
    pub truncated_says: &'static str,
    /// Where a page holds its records (a JSON pointer: `/Invoices`), or the
    /// record itself where the platform answers one record a call (`""`).
    pub records_at: &'static str,
    /// The id in one record as sent (a JSON pointer: `/InvoiceID`).
    pub id_at: &'static str,
    /// A field of a record the connector reads, which the unreadable-record
    /// scenario gives a value of the wrong type (a JSON pointer in the
    /// record: `/Total`, `/node/createdAt`; the issue names its last part).
    pub field: &'static str,
}

/// How a platform refreshes its tokens.
pub struct Refresh {
    /// Whether a token about to expire is refreshed before use (Stripe's
    /// Connect tokens carry no expiry: refreshed only after a 401).
    pub before_expiry: bool,
    /// Whether a refresh issues a new refresh token.
    pub rotates: bool,
    /// API calls served before the access token stops working in the
    /// mid-sync scenario.
    pub rejected_after: usize,
    /// Fields the refresh grant carries besides the grant and the token
    /// (the Microsoft identity platform's `scope`).
    pub grant_extras: &'static [(&'static str, &'static str)],
    /// The token endpoint's `invalid_grant` answer, where the platform's own
    /// says more than the fake's.
    pub invalid_grant: Option<&'static str>,
    /// What the operation says of an `invalid_grant`, besides the code.
    pub invalid_grant_says: &'static [&'static str],
}

impl Refresh {
    /// Refreshed before expiry and after a 401; each refresh issues a new
    /// refresh token; the fake's own `invalid_grant`.
    pub const ROTATING: Refresh = Refresh {
        before_expiry: true,
        rotates: true,
        rejected_after: 1,
        grant_extras: &[],
        invalid_grant: None,
        invalid_grant_says: &[],
    };
    /// As [`Refresh::ROTATING`], but the refresh token is kept.
    pub const KEEPING: Refresh = Refresh {
        rotates: false,
        ..Refresh::ROTATING
    };
}

/// A body whose token, once rejected, cannot be refreshed.
pub struct Unrefreshable {
    pub authorization: fn() -> Value,
    /// What the operation says.
    pub says: &'static [&'static str],
}

/// Another authorization, and what tributary says of it.
pub struct Another {
    pub authorization: fn() -> Value,
    pub says: &'static [&'static str],
}

/// Verification at migration (`PUT .../authorization?verify=true`).
pub struct Verification {
    /// What tributary says of a token the platform rejects.
    pub rejected_says: &'static [&'static str],
    /// A working token for another account than the body names.
    pub another_account: Option<Another>,
    /// Whether the calls, the last one last, are the verification's.
    pub verified_by: fn(&[Call]) -> bool,
}

/// Generates one `#[tokio::test]` per shared scenario for the case named
/// `$case` in the invoking platform module, in a module `scenarios`. Every
/// platform runs the scenarios every connector has; the groups after the
/// case add those of its kind: `refreshes` (a 401 mid-sync, `invalid_grant`),
/// `refreshes_before_expiry` (a token about to expire, an expired token at
/// verification), `unrefreshable` (a rejected token without a refresh),
/// `unknown_account`.
macro_rules! platform_scenarios {
    ($case:ident $(, $group:ident)* $(,)?) => {
        /// The shared scenarios (`platforms::scenarios`) for this platform.
        mod scenarios {
            $crate::platforms::scenarios::scenario_group!(every_platform, $case);
            $($crate::platforms::scenarios::scenario_group!($group, $case);)*
        }
    };
}
pub(crate) use platform_scenarios;

/// The tests of one group of scenarios (see `platform_scenarios!`).
macro_rules! scenario_group {
    (every_platform, $case:ident) => {
        $crate::platforms::scenarios::scenario_tests!(
            $case,
            rate_limits_wait_for_retry_after_and_server_errors_are_retried,
            a_malformed_page_fails_the_sync_and_keeps_the_previous_data,
            a_record_the_connector_cannot_read_costs_that_record,
            a_refused_scope_fails_the_data_type_and_keeps_the_connection,
            verification_accepts_working_tokens_and_rejects_others_storing_nothing,
            the_data_types_it_lacks_are_refused_without_asking_the_platform,
        );
    };
    (refreshes, $case:ident) => {
        $crate::platforms::scenarios::scenario_tests!(
            $case,
            an_access_token_rejected_mid_sync_is_refreshed_and_the_new_tokens_are_stored_before_use,
            invalid_grant_deauthorizes_the_connection_with_the_platforms_reason,
        );
    };
    (refreshes_before_expiry, $case:ident) => {
        $crate::platforms::scenarios::scenario_tests!(
            $case,
            a_token_about_to_expire_is_refreshed_before_the_first_call,
            an_expired_token_is_verified_by_a_refresh_and_a_refused_refresh_stores_nothing,
        );
    };
    (unrefreshable, $case:ident) => {
        $crate::platforms::scenarios::scenario_tests!(
            $case,
            a_rejected_token_that_cannot_be_refreshed_deauthorizes_without_a_refresh,
        );
    };
    (unknown_account, $case:ident) => {
        $crate::platforms::scenarios::scenario_tests!(
            $case,
            an_unknown_account_fails_with_the_platforms_answer,
        );
    };
}
pub(crate) use scenario_group;

/// One `#[tokio::test]` per scenario, running it for `$case`.
macro_rules! scenario_tests {
    ($case:ident, $($scenario:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $scenario() {
                $crate::platforms::scenarios::$scenario(&super::$case).await;
            }
        )*
    };
}
pub(crate) use scenario_tests;

/// One `#[tokio::test]` per scenario of `scenarios::$module`, running its
/// function for `$case` and what the platform adds for it (`$with`).
macro_rules! scenario_tests_with {
    ($case:ident, $with:ident, $module:ident, $($test:ident => $scenario:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $test() {
                $crate::platforms::scenarios::$module::$scenario(&super::$case, &super::$with)
                    .await;
            }
        )*
    };
}
pub(crate) use scenario_tests_with;

/// A running app whose platforms all point at `fake`.
async fn spawn(
    case: &Case,
    backend: crate::helpers::Backend,
    fake: &Fake,
    workers: usize,
) -> TestApp {
    TestApp::spawn_with(backend, options_for(fake, case.page_size, workers)).await
}

/// A company with an authorized connection to the case's platform.
pub async fn connected(app: &TestApp, case: &Case, body: &Value) -> (Uuid, Uuid) {
    let company_id = new_company(app, &format!("{} customer", case.key)).await;
    let connection_id = new_connection(app, company_id, case.key).await;
    let response = authorize(app, company_id, connection_id, body, false).await;
    assert_eq!(response.status(), 200, "{}: authorized", case.key);
    (company_id, connection_id)
}

/// Queues `data_type` and waits until the company's operations settle.
async fn sync(app: &TestApp, company_id: Uuid, data_type: &str) -> PullOperation {
    let queued: QueueDataTypeDataType = data_type.parse().expect("a data type");
    let operations = super::sync(app, company_id, queued).await;
    latest(&operations, data_type)
}

/// Every stored record of `data_type`.
pub async fn records(app: &TestApp, company_id: Uuid, data_type: &str) -> Vec<Value> {
    json(
        app.get(&format!(
            "/companies/{company_id}/data/{data_type}?pageSize=1000"
        ))
        .await,
    )
    .await["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The connection's status.
async fn status_of(app: &TestApp, company_id: Uuid, connection_id: Uuid) -> ConnectionStatus {
    app.client
        .get_connection(&company_id, &connection_id)
        .await
        .expect("found")
        .into_inner()
        .status
}

/// The operation's error message, or nothing.
fn message_of(operation: &PullOperation) -> String {
    operation.error_message.clone().unwrap_or_default()
}

/// Asserts the operation completed.
fn assert_complete(case: &Case, operation: &PullOperation) {
    assert_eq!(
        operation.status,
        PullStatus::Complete,
        "{}: {operation:?}",
        case.key
    );
}

/// Asserts `text` says each of `says`.
fn assert_says(case: &Case, text: &str, says: &[&str]) {
    for words in says {
        assert!(
            text.contains(words),
            "{}: {text:?} says {words:?}",
            case.key
        );
    }
}
