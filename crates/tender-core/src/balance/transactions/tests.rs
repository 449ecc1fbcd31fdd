//! Tests of [`super`] (`transactions.rs`), kept apart so the module reads as what it does.

use super::*;
use crate::balance::disputes::DisputeStatus;
use crate::balance::payouts::PayoutStatus;
use std::collections::HashMap;

fn usd() -> Currency {
    Currency::parse("usd").unwrap()
}

fn at(id: &str) -> At<'_> {
    At {
        txn_id: id,
        now: 100,
        livemode: false,
        held_by: None,
    }
}

/// Tender's card fee of `amount`.
fn fee(amount: i64) -> Fee<'static> {
    Fee {
        amount,
        kind: FeeType::TenderFee,
        description: "Card fee",
    }
}

/// The ledger balances after `postings`, by account.
fn apply(postings: &[&Posting]) -> HashMap<LedgerAccount, i64> {
    let mut out = HashMap::new();
    for p in postings {
        for e in p.entries() {
            *out.entry(e.account).or_insert(0) += e.amount;
        }
    }
    out
}

#[test]
fn each_movement_books_the_transaction_and_the_posting_that_agree() {
    use LedgerAccount::*;
    // (booking, type, amount, fee, net, status, the posting's entries by account)
    let charge = charge(at("txn_c"), "pay_1", usd(), 1000, fee(59), 500).unwrap();
    let refund = refund(at("txn_r"), "re_1", "pay_1", usd(), 300).unwrap();
    let refund_failure = refund_failure(at("txn_rf"), "re_1", usd(), 300).unwrap();
    let payout = payout(at("txn_p"), "po_1", usd(), 400).unwrap();
    let payout_failure = payout_failure(at("txn_pf"), "po_1", usd(), 400, false).unwrap();
    let dispute = dispute(at("txn_d"), "dp_1", "pay_1", usd(), 1000, 1500).unwrap();
    let won = dispute_won(at("txn_w"), "dp_1", "pay_1", usd(), 1000).unwrap();
    type Row<'a> = (
        &'a Booking,
        TxnType,
        i64,
        i64,
        i64,
        TxnStatus,
        Vec<(LedgerAccount, i64)>,
    );
    #[rustfmt::skip]
    let table: Vec<Row<'_>> = vec![
        (&charge, TxnType::Charge, 1000, 59, 941, TxnStatus::Pending, vec![(External, -1000), (Pending, 941), (Fees, 59)]),
        (&refund, TxnType::Refund, -300, 0, -300, TxnStatus::Available, vec![(Available, -300), (External, 300)]),
        (&refund_failure, TxnType::RefundFailure, 300, 0, 300, TxnStatus::Available, vec![(External, -300), (Available, 300)]),
        (&payout, TxnType::Payout, -400, 0, -400, TxnStatus::Available, vec![(Available, -400), (PayoutsInTransit, 400)]),
        (&payout_failure, TxnType::PayoutFailure, 400, 0, 400, TxnStatus::Available, vec![(PayoutsInTransit, -400), (Available, 400)]),
        (&dispute, TxnType::Adjustment, -1000, 1500, -2500, TxnStatus::Available, vec![(Available, -2500), (Disputes, 1000), (Fees, 1500)]),
        (&won, TxnType::Adjustment, 1000, 0, 1000, TxnStatus::Available, vec![(Disputes, -1000), (Available, 1000)]),
    ];
    // Causes are distinct per movement, so each posts once.
    let causes: std::collections::HashSet<&str> = table
        .iter()
        .map(|r| r.0.posting.as_ref().unwrap().cause())
        .collect();
    assert_eq!(causes.len(), 7);
    for (booking, kind, amount, fee, net, status, entries) in table {
        let txn = booking.transaction.as_ref().unwrap();
        assert_eq!(
            (txn.kind, txn.amount, txn.fee, txn.net, txn.status),
            (kind, amount, fee, net, status),
            "{txn:?}"
        );
        assert_eq!(txn.net, txn.amount - txn.fee);
        let got: Vec<(LedgerAccount, i64)> = booking
            .posting
            .as_ref()
            .unwrap()
            .entries()
            .iter()
            .map(|e| (e.account, e.amount))
            .collect();
        assert_eq!(got, entries, "{}", txn.id);
        // The transaction's net is exactly what the merchant's balance (pending + available) moves.
        let balance: i64 = got
            .iter()
            .filter(|(a, _)| matches!(a, Pending | Available))
            .map(|(_, m)| m)
            .sum();
        assert_eq!(balance, txn.net, "{}", txn.id);
    }
    assert_eq!(charge.transaction.as_ref().unwrap().available_on, 500);
    assert_eq!(
        charge.transaction.as_ref().unwrap().fee_details[0].kind,
        FeeType::TenderFee
    );
    assert_eq!(
        dispute.transaction.as_ref().unwrap().fee_details[0].kind,
        FeeType::DisputeFee
    );
    assert_eq!(
        dispute.transaction.as_ref().unwrap().reporting_category,
        "dispute"
    );
}

#[test]
fn a_charge_becomes_available_and_movements_without_transactions_only_post() {
    use LedgerAccount::*;
    let c = charge(at("txn_c"), "pay_1", usd(), 1000, fee(59), 500).unwrap();
    let txn = c.transaction.clone().unwrap();
    let (after, moved) = make_available(&txn, 600).unwrap();
    assert_eq!(after.status, TxnStatus::Available);
    assert_eq!(after.net, 941);
    let paid = payout_paid(700, "po_1", usd(), 400).unwrap().unwrap();
    let lost = dispute_lost(700, "dp_1", usd(), 1000).unwrap().unwrap();
    let p = payout(at("txn_p"), "po_1", usd(), 400).unwrap();
    let d = dispute(at("txn_d"), "dp_1", "pay_1", usd(), 1000, 1500).unwrap();
    let all = [
        c.posting.as_ref().unwrap(),
        moved.as_ref().unwrap(),
        p.posting.as_ref().unwrap(),
        &paid,
        d.posting.as_ref().unwrap(),
        &lost,
    ];
    let balances = apply(&all);
    // 941 available − 400 paid out − 2,500 disputed: −1,959; the world got 400 + 1,000
    // and gave 1,000; fees 59 + 1,500.
    assert_eq!(balances[&Available], -1959);
    assert_eq!(balances[&Pending], 0);
    assert_eq!(balances[&PayoutsInTransit], 0);
    assert_eq!(balances[&Disputes], 0);
    assert_eq!(balances[&External], 400);
    assert_eq!(balances[&Fees], 1559);
    assert_eq!(balances.values().sum::<i64>(), 0);
}

#[test]
fn money_a_processor_holds_moves_through_its_own_accounts_and_names_it() {
    use LedgerAccount::*;
    let held = At {
        held_by: Some("conn_1"),
        ..at("txn_c")
    };
    let stripe_fee = Fee {
        amount: 103,
        kind: FeeType::ProcessorFee,
        description: "Stripe processing fees",
    };
    let c = charge(held, "pay_1", usd(), 2500, stripe_fee, 500).unwrap();
    let txn = c.transaction.clone().unwrap();
    assert_eq!(txn.connector.as_deref(), Some("conn_1"));
    assert_eq!(txn.fee_details[0].kind, FeeType::ProcessorFee);
    let (_, moved) = make_available(&txn, 600).unwrap();
    let r = refund(
        At {
            txn_id: "txn_r",
            ..held
        },
        "re_1",
        "pay_1",
        usd(),
        300,
    )
    .unwrap();
    let rf = refund_failure(
        At {
            txn_id: "txn_rf",
            ..held
        },
        "re_1",
        usd(),
        300,
    )
    .unwrap();
    let balances = apply(&[
        c.posting.as_ref().unwrap(),
        moved.as_ref().unwrap(),
        r.posting.as_ref().unwrap(),
        rf.posting.as_ref().unwrap(),
    ]);
    assert_eq!(balances[&ProcessorAvailable], 2397);
    assert_eq!(balances[&ProcessorPending], 0);
    assert_eq!(balances.get(&Available), None, "Tender holds none of it");
    assert_eq!(balances.get(&Pending), None);
    assert_eq!(balances[&Fees], 103);
}

#[test]
fn a_processors_dispute_and_payout_move_its_balance_as_it_booked_them() {
    use LedgerAccount::*;
    let held = |id| At {
        held_by: Some("conn_1"),
        ..at(id)
    };
    let dispute_fee = |amount| Fee {
        amount,
        kind: FeeType::ProcessorFee,
        description: "Dispute fee",
    };
    // Withdrawn with Stripe's 15.00 fee, then reinstated with the fee given back.
    let withdrawn =
        processor_dispute(held("txn_d"), "dp_1", 0, usd(), dispute_fee(1500), -1000).unwrap();
    let reinstated =
        processor_dispute(held("txn_w"), "dp_1", 1, usd(), dispute_fee(-1500), 1000).unwrap();
    let w = withdrawn.transaction.as_ref().unwrap();
    assert_eq!(
        (w.kind, w.amount, w.fee, w.net),
        (TxnType::Adjustment, -1000, 1500, -2500)
    );
    assert_eq!(w.connector.as_deref(), Some("conn_1"));
    assert_eq!(w.reporting_category, "dispute");
    let r = reinstated.transaction.as_ref().unwrap();
    assert_eq!((r.amount, r.fee, r.net), (1000, -1500, 2500));
    assert_eq!(r.reporting_category, "dispute_reversal");
    assert_ne!(
        withdrawn.posting.as_ref().unwrap().cause(),
        reinstated.posting.as_ref().unwrap().cause()
    );
    let p = payout(held("txn_p"), "po_1", usd(), 400).unwrap();
    let paid = payout_paid(700, "po_1", usd(), 400).unwrap().unwrap();
    // A processor's payout may fail after it was paid: the money comes back from the bank.
    let failed = payout_failure(held("txn_pf"), "po_1", usd(), 400, true).unwrap();
    let balances = apply(&[
        withdrawn.posting.as_ref().unwrap(),
        reinstated.posting.as_ref().unwrap(),
        p.posting.as_ref().unwrap(),
        &paid,
        failed.posting.as_ref().unwrap(),
    ]);
    assert_eq!(balances[&ProcessorAvailable], 0);
    assert_eq!(balances[&Disputes], 0);
    assert_eq!(balances[&Fees], 0);
    assert_eq!(balances[&PayoutsInTransit], 0);
    assert_eq!(balances[&External], 0);
    assert_eq!(balances.get(&Available), None, "Tender holds none of it");
}

#[test]
fn nothing_moves_nothing_is_posted() {
    // A free card price: the charge has no fee line; a fee equal to the amount leaves no
    // pending entry.
    let free = charge(at("txn_c"), "pay_1", usd(), 1000, fee(0), 5).unwrap();
    assert!(free.transaction.as_ref().unwrap().fee_details.is_empty());
    assert_eq!(free.posting.as_ref().unwrap().entries().len(), 2);
    let all_fee = charge(at("txn_c"), "pay_1", usd(), 30, fee(30), 5).unwrap();
    let (_, moved) = make_available(all_fee.transaction.as_ref().unwrap(), 6).unwrap();
    assert_eq!(moved, None);
    // A fee above the amount leaves a negative pending net, moved like any other.
    let over = charge(at("txn_c"), "pay_1", usd(), 10, fee(30), 5).unwrap();
    assert_eq!(over.transaction.as_ref().unwrap().net, -20);
    let (_, moved) = make_available(over.transaction.as_ref().unwrap(), 6).unwrap();
    let e: Vec<i64> = moved.unwrap().entries().iter().map(|e| e.amount).collect();
    assert_eq!(e, vec![20, -20]);
}

#[test]
fn wire_names() {
    for t in TxnType::ALL {
        assert_eq!(TxnType::parse(t.as_str()), Some(t));
        assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
    }
    assert_eq!(
        PayoutStatus::parse("in_transit"),
        Some(PayoutStatus::InTransit)
    );
    assert_eq!(
        serde_json::to_value(DisputeStatus::NeedsResponse).unwrap(),
        "needs_response"
    );
}
