//! Exact's purchase entries (`purchaseentry/PurchaseEntries`, lines
//! expanded) as our bills: type 30 only (31 is a purchase credit note),
//! status 5 rejected, 20 open (still editable), 50 processed; each line's
//! G/L account and VAT code named so they resolve in the same connection.
//! Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::chart::{account_ref, modified, tax_rate_ref};
use crate::data::bills::{Bill, BillLineItem, BillStatus};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Rounded, rounded};
use crate::platforms::kit::records::{Keyed, Unreadable};

/// The purchase entry fields read, lines included (`$select` with `$expand`).
pub(super) const PURCHASE_ENTRY_FIELDS: &str = "EntryID,EntryNumber,YourRef,Supplier,SupplierName,\
EntryDate,DueDate,Currency,AmountFC,VATAmountFC,Status,Type,Description,Modified,\
PurchaseEntryLines/Description,PurchaseEntryLines/Quantity,PurchaseEntryLines/AmountFC,\
PurchaseEntryLines/VATAmountFC,PurchaseEntryLines/GLAccount,PurchaseEntryLines/GLAccountDescription,\
PurchaseEntryLines/VATCode,PurchaseEntryLines/VATCodeDescription";

/// Exact's purchase entry type of a bill (31 is a purchase credit note).
const BILL: i64 = 30;

/// Our status of a purchase entry's `Status`. A processed entry carries no
/// payment state, so it is `Open` with its whole total due (`NOTES.md`).
pub(super) fn bill_status(status: Option<i64>) -> BillStatus {
    match status {
        Some(5) => BillStatus::Void,
        Some(20) => BillStatus::Draft,
        Some(50) => BillStatus::Open,
        _ => BillStatus::Unknown,
    }
}

/// A purchase entry as Exact writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct PurchaseEntry {
    #[serde(rename = "EntryID")]
    entry_id: String,
    entry_number: Option<i64>,
    your_ref: Option<String>,
    supplier: Option<String>,
    supplier_name: Option<String>,
    entry_date: Option<String>,
    due_date: Option<String>,
    currency: Option<String>,
    #[serde(rename = "AmountFC")]
    amount_fc: Option<Rounded>,
    #[serde(rename = "VATAmountFC")]
    vat_amount_fc: Option<Rounded>,
    status: Option<i64>,
    #[serde(rename = "Type")]
    kind: Option<i64>,
    description: Option<String>,
    modified: Option<String>,
    purchase_entry_lines: Option<EntryLines>,
}

impl Keyed for PurchaseEntry {
    const ID: &'static str = "/EntryID";
}

/// `PurchaseEntryLines`, expanded (`{"results": [...]}`); deferred reads as none.
#[derive(Deserialize)]
struct EntryLines {
    #[serde(default)]
    results: Vec<EntryLine>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct EntryLine {
    description: Option<String>,
    quantity: Option<Rounded>,
    #[serde(rename = "AmountFC")]
    amount_fc: Option<Rounded>,
    #[serde(rename = "VATAmountFC")]
    vat_amount_fc: Option<Rounded>,
    #[serde(rename = "GLAccount")]
    gl_account: Option<String>,
    #[serde(rename = "GLAccountDescription")]
    gl_account_description: Option<String>,
    #[serde(rename = "VATCode")]
    vat_code: Option<String>,
    #[serde(rename = "VATCodeDescription")]
    vat_code_description: Option<String>,
}

impl PurchaseEntry {
    /// Whether it is a bill (not a purchase credit note).
    pub(super) fn is_bill(&self) -> bool {
        self.kind == Some(BILL)
    }

    /// Our bill: total `AmountFC` (VAT included), tax `VATAmountFC`; each
    /// line's `AmountFC` before VAT, its unit price that over the quantity.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let issue_date = self
            .entry_date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("EntryDate", "is missing or not a date"))?;
        let total = rounded(self.amount_fc);
        let tax = rounded(self.vat_amount_fc);
        let line_items = self
            .purchase_entry_lines
            .map(|lines| lines.results)
            .unwrap_or_default()
            .into_iter()
            .map(|line| {
                let sub_total = rounded(line.amount_fc);
                let tax_amount = rounded(line.vat_amount_fc);
                let quantity = line.quantity.map_or(Quantity::units(1), Rounded::quantity);
                BillLineItem {
                    description: line.description.unwrap_or_default(),
                    unit_amount: json::per_unit(sub_total, quantity),
                    quantity,
                    discount_amount: Money(0),
                    sub_total,
                    tax_amount,
                    total_amount: sub_total + tax_amount,
                    account_ref: account_ref(line.gl_account, line.gl_account_description),
                    tax_rate_ref: tax_rate_ref(line.vat_code, line.vat_code_description),
                }
            })
            .collect();
        Ok(Bill {
            reference: json::non_empty(self.your_ref)
                .or_else(|| self.entry_number.map(|number| number.to_string())),
            supplier_ref: SupplierRef::to(
                json::non_empty(self.supplier),
                json::non_empty(self.supplier_name),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::xero_date),
            paid_on_date: None,
            currency: self.currency.unwrap_or_default(),
            sub_total: total - tax,
            tax_amount: tax,
            total_amount: total,
            // No payment state on the entry: all of it counts as due.
            amount_due: total,
            status: bill_status(self.status),
            line_items,
            note: json::non_empty(self.description),
            source_modified_date: modified(self.modified.as_deref()),
            bill_id: self.entry_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purchase_entry_statuses_map_by_code() {
        assert_eq!(bill_status(Some(5)), BillStatus::Void);
        assert_eq!(bill_status(Some(20)), BillStatus::Draft);
        assert_eq!(bill_status(Some(50)), BillStatus::Open);
        assert_eq!(bill_status(Some(10)), BillStatus::Unknown);
        assert_eq!(bill_status(None), BillStatus::Unknown);
    }
}
