//! Exact Online's fake, for the accounting lists: each list's fixtures of
//! `fixtures/ledger/` by path under the division and by the `$filter` Exact
//! would be asked (a row version on the sync APIs), refusing what Exact
//! refuses (a sync list without `$select`, the ledger paged by `__next`).

use super::super::fake::{Answer, Call};
use super::{DIVISION, linked};

/// A fixture of `fixtures/ledger/`.
fn page(call: &Call, name: &str) -> Answer {
    Answer::json(200, linked(call, &format!("ledger/{name}.json")))
}

/// Exact's answer to a request it refuses.
fn refused(reason: &str) -> Answer {
    Answer::json(
        400,
        format!(r#"{{"error":{{"code":"","message":{{"lang":"","value":"{reason}"}}}}}}"#),
    )
}

/// The accounting lists, by path under the division; `None` for another
/// path. A sync list answers by its `$filter` (a row version), the
/// ledger's pages must be asked for by row version, never by `__next`.
pub(super) fn answer(call: &Call) -> Option<Answer> {
    let query = |name: &str| call.query.get(name).map(String::as_str);
    let resource = call.path.strip_prefix(&format!("/api/v1/{DIVISION}/"))?;
    let filter = query("$filter").unwrap_or_default();
    let next = query("$skiptoken").is_some();
    let sync_list = resource.starts_with("sync/") && resource != "sync/Deleted";
    if sync_list && !query("$select").is_some_and(|select| select.starts_with("Timestamp,")) {
        return Some(refused("$select is mandatory"));
    }
    Some(match resource {
        "sync/Financial/GLAccounts" if next => page(call, "gl-accounts-2"),
        "sync/Financial/GLAccounts" => match filter {
            "Timestamp gt 1L" => page(call, "gl-accounts-1"),
            "Timestamp gt 1290L" => page(call, "gl-accounts-changed"),
            _ => page(call, "empty"),
        },
        "sync/Deleted" => match filter {
            "Timestamp gt 1L and EntityType eq 7" => page(call, "deleted-gl-accounts"),
            _ => page(call, "empty"),
        },
        "sync/CRM/Accounts" if filter == "Timestamp gt 1L" => page(call, "crm-accounts"),
        "sync/Logistics/Items" if filter == "Timestamp gt 1L" => page(call, "items"),
        "sync/CRM/Accounts" | "sync/Logistics/Items" => page(call, "empty"),
        "sync/Financial/TransactionLines" if next => refused("the ledger is paged by Timestamp"),
        "sync/Financial/TransactionLines" => match filter {
            "Timestamp gt 1L" => page(call, "transaction-lines-1"),
            "Timestamp gt 2008L" => page(call, "transaction-lines-2"),
            _ => page(call, "empty"),
        },
        "vat/VATCodes" => page(call, "vat-codes"),
        "purchaseentry/PurchaseEntries" if next => page(call, "purchase-entries-2"),
        "purchaseentry/PurchaseEntries" if query("$expand") == Some("PurchaseEntryLines") => {
            page(call, "purchase-entries-1")
        }
        "purchaseentry/PurchaseEntries" => refused("lines were not asked for"),
        "salesinvoice/SalesInvoices" if filter.starts_with("(Type eq 8021 or Type eq 8024)") => {
            page(call, "credit-notes")
        }
        "system/Divisions" if filter == format!("Code eq {DIVISION}") => page(call, "divisions"),
        "financial/FinancialPeriods" if filter == "FinPeriod eq 1" => {
            page(call, "financial-periods")
        }
        _ => return None,
    })
}
