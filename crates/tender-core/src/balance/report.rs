//! Reports: an account's balance transactions over a period as the CSV file a bookkeeper
//! reconciles the bank statement with (`tender reports balance`, the dashboard's download).
//!
//! One row per balance transaction created in the period, oldest first; amounts are integers
//! in the currency's minor unit, exactly as the API shows them (`net = amount − fee`), so the
//! file sums to what `GET /balance` moved. Times are UTC, `YYYY-MM-DD HH:MM:SS`.
//!
//! Pure; depends on [`crate::balance::transactions`], [`crate::clock`] and the `csv` crate (for quoting).

use crate::balance::transactions::BalanceTransaction;
use crate::clock::{format_local, unix_from_civil};

/// The header row.
pub const BALANCE_COLUMNS: [&str; 13] = [
    "id",
    "created_utc",
    "available_on_utc",
    "type",
    "reporting_category",
    "status",
    "currency",
    "amount",
    "fee",
    "net",
    "source",
    "held_by",
    "description",
];

/// The CSV of `txns` (in the order given), header first.
pub fn balance_csv(txns: &[BalanceTransaction]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to memory cannot fail; a row of strings always has the header's length.
    let _ = w.write_record(BALANCE_COLUMNS);
    for t in txns {
        let _ = w.write_record([
            t.id.as_str(),
            &format_local(t.created, 0),
            &format_local(t.available_on, 0),
            t.kind.as_str(),
            t.reporting_category.as_str(),
            t.status.as_str(),
            t.currency.code(),
            &t.amount.to_string(),
            &t.fee.to_string(),
            &t.net.to_string(),
            t.source.as_str(),
            // Who holds the money: Tender, or the connector whose processor booked it.
            t.connector.as_deref().unwrap_or("tender"),
            t.description.as_deref().unwrap_or(""),
        ]);
    }
    w.into_inner().unwrap_or_default()
}

/// A day as a report's bound takes it: `YYYY-MM-DD` (midnight UTC starting it) or Unix
/// seconds. `None` when it is neither.
pub fn parse_day(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(unix) = s.parse::<i64>() {
        return (0..=253_402_300_799).contains(&unix).then_some(unix);
    }
    let mut parts = s.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    unix_from_civil(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::balance::transactions::{charge, refund, At, Fee, FeeType};
    use crate::money::Currency;

    #[test]
    fn rows_are_the_transactions_with_quoted_text_and_signed_minor_units() {
        let now = unix_from_civil(2026, 11, 24).unwrap() + 3600;
        let at = |id| At {
            txn_id: id,
            now,
            livemode: false,
            held_by: None,
        };
        let c = charge(
            at("txn_1"),
            "pay_1",
            Currency::parse("usd").unwrap(),
            1000,
            Fee {
                amount: 59,
                kind: FeeType::TenderFee,
                description: "Tender card fee",
            },
            now + 60,
        )
        .unwrap()
        .transaction
        .unwrap();
        let mut r = refund(
            at("txn_2"),
            "re_1",
            "pay_1",
            Currency::parse("usd").unwrap(),
            300,
        )
        .unwrap()
        .transaction
        .unwrap();
        r.description = Some("Refund, \"partial\"\nline two".into());
        let text = String::from_utf8(balance_csv(&[c, r])).unwrap();
        let mut rows = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            rows.headers().unwrap().iter().collect::<Vec<_>>(),
            BALANCE_COLUMNS
        );
        let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0].iter().take(12).collect::<Vec<_>>(),
            [
                "txn_1",
                "2026-11-24 01:00:00",
                "2026-11-24 01:01:00",
                "charge",
                "charge",
                "pending",
                "usd",
                "1000",
                "59",
                "941",
                "pay_1",
                "tender"
            ]
        );
        assert_eq!(&rows[1][7], "-300");
        assert_eq!(&rows[1][9], "-300");
        // Commas, quotes and line breaks in a description survive the round trip.
        assert_eq!(&rows[1][12], "Refund, \"partial\"\nline two");
    }

    #[test]
    fn days_are_dates_or_unix_seconds() {
        assert_eq!(parse_day("1970-01-02"), Some(86_400));
        assert_eq!(parse_day("2026-11-24"), unix_from_civil(2026, 11, 24));
        assert_eq!(parse_day("1764000000"), Some(1_764_000_000));
        for bad in [
            "",
            "2026-13-01",
            "2026-02-30",
            "26-1-1",
            "yesterday",
            "-5",
            "2026-11-24T00",
        ] {
            assert_eq!(parse_day(bad), None, "{bad}");
        }
    }
}
