//! The server under test: started as a real `tributary serve` process on a
//! free loopback port, watched through `/proc` for its resident memory, and
//! stopped with SIGTERM.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The API key every benchmark request authenticates with.
pub const API_KEY: &str = "tributary-bench-key-0123456789";

/// How to start one server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The `tributary` binary.
    pub binary: PathBuf,
    /// `TRIBUTARY_DATABASE_URL`.
    pub database_url: String,
    /// `TRIBUTARY_ENCRYPTION_KEYS`, required on PostgreSQL.
    pub encryption_keys: Option<String>,
    /// Sync workers (0 for a read-only second server).
    pub sync_workers: usize,
    /// Read pages with `OFFSET` and `COUNT(*)` (the naive build).
    pub naive_paging: bool,
    /// Publish resyncs of lists this long as layers (a build with the
    /// `layering` feature).
    pub layering_at_rows: Option<u64>,
}

/// A running server.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// Where its log goes.
    pub log: PathBuf,
}

impl Server {
    /// Starts the server and waits until `/healthz` answers.
    pub async fn start(spec: &ServerSpec, log: &Path) -> anyhow::Result<Self> {
        let port = free_port()?;
        let log_file = std::fs::File::create(log).context("server log file")?;
        let mut command = Command::new(&spec.binary);
        command
            .arg("serve")
            .env("TRIBUTARY_DATABASE_URL", &spec.database_url)
            .env("TRIBUTARY_BIND", format!("127.0.0.1:{port}"))
            .env("TRIBUTARY_SYNC_WORKERS", spec.sync_workers.to_string())
            .env("TRIBUTARY_BOOTSTRAP_API_KEY", API_KEY)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG")
                    .unwrap_or_else(|_| "warn,tributary::sync=info".to_owned()),
            )
            .stdout(Stdio::null())
            .stderr(log_file);
        if let Some(keys) = &spec.encryption_keys {
            command.env("TRIBUTARY_ENCRYPTION_KEYS", keys);
        }
        if spec.naive_paging {
            command.env("TRIBUTARY_NAIVE_PAGING", "true");
        }
        if let Some(rows) = spec.layering_at_rows {
            command.env("TRIBUTARY_LAYERING_AT_ROWS", rows.to_string());
        }
        let child = command
            .spawn()
            .with_context(|| format!("starting {}", spec.binary.display()))?;
        let mut server = Self {
            child,
            base_url: format!("http://127.0.0.1:{port}"),
            log: log.to_path_buf(),
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = server.child.try_wait()? {
                bail!("the server exited with {status}; see {}", log.display());
            }
            let health = client
                .get(format!("{}/healthz", server.base_url))
                .send()
                .await;
            if health.is_ok_and(|response| response.status().is_success()) {
                return Ok(server);
            }
            if Instant::now() > deadline {
                server.stop();
                bail!("the server did not answer in 60 s; see {}", log.display());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The process id, for memory sampling.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server (SIGTERM, then SIGKILL after 20 s).
    pub fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The resident set size of `pid` now, in bytes.
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Samples a process's resident memory every 20 ms until dropped, keeping the peak.
pub struct PeakMemory {
    peak: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PeakMemory {
    /// Starts sampling `pid`.
    pub fn watch(pid: u32) -> Self {
        let peak = Arc::new(AtomicU64::new(resident_bytes(pid).unwrap_or(0)));
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let (peak, done) = (peak.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    if let Some(now) = resident_bytes(pid) {
                        peak.fetch_max(now, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        Self {
            peak,
            done,
            thread: Some(thread),
        }
    }

    /// Stops sampling and returns the peak in bytes.
    pub fn finish(mut self) -> u64 {
        self.done.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

/// What a benchmark binary run per size needs: the PostgreSQL URL of a user
/// who may create databases, the release binary, and a name for its work.
pub struct PerSize<'a> {
    /// PostgreSQL URL of a user who may create databases.
    pub postgres: &'a str,
    /// The tributary binary (by default `target/release/tributary`).
    pub binary: Option<PathBuf>,
    /// Names the temporary directory and the databases (`tributary_<name>_bench_…`).
    pub name: &'a str,
    /// Publish resyncs of lists this long as layers (a build with the
    /// `layering` feature).
    pub layering_at_rows: Option<u64>,
}

impl PerSize<'_> {
    /// For each of `sizes`, the release server (2 sync workers, the
    /// product's defaults) on a fresh PostgreSQL database, what `measure`
    /// makes of it, and the database dropped.
    pub async fn run<T>(
        &self,
        sizes: &[u64],
        measure: impl AsyncFn(&Server, u64) -> anyhow::Result<T>,
    ) -> anyhow::Result<Vec<T>> {
        let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let binary = self
            .binary
            .clone()
            .unwrap_or_else(|| workspace.join("target/release/tributary"));
        anyhow::ensure!(
            binary.exists(),
            "{} does not exist: run `cargo build --release --bin tributary` first",
            binary.display()
        );
        let workdir = tempfile::Builder::new()
            .prefix(&format!("tributary-{}-bench-", self.name))
            .tempdir()?;
        let keys = std::process::Command::new(&binary)
            .args(["encryption-key", "generate"])
            .output()
            .context("tributary encryption-key generate")?;
        let keys = String::from_utf8(keys.stdout)?.trim().to_owned();
        let mut measured = Vec::new();
        for &size in sizes {
            let database = format!(
                "tributary_{}_bench_{}_{size}",
                self.name,
                std::process::id()
            );
            let url = crate::sql::fresh_database(
                crate::SqlTimer::Builtin,
                self.postgres,
                &database,
                true,
            )
            .await?;
            let spec = ServerSpec {
                binary: binary.clone(),
                database_url: url,
                encryption_keys: Some(keys.clone()),
                sync_workers: 2,
                naive_paging: false,
                layering_at_rows: self.layering_at_rows,
            };
            let log = workdir.path().join(format!("server-{size}.log"));
            let mut server = Server::start(&spec, &log).await?;
            let result = measure(&server, size).await;
            server.stop();
            crate::sql::drop_database(crate::SqlTimer::Builtin, self.postgres, &database).await?;
            measured.push(result?);
        }
        Ok(measured)
    }
}
