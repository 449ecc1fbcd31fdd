//! What each subcommand does: serving, migrations, backups and the configuration check here;
//! accounts and keys in [`accounts`], connectors in [`connectors`], the ledger and reports in
//! [`ledger`], moving a SQLite data directory to PostgreSQL in [`migrate_store`].

mod accounts;
mod connectors;
mod ledger;
mod migrate_store;

pub use accounts::{accounts, keys};
pub use connectors::connectors;
pub use ledger::{ledger_backfill, ledger_verify, reports, ReportsCommand};
pub use migrate_store::migrate_store;

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use tender_core::clock::SystemClock;
use tender_core::services::Services;
use tender_server::{Application, ServerConfig};
use tender_store::DatabaseUrl;

use crate::{ServeArgs, StoreArgs};

fn store_config(store: &StoreArgs) -> anyhow::Result<ServerConfig> {
    let mut c = ServerConfig::new(store.data_dir.clone());
    c.database_url = store.database_url.clone();
    c.vault_key = store.vault_key.clone();
    if let Some(path) = &store.vault_key_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the vault key file {}", path.display()))?;
        c.vault_key = Some(text.trim().to_string());
    }
    Ok(c)
}

fn serve_config(args: &ServeArgs) -> anyhow::Result<ServerConfig> {
    let mut c = store_config(&args.store)?;
    c.listen = args.listen;
    c.receipt_listen = args.receipt_listen;
    c.receipt_base_url = args.receipt_base_url.clone();
    c.rate_limit = args.rate_limit;
    c.webhook_retry_scale = args.webhook_retry_scale;
    c.bank_settlement_delay = args.bank_settlement_delay;
    c.connector_sync_delay = args.connector_sync_delay;
    c.balance_available_delay = args.balance_available_delay;
    c.dunning = args.dunning_days.clone();
    c.task_lease_secs = args.task_lease_secs;
    c.tls_cert = args.tls_cert.clone();
    c.tls_key = args.tls_key.clone();
    c.behind_tls_proxy = args.behind_tls_proxy;
    c.allow_private_webhook_targets = args.allow_private_webhook_targets;
    c.allow_connector_settings_via_api = args.allow_connector_settings_via_api;
    c.max_connections = args.max_connections;
    c.max_half_open_per_address = args.max_half_open_per_address;
    Ok(c)
}

async fn services(store: &StoreArgs) -> anyhow::Result<Services> {
    tender_server::startup::open_services(
        &store_config(store)?,
        Arc::new(SystemClock),
        String::new(),
    )
    .await
}

pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let app = Application::build(serve_config(&args)?)
        .await
        .context("starting tender")?;
    // Signal handlers are in place before we announce the addresses, so a supervisor that
    // stops us right after reading them gets a clean shutdown, not the default kill.
    let stop = shutdown_signal()?;
    let scheme = app.scheme();
    if let Some(created) = &app.bootstrap {
        println!(
            "created account {} (shown once; keep these safe)",
            created.account
        );
        println!("  test secret key:      {}", created.keys.test.secret);
        println!("  test publishable key: {}", created.keys.test.publishable);
        println!("  live secret key:      {}", created.keys.live.secret);
        println!("  live publishable key: {}", created.keys.live.publishable);
        println!(
            "  dashboard login:      {} / {}",
            created.email, created.password
        );
        println!(
            "  dashboard:            {scheme}://{}/dashboard",
            app.api_addr()
        );
        if let Ok(DatabaseUrl::Sqlite(path)) =
            DatabaseUrl::parse(args.store.database_url.as_deref(), &args.store.data_dir)
        {
            println!("  database:             {}", path.display());
        }
        println!(
            "  receipts show:        no business name yet; set one with `tender accounts update --account {} --name \"Your Shop\"` or in the dashboard (Account)",
            created.account
        );
        if args.store.vault_key.is_none() && args.store.vault_key_file.is_none() {
            println!(
                "  vault key:            {} (back it up apart from the database: saved cards need it)",
                args.store.data_dir.join("vault.key").display()
            );
        }
    }
    // Without a live-mode connector (CONTRACT §8) nothing charges a real card.
    tracing::warn!(
        "live mode moves money only through a connector: an account without a live-mode connector has its live payments approved by the built-in simulator (docs/api.md, Connectors)"
    );
    println!("listening on {scheme}://{}", app.api_addr());
    println!("receipts on {scheme}://{}", app.receipt_addr());
    app.run_until(stop).await
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM; the handlers are registered when this is called.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
            tracing::info!("shutting down: no new connections; finishing requests in flight");
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// `tender migrate`.
pub async fn migrate(store: StoreArgs) -> anyhow::Result<()> {
    // Opening a store applies what is pending (under a lock on PostgreSQL).
    let services = services(&store).await?;
    services.store.check_ready().await?;
    println!("migrations applied; schema is current");
    Ok(())
}

pub async fn backup(file: &Path, store: StoreArgs) -> anyhow::Result<()> {
    if file.exists() {
        bail!("{} exists; choose a new file", file.display());
    }
    match DatabaseUrl::parse(store.database_url.as_deref(), &store.data_dir).map_err(anyhow::Error::msg)? {
        DatabaseUrl::Sqlite(path) => {
            if !path.exists() {
                bail!("no database at {}", path.display());
            }
            tender_store::sqlite::backup(&path, file)?;
            println!("backed up {} to {}", path.display(), file.display());
            Ok(())
        }
        DatabaseUrl::Postgres(_) => bail!(
            "`tender backup` copies SQLite databases; for PostgreSQL use pg_dump or your provider's backups (docs/operations.md)"
        ),
    }
}

pub async fn config_check(args: ServeArgs) -> anyhow::Result<()> {
    let config = serve_config(&args)?;
    let mut problems = Vec::new();
    if let Err(e) = config.check_listen_rules() {
        problems.push(e.to_string());
    }
    if let (Some(cert), Some(key)) = (&config.tls_cert, &config.tls_key) {
        for p in [cert, key] {
            if let Err(e) = std::fs::read(p) {
                problems.push(format!("cannot read {}: {e}", p.display()));
            }
        }
    }
    match services(&args.store).await {
        Ok(s) => {
            if let Err(e) = s.store.check_ready().await {
                problems.push(format!("store not ready: {e}"));
            }
        }
        Err(e) => problems.push(format!("{e:#}")),
    }
    println!("listen:          {}", config.listen);
    println!("receipt listen:  {}", config.receipt_listen);
    println!(
        "database:        {}",
        match DatabaseUrl::parse(config.database_url.as_deref(), &config.data_dir) {
            Ok(DatabaseUrl::Sqlite(p)) => format!("sqlite {}", p.display()),
            Ok(DatabaseUrl::Postgres(_)) => "postgres (URL hidden)".to_string(),
            Err(e) => e,
        }
    );
    println!(
        "tls:             {}",
        if config.tls_cert.is_some() {
            "on"
        } else {
            "off"
        }
    );
    println!(
        "rate limit:      {} req/s per account and mode",
        config.rate_limit
    );
    if problems.is_empty() {
        println!("configuration ok");
        Ok(())
    } else {
        for p in &problems {
            eprintln!("problem: {p}");
        }
        bail!("{} problem(s) found", problems.len())
    }
}
