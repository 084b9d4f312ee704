//! Behaviour shared by every route: correlation ids, the error body for
//! framework-level failures, body limits, health, docs and the served spec.

use sea_orm::ConnectionTrait;

use serde_json::Value;

use crate::helpers::{TestApp, for_each_database, json};

#[tokio::test]
async fn every_response_carries_a_correlation_id_and_echoes_a_valid_one() {
    for_each_database(async |app| {
        let generated = app.get("/companies").await;
        let id = generated.headers()["x-correlation-id"]
            .to_str()
            .expect("ASCII")
            .to_owned();
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");

        let echoed = app
            .raw()
            .get(app.url("/companies/not-a-uuid"))
            .header("x-correlation-id", "trace-42.a:b_c")
            .send()
            .await
            .expect("the server answers");
        assert_eq!(echoed.headers()["x-correlation-id"], "trace-42.a:b_c");
        assert_eq!(json(echoed).await["correlationId"], "trace-42.a:b_c");

        // A value unsafe to log or echo is replaced.
        let replaced = app
            .raw()
            .get(app.url("/healthz"))
            .header("x-correlation-id", "has spaces and \"quotes\"")
            .send()
            .await
            .expect("the server answers");
        assert_ne!(
            replaced.headers()["x-correlation-id"],
            "has spaces and \"quotes\""
        );
    })
    .await;
}

#[tokio::test]
async fn unknown_routes_answer_the_json_404() {
    for_each_database(async |app| {
        let response = app.get("/no/such/route").await;
        assert_eq!(response.status(), 404);
        let body = json(response).await;
        assert_eq!(body["statusCode"], 404);
        assert_eq!(body["canBeRetried"], false);
        assert!(
            body["error"]
                .as_str()
                .expect("a sentence")
                .contains("/openapi.yaml")
        );
    })
    .await;
}

#[tokio::test]
async fn a_wrong_method_answers_405_with_allow() {
    for_each_database(async |app| {
        let response = app
            .raw()
            .patch(app.url("/companies"))
            .header("authorization", app.authorization())
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status(), 405);
        assert_eq!(response.headers()["allow"], "GET, POST, HEAD");
        assert_eq!(json(response).await["statusCode"], 405);

        let response = app
            .raw()
            .post(app.url(&format!("/companies/{}", uuid::Uuid::now_v7())))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status(), 405);
        assert_eq!(response.headers()["allow"], "GET, PUT, DELETE, HEAD");

        for path in ["/docs", "/openapi.yaml", "/openapi.json"] {
            for method in [reqwest::Method::POST, reqwest::Method::DELETE] {
                let response = app
                    .raw()
                    .request(method.clone(), app.url(path))
                    .send()
                    .await
                    .expect("answered");
                assert_eq!(response.status(), 405, "{method} {path}");
                assert_eq!(response.headers()["allow"], "GET, HEAD", "{method} {path}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn malformed_json_wrong_content_types_and_oversized_bodies_are_refused_and_store_nothing() {
    for_each_database(async |app| {
        let post = |content_type: &'static str, body: Vec<u8>| {
            app.raw()
                .post(app.url("/companies"))
                .header("authorization", app.authorization())
                .header("content-type", content_type)
                .body(body)
                .send()
        };
        let malformed = post("application/json", b"{\"name\": \"Acme".to_vec())
            .await
            .expect("answered");
        assert_eq!(malformed.status(), 400);
        let body = json(malformed).await;
        assert_eq!(body["validation"]["errors"][0]["itemId"], "body");
        assert!(
            body["validation"]["errors"][0]["message"]
                .as_str()
                .expect("text")
                .contains("not valid JSON")
        );

        let empty = post("application/json", Vec::new())
            .await
            .expect("answered");
        assert_eq!(empty.status(), 400);

        let wrong_type = post("text/plain", b"{\"name\": \"Acme\"}".to_vec())
            .await
            .expect("answered");
        assert_eq!(wrong_type.status(), 415);
        assert_eq!(json(wrong_type).await["statusCode"], 415);

        let missing_type = app
            .raw()
            .post(app.url("/companies"))
            .header("authorization", app.authorization())
            .body("{\"name\": \"Acme\"}")
            .send()
            .await
            .expect("answered");
        assert_eq!(missing_type.status(), 415);

        let mut huge = b"{\"name\": \"Acme\", \"description\": \"".to_vec();
        huge.extend(std::iter::repeat_n(b'x', 1024 * 1024));
        huge.extend(b"\"}");
        let oversized = post("application/json", huge.clone())
            .await
            .expect("answered");
        assert_eq!(oversized.status(), 413);
        assert_eq!(json(oversized).await["statusCode"], 413);

        // Without a Content-Length (chunked), the limit still holds.
        let chunks = futures::stream::iter(
            huge.chunks(64 * 1024)
                .map(|chunk| Ok::<_, std::io::Error>(chunk.to_vec()))
                .collect::<Vec<_>>(),
        );
        let chunked = app
            .raw()
            .post(app.url("/companies"))
            .header("authorization", app.authorization())
            .header("content-type", "application/json")
            .body(reqwest::Body::wrap_stream(chunks))
            .send()
            .await
            .expect("answered");
        assert_eq!(chunked.status(), 413);

        let listed = app.companies_first_page().await;
        assert_eq!(listed.total_results, 0);
    })
    .await;
}

#[tokio::test]
async fn health_answers_200_without_a_key_and_503_when_the_database_is_gone() {
    for_each_database(async |app| {
        let healthy = app
            .raw()
            .get(app.url("/healthz"))
            .send()
            .await
            .expect("answered");
        assert_eq!(healthy.status(), 200);
        assert_eq!(json(healthy).await["status"], "ok");

        app.db.clone().close().await.expect("the pool closes");
        let unhealthy = app
            .raw()
            .get(app.url("/healthz"))
            .send()
            .await
            .expect("answered");
        assert_eq!(unhealthy.status(), 503);
        let body = json(unhealthy).await;
        assert_eq!(
            (body["statusCode"].as_u64(), body["canBeRetried"].as_bool()),
            (Some(503), Some(true))
        );
    })
    .await;
}

#[tokio::test]
async fn the_served_spec_is_the_committed_contract_and_docs_are_served() {
    for_each_database(async |app| {
        let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        let committed = std::fs::read_to_string(format!("{root}/openapi.yaml"))
            .expect("openapi.yaml is committed");
        let served = app
            .raw()
            .get(app.url("/openapi.yaml"))
            .send()
            .await
            .expect("answered");
        assert_eq!(served.status(), 200);
        let served = served.text().await.expect("text");
        assert!(
            served == committed,
            "the served spec differs from openapi.yaml: run `cargo run -p codegen`"
        );

        let served_json = json(
            app.raw()
                .get(app.url("/openapi.json"))
                .send()
                .await
                .expect("answered"),
        )
        .await;
        assert_eq!(served_json["openapi"], "3.0.0");
        assert!(served_json["paths"]["/companies"]["get"]["operationId"] == "listCompanies");

        let docs = app
            .raw()
            .get(app.url("/docs"))
            .send()
            .await
            .expect("answered");
        assert_eq!(docs.status(), 200);
        let html = docs.text().await.expect("html");
        assert!(html.contains("SwaggerUIBundle") && html.contains("listCompanies"));
        // The page embeds the published contract, not poem-openapi's raw document.
        let embedded = serde_json::to_string_pretty(&served_json).expect("serializable");
        assert!(
            html.contains(&embedded),
            "Swagger UI shows a different document"
        );
    })
    .await;
}

#[tokio::test]
async fn an_internal_failure_answers_a_generic_500_that_keeps_the_cause_out_of_the_body() {
    for_each_database(async |app| {
        // Break the schema under the running server.
        app.db
            .execute_unprepared("ALTER TABLE company RENAME TO company_gone")
            .await
            .expect("the table is renamed");
        let response = app.get("/companies").await;
        assert_eq!(response.status(), 500);
        let correlation_id = response.headers()["x-correlation-id"]
            .to_str()
            .expect("ASCII")
            .to_owned();
        let body = json(response).await;
        assert_eq!(body["statusCode"], 500);
        assert_eq!(body["canBeRetried"], true);
        assert_eq!(body["correlationId"], correlation_id.as_str());
        // Exactly the generic sentence: the database's message stays in the log.
        assert_eq!(
            body["error"],
            "Something went wrong on our side. Quote the correlation id if you contact support."
        );
        let fields: Vec<&String> = body.as_object().expect("an object").keys().collect();
        assert_eq!(
            fields,
            ["statusCode", "error", "correlationId", "canBeRetried"]
        );
    })
    .await;
}

#[tokio::test]
async fn bodies_sent_to_operations_without_one_are_ignored_not_refused() {
    for_each_database(async |app| {
        let big = vec![b'x'; 2 * 1024 * 1024];
        for path in ["/companies", "/healthz"] {
            let response = app
                .raw()
                .get(app.url(path))
                .header("authorization", app.authorization())
                .body(big.clone())
                .send()
                .await
                .expect("answered");
            assert_eq!(response.status(), 200, "GET {path} with a body");
        }
    })
    .await;
}

#[tokio::test]
async fn a_repeated_paging_parameter_answers_400_instead_of_a_guess() {
    for_each_database(async |app| {
        for (query, parameter) in [
            ("pageSize=2&pageSize=abc", "pageSize"),
            ("pageSize=abc&pageSize=2", "pageSize"),
            ("page=1&page=2", "page"),
        ] {
            let response = app.get(&format!("/companies?{query}")).await;
            assert_eq!(response.status(), 400, "{query}");
            let body = json(response).await;
            assert_eq!(
                body["validation"]["errors"][0]["itemId"], parameter,
                "{query}"
            );
        }
        // Equivalent spellings of a number are read as that number, and the
        // links show it canonically.
        let response = app.get("/companies?page=01&pageSize=%2B5").await;
        assert_eq!(response.status(), 200);
        let body = json(response).await;
        assert_eq!(
            (body["pageNumber"].as_i64(), body["pageSize"].as_i64()),
            (Some(1), Some(5))
        );
        assert_eq!(
            body["_links"]["current"]["href"],
            "/companies?page=1&pageSize=5"
        );
    })
    .await;
}

#[tokio::test]
async fn an_undecodable_path_names_the_parameter() {
    for_each_database(async |app| {
        let response = app.get("/companies/%FF").await;
        assert_eq!(response.status(), 400);
        assert_eq!(
            json(response).await["validation"]["errors"][0]["itemId"],
            "companyId"
        );
    })
    .await;
}

/// Sends `request` as raw bytes and reads the whole answer (the server
/// closes the connection after these answers).
async fn raw_exchange(app: &TestApp, request: Vec<u8>) -> (u16, reqwest::header::HeaderMap, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(app.address)
        .await
        .expect("connected");
    // The server may answer and close before reading everything.
    let _ = stream.write_all(&request).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let mut headers = reqwest::header::HeaderMap::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(": ") {
            headers.insert(
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).expect("a name"),
                value.parse().expect("a value"),
            );
        }
    }
    (
        status,
        headers,
        serde_json::from_str(body).expect("a JSON body"),
    )
}

#[tokio::test]
async fn requests_the_http_parser_refuses_answer_the_json_error_body() {
    for_each_database(async |app| {
        let long_url = format!(
            "GET /companies?name={} HTTP/1.1\r\nHost: x\r\n\r\n",
            "a".repeat(70_000)
        );
        let huge_headers = format!(
            "GET /companies HTTP/1.1\r\nHost: x\r\nX-Filler: {}\r\n\r\n",
            "a".repeat(600_000)
        );
        for (request, status) in [
            (long_url.into_bytes(), 414),
            (huge_headers.into_bytes(), 431),
            (b"NOT HTTP AT ALL\r\n\r\n".to_vec(), 400),
        ] {
            let (answered, headers, body) = raw_exchange(app, request).await;
            assert_eq!(answered, status, "{body}");
            assert_eq!(
                headers["content-type"], "application/json; charset=utf-8",
                "{status}"
            );
            assert_eq!(body["statusCode"], status, "{body}");
            assert_eq!(body["canBeRetried"], false, "{body}");
            assert!(
                body["error"]
                    .as_str()
                    .is_some_and(|error| error.ends_with('.'))
            );
            assert_eq!(
                headers["x-correlation-id"].to_str().expect("ASCII"),
                body["correlationId"].as_str().expect("an id")
            );
        }
        // The server goes on answering normally.
        assert_eq!(app.get("/companies").await.status(), 200);
    })
    .await;
}

/// A body over the limit gets its 413 JSON answer whatever its size, even
/// while the client is still sending it: a client that writes the whole
/// body before it reads (as curl does) still reads the answer, because the
/// connection closes lingering (what the client still sends is read and
/// discarded, so no reset throws the answer away). On an ordinary route and
/// on the 32 MiB migration one.
#[tokio::test]
async fn an_oversized_body_always_gets_its_413_answer() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const MIB: usize = 1024 * 1024;
    let app = TestApp::spawn(crate::helpers::Backend::Sqlite).await;
    let address = app
        .url("/")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let cases = [
        ("/companies", MIB + 1),
        ("/companies", 2 * MIB),
        ("/companies", 8 * MIB),
        ("/companies", 33 * MIB),
        ("/migrations", 32 * MIB + 1),
        ("/migrations", 33 * MIB),
    ];
    for (path, size) in cases {
        let mut socket = tokio::net::TcpStream::connect(&address)
            .await
            .expect("connected");
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: {}\r\n\
             Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n",
            app.authorization()
        );
        socket.write_all(head.as_bytes()).await.expect("sent");
        // The whole body first, as curl sends it: a write the server
        // refuses (a reset: "broken pipe") is what curl reports instead of
        // the answer.
        let chunk = vec![b' '; 256 * 1024];
        let mut sent = 0;
        while sent < size {
            let part = chunk.len().min(size - sent);
            if let Err(error) = socket.write_all(&chunk[..part]).await {
                panic!(
                    "{path}, {size} bytes: the server reset the connection after {sent}: {error}"
                );
            }
            sent += part;
        }
        let mut answer = Vec::new();
        let read = socket.read_to_end(&mut answer).await;
        let answer = String::from_utf8_lossy(&answer).into_owned();
        assert!(
            answer.starts_with("HTTP/1.1 413 "),
            "{path}, {size} bytes ({sent} sent): no 413 read ({read:?}): {answer:.200}"
        );
        let limit_mib = if path == "/migrations" { 32 } else { 1 };
        assert!(
            answer.contains("\"statusCode\":413") && answer.contains(&format!("({limit_mib} MiB)")),
            "{answer:.400}"
        );
    }
    let listed = app.companies_first_page().await;
    assert_eq!(listed.total_results, 0, "nothing was created");
}
