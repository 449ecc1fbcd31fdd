//! `--peer localstripe`: the open-source fake Stripe (Python, aiohttp, in-memory), installed from
//! PyPI when missing, driven with its equivalent of a card payment: `POST /v1/charges` with a
//! card `PaymentMethod` created once beforehand (localstripe's charges take `pm_…`, `src_…` or
//! `card_…` sources, not raw card numbers) — the most favourable form for the peer.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};

use crate::load::{Call, HttpClient, MakeRequest, Target};
use crate::process::{free_port, Server};

/// The installed `localstripe` command, installing it with pip first if needed.
fn ensure_installed() -> anyhow::Result<String> {
    let found = |cmd: &str| {
        Command::new(cmd)
            .arg("--help")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if found("localstripe") {
        return Ok("localstripe".into());
    }
    eprintln!("installing localstripe 1.15.10 with pip…");
    let pip = if found("pip") { "pip" } else { "pip3" };
    let status = Command::new(pip)
        .args(["install", "--quiet", "localstripe==1.15.10"])
        .status()
        .with_context(|| format!("running {pip} install localstripe"))?;
    if !status.success() || !found("localstripe") {
        bail!("`{pip} install localstripe` did not give a working `localstripe` command");
    }
    Ok("localstripe".into())
}

/// A running localstripe, and the card payment method its charges use.
pub struct LocalStripe {
    pub server: Server,
    pub target: Target,
    payment_method: String,
}

impl LocalStripe {
    pub async fn start(client: HttpClient, log_dir: &Path) -> anyhow::Result<Self> {
        ensure_installed()?;
        let port = free_port()?;
        // On 127.0.0.1 with its state in memory (`scripts/localstripe-server.py`): the stock
        // command pickles its whole store to a file after every write, which makes each call
        // slower the more objects a run has made.
        let mut cmd = Command::new("python3");
        cmd.arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scripts/localstripe-server.py"
        ))
        .arg(port.to_string());
        let server = Server::start_on_port(
            cmd,
            &log_dir.join("localstripe.log"),
            port,
            Duration::from_secs(30),
        )?;
        let target = Target::new(client, &server.base, Some("Bearer sk_test_bench"))?;
        let pm = target
            .json(Call::post_form(
                "/v1/payment_methods",
                "type=card&card[number]=4242424242424242&card[exp_month]=12&card[exp_year]=2034&card[cvc]=123"
                    .into(),
            ))
            .await?;
        let payment_method = pm
            .get("id")
            .and_then(|v| v.as_str())
            .with_context(|| format!("localstripe payment method without id: {pm}"))?
            .to_string();
        Ok(Self {
            server,
            target,
            payment_method,
        })
    }

    /// `POST /v1/charges` for 20.00 USD on the card, with an idempotency key.
    pub fn create_charge(&self, run: &str, concurrency: usize) -> MakeRequest {
        let pm = self.payment_method.clone();
        let run = run.to_string();
        Arc::new(move |w, i| {
            Call::post_form(
                "/v1/charges",
                format!("amount=2000&currency=usd&description=Benchmark%20order&source={pm}"),
            )
            .idempotent(format!("ls-{run}-c{concurrency}-w{w}-{i}"))
        })
    }
}
