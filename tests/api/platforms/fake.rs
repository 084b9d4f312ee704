//! A platform played by a real HTTP server on loopback: an OAuth
//! authorization server (`GET /authorize`, redirecting back with a code and
//! the platform's callback parameters; `POST /token`, the authorization-code
//! grant checking the client, the `redirect_uri` and the PKCE verifier, and
//! the refresh-token grant, rotating refresh tokens like Xero) and an API
//! answering from fixture files, with knobs for the failures a platform has
//! (401 mid-sync, 429, 5xx, garbage, slow refreshes).
//!
//! With `TRIBUTARY_PLATFORM_CALLS` set to a folder, a fake writes every
//! request it received (but the browser's `/authorize`) to
//! `<folder>/<platform>/<test>-<n>.json` when it is dropped, for the
//! contract step to check against the vendor's own OpenAPI document
//! (`spec-tests/contracts.py`, `tests/contracts/`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use futures::future::BoxFuture;
use poem::endpoint::make;
use poem::http::StatusCode;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::{Request, Response};
use serde_json::{Value, json};

/// The OAuth client the fake platform knows.
pub const CLIENT_ID: &str = "fake-client-id";
/// Its secret.
pub const CLIENT_SECRET: &str = "fake-client-secret-s3cr3t";

/// A fixture file's text.
pub fn fixture(path: &str) -> String {
    let full = format!("{}/tests/api/platforms/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("fixture {full}: {error}"))
}

/// One API request the fake received.
#[derive(Debug, Clone)]
pub struct Call {
    pub path: String,
    pub query: HashMap<String, String>,
    pub headers: HashMap<String, String>,
    pub token: String,
    /// The request's method (`GET`, `POST`).
    pub method: String,
    /// The request's body (a GraphQL or SuiteQL query), empty when none.
    pub body: String,
}

/// An answer: status, headers, body.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

/// Serves the platform's API from fixtures.
pub type Router = Arc<dyn Fn(&Call) -> Answer + Send + Sync>;
/// Answers a call in the router's stead where it returns one (the
/// incremental scenarios' empty answer to a filtered call).
pub type Override = Arc<dyn Fn(&Call) -> Option<Answer> + Send + Sync>;
/// Runs when the API first sees an access token issued by a refresh: reads
/// what the database holds at that moment.
pub type Hook = Arc<dyn Fn() -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// How the API reads its access token.
#[derive(Debug, Clone, Copy)]
pub enum Scheme {
    Bearer,
    ZohoOauthtoken,
    /// The bare token in a header of its own (Amazon's `x-amz-access-token`).
    Header(&'static str),
}

/// What the fake knows and has seen.
pub struct Inner {
    pub access_tokens: HashSet<String>,
    pub refresh_token: String,
    /// Whether a refresh issues a new refresh token.
    pub rotate: bool,
    pub issued: u32,
    pub token_calls: u32,
    /// The form of every token request, in order (what a platform that
    /// needs more than the grant, such as a `scope`, was sent).
    pub token_forms: Vec<HashMap<String, String>>,
    /// The `Content-Type` of every token request, in order (a platform
    /// taking its grant as JSON, such as Square, is sent JSON).
    pub token_content_types: Vec<String>,
    /// Answer refreshes with the expiry as a moment (`expires_at`, RFC
    /// 3339, as Square does) instead of `expires_in`.
    pub expires_at: bool,
    pub token_delay: Duration,
    /// How long every API call takes to be answered (calls in progress
    /// overlap for that long).
    pub answer_delay: Duration,
    /// API calls in progress now, and the most there ever were at once.
    pub in_flight: usize,
    pub most_in_flight: usize,
    /// Answer every token request with this instead.
    pub token_error: Option<Answer>,
    /// Client credentials in the form body (Zoho) instead of Basic.
    pub client_in_body: bool,
    /// Zoho's `api_domain` in token answers.
    pub api_domain: Option<String>,
    pub calls: Vec<Call>,
    /// Answers served before the router, one per API call.
    pub scripted: VecDeque<Answer>,
    /// Answers served before the router, for the calls it answers.
    pub overriding: Option<Override>,
    /// The `Date` every API answer carries (the platform's clock) instead of
    /// the server's own; `None`: the server's.
    pub date: Option<String>,
    /// After this many served API calls, every access token stops working.
    pub expire_after: Option<usize>,
    pub served: usize,
    pub on_new_token: Option<Hook>,
    /// What `on_new_token` found, per refreshed token, at its first use.
    pub stored_at_first_use: Vec<Option<String>>,
    /// Codes the authorize endpoint issued, with what they were issued for.
    pub codes: HashMap<String, IssuedCode>,
    /// The query of every authorize request, in order.
    pub authorize_requests: Vec<HashMap<String, String>>,
    /// Parameters the authorize endpoint adds to its redirect back (QuickBooks' `realmId`, Shopify's `shop`).
    pub callback_extras: Vec<(String, String)>,
    /// Sign the redirect back as Shopify does (`timestamp`, `hmac` keyed with the client secret).
    pub shopify_signed: bool,
    /// Fields the code exchange's answer adds (Square's `merchant_id`).
    pub code_answer_extras: serde_json::Map<String, Value>,
    /// Issue access tokens from codes as JWTs carrying `authentication_event_id` (Xero).
    pub jwt_access_tokens: bool,
    /// The status a rejected access token gets: 401, or 403 where the
    /// platform documents that (Amazon's Selling Partner API).
    pub rejected_status: u16,
    /// Every request but the browser's `/authorize`, as it arrived.
    pub received: Vec<Received>,
    unauthorized: String,
}

/// A code the fake's authorize endpoint issued.
#[derive(Debug, Clone)]
pub struct IssuedCode {
    /// The `redirect_uri` of the authorize request.
    pub redirect_uri: String,
    /// Its PKCE challenge, if any.
    pub challenge: Option<String>,
    /// Whether it was exchanged.
    pub used: bool,
}

/// A running fake platform.
pub struct Fake {
    pub address: SocketAddr,
    pub state: Arc<Mutex<Inner>>,
    /// The platform key it plays (`xero`), naming the vendor document its
    /// requests are checked against.
    pub platform: &'static str,
}

/// The folder the fakes write the requests they received to, when set.
pub const CALLS_FOLDER_VAR: &str = "TRIBUTARY_PLATFORM_CALLS";

/// One request as it arrived, for the contract step: the query as sent
/// (order and repeats kept), every header, the body.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Fake {
    /// Starts a fake whose API accepts `access_token` and whose token
    /// endpoint accepts `refresh_token`; `unauthorized` is its 401 body.
    pub async fn start(
        platform: &'static str,
        scheme: Scheme,
        access_token: &str,
        refresh_token: &str,
        unauthorized: String,
        router: Router,
    ) -> Fake {
        let state = Arc::new(Mutex::new(Inner {
            access_tokens: HashSet::from([access_token.to_owned()]),
            refresh_token: refresh_token.to_owned(),
            rotate: true,
            issued: 0,
            token_calls: 0,
            token_forms: Vec::new(),
            token_content_types: Vec::new(),
            expires_at: false,
            token_delay: Duration::ZERO,
            answer_delay: Duration::ZERO,
            in_flight: 0,
            most_in_flight: 0,
            token_error: None,
            client_in_body: false,
            api_domain: None,
            calls: Vec::new(),
            scripted: VecDeque::new(),
            overriding: None,
            date: None,
            expire_after: None,
            served: 0,
            on_new_token: None,
            stored_at_first_use: Vec::new(),
            codes: HashMap::new(),
            authorize_requests: Vec::new(),
            callback_extras: Vec::new(),
            shopify_signed: false,
            code_answer_extras: serde_json::Map::new(),
            jwt_access_tokens: false,
            rejected_status: 401,
            received: Vec::new(),
            unauthorized,
        }));
        let acceptor = TcpListener::bind("127.0.0.1:0")
            .into_acceptor()
            .await
            .expect("a free port");
        let address = *acceptor.local_addr()[0]
            .as_socket_addr()
            .expect("a TCP address");
        let shared = state.clone();
        let endpoint = make(move |request: Request| {
            let state = shared.clone();
            let router = router.clone();
            async move { handle(state, router, scheme, request).await }
        });
        tokio::spawn(poem::Server::new_with_acceptor(acceptor).run(endpoint));
        Fake {
            address,
            state,
            platform,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn token_url(&self) -> String {
        format!("http://{}/token", self.address)
    }

    pub fn authorize_url(&self) -> String {
        format!("http://{}/authorize", self.address)
    }

    pub fn with<R>(&self, change: impl FnOnce(&mut Inner) -> R) -> R {
        change(&mut self.state.lock().expect("fake state"))
    }

    pub fn token_calls(&self) -> u32 {
        self.with(|inner| inner.token_calls)
    }

    pub fn calls(&self) -> Vec<Call> {
        self.with(|inner| inner.calls.clone())
    }
}

impl Drop for Fake {
    /// Writes what the fake received for the contract step, when asked to.
    fn drop(&mut self) {
        let Some(folder) = std::env::var_os(CALLS_FOLDER_VAR) else {
            return;
        };
        let received = self.with(|inner| std::mem::take(&mut inner.received));
        if received.is_empty() {
            return;
        }
        static WRITTEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let number = WRITTEN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let test = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .replace("::", ".");
        let folder = std::path::Path::new(&folder).join(self.platform);
        std::fs::create_dir_all(&folder).expect("the calls folder can be made");
        let record = json!({"platform": self.platform, "test": test, "requests": received});
        let path = folder.join(format!("{test}-{}-{number}.json", std::process::id()));
        std::fs::write(&path, record.to_string()).expect("the calls file can be written");
    }
}

fn respond(answer: Answer) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .content_type("application/json");
    for (name, value) in answer.headers {
        builder = builder.header(name, value);
    }
    builder.body(answer.body)
}

async fn handle(
    state: Arc<Mutex<Inner>>,
    router: Router,
    scheme: Scheme,
    request: Request,
) -> Response {
    let path = request.uri().path().to_owned();
    let headers: HashMap<String, String> = request
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            value
                .to_str()
                .ok()
                .map(|value| (name.as_str().to_lowercase(), value.to_owned()))
        })
        .collect();
    let method = request.method().as_str().to_owned();
    let query: HashMap<String, String> =
        url::form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let raw_query = request.uri().query().unwrap_or_default().to_owned();
    let raw_headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = request.into_body().into_string().await.unwrap_or_default();
    if path != "/authorize" {
        state.lock().expect("fake state").received.push(Received {
            method: method.clone(),
            path: path.clone(),
            query: raw_query,
            headers: raw_headers,
            body: body.clone(),
        });
    }
    if path == "/token" {
        return respond(token(&state, &headers, &body).await);
    }
    if path == "/authorize" {
        return authorize(&state, &query);
    }
    let authorization = headers.get("authorization").cloned().unwrap_or_default();
    let token = match scheme {
        Scheme::Bearer => authorization.strip_prefix("Bearer "),
        Scheme::ZohoOauthtoken => authorization.strip_prefix("Zoho-oauthtoken "),
        Scheme::Header(name) => headers.get(name).map(String::as_str),
    }
    .unwrap_or_default()
    .to_owned();
    let call = Call {
        path,
        query,
        headers,
        token: token.clone(),
        method,
        body,
    };
    // The first use of a refreshed token: what does the database hold now?
    let hook = {
        let mut inner = state.lock().expect("fake state");
        inner.calls.push(call.clone());
        let refreshed = token.starts_with("at-refreshed-");
        let first_use = refreshed
            && !inner
                .calls
                .iter()
                .rev()
                .skip(1)
                .any(|earlier| earlier.token == token);
        if first_use {
            inner.on_new_token.clone()
        } else {
            None
        }
    };
    let answer_delay = {
        let mut inner = state.lock().expect("fake state");
        inner.in_flight += 1;
        inner.most_in_flight = inner.most_in_flight.max(inner.in_flight);
        inner.answer_delay
    };
    tokio::time::sleep(answer_delay).await;
    state.lock().expect("fake state").in_flight -= 1;
    if let Some(hook) = hook {
        let stored = hook().await;
        state
            .lock()
            .expect("fake state")
            .stored_at_first_use
            .push(stored);
    }
    let mut inner = state.lock().expect("fake state");
    if inner.expire_after == Some(inner.served) {
        inner.access_tokens.clear();
        inner.expire_after = None;
    }
    let date = inner.date.clone();
    let dated = |mut answer: Answer| {
        if let Some(date) = &date {
            answer.headers.push(("date".to_owned(), date.clone()));
        }
        respond(answer)
    };
    if !inner.access_tokens.contains(&token) {
        return dated(Answer::json(
            inner.rejected_status,
            inner.unauthorized.clone(),
        ));
    }
    if let Some(answer) = inner.scripted.pop_front() {
        return dated(answer);
    }
    inner.served += 1;
    let overriding = inner.overriding.clone();
    drop(inner);
    match overriding.and_then(|answer| answer(&call)) {
        Some(answer) => dated(answer),
        None => dated(router(&call)),
    }
}

async fn token(state: &Mutex<Inner>, headers: &HashMap<String, String>, body: &str) -> Answer {
    let content_type = headers.get("content-type").cloned().unwrap_or_default();
    // A grant sent as JSON (Square) is read as the form it stands for.
    let form: HashMap<String, String> = if content_type.starts_with("application/json") {
        serde_json::from_str::<serde_json::Map<String, Value>>(body)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, value)| value.as_str().map(|value| (name, value.to_owned())))
            .collect()
    } else {
        url::form_urlencoded::parse(body.as_bytes())
            .into_owned()
            .collect()
    };
    let delay = {
        let mut inner = state.lock().expect("fake state");
        inner.token_calls += 1;
        inner.token_forms.push(form.clone());
        inner.token_content_types.push(content_type);
        inner.token_delay
    };
    tokio::time::sleep(delay).await;
    let mut inner = state.lock().expect("fake state");
    if let Some(error) = inner.token_error.clone() {
        return error;
    }
    let client_ok = if inner.client_in_body {
        form.get("client_id").map(String::as_str) == Some(CLIENT_ID)
            && form.get("client_secret").map(String::as_str) == Some(CLIENT_SECRET)
    } else {
        let expected = format!(
            "Basic {}",
            STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
        );
        headers.get("authorization") == Some(&expected)
    };
    if !client_ok {
        return Answer::json(
            401,
            json!({"error": "invalid_client", "error_description": "client authentication failed"})
                .to_string(),
        );
    }
    if form.get("grant_type").map(String::as_str) == Some("authorization_code") {
        return exchange(&mut inner, &form);
    }
    if form.get("grant_type").map(String::as_str) != Some("refresh_token")
        || form.get("refresh_token") != Some(&inner.refresh_token)
    {
        return Answer::json(
            400,
            json!({"error": "invalid_grant", "error_description": "the refresh token is invalid or was already used"})
                .to_string(),
        );
    }
    inner.issued += 1;
    let access_token = format!("at-refreshed-{}", inner.issued);
    inner.access_tokens.insert(access_token.clone());
    let mut answer = json!({
        "access_token": access_token,
        "expires_in": 1800,
        "token_type": "Bearer",
    });
    if inner.rotate {
        inner.refresh_token = format!("rt-rotated-{}", inner.issued);
        answer["refresh_token"] = Value::String(inner.refresh_token.clone());
    }
    if inner.expires_at {
        let at = chrono::Utc::now() + chrono::Duration::days(30);
        answer["expires_at"] = Value::String(at.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        if let Some(fields) = answer.as_object_mut() {
            fields.remove("expires_in");
        }
    }
    if let Some(domain) = &inner.api_domain {
        answer["api_domain"] = Value::String(domain.clone());
    }
    Answer::json(200, answer.to_string())
}

/// The authorize endpoint: records the request and redirects back to its
/// `redirect_uri` with a new code, its `state` and the platform's extras.
fn authorize(state: &Mutex<Inner>, query: &HashMap<String, String>) -> Response {
    let mut inner = state.lock().expect("fake state");
    inner.authorize_requests.push(query.clone());
    if query.get("client_id").map(String::as_str) != Some(CLIENT_ID) {
        return respond(Answer::json(400, "{\"error\":\"invalid_client\"}"));
    }
    let Some(redirect_uri) = query.get("redirect_uri").cloned() else {
        return respond(Answer::json(400, "{\"error\":\"invalid_request\"}"));
    };
    let code = format!("code-{}", uuid::Uuid::new_v4().simple());
    let challenge = match query.get("code_challenge_method").map(String::as_str) {
        Some("S256") => query.get("code_challenge").cloned(),
        _ => None,
    };
    inner.codes.insert(
        code.clone(),
        IssuedCode {
            redirect_uri: redirect_uri.clone(),
            challenge,
            used: false,
        },
    );
    let mut parameters: Vec<(String, String)> = vec![("code".to_owned(), code)];
    if let Some(state) = query.get("state") {
        parameters.push(("state".to_owned(), state.clone()));
    }
    parameters.extend(inner.callback_extras.iter().cloned());
    if inner.shopify_signed {
        parameters.push(("timestamp".to_owned(), "1764150000".to_owned()));
        let signed: Vec<(&str, &str)> = parameters
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        let hmac = tributary::platforms::link::shopify_hmac(&signed, CLIENT_SECRET);
        parameters.push(("hmac".to_owned(), hmac));
    }
    let mut location = url::Url::parse(&redirect_uri).expect("an absolute redirect_uri");
    location.query_pairs_mut().extend_pairs(parameters);
    Response::builder()
        .status(StatusCode::FOUND)
        .header("location", location.as_str())
        .finish()
}

/// The authorization-code grant: the code must be one issued here, unused,
/// for the same `redirect_uri`, with the verifier of its PKCE challenge.
fn exchange(inner: &mut Inner, form: &HashMap<String, String>) -> Answer {
    let invalid = |description: &str| {
        Answer::json(
            400,
            json!({"error": "invalid_grant", "error_description": description}).to_string(),
        )
    };
    let Some(code) = form.get("code") else {
        return invalid("no code");
    };
    let Some(issued) = inner.codes.get_mut(code) else {
        return invalid("unknown code");
    };
    if issued.used {
        return invalid("the code was already used");
    }
    issued.used = true;
    if form.get("redirect_uri") != Some(&issued.redirect_uri) {
        return invalid("redirect_uri does not match the authorization request");
    }
    if let Some(challenge) = &issued.challenge {
        let Some(verifier) = form.get("code_verifier") else {
            return invalid("code_verifier is required");
        };
        let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(<sha2::Sha256 as sha2::Digest>::digest(verifier.as_bytes()));
        if computed != *challenge {
            return invalid("code_verifier does not match the code_challenge");
        }
    }
    inner.issued += 1;
    let access_token = if inner.jwt_access_tokens {
        // A UUID, as Xero's is: xero-identity.yaml gives `authEventId`,
        // which tributary sends the claim back as, `format: uuid`.
        let event = format!("e0000000-0000-4000-8000-{:012}", inner.issued);
        let claims = json!({"authentication_event_id": event});
        format!(
            "eyJhbGciOiJub25lIn0.{}.signature",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string())
        )
    } else {
        format!("at-linked-{}", inner.issued)
    };
    inner.access_tokens.insert(access_token.clone());
    inner.refresh_token = format!("rt-linked-{}", inner.issued);
    let mut answer = json!({
        "access_token": access_token,
        "refresh_token": inner.refresh_token,
        "expires_in": 1800,
        "token_type": "Bearer",
    });
    if let Some(fields) = answer.as_object_mut() {
        fields.extend(inner.code_answer_extras.clone());
    }
    Answer::json(200, answer.to_string())
}
