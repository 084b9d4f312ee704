//! Rate limits: the IETF fields on responses, a client's quota (429,
//! `Retry-After`, `rateLimit.reached`, nothing done), a company's cap on
//! concurrent requests, and two processes sharing one quota.

use std::time::Duration;

use serde_json::json;
use tributary::paging::PageRequest;
use tributary::rate_limits::RateLimitConfig;
use tributary::tenant::Tenant;
use uuid::Uuid;

use crate::helpers::{AppOptions, TestApp, backends, basic, http_client, json};
use crate::sync::{sandbox_connection, sync_and_settle};
use crate::webhooks::receiver::Receiver;

fn with_limits(per_minute: u32, concurrent: u32) -> AppOptions {
    AppOptions {
        rate_limits: RateLimitConfig {
            requests_per_minute: per_minute,
            concurrent_per_company: concurrent,
            heartbeat: Duration::from_millis(100),
        },
        ..AppOptions::default()
    }
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().expect("ASCII").to_owned())
}

/// `r` of a `RateLimit` field.
fn remaining(field: &str) -> u32 {
    field
        .split(';')
        .find_map(|part| part.strip_prefix("r="))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no r= in {field}"))
}

#[tokio::test]
async fn responses_carry_the_policy_and_where_the_client_stands() {
    for backend in backends() {
        let app = TestApp::spawn(backend).await;
        let first = app.get("/companies").await;
        assert_eq!(
            header(&first, "ratelimit-policy").as_deref(),
            Some(r#""client";q=60000;w=60"#),
            "the default quota"
        );
        let standing = header(&first, "ratelimit").expect("RateLimit on an authenticated answer");
        assert!(
            standing.starts_with(r#""client";r="#) && standing.contains(";t="),
            "{standing}"
        );

        // 100 a minute refill one every 0.6 s: two quick requests use two.
        let app = TestApp::spawn_with(backend, with_limits(100, 0)).await;
        let first = header(&app.get("/companies").await, "ratelimit").expect("RateLimit");
        let second = header(&app.get("/companies").await, "ratelimit").expect("RateLimit");
        assert_eq!(
            (remaining(&first), remaining(&second)),
            (99, 98),
            "{first} then {second}"
        );
        assert!(
            second.ends_with(";t=2"),
            "two requests refill in 1.2 s: {second}"
        );

        let health = http_client()
            .get(app.url("/healthz"))
            .send()
            .await
            .expect("answered");
        assert!(header(&health, "ratelimit-policy").is_some());
        assert!(header(&health, "ratelimit").is_none(), "nobody was counted");
        let anonymous = http_client()
            .get(app.url("/companies"))
            .send()
            .await
            .expect("answered");
        assert_eq!(anonymous.status(), 401);
        assert!(header(&anonymous, "ratelimit").is_none());
    }
}

#[tokio::test]
async fn a_client_past_its_quota_gets_429_and_one_announcement_and_nothing_happens() {
    for backend in backends() {
        let app = TestApp::spawn_with(backend, with_limits(6, 0)).await;
        let receiver = Receiver::start().await;
        let (other_key, _) = app.other_tenant("globex").await;
        let endpoint = app
            .post_json(
                "/webhooks/endpoints",
                &json!({"url": receiver.url("/limits"), "eventTypes": ["rateLimit.reached"]}),
            )
            .await;
        assert_eq!(endpoint.status(), 201);
        for _ in 0..5 {
            assert_eq!(app.get("/companies").await.status(), 200);
        }
        let refused = app
            .post_json("/companies", &json!({"name": "Over quota"}))
            .await;
        assert_eq!(refused.status(), 429);
        let retry_after: u64 = header(&refused, "retry-after")
            .expect("Retry-After")
            .parse()
            .expect("seconds");
        assert!((1..=10).contains(&retry_after), "{retry_after}");
        assert_eq!(
            remaining(&header(&refused, "ratelimit").expect("RateLimit")),
            0
        );
        let error = json(refused).await;
        assert_eq!(error["statusCode"], 429);
        assert_eq!(error["canBeRetried"], true);
        assert!(
            error["error"]
                .as_str()
                .is_some_and(|text| text.contains("6 requests a minute")),
            "{error}"
        );
        assert_eq!(app.get("/companies").await.status(), 429);

        let other = http_client()
            .get(app.url("/companies"))
            .header("authorization", basic(&other_key))
            .send()
            .await
            .expect("answered");
        assert_eq!(other.status(), 200, "another client has its own quota");

        let client_id = tributary::api_keys::client_for_key(&app.db, &app.api_key)
            .await
            .expect("lookup")
            .expect("a client");
        let (companies, _) = tributary::companies::list(
            &app.db,
            Tenant { client_id },
            PageRequest::new(1, 10).expect("paging"),
        )
        .await
        .expect("listed");
        assert!(companies.is_empty(), "the refused POST created nothing");

        let announced = receiver.wait_for(1).await;
        let envelope = announced[0].envelope();
        assert_eq!(envelope["type"], "rateLimit.reached");
        assert_eq!(envelope["data"]["quota"], 6);
        receiver.stays_at(1, Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn two_processes_share_one_quota() {
    for backend in backends() {
        // Heartbeats every 500 ms: a process counts the others seen within
        // three of them (1.5 s), which a loaded test machine's database
        // keeps up with; at 100 ms a beat written late dropped the other
        // process from the count, and that process took the whole quota.
        let beating = || AppOptions {
            rate_limits: RateLimitConfig {
                heartbeat: Duration::from_millis(500),
                ..with_limits(10, 0).rate_limits
            },
            ..AppOptions::default()
        };
        let app = TestApp::spawn_with(backend, beating()).await;
        let second = app.another_instance(beating()).await;
        // Both heartbeats have counted two processes.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let http = http_client();
        let mut admitted = 0;
        for index in 0..20 {
            let address = if index % 2 == 0 { app.address } else { second };
            let response = http
                .get(format!("http://{address}/companies"))
                .header("authorization", app.authorization())
                .send()
                .await
                .expect("answered");
            match response.status().as_u16() {
                200 => admitted += 1,
                429 => {}
                other => panic!("unexpected {other}"),
            }
        }
        assert_eq!(
            admitted, 10,
            "the quota holds across both processes, not 10 each"
        );
    }
}

#[tokio::test]
async fn a_company_is_capped_at_its_concurrent_requests() {
    for backend in backends() {
        let app = TestApp::spawn_with(
            backend,
            AppOptions {
                engine: AppOptions::working(1).engine,
                ..with_limits(0, 2)
            },
        )
        .await;
        let company = json(app.post_json("/companies", &json!({"name": "Busy"})).await).await;
        let company_id: Uuid = company["companyId"]
            .as_str()
            .expect("an id")
            .parse()
            .expect("a UUID");
        sandbox_connection(&app, company_id, 3000, 5).await;
        sync_and_settle(&app, company_id).await;
        let path = format!("/companies/{company_id}/data/invoices?pageSize=3000");
        let requests = (0..24).map(|_| async { app.get(&path).await });
        let answers = futures::future::join_all(requests).await;
        let statuses: Vec<u16> = answers
            .iter()
            .map(|answer| answer.status().as_u16())
            .collect();
        assert!(
            statuses.iter().all(|status| [200, 429].contains(status)),
            "{statuses:?}"
        );
        assert!(statuses.contains(&200), "{statuses:?}");
        assert!(
            statuses.contains(&429),
            "24 reads at once of a company capped at 2: {statuses:?}"
        );
        let refused = answers
            .into_iter()
            .find(|answer| answer.status() == 429)
            .expect("a 429");
        assert_eq!(header(&refused, "retry-after").as_deref(), Some("1"));
        let error = json(refused).await;
        assert!(
            error["error"]
                .as_str()
                .is_some_and(|text| text.contains("in progress")),
            "{error}"
        );
        assert_eq!(
            app.get(&path).await.status(),
            200,
            "the slots are free again"
        );
        assert_eq!(
            app.get("/companies").await.status(),
            200,
            "the cap is per company"
        );
    }
}

/// Stopping the heartbeat (as SIGTERM does) does not wait out its sleep: an
/// idle process exits at once, and forgets itself in `server_instance`.
#[tokio::test]
async fn stopping_cuts_the_heartbeat_short_and_forgets_the_process() {
    for backend in backends() {
        let app = TestApp::spawn(backend).await;
        let limits = tributary::rate_limits::RateLimits::new(RateLimitConfig {
            heartbeat: Duration::from_secs(60),
            ..RateLimitConfig::default()
        });
        let id = limits.instance_id();
        let task = limits.start(app.db.clone());
        for _ in 0..200 {
            if instance_rows(&app, id).await == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(instance_rows(&app, id).await, 1, "it beat once");
        let started = std::time::Instant::now();
        limits.stop(task).await;
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "stopped without sleeping out the 60 s heartbeat"
        );
        assert_eq!(instance_rows(&app, id).await, 0, "forgotten");
    }
}

/// The rows of `server_instance` for the process `id`.
async fn instance_rows(app: &TestApp, id: Uuid) -> i64 {
    use sea_orm::ConnectionTrait;
    let backend = app.db.get_database_backend();
    let sql = match backend {
        sea_orm::DbBackend::Postgres => "SELECT COUNT(*) AS n FROM server_instance WHERE id = $1",
        _ => "SELECT COUNT(*) AS n FROM server_instance WHERE id = ?",
    };
    app.db
        .query_one_raw(sea_orm::Statement::from_sql_and_values(
            backend,
            sql,
            [id.into()],
        ))
        .await
        .expect("counted")
        .expect("a row")
        .try_get::<i64>("", "n")
        .expect("a count")
}
