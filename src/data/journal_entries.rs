//! Journal entries: the general ledger's posted entries, each a set of
//! signed lines on accounts that balance to zero; newest posting date
//! first.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::accounts::AccountRef;
use super::money::Money;
use super::{Definition, Direction, Spec};
use crate::timestamp::Timestamp;

/// The journal entries data type.
pub struct JournalEntries;

impl Definition for JournalEntries {
    type Record = JournalEntry;

    const SPEC: &'static Spec = &Spec {
        name: "journalEntries",
        noun: "journal entries",
        id_field: "journalEntryId",
        order: Direction::Descending,
        order_description: "newest posting date first (ties broken by connection, then journal entry id)",
        filter: None,
        keys: &["postedOn", "modifiedDate"],
    };

    fn id(record: &JournalEntry) -> &str {
        &record.journal_entry_id
    }

    fn sort_key(record: &JournalEntry) -> String {
        record.posted_on.format("%Y-%m-%d").to_string()
    }
}

/// A posted entry of the general ledger. Its lines' amounts are exact
/// decimals, as strings, signed: a debit is positive, a credit negative,
/// and the lines of an entry add up to zero.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JournalEntry {
    /// The platform's id of the entry.
    pub journal_entry_id: String,
    /// The number the platform gives it, in posting order; null when it gives none.
    pub journal_number: Option<String>,
    /// The day it was posted.
    pub posted_on: NaiveDate,
    /// What it is for; null when the platform says nothing.
    pub description: Option<String>,
    /// The document that made it, when the platform says; null for a manual journal or when it does not.
    pub source: Option<JournalSource>,
    /// Its lines: debits positive, credits negative, adding up to zero.
    pub journal_lines: Vec<JournalLine>,
    /// When it was created at the platform; null when the platform does not say.
    pub created_on: Option<Timestamp>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// The document a journal entry was posted for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JournalSource {
    /// The platform's kind of document, as it writes it (Xero `ACCREC`, `ACCPAYPAYMENT`); our data type's name where the sandbox made it.
    #[serde(rename = "type")]
    pub source_type: String,
    /// The document's id at the platform (an `invoiceId`, `billId`, `paymentId` ... where we sync that kind); null when it gives none.
    pub id: Option<String>,
}

/// One line of a journal entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JournalLine {
    /// The account posted to, of the same connection.
    pub account_ref: Option<AccountRef>,
    /// What the line says; null if nothing.
    pub description: Option<String>,
    /// The amount: a debit positive, a credit negative.
    pub net_amount: Money,
    /// ISO 4217 code of the amount's currency; null when the platform does not say (the company's base currency).
    pub currency: Option<String>,
}

impl JournalEntry {
    /// What its lines add up to: zero for an entry that balances.
    pub fn balance(&self) -> Money {
        Money(
            self.journal_lines
                .iter()
                .map(|line| line.net_amount.0)
                .sum(),
        )
    }
}
