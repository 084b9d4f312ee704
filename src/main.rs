//! The `tributary` binary: parses the command line and runs it.

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tributary::cli::Cli::parse().run().await
}
