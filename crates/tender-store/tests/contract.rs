//! The store contract: the behaviour every `Store` implementation must have, run against a real
//! SQLite file and a real PostgreSQL schema. Each case is one function taking the store; the
//! `contract!` macro makes a test per backend. PostgreSQL cases skip (saying so) when no server
//! is reachable, unless `TENDER_REQUIRE_POSTGRES=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tender_core::auth::{KeyKind, Mode, Scope};
use tender_core::error::StoreError;
use tender_core::store::*;

struct Fixture {
    store: Arc<dyn Store>,
    /// PostgreSQL: the URL of the fixture's schema, for a second store (node) on it.
    url: Option<tender_store::DatabaseUrl>,
    _dir: Option<tempfile::TempDir>,
}

async fn sqlite() -> Option<Fixture> {
    let dir = tempfile::tempdir().unwrap();
    let url = tender_store::DatabaseUrl::Sqlite(dir.path().join("t.sqlite3"));
    Some(Fixture {
        store: tender_store::open(&url).await.unwrap(),
        url: None,
        _dir: Some(dir),
    })
}

async fn postgres() -> Option<Fixture> {
    let admin = std::env::var("TENDER_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let (client, conn) = match tokio_postgres::connect(&admin, tokio_postgres::NoTls).await {
        Ok(c) => c,
        Err(e) => {
            if std::env::var("TENDER_REQUIRE_POSTGRES").as_deref() == Ok("1") {
                panic!("PostgreSQL required but unreachable at {admin}: {e}");
            }
            eprintln!("skipped: no PostgreSQL at {admin}: {e}");
            return None;
        }
    };
    tokio::spawn(conn);
    let schema = format!("c_{}", tender_core::ids::random_base62(16).to_lowercase());
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .unwrap();
    let sep = if admin.contains('?') { '&' } else { '?' };
    let url = tender_store::DatabaseUrl::Postgres(format!(
        "{admin}{sep}options=-c%20search_path%3D{schema}"
    ));
    Some(Fixture {
        store: tender_store::open(&url).await.unwrap(),
        url: Some(url),
        _dir: None,
    })
}

macro_rules! contract {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                let f = super::sqlite().await.unwrap();
                super::$name(f.store.clone()).await;
            }
            #[tokio::test]
            async fn postgres() {
                let Some(f) = super::postgres().await else {
                    return;
                };
                super::$name(f.store.clone()).await;
            }
        }
    };
}

/// A delivery claim with caps high enough not to matter.
fn claim(now_ms: i64, lease_until_ms: i64, limit: usize) -> DeliveryClaim {
    DeliveryClaim {
        now_ms,
        lease_until_ms,
        limit,
        per_account: 1000,
        per_endpoint: 1000,
    }
}

fn scope(account: &str, mode: Mode) -> Scope {
    Scope {
        account: account.into(),
        mode,
    }
}

fn insert(c: Collection, id: &str, created: i64, index: IndexValues) -> WriteOp {
    WriteOp::Insert {
        collection: c,
        id: id.into(),
        created,
        index,
        body: format!("{{\"id\":\"{id}\"}}"),
    }
}

/// A batch that inserts customer `id` and completes this node's claim of `key`.
fn completing_claim(s: &Scope, key: &str, id: &str) -> WriteBatch {
    WriteBatch {
        scope: s.clone(),
        ops: vec![insert(
            Collection::Customers,
            id,
            1000,
            IndexValues::default(),
        )],
        idempotency: Some(IdempotencyWrite {
            key: key.into(),
            fingerprint: "fp".into(),
            claimed: true,
            checkpoint: false,
            created: 1000,
            response: StoredResponse {
                status: 200,
                body: b"{}".to_vec(),
            },
        }),
    }
}

async fn commit(store: &Arc<dyn Store>, s: &Scope, ops: Vec<WriteOp>) -> StoreResult<()> {
    store
        .commit(WriteBatch {
            scope: s.clone(),
            ops,
            idempotency: None,
        })
        .await
}

contract!(records_are_invisible_outside_their_scope);
async fn records_are_invisible_outside_their_scope(store: Arc<dyn Store>) {
    let a = scope("acct_a", Mode::Test);
    commit(
        &store,
        &a,
        vec![insert(
            Collection::Customers,
            "cus_1",
            1,
            IndexValues::default(),
        )],
    )
    .await
    .unwrap();
    assert!(store
        .find_record(&a, Collection::Customers, "cus_1")
        .await
        .unwrap()
        .is_some());
    assert!(store
        .find_record(&scope("acct_a", Mode::Live), Collection::Customers, "cus_1")
        .await
        .unwrap()
        .is_none());
    assert!(store
        .find_record(&scope("acct_b", Mode::Test), Collection::Customers, "cus_1")
        .await
        .unwrap()
        .is_none());
    assert!(store
        .find_record(&a, Collection::Payments, "cus_1")
        .await
        .unwrap()
        .is_none());
}

contract!(a_document_too_large_to_read_back_is_never_written);
/// T3-M1: a 300 MB processor answer once became a payment the store wrote and then refused to
/// read, breaking the account's lists for good. A document over what a read accepts is refused
/// with its batch, and the list goes on reading.
async fn a_document_too_large_to_read_back_is_never_written(store: Arc<dyn Store>) {
    let s = scope("acct_big", Mode::Test);
    commit(
        &store,
        &s,
        vec![insert(
            Collection::Payments,
            "pay_ok",
            1,
            IndexValues::default(),
        )],
    )
    .await
    .unwrap();
    let huge = format!("{{\"id\":\"pay_big\",\"m\":\"{}\"}}", "x".repeat(17 << 20));
    let refused = commit(
        &store,
        &s,
        vec![
            insert(
                Collection::Customers,
                "cus_with_it",
                2,
                IndexValues::default(),
            ),
            WriteOp::Insert {
                collection: Collection::Payments,
                id: "pay_big".into(),
                created: 2,
                index: IndexValues::default(),
                body: huge,
            },
        ],
    )
    .await;
    assert!(
        matches!(refused, Err(StoreError::Corrupt(_))),
        "{refused:?}"
    );
    let page = store
        .list_records(
            &s,
            Collection::Payments,
            &ListQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.records.len(), 1);
    assert!(store
        .find_record(&s, Collection::Customers, "cus_with_it")
        .await
        .unwrap()
        .is_none());
}

contract!(a_limit_in_the_batch_holds_against_racing_batches);
/// T3-L2: a count read before the batch let 19 connectors past a limit of 16 on PostgreSQL.
/// `RequireAtMost` counts inside the batch, with what it wrote, serialised per collection.
async fn a_limit_in_the_batch_holds_against_racing_batches(store: Arc<dyn Store>) {
    let s = scope("acct_limit", Mode::Test);
    let tries = futures::future::join_all((0..20).map(|i| {
        let store = store.clone();
        let s = s.clone();
        async move {
            commit(
                &store,
                &s,
                vec![
                    insert(
                        Collection::Customers,
                        &format!("cus_limit_{i}"),
                        1,
                        IndexValues {
                            test_clock: Some("clock_a".into()),
                            ..Default::default()
                        },
                    ),
                    WriteOp::RequireAtMost {
                        collection: Collection::Customers,
                        filter: Some((Field::TestClock, "clock_a".into())),
                        at_most: 5,
                        what: "customers of clock_a".into(),
                    },
                ],
            )
            .await
        }
    }))
    .await;
    assert_eq!(tries.iter().filter(|r| r.is_ok()).count(), 5, "{tries:?}");
    assert!(tries
        .iter()
        .all(|r| matches!(r, Ok(()) | Err(StoreError::LimitReached(_)))));
    // Another clock's customers, and another scope, count apart.
    commit(
        &store,
        &s,
        vec![
            insert(
                Collection::Customers,
                "cus_other_clock",
                1,
                IndexValues::default(),
            ),
            WriteOp::RequireAtMost {
                collection: Collection::Customers,
                filter: Some((Field::TestClock, "clock_b".into())),
                at_most: 0,
                what: "customers of clock_b".into(),
            },
        ],
    )
    .await
    .unwrap();
}

contract!(a_stale_version_conflicts_and_nothing_of_the_batch_applies);
async fn a_stale_version_conflicts_and_nothing_of_the_batch_applies(store: Arc<dyn Store>) {
    let s = scope("acct_a", Mode::Test);
    commit(
        &store,
        &s,
        vec![insert(
            Collection::Payments,
            "pay_1",
            1,
            IndexValues::default(),
        )],
    )
    .await
    .unwrap();
    let update = |v: i64, body: &str| WriteOp::Update {
        collection: Collection::Payments,
        id: "pay_1".into(),
        expected_version: v,
        index: IndexValues::default(),
        body: body.into(),
    };
    commit(&store, &s, vec![update(1, "{\"v\":2}")])
        .await
        .unwrap();
    let err = commit(
        &store,
        &s,
        vec![
            insert(Collection::Refunds, "re_1", 2, IndexValues::default()),
            update(1, "{\"v\":3}"),
        ],
    )
    .await
    .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    let rec = store
        .find_record(&s, Collection::Payments, "pay_1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((rec.version, rec.body.as_str()), (2, "{\"v\":2}"));
    assert!(
        store
            .find_record(&s, Collection::Refunds, "re_1")
            .await
            .unwrap()
            .is_none(),
        "the batch is atomic"
    );
    let dup = commit(
        &store,
        &s,
        vec![insert(
            Collection::Payments,
            "pay_1",
            1,
            IndexValues::default(),
        )],
    )
    .await
    .unwrap_err();
    assert!(matches!(dup, StoreError::Duplicate(_)), "{dup:?}");
}

contract!(lists_are_newest_first_keyset_paginated_and_filtered);
async fn lists_are_newest_first_keyset_paginated_and_filtered(store: Arc<dyn Store>) {
    let s = scope("acct_a", Mode::Test);
    // All in the same second: order must still be strict creation order.
    for i in 0..25 {
        let index = IndexValues {
            status: Some(if i % 2 == 0 { "succeeded" } else { "failed" }.into()),
            ..Default::default()
        };
        commit(
            &store,
            &s,
            vec![insert(
                Collection::Payments,
                &format!("pay_{i:02}"),
                100 + (i / 10),
                index,
            )],
        )
        .await
        .unwrap();
    }
    let mut seen = Vec::new();
    let mut q = ListQuery {
        limit: 7,
        ..Default::default()
    };
    loop {
        let page = store
            .list_records(&s, Collection::Payments, &q)
            .await
            .unwrap();
        seen.extend(page.records.iter().map(|r| r.id.clone()));
        if !page.has_more {
            break;
        }
        q.cursor = Cursor::StartingAfter(page.records.last().unwrap().id.clone());
    }
    let expected: Vec<_> = (0..25).rev().map(|i| format!("pay_{i:02}")).collect();
    assert_eq!(seen, expected);
    let back = store
        .list_records(
            &s,
            Collection::Payments,
            &ListQuery {
                limit: 3,
                cursor: Cursor::EndingBefore("pay_10".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        back.records
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>(),
        ["pay_13", "pay_12", "pay_11"]
    );
    assert!(back.has_more);
    let failed = store
        .list_records(
            &s,
            Collection::Payments,
            &ListQuery {
                limit: 100,
                filters: vec![(Field::Status, "failed".into())],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(failed.records.len(), 12);
    let created = store
        .list_records(
            &s,
            Collection::Payments,
            &ListQuery {
                limit: 100,
                created: CreatedRange {
                    gte: Some(102),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(created.records.len(), 5);
    let missing = store
        .list_records(
            &s,
            Collection::Payments,
            &ListQuery {
                limit: 1,
                cursor: Cursor::StartingAfter("pay_zz".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(missing, StoreError::CursorNotFound(_)));
    let other = store
        .list_records(
            &scope("acct_b", Mode::Test),
            Collection::Payments,
            &ListQuery {
                limit: 100,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(other.records.is_empty());
}

contract!(idempotency_claims_replay_mismatch_in_progress_and_takeover);
async fn idempotency_claims_replay_mismatch_in_progress_and_takeover(store: Arc<dyn Store>) {
    let s = scope("acct_a", Mode::Test);
    let claim = |key: &'static str, fp: &'static str, now: i64| {
        let (store, s) = (store.clone(), s.clone());
        async move { store.claim_idempotency(&s, key, fp, now).await.unwrap() }
    };
    assert_eq!(claim("k", "fp1", 1000).await, KeyState::Free);
    assert_eq!(claim("k", "fp1", 1001).await, KeyState::InProgress);
    assert_eq!(claim("k", "fp2", 1001).await, KeyState::Mismatch);
    let response = StoredResponse {
        status: 402,
        body: b"{\"x\":1}".to_vec(),
    };
    store
        .commit(WriteBatch {
            scope: s.clone(),
            ops: vec![],
            idempotency: Some(IdempotencyWrite {
                key: "k".into(),
                fingerprint: "fp1".into(),
                claimed: true,
                checkpoint: false,
                created: 1000,
                response: response.clone(),
            }),
        })
        .await
        .unwrap();
    assert_eq!(claim("k", "fp1", 1002).await, KeyState::Replay(response));
    // The same key in another scope is another key.
    assert_eq!(
        store
            .claim_idempotency(&scope("acct_a", Mode::Live), "k", "fp9", 1002)
            .await
            .unwrap(),
        KeyState::Free
    );
    // A claim of a live process is never taken over, however old (the request may still be
    // running: it must not run twice); a released one is free at once.
    assert_eq!(claim("slow", "fp", 1000).await, KeyState::Free);
    assert_eq!(claim("slow", "fp", 1000 + 3600).await, KeyState::InProgress);
    assert_eq!(claim("gone", "fp", 1000).await, KeyState::Free);
    store.release_idempotency(&s, "gone").await.unwrap();
    assert_eq!(claim("gone", "fp", 1001).await, KeyState::Free);
    // After 24 hours a finished key is free again; the purge deletes old ones.
    assert_eq!(
        claim("k", "fp2", 1000 + IDEMPOTENCY_TTL_SECS + 1).await,
        KeyState::Free
    );
    assert!(
        store
            .purge_idempotency(1000 + IDEMPOTENCY_TTL_SECS)
            .await
            .unwrap()
            >= 2
    );
}

contract!(an_unclaimed_record_is_written_with_its_batch_once_and_a_second_batch_applies_nothing);
async fn an_unclaimed_record_is_written_with_its_batch_once_and_a_second_batch_applies_nothing(
    store: Arc<dyn Store>,
) {
    let s = scope("acct_a", Mode::Test);
    let write = |id: &str, created: i64| WriteBatch {
        scope: s.clone(),
        ops: vec![insert(
            Collection::Customers,
            id,
            created,
            IndexValues::default(),
        )],
        idempotency: Some(IdempotencyWrite {
            key: "k".into(),
            fingerprint: "fp".into(),
            claimed: false,
            checkpoint: false,
            created,
            response: StoredResponse {
                status: 200,
                body: id.as_bytes().to_vec(),
            },
        }),
    };
    assert_eq!(
        store.find_idempotency(&s, "k", "fp", 1000).await.unwrap(),
        KeyState::Free,
        "a lookup claims nothing"
    );
    store.commit(write("cus_first", 1000)).await.unwrap();
    let found = |fp: &'static str, now: i64| {
        let (store, s) = (store.clone(), s.clone());
        async move { store.find_idempotency(&s, "k", fp, now).await.unwrap() }
    };
    let first = KeyState::Replay(StoredResponse {
        status: 200,
        body: b"cus_first".to_vec(),
    });
    assert_eq!(found("fp", 1001).await, first);
    assert_eq!(found("other", 1001).await, KeyState::Mismatch);
    // A concurrent request with the key computed its own batch: it is refused whole.
    match store.commit(write("cus_second", 1001)).await {
        Err(StoreError::IdempotencyKeyTaken(_)) => {}
        other => panic!("expected IdempotencyKeyTaken, got {other:?}"),
    }
    assert!(store
        .find_record(&s, Collection::Customers, "cus_second")
        .await
        .unwrap()
        .is_none());
    assert_eq!(found("fp", 1002).await, first);
    // A claim still running is not overwritten by an unclaimed batch either.
    assert_eq!(
        store
            .claim_idempotency(&s, "run", "fp", 1000)
            .await
            .unwrap(),
        KeyState::Free
    );
    let mut batch = write("cus_third", 1001);
    if let Some(w) = batch.idempotency.as_mut() {
        w.key = "run".into();
    }
    assert!(matches!(
        store.commit(batch).await,
        Err(StoreError::IdempotencyKeyTaken(_))
    ));
    // Once expired, the key is free and a batch writes it afresh.
    let later = 1000 + IDEMPOTENCY_TTL_SECS + 1;
    assert_eq!(found("other", later).await, KeyState::Free);
    store.commit(write("cus_fourth", later)).await.unwrap();
    assert_eq!(
        found("fp", later).await,
        KeyState::Replay(StoredResponse {
            status: 200,
            body: b"cus_fourth".to_vec(),
        })
    );
}

contract!(completing_a_claim_that_is_not_there_applies_nothing);
async fn completing_a_claim_that_is_not_there_applies_nothing(store: Arc<dyn Store>) {
    let s = scope("acct_a", Mode::Test);
    let batch = completing_claim(&s, "never-claimed", "cus_x");
    assert!(store.commit(batch).await.is_err());
    assert!(store
        .find_record(&s, Collection::Customers, "cus_x")
        .await
        .unwrap()
        .is_none());
}

/// SQLite is served by one process: the next one takes over the tasks the killed one had
/// leased at once (an interrupted renewal or test-clock advance goes on without waiting out
/// the lease), and the tasks are still completed once.
#[tokio::test]
async fn sqlite_a_restarted_process_runs_the_dead_ones_leased_tasks_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = tender_store::DatabaseUrl::Sqlite(dir.path().join("t.sqlite3"));
    let s = scope("acct_a", Mode::Test);
    let dead = tender_store::open(&url).await.unwrap();
    let schedule = WriteOp::ScheduleTask {
        id: "task_1".into(),
        kind: "k".into(),
        object_id: "sub_1".into(),
        due_at: 100,
        clock: None,
    };
    commit(&dead, &s, vec![schedule]).await.unwrap();
    assert_eq!(dead.claim_tasks(100, 160, 10).await.unwrap().len(), 1);
    drop(dead);
    let next = tender_store::open(&url).await.unwrap();
    assert!(
        next.claim_tasks(101, 161, 10).await.unwrap().is_empty(),
        "a lease holds until the process that took it is known dead"
    );
    assert!(next.recover_after_restart().await.unwrap() >= 1);
    let again = next.claim_tasks(101, 161, 10).await.unwrap();
    assert_eq!(
        again.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["task_1"]
    );
    let done = WriteOp::DeleteTask {
        id: "task_1".into(),
    };
    commit(&next, &s, vec![done]).await.unwrap();
    assert!(next.claim_tasks(500, 560, 10).await.unwrap().is_empty());
}

/// CONTRACT §12: on PostgreSQL the claims of a node that died are free within seconds, while
/// a live node's are never taken over. The first store stands for a node; dropping it ends its
/// session as a killed process's would.
#[tokio::test]
async fn postgres_claims_of_a_dead_node_are_free_at_once_and_a_live_nodes_never() {
    let Some(first) = postgres().await else {
        return;
    };
    let url = first.url.clone().unwrap();
    let second = tender_store::open(&url).await.unwrap();
    let s = scope("acct_a", Mode::Test);
    assert_eq!(
        first
            .store
            .claim_idempotency(&s, "k", "fp", 1000)
            .await
            .unwrap(),
        KeyState::Free
    );
    assert_eq!(
        second
            .claim_idempotency(&s, "k", "fp", 1000 + 3600)
            .await
            .unwrap(),
        KeyState::InProgress,
        "a live node's claim was taken over"
    );
    drop(first);
    let started = std::time::Instant::now();
    loop {
        match second.claim_idempotency(&s, "k", "fp", 1001).await.unwrap() {
            KeyState::Free => break,
            KeyState::InProgress => {
                assert!(
                    started.elapsed() < std::time::Duration::from_secs(5),
                    "the dead node's claim is still held after 5 s"
                );
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    // Another fingerprint is still a mismatch, whoever holds the key.
    assert_eq!(
        second
            .claim_idempotency(&s, "k", "other", 1002)
            .await
            .unwrap(),
        KeyState::Mismatch
    );
}

/// CONTRACT §12, failover: a node whose liveness session is cut (its primary died and a
/// standby took over) comes back under a new key, so the claims it made before are free for
/// another node's retry instead of held for as long as the node lives; its own completion of
/// such a claim then applies nothing.
#[tokio::test]
async fn postgres_a_node_whose_lock_session_was_cut_leaves_its_earlier_claims_free() {
    let Some(first) = postgres().await else {
        return;
    };
    let url = first.url.clone().unwrap();
    let second = tender_store::open(&url).await.unwrap();
    let schema_url = match &url {
        tender_store::DatabaseUrl::Postgres(u) => u.clone(),
        _ => unreachable!(),
    };
    let (admin, conn) = tokio_postgres::connect(&schema_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let s = scope("acct_a", Mode::Test);
    // The node key a claim was made under.
    async fn node_of(admin: &tokio_postgres::Client, key: &str) -> i64 {
        admin
            .query_one("SELECT node FROM idempotency_keys WHERE key = $1", &[&key])
            .await
            .unwrap()
            .get::<_, Option<i64>>(0)
            .unwrap()
    }
    assert_eq!(
        first
            .store
            .claim_idempotency(&s, "k", "fp", 1000)
            .await
            .unwrap(),
        KeyState::Free
    );
    let old = node_of(&admin, "k").await;
    // Cut the session holding the first node's lock, as a dying primary does.
    let cut = admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
             AND ((classid::bigint << 32) | objid::bigint) = $1",
            &[&old],
        )
        .await
        .unwrap();
    assert_eq!(cut, 1, "the node's lock session was not found");
    // The first node goes on: wait until its new claims carry a new key that is locked again.
    let started = std::time::Instant::now();
    let mut n = 0;
    loop {
        n += 1;
        let key = format!("probe-{n}");
        first
            .store
            .claim_idempotency(&s, &key, "fp", 1000)
            .await
            .unwrap();
        let now = node_of(&admin, &key).await;
        let locked: i64 = admin
            .query_one(
                "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
                 AND ((classid::bigint << 32) | objid::bigint) = $1",
                &[&now],
            )
            .await
            .unwrap()
            .get(0);
        if now != old && locked == 1 {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "the node did not come back under a new key within 5 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Its claim from before the cut is free for the other node's retry…
    assert_eq!(
        second.claim_idempotency(&s, "k", "fp", 1001).await.unwrap(),
        KeyState::Free
    );
    // …and the first node's late completion of it applies nothing.
    let late = completing_claim(&s, "k", "cus_late");
    assert!(first.store.commit(late).await.is_err());
    assert!(second
        .find_record(&s, Collection::Customers, "cus_late")
        .await
        .unwrap()
        .is_none());
}

/// CONTRACT §12, failover: a server that does not take writes (a standby, a fenced primary)
/// fails requests at once, whatever the URL says, and no connection to it is kept (new sessions
/// must be read-write; a read-only answer drops the connections opened before it), so once the
/// server takes writes again the same store serves without a restart.
#[tokio::test]
async fn postgres_a_server_that_refuses_writes_is_not_used_and_service_resumes() {
    let admin_url = std::env::var("TENDER_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let (admin, conn) = match tokio_postgres::connect(&admin_url, tokio_postgres::NoTls).await {
        Ok(c) => c,
        Err(e) => {
            if std::env::var("TENDER_REQUIRE_POSTGRES").as_deref() == Ok("1") {
                panic!("PostgreSQL required but unreachable at {admin_url}: {e}");
            }
            eprintln!("skipped: no PostgreSQL at {admin_url}: {e}");
            return;
        }
    };
    tokio::spawn(conn);
    // A database of its own: the setting below applies to every session of the database.
    let db = format!("ro_{}", tender_core::ids::random_base62(12).to_lowercase());
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await
        .unwrap();
    let slash = admin_url.rfind('/').unwrap();
    let url = format!("{}/{db}", &admin_url[..slash]);
    // The URL asks for any session; Tender asks for a read-write one all the same.
    let store = tender_store::open(&tender_store::DatabaseUrl::Postgres(format!(
        "{url}?target_session_attrs=any"
    )))
    .await
    .unwrap();
    let s = scope("acct_a", Mode::Test);
    let customer = |id: &str| insert(Collection::Customers, id, 1000, IndexValues::default());
    commit(&store, &s, vec![customer("cus_before")])
        .await
        .unwrap();

    // The server stops taking writes, and its sessions end (as a demoted primary's do).
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {db} SET default_transaction_read_only = on;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'"
        ))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let refused = commit(&store, &s, vec![customer("cus_during")]).await;
    assert!(
        matches!(refused, Err(StoreError::Unavailable { .. })),
        "a write with no writable server: {refused:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    // It takes writes again: the same store serves, without being reopened.
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {db} RESET default_transaction_read_only"
        ))
        .await
        .unwrap();
    commit(&store, &s, vec![customer("cus_after")])
        .await
        .unwrap();
    for id in ["cus_before", "cus_after"] {
        assert!(store
            .find_record(&s, Collection::Customers, id)
            .await
            .unwrap()
            .is_some());
    }
    assert!(store
        .find_record(&s, Collection::Customers, "cus_during")
        .await
        .unwrap()
        .is_none());
    drop(store);
    let _ = admin
        .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
        .await;
}

contract!(a_stripe_endpoint_gets_one_delivery_per_name_it_listens_to);
async fn a_stripe_endpoint_gets_one_delivery_per_name_it_listens_to(store: Arc<dyn Store>) {
    use tender_core::stripe::events::endpoint_index;
    let s = scope("acct_v", Mode::Test);
    let endpoint = |id: &str, index: String| {
        insert(
            Collection::WebhookEndpoints,
            id,
            1,
            IndexValues {
                status: Some("enabled".into()),
                enabled_events: Some(index),
                ..Default::default()
            },
        )
    };
    let names = |n: &[&str]| endpoint_index(&n.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    commit(
        &store,
        &s,
        vec![
            endpoint("we_every", "*|*".into()),
            endpoint(
                "we_both",
                names(&["charge.succeeded", "payment_intent.succeeded"]),
            ),
            endpoint("we_charge", names(&["charge.succeeded"])),
            endpoint("we_other", names(&["invoice.payment_succeeded"])),
            // Indexed before names were: one delivery, named when it is sent.
            endpoint("we_legacy", ",payment.succeeded,".into()),
        ],
    )
    .await
    .unwrap();
    let event = WriteOp::Event {
        id: "evt_v".into(),
        event_type: "payment.succeeded".into(),
        created: 10,
        body: "{}".into(),
    };
    commit(&store, &s, vec![event]).await.unwrap();
    let mut claimed: Vec<(String, String)> = store
        .claim_deliveries(claim(10_000, 30_000, 50))
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.endpoint_id, d.variant))
        .collect();
    claimed.sort();
    let pairs: Vec<(&str, &str)> = claimed
        .iter()
        .map(|(e, v)| (e.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("we_both", "charge.succeeded"),
            ("we_both", "payment_intent.succeeded"),
            ("we_charge", "charge.succeeded"),
            ("we_every", "charge.succeeded"),
            ("we_every", "payment_intent.succeeded"),
            ("we_legacy", ""),
        ]
    );
    assert_eq!(store.list_deliveries(&s, "evt_v").await.unwrap().len(), 6);
}

contract!(events_fan_out_to_matching_endpoints_and_deliveries_lease_once);
async fn events_fan_out_to_matching_endpoints_and_deliveries_lease_once(store: Arc<dyn Store>) {
    let s = scope("acct_a", Mode::Test);
    let endpoint = |id: &str, status: &str, events: &str| {
        insert(
            Collection::WebhookEndpoints,
            id,
            1,
            IndexValues {
                status: Some(status.into()),
                enabled_events: Some(events.into()),
                ..Default::default()
            },
        )
    };
    commit(
        &store,
        &s,
        vec![
            endpoint("we_all", "enabled", "*"),
            endpoint("we_pay", "enabled", ",payment.succeeded,"),
            endpoint("we_cus", "enabled", ",customer.created,"),
            endpoint("we_off", "disabled", "*"),
            WriteOp::Seal {
                owner: "we_all".into(),
                sealed: "sealed-secret".into(),
            },
        ],
    )
    .await
    .unwrap();
    commit(
        &store,
        &scope("acct_a", Mode::Live),
        vec![endpoint("we_live", "enabled", "*")],
    )
    .await
    .unwrap();
    let event = WriteOp::Event {
        id: "evt_1".into(),
        event_type: "payment.succeeded".into(),
        created: 10,
        body: "{}".into(),
    };
    commit(&store, &s, vec![event]).await.unwrap();
    let mut endpoints: Vec<_> = store
        .list_deliveries(&s, "evt_1")
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.endpoint_id)
        .collect();
    endpoints.sort();
    assert_eq!(endpoints, ["we_all", "we_pay"]);

    let first = store
        .claim_deliveries(claim(10_000, 30_000, 10))
        .await
        .unwrap();
    assert_eq!(first.len(), 2);
    assert!(
        store
            .claim_deliveries(claim(10_000, 30_000, 10))
            .await
            .unwrap()
            .is_empty(),
        "leased deliveries are not claimed twice"
    );
    let all = first.iter().find(|d| d.endpoint_id == "we_all").unwrap();
    assert_eq!(all.endpoint_secrets.as_deref(), Some("sealed-secret"));
    assert_eq!(all.attempts_made, 0);
    store
        .record_delivery_attempt(DeliveryAttemptRecord {
            delivery_id: all.id.clone(),
            endpoint_id: "we_all".into(),
            attempt: "{\"response_status\":500}".into(),
            status: "pending".into(),
            next_attempt_at_ms: Some(20_000),
            endpoint_failing_since: Some(10),
        })
        .await
        .unwrap();
    assert!(
        store
            .claim_deliveries(claim(15_000, 40_000, 10))
            .await
            .unwrap()
            .is_empty(),
        "not due yet"
    );
    let again = store
        .claim_deliveries(claim(20_000, 50_000, 10))
        .await
        .unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].attempts_made, again[0].endpoint_failing_since),
        (1, Some(10))
    );
    // The other lease expires and its delivery is claimed again (a crashed worker).
    let expired = store
        .claim_deliveries(claim(30_001, 60_000, 10))
        .await
        .unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].endpoint_id, "we_pay");
    let resent = store
        .schedule_delivery(&s, "evt_1", "we_cus", 70_000)
        .await
        .unwrap();
    assert_eq!(resent.status, "pending");
    assert_eq!(store.list_deliveries(&s, "evt_1").await.unwrap().len(), 3);
}

contract!(delivery_claims_are_fair_across_accounts_and_capped_in_flight);
/// Security review M5: one account's backlog (many endpoints, many events) cannot take every
/// slot; the other account's delivery comes in the first claim, and the caps count deliveries
/// already leased.
async fn delivery_claims_are_fair_across_accounts_and_capped_in_flight(store: Arc<dyn Store>) {
    let (a, b) = (scope("acct_a", Mode::Test), scope("acct_b", Mode::Test));
    let endpoint = |id: String| {
        insert(
            Collection::WebhookEndpoints,
            &id,
            1,
            IndexValues {
                status: Some("enabled".into()),
                enabled_events: Some("*".into()),
                ..Default::default()
            },
        )
    };
    let event = |id: &str, created: i64| WriteOp::Event {
        id: id.into(),
        event_type: "customer.created".into(),
        created,
        body: "{}".into(),
    };
    // B: 8 endpoints and 5 events (40 deliveries), all older than A's one delivery.
    commit(
        &store,
        &b,
        (0..8).map(|i| endpoint(format!("we_b{i}"))).collect(),
    )
    .await
    .unwrap();
    for i in 0..5 {
        commit(&store, &b, vec![event(&format!("evt_b{i}"), 1)])
            .await
            .unwrap();
    }
    commit(&store, &a, vec![endpoint("we_a".into())])
        .await
        .unwrap();
    commit(&store, &a, vec![event("evt_a", 5)]).await.unwrap();

    let capped = |limit, per_account, per_endpoint| DeliveryClaim {
        now_ms: 10_000,
        lease_until_ms: 30_000,
        limit,
        per_account,
        per_endpoint,
    };
    let first = store.claim_deliveries(capped(2, 16, 4)).await.unwrap();
    let accounts: Vec<_> = first.iter().map(|d| d.scope.account.as_str()).collect();
    assert!(
        accounts.contains(&"acct_a"),
        "A waited behind B: {accounts:?}"
    );
    // B's in-flight cap counts what it already holds: 1 leased, at most 5 more.
    let more = store.claim_deliveries(capped(100, 6, 4)).await.unwrap();
    assert_eq!(more.len(), 5, "the account cap");
    assert!(more.iter().all(|d| d.scope.account == "acct_b"));
    // With a higher account cap, each endpoint stops at its own cap (4 in flight each).
    let rest = store.claim_deliveries(capped(100, 1000, 4)).await.unwrap();
    let mut per_endpoint = std::collections::HashMap::new();
    for d in first.iter().chain(&more).chain(&rest) {
        *per_endpoint.entry(d.endpoint_id.clone()).or_insert(0) += 1;
    }
    assert!(per_endpoint.values().all(|&n| n <= 4), "{per_endpoint:?}");
    assert_eq!(per_endpoint.len(), 9);
    assert_eq!(first.len() + more.len() + rest.len(), 1 + 8 * 4);
}

contract!(a_setting_keeps_its_first_value);
async fn a_setting_keeps_its_first_value(store: Arc<dyn Store>) {
    assert_eq!(store.claim_setting("vault_check", "a").await.unwrap(), "a");
    assert_eq!(store.claim_setting("vault_check", "b").await.unwrap(), "a");
    assert_eq!(store.claim_setting("other", "b").await.unwrap(), "b");
}

contract!(tasks_are_claimed_once_and_completed_once);
async fn tasks_are_claimed_once_and_completed_once(store: Arc<dyn Store>) {
    let s = scope("acct_a", Mode::Test);
    let schedule = |id: &str, due: i64| WriteOp::ScheduleTask {
        id: id.into(),
        kind: "k".into(),
        object_id: "pay_1".into(),
        due_at: due,
        clock: None,
    };
    commit(
        &store,
        &s,
        vec![schedule("task_1", 100), schedule("task_2", 200)],
    )
    .await
    .unwrap();
    let claimed = store.claim_tasks(150, 210, 10).await.unwrap();
    assert_eq!(
        claimed.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["task_1"]
    );
    assert_eq!(claimed[0].scope, s);
    assert!(store.claim_tasks(150, 210, 10).await.unwrap().is_empty());
    commit(
        &store,
        &s,
        vec![WriteOp::DeleteTask {
            id: "task_1".into(),
        }],
    )
    .await
    .unwrap();
    let twice = commit(
        &store,
        &s,
        vec![WriteOp::DeleteTask {
            id: "task_1".into(),
        }],
    )
    .await
    .unwrap_err();
    assert!(
        matches!(twice, StoreError::Conflict(_)),
        "a task completes once"
    );
    assert_eq!(store.claim_tasks(300, 400, 10).await.unwrap().len(), 1);
}

contract!(a_test_clocks_tasks_wait_for_its_advance_and_come_earliest_instant_first);
async fn a_test_clocks_tasks_wait_for_its_advance_and_come_earliest_instant_first(
    store: Arc<dyn Store>,
) {
    let s = scope("acct_a", Mode::Test);
    let schedule = |id: &str, due: i64, clock: Option<&str>| WriteOp::ScheduleTask {
        id: id.into(),
        kind: "k".into(),
        object_id: "sub_1".into(),
        due_at: due,
        clock: clock.map(str::to_string),
    };
    commit(
        &store,
        &s,
        vec![
            schedule("task_b", 100, Some("clock_1")),
            schedule("task_a", 100, Some("clock_1")),
            schedule("task_c", 200, Some("clock_1")),
            schedule("task_d", 100, Some("clock_2")),
            schedule("task_w", 100, None),
        ],
    )
    .await
    .unwrap();
    // The wall-clock runner never takes a clock's task, however late it is.
    let wall = store.claim_tasks(1_000, 1_060, 10).await.unwrap();
    assert_eq!(
        wall.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["task_w"]
    );
    assert_eq!(wall[0].clock, None);
    // Up to 150 in clock_1's time: both tasks of its earliest instant, in id order.
    let first = store
        .claim_clock_tasks("clock_1", 150, 1_000, 1_060, 10)
        .await
        .unwrap();
    assert_eq!(
        first.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["task_a", "task_b"]
    );
    assert!(first
        .iter()
        .all(|t| t.due_at == 100 && t.clock.as_deref() == Some("clock_1")));
    assert_eq!(store.clock_tasks_due("clock_1", 150).await.unwrap(), 2);
    assert_eq!(store.clock_tasks_due("clock_1", 250).await.unwrap(), 3);
    // While those are leased and not done, the later instant waits (time order).
    assert!(store
        .claim_clock_tasks("clock_1", 250, 1_000, 1_060, 10)
        .await
        .unwrap()
        .is_empty());
    let done = ["task_a", "task_b"].map(|id| WriteOp::DeleteTask { id: id.into() });
    commit(&store, &s, done.to_vec()).await.unwrap();
    let next = store
        .claim_clock_tasks("clock_1", 250, 1_000, 1_060, 10)
        .await
        .unwrap();
    assert_eq!(
        next.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["task_c"]
    );
    // A lease that ran out is taken again.
    let again = store
        .claim_clock_tasks("clock_1", 250, 1_061, 1_120, 10)
        .await
        .unwrap();
    assert_eq!(again.len(), 1);
    // Deleting a clock's tasks leaves the others.
    commit(
        &store,
        &s,
        vec![WriteOp::DeleteClockTasks {
            clock: "clock_1".into(),
        }],
    )
    .await
    .unwrap();
    assert_eq!(store.clock_tasks_due("clock_1", 10_000).await.unwrap(), 0);
    assert_eq!(store.clock_tasks_due("clock_2", 10_000).await.unwrap(), 1);
}

contract!(sealed_values_follow_their_owner);
async fn sealed_values_follow_their_owner(store: Arc<dyn Store>) {
    let s = scope("acct_a", Mode::Test);
    commit(
        &store,
        &s,
        vec![
            insert(
                Collection::PaymentMethods,
                "pm_1",
                1,
                IndexValues::default(),
            ),
            WriteOp::Seal {
                owner: "pm_1".into(),
                sealed: "x".into(),
            },
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        store.find_sealed(&s, "pm_1").await.unwrap().as_deref(),
        Some("x")
    );
    assert!(store
        .find_sealed(&scope("acct_b", Mode::Test), "pm_1")
        .await
        .unwrap()
        .is_none());
    commit(
        &store,
        &s,
        vec![WriteOp::Unseal {
            owner: "pm_1".into(),
        }],
    )
    .await
    .unwrap();
    assert!(store.find_sealed(&s, "pm_1").await.unwrap().is_none());
    commit(
        &store,
        &s,
        vec![WriteOp::Seal {
            owner: "pm_1".into(),
            sealed: "y".into(),
        }],
    )
    .await
    .unwrap();
    commit(
        &store,
        &s,
        vec![WriteOp::Delete {
            collection: Collection::PaymentMethods,
            id: "pm_1".into(),
            expected_version: 1,
        }],
    )
    .await
    .unwrap();
    assert!(
        store.find_sealed(&s, "pm_1").await.unwrap().is_none(),
        "deleted with its owner"
    );
}

contract!(only_a_unique_key_is_a_duplicate_and_key_lists_break_ties_alike);
async fn only_a_unique_key_is_a_duplicate_and_key_lists_break_ties_alike(store: Arc<dyn Store>) {
    let key = |id: &str, account: &str, hash: &str| ApiKeyRecord {
        id: id.into(),
        account: account.into(),
        mode: Mode::Test,
        kind: KeyKind::Secret,
        key_hash: hash.into(),
        public_value: None,
        last4: "wxyz".into(),
        created: 7,
        expires_at: None,
        revoked: false,
    };
    // A key of an account that does not exist breaks a foreign key: a failure, not a duplicate.
    match store.insert_api_key(key("key_0", "acct_none", "h0")).await {
        Err(StoreError::Duplicate(what)) => panic!("a foreign key is no duplicate: {what}"),
        Err(_) => {}
        Ok(()) => panic!("a key of a missing account was stored"),
    }
    let account = AccountRecord {
        id: "acct_t".into(),
        email: "ties@example.com".into(),
        name: None,
        public_email: None,
        password_hash: "h".into(),
        created: 1,
        pricing: None,
        payout_destination: None,
        checkout_settings: None,
    };
    store
        .insert_account(account, vec![key("key_b", "acct_t", "hb")])
        .await
        .unwrap();
    store
        .insert_api_key(key("key_a", "acct_t", "ha"))
        .await
        .unwrap();
    store
        .insert_api_key(key("key_c", "acct_t", "hc"))
        .await
        .unwrap();
    let dup = store
        .insert_api_key(key("key_d", "acct_t", "hc"))
        .await
        .unwrap_err();
    assert!(matches!(dup, StoreError::Duplicate(_)), "{dup:?}");
    // Keys made in the same second: newest first, then by id descending, on every backend.
    let ids: Vec<String> = store
        .list_api_keys("acct_t")
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect();
    assert_eq!(ids, ["key_c", "key_b", "key_a"]);
}

contract!(accounts_keys_and_sessions);
async fn accounts_keys_and_sessions(store: Arc<dyn Store>) {
    let account = AccountRecord {
        id: "acct_1".into(),
        email: "Shop@Example.com".into(),
        name: None,
        public_email: None,
        password_hash: "h".into(),
        created: 1,
        pricing: None,
        payout_destination: None,
        checkout_settings: None,
    };
    let key = ApiKeyRecord {
        id: "key_1".into(),
        account: "acct_1".into(),
        mode: Mode::Live,
        kind: KeyKind::Secret,
        key_hash: "abc".into(),
        public_value: None,
        last4: "wxyz".into(),
        created: 1,
        expires_at: None,
        revoked: false,
    };
    store
        .insert_account(account.clone(), vec![key.clone()])
        .await
        .unwrap();
    assert_eq!(store.count_accounts().await.unwrap(), 1);
    assert_eq!(
        store
            .find_account_by_email("shop@example.com")
            .await
            .unwrap(),
        Some(account.clone())
    );
    let dup = store
        .insert_account(
            AccountRecord {
                id: "acct_2".into(),
                ..account.clone()
            },
            vec![],
        )
        .await
        .unwrap_err();
    assert!(matches!(dup, StoreError::Duplicate(_)));
    store
        .update_account_profile("acct_1", Some("Shop Ltd"), Some("help@shop.example"))
        .await
        .unwrap();
    let profile = store.find_account("acct_1").await.unwrap().unwrap();
    assert_eq!(
        (profile.name.as_deref(), profile.public_email.as_deref()),
        (Some("Shop Ltd"), Some("help@shop.example"))
    );
    assert_eq!(store.find_api_key("abc").await.unwrap(), Some(key.clone()));
    store
        .update_api_key("acct_1", "key_1", Some(50), true)
        .await
        .unwrap();
    let updated = store.find_api_key("abc").await.unwrap().unwrap();
    assert_eq!((updated.expires_at, updated.revoked), (Some(50), true));
    store
        .update_api_key("acct_other", "key_1", None, false)
        .await
        .unwrap();
    assert!(
        store.find_api_key("abc").await.unwrap().unwrap().revoked,
        "another account cannot touch the key"
    );
    let session = SessionRecord {
        token_hash: "t".into(),
        account: "acct_1".into(),
        csrf_token: "c".into(),
        mode: Mode::Test,
        created: 1,
        expires_at: 100,
    };
    store.insert_session(session.clone()).await.unwrap();
    assert_eq!(store.find_session("t", 50).await.unwrap(), Some(session));
    assert!(
        store.find_session("t", 100).await.unwrap().is_none(),
        "expired"
    );
    store.update_session_mode("t", Mode::Live).await.unwrap();
    assert_eq!(
        store.find_session("t", 50).await.unwrap().unwrap().mode,
        Mode::Live
    );
    store.delete_session("t").await.unwrap();
    assert!(store.find_session("t", 50).await.unwrap().is_none());
}

contract!(
    a_checkpointed_claim_stays_in_progress_then_completes_and_a_released_one_replays_its_checkpoint
);
async fn a_checkpointed_claim_stays_in_progress_then_completes_and_a_released_one_replays_its_checkpoint(
    store: Arc<dyn Store>,
) {
    let s = scope("acct_a", Mode::Test);
    let answer = |body: &str, checkpoint: bool| WriteBatch {
        scope: s.clone(),
        ops: vec![],
        idempotency: Some(IdempotencyWrite {
            key: "k".into(),
            fingerprint: "fp".into(),
            claimed: true,
            checkpoint,
            created: 1000,
            response: StoredResponse {
                status: 200,
                body: body.as_bytes().to_vec(),
            },
        }),
    };
    let find = || {
        let (store, s) = (store.clone(), s.clone());
        async move { store.find_idempotency(&s, "k", "fp", 1001).await.unwrap() }
    };
    // Checkpointing a key nobody claimed applies nothing.
    assert!(store.commit(answer("pointer", true)).await.is_err());
    assert_eq!(
        store.claim_idempotency(&s, "k", "fp", 1000).await.unwrap(),
        KeyState::Free
    );
    store.commit(answer("pointer", true)).await.unwrap();
    // Still running: a duplicate waits (409), it does not run again.
    assert_eq!(find().await, KeyState::InProgress);
    // The request finishes: its answer replaces the checkpoint.
    store.commit(answer("final", false)).await.unwrap();
    assert_eq!(
        find().await,
        KeyState::Replay(StoredResponse {
            status: 200,
            body: b"final".to_vec()
        })
    );
    // A checkpointed claim that is released (its request failed after the checkpoint) answers
    // its checkpoint from then on, instead of letting a retry run again.
    assert_eq!(
        store.claim_idempotency(&s, "k2", "fp", 1000).await.unwrap(),
        KeyState::Free
    );
    let mut batch = answer("pointer", true);
    if let Some(w) = &mut batch.idempotency {
        w.key = "k2".into();
    }
    store.commit(batch).await.unwrap();
    store.release_idempotency(&s, "k2").await.unwrap();
    assert_eq!(
        store.find_idempotency(&s, "k2", "fp", 1001).await.unwrap(),
        KeyState::Replay(StoredResponse {
            status: 200,
            body: b"pointer".to_vec()
        })
    );
    assert_eq!(
        store.claim_idempotency(&s, "k2", "fp", 1001).await.unwrap(),
        KeyState::Replay(StoredResponse {
            status: 200,
            body: b"pointer".to_vec()
        })
    );
}

contract!(a_posting_moves_balances_once_per_cause_and_only_with_its_batch);
async fn a_posting_moves_balances_once_per_cause_and_only_with_its_batch(store: Arc<dyn Store>) {
    use tender_core::balance::ledger::{Entry, LedgerAccount::*, Posting};
    use tender_core::money::Currency;
    let s = scope("acct_a", Mode::Test);
    let usd = Currency::parse("usd").unwrap();
    let eur = Currency::parse("eur").unwrap();
    let capture = |cause: &str, amount: i64, fee: i64| {
        Posting::new(
            cause,
            1000,
            vec![
                Entry {
                    account: External,
                    currency: usd,
                    amount: -amount,
                },
                Entry {
                    account: Pending,
                    currency: usd,
                    amount: amount - fee,
                },
                Entry {
                    account: Fees,
                    currency: usd,
                    amount: fee,
                },
            ],
        )
        .unwrap()
    };
    let post = |ops: Vec<WriteOp>| WriteBatch {
        scope: s.clone(),
        ops,
        idempotency: None,
    };
    let balances = || {
        let (store, s) = (store.clone(), s.clone());
        async move {
            let mut b: Vec<(String, &str, i64)> = store
                .ledger_balances(&s)
                .await
                .unwrap()
                .into_iter()
                .map(|b| (b.account.as_str().to_string(), b.currency.code(), b.amount))
                .collect();
            b.sort();
            b
        }
    };
    store
        .commit(post(vec![WriteOp::Post(capture(
            "capture:pay_1",
            1000,
            59,
        ))]))
        .await
        .unwrap();
    // The same cause again (a retry, a replayed webhook): nothing moves, nothing fails.
    store
        .commit(post(vec![WriteOp::Post(capture(
            "capture:pay_1",
            1000,
            59,
        ))]))
        .await
        .unwrap();
    store
        .commit(post(vec![
            WriteOp::Post(capture("capture:pay_2", 500, 45)),
            WriteOp::Post(
                Posting::transfer("available:pay_1", 1001, usd, 941, Pending, Available).unwrap(),
            ),
            WriteOp::Post(
                Posting::transfer("capture:pay_3", 1001, eur, 700, External, Pending).unwrap(),
            ),
        ]))
        .await
        .unwrap();
    // A batch that fails posts nothing.
    let failed = store
        .commit(post(vec![
            WriteOp::Post(capture("capture:pay_4", 9000, 100)),
            WriteOp::DeleteTask {
                id: "task_missing".into(),
            },
        ]))
        .await;
    assert!(failed.is_err());
    assert_eq!(
        balances().await,
        vec![
            ("available".to_string(), "usd", 941),
            ("external".to_string(), "eur", -700),
            ("external".to_string(), "usd", -1500),
            ("fees".to_string(), "usd", 104),
            ("pending".to_string(), "eur", 700),
            ("pending".to_string(), "usd", 455),
        ]
    );
    // Every currency sums to zero.
    for code in ["usd", "eur"] {
        let sum: i64 = balances()
            .await
            .iter()
            .filter(|b| b.1 == code)
            .map(|b| b.2)
            .sum();
        assert_eq!(sum, 0, "{code}");
    }
    let mut entries: Vec<(String, i64)> = store
        .posting_entries(&s, "capture:pay_1")
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|e| (e.account.as_str().to_string(), e.amount))
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        vec![
            ("external".to_string(), -1000),
            ("fees".to_string(), 59),
            ("pending".to_string(), 941)
        ]
    );
    assert_eq!(
        store.posting_entries(&s, "capture:pay_4").await.unwrap(),
        None
    );
    // Another scope's ledger is another ledger; its causes are its own.
    let other = scope("acct_b", Mode::Test);
    assert!(store.ledger_balances(&other).await.unwrap().is_empty());
    store
        .commit(WriteBatch {
            scope: other.clone(),
            ops: vec![WriteOp::Post(capture("capture:pay_1", 1000, 59))],
            idempotency: None,
        })
        .await
        .unwrap();
    assert_eq!(store.ledger_balances(&other).await.unwrap().len(), 3);
    assert!(store
        .ledger_balances(&scope("acct_a", Mode::Live))
        .await
        .unwrap()
        .is_empty());
}

contract!(concurrent_postings_to_one_balance_all_count_and_one_cause_counts_once);
async fn concurrent_postings_to_one_balance_all_count_and_one_cause_counts_once(
    store: Arc<dyn Store>,
) {
    use tender_core::balance::ledger::{LedgerAccount::*, Posting};
    use tender_core::money::Currency;
    let s = scope("acct_a", Mode::Test);
    let usd = Currency::parse("usd").unwrap();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let (store, s) = (store.clone(), s.clone());
        tasks.push(tokio::spawn(async move {
            // Ten distinct causes, each sent twice at once.
            let p = Posting::transfer(
                format!("refund:re_{}", i % 10),
                0,
                usd,
                100,
                Available,
                External,
            )
            .unwrap();
            store
                .commit(WriteBatch {
                    scope: s,
                    ops: vec![WriteOp::Post(p)],
                    idempotency: None,
                })
                .await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let balances = store.ledger_balances(&s).await.unwrap();
    let available = balances.iter().find(|b| b.account == Available).unwrap();
    assert_eq!(available.amount, -1000);
    let external = balances.iter().find(|b| b.account == External).unwrap();
    assert_eq!(external.amount, 1000);
}

/// A payment as the API stores it.
const STORED_PAYMENT: &str = r#"{"id":"pay_0VbxLJXSxSkzVblweCTSriSC","amount":1001,"amount_captured":1001,"currency":"usd","status":"succeeded","capture_method":"automatic","payment_method":{"id":"pm_0VbxLJXSAiot64T7UZXH2rWr","type":"card","card":{"brand":"visa","last4":"4242","exp_month":12,"exp_year":2030,"fingerprint":"TyJRJRo9lyQ4v8WU","country":"US","funding":"credit"}},"description":"Order 1","metadata":{"order_id":"1"},"created":1795581101,"balance_transaction":"txn_0VbxLJXStvyjNjn1mfyr9SMY"}"#;

/// Documents are stored packed ([`tender_store::body`]), far smaller than their JSON; rows
/// stored before packing (plain JSON) are read as they are, by id and in lists; a damaged body
/// fails the read as `Corrupt` instead of panicking or returning garbage. The rows are made
/// oldest first: `pay_bad` (damaged), `pay_new` (packed by the store), `pay_old` (plain JSON).
#[tokio::test]
async fn sqlite_documents_are_stored_packed_and_older_rows_read_as_they_are() {
    let f = sqlite().await.unwrap();
    let s = scope("acct_a", Mode::Test);
    let db = rusqlite::Connection::open(f._dir.as_ref().unwrap().path().join("t.sqlite3")).unwrap();
    let raw = |id: &str, body: &dyn rusqlite::ToSql| {
        db.execute(
            "INSERT INTO payments (id, account_id, livemode, created, version, body)
             VALUES (?1, 'acct_a', 0, 900, 1, ?2)",
            rusqlite::params![id, body],
        )
        .unwrap();
    };
    // A frame header with nothing after it.
    raw("pay_bad", &vec![0x28u8, 0xb5, 0x2f, 0xfd, 0x00]);
    commit(&f.store, &s, vec![packed_payment()]).await.unwrap();
    raw("pay_old", &STORED_PAYMENT);
    let (kind, len): (String, usize) = db
        .query_row(
            "SELECT typeof(body), length(body) FROM payments WHERE id = 'pay_new'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(kind, "blob");
    assert!(len * 3 < STORED_PAYMENT.len(), "{len} bytes stored");
    stored_forms_read_back(&f.store, &s).await;
}

#[tokio::test]
async fn postgres_documents_are_stored_packed_and_older_rows_read_as_they_are() {
    let Some(f) = postgres().await else {
        return;
    };
    let s = scope("acct_a", Mode::Test);
    let tender_store::DatabaseUrl::Postgres(url) = f.url.clone().unwrap() else {
        unreachable!()
    };
    let (db, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    // Rows as written before migration 0007 (JSON in `body`, nothing in `packed`), and a
    // damaged frame.
    db.execute(
        "INSERT INTO payments (id, account_id, livemode, created, version, packed)
         VALUES ('pay_bad', 'acct_a', false, 900, 1, '\\x28b52ffd00')",
        &[],
    )
    .await
    .unwrap();
    commit(&f.store, &s, vec![packed_payment()]).await.unwrap();
    db.execute(
        "INSERT INTO payments (id, account_id, livemode, created, version, body)
         VALUES ('pay_old', 'acct_a', false, 900, 1, $1)",
        &[&STORED_PAYMENT],
    )
    .await
    .unwrap();
    let row = db
        .query_one(
            "SELECT body IS NULL, length(packed) FROM payments WHERE id = 'pay_new'",
            &[],
        )
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0), "the JSON column is left empty");
    let len = row.get::<_, i32>(1) as usize;
    assert!(len * 3 < STORED_PAYMENT.len(), "{len} bytes stored");
    stored_forms_read_back(&f.store, &s).await;
}

/// `pay_new`, whose body is [`STORED_PAYMENT`], as the store is asked to insert it.
fn packed_payment() -> WriteOp {
    WriteOp::Insert {
        collection: Collection::Payments,
        id: "pay_new".into(),
        created: 1000,
        index: IndexValues::default(),
        body: STORED_PAYMENT.into(),
    }
}

/// What both backends must read back from `pay_new` (packed), `pay_old` (JSON as stored before
/// packing) and `pay_bad` (a damaged frame).
async fn stored_forms_read_back(store: &Arc<dyn Store>, s: &Scope) {
    for id in ["pay_new", "pay_old"] {
        let found = store
            .find_record(s, Collection::Payments, id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.body, STORED_PAYMENT, "{id}");
    }
    let (_, unscoped) = store
        .find_unscoped(Collection::Payments, "pay_old")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(unscoped.body, STORED_PAYMENT);
    match store.find_record(s, Collection::Payments, "pay_bad").await {
        Err(StoreError::Corrupt(_)) => {}
        other => panic!("a damaged body read as {other:?}"),
    }
    // A page that does not reach the damaged (oldest) row reads; one that does fails as a whole.
    let page = store
        .list_records(
            s,
            Collection::Payments,
            &ListQuery {
                limit: 1,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.records[0].body, STORED_PAYMENT);
    let all = store
        .list_records(
            s,
            Collection::Payments,
            &ListQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await;
    assert!(matches!(all, Err(StoreError::Corrupt(_))), "{all:?}");
}

/// An account `acct_m` with one live secret key whose hash is `hm`.
async fn account_with_live_key(store: &Arc<dyn Store>) {
    let account = AccountRecord {
        id: "acct_m".into(),
        email: "mode@example.com".into(),
        name: None,
        public_email: None,
        password_hash: "h".into(),
        created: 1,
        pricing: None,
        payout_destination: None,
        checkout_settings: None,
    };
    let key = ApiKeyRecord {
        id: "key_m".into(),
        account: "acct_m".into(),
        mode: Mode::Live,
        kind: KeyKind::Secret,
        key_hash: "hm".into(),
        public_value: None,
        last4: "mmmm".into(),
        created: 1,
        expires_at: None,
        revoked: false,
    };
    store.insert_account(account, vec![key]).await.unwrap();
}

/// What both backends must do with a key row whose mode and kind were damaged: refuse it as
/// `Corrupt`, never read it as a test or publishable key.
async fn a_damaged_key_row_is_refused(store: &Arc<dyn Store>) {
    match store.find_api_key("hm").await {
        Err(StoreError::Corrupt(why)) => assert!(why.contains("prod"), "{why}"),
        other => panic!("a key of mode 'prod' read as {other:?}"),
    }
    assert!(matches!(
        store.list_api_keys("acct_m").await,
        Err(StoreError::Corrupt(_))
    ));
}

#[tokio::test]
async fn sqlite_a_key_of_an_unknown_mode_is_refused_not_read_as_test() {
    let f = sqlite().await.unwrap();
    account_with_live_key(&f.store).await;
    let db = rusqlite::Connection::open(f._dir.as_ref().unwrap().path().join("t.sqlite3")).unwrap();
    db.execute("UPDATE api_keys SET mode = 'prod' WHERE id = 'key_m'", [])
        .unwrap();
    a_damaged_key_row_is_refused(&f.store).await;
}

#[tokio::test]
async fn postgres_a_key_of_an_unknown_mode_is_refused_not_read_as_test() {
    let Some(f) = postgres().await else {
        return;
    };
    account_with_live_key(&f.store).await;
    let tender_store::DatabaseUrl::Postgres(url) = f.url.clone().unwrap() else {
        unreachable!()
    };
    let (db, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    db.execute("UPDATE api_keys SET mode = 'prod' WHERE id = 'key_m'", &[])
        .await
        .unwrap();
    a_damaged_key_row_is_refused(&f.store).await;
}
