//! The failover scenario's PostgreSQL under a real failover manager (`--manager
//! pg-auto-failover`): pg_auto_failover's monitor and two data nodes on 127.0.0.1, each run by
//! its own `pg_autoctl` (as `postgres` when the harness runs as root), in a temporary directory.
//!
//! The harness only kills and restarts machines: it stops the primary's keeper and server
//! together (SIGKILL to their process group, as a machine that loses power), and the monitor,
//! not the harness, notices and promotes the secondary. Afterwards the harness starts the lost
//! node's keeper again, and it rejoins as the new primary's secondary on its own (`pg_rewind`).
//!
//! pg_auto_failover's defaults take about 50 s to restore writes (20 s before the monitor
//! calls the primary unhealthy, then 30 s `primary_demote_timeout` while the promoted node
//! stays read-only in case the old primary still takes writes somewhere). The harness runs the
//! shorter timings of [`MONITOR_SETTINGS`] and [`KEEPER_SETTINGS`], which keep the monitor's
//! rule that the old primary demotes itself (after `network_partition_timeout`) before the new
//! one accepts writes. docs/operations.md gives the same settings.

use crate::cluster::{command, free_port};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The monitor's health checks: a dead node is called unhealthy after about 3 s, and the
/// promoted node waits 5 s for the old primary to have fenced itself.
pub(crate) const MONITOR_SETTINGS: &[(&str, &str)] = &[
    ("pgautofailover.health_check_period", "1000"),
    ("pgautofailover.health_check_timeout", "1000"),
    ("pgautofailover.health_check_max_retries", "1"),
    ("pgautofailover.health_check_retry_delay", "500"),
    ("pgautofailover.node_considered_unhealthy_timeout", "3000"),
    ("pgautofailover.primary_demote_timeout", "5000"),
];

/// Each keeper demotes its primary after 4 s without the monitor and the secondary: shorter
/// than the monitor's `primary_demote_timeout`, so two primaries never take writes at once.
pub(crate) const KEEPER_SETTINGS: &[(&str, &str)] = &[("timeout.network_partition_timeout", "4")];

/// How long the monitor may take to promote, and a lost node to rejoin.
const CONVERGE: Duration = Duration::from_secs(90);

/// A monitor and two data nodes, each under its own running `pg_autoctl`.
pub(crate) struct AutoFailover {
    pg_bin: PathBuf,
    autoctl: PathBuf,
    root: PathBuf,
    as_postgres: bool,
    monitor_port: u16,
    pub(crate) ports: [u16; 2],
    /// The running keepers: the monitor's, then the data nodes'.
    keepers: [Option<Child>; 3],
}

impl AutoFailover {
    /// Builds the cluster, with [`MONITOR_SETTINGS`] and [`KEEPER_SETTINGS`] unless
    /// `defaults` (pg_auto_failover's own timings).
    pub(crate) async fn build(
        pg_bin: PathBuf,
        autoctl: PathBuf,
        root: &Path,
        defaults: bool,
    ) -> anyhow::Result<Self> {
        let (root, as_postgres) = crate::cluster::owned_root(root, "paf")?;
        let mut cluster = Self {
            pg_bin,
            autoctl,
            root,
            as_postgres,
            monitor_port: free_port()?,
            ports: [free_port()?, free_port()?],
            keepers: [None, None, None],
        };
        let port = cluster.monitor_port.to_string();
        cluster.create("monitor", 0, &port, &[])?;
        cluster.keepers[0] = Some(cluster.spawn_keeper(0)?);
        if !defaults {
            cluster.tune_monitor().await?;
        }
        for node in 0..2 {
            cluster.create_node(node, defaults)?;
            cluster.keepers[node + 1] = Some(cluster.spawn_keeper(node + 1)?);
            // The second node registers once the first is the primary.
            cluster
                .converge(|s| s.iter().filter(|s| s.is_some()).count() == node + 1)
                .await?;
        }
        cluster.converge(healthy).await?;
        Ok(cluster)
    }

    /// The URL Tender is given: both data nodes; the store asks for the read-write one.
    pub(crate) fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres",
            self.ports[0], self.ports[1]
        )
    }

    /// Kills the primary's keeper and server together; returns which data node it was.
    pub(crate) async fn kill_primary(&mut self) -> anyhow::Result<usize> {
        let states = self.states().await?;
        let Some(node) = states.iter().position(|s| s.as_deref() == Some("primary")) else {
            bail!("no primary to stop: {states:?}");
        };
        let keeper = self.keepers[node + 1]
            .take()
            .context("the primary's keeper")?;
        let group = keeper.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{group}")])
            .status()?;
        if !killed.success() {
            bail!("could not kill process group {group}");
        }
        reap(keeper);
        Ok(node)
    }

    /// Waits for the monitor to promote `node` (it reports `wait_primary`: read-write, alone).
    pub(crate) async fn promoted(&self, node: usize) -> anyhow::Result<()> {
        self.converge(|s| matches!(s[node].as_deref(), Some("wait_primary" | "primary")))
            .await
    }

    /// Starts the lost node's keeper again and waits until it is the synchronous secondary.
    pub(crate) async fn rejoin(&mut self, node: usize) -> anyhow::Result<()> {
        self.keepers[node + 1] = Some(self.spawn_keeper(node + 1)?);
        self.converge(healthy).await
    }

    /// `pg_autoctl` with its configuration and state under the cluster's directory.
    fn autoctl(&self, args: &[&str]) -> anyhow::Result<()> {
        let out = self
            .autoctl_command(args)
            .output()
            .with_context(|| format!("running {}", self.autoctl.display()))?;
        if !out.status.success() {
            bail!(
                "pg_autoctl {args:?} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    fn autoctl_command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = command(self.as_postgres, &self.autoctl);
        cmd.args(args)
            .current_dir(&self.root)
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_DATA_HOME", self.root.join("share"))
            .env("XDG_RUNTIME_DIR", self.root.join("run"));
        cmd
    }

    /// Data directory `n`: 0 is the monitor's, 1 and 2 the data nodes'.
    fn data(&self, n: usize) -> String {
        self.root.join(format!("pgdata{n}")).display().to_string()
    }

    /// `pg_autoctl create KIND` for data directory `n` on `port`, on 127.0.0.1 with trust and no
    /// TLS (a loopback cluster of the harness's own), with `extra` arguments.
    fn create(&self, kind: &str, n: usize, port: &str, extra: &[&str]) -> anyhow::Result<()> {
        let (pgctl, dir) = (
            self.pg_bin.join("pg_ctl").display().to_string(),
            self.data(n),
        );
        let mut args = vec![
            "create",
            kind,
            "--pgctl",
            &pgctl,
            "--pgdata",
            &dir,
            "--pgport",
            port,
            "--hostname",
            "127.0.0.1",
            "--auth",
            "trust",
            "--no-ssl",
        ];
        args.extend_from_slice(extra);
        self.autoctl(&args)
    }

    fn create_node(&self, node: usize, defaults: bool) -> anyhow::Result<()> {
        let (dir, port, name) = (
            self.data(node + 1),
            self.ports[node].to_string(),
            format!("node{node}"),
        );
        let monitor = format!(
            "postgres://autoctl_node@127.0.0.1:{}/pg_auto_failover?sslmode=disable",
            self.monitor_port
        );
        self.create(
            "postgres",
            node + 1,
            &port,
            &["--name", &name, "--monitor", &monitor],
        )?;
        for (key, value) in KEEPER_SETTINGS.iter().filter(|_| !defaults) {
            self.autoctl(&["config", "set", "--pgdata", &dir, key, value])?;
        }
        Ok(())
    }

    /// `pg_autoctl run` for data directory `n`, in a process group of its own (with the
    /// PostgreSQL server it starts), logging to a file beside it.
    fn spawn_keeper(&self, n: usize) -> anyhow::Result<Child> {
        use std::os::unix::process::CommandExt;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.root.join(format!("pgdata{n}.log")))?;
        let dir = self.data(n);
        Ok(self
            .autoctl_command(&["run", "--pgdata", &dir])
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?)
    }

    async fn tune_monitor(&self) -> anyhow::Result<()> {
        let monitor = self.monitor().await?;
        for (name, value) in MONITOR_SETTINGS {
            monitor
                .batch_execute(&format!("ALTER SYSTEM SET {name} = '{value}'"))
                .await?;
        }
        monitor.batch_execute("SELECT pg_reload_conf()").await?;
        Ok(())
    }

    async fn monitor(&self) -> anyhow::Result<tokio_postgres::Client> {
        let url = format!(
            "postgres://postgres@127.0.0.1:{}/pg_auto_failover",
            self.monitor_port
        );
        let deadline = Instant::now() + CONVERGE;
        loop {
            match tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
                Ok((client, conn)) => {
                    tokio::spawn(conn);
                    return Ok(client);
                }
                Err(e) if Instant::now() > deadline => return Err(e.into()),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    /// The state each data node last reported to the monitor (`None`: not registered).
    async fn states(&self) -> anyhow::Result<[Option<String>; 2]> {
        let rows = self
            .monitor()
            .await?
            .query(
                "SELECT nodeport, reportedstate::text FROM pgautofailover.node",
                &[],
            )
            .await?;
        let mut states = [None, None];
        for row in rows {
            let (port, state): (i32, String) = (row.get(0), row.get(1));
            if let Some(n) = self.ports.iter().position(|p| i32::from(*p) == port) {
                states[n] = Some(state);
            }
        }
        Ok(states)
    }

    /// Polls the monitor until `done` holds for the nodes' reported states.
    async fn converge(&self, done: impl Fn(&[Option<String>; 2]) -> bool) -> anyhow::Result<()> {
        let deadline = Instant::now() + CONVERGE;
        loop {
            let states = self.states().await?;
            if done(&states) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("pg_auto_failover did not converge within {CONVERGE:?}: {states:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// One primary with a synchronous secondary.
fn healthy(states: &[Option<String>; 2]) -> bool {
    let mut s: Vec<_> = states.iter().map(|s| s.as_deref()).collect();
    s.sort();
    s == [Some("primary"), Some("secondary")]
}

fn reap(mut child: Child) {
    let _ = child.wait();
}

impl Drop for AutoFailover {
    fn drop(&mut self) {
        for keeper in self.keepers.iter_mut().filter_map(Option::take) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", keeper.id())])
                .status();
            reap(keeper);
        }
    }
}
