//! The builtin HTTP load generator, for machines without wrk (the smoke test,
//! `--load builtin`): N concurrent keep-alive HTTP/1.1 connections (one
//! reqwest client each; as many threads as wrk would use, each a
//! single-threaded tokio runtime owning its share) request for a duration.
//! Each request is timed as wrk times it, from sending it to the last byte of
//! its answer; a request still in flight when the duration ends is not
//! counted (wrk drops it too).

use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

use crate::api::authorization;
use crate::load::{Latency, Requests};

/// wrk's `--timeout 30s`: a request without an answer by then is an error.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The seed of the random pages, as wrk's Lua script (`math.randomseed(6)`).
const SEED: u64 = 6;

/// Runs `connections` connections against `base_url` for `duration`.
pub fn run(
    base_url: &str,
    requests: &Requests,
    connections: u32,
    duration: Duration,
) -> anyhow::Result<Latency> {
    crate::ensure_crypto_provider();
    let connections = connections.max(1);
    // As wrk: `min(connections, 2)` threads, each an event loop (here a
    // single-threaded tokio runtime) owning its share of the connections.
    // Threads of their own also keep the figures independent of the caller's
    // runtime (the tests' is single-threaded); the caller waits as for wrk.
    let threads = connections.min(2);
    let started = Instant::now();
    let deadline = started + duration;
    let mut workers = Vec::new();
    for thread in 0..threads {
        let indexes: Vec<u32> = (0..connections)
            .filter(|index| index % threads == thread)
            .collect();
        let base_url = base_url.to_owned();
        let requests = requests.clone();
        let worker = std::thread::Builder::new()
            .name(format!("bench-load-{thread}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .context("the load generator's runtime")?;
                runtime.block_on(drive(&base_url, &requests, &indexes, deadline))
            })
            .context("starting the load generator's thread")?;
        workers.push(worker);
    }
    let mut all = Tally::default();
    for worker in workers {
        let tally = worker
            .join()
            .map_err(|_| anyhow!("a load generator thread panicked"))??;
        all.latencies.extend(tally.latencies);
        all.non_2xx += tally.non_2xx;
        all.errors += tally.errors;
    }
    let elapsed = started.elapsed();
    let mut latencies = all.latencies;
    latencies.sort_unstable();
    let requests = latencies.len() as u64;
    Ok(Latency {
        median: percentile(&latencies, 50.0),
        p99: percentile(&latencies, 99.0),
        max: latencies.last().copied().unwrap_or_default(),
        throughput: requests as f64 / elapsed.as_secs_f64().max(1e-9),
        requests,
        non_2xx: all.non_2xx,
        errors: all.errors,
    })
}

/// What one connection (or one thread's connections) saw.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    non_2xx: u64,
    errors: u64,
}

/// One thread's connections (`indexes` among all), until `deadline`.
async fn drive(
    base_url: &str,
    requests: &Requests,
    indexes: &[u32],
    deadline: Instant,
) -> anyhow::Result<Tally> {
    let authorization = authorization();
    let deadline = tokio::time::Instant::from_std(deadline);
    let mut clients = tokio::task::JoinSet::new();
    for &index in indexes {
        // One client per connection, at most one idle connection kept: each
        // client is one keep-alive HTTP/1.1 connection, as each of wrk's.
        let client = reqwest::Client::builder()
            .http1_only()
            .pool_max_idle_per_host(1)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(TIMEOUT)
            .build()
            .context("the load generator's HTTP client")?;
        let urls = Urls::new(base_url, requests, SEED.wrapping_add(u64::from(index)));
        clients.spawn(connection(client, urls, authorization.clone(), deadline));
    }
    let mut all = Tally::default();
    while let Some(joined) = clients.join_next().await {
        let tally = joined.context("a load connection panicked")?;
        all.latencies.extend(tally.latencies);
        all.non_2xx += tally.non_2xx;
        all.errors += tally.errors;
    }
    Ok(all)
}

/// One connection: requests back to back until the deadline.
async fn connection(
    client: reqwest::Client,
    mut urls: Urls,
    authorization: String,
    deadline: tokio::time::Instant,
) -> Tally {
    let mut tally = Tally::default();
    while tokio::time::Instant::now() < deadline {
        let url = urls.next_url();
        let sent = Instant::now();
        let exchange = async {
            let response = client
                .get(&url)
                .header(reqwest::header::AUTHORIZATION, &authorization)
                .send()
                .await?;
            let status = response.status();
            response.bytes().await?;
            Ok::<_, reqwest::Error>(status)
        };
        match tokio::time::timeout_at(deadline, exchange).await {
            // The run ended with this request in flight: not counted.
            Err(_) => break,
            Ok(Ok(status)) => {
                tally.latencies.push(sent.elapsed());
                if !status.is_success() {
                    tally.non_2xx += 1;
                }
            }
            Ok(Err(_)) => {
                tally.errors += 1;
                // A refused connection fails at once; do not spin on it.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }
    tally
}

/// The nearest-rank percentile of sorted `latencies` (zero when empty).
fn percentile(latencies: &[Duration], percent: f64) -> Duration {
    if latencies.is_empty() {
        return Duration::ZERO;
    }
    let rank = (percent / 100.0 * latencies.len() as f64).ceil() as usize;
    latencies[rank.clamp(1, latencies.len()) - 1]
}

/// The URLs one connection requests.
enum Urls {
    Fixed(String),
    RandomPages {
        prefix: String,
        pages: u64,
        page_size: u64,
        state: u64,
    },
}

impl Urls {
    fn new(base_url: &str, requests: &Requests, seed: u64) -> Self {
        match requests {
            Requests::Path(path) => Urls::Fixed(format!("{base_url}{path}")),
            Requests::RandomPages {
                path,
                pages,
                page_size,
            } => Urls::RandomPages {
                prefix: format!("{base_url}{path}"),
                pages: (*pages).max(1),
                page_size: *page_size,
                state: seed,
            },
        }
    }

    fn next_url(&mut self) -> String {
        match self {
            Urls::Fixed(url) => url.clone(),
            Urls::RandomPages {
                prefix,
                pages,
                page_size,
                state,
            } => {
                let page = 1 + splitmix64(state) % *pages;
                format!("{prefix}?page={page}&pageSize={page_size}")
            }
        }
    }
}

/// SplitMix64: a small, seeded, good-enough generator for picking pages.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let latencies: Vec<Duration> = (1..=200).map(Duration::from_millis).collect();
        assert_eq!(percentile(&latencies, 50.0), Duration::from_millis(100));
        assert_eq!(percentile(&latencies, 99.0), Duration::from_millis(198));
        assert_eq!(percentile(&latencies, 100.0), Duration::from_millis(200));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
        let one = [Duration::from_millis(7)];
        assert_eq!(percentile(&one, 50.0), Duration::from_millis(7));
        assert_eq!(percentile(&one, 99.0), Duration::from_millis(7));
    }

    #[test]
    fn random_pages_stay_in_range() {
        let requests = Requests::RandomPages {
            path: "/x".to_owned(),
            pages: 3,
            page_size: 5000,
        };
        let mut urls = Urls::new("http://h", &requests, SEED);
        let mut seen = [false; 3];
        for _ in 0..100 {
            let url = urls.next_url();
            let page: usize = url
                .strip_prefix("http://h/x?page=")
                .and_then(|rest| rest.strip_suffix("&pageSize=5000"))
                .and_then(|page| page.parse().ok())
                .expect("a page URL");
            seen[page - 1] = true;
        }
        assert_eq!(seen, [true; 3]);
    }

    /// A tiny HTTP/1.1 server answering `status` to everything, keep-alive.
    async fn serve(status: &'static str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let address = listener.local_addr().expect("its address");
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = vec![0u8; 4096];
                    let mut pending = Vec::new();
                    loop {
                        let Ok(read) = socket.read(&mut buffer).await else {
                            return;
                        };
                        if read == 0 {
                            return;
                        }
                        pending.extend_from_slice(&buffer[..read]);
                        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            pending.drain(..end + 4);
                            let answer = format!(
                                "HTTP/1.1 {status}\r\ncontent-length: 2\r\ncontent-type: text/plain\r\n\r\nok"
                            );
                            if socket.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        format!("http://{address}")
    }

    // Multi-threaded: `run` blocks its caller's thread while the tiny
    // servers answer on the runtime's workers. Runs of 2 s: with the whole
    // suite on two cores, 300 ms once passed before a single answer came.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn counts_requests_and_error_answers() {
        let ok = serve("200 OK").await;
        let latency = run(
            &ok,
            &Requests::Path("/a".to_owned()),
            2,
            Duration::from_secs(2),
        )
        .expect("a load run");
        assert!(latency.requests > 0);
        assert_eq!((latency.non_2xx, latency.errors), (0, 0));
        assert!(latency.median <= latency.p99 && latency.p99 <= latency.max);
        assert!(latency.throughput > 0.0);

        let failing = serve("503 Service Unavailable").await;
        let latency = run(
            &failing,
            &Requests::Path("/a".to_owned()),
            1,
            Duration::from_secs(2),
        )
        .expect("a load run");
        assert!(latency.requests > 0);
        assert_eq!(latency.non_2xx, latency.requests);
    }
}
