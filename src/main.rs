//! The `tributary` binary: parses the command line and runs it.

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tributary::cli::Cli::from_command_line().run().await
}
