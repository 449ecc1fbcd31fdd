//! Child servers: started with piped stdout, ready once they print `listening on http://ADDR`,
//! killed (by their own pid) when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context};

/// A running child server.
pub struct Server {
    child: Child,
    /// `http://ADDR` from its `listening on` line.
    pub base: String,
    /// Every stdout line up to and including the `listening on` line.
    pub banner: Vec<String>,
}

impl Server {
    /// Starts `cmd` and waits (up to `timeout`) for its `listening on http://…` line. Later
    /// stdout is drained by a thread so the child never blocks on (or dies of) a full pipe.
    pub fn start(mut cmd: Command, log: &Path, timeout: Duration) -> anyhow::Result<Self> {
        let log_file =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        cmd.stdout(Stdio::piped()).stderr(Stdio::from(log_file));
        let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
        let Some(stdout) = child.stdout.take() else {
            bail!("no stdout pipe");
        };
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    // Nobody listens any more: keep draining so the child's writes succeed.
                    continue;
                }
            }
        });
        let mut banner = Vec::new();
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let addr = line.strip_prefix("listening on ").map(str::to_string);
                    banner.push(line);
                    if let Some(base) = addr {
                        return Ok(Self {
                            child,
                            base,
                            banner,
                        });
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    bail!(
                        "{cmd:?} did not print `listening on` (see {}); stdout: {banner:?}",
                        log.display()
                    );
                }
            }
        }
    }

    /// Starts `cmd`, which listens on `port` without saying so, and waits until the port
    /// accepts connections.
    pub fn start_on_port(
        mut cmd: Command,
        log: &Path,
        port: u16,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let log_file =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        cmd.stdout(Stdio::from(log_file.try_clone()?))
            .stderr(Stdio::from(log_file));
        let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
        let deadline = std::time::Instant::now() + timeout;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if std::time::Instant::now() > deadline || child.try_wait()?.is_some() {
                let _ = child.kill();
                let _ = child.wait();
                bail!("{cmd:?} did not listen on {addr} (see {})", log.display());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(Self {
            child,
            base: format!("http://{addr}"),
            banner: Vec::new(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Peak resident set size so far (VmHWM), in bytes.
    pub fn peak_rss(&self) -> Option<u64> {
        peak_rss(self.pid())
    }

    /// Stops the child (SIGKILL to its own pid) and reaps it.
    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU time `pid` has used so far (user + system), in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // Linux reports clock ticks of 1/100 s (USER_HZ) on every common configuration.
    Some((utime + stime) / 100.0)
}

/// VmHWM of `pid` from /proc, in bytes.
pub fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A TCP port free right now on 127.0.0.1 (for servers that cannot bind port 0 and report it).
pub fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}
