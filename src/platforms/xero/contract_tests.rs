//! Xero's answers as its Accounting API document describes them
//! (`tests/contracts/xero.json`, `xero.identity.json`), read as the
//! connector reads them: the documented examples and the bodies
//! `kit::openapi_contract` makes from the schemas (`NOTES.md`, "Contract").

use serde_json::{Value, json};

use super::company::{ItemsAnswer, OrganisationAnswer};
use super::journals::JournalsAnswer;
use super::mapping::{
    ContactsPage, CreditNotesPage, InvoicesPage, XeroConnection, XeroCreditNote, XeroInvoice,
    invoice_status,
};
use super::payments::{Found, PaymentsPage};
use crate::data::bill_payments::BillPayment;
use crate::data::bills::Bill;
use crate::data::company_info::CompanyInfo;
use crate::data::credit_notes::CreditNote;
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{Invoice, InvoiceStatus};
use crate::data::items::Item;
use crate::data::journal_entries::JournalEntry;
use crate::data::money::Money;
use crate::data::payments::Payment;
use crate::platforms::kit::openapi_contract::{Document, NEW_VALUE, Needed, hold, set, whole};
use crate::platforms::kit::records::Read;

/// A page of invoices as `Syncs<Invoices>::page` reads it.
fn invoices(text: &str) -> Result<Read<Invoice>, String> {
    let page: InvoicesPage = serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(page.invoices.read(XeroInvoice::into_sale))
}

/// A page of contacts as `Syncs<Customers>::page` reads it.
fn contacts(text: &str) -> Result<Read<Customer>, String> {
    let page: ContactsPage = serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(page.contacts.read(|contact| Ok(contact.into_customer())))
}

/// The one invoice a body holds, read.
fn invoice(body: &Value) -> Invoice {
    let mut read = invoices(&body.to_string()).expect("the page reads");
    assert!(read.issues.is_empty(), "{:?}", read.issues);
    read.records.remove(0)
}

#[test]
fn every_invoices_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Invoices");
    let mut bodies = answer.bodies();
    // The connector asks for `where=Type=="ACCREC"`: Xero sends no other type.
    bodies.pin("Invoices.0.Type", json!("ACCREC"));
    let needed = [
        Needed {
            place: "Invoices.0.InvoiceID",
            field: "InvoiceID",
            why: "an invoice is kept under its id: without one it cannot be stored or updated",
        },
        Needed {
            place: "Invoices.0.Date",
            field: "Date",
            why: "our invoice has an issue date; Xero sets one on every invoice it stores",
        },
    ];
    hold(&answer, &bodies, invoices, &needed);
}

/// A page of bills as `Syncs<Bills>::page` reads it.
fn bills(text: &str) -> Result<Read<Bill>, String> {
    let page: InvoicesPage = serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(page.invoices.read(XeroInvoice::into_purchase))
}

/// A page of payments as `Syncs<Payments>::page` reads it.
fn payments(text: &str) -> Result<Read<Payment>, String> {
    let page: PaymentsPage = serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(page.payments.read(|payment| {
        Ok(match payment.into_payment()? {
            Found::Record(payment) => Some(*payment),
            Found::Deleted(_) | Found::NotOurs => None,
        })
    }))
}

/// A page of payments as `Syncs<BillPayments>::page` reads it.
fn bill_payments(text: &str) -> Result<Read<BillPayment>, String> {
    let page: PaymentsPage = serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(page.payments.read(|payment| {
        Ok(match payment.into_bill_payment()? {
            Found::Record(payment) => Some(*payment),
            Found::Deleted(_) | Found::NotOurs => None,
        })
    }))
}

#[test]
fn every_bills_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Invoices");
    let mut bodies = answer.bodies();
    // The connector asks for `where=Type=="ACCPAY"`: Xero sends no other type.
    bodies.pin("Invoices.0.Type", json!("ACCPAY"));
    let needed = [
        Needed {
            place: "Invoices.0.InvoiceID",
            field: "InvoiceID",
            why: "a bill is kept under its id",
        },
        Needed {
            place: "Invoices.0.Date",
            field: "Date",
            why: "our bill has an issue date; Xero sets one on every bill it stores",
        },
    ];
    hold(&answer, &bodies, bills, &needed);
}

#[test]
fn every_payments_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Payments");
    let mut bodies = answer.bodies();
    // A receivable payment that is not deleted is one the connector reads whole.
    bodies.pin("Payments.0.PaymentType", json!("ACCRECPAYMENT"));
    bodies.pin("Payments.0.Status", json!("AUTHORISED"));
    bodies.invalid_example(
        "example",
        "Xero's example writes the embedded BatchPayment's TotalAmount and IsReconciled as strings (\"50.00\", \"false\"), \
         where its schema has a number and a boolean; the connector does not read the batch",
    );
    let needed = [
        Needed {
            place: "Payments.0.PaymentID",
            field: "PaymentID",
            why: "a payment is kept under its id",
        },
        Needed {
            place: "Payments.0.Date",
            field: "Date",
            why: "our payment has a date; Xero sets one on every payment it stores",
        },
    ];
    hold(&answer, &bodies, payments, &needed);
}

#[test]
fn every_bill_payments_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Payments");
    let mut bodies = answer.bodies();
    // A payable payment that is not deleted is one the connector reads whole.
    bodies.pin("Payments.0.PaymentType", json!("ACCPAYPAYMENT"));
    bodies.pin("Payments.0.Status", json!("AUTHORISED"));
    bodies.invalid_example(
        "example",
        "Xero's example writes the embedded BatchPayment's TotalAmount and IsReconciled as strings (\"50.00\", \"false\"), \
         where its schema has a number and a boolean; the connector does not read the batch",
    );
    let needed = [
        Needed {
            place: "Payments.0.PaymentID",
            field: "PaymentID",
            why: "a bill payment is kept under its id",
        },
        Needed {
            place: "Payments.0.Date",
            field: "Date",
            why: "our bill payment has a date; Xero sets one on every payment it stores",
        },
    ];
    hold(&answer, &bodies, bill_payments, &needed);
}

/// A page of credit notes as `Syncs<CreditNotes>::page` reads it.
fn credit_notes(text: &str) -> Result<Read<CreditNote>, String> {
    let page: CreditNotesPage = serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(page.credit_notes.read(XeroCreditNote::into_sale))
}

#[test]
fn every_credit_notes_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/CreditNotes");
    let mut bodies = answer.bodies();
    // The connector asks for `where=Type=="ACCRECCREDIT"`: Xero sends no other type.
    bodies.pin("CreditNotes.0.Type", json!("ACCRECCREDIT"));
    let needed = [
        Needed {
            place: "CreditNotes.0.CreditNoteID",
            field: "CreditNoteID",
            why: "a credit note is kept under its id",
        },
        Needed {
            place: "CreditNotes.0.Date",
            field: "Date",
            why: "our credit note has an issue date; Xero sets one on every credit note it stores",
        },
    ];
    hold(&answer, &bodies, credit_notes, &needed);
}

/// The items as `Syncs<Items>::page` reads them (with an empty chart).
fn items(text: &str) -> Result<Read<Item>, String> {
    let answer: ItemsAnswer = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let accounts = Default::default();
    Ok(answer
        .items
        .read(|item| Ok(Some(item.into_record(&accounts)))))
}

/// The organisation as `Syncs<CompanyInfos>::page` reads it.
fn organisation(text: &str) -> Result<Read<CompanyInfo>, String> {
    let answer: OrganisationAnswer =
        serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(answer
        .organisations
        .read(|organisation| Ok(Some(organisation.into_record()))))
}

#[test]
fn every_items_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Items");
    let bodies = answer.bodies();
    let needed = [Needed {
        place: "Items.0.ItemID",
        field: "ItemID",
        why: "an item is kept under its id",
    }];
    hold(&answer, &bodies, items, &needed);
}

#[test]
fn every_organisation_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Organisation");
    let bodies = answer.bodies();
    let needed = [Needed {
        place: "Organisations.0.OrganisationID",
        field: "OrganisationID",
        why: "the company info is kept under the organisation's id",
    }];
    hold(&answer, &bodies, organisation, &needed);
}

/// The journals as `Syncs<JournalEntries>::page` reads them.
fn journals(text: &str) -> Result<Read<JournalEntry>, String> {
    let answer: JournalsAnswer = serde_json::from_str(text).map_err(|error| error.to_string())?;
    Ok(answer
        .journals
        .read(|journal| journal.into_record().map(Some)))
}

#[test]
fn every_journals_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Journals");
    let bodies = answer.bodies();
    let needed = [
        Needed {
            place: "Journals.0.JournalID",
            field: "JournalID",
            why: "a journal entry is kept under its id",
        },
        Needed {
            place: "Journals.0.JournalDate",
            field: "JournalDate",
            why: "our journal entry has a posting date; Xero dates every journal it posts",
        },
    ];
    hold(&answer, &bodies, journals, &needed);
}

#[test]
fn every_contacts_answer_xeros_document_allows_is_read() {
    let document = Document::load("xero.json");
    let answer = document.answer("GET", "/Contacts");
    let bodies = answer.bodies();
    let needed = [Needed {
        place: "Contacts.0.ContactID",
        field: "ContactID",
        why: "a customer is kept under its id",
    }];
    hold(&answer, &bodies, contacts, &needed);
}

#[test]
fn every_connections_answer_is_read_and_xeros_example_is_json_written_as_a_string() {
    let document = Document::load("xero.identity.json");
    let answer = document.answer("GET", "/Connections");
    let mut bodies = answer.bodies();
    // xero-identity.yaml gives its example as a string holding the JSON
    // (`example: "[ { \"id\": ...} ]"`): the vendor's slip, read as meant.
    let (name, example) = &mut bodies.examples[0];
    assert_eq!(name, "example");
    let text = example
        .as_str()
        .expect("Xero's example is a string")
        .to_owned();
    *example = serde_json::from_str(&text).expect("which holds JSON");
    bodies.invalid_example(
        "example",
        "its createdDateUtc and updatedDateUtc have no offset (`2019-12-07T18:46:19.5165400`), which \
         `format: date-time` (RFC 3339) requires; Xero's answers are written so, and the connector \
         reads only tenantId",
    );
    let needed = [Needed {
        place: "0.tenantId",
        field: "tenantId",
        why: "a connection names the organisation it reaches by its tenantId (Xero's Connection schema \
              marks nothing required); an answer with a connection without one cannot be read, and \
              verify or the link fails in words",
    }];
    hold(&answer, &bodies, whole::<Vec<XeroConnection>>, &needed);
}

#[test]
fn every_invoice_status_of_xeros_document_maps_and_a_new_word_is_unknown() {
    let document = Document::load("xero.json");
    let mut bodies = document.answer("GET", "/Invoices").bodies();
    bodies.pin("Invoices.0.Type", json!("ACCREC"));
    let (at, values) = bodies.enum_at("Invoices.0.Status");
    for value in &values {
        let mut body = bodies.full[0].clone();
        set(&mut body, &at, value.clone());
        assert_ne!(invoice(&body).status, InvoiceStatus::Unknown, "{value}");
    }
    let mut body = bodies.full[0].clone();
    set(&mut body, &at, json!(NEW_VALUE));
    assert_eq!(invoice(&body).status, InvoiceStatus::Unknown);
    // AUTHORISED is read with the amounts (NOTES.md: part payments).
    assert_eq!(
        invoice_status("AUTHORISED", Money(0), Money(0)),
        InvoiceStatus::Paid
    );
}

#[test]
fn every_contact_status_maps_and_a_new_word_is_active() {
    let document = Document::load("xero.json");
    let bodies = document.answer("GET", "/Contacts").bodies();
    let (at, values) = bodies.enum_at("Contacts.0.ContactStatus");
    let status = |value: Value| {
        let mut body = bodies.full[0].clone();
        set(&mut body, &at, value);
        let mut read = contacts(&body.to_string()).expect("the page reads");
        read.records.remove(0).status
    };
    for value in values {
        let expected = match value.as_str() {
            Some("ACTIVE") => CustomerStatus::Active,
            _ => CustomerStatus::Archived,
        };
        assert_eq!(status(value.clone()), expected, "{value}");
    }
    // Our customers have no unknown status: a contact Xero has not
    // archived is one to keep (NOTES.md, "Contract").
    assert_eq!(status(json!(NEW_VALUE)), CustomerStatus::Active);
}
