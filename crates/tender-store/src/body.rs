//! Stored document bodies: what the `body` column of every document table holds.
//!
//! A body is the document's stored form (the compact JSON of `tender_core::documents::render`) compressed
//! as one zstd frame with a dictionary trained on Tender's own documents
//! (`dict/documents-1.zdict`, made by `scripts/train-dictionary.py`). Documents are small — a
//! payment about 480 bytes, its event 650 — and mostly field names, id prefixes and enum
//! values, which is what a dictionary holds: the payment is stored in about 120 bytes and its
//! event in 175, so fewer pages are dirtied, written to the WAL and fsynced per create.
//!
//! Invariants:
//! - [`pack`] writes one frame that names its dictionary (zstd's dictionary id) and records
//!   its content size, without a checksum (the database has its own page integrity).
//! - [`unpack`] reads every form ever stored: plain JSON, as rows written before compression
//!   hold it (it starts with `{`), and a frame of any dictionary in [`DICTIONARIES`]. A
//!   dictionary that has stored anything is never changed or removed; a better one is added
//!   with a new id and becomes [`pack`]'s. No migration rewrites old rows.
//! - Anything else — an unknown dictionary, a damaged frame, a frame that says it holds more
//!   than [`MAX_BODY`] bytes, text that is not UTF-8 — is `StoreError::Corrupt`, never a panic.
//!
//! Compression runs on the calling thread (a request's or a worker's), never on the SQLite
//! writer's, which stays the serial part of a write. Depends on `zstd` only.

use std::cell::RefCell;
use std::sync::LazyLock;

use tender_core::error::StoreError;
use tender_core::store::{WriteBatch, WriteOp};
use zstd::dict::{DecoderDictionary, EncoderDictionary};
use zstd::zstd_safe::{self, CCtx, DCtx};

/// Every dictionary bodies have been written with, by zstd dictionary id. The last one packs.
const DICTIONARIES: &[(u32, &[u8])] = &[(0x5444_0001, include_bytes!("../dict/documents-1.zdict"))];

/// zstd's level for [`pack`]. On Tender's documents with this dictionary, level 2 packs as small
/// as 3 (payments 3.96×, events 3.68×, balance transactions 4.66×) and about 15% faster
/// (`zstd -b1 -e3 -D dict/documents-1.zdict` over 600 stored documents of each kind).
const LEVEL: i32 = 2;

/// The largest body [`unpack`] inflates (far above any document; refuses a damaged size field).
pub const MAX_BODY: u64 = 16 << 20;

/// A frame starts with these bytes (zstd's magic number, little-endian); JSON never does.
const FRAME_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

static ENCODER: LazyLock<EncoderDictionary<'static>> = LazyLock::new(|| {
    let (_, dict) = DICTIONARIES[DICTIONARIES.len() - 1];
    EncoderDictionary::copy(dict, LEVEL)
});

static DECODERS: LazyLock<Vec<(u32, DecoderDictionary<'static>)>> = LazyLock::new(|| {
    DICTIONARIES
        .iter()
        .map(|(id, dict)| (*id, DecoderDictionary::copy(dict)))
        .collect()
});

thread_local! {
    static COMPRESSOR: RefCell<CCtx<'static>> = RefCell::new(CCtx::create());
    static DECOMPRESSOR: RefCell<DCtx<'static>> = RefCell::new(DCtx::create());
}

/// A document's stored form, compressed for its `body` column.
pub fn pack(json: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(json.len()));
    COMPRESSOR
        .with_borrow_mut(|cctx| {
            cctx.compress_using_cdict(&mut out, json.as_bytes(), ENCODER.as_cdict())
        })
        // The output has room for the worst case (compress_bound), and the dictionary is built in:
        // zstd cannot fail here short of memory exhaustion.
        .expect("zstd compression into a compress_bound buffer");
    out
}

/// Refuses a batch with a document [`unpack`] would refuse (over [`MAX_BODY`] bytes): a
/// document Tender writes is always one it can read back (CONTRACT §17). Nothing of the batch
/// is applied; the error names the document.
pub fn check_sizes(batch: &WriteBatch) -> Result<(), StoreError> {
    for op in &batch.ops {
        if let WriteOp::Insert { id, body, .. }
        | WriteOp::Update { id, body, .. }
        | WriteOp::Event { id, body, .. } = op
        {
            if body.len() as u64 > MAX_BODY {
                return Err(StoreError::Corrupt(format!(
                    "refused to write {id}: {} bytes, over the {MAX_BODY} a stored document may have",
                    body.len()
                )));
            }
        }
    }
    Ok(())
}

/// The documents of a batch packed, in the order of its operations (each `Insert`, `Update` and
/// `Event`), so that a backend can pack before it takes its writer or transaction.
pub fn pack_batch(batch: &WriteBatch) -> Vec<Vec<u8>> {
    batch
        .ops
        .iter()
        .filter_map(|op| match op {
            WriteOp::Insert { body, .. }
            | WriteOp::Update { body, .. }
            | WriteOp::Event { body, .. } => Some(pack(body)),
            _ => None,
        })
        .collect()
}

/// The stored form of a document from its `body` column, whichever form it was written in.
pub fn unpack(stored: &[u8]) -> Result<String, StoreError> {
    if !stored.starts_with(&FRAME_MAGIC) {
        // Written before compression: the JSON itself.
        return String::from_utf8(stored.to_vec())
            .map_err(|_| StoreError::Corrupt("a stored body is neither JSON nor a frame".into()));
    }
    let corrupt = |what: &str| StoreError::Corrupt(format!("a stored body's frame {what}"));
    let id = zstd_safe::get_dict_id_from_frame(stored).map(|id| id.get());
    let Some((_, dict)) = DECODERS.iter().find(|(known, _)| Some(*known) == id) else {
        return Err(corrupt(&format!("names an unknown dictionary ({id:?})")));
    };
    let size = match zstd_safe::get_frame_content_size(stored) {
        Ok(Some(size)) if size <= MAX_BODY => size as usize,
        Ok(Some(size)) => return Err(corrupt(&format!("claims {size} bytes"))),
        _ => return Err(corrupt("has no readable content size")),
    };
    let mut out = Vec::with_capacity(size);
    DECOMPRESSOR
        .with_borrow_mut(|dctx| dctx.decompress_using_ddict(&mut out, stored, dict.as_ddict()))
        .map_err(|code| corrupt(zstd_safe::get_error_name(code)))?;
    String::from_utf8(out).map_err(|_| corrupt("holds text that is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAYMENT: &str = r#"{"id":"pay_0VbxLJXSxSkzVblweCTSriSC","amount":1001,"amount_captured":1001,"currency":"usd","status":"succeeded","capture_method":"automatic","payment_method":{"id":"pm_0VbxLJXSAiot64T7UZXH2rWr","type":"card","card":{"brand":"visa","last4":"4242","exp_month":12,"exp_year":2030,"fingerprint":"TyJRJRo9lyQ4v8WU","country":"US","funding":"credit"}},"description":"Order 1","metadata":{"order_id":"1"},"created":1795581101,"balance_transaction":"txn_0VbxLJXStvyjNjn1mfyr9SMY"}"#;

    #[test]
    fn a_document_round_trips_in_a_fraction_of_its_size() {
        let packed = pack(PAYMENT);
        assert_eq!(unpack(&packed).unwrap(), PAYMENT);
        assert!(packed.starts_with(&FRAME_MAGIC));
        // The dictionary is what makes a small document compress at all: without it zstd
        // gains little on 480 bytes of unique ids.
        assert!(
            packed.len() * 3 < PAYMENT.len(),
            "{} bytes packed from {}",
            packed.len(),
            PAYMENT.len()
        );
        let plain = zstd::bulk::compress(PAYMENT.as_bytes(), LEVEL).unwrap();
        assert!(
            packed.len() < plain.len() * 2 / 3,
            "{} vs {}",
            packed.len(),
            plain.len()
        );
    }

    #[test]
    fn rows_written_before_compression_are_read_as_they_are() {
        assert_eq!(unpack(PAYMENT.as_bytes()).unwrap(), PAYMENT);
        assert_eq!(unpack(b"{}").unwrap(), "{}");
    }

    #[test]
    fn empty_and_large_documents_round_trip() {
        assert_eq!(unpack(&pack("")).unwrap(), "");
        let big = format!("{{\"metadata\":\"{}\"}}", "x".repeat(100_000));
        assert_eq!(unpack(&pack(&big)).unwrap(), big);
    }

    #[test]
    fn damaged_or_foreign_bodies_are_corrupt_not_a_panic() {
        let packed = pack(PAYMENT);
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("truncated frame", packed[..packed.len() / 2].to_vec()),
            ("magic alone", FRAME_MAGIC.to_vec()),
            ("not UTF-8", vec![0xff, 0xfe, 0x00]),
            (
                "frame without a dictionary",
                zstd::bulk::compress(PAYMENT.as_bytes(), 3).unwrap(),
            ),
            ("flipped byte", {
                let mut p = packed.clone();
                let last = p.len() - 3;
                p[last] ^= 0xff;
                p
            }),
        ];
        for (name, bytes) in cases {
            match unpack(&bytes) {
                Err(StoreError::Corrupt(_)) => {}
                // A flipped byte may still decode to other bytes that are valid UTF-8 (there is
                // no checksum); it must never decode to the original.
                Ok(text) if name == "flipped byte" => assert_ne!(text, PAYMENT),
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_frame_claiming_a_huge_body_is_refused_before_allocating() {
        let big = "x".repeat(MAX_BODY as usize + 1);
        let packed = pack(&big);
        assert!(matches!(unpack(&packed), Err(StoreError::Corrupt(m)) if m.contains("claims")));
    }
}
