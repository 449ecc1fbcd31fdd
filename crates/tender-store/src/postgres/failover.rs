//! Losing the primary: how the PostgreSQL store finds the new one without a restart
//! (CONTRACT §12, docs/operations.md "A primary and a synchronous standby").
//!
//! - [`harden`] the connection settings: every session must be read-write (with several hosts
//!   in the URL, a new connection skips a standby and a dead primary and lands on whichever
//!   host is the primary now), and no connection waits unboundedly for a host that vanished
//!   (connect timeout, TCP keepalives, TCP user timeout), unless the URL says otherwise.
//! - [`pool_builder`]: checkouts, connects and recycles are bounded in time, so a request
//!   during a failover gets an error (503, retryable) instead of hanging.
//! - Stale connections: a connection to a dead primary is closed by the kernel and the pool's
//!   fast recycle drops it. A connection still open to a server that no longer takes writes
//!   (`read_only_sql_transaction`: it was fenced or turned into a standby) or that is shutting
//!   down is not: [`observe`] (called by the store's error classification) marks every
//!   connection this process opened before that moment stale, and the pool's pre-recycle hook
//!   drops them, so the next checkout connects afresh through the host list. The mark is
//!   process-wide: a process has one database, and a needless reconnect costs a few ms.
//!
//! Nothing here cancels a statement or a commit: a commit cancelled while it waits for the
//! synchronous standby is kept on the primary alone, and must not be acknowledged as if it
//! were replicated. A commit cut off by the primary's death fails, and the request with it.
//!
//! Depends on the driver and the pool only.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use deadpool_postgres::{HookError, Manager, PoolBuilder, Runtime};
use tokio_postgres::config::TargetSessionAttrs;
use tokio_postgres::error::SqlState;

/// How long one host may take to accept a connection before the next host is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long sent data may go unacknowledged before the connection is taken for dead.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);
/// An idle connection's keepalive probes: first after this, then every second, three times.
const KEEPALIVES_IDLE: Duration = Duration::from_secs(5);
/// The longest a request waits for a free pooled connection.
const CHECKOUT_TIMEOUT: Duration = Duration::from_secs(10);

/// The instant before which this process's connections are stale, if any.
static STALE_BEFORE: Mutex<Option<Instant>> = Mutex::new(None);

/// Tender's settings on top of the URL's: read-write sessions always; timeouts and keepalives
/// where the URL sets none.
pub fn harden(config: &mut tokio_postgres::Config) {
    config.target_session_attrs(TargetSessionAttrs::ReadWrite);
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    if config.get_keepalives() {
        config
            .keepalives_idle(KEEPALIVES_IDLE)
            .keepalives_interval(Duration::from_secs(1))
            .keepalives_retries(3);
    }
    // Tender never leaves a transaction idle (its statements are pipelined): one left open by a
    // node cut off mid-batch is ended by the server, not held until TCP gives up, since an open
    // transaction holds back every event stream of the cluster (migration 0009).
    if config.get_options().is_none() {
        config.options("-c idle_in_transaction_session_timeout=30000");
    }
}

/// The pool of `manager`'s connections: `size` at most, every wait bounded, stale
/// connections dropped at checkout.
pub fn pool_builder(manager: Manager, size: usize) -> PoolBuilder {
    deadpool_postgres::Pool::builder(manager)
        .max_size(size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(CHECKOUT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT * 3))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .pre_recycle(deadpool_postgres::Hook::sync_fn(|_, metrics| {
            if is_stale(metrics.created) {
                Err(HookError::message("opened before the primary changed"))
            } else {
                Ok(())
            }
        }))
}

/// If `e` says the server is not (or no longer) a writable primary, marks this process's
/// connections stale.
pub fn observe(e: &tokio_postgres::Error) {
    let Some(code) = e.code() else {
        return;
    };
    let lost = *code == SqlState::READ_ONLY_SQL_TRANSACTION
        || *code == SqlState::ADMIN_SHUTDOWN
        || *code == SqlState::CRASH_SHUTDOWN
        || *code == SqlState::CANNOT_CONNECT_NOW
        || code.code().starts_with("08");
    if lost {
        *STALE_BEFORE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }
}

fn is_stale(created: Instant) -> bool {
    STALE_BEFORE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .is_some_and(|before| created <= before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harden_keeps_what_the_url_sets_and_forces_read_write() {
        let mut c: tokio_postgres::Config =
            "postgres://u@h1:5432,h2:5433/db?target_session_attrs=any&connect_timeout=7"
                .parse()
                .unwrap();
        harden(&mut c);
        assert_eq!(c.get_target_session_attrs(), TargetSessionAttrs::ReadWrite);
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(7)));
        assert_eq!(c.get_tcp_user_timeout(), Some(&TCP_USER_TIMEOUT));
        assert_eq!(c.get_hosts().len(), 2);
        assert_eq!(c.get_ports(), &[5432, 5433]);

        let mut plain: tokio_postgres::Config = "postgres://u@h1/db".parse().unwrap();
        let mut own: tokio_postgres::Config = "postgres://u@h1/db?options=-c%20work_mem%3D8MB"
            .parse()
            .unwrap();
        harden(&mut own);
        assert_eq!(own.get_options(), Some("-c work_mem=8MB"));
        harden(&mut plain);
        assert_eq!(plain.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(plain.get_keepalives_idle(), KEEPALIVES_IDLE);
        assert_eq!(
            plain.get_options(),
            Some("-c idle_in_transaction_session_timeout=30000")
        );
    }
}
