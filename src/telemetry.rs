//! Logging through `tracing`: human-readable by default, JSON lines with
//! `TRIBUTARY_LOG_FORMAT=json`; levels from `RUST_LOG` (default `info`).
//! Logs go to standard error, so standard output carries only what a
//! command prints for its user (a new API key, a rotation summary).

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    Human,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Installs the global subscriber; call once, first thing in `main`.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    // `try_init` fails only when a subscriber is already set (tests); keep it.
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
