//! HTTP load: wrk (Debian's package; the full benchmark's default, whose
//! figures BENCHMARKS.md reports) or the builtin generator written in Rust
//! ([`crate::rust_load`]); one connection for latency, eight for memory.
//! Both report the same [`Latency`], read the same way (wrk's percentiles,
//! or the same percentiles over every request the builtin one timed).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::api::authorization;

/// Which program drives the HTTP load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LoadGenerator {
    /// wrk: the full benchmark's default, the figures BENCHMARKS.md reports.
    Wrk,
    /// The generator written in Rust (reqwest on tokio): nothing to install.
    Builtin,
}

impl LoadGenerator {
    /// How the report names it.
    pub fn describe(self) -> &'static str {
        match self {
            LoadGenerator::Wrk => "wrk",
            LoadGenerator::Builtin => "the builtin load generator (Rust)",
        }
    }
}

/// What each connection requests, over and over.
#[derive(Debug, Clone)]
pub enum Requests {
    /// The same path (and query) every time.
    Path(String),
    /// `{path}?page=N&pageSize={page_size}`, N uniform in `1..=pages`
    /// from a fixed seed.
    RandomPages {
        /// The list's path, without a query.
        path: String,
        /// The highest page.
        pages: u64,
        /// `pageSize`.
        page_size: u64,
    },
}

/// What one load run measured (wrk or builtin alike).
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    /// Median latency.
    pub median: Duration,
    /// 99th percentile latency.
    pub p99: Duration,
    /// The slowest request.
    pub max: Duration,
    /// Requests per second.
    pub throughput: f64,
    /// Requests completed (every answer, whatever its status).
    pub requests: u64,
    /// Answers whose status was not 2xx (wrk: "Non-2xx or 3xx responses").
    pub non_2xx: u64,
    /// Requests that got no answer: connect, read, write errors and timeouts.
    pub errors: u64,
}

/// Runs `connections` connections against `base_url` for `duration` with
/// `generator`, and fails on any non-2xx answer or when no request completed.
/// `workdir` holds wrk's Lua script for [`Requests::RandomPages`].
pub fn run(
    generator: LoadGenerator,
    base_url: &str,
    requests: &Requests,
    connections: u32,
    duration: Duration,
    workdir: &Path,
) -> anyhow::Result<Latency> {
    let latency = match (generator, requests) {
        (LoadGenerator::Wrk, Requests::Path(path)) => {
            wrk(&format!("{base_url}{path}"), connections, duration, None)?
        }
        (
            LoadGenerator::Wrk,
            Requests::RandomPages {
                path,
                pages,
                page_size,
            },
        ) => {
            let script = workdir.join("random-pages.lua");
            std::fs::write(
                &script,
                format!(
                    "math.randomseed(6)\n\
                     request = function()\n  \
                       local page = math.random(1, {pages})\n  \
                       return wrk.format(\"GET\", \"{path}?page=\" .. page .. \"&pageSize={page_size}\")\n\
                     end\n"
                ),
            )?;
            wrk(
                &format!("{base_url}{path}"),
                connections,
                duration,
                Some(&script),
            )?
        }
        (LoadGenerator::Builtin, requests) => {
            crate::rust_load::run(base_url, requests, connections, duration)?
        }
    };
    if latency.non_2xx > 0 {
        bail!(
            "{} saw {} error answers from {base_url}: {requests:?}",
            generator.describe(),
            latency.non_2xx
        );
    }
    if latency.requests == 0 {
        bail!(
            "no request to {base_url} ({requests:?}) completed in {duration:?}: give each case more time"
        );
    }
    Ok(latency)
}

/// Checks wrk is installed.
pub fn ensure_wrk() -> anyhow::Result<()> {
    match Command::new("wrk").arg("--version").output() {
        Ok(_) => Ok(()),
        Err(_) => bail!(
            "wrk is not installed: `apt-get install -y wrk` (Debian's package), or run with `--load builtin`"
        ),
    }
}

/// Runs wrk against `url` with `connections` connections for `duration`;
/// with `script`, wrk's Lua script chooses the requests.
pub fn wrk(
    url: &str,
    connections: u32,
    duration: Duration,
    script: Option<&Path>,
) -> anyhow::Result<Latency> {
    let threads = connections.min(2);
    let mut command = Command::new("wrk");
    command
        .arg(format!("-t{threads}"))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{}s", duration.as_secs().max(1)))
        .arg("--latency")
        .arg("--timeout")
        .arg("30s")
        .arg("-H")
        .arg(format!("Authorization: {}", authorization()));
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    let output = command.arg(url).output().context("running wrk")?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "wrk failed: {text}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    parse_wrk(&text).with_context(|| format!("reading wrk's report of {url}:\n{text}"))
}

/// Reads wrk's `--latency` report: the 50% and 99% lines, the latency Max,
/// the request count, Requests/sec, and the error lines when present.
fn parse_wrk(text: &str) -> Option<Latency> {
    let percentile = |label: &str| {
        text.lines()
            .map(str::trim)
            .find(|line| line.starts_with(label))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(parse_duration)
    };
    let median = percentile("50%")?;
    let p99 = percentile("99%")?;
    // "Latency  Avg  Stdev  Max  +/- Stdev" in the thread statistics.
    let max = text
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("Latency "))
        .find_map(|line| line.split_whitespace().nth(3).and_then(parse_duration))?;
    let throughput = text
        .lines()
        .find(|line| line.starts_with("Requests/sec:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|value| value.parse().ok())?;
    let requests = text
        .lines()
        .map(str::trim)
        .find(|line| line.contains(" requests in "))
        .and_then(|line| line.split_whitespace().next())
        .and_then(|value| value.parse().ok())?;
    // "  Non-2xx or 3xx responses: 12"
    let non_2xx = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("Non-2xx or 3xx responses:"))
        .map_or(Some(0), |count| count.trim().parse().ok())?;
    // "  Socket errors: connect 0, read 1, write 0, timeout 2"
    let errors = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("Socket errors:"))
        .map_or(0, |counts| {
            counts
                .split(',')
                .filter_map(|count| count.split_whitespace().nth(1))
                .filter_map(|count| count.parse::<u64>().ok())
                .sum()
        });
    Some(Latency {
        median,
        p99,
        max,
        throughput,
        requests,
        non_2xx,
        errors,
    })
}

/// wrk's durations: `512.00us`, `1.23ms`, `2.01s`, `1.50m`.
fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let seconds = match unit {
        "us" => value / 1e6,
        "ms" => value / 1e3,
        "s" => value,
        "m" => value * 60.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrk_reports() {
        let report = "Running 5s test @ http://127.0.0.1:1/x\n  1 threads and 1 connections\n  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency     1.10ms  200.00us   3.00ms   90.00%\n  Latency Distribution\n     50%  987.00us\n     75%    1.20ms\n     90%    1.50ms\n     99%    2.90ms\n  4500 requests in 5.00s, 10.00MB read\nRequests/sec:    900.12\nTransfer/sec:      2.00MB\n";
        let latency = parse_wrk(report).expect("parsed");
        assert_eq!(latency.median, Duration::from_micros(987));
        assert!((latency.throughput - 900.12).abs() < 1e-9);
        assert_eq!(latency.requests, 4500);
        assert_eq!(latency.p99, Duration::from_micros(2900));
        assert_eq!(latency.max, Duration::from_millis(3));
        assert_eq!((latency.non_2xx, latency.errors), (0, 0));
        let failing = report.replace(
            "Requests/sec:",
            "  Socket errors: connect 1, read 2, write 0, timeout 4\n  Non-2xx or 3xx responses: 7\nRequests/sec:",
        );
        let latency = parse_wrk(&failing).expect("parsed");
        assert_eq!((latency.non_2xx, latency.errors), (7, 7));
        assert_eq!(parse_duration("1.50m"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("12"), None);
    }
}
