//! The failover scenario's PostgreSQL: two servers on 127.0.0.1 built from the installed binaries
//! (run as `postgres` when the harness runs as root), a primary with a synchronous standby; stop
//! the primary hard, promote the standby, rebuild the lost node as the new standby.

use anyhow::{bail, Context};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Two PostgreSQL servers on 127.0.0.1, one primary and one synchronous standby.
pub(crate) struct Cluster {
    pub(crate) bin: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) ports: [u16; 2],
    pub(crate) primary: usize,
    /// `runuser -u postgres --` when this process is root (initdb refuses root).
    pub(crate) as_postgres: bool,
}

impl Cluster {
    pub(crate) async fn build(bin: PathBuf, root: &Path) -> anyhow::Result<Self> {
        let (root, as_postgres) = owned_root(root, "pg")?;
        let cluster = Self {
            bin,
            root,
            ports: [free_port()?, free_port()?],
            primary: 0,
            as_postgres,
        };
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data(0),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        cluster.start(0)?;
        cluster.rebuild_standby().await?;
        Ok(cluster)
    }

    /// The URL Tender is given: both hosts; the store asks for the read-write one.
    pub(crate) fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres",
            self.ports[0], self.ports[1]
        )
    }

    pub(crate) fn data(&self, node: usize) -> String {
        self.root.join(format!("node{node}")).display().to_string()
    }

    pub(crate) fn standby(&self) -> usize {
        1 - self.primary
    }

    /// Runs a PostgreSQL program, as the `postgres` user if need be.
    pub(crate) fn run(&self, program: &str, args: &[&str]) -> anyhow::Result<()> {
        let path = self.bin.join(program);
        let out = command(self.as_postgres, &path)
            .args(args)
            .current_dir(&self.root)
            .output()
            .with_context(|| format!("running {}", path.display()))?;
        if !out.status.success() {
            bail!(
                "{program} {args:?} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    pub(crate) fn start(&self, node: usize) -> anyhow::Result<()> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c wal_level=replica -c max_wal_senders=4 \
             -c fsync=on -c synchronous_commit=on -c max_connections=200",
            self.ports[node],
            self.root.display()
        );
        let log = self
            .root
            .join(format!("node{node}.log"))
            .display()
            .to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(node),
                "-l",
                &log,
                "-w",
                "-o",
                &options,
                "start",
            ],
        )
    }

    /// Stops the primary as a crash would: its sessions end mid-transaction, no checkpoint.
    pub(crate) fn kill_primary(&self) -> anyhow::Result<()> {
        self.run(
            "pg_ctl",
            &["-D", &self.data(self.primary), "-m", "immediate", "stop"],
        )
    }

    /// Promotes the standby and lets it commit alone until it has a standby again.
    pub(crate) async fn promote(&mut self) -> anyhow::Result<()> {
        self.run(
            "pg_ctl",
            &["-D", &self.data(self.standby()), "-w", "promote"],
        )?;
        self.primary = self.standby();
        self.set_synchronous(self.primary, "").await
    }

    /// Makes the node that is not the primary a fresh copy of it, streaming, and synchronous.
    pub(crate) async fn rebuild_standby(&self) -> anyhow::Result<()> {
        let standby = self.standby();
        let dir = self.data(standby);
        let _ = std::fs::remove_dir_all(&dir);
        let port = self.ports[self.primary].to_string();
        self.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &dir,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
            ],
        )?;
        self.start(standby)?;
        self.set_synchronous(self.primary, "*").await?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let rows = self
                .query(
                    self.primary,
                    "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'",
                )
                .await?;
            if rows.iter().any(|s| s == "sync") {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("the standby did not become synchronous within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) async fn connect(&self, node: usize) -> anyhow::Result<tokio_postgres::Client> {
        let url = format!(
            "postgres://postgres@127.0.0.1:{}/postgres",
            self.ports[node]
        );
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
        tokio::spawn(conn);
        Ok(client)
    }

    /// Sets `synchronous_standby_names` on `node` (ALTER SYSTEM, one statement per call: it
    /// cannot run in a transaction block) and reloads its configuration.
    pub(crate) async fn set_synchronous(&self, node: usize, names: &str) -> anyhow::Result<()> {
        let client = self.connect(node).await?;
        client
            .batch_execute(&format!(
                "ALTER SYSTEM SET synchronous_standby_names = '{names}'"
            ))
            .await?;
        client.batch_execute("SELECT pg_reload_conf()").await?;
        Ok(())
    }

    /// The first column of each row, as text.
    pub(crate) async fn query(&self, node: usize, sql: &str) -> anyhow::Result<Vec<String>> {
        let messages = self.connect(node).await?.simple_query(sql).await?;
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .collect())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in 0..2 {
            let _ = self.run(
                "pg_ctl",
                &["-D", &self.data(node), "-m", "immediate", "stop"],
            );
        }
    }
}

/// `root/name`, created and (when this process is root) given to the `postgres` user, since
/// PostgreSQL's programs refuse to run as root; and whether they must run as `postgres`.
pub(crate) fn owned_root(root: &Path, name: &str) -> anyhow::Result<(PathBuf, bool)> {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir)?;
    let as_postgres = std::fs::metadata("/proc/self")?.uid() == 0;
    if as_postgres {
        let ok = Command::new("chown")
            .args(["-R", "postgres"])
            .arg(root)
            .status()?
            .success();
        if !ok {
            bail!("could not give {} to the postgres user", root.display());
        }
    }
    Ok((dir, as_postgres))
}

/// A command for a PostgreSQL program, run as `postgres` (`runuser`) when `as_postgres`.
pub(crate) fn command(as_postgres: bool, program: &Path) -> Command {
    if as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

pub(crate) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The newest installed PostgreSQL's programs.
pub(crate) fn default_bin() -> anyhow::Result<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .context("no PostgreSQL under /usr/lib/postgresql (give --pg-bin)")?
        .filter_map(|e| {
            let e = e.ok()?;
            let v = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, p)| p)
        .context("no PostgreSQL version under /usr/lib/postgresql")
}
