//! The `tender` binary: `tender serve` runs the service; `tender accounts create` adds a
//! merchant account. A thin layer over `tender-server`: flags and `TENDER_*` variables in,
//! printed lines out.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use tender_core::clock::SystemClock;
use tender_server::{Application, ServerConfig};

#[derive(Parser)]
#[command(name = "tender", version, about = "Tender: a self-hosted payments API")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API, dashboard and receipt host.
    Serve(ServeArgs),
    /// Manage merchant accounts.
    Accounts {
        #[command(subcommand)]
        command: AccountsCommand,
    },
}

#[derive(Subcommand)]
enum AccountsCommand {
    /// Create an account with test and live keys; prints one JSON object.
    Create {
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: Option<String>,
        /// Dashboard password (generated when omitted).
        #[arg(long)]
        password: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Where the data lives (shared by every subcommand).
#[derive(Args, Clone)]
struct StoreArgs {
    /// Data directory: the SQLite file and generated secrets.
    #[arg(long, env = "TENDER_DATA_DIR", default_value = "./tender-data")]
    data_dir: PathBuf,
    /// sqlite://PATH (default: in the data dir) or postgres://…
    #[arg(long, env = "TENDER_DATABASE_URL")]
    database_url: Option<String>,
    /// 64 hex characters; generated into the data dir when omitted (SQLite only).
    #[arg(long, env = "TENDER_VAULT_KEY", hide_env_values = true)]
    vault_key: Option<String>,
}

#[derive(Args)]
struct ServeArgs {
    /// API and dashboard address (port 0 = any free port).
    #[arg(long, env = "TENDER_LISTEN", default_value = "127.0.0.1:4242")]
    listen: SocketAddr,
    /// Receipt host address.
    #[arg(long, env = "TENDER_RECEIPT_LISTEN", default_value = "127.0.0.1:4243")]
    receipt_listen: SocketAddr,
    /// Public base of receipt_url (default: from --receipt-listen).
    #[arg(long, env = "TENDER_RECEIPT_BASE_URL")]
    receipt_base_url: Option<String>,
    /// Requests per second per account and mode; 0 disables.
    #[arg(long, env = "TENDER_RATE_LIMIT", default_value_t = 100)]
    rate_limit: u32,
    /// Multiplies the webhook retry schedule (tests use e.g. 0.001).
    #[arg(long, env = "TENDER_WEBHOOK_RETRY_SCALE", default_value_t = 1.0)]
    webhook_retry_scale: f64,
    /// Test-mode bank transfer settlement delay, seconds.
    #[arg(long, env = "TENDER_BANK_SETTLEMENT_DELAY", default_value_t = 10)]
    bank_settlement_delay: u64,
    #[command(flatten)]
    store: StoreArgs,
}

fn config(store: &StoreArgs) -> ServerConfig {
    let mut c = ServerConfig::new(store.data_dir.clone());
    c.database_url = store.database_url.clone();
    c.vault_key = store.vault_key.clone();
    c
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TENDER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve(args) => serve(args).await,
        Command::Accounts {
            command:
                AccountsCommand::Create {
                    email,
                    name,
                    password,
                    store,
                },
        } => {
            let services = tender_server::startup::open_services(
                &config(&store),
                Arc::new(SystemClock),
                String::new(),
            )
            .await?;
            let created = services
                .create_account(&email, name, password)
                .await
                .map_err(|e| anyhow::anyhow!("cannot create the account: {e}"))?;
            println!("{}", serde_json::to_string(&created)?);
            Ok(())
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let mut c = config(&args.store);
    c.listen = args.listen;
    c.receipt_listen = args.receipt_listen;
    c.receipt_base_url = args.receipt_base_url;
    c.rate_limit = args.rate_limit;
    c.webhook_retry_scale = args.webhook_retry_scale;
    c.bank_settlement_delay = args.bank_settlement_delay;
    let app = Application::build(c).await.context("starting tender")?;
    if let Some(created) = &app.bootstrap {
        println!(
            "created account {} (shown once; keep these safe)",
            created.account
        );
        println!("  test secret key:      {}", created.keys.test.secret);
        println!("  test publishable key: {}", created.keys.test.publishable);
        println!(
            "  dashboard login:      {} / {}",
            created.email, created.password
        );
    }
    println!("listening on http://{}", app.api_addr());
    println!("receipts on http://{}", app.receipt_addr());
    app.run_until(shutdown_signal()).await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
