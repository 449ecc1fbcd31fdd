//! Starting the release `tender` binary on a fresh store, and the five API operations the
//! harness drives.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use rand::Rng;

use crate::load::{Call, HttpClient, MakeRequest, Target};
use crate::process::Server;

/// Where the store lives.
#[derive(Clone, Debug)]
pub enum Backend {
    /// A fresh data dir (the SQLite file inside it).
    Sqlite,
    /// A fresh schema of this database (`postgres://…`, no query string).
    Postgres { admin_url: String },
}

/// A running Tender with its fresh store.
pub struct Tender {
    pub server: Server,
    /// Tender's own API (`/v2`).
    pub target: Target,
    /// Stripe's (`/v1`), for [`V1_CREATE`].
    pub v1: Target,
    pub data_dir: tempfile::TempDir,
    /// The PostgreSQL schema (dropped by [`Tender::cleanup`]) and the URL that selects it.
    pub pg: Option<(String, String)>,
    admin_url: Option<String>,
}

impl Tender {
    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.path().join("tender.sqlite3")
    }

    /// Starts `tender serve` with `--rate-limit 0` and reads the bootstrap test secret key.
    pub async fn start(bin: &Path, backend: &Backend, client: HttpClient) -> anyhow::Result<Self> {
        let data_dir = tempfile::Builder::new().prefix("tender-bench-").tempdir()?;
        let mut cmd = Command::new(bin);
        cmd.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--receipt-listen",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(data_dir.path())
        .args(["--rate-limit", "0"])
        // The connector run points a connector at its localstripe through the API.
        .arg("--allow-connector-settings-via-api")
        .env("TENDER_LOG", "warn");
        let mut pg = None;
        let mut admin = None;
        if let Backend::Postgres { admin_url } = backend {
            let schema = format!("bench_{}", rand::thread_rng().gen_range(0..u32::MAX));
            crate::pg::execute(admin_url, &format!("CREATE SCHEMA {schema}")).await?;
            let url = crate::pg::schema_url(admin_url, &schema);
            let vault: String = (0..32)
                .map(|_| format!("{:02x}", rand::thread_rng().gen::<u8>()))
                .collect();
            cmd.arg("--database-url")
                .arg(&url)
                .env("TENDER_VAULT_KEY", vault);
            pg = Some((schema, url));
            admin = Some(admin_url.clone());
        }
        let log = data_dir.path().join("tender.log");
        let server = Server::start(cmd, &log, Duration::from_secs(60))?;
        let key = server
            .banner
            .iter()
            .find_map(|l| l.trim().strip_prefix("test secret key:"))
            .map(|k| k.trim().to_string())
            .with_context(|| format!("no test secret key in {:?}", server.banner))?;
        let target = Target::new(
            client.clone(),
            &format!("{}/v2", server.base),
            Some(&format!("Bearer {key}")),
        )?;
        let v1 = Target::new(
            client,
            &format!("{}/v1", server.base),
            Some(&format!("Bearer {key}")),
        )?;
        Ok(Self {
            server,
            target,
            v1,
            data_dir,
            pg,
            admin_url: admin,
        })
    }

    /// Stops the server and drops its PostgreSQL schema.
    pub async fn cleanup(self) {
        self.server.stop();
        if let (Some((schema, _)), Some(admin)) = (&self.pg, &self.admin_url) {
            if let Err(e) =
                crate::pg::execute(admin, &format!("DROP SCHEMA {schema} CASCADE")).await
            {
                eprintln!("could not drop schema {schema}: {e:#}");
            }
        }
    }
}

pub const CARD_PAYMENT: &str = r#"{"amount":2000,"currency":"usd","description":"Benchmark order","payment_method":{"type":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2034,"cvc":"123"}}}"#;

/// A payment refundable one unit at a time for a long while.
const BIG_PAYMENT: &str = r#"{"amount":99999999,"currency":"usd","payment_method":{"type":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2034,"cvc":"123"}}}"#;

/// Creates `n` payments (8 at a time) and returns their ids.
pub async fn create_payments(target: &Target, n: usize, big: bool) -> anyhow::Result<Vec<String>> {
    let body = if big { BIG_PAYMENT } else { CARD_PAYMENT };
    let mut ids = Vec::with_capacity(n);
    let mut pending = futures::stream::FuturesOrdered::new();
    use futures::StreamExt;
    for _ in 0..n {
        let t = target.clone();
        pending.push_back(async move { t.json(Call::post_json("/payments", body.into())).await });
        if pending.len() >= 8 {
            if let Some(r) = pending.next().await {
                ids.push(payment_id(r?)?);
            }
        }
    }
    while let Some(r) = pending.next().await {
        ids.push(payment_id(r?)?);
    }
    Ok(ids)
}

fn payment_id(v: serde_json::Value) -> anyhow::Result<String> {
    match v.get("id").and_then(|i| i.as_str()) {
        Some(id) => Ok(id.to_string()),
        None => bail!("payment without id: {v}"),
    }
}

/// The same payment through Stripe's `/v1`: a PaymentIntent created and confirmed in one call,
/// form-encoded, with the card as `payment_method_data` (what stripe-python sends).
pub const V1_CARD_PAYMENT: &str = "amount=2000&currency=usd&description=Benchmark+order&confirm=true&payment_method_data%5Btype%5D=card&payment_method_data%5Bcard%5D%5Bnumber%5D=4242424242424242&payment_method_data%5Bcard%5D%5Bexp_month%5D=12&payment_method_data%5Bcard%5D%5Bexp_year%5D=2034&payment_method_data%5Bcard%5D%5Bcvc%5D=123";

/// The operation that goes to `/v1` rather than `/v2` (see [`Tender::v1`]).
pub const V1_CREATE: &str = "create payment (/v1)";

/// The operations of the table, in the order they run.
pub const OPERATIONS: [&str; 6] = [
    "create payment",
    V1_CREATE,
    "retrieve payment",
    "list payments",
    "create customer",
    "refund",
];

/// What the workers of `op` send. `run` keeps idempotency keys unique across runs.
pub fn operation(
    op: &str,
    run: &str,
    concurrency: usize,
    retrieve_ids: &Arc<Vec<String>>,
    refund_ids: &Arc<Vec<String>>,
) -> MakeRequest {
    let run = run.to_string();
    match op {
        "create payment" => Arc::new(move |w, i| {
            Call::post_json("/payments", CARD_PAYMENT.into())
                .idempotent(format!("bench-{run}-c{concurrency}-w{w}-{i}"))
        }),
        V1_CREATE => Arc::new(move |w, i| {
            Call::post_form("/payment_intents", V1_CARD_PAYMENT.into())
                .idempotent(format!("bench-v1-{run}-c{concurrency}-w{w}-{i}"))
        }),
        "retrieve payment" => {
            let ids = Arc::clone(retrieve_ids);
            Arc::new(move |w, i| {
                let k = (w as u64 * 7919 + i * 104_729) as usize % ids.len();
                Call::get(format!("/payments/{}", ids[k]))
            })
        }
        "list payments" => Arc::new(|_, _| Call::get("/payments?limit=10")),
        "create customer" => Arc::new(move |w, i| {
            Call::post_json(
                "/customers",
                format!(
                    r#"{{"email":"bench-{run}-{concurrency}-{w}-{i}@example.com","name":"Bench Customer"}}"#
                ),
            )
        }),
        "refund" => {
            let ids = Arc::clone(refund_ids);
            // One payment per worker, so refunds never race for the same payment's version.
            Arc::new(move |w, _| {
                Call::post_json(
                    "/refunds",
                    format!(r#"{{"payment":"{}","amount":1}}"#, ids[w % ids.len()]),
                )
            })
        }
        other => unreachable!("unknown operation {other}"),
    }
}
