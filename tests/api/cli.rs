//! The `tributary` binary itself: first start, logs, shutdown, and the
//! key commands. These run on SQLite: they test the process, not the
//! database; the migration kill -9 test also runs on PostgreSQL, whose
//! row locks are what keep two processes apart there.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use sea_orm::EntityTrait;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

const BINARY: &str = env!("CARGO_BIN_EXE_tributary");
const WAIT: Duration = Duration::from_secs(30);

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

fn tributary(dir: &Path) -> Command {
    let mut command = Command::new(BINARY);
    command
        .current_dir(dir)
        .env_remove("TRIBUTARY_DATABASE_URL")
        .env_remove("TRIBUTARY_BOOTSTRAP_API_KEY")
        .env_remove("TRIBUTARY_BIND")
        .env_remove("TRIBUTARY_ENCRYPTION_KEYS")
        .env("TRIBUTARY_LOG_FORMAT", "json")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// A running `tributary` and everything it has written, stdout and stderr
/// (logs) interleaved line by line.
struct Running {
    child: Child,
    lines: mpsc::UnboundedReceiver<String>,
    seen: Vec<String>,
}

fn forward_lines(
    stream: impl AsyncRead + Unpin + Send + 'static,
    sender: mpsc::UnboundedSender<String>,
) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
}

impl Running {
    fn start(mut command: Command) -> Running {
        let mut child = command.spawn().expect("tributary starts");
        let (sender, lines) = mpsc::unbounded_channel();
        forward_lines(child.stdout.take().expect("piped stdout"), sender.clone());
        forward_lines(child.stderr.take().expect("piped stderr"), sender);
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads output until a line satisfies `wanted`, and returns it.
    async fn until(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        let read = async {
            while let Some(line) = self.lines.recv().await {
                self.seen.push(line.clone());
                if wanted(&line) {
                    return line;
                }
            }
            panic!(
                "tributary exited; its output was:\n{}",
                self.seen.join("\n")
            );
        };
        tokio::time::timeout(WAIT, read)
            .await
            .expect("the expected output in time")
    }

    /// SIGTERM, then the exit status and all output.
    async fn terminate(mut self) -> (std::process::ExitStatus, Vec<String>) {
        let pid = self.child.id().expect("running").to_string();
        let killed = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .await
            .expect("kill runs");
        assert!(killed.success());
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("exits in time")
            .expect("waitable");
        while let Ok(Some(line)) =
            tokio::time::timeout(Duration::from_secs(5), self.lines.recv()).await
        {
            self.seen.push(line);
        }
        (status, self.seen)
    }
}

fn is_listening(line: &str) -> bool {
    line.contains("listening on http://")
}

#[tokio::test]
async fn the_first_start_prints_one_working_key_with_a_curl_line_and_logs_each_request() {
    let dir = tempfile::tempdir().expect("a directory");
    let port = free_port();
    let mut command = tributary(dir.path());
    command.env("TRIBUTARY_BIND", format!("127.0.0.1:{port}"));
    let mut server = Running::start(command);

    let curl = server
        .until(|line| line.trim_start().starts_with("curl "))
        .await;
    let credential = curl
        .split("Authorization: ")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("the curl line carries the header")
        .to_owned();
    assert!(
        curl.contains(&format!("http://127.0.0.1:{port}/companies")),
        "{curl}"
    );
    server.until(is_listening).await;
    assert!(
        dir.path().join("tributary.db").exists(),
        "the default database is a file in the working directory"
    );

    let response = crate::helpers::http_client()
        .get(format!("http://127.0.0.1:{port}/companies"))
        .header("authorization", &credential)
        .header("x-correlation-id", "cli-test-1")
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), 200);

    let access = server.until(|line| line.contains("cli-test-1")).await;
    let access: serde_json::Value = serde_json::from_str(&access).expect("a JSON log line");
    assert_eq!(access["method"], "GET");
    assert_eq!(access["path"], "/companies");
    assert_eq!(access["status"], 200);
    assert!(access["duration_ms"].is_number());

    let (status, output) = server.terminate().await;
    assert!(status.success(), "graceful shutdown exits 0: {status:?}");
    let key = output
        .iter()
        .find(|line| line.trim_start().starts_with("trb_"))
        .expect("the key is printed")
        .trim()
        .to_owned();
    let mentions = output.iter().filter(|line| line.contains(&key)).count();
    assert_eq!(
        mentions, 1,
        "the key is printed exactly once and never logged"
    );
    assert_eq!(
        output
            .iter()
            .filter(|line| line.contains(&credential))
            .count(),
        1
    );

    // A second start on the same database prints no key.
    // Options may also stand before the subcommand.
    let second_port = free_port();
    let mut command = tributary(dir.path());
    command.args(["--bind", &format!("127.0.0.1:{second_port}"), "serve"]);
    let mut again = Running::start(command);
    let listening = again.until(is_listening).await;
    assert!(listening.contains(&second_port.to_string()), "{listening}");
    let (_, output) = again.terminate().await;
    assert!(
        !output.iter().any(|line| line.contains("shown only")),
        "{output:#?}"
    );
}

#[tokio::test]
async fn a_bootstrap_key_works_and_never_appears_in_the_output() {
    let dir = tempfile::tempdir().expect("a directory");
    let port = free_port();
    let mut command = tributary(dir.path());
    command
        .env("TRIBUTARY_BIND", format!("127.0.0.1:{port}"))
        .env("TRIBUTARY_BOOTSTRAP_API_KEY", "bootstrap-secret-123");
    let mut server = Running::start(command);
    server.until(is_listening).await;
    let response = crate::helpers::http_client()
        .get(format!("http://127.0.0.1:{port}/companies"))
        .header(
            "authorization",
            crate::helpers::basic("bootstrap-secret-123"),
        )
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), 200);
    let (status, output) = server.terminate().await;
    assert!(status.success());
    assert!(
        !output
            .iter()
            .any(|line| line.contains("bootstrap-secret-123"))
    );
    assert!(!output.iter().any(|line| line.contains("shown only")));
}

#[tokio::test]
async fn api_key_create_prints_a_key_for_the_named_client() {
    let dir = tempfile::tempdir().expect("a directory");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("keys.db").display());
    let migrated = tributary(dir.path())
        .env("TRIBUTARY_DATABASE_URL", &url)
        .arg("migrate")
        .output()
        .await
        .expect("tributary runs");
    assert!(migrated.status.success(), "{migrated:?}");
    let output = tributary(dir.path())
        .env("TRIBUTARY_DATABASE_URL", &url)
        .args([
            "api-key",
            "create",
            "--client",
            "acme",
            "--name",
            " ci pipeline ",
        ])
        .output()
        .await
        .expect("tributary runs");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(stdout.contains("client 'acme'"), "{stdout}");
    let key = stdout
        .lines()
        .find(|line| line.starts_with("trb_"))
        .expect("a key line")
        .to_owned();

    let db = tributary::db::connect(&url, None)
        .await
        .expect("the database opens");
    let client = tributary::api_keys::client_for_key(&db, &key)
        .await
        .expect("lookup");
    let client = client.expect("the printed key authenticates");
    let stored = tributary::api_keys::list(
        &db,
        tributary::tenant::Tenant { client_id: client },
        tributary::paging::PageRequest::new(1, 100).expect("valid paging"),
    )
    .await
    .expect("the keys are listed")
    .0;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].name, "ci pipeline", "named, trimmed");
    assert!(
        tributary::api_keys::client_for_key(&db, "trb_other")
            .await
            .expect("lookup")
            .is_none()
    );
}

#[tokio::test]
async fn migrate_creates_the_default_database_and_exits() {
    let dir = tempfile::tempdir().expect("a directory");
    let output = tributary(dir.path())
        .arg("migrate")
        .output()
        .await
        .expect("tributary runs");
    assert!(output.status.success(), "{output:?}");
    assert!(dir.path().join("tributary.db").exists());
}

#[tokio::test]
async fn serve_on_postgresql_refuses_to_start_without_encryption_keys() {
    let dir = tempfile::tempdir().expect("a directory");
    let output = tributary(dir.path())
        .env(
            "TRIBUTARY_DATABASE_URL",
            "postgres://postgres@127.0.0.1:1/unused",
        )
        .env("TRIBUTARY_BIND", format!("127.0.0.1:{}", free_port()))
        .output()
        .await
        .expect("tributary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("TRIBUTARY_ENCRYPTION_KEYS is not set"),
        "{stderr}"
    );
}

#[tokio::test]
async fn generated_keys_drive_a_rotation_from_the_command_line() {
    let dir = tempfile::tempdir().expect("a directory");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("rotate.db").display()
    );
    let generate = || async {
        let output = tributary(dir.path())
            .args(["encryption-key", "generate"])
            .output()
            .await
            .expect("runs");
        assert!(output.status.success());
        String::from_utf8(output.stdout)
            .expect("UTF-8")
            .trim()
            .to_owned()
    };
    let (old_key, new_key) = (generate().await, generate().await);
    assert!(
        tributary::crypto::Keyring::parse(&old_key).is_ok(),
        "{old_key}"
    );

    // A stored credential under the old key.
    let old = tributary::crypto::Keyring::parse(&old_key).expect("key");
    let (db, connection_id) = stored_sandbox_credential(&url, &old, "cli-rotate-token").await;

    let output = tributary(dir.path())
        .env("TRIBUTARY_DATABASE_URL", &url)
        .env("TRIBUTARY_ENCRYPTION_KEYS", format!("{new_key},{old_key}"))
        .args(["encryption-key", "rotate"])
        .output()
        .await
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(
        stdout.starts_with("1 stored credentials re-encrypted"),
        "{stdout}"
    );
    assert!(!stdout.contains("cli-rotate-token"));

    let new = tributary::crypto::Keyring::parse(&new_key).expect("key");
    let opened = tributary::connections::open_credential(&db, &new, connection_id)
        .await
        .expect("opens with the new key alone")
        .expect("stored");
    assert_eq!(opened["accessToken"], "cli-rotate-token");
}

#[tokio::test]
async fn with_the_key_file_rotation_moves_to_a_new_key_and_serve_refuses_unknown_keys() {
    let dir = tempfile::tempdir().expect("a directory");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("keyfile.db").display()
    );
    // The embedded default: no TRIBUTARY_ENCRYPTION_KEYS, a key file beside the database.
    let first = tributary::crypto::load_keyring(None, &url).expect("a key file is created");
    let first_key = first.current_key_id().to_owned();
    let (db, connection_id) = stored_sandbox_credential(&url, &first, "keyfile-token").await;
    // An OAuth client secret sealed under the same key moves with it.
    let client = entity::client::Entity::find()
        .one(&db)
        .await
        .expect("read")
        .expect("a client");
    let tenant = tributary::tenant::Tenant {
        client_id: client.id,
    };
    tributary::oauth_clients::put(
        &db,
        &first,
        tenant,
        "xero",
        "xero-app",
        "keyfile-client-secret",
    )
    .await
    .expect("stored");
    // So do a webhook endpoint's signing secrets, the current one and the
    // one a rotation replaced (which still signs for a day).
    use tributary::webhooks::endpoints;
    let fields =
        endpoints::EndpointFields::parse("https://hooks.example.com/", None, &[], true, false)
            .expect("valid fields");
    let (endpoint, _) = endpoints::create(&db, &first, tenant, fields)
        .await
        .expect("created");
    let now = chrono::Utc::now();
    let (_, newest_secret) = endpoints::rotate_secret(&db, &first, tenant, endpoint.id, now)
        .await
        .expect("rotated");

    let output = tributary(dir.path())
        .env("TRIBUTARY_DATABASE_URL", &url)
        .args(["encryption-key", "rotate"])
        .output()
        .await
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(
        stdout.contains("1 stored credentials re-encrypted"),
        "{stdout}"
    );

    let rotated = tributary::crypto::load_keyring(None, &url).expect("the key file");
    assert_ne!(rotated.current_key_id(), first_key);
    assert!(
        !rotated.has_key(&first_key),
        "the old key is retired from the file"
    );
    let opened = tributary::connections::open_credential(&db, &rotated, connection_id)
        .await
        .expect("opens")
        .expect("stored");
    assert_eq!(opened["accessToken"], "keyfile-token");
    assert!(
        stdout.contains("1 stored OAuth client secrets re-encrypted"),
        "{stdout}"
    );
    let oauth_client = tributary::oauth_clients::open(&db, &rotated, client.id, "xero")
        .await
        .expect("opens with the new key alone")
        .expect("stored");
    assert_eq!(oauth_client.client_secret, "keyfile-client-secret");
    assert!(
        stdout.contains("1 webhook endpoints' signing secrets re-encrypted"),
        "{stdout}"
    );
    let endpoint = endpoints::find(&db, tenant, endpoint.id)
        .await
        .expect("found");
    let secrets = endpoints::signing_secrets(&rotated, &endpoint, now)
        .expect("both open with the new key alone");
    assert_eq!(
        secrets.len(),
        2,
        "the current secret and the one it replaced"
    );
    assert_eq!(
        tributary::webhooks::signature::written(&secrets[0]),
        newest_secret
    );

    // A server given only keys that cannot open the stored tokens refuses to start.
    let output = tributary(dir.path())
        .env("TRIBUTARY_DATABASE_URL", &url)
        .env(
            "TRIBUTARY_ENCRYPTION_KEYS",
            tributary::crypto::generate_key_entry(),
        )
        .env("TRIBUTARY_BIND", format!("127.0.0.1:{}", free_port()))
        .output()
        .await
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not configured"), "{stderr}");
}

/// A migrated database at `url` holding one sandbox credential sealed with
/// `keyring`; returns the pool and the connection's id.
async fn stored_sandbox_credential(
    url: &str,
    keyring: &tributary::crypto::Keyring,
    access_token: &str,
) -> (sea_orm::DatabaseConnection, uuid::Uuid) {
    let db = tributary::db::connect(url, None).await.expect("opens");
    tributary::db::migrate(&db).await.expect("migrates");
    tributary::api_keys::create(&db, "default", "test key")
        .await
        .expect("a key");
    let client = entity::client::Entity::find()
        .one(&db)
        .await
        .expect("read")
        .expect("a client");
    let tenant = tributary::tenant::Tenant {
        client_id: client.id,
    };
    let fields = tributary::companies::CompanyFields::parse("Acme", None).expect("valid");
    let company = tributary::companies::create(&db, tenant, fields)
        .await
        .expect("company");
    let connection = tributary::connections::create(&db, tenant, company.id, "sandbox")
        .await
        .expect("connection");
    let body = serde_json::json!({"organizationId": "sbx-org", "accessToken": access_token});
    tributary::connections::authorize(
        &db,
        keyring,
        tenant,
        company.id,
        connection.connection.id,
        body,
        None,
    )
    .await
    .expect("authorized");
    (db, connection.connection.id)
}

/// GETs `path` from the server on `port` with `key`, as JSON.
async fn get_json(port: u16, key: &str, path: &str) -> serde_json::Value {
    let response = crate::helpers::http_client()
        .get(format!("http://127.0.0.1:{port}{path}"))
        .header("authorization", crate::helpers::basic(key))
        .send()
        .await
        .expect("the server answers");
    crate::helpers::json(response).await
}

/// The company's invoices pull operations, newest first.
async fn invoice_operations(port: u16, key: &str, company: &str) -> Vec<serde_json::Value> {
    get_json(
        port,
        key,
        &format!("/companies/{company}/data/history?dataType=invoices"),
    )
    .await["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn a_server_killed_mid_sync_serves_the_previous_data_whole_and_the_next_one_completes_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let key = "crash-test-key-123";
    let start = |port: u16| {
        let mut command = tributary(dir.path());
        command
            .env("TRIBUTARY_BIND", format!("127.0.0.1:{port}"))
            .env("TRIBUTARY_BOOTSTRAP_API_KEY", key);
        Running::start(command)
    };
    let port = free_port();
    let mut server = start(port);
    server.until(is_listening).await;
    let http = crate::helpers::http_client();
    let send = |method: reqwest::Method, path: String, body: Option<serde_json::Value>| {
        let request = http
            .request(method, format!("http://127.0.0.1:{port}{path}"))
            .header("authorization", crate::helpers::basic(key));
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        async move {
            let response = request.send().await.expect("the server answers");
            assert!(response.status().is_success(), "{}", response.status());
            crate::helpers::json(response).await
        }
    };
    let company = send(
        reqwest::Method::POST,
        "/companies".to_owned(),
        Some(serde_json::json!({"name": "Crash"})),
    )
    .await["companyId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let connection = send(
        reqwest::Method::POST,
        format!("/companies/{company}/connections"),
        Some(serde_json::json!({"platformKey": "sandbox"})),
    )
    .await["connectionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let authorize = |invoice_count: u64| {
        send(
            reqwest::Method::PUT,
            format!("/companies/{company}/connections/{connection}/authorization"),
            Some(serde_json::json!({
                "organizationId": "sbx-crash", "accessToken": "tok",
                "invoiceCount": invoice_count, "seed": 3
            })),
        )
    };
    let sync_invoices = || {
        send(
            reqwest::Method::POST,
            format!("/companies/{company}/data/queue/invoices"),
            None,
        )
    };
    let invoices_path = format!("/companies/{company}/data/invoices?pageSize=5000");

    // The data readers have before the crash.
    authorize(1000).await;
    sync_invoices().await;
    let mut first = Vec::new();
    for _ in 0..600 {
        first = invoice_operations(port, key, &company).await;
        if first.first().is_some_and(|op| op["status"] == "Complete") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(first[0]["status"], "Complete", "{first:?}");
    let before = get_json(port, key, &invoices_path).await;
    assert_eq!(before["totalResults"], 1000);

    // A large sync, killed once it has staged some pages.
    authorize(60_000).await;
    let queued = sync_invoices().await;
    let operation_id = queued[0]["pullOperationId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let mut running = serde_json::Value::Null;
    for _ in 0..1200 {
        running = get_json(
            port,
            key,
            &format!("/companies/{company}/data/history/{operation_id}"),
        )
        .await;
        if running["status"] == "Fetching" && running["recordsFetched"].as_i64() > Some(0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(running["status"], "Fetching", "{running}");
    assert!(running["leaseExpiresAt"].is_string(), "{running}");
    server.child.start_kill().expect("SIGKILL sent");
    let _ = server.child.wait().await;

    // A new process on the same database: the previous data, whole.
    let port = free_port();
    let mut restarted = start(port);
    restarted.until(is_listening).await;
    let during = get_json(port, key, &invoices_path).await;
    assert_eq!(during["totalResults"], 1000, "{}", during["totalResults"]);
    assert_eq!(during["results"], before["results"]);

    // The dead worker's lease lapses; a worker of the new process takes the
    // operation over and completes it.
    let mut ended = serde_json::Value::Null;
    for _ in 0..1800 {
        ended = get_json(
            port,
            key,
            &format!("/companies/{company}/data/history/{operation_id}"),
        )
        .await;
        if ended["status"] != "Fetching" && ended["status"] != "Queued" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ended["status"], "Complete", "{ended}");
    assert_eq!(ended["recordsFetched"], 60_000, "{ended}");
    assert_eq!(ended["leaseExpiresAt"], serde_json::Value::Null, "{ended}");
    let after = get_json(port, key, "/companies").await;
    assert_eq!(after["totalResults"], 1);
    let invoices = get_json(
        port,
        key,
        &format!("/companies/{company}/data/invoices?pageSize=1"),
    )
    .await;
    assert_eq!(invoices["totalResults"], 60_000);
    let (status, _) = restarted.terminate().await;
    assert!(status.success());
}

#[tokio::test]
async fn an_event_committed_before_a_kill_9_is_delivered_after_the_restart() {
    let dir = tempfile::tempdir().expect("a directory");
    let key = "webhook-crash-key-123";
    let port = free_port();
    let start = |deliver: &str| {
        let mut command = tributary(dir.path());
        command
            .env("TRIBUTARY_BIND", format!("127.0.0.1:{port}"))
            .env("TRIBUTARY_BOOTSTRAP_API_KEY", key)
            .env("TRIBUTARY_WEBHOOK_DELIVERY", deliver)
            .env("TRIBUTARY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true");
        Running::start(command)
    };
    let receiver = crate::webhooks::receiver::Receiver::start().await;
    // The first process records events but delivers none, so the kill
    // lands between each event's commit and its delivery.
    let mut server = start("false");
    server.until(is_listening).await;
    let http = crate::helpers::http_client();
    let post = |path: &str, body: serde_json::Value| {
        http.post(format!("http://127.0.0.1:{port}{path}"))
            .header("authorization", crate::helpers::basic(key))
            .json(&body)
            .send()
    };
    let endpoint = post(
        "/webhooks/endpoints",
        serde_json::json!({"url": receiver.url("/crash")}),
    )
    .await
    .expect("answered");
    assert_eq!(endpoint.status(), 201);
    let company = post("/companies", serde_json::json!({"name": "Survivor Ltd"}))
        .await
        .expect("answered");
    assert_eq!(company.status(), 201);
    let company = crate::helpers::json(company).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        receiver.received().is_empty(),
        "this process does not deliver"
    );
    server.child.start_kill().expect("SIGKILL sent");
    server.child.wait().await.expect("killed");

    let mut restarted = start("true");
    restarted.until(is_listening).await;
    let delivered = receiver.wait_for(1).await;
    let envelope = delivered[0].envelope();
    assert_eq!(envelope["type"], "company.created");
    assert_eq!(envelope["data"]["companyId"], company["companyId"]);
    restarted.terminate().await;
}

#[tokio::test]
async fn a_migration_batch_killed_mid_import_resumes_after_the_restart_and_imports_each_row_once() {
    let dir = tempfile::tempdir().expect("a directory");
    let sqlite = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("tributary.db").display()
    );
    killed_mid_import_and_resumed(dir.path(), &sqlite, None).await;
    // The same on PostgreSQL, on a database of its own, when the suite has one.
    let Ok(admin_url) = std::env::var(crate::helpers::POSTGRES_URL_VAR) else {
        return;
    };
    let name = format!("tributary_kill_{}", uuid::Uuid::new_v4().simple());
    let admin = sea_orm::Database::connect(&admin_url)
        .await
        .expect("PostgreSQL answers");
    use sea_orm::ConnectionTrait;
    admin
        .execute_unprepared(&format!("CREATE DATABASE \"{name}\""))
        .await
        .expect("a database");
    let mut url = url::Url::parse(&admin_url).expect("a PostgreSQL URL");
    url.set_path(&format!("/{name}"));
    let keys = tributary::crypto::generate_key_entry();
    killed_mid_import_and_resumed(dir.path(), url.as_str(), Some(&keys)).await;
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
        .await
        .expect("dropped");
}

/// Starts the binary on `database_url`, migrates 3,000 rows, kills it
/// (SIGKILL) mid-import, restarts it, and checks every row was imported
/// exactly once.
async fn killed_mid_import_and_resumed(dir: &Path, database_url: &str, keys: Option<&str>) {
    const ROWS: usize = 3000;
    let key = "migration-crash-key-123";
    let port = free_port();
    let start = || {
        let mut command = tributary(dir);
        command
            .env("TRIBUTARY_DATABASE_URL", database_url)
            .env("TRIBUTARY_BIND", format!("127.0.0.1:{port}"))
            .env("TRIBUTARY_BOOTSTRAP_API_KEY", key)
            .env("TRIBUTARY_MIGRATION_CONCURRENCY", "1")
            .env("TRIBUTARY_MIGRATION_LEASE_SECS", "2");
        if let Some(keys) = keys {
            command.env("TRIBUTARY_ENCRYPTION_KEYS", keys);
        }
        Running::start(command)
    };
    let mut server = start();
    server.until(is_listening).await;
    let http = crate::helpers::http_client();
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let send = |method: reqwest::Method, path: &str, body: Option<serde_json::Value>| {
        let mut request = http
            .request(method, url(path))
            .header("authorization", crate::helpers::basic(key));
        if let Some(body) = body {
            request = request.json(&body);
        }
        async move {
            let response = request.send().await.expect("answered");
            let status = response.status().as_u16();
            (
                status,
                response
                    .json::<serde_json::Value>()
                    .await
                    .unwrap_or_default(),
            )
        }
    };
    let rows: Vec<serde_json::Value> = (0..ROWS)
        .map(|n| {
            serde_json::json!({
                "externalReference": format!("crash-{n}"),
                "companyName": format!("Crash {n} Ltd"),
                "authorization": {"organizationId": format!("sbx-crash-{n}"), "accessToken": "sbx-crash-token", "invoiceCount": 3},
            })
        })
        .collect();
    let (status, created) = send(
        reqwest::Method::POST,
        "/migrations",
        Some(serde_json::json!({"platformKey": "sandbox", "verify": false, "rows": rows})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["migration"]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let (status, _) = send(
        reqwest::Method::PUT,
        "/integrations/sandbox/oauth-client",
        Some(serde_json::json!({"clientId": "sandbox-app", "clientSecret": "sandbox-secret"})),
    )
    .await;
    assert_eq!(status, 200);
    for step in [
        "migrationScheduled",
        "callbackUrlAdded",
        "oldApplicationSyncDisabled",
    ] {
        let (status, _) = send(
            reqwest::Method::PUT,
            &format!("/migrations/{id}/checklist/{step}"),
            Some(serde_json::json!({"attestedBy": "Support"})),
        )
        .await;
        assert_eq!(status, 200);
    }
    let batch_path = format!("/migrations/{id}");
    let wait_for = |wanted: &'static str| {
        let send = &send;
        let batch_path = batch_path.clone();
        async move {
            // Generous (four minutes): it catches a hang, and 3,000 rows on
            // PostgreSQL took over a minute on two cores busy with the rest of
            // the suite.
            for _ in 0..4800 {
                let (_, batch) = send(reqwest::Method::GET, &batch_path, None).await;
                if batch["state"] == wanted {
                    return batch;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("the batch never became {wanted}");
        }
    };
    let (status, _) = send(
        reqwest::Method::POST,
        &format!("/migrations/{id}/start"),
        None,
    )
    .await;
    assert_eq!(status, 202);
    wait_for("AwaitingProceed").await;
    let (status, _) = send(
        reqwest::Method::POST,
        &format!("/migrations/{id}/proceed"),
        None,
    )
    .await;
    assert_eq!(status, 202);

    // Killed once some rows are in and most are not.
    let mut imported_at_kill = 0;
    for _ in 0..1200 {
        let (_, batch) = send(reqwest::Method::GET, &batch_path, None).await;
        imported_at_kill = batch["counts"]["imported"].as_u64().unwrap_or(0);
        if imported_at_kill >= 100 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.child.start_kill().expect("SIGKILL sent");
    server.child.wait().await.expect("killed");
    assert!(
        (100..ROWS as u64 - 100).contains(&imported_at_kill),
        "the kill was meant to land mid-batch ({imported_at_kill} of {ROWS} imported)"
    );

    let mut restarted = start();
    restarted.until(is_listening).await;
    let done = wait_for("Completed").await;
    assert_eq!(done["counts"]["imported"], ROWS as u64 - 1, "{done}");
    assert_eq!(done["counts"]["synced"], 1, "the canary: {done}");
    restarted.terminate().await;

    // Each row imported once: one company and one connection per row, and
    // no row still holds its tokens.
    let db = sea_orm::Database::connect(database_url)
        .await
        .expect("the database opens");
    let count = |sql: &'static str| {
        let db = &db;
        async move {
            use sea_orm::ConnectionTrait;
            let row = db
                .query_one_raw(sea_orm::Statement::from_string(
                    db.get_database_backend(),
                    sql.to_owned(),
                ))
                .await
                .expect("countable")
                .expect("a row");
            row.try_get::<i64>("", "n").expect("a count")
        }
    };
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM company").await,
        ROWS as i64
    );
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM connection").await,
        ROWS as i64
    );
    assert_eq!(
        count("SELECT COUNT(DISTINCT company_id) AS n FROM migration_row").await,
        ROWS as i64
    );
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM migration_row WHERE ciphertext IS NOT NULL").await,
        0
    );
    let _ = db.close().await;
}

#[tokio::test]
async fn migration_import_validates_a_json_lines_file_whole_and_stores_it_once() {
    let dir = tempfile::tempdir().expect("a directory");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("import.db").display()
    );
    let run = |args: Vec<String>| {
        let mut command = tributary(dir.path());
        command.env("TRIBUTARY_DATABASE_URL", &url).args(args);
        async move { command.output().await.expect("tributary runs") }
    };
    let args = |list: &[&str]| list.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>();
    // Only `serve` and `migrate` make a database: any other command where
    // there is none says so, naming the file, and creates nothing.
    let nowhere = run(args(&["api-key", "create", "--client", "acme"])).await;
    assert!(!nowhere.status.success());
    let said = String::from_utf8_lossy(&nowhere.stderr).to_string();
    assert!(
        said.contains("there is no database at") && said.contains("import.db"),
        "{said}"
    );
    assert!(!dir.path().join("import.db").exists() && !dir.path().join("import.db.key").exists());
    let migrated = run(args(&["migrate"])).await;
    assert!(migrated.status.success(), "{migrated:?}");
    let created = run(args(&["api-key", "create", "--client", "acme"])).await;
    assert!(created.status.success(), "{created:?}");

    let secret = "sbx-import-secret-token";
    let good = dir.path().join("rows.jsonl");
    std::fs::write(
        &good,
        format!(
            "{{\"externalReference\": \"imp-1\", \"companyName\": \"Import One\", \"authorization\": {{\"organizationId\": \"sbx-imp-1\", \"accessToken\": \"{secret}\"}}}}\n\n\
             {{\"externalReference\": \"imp-2\", \"companyName\": \"Import Two\", \"authorization\": {{\"organizationId\": \"sbx-imp-2\", \"accessToken\": \"{secret}\"}}}}\n"
        ),
    )
    .expect("written");
    let file = good.display().to_string();
    // `migration import FILE --client CLIENT --platform sandbox` and `extra`.
    let import_as = |file: &str, client: &str, extra: &[&str]| {
        let mut list = args(&[
            "migration",
            "import",
            file,
            "--client",
            client,
            "--platform",
            "sandbox",
        ]);
        list.extend(args(extra));
        list
    };
    let import = |extra: &[&str]| import_as(&file, "acme", extra);

    let dry = run(import(&["--dry-run"])).await;
    assert!(dry.status.success(), "{dry:?}");
    let stdout = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        stdout.contains("Valid: 2 rows") && stdout.contains("Nothing was stored"),
        "{stdout}"
    );

    let stored = run(import(&["--reference", "cli-batch"])).await;
    assert!(stored.status.success(), "{stored:?}");
    let stdout = String::from_utf8_lossy(&stored.stdout).to_string();
    assert!(stdout.starts_with("Stored: migration "), "{stdout}");
    let again = run(import(&["--reference", "cli-batch"])).await;
    assert!(again.status.success(), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("Found (stored before)"));

    // A file with a line that is not a row, and one whose body lacks its
    // token: every problem named, no token shown, nothing stored.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        format!(
            "{{\"externalReference\": \"bad-1\", \"companyName\": \"Bad\", \"authorization\": {{\"organizationId\": \"sbx-bad\"}}}}\n\
             {{\"externalReference\": \"bad-2\", \"authorization\": \"{secret}\"\n"
        ),
    )
    .expect("written");
    let refused = run(import_as(&bad.display().to_string(), "acme", &[])).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(stderr.contains("line 2: not JSON"), "{stderr}");
    assert!(!stderr.contains(secret), "{stderr}");
    // Every problem of the file at once: a misspelt field named, a line
    // that is not a row, and the rows' own problems (a missing token, a
    // repeated reference), each by line and by row.
    std::fs::write(
        &bad,
        format!(
            "{{\"externalReference\": \"bad-1\", \"compnayName\": \"Bad\", \"authorization\": {{\"accessToken\": \"{secret}\"}}}}\n\n\
             {{\"externalReference\": \"bad-2\", \"companyName\": \"Bad\", \"authorization\": {{\"organizationId\": \"sbx-bad\"}}}}\n\
             {{\"externalReference\": \"bad-2\", \"companyName\": \"Bad Again\", \"authorization\": {{\"organizationId\": \"sbx-bad-2\", \"accessToken\": \"{secret}\"}}}}\n"
        ),
    )
    .expect("written");
    let refused = run(import_as(&bad.display().to_string(), "acme", &[])).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr).to_string();
    for expected in [
        "(3 problems)",
        "line 1: unknown field `compnayName`",
        "line 3 (rows[0]).authorization.accessToken",
        "line 4 (rows[1]).externalReference: repeats rows[0]",
    ] {
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
    assert!(!stderr.contains(secret), "{stderr}");
    std::fs::write(
        &bad,
        "{\"externalReference\": \"bad-1\", \"companyName\": \"Bad\", \"authorization\": {\"organizationId\": \"sbx-bad\"}}\n",
    )
    .expect("written");
    let refused = run(import_as(&bad.display().to_string(), "acme", &[])).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(
        stderr.contains("(1 problem)")
            && stderr.contains("line 1 (rows[0]).authorization.accessToken"),
        "{stderr}"
    );
    let unknown = run(import_as(&file, "nobody", &[])).await;
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr).to_string();
    assert!(
        said.contains("no client named 'nobody' in the SQLite database")
            && said.contains("import.db"),
        "{said}"
    );

    let db = sea_orm::Database::connect(&url)
        .await
        .expect("the database opens");
    use sea_orm::ConnectionTrait;
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Sqlite,
            "SELECT COUNT(*) AS n FROM migration_row".to_owned(),
        ))
        .await
        .expect("countable")
        .expect("a row");
    assert_eq!(
        row.try_get::<i64>("", "n").expect("a count"),
        2,
        "one batch of two rows"
    );
}

/// Xero's changes since the first sync, on two pages (`If-Modified-Since`
/// page 1: INV-0003 paid; page 2: the new INV-0009), from the changes fixture.
fn xero_changes_page(page: usize) -> String {
    let mut changes: serde_json::Value = serde_json::from_str(&crate::platforms::fake::fixture(
        "xero/fixtures/invoices-changed.json",
    ))
    .expect("JSON");
    let invoices = changes["Invoices"].as_array().cloned().unwrap_or_default();
    changes["Invoices"] = serde_json::Value::Array(vec![invoices[page - 1].clone()]);
    changes["pagination"]["page"] = page.into();
    changes["pagination"]["pageCount"] = 2.into();
    changes.to_string()
}

#[tokio::test]
async fn a_server_killed_mid_incremental_sync_loses_no_change_the_next_one_asks_from_the_same_watermark()
 {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use crate::platforms::fake::{Answer, Call, Fake, Scheme, fixture};

    let stalled = Arc::new(AtomicBool::new(true));
    let whole = crate::platforms::xero::router();
    let router_stalled = Arc::clone(&stalled);
    let fake = Fake::start(
        "xero",
        Scheme::Bearer,
        "xero-access-token-0001",
        "xero-refresh-token-0001",
        fixture("xero/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.headers.contains_key("if-modified-since");
            if !changes || call.path != "/api.xro/2.0/Invoices" {
                return whole(call);
            }
            let page = call.query.get("page").map(String::as_str);
            if page == Some("2") && router_stalled.load(Ordering::SeqCst) {
                // Xero's minute limit, with a wait long enough to kill the server in.
                let mut answer = Answer::json(429, "{\"Message\":\"Rate limit exceeded\"}");
                answer
                    .headers
                    .push(("retry-after".to_owned(), "50".to_owned()));
                return answer;
            }
            let page: usize = if page == Some("2") { 2 } else { 1 };
            Answer::json(200, xero_changes_page(page))
        }),
    )
    .await;

    let dir = tempfile::tempdir().expect("a directory");
    let key = "incremental-crash-key-123";
    let start = |port: u16| {
        let mut command = tributary(dir.path());
        command
            .env("TRIBUTARY_BIND", format!("127.0.0.1:{port}"))
            .env("TRIBUTARY_BOOTSTRAP_API_KEY", key)
            .env("TRIBUTARY_XERO_API_BASE", fake.url())
            .env("TRIBUTARY_XERO_TOKEN_URL", fake.token_url());
        Running::start(command)
    };
    let port = free_port();
    let mut server = start(port);
    server.until(is_listening).await;
    let http = crate::helpers::http_client();
    let send =
        |port: u16, method: reqwest::Method, path: String, body: Option<serde_json::Value>| {
            let request = http
                .request(method, format!("http://127.0.0.1:{port}{path}"))
                .header("authorization", crate::helpers::basic(key));
            let request = match body {
                Some(body) => request.json(&body),
                None => request,
            };
            async move {
                let response = request.send().await.expect("the server answers");
                assert!(response.status().is_success(), "{}", response.status());
                crate::helpers::json(response).await
            }
        };
    let company = send(
        port,
        reqwest::Method::POST,
        "/companies".to_owned(),
        Some(serde_json::json!({"name": "Crash"})),
    )
    .await["companyId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let connection = send(
        port,
        reqwest::Method::POST,
        format!("/companies/{company}/connections"),
        Some(serde_json::json!({"platformKey": "xero"})),
    )
    .await["connectionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    send(
        port,
        reqwest::Method::PUT,
        format!("/companies/{company}/connections/{connection}/authorization"),
        Some(serde_json::json!({
            "tenantId": "70784a63-d24b-46a9-a4db-0e70a274b056",
            "accessToken": "xero-access-token-0001",
            "refreshToken": "xero-refresh-token-0001",
            "expiresIn": 1800
        })),
    )
    .await;
    let operation_of = |port: u16, id: String| {
        let company = company.clone();
        async move {
            get_json(
                port,
                key,
                &format!("/companies/{company}/data/history/{id}"),
            )
            .await
        }
    };
    let queue = |port: u16| {
        send(
            port,
            reqwest::Method::POST,
            format!("/companies/{company}/data/queue/invoices"),
            None,
        )
    };
    let until_ended = |port: u16, id: String| async move {
        let mut operation = serde_json::Value::Null;
        for _ in 0..1800 {
            operation = operation_of(port, id.clone()).await;
            if operation["status"] != "Fetching" && operation["status"] != "Queued" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        operation
    };
    let first = queue(port).await[0]["pullOperationId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let first = until_ended(port, first).await;
    assert_eq!(first["status"], "Complete", "{first}");
    assert_eq!(first["fetchMode"], "Full");
    let invoices_path = format!("/companies/{company}/data/invoices?pageSize=100");
    let before = get_json(port, key, &invoices_path).await;
    assert_eq!(before["totalResults"], 7);

    // The resync asks for changes; Xero holds its second page back.
    let second = queue(port).await[0]["pullOperationId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let mut running = serde_json::Value::Null;
    for _ in 0..1200 {
        running = operation_of(port, second.clone()).await;
        let asked_page_2 = fake.calls().iter().any(|call| {
            call.headers.contains_key("if-modified-since")
                && call.query.get("page").map(String::as_str) == Some("2")
        });
        if running["status"] == "Fetching" && asked_page_2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(running["fetchMode"], "Incremental", "{running}");
    server.child.start_kill().expect("SIGKILL sent");
    let _ = server.child.wait().await;
    stalled.store(false, Ordering::SeqCst);

    // A new process takes the operation over once the lease lapses, and asks
    // from the same watermark: the change on the first page is not lost.
    let port = free_port();
    let mut restarted = start(port);
    restarted.until(is_listening).await;
    let during = get_json(port, key, &invoices_path).await;
    assert_eq!(
        during["results"], before["results"],
        "the previous data, whole"
    );
    let ended = until_ended(port, second).await;
    assert_eq!(ended["status"], "Complete", "{ended}");
    assert_eq!(ended["fetchMode"], "Incremental", "{ended}");
    let asked: Vec<String> = fake
        .calls()
        .iter()
        .filter_map(|call| call.headers.get("if-modified-since").cloned())
        .collect();
    assert!(
        asked.len() >= 3,
        "two pages before the kill, the first again after: {asked:?}"
    );
    assert!(
        asked.iter().all(|since| *since == asked[0]),
        "every attempt asked from the last published watermark: {asked:?}"
    );
    let after = get_json(port, key, &invoices_path).await;
    assert_eq!(after["totalResults"], 8, "the new invoice of page 2");
    let paid = after["results"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|invoice| invoice["invoiceNumber"] == "INV-0003")
        })
        .cloned()
        .expect("INV-0003");
    assert_eq!(
        paid["status"], "Paid",
        "the change of page 1 survived the kill"
    );
    let (status, _) = restarted.terminate().await;
    assert!(status.success());
}
