//! Link sessions and the hosted link flow, driven as a browser drives them
//! (redirects followed one by one, the flow's cookie kept): the sandbox's
//! own consent page, Xero with a two-organization consent, QuickBooks
//! Online (`realmId` on the callback) and Shopify (a signed callback), each
//! against its platform's loopback authorization server; repair in place;
//! fetch on first link; and each rule of RFC 9700 the flow keeps.

use std::collections::HashMap;
use std::sync::Arc;

use reqwest::redirect::Policy;
use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, for_each_database};
use crate::platforms::fake::{Answer, Call, Fake, fixture};
use crate::platforms::{options_for, set_oauth_client};
use crate::sync::{reauthorize, settled};

const REDIRECT: &str = "http://127.0.0.1:9/connected";

/// A browser: no automatic redirects, one cookie jar (the flow's cookie).
struct Browser {
    client: reqwest::Client,
    cookie: Option<String>,
}

impl Browser {
    fn new() -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            client: reqwest::Client::builder()
                .redirect(Policy::none())
                .build()
                .expect("a client"),
            cookie: None,
        }
    }

    fn keep_cookie(&mut self, response: &reqwest::Response) {
        for value in response.headers().get_all("set-cookie") {
            let value = value.to_str().expect("text");
            if let Some(pair) = value.split(';').next() {
                self.cookie = Some(pair.to_owned());
            }
        }
    }

    async fn get(&mut self, url: &str) -> reqwest::Response {
        let mut request = self.client.get(url);
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        let response = request.send().await.expect("answered");
        self.keep_cookie(&response);
        response
    }

    async fn post(&mut self, url: &str, form: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self.client.post(url).form(form);
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        let response = request.send().await.expect("answered");
        self.keep_cookie(&response);
        response
    }
}

fn location(response: &reqwest::Response) -> String {
    assert_eq!(response.status(), 303, "{response:?}");
    response
        .headers()
        .get("location")
        .expect("a location")
        .to_str()
        .expect("text")
        .to_owned()
}

/// `location` made absolute on the app (the flow's own redirects are paths).
fn absolute(app: &TestApp, location: &str) -> String {
    if location.starts_with('/') {
        app.url(location)
    } else {
        location.to_owned()
    }
}

fn query_of(url: &str) -> HashMap<String, String> {
    url::Url::parse(url)
        .expect("a URL")
        .query_pairs()
        .into_owned()
        .collect()
}

async fn set_link_settings(app: &TestApp, settings: Value) {
    let response = app
        .raw()
        .put(app.url("/linkSettings"))
        .header("authorization", app.authorization())
        .json(&settings)
        .send()
        .await
        .expect("answered");
    assert_eq!(
        response.status(),
        200,
        "{}",
        response.text().await.unwrap_or_default()
    );
}

/// Creates a link session; returns its JSON answer.
async fn create_session(app: &TestApp, company_id: Uuid, body: Value) -> (u16, Value) {
    let response = app
        .post_json(&format!("/companies/{company_id}/linkSessions"), &body)
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

async fn session_of(app: &TestApp, company_id: Uuid, session_id: &str) -> Value {
    let response = app
        .get(&format!(
            "/companies/{company_id}/linkSessions/{session_id}"
        ))
        .await;
    assert_eq!(response.status(), 200);
    response.json().await.expect("JSON")
}

/// Opens the session's `linkUrl` in `browser` and returns the first page's HTML.
async fn open(app: &TestApp, browser: &mut Browser, session: &Value) -> String {
    let link_url = session["linkUrl"].as_str().expect("a linkUrl");
    let opened = browser.get(link_url).await;
    let page = location(&opened);
    assert!(
        !page.contains("token"),
        "the token leaves the address bar: {page}"
    );
    let response = browser.get(&absolute(app, &page)).await;
    assert_eq!(response.status(), 200);
    assert_protected(&response);
    response.text().await.expect("HTML")
}

/// The hosted pages' headers.
fn assert_protected(response: &reqwest::Response) {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(header("referrer-policy"), "no-referrer");
    assert_eq!(header("cache-control"), "no-store");
    let policy = header("content-security-policy");
    assert!(policy.contains("default-src 'none'"), "{policy}");
    assert!(policy.contains("frame-ancestors"), "{policy}");
}

/// From the confirmation page: continue to the platform; returns the
/// authorize URL the browser is sent to.
async fn continue_to_platform(
    app: &TestApp,
    browser: &mut Browser,
    session_id: &str,
    form: &[(&str, &str)],
) -> String {
    let response = browser
        .post(&app.url(&format!("/link/{session_id}/authorize")), form)
        .await;
    location(&response)
}

/// Follows the platform's redirect back to the callback, then to the
/// session's page; returns that page's answer.
async fn back_from_platform(
    app: &TestApp,
    browser: &mut Browser,
    callback: &str,
) -> reqwest::Response {
    let answered = browser.get(callback).await;
    let page = location(&answered);
    assert_eq!(
        page.split('?').count(),
        1,
        "no parameters leave the callback: {page}"
    );
    browser.get(&absolute(app, &page)).await
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    app.db
        .query_one_raw(Statement::from_string(
            app.db.get_database_backend(),
            sql.to_owned(),
        ))
        .await
        .expect("counted")
        .expect("a row")
        .try_get::<i64>("", "n")
        .expect("a count")
}

/// The sandbox end to end: picker, confirmation, the sandbox's own consent
/// page, the organization picker, the redirect with its parameters, the
/// session `Completed`, the connection `Linked` and already syncing (fetch
/// on first link), its invoices readable.
#[tokio::test]
async fn a_customer_links_the_sandbox_and_lands_on_the_redirect_url_with_its_data_syncing() {
    for_each_database(async |app| {
        set_link_settings(
            app,
            json!({"displayName": "Acme Lending", "allowedRedirectUrls": [REDIRECT]}),
        )
        .await;
        let company_id = new_company(app, "Bramble & Co").await;
        let (status, session) =
            create_session(app, company_id, json!({"redirectUrl": REDIRECT})).await;
        assert_eq!(status, 201, "{session}");
        assert_eq!(session["status"], "Created");
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let token = query_of(session["linkUrl"].as_str().expect("a link"))["token"].clone();
        assert!(token.len() >= 43, "at least 128 random bits: {token}");

        let mut browser = Browser::new();
        let picker = open(app, &mut browser, &session).await;
        assert!(
            picker.contains("Acme Lending") && picker.contains("Bramble &amp; Co"),
            "{picker}"
        );
        assert!(picker.contains("value=\"sandbox\""), "{picker}");
        assert_eq!(
            session_of(app, company_id, &session_id).await["status"],
            "Opened"
        );

        let chosen = browser
            .post(
                &app.url(&format!("/link/{session_id}/platform")),
                &[("platformKey", "sandbox")],
            )
            .await;
        let confirmation = browser.get(&absolute(app, &location(&chosen))).await;
        let confirmation = confirmation.text().await.expect("HTML");
        assert!(
            confirmation.contains("Continue to tributary Sandbox"),
            "{confirmation}"
        );

        let consent = continue_to_platform(app, &mut browser, &session_id, &[]).await;
        assert!(
            consent.starts_with(&app.url("/link/sandbox/consent?")),
            "{consent}"
        );
        let authorize = query_of(&consent);
        assert_eq!(authorize["code_challenge_method"], "S256");
        assert_eq!(
            authorize["redirect_uri"],
            app.url("/oauth/sandbox/callback")
        );
        let page = browser.get(&consent).await;
        assert_eq!(page.status(), 200);
        let allowed = browser
            .post(
                &app.url("/link/sandbox/consent"),
                &[
                    ("state", authorize["state"].as_str()),
                    ("decision", "allow"),
                ],
            )
            .await;
        let callback = location(&allowed);
        let organizations = back_from_platform(app, &mut browser, &callback).await;
        let organizations = organizations.text().await.expect("HTML");
        assert!(
            organizations.contains("Demo Books Ltd") && organizations.contains("Demo Traders Ltd")
        );

        let chosen = browser
            .post(
                &app.url(&format!("/link/{session_id}/organization")),
                &[("organizationId", "sbx-demo-traders")],
            )
            .await;
        let ended = browser.get(&absolute(app, &location(&chosen))).await;
        let landed = location(&ended);
        assert!(landed.starts_with(REDIRECT), "{landed}");
        let landed = query_of(&landed);
        assert_eq!(landed["statusCode"], "200");
        assert_eq!(landed["linkSessionId"], session_id);
        assert_eq!(landed["companyId"], company_id.to_string());
        assert_eq!(landed["platformKey"], "sandbox");

        let done = session_of(app, company_id, &session_id).await;
        assert_eq!(done["status"], "Completed");
        assert_eq!(
            done["connectionId"].as_str(),
            Some(landed["connectionId"].as_str())
        );
        let connection_id: Uuid = landed["connectionId"].parse().expect("a connection id");
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("the connection")
            .into_inner();
        assert_eq!(connection.status, client::types::ConnectionStatus::Linked);

        // Fetch on first link: the sync was queued without being asked for.
        let operations = settled(&app.client, company_id).await;
        assert_eq!(
            operations.len(),
            tributary::data::DataType::all().len(),
            "every data type the sandbox syncs"
        );
        let invoices = app
            .get(&format!("/companies/{company_id}/data/invoices"))
            .await;
        assert_eq!(invoices.status(), 200);

        // The link works once; the token is kept only as its digest.
        let again = browser
            .get(session["linkUrl"].as_str().expect("a link"))
            .await;
        assert_eq!(location(&again), format!("/link/{session_id}"));
        let stored = count(
            app,
            &format!("SELECT COUNT(*) AS n FROM link_session WHERE token_digest = '{token}'"),
        )
        .await;
        assert_eq!(stored, 0);
        let events = count(
            app,
            "SELECT COUNT(*) AS n FROM webhook_message WHERE event_type = 'connection.connected'",
        )
        .await;
        assert_eq!(events, 1);
    })
    .await;
}

/// A Xero consent of two organizations, from the fake's `/connections`
/// filtered by the token's authentication event, and the unchosen one
/// disconnected there (`DELETE /connections/{id}`).
fn xero_router() -> crate::platforms::fake::Router {
    let inner = crate::platforms::xero::router();
    Arc::new(move |call: &Call| {
        if call.path == "/connections" && call.method == "GET" {
            let event = call.query.get("authEventId").cloned().unwrap_or_default();
            if event.is_empty() {
                return Answer::json(200, fixture("xero/fixtures/connections.json"));
            }
            let tenants = json!([
                {"id": "c0000000-0000-4000-8000-000000000001", "authEventId": event,
                 "tenantId": "70784a63-d24b-46a9-a4db-0e70a274b056", "tenantType": "ORGANISATION", "tenantName": "Maple Florists"},
                {"id": "c0000000-0000-4000-8000-000000000002", "authEventId": event,
                 "tenantId": "11111111-2222-4333-8444-555555555555", "tenantType": "ORGANISATION", "tenantName": "Maple Florists (Demo)"},
                {"id": "c0000000-0000-4000-8000-000000000003", "authEventId": event,
                 "tenantId": "99999999-2222-4333-8444-555555555555", "tenantType": "PRACTICE", "tenantName": "Maple's accountants"}
            ]);
            return Answer::json(200, tenants.to_string());
        }
        if call.path.starts_with("/connections/") && call.method == "DELETE" {
            return Answer::json(204, "");
        }
        inner(call)
    })
}

async fn xero_fake() -> Fake {
    let fake = Fake::start(
        "xero",
        crate::platforms::fake::Scheme::Bearer,
        "unused-access-token",
        "unused-refresh-token",
        fixture("xero/fixtures/unauthorized.json"),
        xero_router(),
    )
    .await;
    fake.with(|inner| inner.jwt_access_tokens = true);
    fake
}

#[tokio::test]
async fn a_xero_consent_of_two_organizations_links_the_chosen_one_and_lets_go_of_the_other() {
    for backend in backends() {
        let fake = xero_fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "xero").await;
        let company_id = new_company(&app, "Maple Florists").await;
        let (status, session) =
            create_session(&app, company_id, json!({"platformKey": "xero"})).await;
        assert_eq!(status, 201, "{session}");
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        let confirmation = open(&app, &mut browser, &session).await;
        assert!(
            confirmation.contains("Continue to Xero"),
            "no picker for one platform: {confirmation}"
        );
        let authorize = continue_to_platform(&app, &mut browser, &session_id, &[]).await;
        assert!(authorize.starts_with(&fake.authorize_url()), "{authorize}");
        let asked = query_of(&authorize);
        assert_eq!(
            asked["scope"],
            "offline_access accounting.invoices.read accounting.payments.read accounting.contacts.read \
             accounting.settings.read accounting.journals.read"
        );
        assert_eq!(asked["response_type"], "code");
        assert_eq!(asked["code_challenge_method"], "S256");
        assert!(!asked.contains_key("code_verifier"));
        // The fake's authorize endpoint redirects back with a code.
        let at_platform = browser.get(&authorize).await;
        let callback = at_platform.headers()["location"]
            .to_str()
            .expect("text")
            .to_owned();
        let page = back_from_platform(&app, &mut browser, &callback).await;
        let page = page.text().await.expect("HTML");
        assert!(page.contains("Maple Florists (Demo)"), "{page}");
        assert!(
            !page.contains("accountants"),
            "practices are not organizations: {page}"
        );
        let lookups: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/connections")
            .collect();
        assert_eq!(lookups.len(), 1);
        assert_eq!(
            lookups[0].query["authEventId"],
            "e0000000-0000-4000-8000-000000000001"
        );

        let chosen = browser
            .post(
                &app.url(&format!("/link/{session_id}/organization")),
                &[("organizationId", "70784a63-d24b-46a9-a4db-0e70a274b056")],
            )
            .await;
        let outcome = browser.get(&absolute(&app, &location(&chosen))).await;
        assert_eq!(outcome.status(), 200, "no redirectUrl: the outcome page");
        assert!(outcome.text().await.expect("HTML").contains("Connected"));
        let released: Vec<String> = fake
            .calls()
            .into_iter()
            .filter(|call| call.method == "DELETE")
            .map(|call| call.path)
            .collect();
        assert_eq!(
            released,
            [
                "/connections/c0000000-0000-4000-8000-000000000002",
                "/connections/c0000000-0000-4000-8000-000000000003"
            ]
        );
        let done = session_of(&app, company_id, &session_id).await;
        assert_eq!(done["status"], "Completed");
        let connection_id: Uuid = done["connectionId"]
            .as_str()
            .expect("linked")
            .parse()
            .expect("a uuid");
        let stored = crate::platforms::stored(&app, connection_id).await;
        assert_eq!(stored["tenantId"], "70784a63-d24b-46a9-a4db-0e70a274b056");
        assert_eq!(stored["refreshToken"], "rt-linked-1");
        // The token exchange sent exactly the registered callback and the verifier.
        let form = fake.with(|inner| inner.token_forms[0].clone());
        assert_eq!(form["grant_type"], "authorization_code");
        assert_eq!(form["redirect_uri"], app.url("/oauth/xero/callback"));
        assert!(form.contains_key("code_verifier"));
        settled(&app.client, company_id).await;
    }
}

#[tokio::test]
async fn quickbooks_names_its_company_on_the_callback_and_shopify_signs_its_callback() {
    for backend in backends() {
        // QuickBooks Online: `realmId` arrives with the code.
        let fake = crate::platforms::quickbooks_online::fake().await;
        fake.with(|inner| {
            inner.callback_extras = vec![(
                "realmId".to_owned(),
                crate::platforms::quickbooks_online::REALM.to_owned(),
            )]
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "quickbooks-online").await;
        let company_id = new_company(&app, "Juniper Books").await;
        let (_, session) = create_session(
            &app,
            company_id,
            json!({"platformKey": "quickbooks-online"}),
        )
        .await;
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        open(&app, &mut browser, &session).await;
        let authorize = continue_to_platform(&app, &mut browser, &session_id, &[]).await;
        assert_eq!(
            query_of(&authorize)["scope"],
            "com.intuit.quickbooks.accounting"
        );
        let at_platform = browser.get(&authorize).await;
        let callback = at_platform.headers()["location"]
            .to_str()
            .expect("text")
            .to_owned();
        let outcome = back_from_platform(&app, &mut browser, &callback).await;
        assert!(outcome.text().await.expect("HTML").contains("Connected"));
        let done = session_of(&app, company_id, &session_id).await;
        let connection_id: Uuid = done["connectionId"]
            .as_str()
            .expect("linked")
            .parse()
            .expect("a uuid");
        let stored = crate::platforms::stored(&app, connection_id).await;
        assert_eq!(
            stored["realmId"],
            crate::platforms::quickbooks_online::REALM
        );
        settled(&app.client, company_id).await;

        // Shopify: the shop is asked first; the callback is signed.
        let fake = crate::platforms::shopify::fake().await;
        fake.with(|inner| {
            inner.callback_extras = vec![(
                "shop".to_owned(),
                crate::platforms::shopify::SHOP.to_owned(),
            )];
            inner.shopify_signed = true;
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "shopify").await;
        let company_id = new_company(&app, "Maple Goods").await;
        let (_, session) =
            create_session(&app, company_id, json!({"platformKey": "shopify"})).await;
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        let confirmation = open(&app, &mut browser, &session).await;
        assert!(confirmation.contains("name=\"shop\""), "{confirmation}");
        let refused = browser
            .post(
                &app.url(&format!("/link/{session_id}/authorize")),
                &[("shop", "evil.example.com")],
            )
            .await;
        assert_eq!(refused.status(), 400, "only *.myshopify.com shops");
        let authorize =
            continue_to_platform(&app, &mut browser, &session_id, &[("shop", "maple-goods")]).await;
        assert_eq!(
            query_of(&authorize)["scope"],
            "read_orders,read_customers,read_products"
        );
        let at_platform = browser.get(&authorize).await;
        let callback = at_platform.headers()["location"]
            .to_str()
            .expect("text")
            .to_owned();
        let outcome = back_from_platform(&app, &mut browser, &callback).await;
        assert!(outcome.text().await.expect("HTML").contains("Connected"));
        let done = session_of(&app, company_id, &session_id).await;
        let connection_id: Uuid = done["connectionId"]
            .as_str()
            .expect("linked")
            .parse()
            .expect("a uuid");
        let stored = crate::platforms::stored(&app, connection_id).await;
        assert_eq!(stored["shopDomain"], crate::platforms::shopify::SHOP);
        settled(&app.client, company_id).await;
    }
}

/// Starts a Xero flow up to the platform's redirect back; returns the
/// browser, the session id and the callback URL (not yet visited).
async fn xero_callback(app: &TestApp, company_id: Uuid) -> (Browser, String, String) {
    let (status, session) = create_session(app, company_id, json!({"platformKey": "xero"})).await;
    assert_eq!(status, 201, "{session}");
    let session_id = session["id"].as_str().expect("an id").to_owned();
    let mut browser = Browser::new();
    open(app, &mut browser, &session).await;
    let authorize = continue_to_platform(app, &mut browser, &session_id, &[]).await;
    let at_platform = browser.get(&authorize).await;
    let callback = at_platform.headers()["location"]
        .to_str()
        .expect("text")
        .to_owned();
    (browser, session_id, callback)
}

fn with_parameter(url: &str, name: &str, value: &str) -> String {
    let mut parsed = url::Url::parse(url).expect("a URL");
    let kept: Vec<(String, String)> = parsed
        .query_pairs()
        .into_owned()
        .filter(|(key, _)| key != name)
        .collect();
    parsed
        .query_pairs_mut()
        .clear()
        .extend_pairs(kept)
        .append_pair(name, value);
    parsed.into()
}

/// RFC 9700: `state` is single-use, bound to the browser that started the
/// flow and to the platform it was issued for; an unknown or expired one
/// is refused; each refusal happens before any token exchange, so a code
/// is exchanged at most once; codes, states and tokens appear in no page,
/// answer or log line.
#[tokio::test]
async fn every_callback_that_breaks_a_rule_is_refused_before_any_token_exchange() {
    for backend in backends() {
        let fake = xero_fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "xero").await;
        set_oauth_client(&app, "quickbooks-online").await;
        let company_id = new_company(&app, "Maple Florists").await;

        // Another browser (no cookie, or another flow's cookie).
        let (mut browser, _, callback) = xero_callback(&app, company_id).await;
        let stranger = Browser::new()
            .client
            .get(&callback)
            .send()
            .await
            .expect("answered");
        assert_eq!(stranger.status(), 403);
        assert_protected(&stranger);
        let mut other = Browser::new();
        other.cookie =
            Some("tributary_link=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_owned());
        assert_eq!(other.get(&callback).await.status(), 403);
        // Mix-up: Xero's state on QuickBooks' callback.
        let mixed = callback.replace("/oauth/xero/", "/oauth/quickbooks-online/");
        let refused = browser.get(&mixed).await;
        assert_eq!(refused.status(), 400);
        assert!(
            refused
                .text()
                .await
                .expect("HTML")
                .contains("another platform")
        );
        // Unknown and missing state.
        assert_eq!(
            browser
                .get(&with_parameter(&callback, "state", "forged"))
                .await
                .status(),
            400
        );
        let unstated = app.url("/oauth/xero/callback?code=abc");
        assert_eq!(browser.get(&unstated).await.status(), 400);
        assert_eq!(fake.token_calls(), 0, "nothing was exchanged");

        // The real callback goes through once; replayed, it is refused.
        let first = browser.get(&callback).await;
        assert_eq!(first.status(), 303);
        let replayed = browser.get(&callback).await;
        assert_eq!(replayed.status(), 400);
        assert!(
            replayed
                .text()
                .await
                .expect("HTML")
                .contains("already been used")
        );
        assert_eq!(fake.token_calls(), 1, "the code was exchanged once");

        // An expired state.
        let (mut browser, _, callback) = xero_callback(&app, company_id).await;
        app.db
            .execute_unprepared("UPDATE link_attempt SET expires_at = created WHERE used IS NULL")
            .await
            .expect("expired");
        let expired = browser.get(&callback).await;
        assert_eq!(expired.status(), 400);
        assert!(expired.text().await.expect("HTML").contains("too long"));
        assert_eq!(fake.token_calls(), 1);

        // Nothing secret anywhere it could leak.
        let code = query_of(&callback)["code"].clone();
        let state = query_of(&callback)["state"].clone();
        let logs = captured_logs();
        for secret in [
            code.as_str(),
            state.as_str(),
            "rt-linked-1",
            "e0000000-0000-4000-8000-000000000001",
            crate::platforms::fake::CLIENT_SECRET,
        ] {
            assert!(!logs.contains(secret), "{secret} is in the logs");
        }
        let listed = app
            .get(&format!("/companies/{company_id}/connections"))
            .await
            .text()
            .await
            .expect("text");
        assert!(!listed.contains("rt-linked") && !listed.contains("eyJ"));
    }
}

/// Shopify's callback is checked before the exchange: a bad `hmac`, or a
/// shop other than the one given, is refused.
#[tokio::test]
async fn a_shopify_callback_with_a_bad_signature_or_another_shop_is_refused() {
    for backend in backends() {
        let fake = crate::platforms::shopify::fake().await;
        fake.with(|inner| {
            inner.callback_extras = vec![(
                "shop".to_owned(),
                crate::platforms::shopify::SHOP.to_owned(),
            )];
            inner.shopify_signed = true;
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "shopify").await;
        let company_id = new_company(&app, "Maple Goods").await;
        let (_, session) =
            create_session(&app, company_id, json!({"platformKey": "shopify"})).await;
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        open(&app, &mut browser, &session).await;
        let authorize = continue_to_platform(
            &app,
            &mut browser,
            &session_id,
            &[("shop", crate::platforms::shopify::SHOP)],
        )
        .await;
        let at_platform = browser.get(&authorize).await;
        let callback = at_platform.headers()["location"]
            .to_str()
            .expect("text")
            .to_owned();
        let forged = with_parameter(&callback, "hmac", &"0".repeat(64));
        let refused = browser.get(&forged).await;
        assert_eq!(refused.status(), 400);
        assert!(refused.text().await.expect("HTML").contains("signature"));
        let other_shop = with_parameter(&callback, "shop", "evil-shop.myshopify.com");
        assert_eq!(browser.get(&other_shop).await.status(), 400);
        assert_eq!(fake.token_calls(), 0);
        assert_eq!(browser.get(&callback).await.status(), 303);
        assert_eq!(fake.token_calls(), 1);
    }
}

/// Marks the connection `Deauthorized`, as a platform's rejection does.
async fn deauthorize(app: &TestApp, connection_id: Uuid) {
    app.db
        .execute_raw(Statement::from_sql_and_values(
            app.db.get_database_backend(),
            "UPDATE connection SET status = 'Deauthorized' WHERE id = $1",
            [connection_id.into()],
        ))
        .await
        .expect("deauthorized");
}

/// A deauthorized connection is repaired in place through a session for
/// it: the same connection, `connection.reconnected`, no fetch on first
/// link; another organization is refused and changes nothing.
#[tokio::test]
async fn a_deauthorized_connection_is_repaired_in_place_and_only_with_its_own_organization() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Bramble & Co").await;
        let connection_id = new_connection(app, company_id, "sandbox").await;
        reauthorize(
            app,
            company_id,
            connection_id,
            json!({"organizationId": "sbx-demo-books", "accessToken": "migrated"}),
        )
        .await;
        deauthorize(app, connection_id).await;
        let (status, session) = create_session(
            app,
            company_id,
            json!({"connectionId": connection_id, "platformKey": "xero"}),
        )
        .await;
        assert_eq!(
            status, 400,
            "another platform than the connection's: {session}"
        );

        let (status, session) =
            create_session(app, company_id, json!({"connectionId": connection_id})).await;
        assert_eq!(status, 201, "{session}");
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        let confirmation = open(app, &mut browser, &session).await;
        assert!(confirmation.contains("Reconnect"), "{confirmation}");
        let consent = continue_to_platform(app, &mut browser, &session_id, &[]).await;
        let state = query_of(&consent)["state"].clone();
        browser.get(&consent).await;
        let allowed = browser
            .post(
                &app.url("/link/sandbox/consent"),
                &[("state", &state), ("decision", "allow")],
            )
            .await;
        // The repaired connection's organization is chosen for it: no picker.
        back_from_platform(app, &mut browser, &location(&allowed)).await;
        let repaired = session_of(app, company_id, &session_id).await;
        assert_eq!(repaired["status"], "Completed", "{repaired}");
        assert_eq!(repaired["connectionId"], connection_id.to_string());
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, client::types::ConnectionStatus::Linked);
        let reconnected = count(
            app,
            "SELECT COUNT(*) AS n FROM webhook_message WHERE event_type = 'connection.reconnected'",
        )
        .await;
        assert_eq!(reconnected, 1);
        let operations = count(app, "SELECT COUNT(*) AS n FROM pull_operation").await;
        assert_eq!(operations, 0, "a re-link does not fetch on first link");

        // A connection of another organization than the sandbox consents to.
        let other = new_connection(app, company_id, "sandbox").await;
        reauthorize(
            app,
            company_id,
            other,
            json!({"organizationId": "sbx-elsewhere", "accessToken": "t"}),
        )
        .await;
        deauthorize(app, other).await;
        let (_, session) = create_session(app, company_id, json!({"connectionId": other})).await;
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        open(app, &mut browser, &session).await;
        let consent = continue_to_platform(app, &mut browser, &session_id, &[]).await;
        let state = query_of(&consent)["state"].clone();
        let allowed = browser
            .post(
                &app.url("/link/sandbox/consent"),
                &[("state", &state), ("decision", "allow")],
            )
            .await;
        let page = back_from_platform(app, &mut browser, &location(&allowed)).await;
        let page = page.text().await.expect("HTML");
        assert!(
            page.contains("Not connected") && page.contains("sbx-elsewhere"),
            "{page}"
        );
        let failed = session_of(app, company_id, &session_id).await;
        assert_eq!(failed["status"], "Failed");
        let connection = app
            .client
            .get_connection(&company_id, &other)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(
            connection.status,
            client::types::ConnectionStatus::Deauthorized,
            "nothing changed"
        );
        let failures = count(
            app,
            "SELECT COUNT(*) AS n FROM webhook_message WHERE event_type = 'connection.failed'",
        )
        .await;
        assert_eq!(failures, 1);
    })
    .await;
}

/// Token migration keeps a connection's organization, and never fetches
/// on first link (the specification's rule for migration).
#[tokio::test]
async fn migrated_tokens_of_another_organization_answer_409_and_a_migration_fetches_nothing() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Bramble & Co").await;
        let connection_id = new_connection(app, company_id, "sandbox").await;
        reauthorize(
            app,
            company_id,
            connection_id,
            json!({"organizationId": "sbx-one", "accessToken": "t"}),
        )
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(
            count(app, "SELECT COUNT(*) AS n FROM pull_operation").await,
            0
        );
        let response = crate::platforms::authorize(
            app,
            company_id,
            connection_id,
            &json!({"organizationId": "sbx-two", "accessToken": "t"}),
            false,
        )
        .await;
        assert_eq!(response.status(), 409);
        let body: Value = response.json().await.expect("JSON");
        let message = body["error"].as_str().unwrap_or_default();
        assert!(
            message.contains("sbx-one") && message.contains("sbx-two"),
            "{message}"
        );
    })
    .await;
}

/// What a session may be created for: allowed redirect URLs only (no open
/// redirect), a platform the client can link, a connection to repair that
/// needs it, the client's own company.
#[tokio::test]
async fn sessions_refuse_unlisted_redirects_unlinkable_platforms_and_other_tenants_companies() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Bramble & Co").await;
        let (status, body) = create_session(
            app,
            company_id,
            json!({"redirectUrl": "https://evil.example/steal"}),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["validation"]["errors"][0]["itemId"], "redirectUrl");
        let (status, body) = create_session(app, company_id, json!({"platformKey": "xero"})).await;
        assert_eq!(status, 409, "no OAuth client stored: {body}");
        let (status, body) = create_session(
            app,
            company_id,
            json!({"platformKey": "quickbooks-desktop"}),
        )
        .await;
        assert_eq!(status, 422, "{body}");
        let (status, _) = create_session(app, company_id, json!({"platformKey": "nope"})).await;
        assert_eq!(status, 400);
        let (status, _) = create_session(app, company_id, json!({"unknown": 1})).await;
        assert_eq!(status, 400);
        let (_, other_client) = app.other_tenant("Elsewhere").await;
        let theirs = other_client
            .create_company(&crate::helpers::company_input("Theirs", None))
            .await
            .expect("created")
            .into_inner();
        let (status, _) = create_session(app, theirs.company_id, json!({})).await;
        assert_eq!(status, 404);
        let (status, _) = create_session(app, Uuid::now_v7(), json!({})).await;
        assert_eq!(status, 404);

        // Settings refuse what they cannot honour, each problem named.
        let response = app
            .raw()
            .put(app.url("/linkSettings"))
            .header("authorization", app.authorization())
            .json(&json!({
                "allowedRedirectUrls": ["http://app.example.com/done", "https://ok.example.com/#x"],
                "allowedFrameOrigins": ["https://app.example.com/path"],
                "fetchOnFirstLink": ["invoices", "ledgers"]
            }))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.expect("JSON");
        let items: Vec<&str> = body["validation"]["errors"]
            .as_array()
            .expect("errors")
            .iter()
            .map(|error| error["itemId"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            items,
            [
                "allowedRedirectUrls[0]",
                "allowedRedirectUrls[1]",
                "allowedFrameOrigins[0]",
                "fetchOnFirstLink[1]"
            ]
        );
        let kept: Value = app.get("/linkSettings").await.json().await.expect("JSON");
        assert_eq!(kept["allowedRedirectUrls"], json!([]), "nothing was stored");
    })
    .await;
}

/// An expired session's link shows a page saying so, and the API says
/// `Expired`; an unknown link is a page too, never JSON; the pages have a
/// rate limit of their own.
#[tokio::test]
async fn expired_and_unknown_links_are_pages_and_the_pages_have_their_own_rate_limit() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Bramble & Co").await;
        let (_, session) = create_session(app, company_id, json!({})).await;
        let session_id = session["id"].as_str().expect("an id").to_owned();
        app.db
            .execute_unprepared("UPDATE link_session SET expires_at = created")
            .await
            .expect("expired");
        let mut browser = Browser::new();
        let expired = browser
            .get(session["linkUrl"].as_str().expect("a link"))
            .await;
        assert_eq!(expired.status(), 410);
        assert_protected(&expired);
        assert!(expired.text().await.expect("HTML").contains("expired"));
        assert_eq!(
            session_of(app, company_id, &session_id).await["status"],
            "Expired"
        );
        let unknown = browser
            .get(&app.url(&format!("/link/{}?token=x", Uuid::now_v7())))
            .await;
        assert_eq!(unknown.status(), 404);
        assert!(
            unknown.headers()["content-type"]
                .to_str()
                .expect("text")
                .starts_with("text/html")
        );
        let mut limited = false;
        for _ in 0..200 {
            if browser.get(&app.url("/link/not-a-session")).await.status() == 429 {
                limited = true;
                break;
            }
        }
        assert!(limited, "the hosted pages answer 429 past their rate limit");
    })
    .await;
}

/// Links `platform_key` end to end against `fake` (its authorize endpoint
/// redirecting straight back), giving `form` on the confirmation page;
/// returns the completed session and the stored authorization body.
async fn link_through(app: &TestApp, platform_key: &str, form: &[(&str, &str)]) -> (Value, Value) {
    link_choosing(app, platform_key, form, None).await
}

/// [`link_through`], choosing `organization` on the picker when given.
async fn link_choosing(
    app: &TestApp,
    platform_key: &str,
    form: &[(&str, &str)],
    organization: Option<&str>,
) -> (Value, Value) {
    set_oauth_client(app, platform_key).await;
    let company_id = new_company(app, &format!("{platform_key} customer")).await;
    let (status, session) =
        create_session(app, company_id, json!({"platformKey": platform_key})).await;
    assert_eq!(status, 201, "{session}");
    let session_id = session["id"].as_str().expect("an id").to_owned();
    let mut browser = Browser::new();
    open(app, &mut browser, &session).await;
    let authorize = continue_to_platform(app, &mut browser, &session_id, form).await;
    let asked = query_of(&authorize);
    assert_eq!(
        asked["redirect_uri"],
        app.url(&format!("/oauth/{platform_key}/callback"))
    );
    assert_eq!(asked["client_id"], crate::platforms::fake::CLIENT_ID);
    let at_platform = browser.get(&authorize).await;
    let callback = at_platform.headers()["location"]
        .to_str()
        .expect("text")
        .to_owned();
    let mut outcome = back_from_platform(app, &mut browser, &callback).await;
    if let Some(organization) = organization {
        let picker = outcome.text().await.expect("HTML");
        assert!(
            picker.contains("Choose the organization"),
            "{platform_key}: {picker}"
        );
        let chosen = browser
            .post(
                &app.url(&format!("/link/{session_id}/organization")),
                &[("organizationId", organization)],
            )
            .await;
        outcome = browser.get(&absolute(app, &location(&chosen))).await;
    }
    let outcome = outcome.text().await.expect("HTML");
    assert!(outcome.contains("Connected"), "{platform_key}: {outcome}");
    let done = session_of(app, company_id, &session_id).await;
    assert_eq!(done["status"], "Completed", "{platform_key}: {done}");
    let connection_id: Uuid = done["connectionId"]
        .as_str()
        .expect("linked")
        .parse()
        .expect("a uuid");
    let stored = crate::platforms::stored(app, connection_id).await;
    settled(&app.client, company_id).await;
    (done, stored)
}

/// Every platform linked through the hosted flow, over HTTP against its
/// fake: the organization found the way the platform documents it (a call,
/// a field of the token answer) and stored as `PUT .../authorization`
/// would store it, and the first link's sync completing.
#[tokio::test]
async fn stripe_mollie_and_freeagent_link_with_the_organization_each_documents() {
    for backend in backends() {
        let fake = crate::platforms::stripe::fake().await;
        fake.with(|inner| {
            inner.code_answer_extras.insert(
                "stripe_user_id".to_owned(),
                Value::from(crate::platforms::stripe::ACCOUNT),
            );
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "stripe", &[]).await;
        assert_eq!(stored["stripeUserId"], crate::platforms::stripe::ACCOUNT);
        let form = fake.with(|inner| inner.token_forms[0].clone());
        assert_eq!(
            form["client_secret"],
            crate::platforms::fake::CLIENT_SECRET,
            "the secret key in the body"
        );

        let fake = crate::platforms::mollie::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "mollie", &[]).await;
        assert_eq!(
            stored["organizationId"],
            crate::platforms::mollie::ORGANIZATION
        );
        assert!(
            fake.calls()
                .iter()
                .any(|call| call.path == "/v2/organizations/me")
        );

        let fake = crate::platforms::freeagent::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "freeagent", &[]).await;
        assert_eq!(stored["subdomain"], crate::platforms::freeagent::SUBDOMAIN);
    }
}

/// Square (`merchant_id` of a JSON token answer, PKCE), Zettle
/// (`GET /users/self`) and Sage (`GET /businesses`: two businesses, so the
/// customer chooses) linked against their fakes.
#[tokio::test]
async fn square_zettle_and_sage_link_with_the_organization_each_documents() {
    for backend in backends() {
        let fake = crate::platforms::square::fake().await;
        fake.with(|inner| {
            inner.code_answer_extras.insert(
                "merchant_id".to_owned(),
                Value::from(crate::platforms::square::MERCHANT),
            );
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "square", &[]).await;
        assert_eq!(stored["merchantId"], crate::platforms::square::MERCHANT);
        let (content_type, form) = fake.with(|inner| {
            (
                inner.token_content_types[0].clone(),
                inner.token_forms[0].clone(),
            )
        });
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        assert!(form.contains_key("code_verifier"), "PKCE: {form:?}");

        let fake = crate::platforms::zettle::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "zettle", &[]).await;
        assert_eq!(
            stored["organizationUuid"],
            crate::platforms::zettle::ORGANIZATION
        );

        // Sage: the picker offers both businesses of the fake.
        let fake = crate::platforms::sage_business_cloud::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "sage-business-cloud").await;
        let company_id = new_company(&app, "Acme Garden Centre").await;
        let (_, session) = create_session(
            &app,
            company_id,
            json!({"platformKey": "sage-business-cloud"}),
        )
        .await;
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        open(&app, &mut browser, &session).await;
        let authorize = continue_to_platform(&app, &mut browser, &session_id, &[]).await;
        let at_platform = browser.get(&authorize).await;
        let callback = at_platform.headers()["location"]
            .to_str()
            .expect("text")
            .to_owned();
        let picker = back_from_platform(&app, &mut browser, &callback).await;
        let picker = picker.text().await.expect("HTML");
        assert!(
            picker.contains("Acme Garden Centre Ltd") && picker.contains("Acme Holdings"),
            "{picker}"
        );
        let chosen = browser
            .post(
                &app.url(&format!("/link/{session_id}/organization")),
                &[("organizationId", "0d40342d0287cd6b13555c54afca6c90")],
            )
            .await;
        let outcome = browser.get(&absolute(&app, &location(&chosen))).await;
        assert!(outcome.text().await.expect("HTML").contains("Connected"));
        let done = session_of(&app, company_id, &session_id).await;
        let connection_id: Uuid = done["connectionId"]
            .as_str()
            .expect("linked")
            .parse()
            .expect("a uuid");
        let stored = crate::platforms::stored(&app, connection_id).await;
        assert_eq!(stored["businessId"], "0d40342d0287cd6b13555c54afca6c90");
        settled(&app.client, company_id).await;
    }
}

/// TrueLayer (`GET /data/v1/me`: credentials and bank, PKCE) and
/// FreshBooks (`GET /auth/api/v1/users/me`: the businesses the user works
/// in, so the customer chooses; the read scopes of what it syncs) linked
/// against their fakes.
#[tokio::test]
async fn truelayer_and_freshbooks_link_with_the_organization_each_documents() {
    for backend in backends() {
        let fake = crate::platforms::truelayer::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "truelayer", &[]).await;
        assert_eq!(
            stored["credentialsId"],
            crate::platforms::truelayer::CREDENTIALS
        );
        assert_eq!(stored["providerId"], "lloyds");

        let fake = crate::platforms::freshbooks::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_choosing(&app, "freshbooks", &[], Some("zDmNq")).await;
        assert_eq!(stored["accountId"], "zDmNq");
        assert_eq!(stored["businessId"], 77128);
        let scope = fake.with(|inner| inner.authorize_requests[0]["scope"].clone());
        assert_eq!(
            scope,
            "user:profile:read user:invoices:read user:clients:read user:bill_vendors:read \
             user:bills:read user:bill_payments:read user:payments:read user:credit_notes:read \
             user:taxes:read user:billable_items:read user:account:read",
            "the read scopes of what FreshBooks syncs, the chart's user:account:read among them"
        );
    }
}

/// Wave (its GraphQL `businesses`: two, so the customer chooses; or the
/// one business a restricted token names), MYOB (the company file on the
/// callback, with `prompt=consent`), Zoho Books (the data centre on the
/// callback, the organizations on the token answer's `api_domain`) and
/// PayPal (`userinfo`'s `payer_id`) linked against their fakes.
#[tokio::test]
async fn wave_myob_zoho_books_and_paypal_link_with_the_organization_each_documents() {
    for backend in backends() {
        let business = crate::platforms::wave::BUSINESS;
        let fake = crate::platforms::wave::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_choosing(&app, "wave", &[], Some(business)).await;
        assert_eq!(stored["businessId"], business);
        let scope = fake.with(|inner| inner.authorize_requests[0]["scope"].clone());
        assert_eq!(
            scope,
            "business:read customer:read invoice:read account:read vendor:read product:read \
             sales_tax:read offline_access",
            "the read scopes of what Wave syncs, and a refresh token"
        );
        let fake = crate::platforms::wave::fake().await;
        fake.with(|inner| {
            inner
                .code_answer_extras
                .insert("businessId".to_owned(), Value::from(business));
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "wave", &[]).await;
        assert_eq!(
            stored["businessId"], business,
            "a restricted token's one business, no picker"
        );

        let file = crate::platforms::myob::FILE;
        let fake = crate::platforms::myob::fake().await;
        fake.with(|inner| {
            inner.callback_extras = vec![
                ("businessId".to_owned(), file.to_owned()),
                ("businessName".to_owned(), "Clearwater Cafe".to_owned()),
            ];
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "myob", &[]).await;
        assert_eq!(stored["companyFileId"], file);
        assert_eq!(
            stored["companyFileUri"],
            format!("{}/accountright/{file}", fake.url())
        );
        assert_eq!(
            stored["apiKey"],
            crate::platforms::fake::CLIENT_ID,
            "the API key is the client id"
        );
        let asked = fake.with(|inner| inner.authorize_requests[0].clone());
        assert_eq!(asked["prompt"], "consent", "MYOB names the file only then");

        let fake = crate::platforms::zoho_books::fake().await;
        fake.with(|inner| {
            inner.callback_extras = vec![
                ("location".to_owned(), "eu".to_owned()),
                (
                    "accounts-server".to_owned(),
                    "https://accounts.zoho.eu".to_owned(),
                ),
            ];
            inner
                .code_answer_extras
                .insert("api_domain".to_owned(), Value::from(fake.url()));
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "zoho-books", &[]).await;
        assert_eq!(
            stored["organizationId"],
            crate::platforms::zoho_books::ORGANIZATION
        );
        assert_eq!(stored["dataCenter"], "eu", "the callback's location");
        let asked = fake.with(|inner| inner.authorize_requests[0].clone());
        assert_eq!(asked["access_type"], "offline");
        assert_eq!(
            asked["scope"],
            "ZohoBooks.invoices.READ,ZohoBooks.contacts.READ,ZohoBooks.settings.READ,\
             ZohoBooks.accountants.READ,ZohoBooks.bills.READ,ZohoBooks.creditnotes.READ,\
             ZohoBooks.customerpayments.READ,ZohoBooks.vendorpayments.READ"
        );

        let fake = crate::platforms::paypal::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "paypal", &[]).await;
        assert_eq!(stored["payerId"], crate::platforms::paypal::PAYER);
        assert_eq!(stored["environment"], "production");
        let asked = fake.with(|inner| inner.authorize_requests[0].clone());
        assert_eq!(asked["flowEntry"], "static");
    }
}

/// Exact Online (the country asked first; the divisions granted, through
/// the current one, so the customer chooses), NetSuite (the account on the
/// callback, PKCE, the client in HTTP Basic) and Business Central (the
/// tenant from the ID token, then each environment's companies) linked
/// against their fakes.
#[tokio::test]
async fn exact_netsuite_and_business_central_link_with_the_organization_each_documents() {
    for backend in backends() {
        let division = crate::platforms::exact_online::DIVISION.to_string();
        let fake = crate::platforms::exact_online::fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) =
            link_choosing(&app, "exact-online", &[("region", "uk")], Some(&division)).await;
        assert_eq!(stored["division"], crate::platforms::exact_online::DIVISION);
        assert_eq!(stored["region"], "uk", "the country chosen on the page");
        let asked = fake.with(|inner| inner.authorize_requests[0].clone());
        assert!(
            !asked.contains_key("scope"),
            "Exact takes no scope: {asked:?}"
        );

        let account = crate::platforms::netsuite::ACCOUNT;
        let fake = crate::platforms::netsuite::fake().await;
        fake.with(|inner| {
            inner.callback_extras = vec![
                ("company".to_owned(), account.to_owned()),
                ("role".to_owned(), "3".to_owned()),
                ("entity".to_owned(), "-5".to_owned()),
            ];
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "netsuite", &[]).await;
        assert_eq!(stored["accountId"], account);
        let form = fake.with(|inner| inner.token_forms[0].clone());
        assert!(form.contains_key("code_verifier"), "PKCE: {form:?}");
        assert!(
            !form.contains_key("client_secret"),
            "the client in HTTP Basic: {form:?}"
        );

        let tenant = crate::platforms::dynamics_365_business_central::TENANT;
        let fake = crate::platforms::dynamics_365_business_central::fake().await;
        fake.with(|inner| {
            let claims = json!({"tid": tenant, "aud": crate::platforms::fake::CLIENT_ID});
            let id_token = format!(
                "eyJhbGciOiJSUzI1NiJ9.{}.c2lnbmF0dXJl",
                base64::Engine::encode(
                    &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                    claims.to_string()
                )
            );
            inner
                .code_answer_extras
                .insert("id_token".to_owned(), Value::from(id_token));
        });
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (_, stored) = link_through(&app, "dynamics-365-business-central", &[]).await;
        assert_eq!(stored["tenantId"], tenant);
        assert_eq!(
            stored["environmentName"],
            crate::platforms::dynamics_365_business_central::ENVIRONMENT
        );
        assert_eq!(
            stored["companyId"],
            crate::platforms::dynamics_365_business_central::COMPANY
        );
        assert!(stored.get("idToken").is_none() && stored.get("id_token").is_none());
        let asked = fake.with(|inner| inner.authorize_requests[0].clone());
        assert_eq!(asked["code_challenge_method"], "S256");
        assert!(asked["scope"].split(' ').any(|scope| scope == "openid"));
    }
}

/// The code goes only to the platform's own token site: a Zoho callback
/// naming an accounts server that is not Zoho's, or a NetSuite callback
/// whose account is not an account id, ends the session `Failed` before
/// any exchange; and Exact's page refuses a country it does not offer.
#[tokio::test]
async fn a_callback_naming_a_foreign_token_site_is_refused_before_any_exchange() {
    for backend in backends() {
        let fake = crate::platforms::zoho_books::fake().await;
        let mut options = options_for(&fake, None, 1);
        let without_token_url = tributary::platforms::config::PlatformConfig {
            api_base: Some(fake.url()),
            token_url: None,
            authorize_url: Some(fake.authorize_url()),
            page_size: None,
        };
        let config = tributary::platforms::config::PlatformsConfig {
            timeout: std::time::Duration::from_secs(5),
            ..tributary::platforms::config::PlatformsConfig::default()
        }
        .every_platform(&without_token_url);
        options.connectors =
            tributary::platforms::connector::Connectors::for_platforms(&config).expect("built");
        let app = TestApp::spawn_with(backend, options).await;
        for (platform_key, extras, reason) in [
            (
                "zoho-books",
                vec![("accounts-server", "https://accounts.zoho.example.net")],
                "a data centre tributary cannot reach",
            ),
            (
                "zoho-books",
                vec![
                    ("location", "eu"),
                    ("accounts-server", "https://accounts.evil.example"),
                ],
                "an accounts server that is not Zoho's",
            ),
            (
                "netsuite",
                vec![("company", "evil.example/x")],
                "named no account",
            ),
        ] {
            fake.with(|inner| {
                inner.callback_extras = extras
                    .iter()
                    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                    .collect();
            });
            set_oauth_client(&app, platform_key).await;
            let company_id = new_company(&app, "Diverted Ltd").await;
            let (_, session) =
                create_session(&app, company_id, json!({"platformKey": platform_key})).await;
            let session_id = session["id"].as_str().expect("an id").to_owned();
            let mut browser = Browser::new();
            open(&app, &mut browser, &session).await;
            let authorize = continue_to_platform(&app, &mut browser, &session_id, &[]).await;
            let at_platform = browser.get(&authorize).await;
            let callback = at_platform.headers()["location"]
                .to_str()
                .expect("text")
                .to_owned();
            let page = back_from_platform(&app, &mut browser, &callback).await;
            let page = page.text().await.expect("HTML");
            assert!(
                page.contains("Not connected"),
                "{platform_key} {extras:?}: {page}"
            );
            let failed = session_of(&app, company_id, &session_id).await;
            assert_eq!(failed["status"], "Failed", "{failed}");
            let why = failed["failureReason"].as_str().unwrap_or_default();
            assert!(
                why.contains(reason),
                "refused before sending the code anywhere: {why}"
            );
            assert_eq!(
                fake.token_calls(),
                0,
                "{platform_key} {extras:?}: no exchange"
            );
        }

        set_oauth_client(&app, "exact-online").await;
        let authorized = fake.with(|inner| inner.authorize_requests.len());
        let company_id = new_company(&app, "Nowhere B.V.").await;
        let (_, session) =
            create_session(&app, company_id, json!({"platformKey": "exact-online"})).await;
        let session_id = session["id"].as_str().expect("an id").to_owned();
        let mut browser = Browser::new();
        let page = open(&app, &mut browser, &session).await;
        assert!(
            page.contains("<select id=\"region\" name=\"region\" required>")
                && page.contains("<option value=\"uk\">United Kingdom</option>"),
            "{page}"
        );
        let refused = browser
            .post(
                &app.url(&format!("/link/{session_id}/authorize")),
                &[("region", "https://evil.example")],
            )
            .await;
        assert_eq!(refused.status(), 400);
        assert!(
            refused
                .text()
                .await
                .expect("HTML")
                .contains("Choose the country"),
            "the page says what to do"
        );
        assert_eq!(
            fake.with(|inner| inner.authorize_requests.len()),
            authorized,
            "nobody was sent to a site of the customer's choosing"
        );
    }
}

/// Every platform either links through a session or says why it cannot:
/// `GET /integrations/{platformKey}` answers `linkable`, its `callbackUrl`
/// and scopes, or `linkUnavailableReason`.
#[tokio::test]
async fn every_integration_says_whether_it_can_be_linked_and_where_its_callback_is() {
    let app = TestApp::spawn(crate::helpers::Backend::Sqlite).await;
    let mut linkable = Vec::new();
    for platform in tributary::platforms::all() {
        let key = platform.platform_key;
        let details: Value = app
            .get(&format!("/integrations/{key}"))
            .await
            .json()
            .await
            .expect("JSON");
        if details["linkable"] == true {
            linkable.push(key);
            assert_eq!(details["linkUnavailableReason"], Value::Null, "{key}");
            if key != "sandbox" {
                assert_eq!(
                    details["callbackUrl"],
                    app.url(&format!("/oauth/{key}/callback")),
                    "{key}"
                );
            }
        } else {
            let reason = details["linkUnavailableReason"]
                .as_str()
                .unwrap_or_default();
            assert!(
                reason.len() > 20,
                "{key} says why it cannot be linked: {details}"
            );
            assert_eq!(details["callbackUrl"], Value::Null, "{key}");
        }
    }
    assert_eq!(
        linkable,
        [
            "dynamics-365-business-central",
            "exact-online",
            "freeagent",
            "freshbooks",
            "mollie",
            "myob",
            "netsuite",
            "paypal",
            "quickbooks-online",
            "sage-business-cloud",
            "sandbox",
            "shopify",
            "square",
            "stripe",
            "truelayer",
            "wave",
            "xero",
            "zettle",
            "zoho-books"
        ]
    );
}
