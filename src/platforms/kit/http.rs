//! HTTP to the platforms: one reqwest client (rustls, a timeout on every
//! call), retries that honour a 429's `Retry-After` (bounded) and back off
//! exponentially with jitter on 5xx and connection failures, and failures
//! described by the platform's own answer (status and message, never a
//! token). A connector describes a request as a [`Call`] (where, which
//! query, how the token goes) and gets typed JSON back. [`platform_time`]
//! tells the platform's time when a run's fetch began, from its first
//! answer's `Date` header; [`paced`] puts every call of a run through a
//! [`CallGate`] first (the platform's limits, kept across processes).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use chrono::Utc;
use rand::Rng;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde_json::Value;

use crate::platforms::connector::ConnectorError;
pub use crate::platforms::kit::errors::{describe, platform_message, scrub};

mod run_scope;

pub use run_scope::{CallGate, Slot, Turn, paced, platform_time};
use run_scope::{current_gate, note_platform_time};

/// How many times a call that woke too late for its turn takes a new one
/// before it goes late (only a database slower than the slack keeps waking
/// it late).
pub const LATE_TURNS_TAKEN_AGAIN: usize = 3;

/// How calls to a platform are retried.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt (429, 5xx, connection failures).
    pub retries: u32,
    /// The first backoff; each retry doubles it, plus up to half again of jitter.
    pub base_backoff: Duration,
    /// The longest backoff between two attempts.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured; a platform asking for more fails the call.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            retries: 4,
            base_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based), with jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponential = self
            .base_backoff
            .saturating_mul(2_u32.saturating_pow(retry.min(16)))
            .min(self.max_backoff);
        let jitter_ms = (exponential.as_millis() / 2).min(u128::from(u32::MAX)) as u64;
        let jitter = if jitter_ms == 0 {
            0
        } else {
            rand::rng().random_range(0..=jitter_ms)
        };
        exponential + Duration::from_millis(jitter)
    }
}

/// A platform's successful answer.
#[derive(Debug)]
pub struct Answer {
    /// The body.
    pub body: Vec<u8>,
    /// Its headers (paging links, rate limits).
    pub headers: HeaderMap,
}

/// How a platform's API takes the access token.
#[derive(Debug, Clone, Copy)]
pub enum Auth<'a> {
    /// `Authorization: Bearer <token>`.
    Bearer(&'a str),
    /// `Authorization: <scheme> <token>` (Zoho's `Zoho-oauthtoken`).
    Scheme(&'static str, &'a str),
    /// The bare token in a header of its own, and no `Authorization`
    /// (Amazon's `x-amz-access-token`).
    Header(&'static str, &'a str),
}

impl<'a> Auth<'a> {
    /// `Authorization: Bearer` with the access token of `tokens`.
    pub fn bearer(tokens: &'a crate::platforms::tokens::ExpiringTokens) -> Self {
        Self::Bearer(tokens.access_token.expose())
    }

    fn token(&self) -> &str {
        match self {
            Self::Bearer(token) | Self::Scheme(_, token) | Self::Header(_, token) => token,
        }
    }

    /// The header carrying the token, and its value.
    fn header(&self) -> (&'static str, String) {
        match self {
            Self::Bearer(token) => ("authorization", format!("Bearer {token}")),
            Self::Scheme(scheme, token) => ("authorization", format!("{scheme} {token}")),
            Self::Header(name, token) => (name, (*token).to_owned()),
        }
    }
}

/// A request to a platform's JSON API.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    platform: &'static str,
    what: &'static str,
    method: reqwest::Method,
    url: String,
    auth: Auth<'a>,
    query: Vec<(&'static str, String)>,
    headers: Vec<(&'static str, String)>,
    accept: &'static str,
    body: Option<Value>,
}

impl<'a> Call<'a> {
    /// `GET url` of `platform`, fetching `what` (`a page of invoices`, for messages).
    pub fn get(platform: &'static str, what: &'static str, url: String, auth: Auth<'a>) -> Self {
        Self {
            platform,
            what,
            method: reqwest::Method::GET,
            url,
            auth,
            query: Vec::new(),
            headers: Vec::new(),
            accept: "application/json",
            body: None,
        }
    }

    /// `POST url` with a JSON body (a GraphQL or SQL query).
    pub fn post(
        platform: &'static str,
        what: &'static str,
        url: String,
        auth: Auth<'a>,
        body: Value,
    ) -> Self {
        Self {
            method: reqwest::Method::POST,
            body: Some(body),
            ..Self::get(platform, what, url, auth)
        }
    }

    /// `DELETE url`.
    pub fn delete(platform: &'static str, what: &'static str, url: String, auth: Auth<'a>) -> Self {
        Self {
            method: reqwest::Method::DELETE,
            ..Self::get(platform, what, url, auth)
        }
    }

    /// Adds a query parameter.
    pub fn query(mut self, name: &'static str, value: impl ToString) -> Self {
        self.query.push((name, value.to_string()));
        self
    }

    /// The media type asked for (`Accept`), where the platform documents
    /// another than `application/json` (Mollie's `application/hal+json`).
    pub fn accept(mut self, media_type: &'static str) -> Self {
        self.accept = media_type;
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: impl ToString) -> Self {
        self.headers.push((name, value.to_string()));
        self
    }

    fn build(&self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        let (auth_name, auth_value) = self.auth.header();
        let mut request = client
            .request(self.method.clone(), &self.url)
            .query(&self.query)
            .header(auth_name, auth_value)
            .header(reqwest::header::ACCEPT, self.accept);
        for (name, value) in &self.headers {
            request = request.header(*name, value);
        }
        if let Some(body) = &self.body {
            request = request.json(body);
        }
        request
    }
}

/// Why a call failed, after retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// 401: the access token was rejected (expired or revoked).
    Unauthorized(String),
    /// 403: the token does not give access to what was asked (most
    /// platforms: a scope or role the consent lacks).
    Forbidden(String),
    /// 404: what was asked for is not there (a record by id).
    NotFound(String),
    /// Another 4xx answer.
    Rejected(String),
    /// Rate limits, 5xx or connection failures that outlasted the retries.
    Unavailable(String),
    /// The platform's quota is spent for longer than a sync waits: the
    /// message says when the sync can continue.
    RateLimited(String),
}

impl CallError {
    /// The connector error a fetch reports.
    pub fn into_connector_error(self) -> ConnectorError {
        match self {
            Self::Unauthorized(message) => ConnectorError::Expired(message),
            Self::Forbidden(message) => ConnectorError::Permissions(message),
            Self::NotFound(message) | Self::Rejected(message) => ConnectorError::Failed(message),
            Self::Unavailable(message) => ConnectorError::Unavailable(message),
            Self::RateLimited(message) => ConnectorError::RateLimited(message),
        }
    }
}

/// What counts the calls made to the platforms (the application's metrics).
pub trait CallObserver: Send + Sync {
    /// `platform` (its name, as connectors give it) answered a call with
    /// `status`, or did not answer at all (`None`).
    fn answered(&self, platform: &str, status: Option<u16>);
    /// A call to `platform` waits `wait` before it is made again (a 429's
    /// `Retry-After`, or the backoff after a failure).
    fn waits(&self, platform: &str, wait: Duration);
    /// A call to `platform` woke too late for its turn under the platform's
    /// rate and took a new one.
    fn late(&self, platform: &str);
}

/// Where [`PlatformHttp`] reports its calls, once an application says.
#[derive(Clone, Default)]
struct Observer(Arc<OnceLock<Arc<dyn CallObserver>>>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Observer(set)"
        } else {
            "Observer(none)"
        })
    }
}

/// The HTTP client every connector shares.
#[derive(Debug, Clone)]
pub struct PlatformHttp {
    client: reqwest::Client,
    /// How calls are retried.
    pub retry: RetryPolicy,
    observer: Observer,
}

impl PlatformHttp {
    /// A client whose every call times out after `timeout`.
    pub fn new(timeout: Duration, retry: RetryPolicy) -> anyhow::Result<Self> {
        // reqwest is built without a bundled crypto provider: use ring, as
        // sqlx does. Installing twice is harmless (the first one stays).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("tributary/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            client,
            retry,
            observer: Observer::default(),
        })
    }

    /// Reports every call of this client and its clones to `observer`;
    /// `false` (nothing changes) when an observer was already set.
    pub fn observe(&self, observer: Arc<dyn CallObserver>) -> bool {
        self.observer.0.set(observer).is_ok()
    }

    fn answered(&self, platform: &str, status: Option<u16>) {
        if let Some(observer) = self.observer.0.get() {
            observer.answered(platform, status);
        }
    }

    fn waits(&self, platform: &str, wait: Duration) {
        if let Some(observer) = self.observer.0.get() {
            observer.waits(platform, wait);
        }
    }

    fn late(&self, platform: &str) {
        if let Some(observer) = self.observer.0.get() {
            observer.late(platform);
        }
    }

    /// Waits for a call's turn under `gate`, counting the wait; a hold
    /// further off than the longest `Retry-After` a call waits (the platform
    /// asked every process to hold off that long) ends the sync instead. A
    /// wait for the rate's window is always waited: it is at most one kept
    /// window (`kit::limits::kept`: a minute and its margin for calls that
    /// go late).
    ///
    /// A call that wakes later than its slot allows (`Turn::started_late`:
    /// a busy core, a slow database) gives its turn up and takes a new one,
    /// up to [`LATE_TURNS_TAKEN_AGAIN`] times; then it goes as it is.
    async fn take_turn(&self, platform: &str, gate: &dyn CallGate) -> Result<Turn, CallError> {
        let mut turn = gate.admit().await.map_err(CallError::RateLimited)?;
        let mut taken_again = 0;
        loop {
            if turn.held && turn.wait > self.retry.max_retry_after {
                gate.finished(&turn, None).await;
                let until = Utc::now()
                    + chrono::Duration::from_std(turn.wait).unwrap_or(chrono::Duration::MAX);
                return Err(CallError::RateLimited(format!(
                    "{platform} asked that no call be made for {} s: the sync can continue after {}; the \
                     previous data is kept",
                    turn.wait.as_secs(),
                    until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )));
            }
            if !turn.wait.is_zero() {
                self.waits(platform, turn.wait);
                tokio::time::sleep(turn.wait).await;
            }
            if taken_again == LATE_TURNS_TAKEN_AGAIN || !turn.started_late() {
                return Ok(turn);
            }
            taken_again += 1;
            turn = match gate.admit_again(&turn).await {
                Ok(again) => {
                    self.late(platform);
                    again
                }
                Err(refused) => {
                    gate.finished(&turn, None).await;
                    return Err(CallError::RateLimited(refused));
                }
            };
        }
    }

    /// The underlying client (for the OAuth token endpoint).
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends the request `build` makes until it succeeds or retries run
    /// out. `platform` names the platform in messages; `secrets` are
    /// scrubbed from any text the platform sends back.
    pub async fn send(
        &self,
        platform: &str,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
        secrets: &[&str],
    ) -> Result<Answer, CallError> {
        let gate = current_gate();
        let mut retry = 0;
        loop {
            let turn = match &gate {
                Some(gate) => Some(self.take_turn(platform, gate.as_ref()).await?),
                None => None,
            };
            let outcome = build(&self.client).send().await;
            if let (Some(gate), Some(turn)) = (&gate, &turn) {
                let answer = outcome
                    .as_ref()
                    .ok()
                    .map(|response| (response.status().as_u16(), response.headers()));
                gate.finished(turn, answer).await;
            }
            self.answered(
                platform,
                outcome
                    .as_ref()
                    .ok()
                    .map(|response| response.status().as_u16()),
            );
            let (failure, wait) = match outcome {
                Err(error) => {
                    let what = if error.is_timeout() {
                        "did not answer in time"
                    } else if error.is_connect() {
                        "could not be reached"
                    } else {
                        "broke off the answer"
                    };
                    (format!("{platform} {what}"), None)
                }
                Ok(response) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    note_platform_time(&headers);
                    let retry_after = retry_after(&headers);
                    let Ok(body) = response.bytes().await else {
                        let failure = format!("{platform} broke off the answer");
                        if retry >= self.retry.retries {
                            return Err(CallError::Unavailable(failure));
                        }
                        let wait = self.retry.backoff(retry);
                        self.waits(platform, wait);
                        tokio::time::sleep(wait).await;
                        retry += 1;
                        continue;
                    };
                    let body = body.to_vec();
                    if status.is_success() {
                        return Ok(Answer { body, headers });
                    }
                    let described = describe(platform, status, &body, secrets);
                    match status {
                        StatusCode::UNAUTHORIZED => return Err(CallError::Unauthorized(described)),
                        StatusCode::FORBIDDEN => return Err(CallError::Forbidden(described)),
                        StatusCode::NOT_FOUND => return Err(CallError::NotFound(described)),
                        StatusCode::TOO_MANY_REQUESTS => {
                            let wait = retry_after.unwrap_or_else(|| self.retry.backoff(retry));
                            if wait > self.retry.max_retry_after {
                                let until = Utc::now()
                                    + chrono::Duration::from_std(wait)
                                        .unwrap_or(chrono::Duration::MAX);
                                return Err(CallError::RateLimited(format!(
                                    "{described} ({platform} asked to wait {} s, more than the {} s a sync \
                                     waits: the sync can continue after {}; the previous data is kept)",
                                    wait.as_secs(),
                                    self.retry.max_retry_after.as_secs(),
                                    until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                                )));
                            }
                            (described, Some(wait))
                        }
                        status if status.is_server_error() => (described, None),
                        _ => return Err(CallError::Rejected(described)),
                    }
                }
            };
            if retry >= self.retry.retries {
                return Err(CallError::Unavailable(format!(
                    "{failure} (gave up after {} attempts)",
                    retry + 1
                )));
            }
            let wait = wait.unwrap_or_else(|| self.retry.backoff(retry));
            tracing::info!(
                platform,
                retry = retry + 1,
                wait_ms = wait.as_millis() as u64,
                failure,
                "retrying a platform call"
            );
            self.waits(platform, wait);
            tokio::time::sleep(wait).await;
            retry += 1;
        }
    }
}

impl PlatformHttp {
    /// Makes `call` (with retries) and reads the answer as `T`; an answer
    /// that does not read fails naming what was asked for.
    pub async fn json<T: serde::de::DeserializeOwned>(
        &self,
        call: &Call<'_>,
    ) -> Result<T, ConnectorError> {
        self.json_with_headers(call).await.map(|(value, _)| value)
    }

    /// [`PlatformHttp::json`], with the answer's headers (paging links).
    pub async fn json_with_headers<T: serde::de::DeserializeOwned>(
        &self,
        call: &Call<'_>,
    ) -> Result<(T, HeaderMap), ConnectorError> {
        let secrets = [call.auth.token()];
        let answer = self
            .send(call.platform, |client| call.build(client), &secrets)
            .await
            .map_err(CallError::into_connector_error)?;
        let value = read_answer(call, &secrets, &answer.body)?;
        Ok((value, answer.headers))
    }

    /// [`PlatformHttp::json`], where `404 Not Found` means the record asked
    /// for by id is not there (`None`) rather than a failure: Zettle's
    /// purchase by id once it is older than its three years.
    pub async fn json_if_found<T: serde::de::DeserializeOwned>(
        &self,
        call: &Call<'_>,
    ) -> Result<Option<T>, ConnectorError> {
        let secrets = [call.auth.token()];
        let answer = match self
            .send(call.platform, |client| call.build(client), &secrets)
            .await
        {
            Ok(answer) => answer,
            Err(CallError::NotFound(_)) => return Ok(None),
            Err(error) => return Err(error.into_connector_error()),
        };
        read_answer(call, &secrets, &answer.body).map(Some)
    }

    /// [`PlatformHttp::json`], where an empty answer (`204 No Content`, as
    /// BigCommerce's V2 lists answer past their last page) means `T`'s
    /// default (an empty list).
    pub async fn json_or_default<T: serde::de::DeserializeOwned + Default>(
        &self,
        call: &Call<'_>,
    ) -> Result<T, ConnectorError> {
        let secrets = [call.auth.token()];
        let answer = self
            .send(call.platform, |client| call.build(client), &secrets)
            .await
            .map_err(CallError::into_connector_error)?;
        if is_empty_body(&answer.body) {
            return Ok(T::default());
        }
        read_answer(call, &secrets, &answer.body)
    }
}

/// `body`, the answer to `call`, read as `T`; an answer that does not read
/// fails naming what was asked for, with `secrets` scrubbed from the reason.
fn read_answer<T: serde::de::DeserializeOwned>(
    call: &Call<'_>,
    secrets: &[&str],
    body: &[u8],
) -> Result<T, ConnectorError> {
    serde_json::from_slice(body).map_err(|error| {
        ConnectorError::Failed(format!(
            "{} answered {} that tributary cannot read ({}); the previous data is kept",
            call.platform,
            call.what,
            scrub(&error.to_string(), secrets)
        ))
    })
}

/// Whether an answer's body holds nothing but whitespace.
fn is_empty_body(body: &[u8]) -> bool {
    body.iter().all(u8::is_ascii_whitespace)
}

/// `Retry-After` in seconds (the HTTP-date form is treated as absent).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    value.parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests;
