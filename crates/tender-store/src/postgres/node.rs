//! This node's liveness, as PostgreSQL sees it: a session advisory lock on a random 62-bit key,
//! held on a connection of its own for as long as the store lives.
//!
//! An idempotency claim records the key of the node that made it. Another node may take a
//! claim over only when no session holds that key's lock any more, that is when the claiming
//! node's session ended: the process died (the kernel closes its socket at once) or its host
//! vanished (the session's TCP keepalives, set to a few seconds below, end it). A live but slow
//! node keeps its claims however long its request takes, so a request is never run twice, and a
//! dead node's claims are free within seconds instead of after a fixed timeout (CONTRACT §12).
//!
//! If the lock's connection breaks while the node lives (the primary died and a standby was
//! promoted, or the session was cut), the database may already have taken the node for dead,
//! and another node may have taken its claims over. So a watcher reconnects within a second and
//! takes a lock on a *new* key: the claims made under the old key are free for any node's retry
//! (on a promoted standby no session holds the old key), and this node's requests still
//! running under it find their claim lost when they complete and apply nothing (their
//! connections died with the old primary anyway).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use deadpool_postgres::{ClientWrapper, Pool};
use rand::Rng;
use tokio::sync::Mutex;

/// How often the watcher checks the lock's connection.
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// The SQL condition "the node in `idempotency_keys.node` is gone" (its lock is held by no
/// session).
pub const NODE_GONE: &str =
    "NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
     AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = idempotency_keys.node)";

/// The lock that says this node is alive.
pub struct NodeLock {
    /// The key now locked; a new one after each reconnection.
    key: Arc<AtomicI64>,
    /// Held for its session; dropping the store ends it (and the watcher).
    _client: Arc<Mutex<Option<ClientWrapper>>>,
}

/// A fresh key: positive and below 2^62, so the (classid << 32 | objid) form of
/// [`NODE_GONE`] reads it back.
fn fresh_key() -> i64 {
    rand::thread_rng().gen_range(1..(1i64 << 62))
}

impl NodeLock {
    /// Takes a fresh key's lock on a connection taken out of `pool` and starts its watcher.
    pub async fn acquire(pool: &Pool) -> Result<Self, String> {
        let key = fresh_key();
        let client = Arc::new(Mutex::new(Some(lock_connection(pool, key).await?)));
        let key = Arc::new(AtomicI64::new(key));
        tokio::spawn(watch(pool.clone(), key.clone(), Arc::downgrade(&client)));
        Ok(Self {
            key,
            _client: client,
        })
    }

    /// The key claims are made under now.
    pub fn key(&self) -> i64 {
        self.key.load(Ordering::SeqCst)
    }
}

async fn lock_connection(pool: &Pool, key: i64) -> Result<ClientWrapper, String> {
    let object = pool.get().await.map_err(|e| e.to_string())?;
    let client = deadpool_postgres::Object::take(object);
    // A host that vanishes ends this session within a few seconds (no effect on Unix sockets).
    for setting in [
        "SET tcp_keepalives_idle = 2",
        "SET tcp_keepalives_interval = 1",
        "SET tcp_keepalives_count = 2",
        "SET tcp_user_timeout = 4000",
        "SET idle_session_timeout = 0",
    ] {
        let _ = client.batch_execute(setting).await;
    }
    client
        .execute("SELECT pg_advisory_lock($1)", &[&key])
        .await
        .map_err(|e| e.to_string())?;
    Ok(client)
}

/// Keeps the lock's connection alive until the store (the only strong owner) is dropped; a
/// lost connection is replaced by one holding a new key.
async fn watch(pool: Pool, key: Arc<AtomicI64>, client: Weak<Mutex<Option<ClientWrapper>>>) {
    loop {
        tokio::time::sleep(CHECK_EVERY).await;
        let Some(client) = client.upgrade() else {
            return;
        };
        let mut slot = client.lock().await;
        let healthy = match slot.as_ref() {
            Some(c) => !c.is_closed() && c.simple_query("SELECT 1").await.is_ok(),
            None => false,
        };
        if healthy {
            continue;
        }
        *slot = None;
        let fresh = fresh_key();
        match lock_connection(&pool, fresh).await {
            Ok(c) => {
                key.store(fresh, Ordering::SeqCst);
                tracing::info!("node lock re-established under a new key");
                *slot = Some(c);
            }
            Err(e) => tracing::warn!(error = %e, "node lock connection lost; retrying"),
        }
    }
}
