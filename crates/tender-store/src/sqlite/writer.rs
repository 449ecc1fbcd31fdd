//! The single SQLite writer: a thread that owns the write connection and commits in groups.
//!
//! Every write job waits on a channel. The thread takes the first, then drains whatever else is
//! pending (up to [`MAX_GROUP`]), runs each job inside its own SAVEPOINT of one transaction, and
//! COMMITs once (one fsync under `synchronous=FULL`). Only then does it answer each job, so an
//! answer always means durable. A job whose work fails is rolled back to its savepoint alone; a
//! failed COMMIT fails every job of the group.

use std::any::Any;
use std::sync::mpsc;
use std::thread;

use rusqlite::Connection;
use tender_core::error::StoreError;
use tokio::sync::oneshot;

use super::classify;

/// Most jobs one transaction carries.
const MAX_GROUP: usize = 256;

type Output = Box<dyn Any + Send>;
type Work = Box<dyn FnOnce(&Connection) -> Result<Output, StoreError> + Send>;

struct Job {
    work: Work,
    reply: oneshot::Sender<Result<Output, StoreError>>,
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
        let (reply, answer) = oneshot::channel();
        let work: Work = Box::new(move |conn| work(conn).map(|r| Box::new(r) as Output));
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
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        commit_group(&conn, group);
    }
}

fn commit_group(conn: &Connection, group: Vec<Job>) {
    if let Err(e) = exec_cached(conn, "BEGIN IMMEDIATE") {
        let err = classify("begin", e);
        for job in group {
            let _ = job.reply.send(Err(clone_err(&err)));
        }
        return;
    }
    let mut results = Vec::with_capacity(group.len());
    for job in group {
        let outcome = run_in_savepoint(conn, job.work);
        results.push((job.reply, outcome));
    }
    match exec_cached(conn, "COMMIT") {
        Ok(()) => {
            for (reply, outcome) in results {
                let _ = reply.send(outcome);
            }
        }
        Err(e) => {
            let err = classify("commit", e);
            tracing::error!(error = %err, "group commit failed; every job of the group fails");
            let _ = conn.execute_batch("ROLLBACK");
            for (reply, _) in results {
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

fn run_in_savepoint(conn: &Connection, work: Work) -> Result<Output, StoreError> {
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
