//! `--scale`: bulk-load payments straight into the store (same columns, same JSON body as a
//! payment made through the API, only the id varied), then measure list and retrieve through
//! the API at each size.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::body::Bytes;
use futures::SinkExt;
use rand::Rng;

use crate::load::{drive_server, Call, MakeRequest, Stats};
use crate::tender::{create_payments, Tender};

/// One payment row as the API wrote it, to copy.
struct Template {
    id: String,
    account_id: String,
    livemode: bool,
    created: i64,
    status: Option<String>,
    /// The stored form, unpacked (`tender_store::body`).
    body: String,
}

impl Template {
    /// The template's body as stored for a copy with id `id`.
    fn packed_for(&self, id: &str) -> Vec<u8> {
        tender_store::body::pack(&self.body.replace(&self.id, id))
    }
}

/// A new random payment id, in the shape the API generates.
fn new_id() -> String {
    const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut rng = rand::thread_rng();
    let mut id = String::with_capacity(28);
    id.push_str("pay_");
    for _ in 0..24 {
        id.push(ALPHABET[rng.gen_range(0..62)] as char);
    }
    id
}

/// The loaded ids retrieve picks from, and the rows present.
pub struct Loaded {
    pub ids: Vec<String>,
}

/// Results at one size.
pub struct Point {
    pub rows: u64,
    pub retrieve: Stats,
    pub list: Stats,
    pub bytes_per_payment: f64,
    pub load_seconds: f64,
}

pub async fn run(
    tender: &Tender,
    sizes: &[u64],
    concurrency: usize,
    seconds: Duration,
) -> anyhow::Result<Vec<Point>> {
    let first = create_payments(&tender.target, 1, false).await?;
    let template_id = first.first().context("no payment")?.clone();
    let mut loaded = Loaded {
        ids: vec![template_id.clone()],
    };
    let mut points = Vec::new();
    for &size in sizes {
        let t0 = Instant::now();
        let have = loaded.ids.len() as u64;
        if size > have {
            let n = (size - have) as usize;
            match &tender.pg {
                None => sqlite_load(tender, &template_id, n, &mut loaded)?,
                Some((_, url)) => pg_load(url, &template_id, n, &mut loaded).await?,
            }
        }
        let load_seconds = t0.elapsed().as_secs_f64();
        let bytes = match &tender.pg {
            None => sqlite_bytes(tender)?,
            Some((_, url)) => pg_bytes(url).await?,
        };
        let ids = Arc::new(loaded.ids.clone());
        let retrieve: MakeRequest = Arc::new(move |w, i| {
            let k = ((w as u64).wrapping_mul(1_000_003) ^ i.wrapping_mul(2_654_435_761)) as usize
                % ids.len();
            Call::get(format!("/payments/{}", ids[k]))
        });
        let list: MakeRequest = Arc::new(|_, _| Call::get("/payments?limit=10"));
        let pid = Some(tender.server.pid());
        let retrieve = drive_server(&tender.target, pid, concurrency, seconds, retrieve).await;
        let list = drive_server(&tender.target, pid, concurrency, seconds, list).await;
        points.push(Point {
            rows: loaded.ids.len() as u64,
            retrieve,
            list,
            bytes_per_payment: bytes / loaded.ids.len() as f64,
            load_seconds,
        });
    }
    Ok(points)
}

fn sqlite_template(conn: &rusqlite::Connection, id: &str) -> anyhow::Result<Template> {
    Ok(conn.query_row(
        "SELECT id, account_id, livemode, created, status, body FROM payments WHERE id = ?1",
        [id],
        |r| {
            Ok(Template {
                id: r.get(0)?,
                account_id: r.get(1)?,
                livemode: r.get(2)?,
                created: r.get(3)?,
                status: r.get(4)?,
                body: stored(r.get_ref(5)?.as_bytes()?)?,
            })
        },
    )?)
}

/// A stored body, unpacked.
fn stored(bytes: &[u8]) -> Result<String, rusqlite::Error> {
    tender_store::body::unpack(bytes).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(5, rusqlite::types::Type::Blob, e.into())
    })
}

/// Inserts `n` copies of the template in transactions of 50k rows, beside the running server
/// (WAL lets its readers carry on; its writer waits on the busy timeout if it needs to write).
fn sqlite_load(
    tender: &Tender,
    template_id: &str,
    n: usize,
    loaded: &mut Loaded,
) -> anyhow::Result<()> {
    let mut conn = rusqlite::Connection::open(tender.sqlite_path())?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let t = sqlite_template(&conn, template_id)?;
    let mut left = n;
    while left > 0 {
        let chunk = left.min(50_000);
        let tx = conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO payments (id, account_id, livemode, created, version, customer, status, body)
                 VALUES (?1, ?2, ?3, ?4, 1, NULL, ?5, ?6)",
            )?;
            for _ in 0..chunk {
                let id = new_id();
                let body = t.packed_for(&id);
                stmt.execute(rusqlite::params![
                    id,
                    t.account_id,
                    t.livemode,
                    t.created,
                    t.status,
                    body
                ])?;
                loaded.ids.push(id);
            }
        }
        tx.commit()?;
        left -= chunk;
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    conn.execute_batch("ANALYZE")?;
    Ok(())
}

/// Bytes the SQLite database uses (pages in use, after a checkpoint).
fn sqlite_bytes(tender: &Tender) -> anyhow::Result<f64> {
    let conn = rusqlite::Connection::open(tender.sqlite_path())?;
    conn.busy_timeout(Duration::from_secs(30))?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(((pages - free) * size) as f64)
}

/// CSV field: always quoted, quotes doubled.
fn csv(out: &mut String, field: &str) {
    out.push('"');
    for c in field.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
}

/// `COPY`s `n` copies of the template in chunks of 100k rows.
async fn pg_load(
    url: &str,
    template_id: &str,
    n: usize,
    loaded: &mut Loaded,
) -> anyhow::Result<()> {
    let client = crate::pg::connect(url).await?;
    let row = client
        .query_one(
            "SELECT id, account_id, livemode, created, status, COALESCE(packed, convert_to(body, 'UTF8'))
             FROM payments WHERE id = $1",
            &[&template_id],
        )
        .await?;
    let t = Template {
        id: row.get(0),
        account_id: row.get(1),
        livemode: row.get(2),
        created: row.get(3),
        status: row.get(4),
        body: tender_store::body::unpack(row.get::<_, &[u8]>(5))?,
    };
    let mut left = n;
    while left > 0 {
        let chunk = left.min(100_000);
        let sink = client
            .copy_in(
                "COPY payments (id, account_id, livemode, created, version, customer, status, packed)
                 FROM STDIN WITH (FORMAT csv)",
            )
            .await?;
        futures::pin_mut!(sink);
        let mut buf = String::with_capacity(4 << 20);
        for _ in 0..chunk {
            let id = new_id();
            let body = t.packed_for(&id);
            csv(&mut buf, &id);
            buf.push(',');
            csv(&mut buf, &t.account_id);
            buf.push_str(if t.livemode { ",t," } else { ",f," });
            buf.push_str(&t.created.to_string());
            buf.push_str(",1,,");
            if let Some(s) = &t.status {
                csv(&mut buf, s);
            }
            // BYTEA in CSV: its hex form.
            buf.push_str(",\\x");
            buf.push_str(&hex::encode(&body));
            buf.push('\n');
            loaded.ids.push(id);
            if buf.len() > (4 << 20) - 8192 {
                sink.send(Bytes::from(std::mem::take(&mut buf))).await?;
                buf.reserve(4 << 20);
            }
        }
        if !buf.is_empty() {
            sink.send(Bytes::from(buf)).await?;
        }
        sink.finish().await?;
        left -= chunk;
    }
    // What autovacuum would have done by the time a table holds a million rows.
    client.batch_execute("VACUUM ANALYZE payments").await?;
    Ok(())
}

async fn pg_bytes(url: &str) -> anyhow::Result<f64> {
    let client = crate::pg::connect(url).await?;
    let row = client
        .query_one("SELECT pg_total_relation_size('payments')::float8", &[])
        .await?;
    Ok(row.get::<_, f64>(0))
}
