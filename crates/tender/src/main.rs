//! The `tender` binary: a thin layer over `tender-server` — flags and `TENDER_*` variables
//! in, printed lines out.
//!
//! - `serve`: the API, dashboard, receipt host and background workers.
//! - `accounts create|list|update|set-password`, `keys create|list|roll|revoke`: merchant
//!   accounts (their receipts identity, password recovery) and API keys.
//! - `connectors list|create|update|delete`: the processors an account's payments go to.
//! - `migrate`, `backup FILE`, `config check`: operations.
//! - `listen`, `trigger EVENT_TYPE`: the local development loop, against a running server's
//!   API (not its store): forward its events to a local URL; make the objects of an event.
//!
//! Every subcommand that touches data takes the same store flags (`--data-dir`,
//! `--database-url`, `TENDER_VAULT_KEY`), so it works while a server runs on the same store.

mod api;
mod commands;
mod listen;
mod trigger;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// mimalloc instead of the C library's malloc. malloc and free were about 15% of a create
/// payment's CPU in a profile, much of it the SQLite writer thread freeing what request threads
/// allocated (glibc takes the allocating arena's lock for that; mimalloc's per-thread heaps do
/// not). Measured on 25 Nov (docs/performance.md): 16% less server CPU per create payment on
/// SQLite, for 15 MiB more peak memory.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "tender", version, about = "Tender: a self-hosted payments API")]
struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, env = "TENDER_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
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
    /// Manage an account's API keys.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Manage an account's connectors to payment processors.
    Connectors {
        #[command(subcommand)]
        command: ConnectorsCommand,
    },
    /// Check the ledger: recompute every balance from the postings and compare it with what
    /// the API serves.
    Ledger {
        #[command(subcommand)]
        command: LedgerCommand,
    },
    /// Export reports: the balance transactions of a period as CSV.
    Reports {
        #[command(subcommand)]
        command: commands::ReportsCommand,
    },
    /// Apply pending database migrations and exit.
    Migrate(StoreArgs),
    /// Copy a stopped server's SQLite data directory into an empty PostgreSQL database, then
    /// check the copy (rows per table, the ledger).
    MigrateStore {
        /// The empty target: postgres://…
        #[arg(long)]
        to: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Copy the SQLite database to FILE while the server runs (online backup).
    Backup {
        /// Where to write the copy (must not exist).
        file: PathBuf,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Check the configuration without serving.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Forward the account's events, as they happen, to a local URL, signed as webhooks are;
    /// prints one line per event with the receiver's answer.
    Listen {
        #[command(flatten)]
        api: ApiArgs,
        /// The local URL to POST each event to, e.g. http://localhost:3000/webhooks.
        #[arg(long, required_unless_present = "print_secret", value_parser = parse_forward_url)]
        forward_to: Option<url::Url>,
        /// Only these event types (comma-separated; default: all).
        #[arg(long, value_delimiter = ',', value_parser = event_types())]
        events: Vec<String>,
        /// Print only the signing secret (derived from the key) and exit.
        #[arg(long)]
        print_secret: bool,
    },
    /// Make, in test mode, the objects that produce EVENT_TYPE (through the API), and wait for
    /// the event.
    Trigger {
        /// The event to produce, e.g. payment.succeeded.
        #[arg(value_parser = event_types())]
        event_type: String,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// Which running server `listen` and `trigger` talk to, and as whom.
#[derive(Args, Clone)]
struct ApiArgs {
    /// A secret API key of the account (sk_test_…; `listen` also takes sk_live_…). Prefer
    /// TENDER_API_KEY to keep it out of the shell history.
    #[arg(long, env = "TENDER_API_KEY", hide_env_values = true)]
    api_key: String,
    /// The service's address, without /v2 (plain http only to this machine).
    #[arg(
        long,
        env = "TENDER_API",
        default_value = "http://127.0.0.1:4242",
        value_parser = api::check_api_address
    )]
    api: String,
}

/// The event types, as the values `--events` and `trigger` accept.
fn event_types() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(tender_core::event::EVENT_TYPES)
}

/// `--forward-to`: an http(s) URL with a host.
fn parse_forward_url(s: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(s).map_err(|e| format!("not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err("expected an http:// or https:// URL with a host".into());
    }
    Ok(url)
}

#[derive(Subcommand)]
enum LedgerCommand {
    /// Book on the ledger what was captured and refunded before it existed (data written by a
    /// version before migration 0005); running it again books nothing twice.
    Backfill {
        /// Only this account (`acct_…` or its login e-mail).
        #[arg(long)]
        account: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Check every invariant of the ledger of every account in both modes (or of one account);
    /// prints one line per account and mode and every difference, and exits non-zero if any.
    Verify {
        /// Only this account (`acct_…` or its login e-mail).
        #[arg(long)]
        account: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Validate every setting `serve` would use, open the store, and report.
    Check(ServeArgs),
}

#[derive(Subcommand)]
enum AccountsCommand {
    /// Create an account with test and live keys; prints one JSON object.
    Create {
        /// Login e-mail for the dashboard (never shown to customers).
        #[arg(long)]
        email: String,
        /// Business name shown to customers on receipts.
        #[arg(long)]
        name: Option<String>,
        /// Dashboard password (generated and printed when omitted). Prefer TENDER_NEW_PASSWORD
        /// to keep it out of the shell history.
        #[arg(long, env = "TENDER_NEW_PASSWORD", hide_env_values = true)]
        password: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List accounts (id, e-mail, name), one JSON object per line.
    List(StoreArgs),
    /// Show or set an account's prices; transactions already booked keep their fees.
    Pricing {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        /// Card payments: PERCENT%+FIXED of the captured amount, e.g. 2.9%+30.
        #[arg(long)]
        card: Option<String>,
        /// Bank transfers: PERCENT%/CAP, e.g. 0.8%/500.
        #[arg(long)]
        bank_transfer: Option<String>,
        /// Each dispute: an amount in minor units, e.g. 1500.
        #[arg(long)]
        dispute: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Show or set an account's default payout destination, where `POST /v1/payouts` pays out
    /// (Stripe's payouts name no bank account). The IBAN is kept sealed; only its country and
    /// last four are shown.
    PayoutDestination {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        /// The IBAN to pay out to (with --account-holder-name).
        #[arg(long, requires = "account_holder_name")]
        iban: Option<String>,
        /// The name on that bank account.
        #[arg(long, requires = "iban")]
        account_holder_name: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Set (or reset) an account's dashboard password; ends all its dashboard sessions.
    /// Prints the new password when it was generated.
    SetPassword {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        /// The new password (at least 8 characters; generated when omitted). Prefer
        /// TENDER_NEW_PASSWORD to keep it out of the shell history.
        #[arg(long, env = "TENDER_NEW_PASSWORD", hide_env_values = true)]
        password: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Set what customers see of an account on receipts: business name and public e-mail.
    Update {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        /// Business name shown on receipts ("" clears it).
        #[arg(long)]
        name: Option<String>,
        /// E-mail customers can write to, shown on receipts ("" clears it).
        #[arg(long)]
        public_email: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Test,
    Live,
}

#[derive(Clone, Copy, ValueEnum)]
enum KindArg {
    Secret,
    Publishable,
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create a key; prints it in full, once.
    Create {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        /// Test or live.
        #[arg(long, value_enum)]
        mode: ModeArg,
        /// Secret (server-side) or publishable (browser tokenisation only).
        #[arg(long, value_enum, default_value_t = KindArg::Secret)]
        kind: KindArg,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List an account's keys by last four (publishable keys in full).
    List {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Replace a key; the old one keeps working for the grace period.
    Roll {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        /// The key's id (`key_…`, from `keys list`).
        #[arg(long)]
        key: String,
        /// Seconds the old key keeps working (0 to 604800).
        #[arg(long, default_value_t = 86_400)]
        grace: i64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revoke a key at once.
    Revoke {
        /// The account's id (`acct_…`) or its login e-mail.
        #[arg(long)]
        account: String,
        /// The key's id (`key_…`, from `keys list`).
        #[arg(long)]
        key: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Which account and mode a connector command is about.
#[derive(Args, Clone)]
struct ConnectorScope {
    /// The account's id (`acct_…`) or login e-mail.
    #[arg(long)]
    account: String,
    /// Test or live: connectors are per mode.
    #[arg(long, value_enum)]
    mode: ModeArg,
}

/// A connector's settings; secrets come from the environment or a file, never a flag.
#[derive(Args, Clone)]
struct ConnectorSettingsArgs {
    /// A name to tell connectors apart.
    #[arg(long)]
    name: Option<String>,
    /// The processor's origin, scheme://host[:port] (default: its public address).
    #[arg(long)]
    api_base: Option<String>,
    /// Lower is tried first.
    #[arg(long)]
    priority: Option<i64>,
    /// Send card numbers to this processor (your PCI scope covers it): true or false.
    #[arg(long)]
    raw_card_data: Option<bool>,
    /// The processor's secret API key (Stripe: sk_test_… / sk_live_…). Kept out of flags.
    #[arg(
        long,
        env = "TENDER_CONNECTOR_API_KEY",
        hide_env_values = true,
        hide = true
    )]
    api_key_env: Option<String>,
    /// A file holding the processor's secret API key (instead of TENDER_CONNECTOR_API_KEY).
    #[arg(long, conflicts_with = "api_key_env")]
    api_key_file: Option<PathBuf>,
    /// The processor's webhook signing secret (whsec_…), from the environment.
    #[arg(
        long,
        env = "TENDER_CONNECTOR_WEBHOOK_SECRET",
        hide_env_values = true,
        hide = true
    )]
    webhook_secret_env: Option<String>,
}

#[derive(Subcommand)]
enum ConnectorsCommand {
    /// List the connectors of an account and mode, one JSON object per line (no secrets).
    List {
        #[command(flatten)]
        scope: ConnectorScope,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Add a connector; the API key comes from TENDER_CONNECTOR_API_KEY or --api-key-file.
    Create {
        #[command(flatten)]
        scope: ConnectorScope,
        /// stripe or simulator.
        #[arg(long = "type")]
        kind: String,
        #[command(flatten)]
        settings: ConnectorSettingsArgs,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Change a connector: priority, name, address, card data, or rotate its key.
    Update {
        #[command(flatten)]
        scope: ConnectorScope,
        /// The connector's id (`conn_…`).
        #[arg(long)]
        connector: String,
        #[command(flatten)]
        settings: ConnectorSettingsArgs,
        /// Stop (true) or resume (false) sending payments to it.
        #[arg(long)]
        disabled: Option<bool>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete a connector; its payments still reach it for captures, refunds and syncs.
    Delete {
        #[command(flatten)]
        scope: ConnectorScope,
        /// The connector's id (`conn_…`).
        #[arg(long)]
        connector: String,
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
    /// sqlite://PATH (default: in the data dir) or postgres://… (several hosts for a primary and
    /// its standbys: postgres://u@db1:5432,db2:5432/tender; the writable one is used)
    #[arg(long, env = "TENDER_DATABASE_URL")]
    database_url: Option<String>,
    /// 64 hex characters; generated into the data dir when omitted (SQLite only). Prefer the
    /// environment variable or --vault-key-file: a flag shows in the process list.
    #[arg(long, env = "TENDER_VAULT_KEY", hide_env_values = true)]
    vault_key: Option<String>,
    /// A file holding the vault key (64 hex characters), e.g. a systemd credential.
    #[arg(long, env = "TENDER_VAULT_KEY_FILE", conflicts_with = "vault_key")]
    vault_key_file: Option<PathBuf>,
}

#[derive(Args, Clone)]
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
    /// Seconds before a connector's payment or refund the processor left unknown is first
    /// synced (then with backoff, up to hourly). Keep it above 45 s (three calls of 15 s).
    #[arg(long, env = "TENDER_CONNECTOR_SYNC_DELAY", default_value_t = 60)]
    connector_sync_delay: u64,
    /// Seconds before a charge's money is available, in both modes (default: two days in
    /// live mode, 60 in test mode).
    #[arg(long, env = "TENDER_BALANCE_AVAILABLE_DELAY")]
    balance_available_delay: Option<u64>,
    /// Days after a subscription invoice's first failed payment on which it is tried again;
    /// after the last, the invoice is uncollectible and the subscription unpaid.
    #[arg(long, env = "TENDER_DUNNING_DAYS", default_value = "1,3,5,7", value_parser = parse_dunning)]
    dunning_days: tender_core::billing::invoice::Dunning,
    /// Seconds a node holds a background task (a renewal, a webhook's settlement, a test
    /// clock's advance…) it claimed; a task whose node died is taken over this long after it
    /// was claimed. Shorter recovers sooner; each task must finish well inside it.
    #[arg(long, env = "TENDER_TASK_LEASE_SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(5..=3600))]
    task_lease_secs: u64,
    /// PEM certificate chain: serve HTTPS (TLS 1.2+) on both listeners; reloaded on SIGHUP.
    #[arg(long, env = "TENDER_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for --tls-cert.
    #[arg(long, env = "TENDER_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Allow a non-loopback address without TLS (a TLS-terminating proxy is in front).
    #[arg(long, env = "TENDER_BEHIND_TLS_PROXY")]
    behind_tls_proxy: bool,
    /// Let test-mode webhooks reach private networks (RFC 1918, unique-local); link-local and
    /// cloud-metadata addresses stay refused.
    #[arg(long, env = "TENDER_ALLOW_PRIVATE_WEBHOOK_TARGETS")]
    allow_private_webhook_targets: bool,
    /// Let a merchant's API key (and dashboard) set a connector's raw_card_data and api_base,
    /// which decide where card numbers go. Off: only `tender connectors` sets them.
    #[arg(long, env = "TENDER_ALLOW_CONNECTOR_SETTINGS_VIA_API")]
    allow_connector_settings_via_api: bool,
    /// Open connections per listener at most; past it new ones wait to be accepted.
    #[arg(long, env = "TENDER_MAX_CONNECTIONS", default_value_t = 1024)]
    max_connections: usize,
    /// Connections of one client address that may wait for their first request head at once
    /// (0: no limit); past it that address's new connections are closed. Loopback is not
    /// counted (a local proxy).
    #[arg(long, env = "TENDER_MAX_HALF_OPEN_PER_ADDRESS", default_value_t = 32)]
    max_half_open_per_address: usize,
    #[command(flatten)]
    store: StoreArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // PostgreSQL's NOTICEs (such as "relation already exists, skipping" from migrations) are
    // noise for an operator: shown only when asked for with TENDER_LOG.
    let filter = tracing_subscriber::EnvFilter::try_from_env("TENDER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tokio_postgres=warn"));
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // A log line that cannot be written (stderr closed: the log pipe's reader went away) is
    // dropped; tracing-subscriber's default reports that with `eprintln!`, which panics.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .log_internal_errors(false);
    match cli.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().flatten_event(true).init(),
    }
    match cli.command {
        Command::Serve(args) => commands::serve(args).await,
        Command::Accounts { command } => commands::accounts(command).await,
        Command::Keys { command } => commands::keys(command).await,
        Command::Connectors { command } => commands::connectors(command).await,
        Command::Ledger {
            command: LedgerCommand::Verify { account, store },
        } => commands::ledger_verify(account, store).await,
        Command::Ledger {
            command: LedgerCommand::Backfill { account, store },
        } => commands::ledger_backfill(account, store).await,
        Command::Reports { command } => commands::reports(command).await,
        Command::Migrate(store) => commands::migrate(store).await,
        Command::MigrateStore { to, store } => commands::migrate_store(store, to).await,
        Command::Backup { file, store } => commands::backup(&file, store).await,
        Command::Config {
            command: ConfigCommand::Check(args),
        } => commands::config_check(args).await,
        Command::Listen {
            api,
            print_secret: true,
            ..
        } => {
            listen::print_secret(&api.api_key);
            Ok(())
        }
        Command::Listen {
            api,
            forward_to,
            events,
            ..
        } => {
            let forward_to = forward_to.context("--forward-to is required")?;
            listen::listen(listen::Listen {
                api: api.api,
                api_key: api.api_key,
                forward_to,
                events,
            })
            .await
        }
        Command::Trigger { event_type, api } => {
            trigger::trigger(&api.api, &api.api_key, &event_type).await
        }
    }
}

/// `--dunning-days 1,3,5,7`.
fn parse_dunning(s: &str) -> Result<tender_core::billing::invoice::Dunning, String> {
    tender_core::billing::invoice::Dunning::parse(s)
}
