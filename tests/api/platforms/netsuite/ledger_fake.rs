//! How the NetSuite fake answers the ledger's SuiteQL: each query from the
//! fixtures in `fixtures/ledger/`, keeping only the rows its conditions
//! select (the page's ids, the primary book, posted lines, a transaction
//! type, `linktype = 'Payment'`), and the balance query added up from the
//! accounting lines as SuiteQL's `GROUP BY` would.

use serde_json::{Value, json};

use super::super::fake::{Answer, fixture};
use super::{id_of, listed, number_after, page_of};

/// The rows of a ledger fixture.
fn rows(name: &str) -> Vec<Value> {
    let all: Value =
        serde_json::from_str(&fixture(&format!("netsuite/fixtures/ledger/{name}.json")))
            .expect("fixture JSON");
    all["items"].as_array().cloned().unwrap_or_default()
}

/// A text column as a number of cents.
fn cents(row: &Value, column: &str) -> i64 {
    row[column]
        .as_str()
        .and_then(|text| text.parse::<f64>().ok())
        .map_or(0, |value| (value * 100.0).round() as i64)
}

/// The balance query's answer: the posted primary-book lines of the listed
/// accounts, debits and credits added up per account.
fn balances(query: &str) -> Answer {
    let accounts = listed(query);
    let mut sums: Vec<(String, i64, i64)> = Vec::new();
    for line in rows("accounting-lines") {
        let account = line["account"].as_str().unwrap_or_default().to_owned();
        if line["accountingbook"] != "1" || line["posting"] != "T" || !accounts.contains(&account) {
            continue;
        }
        let (debit, credit) = (cents(&line, "debit"), cents(&line, "credit"));
        match sums.iter_mut().find(|(id, _, _)| *id == account) {
            Some((_, debits, credits)) => {
                *debits += debit;
                *credits += credit;
            }
            None => sums.push((account, debit, credit)),
        }
    }
    let money = |cents: i64| format!("{}.{:02}", cents / 100, (cents % 100).abs());
    let items: Vec<Value> = sums
        .into_iter()
        .map(|(account, debit, credit)| {
            json!({"links": [], "account": account, "debit": money(debit), "credit": money(credit)})
        })
        .collect();
    Answer::json(
        200,
        json!({"links": [], "count": items.len(), "hasMore": false, "items": items, "offset": 0, "totalResults": items.len()})
            .to_string(),
    )
}

/// What the fake answers a ledger query, when `query` is one.
pub fn answer(query: &str, limit: usize, offset: usize) -> Option<Answer> {
    let after = |marker: &str| number_after(query, marker).unwrap_or(0);
    let page = |name: &str, keep: &dyn Fn(&Value) -> bool| {
        Some(Answer::json(
            200,
            page_of(&format!("ledger/{name}"), keep, limit, offset),
        ))
    };
    if query.contains("FROM account a") {
        let after = after("a.id >");
        let posting_only = query.contains("a.issummary = 'F'");
        return page("accounts", &|row| {
            id_of(row, "id") > after && !(posting_only && row["issummary"] == "T")
        });
    }
    if query.contains("FROM transactionaccountingline tal") {
        if query.contains("GROUP BY tal.account") {
            return Some(balances(query));
        }
        let ids = listed(query);
        let primary = query.contains("ab.isprimary = 'T'");
        let posted = query.contains("tal.posting = 'T'");
        return page("accounting-lines", &|row| {
            ids.iter().any(|id| row["transaction"] == id.as_str())
                && (!primary || row["accountingbook"] == "1")
                && (!posted || row["posting"] == "T")
        });
    }
    if query.contains("FROM currency cur WHERE cur.isbasecurrency = 'T'") {
        return page("base-currency", &|_| true);
    }
    if query.contains("FROM vendor v") {
        let after = after("v.id >");
        return page("vendors", &|row| id_of(row, "id") > after);
    }
    if query.contains("FROM salestaxitem s") {
        let after = after("s.id >");
        return page("tax-codes", &|row| id_of(row, "id") > after);
    }
    if query.contains("FROM item i") {
        let after = after("i.id >");
        return page("items", &|row| id_of(row, "id") > after);
    }
    if query.contains("FROM subsidiary s") {
        let root = query.contains("s.parent IS NULL");
        return page("subsidiaries", &|row| !root || row.get("parent").is_none());
    }
    if query.contains("FROM accountingperiod ap") {
        return page("fiscal-years", &|_| true);
    }
    if query.contains("FROM nexttransactionlinelink ntll") {
        let ids = listed(query);
        let either = query.contains("ntll.previousdoc IN (");
        let payments_only = query.contains("ntll.linktype = 'Payment'");
        return page("links", &|row| {
            let named = |column: &str| ids.iter().any(|id| row[column] == id.as_str());
            (!payments_only || row["linktype"] == "Payment")
                && (named("nextdoc") || (either && named("previousdoc")))
        });
    }
    if query.contains("FROM transactionline tl") && query.contains("tl.expenseaccount") {
        let ids = listed(query);
        return page("lines", &|row| {
            ids.iter().any(|id| row["transaction"] == id.as_str())
        });
    }
    if query.contains("FROM transaction t") {
        let after = after("t.id >");
        for kind in ["VendBill", "CustCred", "CustPymt", "VendPymt"] {
            if query.contains(&format!("t.type = '{kind}'")) {
                return page("transactions", &|row| {
                    row["type"] == kind && id_of(row, "id") > after
                });
            }
        }
        if query.contains("t.posting = 'T'") {
            return page("transactions", &|row| {
                row["posting"] == "T" && id_of(row, "id") > after
            });
        }
    }
    None
}
