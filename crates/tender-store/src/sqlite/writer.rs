//! The single SQLite writer: a thread that owns the write connection and commits in groups.
//!
//! Every write job waits on a channel. The thread takes the first, then drains whatever else is
//! pending (up to [`MAX_GROUP`]), runs the jobs in one transaction, and COMMITs once (one fsync
//! under `synchronous=FULL`). Only then does it answer each job, so an answer always means
//! durable. A job whose work fails is undone alone, the rest of its group still commits; a
//! failed COMMIT fails every job of the group.
//!
//! How a failed job is undone alone: the group first runs with its jobs straight in the
//! transaction. If one fails, that pass is rolled back and the group runs again from the same
//! state, each job inside its own SAVEPOINT, and the failing job is rolled back to it. (A
//! savepoint copies every page its job first touches into the sub-journal: with one per job on
//! every group, that copying was about 9% of a create payment's CPU.) So a job's work may run
//! twice, and must be repeatable: it is `FnMut`, takes what it writes by reference, and nothing
//! it does outside the transaction may matter twice. Nothing is answered from a pass that is
//! rolled back.
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
type Work = Box<dyn FnMut(&Connection) -> Result<(Output, bool), StoreError> + Send>;

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

    /// Runs `work` in the next group and returns once that group has committed. `work` may run
    /// twice (see the module's doc): its effects outside the transaction must be repeatable.
    pub async fn write<R, F>(&self, mut work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnMut(&Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.submit(move |conn| work(conn).map(|r| (r, false)))
            .await
    }

    /// Like [`Self::write`], but a result `early` accepts is returned once the work has run in
    /// the group's transaction, before the COMMIT. Only for results nothing outside this writer
    /// acts on; every other result, and every error, still waits for the commit.
    pub async fn write_early<R, F>(
        &self,
        mut work: F,
        early: fn(&R) -> bool,
    ) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnMut(&Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.submit(move |conn| {
            work(conn).map(|r| {
                let now = early(&r);
                (r, now)
            })
        })
        .await
    }

    async fn submit<R, F>(&self, mut work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnMut(&Connection) -> Result<(R, bool), StoreError> + Send + 'static,
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
fn run_group(conn: &Connection, mut group: Vec<Job>, open: bool) -> bool {
    if !open {
        if let Err(e) = exec_cached(conn, "BEGIN IMMEDIATE") {
            let err = classify("begin", e);
            for job in group {
                let _ = job.reply.send(Err(clone_err(&err)));
            }
            return false;
        }
    }
    // The fast pass, on a transaction of this group's own: a held one also carries claims that
    // were answered already, which a rollback must not take back.
    let outcomes = match open {
        false => fast_pass(conn, &mut group),
        true => None,
    };
    let outcomes = match outcomes {
        Some(outcomes) => outcomes,
        None => group
            .iter_mut()
            .map(|job| run_in_savepoint(conn, &mut job.work))
            .collect(),
    };
    let mut waiting = Vec::with_capacity(group.len());
    for (job, outcome) in group.into_iter().zip(outcomes) {
        match outcome {
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

type Outcome = Result<(Output, bool), StoreError>;

/// Every job of the group straight in the transaction just begun. `None` when one failed: the
/// pass is rolled back and a new transaction begun, for the jobs to run again one savepoint each.
fn fast_pass(conn: &Connection, group: &mut [Job]) -> Option<Vec<Outcome>> {
    let mut outcomes = Vec::with_capacity(group.len());
    for job in group.iter_mut() {
        match (job.work)(conn) {
            Ok(output) => outcomes.push(Ok(output)),
            Err(_) => {
                drop(outcomes);
                // A statement that failed may have ended the transaction already (SQLite does
                // on some errors): ROLLBACK's own error is then expected.
                let _ = exec_cached(conn, "ROLLBACK");
                return match exec_cached(conn, "BEGIN IMMEDIATE") {
                    Ok(()) => None,
                    Err(e) => {
                        let err = classify("begin", e);
                        // No transaction is open: every job fails, and the commit that follows
                        // fails too, which fails nothing more.
                        Some(group.iter().map(|_| Err(clone_err(&err))).collect())
                    }
                };
            }
        }
    }
    Some(outcomes)
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
            tracing::error!(error = %tender_core::error::error_chain(&err), "group commit failed; every job of the group fails");
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

fn run_in_savepoint(conn: &Connection, work: &mut Work) -> Outcome {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (v TEXT PRIMARY KEY)")
            .unwrap();
        conn
    }

    /// A job inserting `v` (twice when `fail`, which then fails on the second insert, after
    /// its first row is written), counting its runs.
    fn job(
        v: &'static str,
        fail: bool,
        runs: &Arc<AtomicUsize>,
    ) -> (Job, oneshot::Receiver<Result<Output, StoreError>>) {
        let runs = runs.clone();
        let work: Work = Box::new(move |conn: &Connection| {
            runs.fetch_add(1, Ordering::SeqCst);
            let insert = |conn: &Connection| {
                conn.execute("INSERT INTO t (v) VALUES (?1)", [v])
                    .map_err(|e| classify("insert", e))
            };
            insert(conn)?;
            if fail {
                insert(conn)?;
            }
            Ok((Box::new(v) as Output, false))
        });
        let (reply, answer) = oneshot::channel();
        (Job { work, reply }, answer)
    }

    fn rows(conn: &Connection) -> Vec<String> {
        let mut s = conn.prepare("SELECT v FROM t ORDER BY v").unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn answered(mut answer: oneshot::Receiver<Result<Output, StoreError>>) -> bool {
        answer.try_recv().expect("every job is answered").is_ok()
    }

    #[test]
    fn a_failing_job_is_undone_alone_and_the_rest_of_its_group_commits() {
        let conn = conn();
        let runs = Arc::new(AtomicUsize::new(0));
        let (a, a_answer) = job("a", false, &runs);
        let (b, b_answer) = job("b", true, &runs);
        let (c, c_answer) = job("c", false, &runs);
        assert!(!run_group(&conn, vec![a, b, c], false));
        assert!(answered(a_answer));
        assert!(!answered(b_answer));
        assert!(answered(c_answer));
        // b's first row was written before it failed: undone with it.
        assert_eq!(rows(&conn), ["a", "c"]);
        assert!(conn.is_autocommit(), "the group's transaction is committed");
    }

    #[test]
    fn a_group_where_nothing_fails_runs_each_job_once() {
        let conn = conn();
        let runs = Arc::new(AtomicUsize::new(0));
        let jobs: Vec<_> = ["a", "b", "c"]
            .into_iter()
            .map(|v| job(v, false, &runs))
            .collect();
        let (group, answers): (Vec<_>, Vec<_>) = jobs.into_iter().unzip();
        assert!(!run_group(&conn, group, false));
        assert!(answers.into_iter().all(answered));
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        assert_eq!(rows(&conn), ["a", "b", "c"]);
    }

    #[test]
    fn a_group_on_a_held_transaction_keeps_what_was_answered_before_it() {
        let conn = conn();
        let runs = Arc::new(AtomicUsize::new(0));
        // A claim answered early leaves the transaction open (held) for the next group.
        let (reply, claim_answer) = oneshot::channel();
        let claim = Job {
            work: Box::new(|conn: &Connection| {
                conn.execute("INSERT INTO t (v) VALUES ('claim')", [])
                    .map_err(|e| classify("insert", e))?;
                Ok((Box::new(()) as Output, true))
            }),
            reply,
        };
        assert!(run_group(&conn, vec![claim], false));
        assert!(answered(claim_answer));
        let (a, a_answer) = job("a", false, &runs);
        let (b, b_answer) = job("b", true, &runs);
        assert!(!run_group(&conn, vec![a, b], true));
        assert!(answered(a_answer));
        assert!(!answered(b_answer));
        assert_eq!(rows(&conn), ["a", "claim"]);
        assert!(conn.is_autocommit());
    }
}
