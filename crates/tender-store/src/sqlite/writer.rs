//! The single SQLite writer: a thread that owns the write connection and commits in groups.
//!
//! Every write job waits on a channel. The thread takes the first, then drains whatever else is
//! pending (up to [`MAX_GROUP`]), runs each job inside its own SAVEPOINT of one transaction, and
//! COMMITs once (one fsync under `synchronous=FULL`). Only then does it answer each job, so an
//! answer always means durable. A job whose work fails is rolled back to its savepoint alone; a
//! failed COMMIT fails every job of the group.
//!
//! One exception, [`Writer::write_early`]: a result that tells nobody outside this writer
//! anything — an idempotency key newly claimed, which only later jobs on this same connection
//! ever read — is answered as soon as its work has run, before the COMMIT. When a whole group
//! is such claims, the transaction is held open (at most [`HOLD_OPEN`]) for the next group,
//! normally the claiming requests' own batches, so a claim and its batch share one fsync. The
//! claim always commits no later than the batch that completes it.

use std::any::Any;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use rusqlite::Connection;
use tender_core::error::StoreError;
use tokio::sync::oneshot;

use super::classify;

/// Most jobs one transaction carries.
const MAX_GROUP: usize = 256;
/// How long a transaction holding only early-answered claims waits for more work before it
/// commits on its own.
const HOLD_OPEN: Duration = Duration::from_millis(5);

type Output = Box<dyn Any + Send>;
/// The job's work: its output, and whether that output may be answered before the COMMIT.
type Work = Box<dyn FnOnce(&Connection) -> Result<(Output, bool), StoreError> + Send>;

type Reply = oneshot::Sender<Result<Output, StoreError>>;

struct Job {
    work: Work,
    reply: Reply,
}

/// A handle to the writer thread; cloning shares the thread.
#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer thread on `conn`.
    pub fn spawn(conn: Connection) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("tender-sqlite-writer".into())
            .spawn(move || run(conn, rx))?;
        Ok(Self { jobs: tx })
    }

    /// Runs `work` in the next group and returns once that group has committed.
    pub async fn write<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.submit(move |conn| work(conn).map(|r| (r, false)))
            .await
    }

    /// Like [`Self::write`], but a result `early` accepts is returned once the work has run in
    /// the group's transaction, before the COMMIT. Only for results nothing outside this writer
    /// acts on; every other result, and every error, still waits for the commit.
    pub async fn write_early<R, F>(&self, work: F, early: fn(&R) -> bool) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.submit(move |conn| {
            work(conn).map(|r| {
                let now = early(&r);
                (r, now)
            })
        })
        .await
    }

    async fn submit<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<(R, bool), StoreError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let work: Work =
            Box::new(move |conn| work(conn).map(|(r, early)| (Box::new(r) as Output, early)));
        self.jobs
            .send(Job { work, reply })
            .map_err(|_| writer_gone())?;
        let output = answer.await.map_err(|_| writer_gone())??;
        output
            .downcast::<R>()
            .map(|b| *b)
            .map_err(|_| StoreError::Corrupt("writer returned an unexpected type".into()))
    }
}

fn writer_gone() -> StoreError {
    StoreError::Unavailable {
        message: "the SQLite writer thread stopped".into(),
        source: None,
    }
}

fn run(conn: Connection, rx: mpsc::Receiver<Job>) {
    // True while a transaction is open whose jobs were all answered early (claims). It stays
    // open for the next jobs, normally those requests' own batches, so a claim and its batch
    // share one fsync; if nothing comes within HOLD_OPEN it commits alone.
    let mut held = false;
    loop {
        let first = if held {
            match rx.recv_timeout(HOLD_OPEN) {
                Ok(job) => job,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    commit(&conn, Vec::new());
                    held = false;
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    commit(&conn, Vec::new());
                    return;
                }
            }
        } else {
            match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        held = run_group(&conn, group, held);
    }
}

/// Runs a group inside the open transaction (beginning one unless `open`), answers the jobs
/// allowed to be answered early, and commits the rest. Returns whether the transaction was left
/// open because every job was answered early.
fn run_group(conn: &Connection, group: Vec<Job>, open: bool) -> bool {
    if !open {
        if let Err(e) = exec_cached(conn, "BEGIN IMMEDIATE") {
            let err = classify("begin", e);
            for job in group {
                let _ = job.reply.send(Err(clone_err(&err)));
            }
            return false;
        }
    }
    let mut waiting = Vec::with_capacity(group.len());
    for job in group {
        match run_in_savepoint(conn, job.work) {
            Ok((output, true)) => {
                let _ = job.reply.send(Ok(output));
            }
            outcome => waiting.push((job.reply, outcome.map(|(output, _)| output))),
        }
    }
    if waiting.is_empty() {
        return true;
    }
    commit(conn, waiting);
    false
}

/// COMMITs the open transaction (one fsync), then answers the jobs waiting on it.
fn commit(conn: &Connection, waiting: Vec<(Reply, Result<Output, StoreError>)>) {
    match exec_cached(conn, "COMMIT") {
        Ok(()) => {
            for (reply, outcome) in waiting {
                let _ = reply.send(outcome);
            }
        }
        Err(e) => {
            let err = classify("commit", e);
            tracing::error!(error = %err, "group commit failed; every job of the group fails");
            let _ = conn.execute_batch("ROLLBACK");
            for (reply, _) in waiting {
                let _ = reply.send(Err(clone_err(&err)));
            }
        }
    }
}

/// Runs one statement without parameters through the statement cache (the savepoint
/// statements run twice per job: parsing them each time showed in the profile).
fn exec_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn run_in_savepoint(conn: &Connection, work: Work) -> Result<(Output, bool), StoreError> {
    exec_cached(conn, "SAVEPOINT job").map_err(|e| classify("savepoint", e))?;
    match work(conn) {
        Ok(output) => {
            exec_cached(conn, "RELEASE job").map_err(|e| classify("release", e))?;
            Ok(output)
        }
        Err(err) => {
            // Undo this job alone; the rest of the group still commits.
            let _ =
                exec_cached(conn, "ROLLBACK TO job").and_then(|_| exec_cached(conn, "RELEASE job"));
            Err(err)
        }
    }
}

fn clone_err(err: &StoreError) -> StoreError {
    StoreError::Unavailable {
        message: err.to_string(),
        source: None,
    }
}
