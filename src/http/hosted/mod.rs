//! The hosted link pages and the OAuth callbacks: server-rendered HTML
//! (not partner operations, so not in `openapi.yaml`; the API description
//! says where they are). Every answer carries `Content-Security-Policy`
//! (no script, the one style sheet by its hash, `frame-ancestors` from the
//! client's allowed origins or `'none'`), `Referrer-Policy: no-referrer` and
//! `Cache-Control: no-store`; every refusal is a page saying what to do.
//! The pages have their own rate limit per address.
//!
//! - `GET /link/{id}?token=…` binds the session to this browser (an
//!   HttpOnly, `SameSite=Lax` cookie) and redirects to `GET /link/{id}`,
//!   so the token leaves the address bar; that page shows the step.
//! - `POST /link/{id}/platform`, `/authorize`, `/organization`: the steps.
//! - `GET /oauth/{platformKey}/callback`: the platform's redirect back.
//! - `GET`/`POST /link/sandbox/consent`: the sandbox's own consent page.

pub mod pages;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use governor::{Quota, RateLimiter};
use poem::http::{HeaderValue, StatusCode, header};
use poem::web::{Data, Form, Path, Query};
use poem::{Endpoint, EndpointExt, IntoResponse, Request, Response, Route, get, handler, post};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::http::state::AppState;
use crate::links::flow::{self, Ending, Page, Refusal, Urls};

/// The cookie binding a link flow to the browser that opened it.
pub const BROWSER_COOKIE: &str = "tributary_link";

/// Requests per minute one address may make to the hosted pages.
pub const REQUESTS_PER_MINUTE: u32 = 120;

/// The hosted routes, for the route table: path, method, whether it reads a body.
pub const ROUTES: [(&str, &str, bool); 8] = [
    ("/link/:linkSessionId", "GET", false),
    ("/link/:linkSessionId/platform", "POST", true),
    ("/link/:linkSessionId/authorize", "POST", true),
    ("/link/:linkSessionId/organization", "POST", true),
    ("/link/sandbox/consent", "GET", false),
    ("/link/sandbox/consent", "POST", true),
    ("/oauth/:platformKey/callback", "GET", false),
    ("/oauth/:platformKey/callback", "HEAD", false),
];

/// The hosted pages' limiter: requests per address.
pub type AddressLimiter = RateLimiter<
    IpAddr,
    governor::state::keyed::DefaultKeyedStateStore<IpAddr>,
    governor::clock::DefaultClock,
>;

/// The pages' own rate limit: [`REQUESTS_PER_MINUTE`] per address.
pub fn limiter() -> Arc<AddressLimiter> {
    let per_minute = NonZeroU32::new(REQUESTS_PER_MINUTE).unwrap_or(NonZeroU32::MIN);
    Arc::new(RateLimiter::keyed(Quota::per_minute(per_minute)))
}

/// The hosted routes, each behind the pages' rate limit (`limiter`, shared
/// by every mount of them) and headers.
pub fn routes(limiter: Arc<AddressLimiter>) -> impl Endpoint {
    Route::new()
        .at(
            "/link/sandbox/consent",
            get(sandbox_consent_page).post(sandbox_consent),
        )
        .at("/link/:linkSessionId", get(open_or_show))
        .at("/link/:linkSessionId/platform", post(choose_platform))
        .at("/link/:linkSessionId/authorize", post(authorize))
        .at(
            "/link/:linkSessionId/organization",
            post(choose_organization),
        )
        .at("/oauth/:platformKey/callback", get(callback))
        .around(move |next, request| {
            let limiter = limiter.clone();
            async move {
                let address = request
                    .remote_addr()
                    .as_socket_addr()
                    .map(|address| address.ip());
                if let Some(address) = address
                    && limiter.check_key(&address).is_err()
                {
                    let mut response = html(StatusCode::TOO_MANY_REQUESTS, pages::too_many(), &[]);
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
                    return Ok(response);
                }
                next.call(request).await.map(IntoResponse::into_response)
            }
        })
}

/// The `Content-Security-Policy` of every hosted page.
fn content_security_policy(frame_origins: &[String]) -> String {
    let style = STANDARD.encode(Sha256::digest(pages::STYLE.as_bytes()));
    let ancestors = if frame_origins.is_empty() {
        "'none'".to_owned()
    } else {
        frame_origins.join(" ")
    };
    format!(
        "default-src 'none'; style-src 'sha256-{style}'; img-src 'self'; base-uri 'none'; \
         frame-ancestors {ancestors}"
    )
}

/// The headers every hosted answer carries.
fn protect(response: &mut Response, frame_origins: &[String]) {
    let headers = response.headers_mut();
    if let Ok(policy) = HeaderValue::from_str(&content_security_policy(frame_origins)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

fn html(status: StatusCode, body: String, frame_origins: &[String]) -> Response {
    let mut response = Response::builder()
        .status(status)
        .content_type("text/html; charset=utf-8")
        .body(body);
    protect(&mut response, frame_origins);
    response
}

/// A 303 to `location` (never a 307: the form's body must not follow).
fn see_other(location: &str, frame_origins: &[String]) -> Response {
    let mut response = Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(header::LOCATION, location)
        .finish();
    protect(&mut response, frame_origins);
    response
}

fn refused(refusal: &Refusal) -> Response {
    let status = match refusal {
        Refusal::UnknownLink => StatusCode::NOT_FOUND,
        Refusal::Expired => StatusCode::GONE,
        Refusal::OtherBrowser => StatusCode::FORBIDDEN,
        Refusal::BadRequest(_) | Refusal::Callback(_) => StatusCode::BAD_REQUEST,
        Refusal::Internal(error) => {
            tracing::error!(error = %error, "a hosted link step failed");
            StatusCode::INTERNAL_SERVER_ERROR
        }
    };
    html(status, pages::refusal(refusal), &[])
}

/// The browser's secret from its cookie.
fn browser_of(request: &Request) -> Option<String> {
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == BROWSER_COOKIE)
        .map(|(_, value)| value.to_owned())
}

fn session_id(raw: &str) -> Result<Uuid, Refusal> {
    Uuid::parse_str(raw).map_err(|_| Refusal::UnknownLink)
}

fn urls(state: &AppState) -> Urls<'_> {
    Urls {
        public_base: &state.public_url,
    }
}

/// The redirect at the end: the session's URL with the reserved parameters.
fn redirect_of(ending: &Ending) -> Option<String> {
    let mut url = url::Url::parse(ending.redirect_url.as_deref()?).ok()?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("linkSessionId", &ending.context.session_id.to_string())
            .append_pair("companyId", &ending.company_id.to_string())
            .append_pair(
                "connectionId",
                &ending
                    .connection_id
                    .map(|id| id.to_string())
                    .unwrap_or_default(),
            )
            .append_pair(
                "platformKey",
                ending.platform_key.as_deref().unwrap_or_default(),
            )
            .append_pair("statusCode", &ending.status_code.to_string());
        if let Some(message) = &ending.error_message {
            query.append_pair("errorMessage", message);
        }
    }
    Some(url.into())
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

#[handler]
async fn open_or_show(
    request: &Request,
    Path(raw): Path<String>,
    Query(query): Query<TokenQuery>,
    Data(state): Data<&AppState>,
) -> Response {
    let Ok(id) = session_id(&raw) else {
        return refused(&Refusal::UnknownLink);
    };
    let browser = browser_of(request);
    let frame_origins = flow::frame_origins(&state.db, id).await;
    if let Some(token) = query.token {
        return match flow::open(&state.db, id, &token, browser.as_deref()).await {
            Ok(secret) => {
                let mut response = see_other(&format!("/link/{id}"), &frame_origins);
                let secure = if state.public_url.starts_with("https://") {
                    "; Secure"
                } else {
                    ""
                };
                let cookie = format!(
                    "{BROWSER_COOKIE}={secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600{secure}"
                );
                if let Ok(value) = HeaderValue::from_str(&cookie) {
                    response.headers_mut().insert(header::SET_COOKIE, value);
                }
                response
            }
            Err(refusal) => refused(&refusal),
        };
    }
    match flow::page(&state.db, &state.connectors, id, browser.as_deref()).await {
        Ok(Page::ChoosePlatform { context, platforms }) => html(
            StatusCode::OK,
            pages::choose_platform(&context, &platforms),
            &context.frame_origins,
        ),
        Ok(Page::Confirm {
            context,
            platform,
            ask,
            repair,
        }) => html(
            StatusCode::OK,
            pages::confirm(&context, platform, ask, repair),
            &context.frame_origins,
        ),
        Ok(Page::ChooseOrganization {
            context,
            platform,
            organizations,
        }) => html(
            StatusCode::OK,
            pages::choose_organization(&context, platform, &organizations),
            &context.frame_origins,
        ),
        Ok(Page::Ended(ending)) => match redirect_of(&ending) {
            Some(location) => see_other(&location, &ending.context.frame_origins),
            None => html(
                StatusCode::OK,
                pages::outcome(&ending),
                &ending.context.frame_origins,
            ),
        },
        Err(refusal) => refused(&refusal),
    }
}

#[derive(Deserialize)]
struct PlatformForm {
    #[serde(rename = "platformKey")]
    platform_key: String,
}

#[handler]
async fn choose_platform(
    request: &Request,
    Path(raw): Path<String>,
    form: Option<Form<PlatformForm>>,
    Data(state): Data<&AppState>,
) -> Response {
    let Ok(id) = session_id(&raw) else {
        return refused(&Refusal::UnknownLink);
    };
    let Some(Form(form)) = form else {
        return refused(&Refusal::BadRequest("Choose a platform.".to_owned()));
    };
    let browser = browser_of(request);
    match flow::choose_platform(
        &state.db,
        &state.connectors,
        id,
        browser.as_deref(),
        &form.platform_key,
    )
    .await
    {
        Ok(()) => see_other(
            &format!("/link/{id}"),
            &flow::frame_origins(&state.db, id).await,
        ),
        Err(refusal) => refused(&refusal),
    }
}

#[derive(Deserialize)]
struct AuthorizeForm {
    shop: Option<String>,
    region: Option<String>,
}

#[handler]
async fn authorize(
    request: &Request,
    Path(raw): Path<String>,
    form: Option<Form<AuthorizeForm>>,
    Data(state): Data<&AppState>,
) -> Response {
    let Ok(id) = session_id(&raw) else {
        return refused(&Refusal::UnknownLink);
    };
    let mut inputs = BTreeMap::new();
    if let Some(Form(form)) = form {
        let given = [("shop", form.shop), ("region", form.region)];
        for (name, value) in given {
            if let Some(value) = value {
                inputs.insert(name.to_owned(), value);
            }
        }
    }
    let browser = browser_of(request);
    let urls = urls(state);
    match flow::authorize(
        &state.db,
        &state.keyring,
        &state.connectors,
        id,
        browser.as_deref(),
        inputs,
        &urls,
    )
    .await
    {
        Ok(location) => see_other(&location, &flow::frame_origins(&state.db, id).await),
        Err(refusal) => refused(&refusal),
    }
}

#[derive(Deserialize)]
struct OrganizationForm {
    #[serde(rename = "organizationId")]
    organization_id: String,
}

#[handler]
async fn choose_organization(
    request: &Request,
    Path(raw): Path<String>,
    form: Option<Form<OrganizationForm>>,
    Data(state): Data<&AppState>,
) -> Response {
    let Ok(id) = session_id(&raw) else {
        return refused(&Refusal::UnknownLink);
    };
    let Some(Form(form)) = form else {
        return refused(&Refusal::BadRequest("Choose an organization.".to_owned()));
    };
    let browser = browser_of(request);
    let chosen = flow::choose_organization(
        &state.db,
        &state.keyring,
        &state.connectors,
        id,
        browser.as_deref(),
        &form.organization_id,
    )
    .await;
    state.sync_wake.notify_waiters();
    match chosen {
        Ok(()) => see_other(
            &format!("/link/{id}"),
            &flow::frame_origins(&state.db, id).await,
        ),
        Err(refusal) => refused(&refusal),
    }
}

#[handler]
async fn callback(
    request: &Request,
    Path(platform_key): Path<String>,
    Data(state): Data<&AppState>,
) -> Response {
    let parameters: Vec<(String, String)> =
        url::form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let browser = browser_of(request);
    let urls = urls(state);
    let outcome = flow::callback(
        &state.db,
        &state.keyring,
        &state.connectors,
        &platform_key,
        &parameters,
        browser.as_deref(),
        &urls,
    )
    .await;
    state.sync_wake.notify_waiters();
    match outcome {
        // Away from the callback's address at once: its code and state
        // must not stay in the address bar or the history.
        Ok(session) => see_other(
            &format!("/link/{session}"),
            &flow::frame_origins(&state.db, session).await,
        ),
        Err(refusal) => refused(&refusal),
    }
}

#[derive(Deserialize)]
struct ConsentQuery {
    state: Option<String>,
}

#[handler]
async fn sandbox_consent_page(
    request: &Request,
    Query(query): Query<ConsentQuery>,
    Data(state): Data<&AppState>,
) -> Response {
    let Some(consent_state) = query.state else {
        return refused(&Refusal::Callback(
            "No `state`: open your link again.".to_owned(),
        ));
    };
    let browser = browser_of(request);
    match flow::sandbox_consent_allowed(&state.db, &consent_state, browser.as_deref()).await {
        Ok(()) => html(
            StatusCode::OK,
            pages::sandbox_consent(
                &consent_state,
                crate::platforms::sandbox::LINKABLE_ORGANIZATIONS,
            ),
            &[],
        ),
        Err(refusal) => refused(&refusal),
    }
}

#[derive(Deserialize)]
struct ConsentForm {
    state: String,
    decision: String,
}

#[handler]
async fn sandbox_consent(
    request: &Request,
    form: Option<Form<ConsentForm>>,
    Data(state): Data<&AppState>,
) -> Response {
    let Some(Form(form)) = form else {
        return refused(&Refusal::BadRequest("Allow or deny.".to_owned()));
    };
    let browser = browser_of(request);
    let urls = urls(state);
    let approved = form.decision == "allow";
    match flow::sandbox_consent(
        &state.db,
        &state.keyring,
        &form.state,
        browser.as_deref(),
        approved,
        &urls,
    )
    .await
    {
        Ok(location) => see_other(&location, &[]),
        Err(refusal) => refused(&refusal),
    }
}
