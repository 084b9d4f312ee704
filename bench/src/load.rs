//! HTTP load with wrk (Debian's package): one connection for latency, eight
//! for memory; latencies come from wrk's own percentile report.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::api::authorization;

/// What one wrk run measured.
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    /// Median latency.
    pub median: Duration,
    /// Requests per second.
    pub throughput: f64,
    /// Requests completed.
    pub requests: u64,
}

/// Checks wrk is installed.
pub fn ensure_wrk() -> anyhow::Result<()> {
    match Command::new("wrk").arg("--version").output() {
        Ok(_) => Ok(()),
        Err(_) => bail!("wrk is not installed: `apt-get install -y wrk` (Debian's package)"),
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
    if text.contains("Non-2xx or 3xx responses") {
        bail!("wrk saw error answers from {url}:\n{text}");
    }
    let latency = parse_wrk(&text).with_context(|| format!("reading wrk's report:\n{text}"))?;
    if latency.requests == 0 {
        bail!("no request to {url} completed in {duration:?}: give each case more time");
    }
    Ok(latency)
}

/// Reads the 50% line and Requests/sec of wrk's `--latency` report.
fn parse_wrk(text: &str) -> Option<Latency> {
    let median = text
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("50%"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(parse_duration)?;
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
    Some(Latency {
        median,
        throughput,
        requests,
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
        assert_eq!(parse_duration("1.50m"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("12"), None);
    }
}
