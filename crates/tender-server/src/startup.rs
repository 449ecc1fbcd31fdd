//! Building and running the application: open the store, bootstrap the first account, bind the
//! API and receipt listeners (port 0 allowed), start background jobs, serve until told to stop.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::response::IntoResponse;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tender_core::accounts::AccountCreated;
use tender_core::clock::{Clock, SystemClock};
use tender_core::error::{CoreError, StoreError};
use tender_core::payments::acquirer::SimulatedAcquirer;
use tender_core::services::{ServiceConfig, Services};
use tender_core::store::Store;
use tender_store::DatabaseUrl;
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;

use crate::config::ServerConfig;
use crate::http;
use crate::rate_limit::RateLimiter;
use crate::state::AppState;

/// Opens the store a config names and derives the services (shared by `serve` and the CLI).
pub async fn open_services(
    config: &ServerConfig,
    clock: Arc<dyn Clock>,
    receipt_base: String,
) -> anyhow::Result<Services> {
    let url = DatabaseUrl::parse(config.database_url.as_deref(), &config.data_dir)
        .map_err(anyhow::Error::msg)?;
    let existing_sqlite = match &url {
        DatabaseUrl::Sqlite(path) => Some(path.exists()),
        DatabaseUrl::Postgres(_) => None,
    };
    let vault_key = crate::vault::load_or_create(
        config.vault_key.as_deref(),
        &config.data_dir,
        existing_sqlite,
    )?;
    let store: Arc<dyn Store> = tender_store::open(&url).await.map_err(anyhow::Error::msg)?;
    check_vault_key(store.as_ref(), &vault_key).await?;
    Ok(Services {
        store,
        wall: Arc::clone(&clock),
        clock,
        acquirer: Arc::new(SimulatedAcquirer),
        connectors: Arc::new(crate::connectors::ServerConnectors::new(
            config.allow_private_webhook_targets,
        )?),
        encoder: Arc::new(http::error::WireEncoder),
        resolver: Arc::new(crate::worker::SystemResolver),
        config: Arc::new(ServiceConfig {
            receipt_base,
            vault_key,
            webhook_retry_scale: config.webhook_retry_scale,
            bank_settlement_delay: config.bank_settlement_delay as i64,
            connector_sync_delay: config.connector_sync_delay.max(1) as i64,
            allow_private_webhook_targets: config.allow_private_webhook_targets,
            connector_settings_via_api: config.allow_connector_settings_via_api,
            balance_available_delay: config.balance_available_delay.map(|d| d as i64),
            dunning: config.dunning.clone(),
            task_lease_secs: config.task_lease_secs as i64,
        }),
        pricing_cache: Default::default(),
        velocity: Default::default(),
        numbering: Default::default(),
    })
}

/// Refuses a vault key other than the one the database was first written with: saved cards,
/// webhook secrets and idempotent responses sealed under the other key could not be opened, and
/// every request touching them would fail (CONTRACT §6). The first start records the key's check.
async fn check_vault_key(store: &dyn Store, vault_key: &[u8; 32]) -> anyhow::Result<()> {
    let ours = tender_core::vault::key_check(vault_key);
    let stored = store.claim_setting("vault_check", &ours).await?;
    if stored != ours {
        anyhow::bail!(
            "the vault key does not match the one this database was written with: saved cards and              webhook secrets could not be opened. Start with the original key (TENDER_VAULT_KEY,              or vault.key in the data directory; docs/operations.md, \"Losing the vault key\")"
        );
    }
    Ok(())
}

/// On first start with an empty store, creates the first account. Several nodes starting at
/// once on one database race here; the unique e-mail makes exactly one of them win.
async fn bootstrap_account(services: &Services) -> anyhow::Result<Option<AccountCreated>> {
    if services.store.count_accounts().await? > 0 {
        return Ok(None);
    }
    match services
        .accounts()
        .create_account("admin@tender.local", None, None)
        .await
    {
        Ok(created) => Ok(Some(created)),
        Err(CoreError::Store(StoreError::Duplicate(_))) => Ok(None),
        Err(e) => Err(anyhow::anyhow!("creating the first account: {e}")),
    }
}

/// A built, bound, not yet running application.
pub struct Application {
    api_listener: TcpListener,
    receipt_listener: TcpListener,
    state: AppState,
    /// Whether dashboard cookies get `Secure` (see [`ServerConfig::secure_cookies`]).
    secure_cookies: bool,
    /// Both listeners serve HTTPS with this, when configured.
    tls: Option<crate::tls::Tls>,
    /// The account created on first start with an empty store, to print once.
    pub bootstrap: Option<AccountCreated>,
    /// Open connections per listener at most.
    max_connections: usize,
    /// The SQLite database's one-server lock, held while the application lives.
    _database_lock: Option<tender_store::files::DatabaseLock>,
    /// How long a request body may take to arrive.
    body_timeout: std::time::Duration,
    /// Whether this node runs the background tasks ([`ServerConfig::run_tasks`]).
    run_tasks: bool,
    /// Whether this node sends webhooks ([`ServerConfig::run_webhook_worker`]).
    run_webhook_worker: bool,
    /// Half-sent connections per address, shared by both listeners.
    half_open: Arc<crate::connection::HalfOpen>,
    /// Set to true to stop the listeners, the workers and the event streams.
    stop: tokio::sync::watch::Sender<bool>,
}

impl Application {
    /// Binds both listeners and opens the store with the system clock.
    pub async fn build(config: ServerConfig) -> anyhow::Result<Self> {
        Self::build_with_clock(config, Arc::new(SystemClock)).await
    }

    /// Like [`Application::build`] with an injected clock (tests advance a manual one).
    pub async fn build_with_clock(
        config: ServerConfig,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        config.check_listen_rules()?;
        // One server per SQLite database: a second would release the first's requests in
        // flight at its start (`recover_after_restart`). The lock lives as long as the process.
        let database_lock =
            match DatabaseUrl::parse(config.database_url.as_deref(), &config.data_dir)
                .map_err(anyhow::Error::msg)?
            {
                DatabaseUrl::Sqlite(path) => Some(tender_store::files::lock_database(&path)?),
                DatabaseUrl::Postgres(_) => None,
            };
        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => Some(crate::tls::Tls::load(cert, key)?),
            _ => None,
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let api_listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("binding the API listener on {}", config.listen))?;
        let receipt_listener = TcpListener::bind(config.receipt_listen)
            .await
            .with_context(|| {
                format!("binding the receipt listener on {}", config.receipt_listen)
            })?;
        let receipt_base = match &config.receipt_base_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("{scheme}://{}", receipt_listener.local_addr()?),
        };
        let services = open_services(&config, clock, receipt_base).await?;
        let released = services.store.recover_after_restart().await?;
        if released > 0 {
            tracing::info!(
                released,
                "released the idempotency claims and task leases the last process left"
            );
        }
        let bootstrap = bootstrap_account(&services).await?;
        let (stop, stopping) = tokio::sync::watch::channel(false);
        let state = AppState::new(crate::state::Shared {
            services,
            rate_limiter: Arc::new(RateLimiter::new(config.rate_limit)),
            metrics: Arc::new(crate::metrics::Metrics::new()),
            stopping,
            streams: Arc::new(crate::streams::StreamSlots::new(
                config.max_connections.max(1),
            )),
            hosted_guard: Default::default(),
            webhook_refusals: Default::default(),
        });
        Ok(Self {
            api_listener,
            receipt_listener,
            state,
            secure_cookies: config.secure_cookies || tls.is_some() || config.behind_tls_proxy,
            tls,
            bootstrap,
            max_connections: config.max_connections.max(1),
            _database_lock: database_lock,
            body_timeout: config.body_timeout,
            run_tasks: config.run_tasks,
            run_webhook_worker: config.run_webhook_worker,
            half_open: crate::connection::HalfOpen::new(
                config.max_half_open_per_address,
                config.count_loopback_half_open,
            ),
            stop,
        })
    }

    pub fn api_addr(&self) -> SocketAddr {
        self.api_listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    pub fn receipt_addr(&self) -> SocketAddr {
        self.receipt_listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// `https` when serving TLS, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    pub fn services(&self) -> &Services {
        &self.state.services
    }

    /// A webhook worker over this application's store and metrics (the one [`Self::run_until`]
    /// runs, or, with `run_webhook_worker` off, one a test steps).
    pub fn webhook_worker(&self) -> anyhow::Result<crate::worker::WebhookWorker> {
        crate::worker::WebhookWorker::new(self.state.services.clone(), self.state.metrics.clone())
    }

    /// The API listener's router: `/v2`, the dashboard (HTML, its own session auth), health,
    /// and JSON for everything unknown.
    pub fn api_router(state: AppState, secure_cookies: bool) -> Router {
        let observed = state.clone();
        Router::new()
            .merge(http::router(state.clone()))
            .merge(crate::elements::router(state.clone()))
            .merge(crate::stripe::router(state.clone()))
            .merge(crate::dashboard::router(state.clone(), secure_cookies))
            .merge(http::connector_webhooks::router(state.clone()))
            .merge(crate::health::router(state))
            // A browser opening the bare address lands on the dashboard.
            .route(
                "/",
                axum::routing::get(|| async { axum::response::Redirect::to("/dashboard") }),
            )
            .fallback(http::unknown_path)
            .layer(CatchPanicLayer::custom(
                |panic: Box<dyn std::any::Any + Send>| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    tracing::error!(
                        request_id = %http::error::current_request_id(),
                        panic = %what,
                        "request handler panicked"
                    );
                    http::error::HttpFailure::Internal.into_response()
                },
            ))
            // Preflights are answered before any authentication.
            .layer(axum::middleware::from_fn(http::cors::cors))
            .layer(axum::middleware::from_fn_with_state(
                observed,
                http::pipeline::request_id,
            ))
    }

    /// Serves until `shutdown` completes.
    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let worker = self.webhook_worker()?;
        let stop_tx = self.stop;
        let stop_rx = self.state.stopping.clone();
        let deadline = axum::middleware::from_fn_with_state(
            self.body_timeout,
            crate::connection::body_deadline,
        );
        let api = Self::api_router(self.state.clone(), self.secure_cookies).layer(deadline.clone());
        let receipts = crate::receipts::router(self.state.clone()).layer(deadline);
        spawn_idempotency_purge(self.state.services.clone(), stop_rx.clone());
        let worker_task = match self.run_webhook_worker {
            true => Some(tokio::spawn(worker.run(stop_rx.clone()))),
            false => None,
        };
        if self.run_tasks {
            spawn_task_runner(self.state.services.clone(), stop_rx.clone());
        }

        if let Some(tls) = &self.tls {
            tls.reload_on_sighup();
        }
        let cap = self.max_connections;
        let api_server = serve(
            self.api_listener,
            api,
            self.tls.clone(),
            (cap, self.half_open.clone()),
            stop_rx.clone(),
        );
        let receipt_server = serve(
            self.receipt_listener,
            receipts,
            self.tls.clone(),
            (cap, self.half_open.clone()),
            stop_rx.clone(),
        );
        tokio::spawn(async move {
            // Sent when this task ends however it ends: a panic in `shutdown` must still stop
            // the listeners and the workers.
            let _stop = StopOnDrop(stop_tx);
            shutdown.await;
        });
        let (a, b) = tokio::join!(api_server, receipt_server);
        // The worker finishes the attempts it has started (each bounded by the 10 s timeout) and
        // records them, so nothing it claimed is left behind by a clean stop.
        if let Some(worker_task) = worker_task {
            let _ = worker_task.await;
        }
        a?;
        b?;
        tracing::info!("stopped");
        Ok(())
    }
}

/// Tells every listener and worker to stop when dropped.
struct StopOnDrop(tokio::sync::watch::Sender<bool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(true);
    }
}

/// How long a stopping server waits for requests in flight before closing their connections.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// How long a client may take to send a request's head (request line and headers) before its
/// connection is closed: slow-loris connections cannot pile up. An idle keep-alive connection
/// is closed after the same time.
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves `router` on `listener` (over TLS when given) until `stop` turns true, then finishes
/// the requests in flight for at most [`SHUTDOWN_GRACE`]. Plain HTTP is served by our own accept
/// loop because `axum::serve` sets no timer, so hyper's header read timeout would not apply.
///
/// Only HTTP/1.1 is spoken (TLS offers only `http/1.1` by ALPN; plain HTTP does not take
/// HTTP/2 with prior knowledge, whose idle connections no HTTP/1 timeout would close). At most
/// `max_connections` are open at once on plain HTTP: past that the loop stops accepting until
/// one closes, so a flood of idle connections cannot take every file descriptor.
async fn serve(
    listener: TcpListener,
    router: Router,
    tls: Option<crate::tls::Tls>,
    limits: (usize, Arc<crate::connection::HalfOpen>),
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    match tls {
        Some(tls) => serve_tls(listener, router, tls, stop).await,
        None => serve_plain(listener, router, limits, stop).await,
    }
}

/// [`serve`] over TLS (axum-server, whose handshake has its own 10 s limit).
async fn serve_tls(
    listener: TcpListener,
    router: Router,
    tls: crate::tls::Tls,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let handle = axum_server::Handle::new();
    let h = handle.clone();
    tokio::spawn(async move {
        let _ = stop.wait_for(|s| *s).await;
        h.graceful_shutdown(Some(SHUTDOWN_GRACE));
    });
    let mut server = axum_server::from_tcp_rustls(listener.into_std()?, tls.config)?;
    // The TLS handshake has its own 10 s limit (axum-server's default).
    server
        .http_builder()
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    server
        .handle(handle)
        .serve(router.into_make_service_with_connect_info::<SocketAddr>())
        .await?;
    Ok(())
}

/// [`serve`] over plain HTTP: our own accept loop, at most `max_connections` at once, and an
/// address with too many half-sent requests refused.
async fn serve_plain(
    listener: TcpListener,
    router: Router,
    (max_connections, half_open): (usize, Arc<crate::connection::HalfOpen>),
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(max_connections));
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = async { let _ = stop.wait_for(|s| *s).await; } => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = async { let _ = stop.wait_for(|s| *s).await; } => break,
        };
        // Half-sent until its first request head arrives (T3-L5): an address with too
        // many of those has this one closed at once.
        let Some(half_sent) = half_open.admit(peer.ip()) else {
            drop(stream);
            continue;
        };
        let half_sent = Arc::new(std::sync::Mutex::new(half_sent));
        // The peer address, as `axum::serve` would give it (login throttling uses it).
        let service = TowerToHyperService::new(tower::ServiceExt::map_request(
            router.clone(),
            move |mut req: axum::http::Request<_>| {
                if let Ok(mut h) = half_sent.lock() {
                    h.take();
                }
                req.extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                req
            },
        ));
        let conn = builder
            .serve_connection(TokioIo::new(stream), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _permit = permit;
            // Errors here are the client's (reset, header timeout): nothing to do.
            let _ = conn.await;
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(SHUTDOWN_GRACE) => {
            tracing::warn!("requests still in flight after the grace period; closing")
        }
    }
    Ok(())
}

/// Carries out due background tasks (expiry, settlement), polling while idle.
fn spawn_task_runner(services: Services, mut stop: tokio::sync::watch::Receiver<bool>) {
    tokio::spawn(async move {
        loop {
            let busy = match services.run_due_tasks(64).await {
                Ok(n) => n > 0,
                Err(e) => {
                    tracing::warn!(error = %tender_core::error::error_chain(&e), "background task runner failed");
                    false
                }
            };
            if busy {
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
                _ = stop.changed() => return,
            }
        }
    });
}

/// Deletes idempotency keys older than 24 hours, every few minutes, off the request path.
fn spawn_idempotency_purge(services: Services, mut stop: tokio::sync::watch::Receiver<bool>) {
    tokio::spawn(async move {
        loop {
            match services.purge_expired_idempotency().await {
                Ok(n) if n > 0 => tracing::info!(purged = n, "expired idempotency keys deleted"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %tender_core::error::error_chain(&e), "idempotency purge failed")
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(std::time::Duration::from_secs(300)) => {}
                _ = stop.changed() => return,
            }
        }
    });
}
