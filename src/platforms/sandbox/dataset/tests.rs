//! Unit tests of the sandbox's synthetic data.

use super::*;

fn dataset(seed: u64, invoice_count: u64) -> Dataset {
    Dataset::invoices_only(seed, invoice_count)
}

#[test]
fn amended_invoices_are_as_many_as_asked_spread_evenly_and_change_only_note_and_date() {
    let plain = dataset(4, 1000);
    let amended = dataset(4, 1000).with_changed_invoices(30);
    let changed: Vec<u64> = (0..1000).filter(|index| amended.amended(*index)).collect();
    assert_eq!(changed.len(), 30);
    assert_eq!(changed.first(), Some(&0));
    assert!(changed.windows(2).all(|pair| pair[1] - pair[0] == 33));
    for index in 0..1000 {
        let (before, after) = (plain.invoice(index), amended.invoice(index));
        if changed.contains(&index) {
            assert_ne!(before.note, after.note);
            assert!(after.source_modified_date > before.source_modified_date);
            assert_eq!(before.total_amount, after.total_amount);
            assert_eq!(before.status, after.status);
        } else {
            assert_eq!(before, after);
        }
    }
    let every = dataset(4, 10).with_changed_invoices(25);
    assert!(
        (0..10).all(|index| every.amended(index)),
        "at most the list"
    );
}

#[test]
fn orders_are_internally_consistent_and_use_every_status() {
    let data = Dataset {
        order_count: 2000,
        ..dataset(9, 0)
    };
    let mut seen = std::collections::HashSet::new();
    for index in 0..2000 {
        let order = data.order(index);
        seen.insert(order.status);
        assert_eq!(
            order.total_amount.0,
            order.sub_total.0 - order.total_discount.0 + order.total_tax_amount.0
        );
        match order.status {
            OrderStatus::Refunded => assert_eq!(order.total_refunded, order.total_amount),
            OrderStatus::PartiallyRefunded => {
                assert!(order.total_refunded.0 > 0 && order.total_refunded.0 < order.total_amount.0)
            }
            _ => assert_eq!(order.total_refunded.0, 0),
        }
        assert_eq!(
            order.closed_date.is_none(),
            order.status == OrderStatus::Pending || order.status == OrderStatus::Open
        );
    }
    assert_eq!(seen.len(), ORDER_STATUSES.len());
}

#[test]
fn bank_transactions_are_on_the_sandbox_accounts_both_ways() {
    let data = Dataset {
        bank_transaction_count: 500,
        ..dataset(3, 0)
    };
    let accounts: Vec<String> = data
        .bank_accounts(0)
        .records
        .into_iter()
        .map(|account| account.account_id)
        .collect();
    assert_eq!(accounts.len() as u64, BANK_ACCOUNT_COUNT);
    let transactions = data.bank_transactions(0).records;
    assert!(
        transactions
            .iter()
            .all(|t| accounts.contains(&t.account_id))
    );
    assert!(transactions.iter().any(|t| t.amount.0 > 0));
    assert!(transactions.iter().any(|t| t.amount.0 < 0));
    assert!(
        transactions
            .iter()
            .any(|t| t.status == BankTransactionStatus::Pending)
    );
}

#[test]
fn the_same_seed_gives_the_same_data_and_another_seed_other_data() {
    assert_eq!(dataset(7, 10).invoice(3), dataset(7, 10).invoice(3));
    assert_ne!(dataset(7, 10).invoice(3), dataset(8, 10).invoice(3));
}

#[test]
fn invoices_are_internally_consistent() {
    let data = dataset(42, 2000);
    let mut seen_statuses = std::collections::HashSet::new();
    for index in 0..2000 {
        let invoice = data.invoice(index);
        seen_statuses.insert(invoice.status);
        let line_total: i64 = invoice
            .line_items
            .iter()
            .map(|item| item.total_amount.0)
            .sum();
        assert_eq!(line_total, invoice.total_amount.0);
        assert_eq!(
            invoice.total_amount.0,
            invoice.sub_total.0 + invoice.total_tax_amount.0
        );
        match invoice.status {
            InvoiceStatus::Paid => assert_eq!(invoice.amount_due.0, 0),
            InvoiceStatus::PartiallyPaid => {
                assert!(invoice.amount_due.0 > 0 && invoice.amount_due.0 < invoice.total_amount.0)
            }
            InvoiceStatus::Submitted | InvoiceStatus::Draft => {
                assert_eq!(invoice.amount_due, invoice.total_amount)
            }
            _ => {}
        }
        assert!(invoice.due_date.expect("due") > invoice.issue_date);
        assert!(index < data.invoice_count);
    }
    assert_eq!(seen_statuses.len(), 5, "a realistic mix of statuses");
}

#[test]
fn pages_cover_every_record_once() {
    let data = dataset(1, 2500);
    let mut start = Some(0_u64);
    let mut fetched = 0;
    while let Some(at) = start {
        let page = data.invoices(at);
        fetched += page.records.len();
        start = page.next.map(|next| next.parse().expect("a number"));
    }
    assert_eq!(fetched, 2500);
    assert!(data.invoices(2500).records.is_empty());
}
