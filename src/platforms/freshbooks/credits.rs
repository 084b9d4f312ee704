//! FreshBooks' credit notes (`GET …/credit_notes/credit_notes?include[]=lines`,
//! read whole each sync: they have no `updated` field) and how they become
//! ours. FreshBooks documents no allocation of a credit to an invoice: the
//! only link is a payments row made `from_credit` naming the credit
//! (`creditid`) and the invoice, so a credit note's allocations, the credit
//! that remains and its status are inferred from those rows, not read.
//! Deleted credit notes (`vis_state` 1) are left out. Sources: `NOTES.md`,
//! "Accounting model", creditNotes.

use std::collections::HashMap;

use serde::Deserialize;

use super::FreshBooksAuthorization;
use super::connector::{FreshBooksConnector, more};
use super::mapping::{DELETED, FbId, FbMoney, FreshBooksLine, amount, lines_and_totals, name};
use crate::data::credit_notes::{
    CreditNote, CreditNoteAllocation, CreditNoteStatus, CreditNotes, status_by_remaining,
};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::platforms::connector::{Connector, ConnectorError, Fetched, Syncs};
use crate::platforms::kit::json;
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// The credit notes list: its path, and what a page of it is called in
/// messages.
const CREDIT_NOTES: (&str, &str) = ("credit_notes/credit_notes", "a page of credit notes");

/// A page of `GET …/credit_notes/credit_notes`.
#[derive(Deserialize)]
pub(super) struct CreditNotesPage {
    /// The credit notes.
    #[serde(default)]
    credit_notes: Each<FreshBooksCreditNote>,
    /// How many pages the list has (its `total` counts the deleted credit
    /// notes left out, so it is not read).
    pages: Option<u64>,
}

/// A credit note as FreshBooks writes it (with `include[]=lines`).
#[derive(Deserialize)]
pub(super) struct FreshBooksCreditNote {
    id: Option<i64>,
    creditid: Option<i64>,
    credit_number: Option<String>,
    clientid: Option<FbId>,
    organization: Option<String>,
    fname: Option<String>,
    lname: Option<String>,
    create_date: Option<String>,
    currency_code: Option<String>,
    amount: Option<FbMoney>,
    display_status: Option<String>,
    vis_state: Option<i64>,
    notes: Option<String>,
    #[serde(default)]
    lines: Vec<FreshBooksLine>,
}

impl Keyed for FreshBooksCreditNote {
    const ID: &'static str = "/id";
}

/// The credit applied to invoices, by credit note id: the payments rows
/// made from a credit ([`super::receipts::FreshBooksPayment::credit_applied`]).
#[derive(Default)]
pub(super) struct Applied(HashMap<String, Vec<CreditNoteAllocation>>);

impl Applied {
    /// Every credit applied, under the credit it names.
    pub(super) fn of_all(
        applied: impl IntoIterator<Item = (String, CreditNoteAllocation)>,
    ) -> Self {
        let mut by_credit: HashMap<String, Vec<CreditNoteAllocation>> = HashMap::new();
        for (credit_id, allocation) in applied {
            by_credit.entry(credit_id).or_default().push(allocation);
        }
        Self(by_credit)
    }

    /// The allocations of credit note `id`, oldest first.
    fn of(&self, id: &str) -> Vec<CreditNoteAllocation> {
        let mut allocations = self.0.get(id).cloned().unwrap_or_default();
        allocations.sort_by_key(|allocation| allocation.allocated_on_date);
        allocations
    }
}

/// What remains of a credit note of `total` once `allocated`, and its
/// status: `draft` (FreshBooks' `display_status`) is a draft; an issued one
/// is Paid when nothing remains, PartiallyPaid when some was used, else
/// Submitted. Allocations beyond the total cannot be right (the inference
/// from payments rows, or the rows, are wrong): the record is unreadable.
pub(super) fn standing(
    display_status: Option<&str>,
    total: Money,
    allocated: Money,
) -> Result<(Money, CreditNoteStatus), Unreadable> {
    if allocated > total {
        return Err(Unreadable::record(
            "the payments made from this credit add up to more than its amount",
        ));
    }
    let remaining = Money((total - allocated).0.max(0));
    let draft = display_status.is_some_and(|word| word.trim().eq_ignore_ascii_case("draft"));
    let status = if draft {
        CreditNoteStatus::Draft
    } else {
        status_by_remaining(total, remaining)
    };
    Ok((remaining, status))
}

impl FreshBooksCreditNote {
    /// Whether it was deleted (left out).
    fn is_deleted(&self) -> bool {
        self.vis_state == Some(DELETED)
    }

    /// Our credit note with the credit `applied` from it; `None` when
    /// deleted. One without an id or a readable `create_date`, or whose
    /// allocations exceed its amount, cannot be read.
    pub(super) fn into_record(self, applied: &Applied) -> Result<Option<CreditNote>, Unreadable> {
        if self.is_deleted() {
            return Ok(None);
        }
        let credit_note_id = self
            .id
            .or(self.creditid)
            .map(|id| id.to_string())
            .ok_or_else(|| Unreadable::field("id", "is missing, and so is creditid"))?;
        let issue_date = json::required_date(self.create_date.as_deref(), "create_date")?;
        let total = amount(self.amount);
        let (line_items, sub_total, tax) = lines_and_totals(self.lines, total, Money(0));
        let allocations = applied.of(&credit_note_id);
        let allocated = allocations
            .iter()
            .fold(Money(0), |sum, allocation| sum + allocation.amount);
        let (remaining_credit, status) =
            standing(self.display_status.as_deref(), total, allocated)?;
        Ok(Some(CreditNote {
            credit_note_number: json::non_empty(self.credit_number),
            customer_ref: CustomerRef::to(
                self.clientid.and_then(FbId::named),
                name(self.organization, self.fname, self.lname),
            ),
            issue_date,
            currency: self.currency_code.unwrap_or_default(),
            sub_total,
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit,
            status,
            line_items,
            allocations,
            note: json::non_empty(self.notes),
            // FreshBooks' credit notes carry no `updated`.
            source_modified_date: None,
            credit_note_id,
        }))
    }
}

impl FreshBooksConnector {
    /// Every credit applied to an invoice, from every page of the payments
    /// list (read as the payments data type reads it, whole).
    async fn credits_applied(
        &self,
        credentials: &FreshBooksAuthorization,
    ) -> Result<Applied, ConnectorError> {
        let mut applied = Vec::new();
        let mut page = PageNumber(1);
        loop {
            let result = self.payments_page(credentials, page, None).await?;
            applied.extend(
                result
                    .payments
                    .read(|payment| Ok(payment.credit_applied()))
                    .records,
            );
            if !more(page, result.pages) {
                return Ok(Applied::of_all(applied));
            }
            page = PageNumber(page.0 + 1);
        }
    }
}

impl Syncs<CreditNotes> for FreshBooksConnector {
    /// A page of credit notes with their lines, and (when the page has one
    /// not deleted) the credits applied, from the whole payments list.
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: CreditNotesPage = self
            .list(credentials, CREDIT_NOTES, (page, None), &["lines"])
            .await?;
        let applied = if result.credit_notes.any(|note| !note.is_deleted()) {
            self.credits_applied(credentials).await?
        } else {
            Applied::default()
        };
        let read = result
            .credit_notes
            .read(|credit_note| credit_note.into_record(&applied));
        // Deleted credit notes are left out, so the list's total is not ours.
        Ok(Fetched::read(read, page.next(more(page, result.pages))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cents(cents: i64) -> Money {
        Money::from_cents(cents)
    }

    #[test]
    fn what_is_left_of_a_credit_decides_its_status() {
        let total = cents(11_300);
        for (display, allocated, remaining, status) in [
            ("created", cents(0), total, CreditNoteStatus::Submitted),
            (
                "sent",
                cents(800),
                cents(10_500),
                CreditNoteStatus::PartiallyPaid,
            ),
            ("viewed", total, cents(0), CreditNoteStatus::Paid),
            ("draft", cents(0), total, CreditNoteStatus::Draft),
        ] {
            assert_eq!(
                standing(Some(display), total, allocated).expect("readable"),
                (remaining, status),
                "{display}"
            );
        }
        assert_eq!(
            standing(None, total, cents(1)).expect("readable"),
            (cents(11_299), CreditNoteStatus::PartiallyPaid)
        );
    }

    #[test]
    fn allocations_beyond_the_total_are_an_issue() {
        let problem = standing(Some("sent"), cents(2_000), cents(2_001))
            .expect_err("more allocated than the credit");
        assert!(
            problem.to_string().contains("more than its amount"),
            "{problem}"
        );
    }

    fn credit_note(extra: &str) -> FreshBooksCreditNote {
        serde_json::from_str(&format!(
            r#"{{"creditid": 6002, "credit_number": "CN-0002", "clientid": 301,
                "organization": "Maple Leaf Foods", "create_date": "2026-10-10",
                "currency_code": "CAD", "amount": {{"amount": "56.50", "code": "CAD"}},
                "display_status": "sent", "notes": "Damaged goods",
                "lines": [{{"name": "Widgets", "description": "returned", "qty": "2",
                  "unit_cost": {{"amount": "25.00", "code": "CAD"}},
                  "amount": {{"amount": "50.00", "code": "CAD"}},
                  "taxName1": "HST", "taxAmount1": "13"}}]{extra}}}"#
        ))
        .expect("a credit note")
    }

    fn applied(allocations: &[(&str, &str, i64, &str)]) -> Applied {
        Applied::of_all(allocations.iter().map(|(credit, invoice, cents, day)| {
            (
                (*credit).to_owned(),
                CreditNoteAllocation {
                    invoice_ref: crate::data::credit_notes::InvoiceRef {
                        id: (*invoice).to_owned(),
                        invoice_number: None,
                    },
                    amount: Money::from_cents(*cents),
                    allocated_on_date: json::date(day),
                },
            )
        }))
    }

    #[test]
    fn a_credit_note_reads_like_an_invoice_with_the_credit_applied_from_it() {
        let applied = applied(&[
            ("6002", "500017", 500, "2026-10-27"),
            ("6002", "500016", 300, "2026-10-26"),
            ("6001", "500017", 1_200, "2026-10-26"),
        ]);
        let read = credit_note("")
            .into_record(&applied)
            .expect("readable")
            .expect("kept");
        assert_eq!(read.credit_note_id, "6002", "creditid when no id");
        assert_eq!(read.credit_note_number.as_deref(), Some("CN-0002"));
        assert_eq!(
            read.customer_ref
                .as_ref()
                .map(|customer| customer.id.as_str()),
            Some("301")
        );
        assert_eq!(read.total_amount, cents(5_650));
        assert_eq!(read.sub_total, cents(5_000));
        assert_eq!(read.total_tax_amount, cents(650));
        assert_eq!(read.line_items.len(), 1);
        assert_eq!(read.line_items[0].tax_amount, cents(650));
        assert_eq!(read.line_items[0].description, "Widgets: returned");
        let invoices: Vec<&str> = read
            .allocations
            .iter()
            .map(|allocation| allocation.invoice_ref.id.as_str())
            .collect();
        assert_eq!(invoices, ["500016", "500017"], "its own, oldest first");
        assert_eq!(read.allocated(), cents(800));
        assert_eq!(read.remaining_credit, cents(4_850));
        assert_eq!(read.status, CreditNoteStatus::PartiallyPaid);
        assert_eq!(read.note.as_deref(), Some("Damaged goods"));
    }

    #[test]
    fn deleted_credit_notes_are_left_out_and_over_allocated_ones_are_issues() {
        let none = Applied::default();
        let deleted = credit_note(r#", "vis_state": 1"#);
        assert!(deleted.into_record(&none).expect("readable").is_none());
        let over = applied(&[("6002", "500017", 6_000, "2026-10-27")]);
        assert!(credit_note("").into_record(&over).is_err());
        let unused = credit_note("").into_record(&none).expect("readable");
        let unused = unused.expect("kept");
        assert_eq!(unused.remaining_credit, unused.total_amount);
        assert_eq!(unused.status, CreditNoteStatus::Submitted);
    }
}
