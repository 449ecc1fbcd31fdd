//! What each subcommand does.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use tender_core::auth::Scope;
use tender_core::auth::{KeyKind, Mode};
use tender_core::balance::fees::Pricing;
use tender_core::clock::SystemClock;
use tender_core::connectors::service::ChangedBy;
use tender_core::services::Services;
use tender_server::{Application, ServerConfig};
use tender_store::DatabaseUrl;

use crate::{
    AccountsCommand, ConnectorScope, ConnectorSettingsArgs, ConnectorsCommand, KeysCommand,
    KindArg, ModeArg, ReportsCommand, ServeArgs, StoreArgs,
};

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

pub async fn accounts(command: AccountsCommand) -> anyhow::Result<()> {
    match command {
        AccountsCommand::Create {
            email,
            name,
            password,
            store,
        } => {
            let created = services(&store)
                .await?
                .create_account(&email, name, password)
                .await
                .map_err(|e| anyhow::anyhow!("cannot create the account: {e}"))?;
            println!("{}", serde_json::to_string(&created)?);
        }
        AccountsCommand::SetPassword {
            account,
            password,
            store,
        } => {
            let services = services(&store).await?;
            let id = resolve_account(&services, &account).await?;
            let generated = password.is_none();
            let password = services
                .set_password(&id, password)
                .await
                .map_err(|e| anyhow::anyhow!("cannot set the password: {e}"))?;
            let mut out = serde_json::json!({"account": id, "sessions_ended": true});
            if generated {
                out["password"] = password.into();
            }
            println!("{out}");
        }
        AccountsCommand::Update {
            account,
            name,
            public_email,
            store,
        } => {
            let services = services(&store).await?;
            let id = resolve_account(&services, &account).await?;
            let current = services
                .store
                .find_account(&id)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no account {id}"))?;
            // A flag not given keeps the current value; "" clears it.
            let name = name.or(current.name);
            let public_email = public_email.or(current.public_email);
            let a = services
                .update_account_profile(&id, name.as_deref(), public_email.as_deref())
                .await
                .map_err(|e| anyhow::anyhow!("cannot update the account: {e}"))?;
            println!(
                "{}",
                serde_json::json!({"account": a.id, "email": a.email, "name": a.name, "public_email": a.public_email})
            );
        }
        AccountsCommand::Pricing {
            account,
            card,
            bank_transfer,
            dispute,
            store,
        } => {
            let services = services(&store).await?;
            let id = resolve_account(&services, &account).await?;
            let mut pricing = services.pricing(&id).await?;
            let bad = |flag: &str, e: tender_core::balance::fees::PricingError| {
                anyhow::anyhow!("--{flag}: {}", e.0)
            };
            if let Some(s) = &card {
                (pricing.card_bps, pricing.card_fixed) =
                    Pricing::parse_card(s).map_err(|e| bad("card", e))?;
            }
            if let Some(s) = &bank_transfer {
                (pricing.bank_transfer_bps, pricing.bank_transfer_cap) =
                    Pricing::parse_bank_transfer(s).map_err(|e| bad("bank-transfer", e))?;
            }
            if let Some(s) = &dispute {
                pricing.dispute = Pricing::parse_dispute(s).map_err(|e| bad("dispute", e))?;
            }
            if card.is_some() || bank_transfer.is_some() || dispute.is_some() {
                services.set_pricing(&id, pricing).await?;
            }
            println!("{id}: {}", pricing.describe());
        }
        AccountsCommand::List(store) => {
            for a in services(&store).await?.store.list_accounts().await? {
                println!(
                    "{}",
                    serde_json::json!({"account": a.id, "email": a.email, "name": a.name, "public_email": a.public_email, "created": a.created})
                );
            }
        }
    }
    Ok(())
}

fn mode(m: ModeArg) -> Mode {
    match m {
        ModeArg::Test => Mode::Test,
        ModeArg::Live => Mode::Live,
    }
}

/// An account named by its id or its login e-mail.
async fn resolve_account(services: &Services, account: &str) -> anyhow::Result<String> {
    if account.starts_with("acct_") {
        require_account(services, account).await?;
        return Ok(account.to_string());
    }
    match services.store.find_account_by_email(account.trim()).await? {
        Some(a) => Ok(a.id),
        None => bail!("no account with the id or e-mail {account} (see `tender accounts list`)"),
    }
}

async fn require_account(services: &Services, account: &str) -> anyhow::Result<()> {
    if services.store.find_account(account).await?.is_none() {
        bail!("no account {account} (see `tender accounts list`)");
    }
    Ok(())
}

pub async fn keys(command: KeysCommand) -> anyhow::Result<()> {
    match command {
        KeysCommand::Create {
            account,
            mode: m,
            kind,
            store,
        } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            let kind = match kind {
                KindArg::Secret => KeyKind::Secret,
                KindArg::Publishable => KeyKind::Publishable,
            };
            let (key, record) = services
                .create_api_key(&account, mode(m), kind)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::json!({"id": record.id, "key": key}));
        }
        KeysCommand::List { account, store } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            for k in services.store.list_api_keys(&account).await? {
                println!(
                    "{}",
                    serde_json::json!({
                        "id": k.id, "mode": k.mode.as_str(), "kind": k.kind.as_str(),
                        "last4": k.last4, "publishable": k.public_value, "created": k.created,
                        "expires_at": k.expires_at, "revoked": k.revoked,
                    })
                );
            }
        }
        KeysCommand::Roll {
            account,
            key,
            grace,
            store,
        } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            let (new_key, record) = services
                .roll_api_key(&account, &key, grace)
                .await
                .map_err(anyhow::Error::msg)?;
            println!(
                "{}",
                serde_json::json!({"id": record.id, "key": new_key, "replaces": key, "grace_seconds": grace})
            );
        }
        KeysCommand::Revoke {
            account,
            key,
            store,
        } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            services
                .revoke_api_key(&account, &key)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::json!({"id": key, "revoked": true}));
        }
    }
    Ok(())
}

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

/// The context a connector command acts in: a secret key of that account and mode.
async fn connector_ctx(
    services: &Services,
    scope: &ConnectorScope,
) -> anyhow::Result<tender_core::services::RequestContext> {
    let account = resolve_account(services, &scope.account).await?;
    Ok(tender_core::services::RequestContext {
        principal: tender_core::auth::Principal {
            scope: tender_core::auth::Scope {
                account,
                mode: mode(scope.mode),
            },
            key_kind: KeyKind::Secret,
        },
        request_id: tender_core::ids::generate(tender_core::ids::IdKind::Request),
        idempotency: None,
    })
}

/// The use case's fields from the flags; secrets from the environment or a file.
fn connector_fields(
    settings: ConnectorSettingsArgs,
) -> anyhow::Result<tender_core::connectors::service::ConnectorFields> {
    let api_key = match (&settings.api_key_env, &settings.api_key_file) {
        (_, Some(path)) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the API key file {}", path.display()))?
                .trim()
                .to_string(),
        ),
        (Some(key), None) => Some(key.trim().to_string()),
        (None, None) => None,
    };
    Ok(tender_core::connectors::service::ConnectorFields {
        name: settings.name.map(Some),
        api_key: api_key.map(tender_core::secret::Secret::new),
        api_base: settings.api_base,
        webhook_secret: settings
            .webhook_secret_env
            .map(|s| Some(tender_core::secret::Secret::new(s))),
        priority: settings.priority,
        raw_card_data: settings.raw_card_data,
        ..Default::default()
    })
}

pub async fn connectors(command: ConnectorsCommand) -> anyhow::Result<()> {
    // A refused setting is the operator's mistake: say it in the API's words, exit non-zero.
    let refused = |e: tender_core::error::CoreError| anyhow::anyhow!("{e}");
    match command {
        ConnectorsCommand::List { scope, store } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let page = services
                .list_raw(
                    ctx.scope(),
                    tender_core::store::Collection::Connectors,
                    &tender_core::services::ListParams {
                        limit: 100,
                        ..Default::default()
                    },
                    Vec::new(),
                )
                .await
                .map_err(refused)?;
            for doc in page.data {
                println!("{doc}");
            }
        }
        ConnectorsCommand::Create {
            scope,
            kind,
            settings,
            store,
        } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let mut fields = connector_fields(settings)?;
            fields.kind = Some(kind);
            let created = services
                .create_connector(&ctx, fields, ChangedBy::Operator)
                .await
                .map_err(refused)?;
            println!("{}", serde_json::to_string(&created)?);
        }
        ConnectorsCommand::Update {
            scope,
            connector,
            settings,
            disabled,
            store,
        } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let mut fields = connector_fields(settings)?;
            fields.disabled = disabled;
            let updated = services
                .update_connector(&ctx, &connector, fields, ChangedBy::Operator)
                .await
                .map_err(refused)?;
            println!("{}", serde_json::to_string(&updated)?);
        }
        ConnectorsCommand::Delete {
            scope,
            connector,
            store,
        } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let deleted = services
                .delete_connector(&ctx, &connector)
                .await
                .map_err(refused)?;
            println!("{}", serde_json::to_string(&deleted)?);
        }
    }
    Ok(())
}

/// The accounts a ledger command covers: one, or all.
async fn accounts_to_check(
    services: &Services,
    account: Option<String>,
) -> anyhow::Result<Vec<String>> {
    Ok(match account {
        Some(a) => vec![resolve_account(services, &a).await?],
        None => services
            .store
            .list_accounts()
            .await?
            .into_iter()
            .map(|a| a.id)
            .collect(),
    })
}

/// `tender ledger backfill`.
pub async fn ledger_backfill(account: Option<String>, store: StoreArgs) -> anyhow::Result<()> {
    let services = services(&store).await?;
    for account in accounts_to_check(&services, account).await? {
        for m in [Mode::Test, Mode::Live] {
            let scope = Scope {
                account: account.clone(),
                mode: m,
            };
            let booked = services
                .backfill_ledger(&scope)
                .await
                .with_context(|| format!("booking the ledger of {account} ({})", m.as_str()))?;
            println!(
                "{account} {}: booked {booked} payments and refunds",
                m.as_str()
            );
        }
    }
    Ok(())
}

/// `tender ledger verify`: every account (or one) in both modes; an error (non-zero exit) when
/// anything differs.
pub async fn ledger_verify(account: Option<String>, store: StoreArgs) -> anyhow::Result<()> {
    let services = services(&store).await?;
    let accounts = accounts_to_check(&services, account).await?;
    let mut differences = 0;
    for account in &accounts {
        for m in [Mode::Test, Mode::Live] {
            let scope = Scope {
                account: account.clone(),
                mode: m,
            };
            // An account that cannot be read is reported like a difference, and the accounts
            // after it are still checked.
            let report = match services.verify_ledger(&scope).await {
                Ok(report) => report,
                Err(e) => tender_core::balance::service::LedgerReport {
                    differences: vec![format!(
                        "the ledger could not be read: {}",
                        tender_core::error::error_chain(&e)
                    )],
                    ..Default::default()
                },
            };
            println!(
                "{account} {}: {} balances, {} transactions, {} payments: {}",
                m.as_str(),
                report.balances_checked,
                report.transactions_checked,
                report.payments_checked,
                if report.differences.is_empty() {
                    "ok".to_string()
                } else {
                    format!("{} differences", report.differences.len())
                }
            );
            for d in &report.differences {
                println!("  {d}");
            }
            differences += report.differences.len();
        }
    }
    if differences > 0 {
        bail!("the ledger does not hold: {differences} differences (listed above)");
    }
    println!("the ledger holds: {} accounts, both modes", accounts.len());
    Ok(())
}

pub async fn reports(command: ReportsCommand) -> anyhow::Result<()> {
    match command {
        ReportsCommand::Balance {
            account,
            from,
            to,
            mode: m,
            output,
            store,
        } => {
            let day = |flag: &str, s: &str| {
                tender_core::balance::report::parse_day(s).ok_or_else(|| {
                    anyhow::anyhow!("--{flag} {s:?}: expected YYYY-MM-DD or Unix seconds")
                })
            };
            let (from, to) = (day("from", &from)?, day("to", &to)?);
            if to <= from {
                bail!("--to must be after --from");
            }
            let services = services(&store).await?;
            let scope = Scope {
                account: resolve_account(&services, &account).await?,
                mode: mode(m),
            };
            let csv = services.balance_report(&scope, from, to).await?;
            match output {
                Some(path) => std::fs::write(&path, &csv)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => {
                    use std::io::Write;
                    std::io::stdout().write_all(&csv)?;
                }
            }
        }
    }
    Ok(())
}
