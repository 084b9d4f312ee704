//! The scenarios of a sync's pages: rate limits and server errors, a
//! malformed page, a record the connector cannot read, an account the
//! platform does not know, and the data types it lacks.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use client::types::PullStatus;

use client::types::ConnectionStatus;

use super::{
    Case, Cut, Refused, assert_complete, assert_says, connected, message_of, records, spawn,
    status_of, sync,
};
use crate::helpers::{backends, json};
use crate::platforms::fake::Answer;

/// A 429 with `Retry-After: 1` and a 500 are waited out and retried; an
/// answer that keeps failing fails the sync saying what the platform
/// answered; a `Retry-After` beyond the cap ends the sync `RateLimitError`
/// at once, saying when it can continue, and the next sync before then
/// does not call the platform at all; the data of the first sync stays
/// throughout.
pub async fn rate_limits_wait_for_retry_after_and_server_errors_are_retried(case: &Case) {
    let data_type = case.sync.data_type;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(case.authorization)(case.lasting)).await;
        let errors = &case.errors;
        let rate_limited = |retry_after: &str| {
            let mut headers = vec![("Retry-After".to_owned(), retry_after.to_owned())];
            headers.extend(
                errors
                    .rate_limit_headers
                    .iter()
                    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
            );
            Answer {
                status: 429,
                headers,
                body: errors.rate_limited.to_owned(),
            }
        };
        fake.with(|inner| {
            inner.scripted.push_back(rate_limited("1"));
            inner
                .scripted
                .push_back(Answer::json(500, errors.server_error));
        });
        let started = Instant::now();
        let operation = sync(&app, company_id, data_type).await;
        assert_complete(case, &operation);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{}: Retry-After was honoured",
            case.key
        );
        assert_eq!(
            records(&app, company_id, data_type).await.len(),
            case.sync.records,
            "{}",
            case.key
        );
        assert_eq!(
            fake.calls().len(),
            2 + case.sync.calls,
            "{}: two failed attempts, then a full sync",
            case.key
        );

        // A platform that keeps failing: the operation says what it answered.
        let (status, body) = errors.unavailable;
        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(status, body));
            }
        });
        let operation = sync(&app, company_id, data_type).await;
        assert_eq!(operation.status, PullStatus::Failed, "{}", case.key);
        assert_says(case, &message_of(&operation), &[errors.unavailable_says]);
        assert_eq!(
            records(&app, company_id, data_type).await.len(),
            case.sync.records,
            "{}: the data of the first sync is still served",
            case.key
        );

        // A Retry-After beyond the cap ends the sync at once.
        fake.with(|inner| inner.scripted.push_back(rate_limited("3600")));
        let calls = fake.calls().len();
        let operation = sync(&app, company_id, data_type).await;
        assert_eq!(operation.status, PullStatus::RateLimitError, "{}", case.key);
        assert_says(
            case,
            &message_of(&operation),
            &[
                "429",
                "3600 s",
                "the sync can continue after",
                errors.rate_limited_says,
            ],
        );
        assert_eq!(fake.calls().len(), calls + 1, "{}: not retried", case.key);
        // Every process keeps the platform's wait: the next sync does not call.
        let operation = sync(&app, company_id, data_type).await;
        assert_eq!(operation.status, PullStatus::RateLimitError, "{}", case.key);
        assert_says(
            case,
            &message_of(&operation),
            &["the sync can continue after"],
        );
        assert_eq!(
            fake.calls().len(),
            calls + 1,
            "{}: the platform was not called again",
            case.key
        );
        assert_eq!(
            records(&app, company_id, data_type).await.len(),
            case.sync.records,
            "{}",
            case.key
        );
    }
}

/// A data type the consent does not cover (the platform's own refusal)
/// ends `PermissionsError` in the platform's words, not `AuthError`: the
/// connection stays `Linked`, nothing is refreshed or retried, the data of
/// the first sync stays, and the next sync the platform allows completes.
pub async fn a_refused_scope_fails_the_data_type_and_keeps_the_connection(case: &Case) {
    let (status, body, says) = match case.errors.refused {
        Refused::Scope { status, body, says } => (status, body, says),
        Refused::AsARejectedToken(why) => {
            eprintln!("{}: no refused-scope answer of its own: {why}", case.key);
            return;
        }
    };
    let data_type = case.sync.data_type;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, connection_id) =
            connected(&app, case, &(case.authorization)(case.lasting)).await;
        assert_complete(case, &sync(&app, company_id, data_type).await);

        fake.with(|inner| inner.scripted.push_back(Answer::json(status, body)));
        let received = fake.with(|inner| inner.received.len());
        let operation = sync(&app, company_id, data_type).await;
        assert_eq!(
            operation.status,
            PullStatus::PermissionsError,
            "{}: {operation:?}",
            case.key
        );
        assert_says(
            case,
            &message_of(&operation),
            &[says, "consent does not cover this data type"],
        );
        assert_eq!(
            fake.with(|inner| inner.received.len()),
            received + 1,
            "{}: neither retried nor refreshed (no token call either)",
            case.key
        );
        assert_eq!(
            status_of(&app, company_id, connection_id).await,
            ConnectionStatus::Linked,
            "{}: the connection is kept",
            case.key
        );
        assert_eq!(
            records(&app, company_id, data_type).await.len(),
            case.sync.records,
            "{}: the data of the first sync is still served",
            case.key
        );

        assert_complete(case, &sync(&app, company_id, data_type).await);
    }
}

/// A page cut off mid-way fails the sync, and the data of the previous
/// sync is served as it was (nothing of the pages before it is kept).
pub async fn a_malformed_page_fails_the_sync_and_keeps_the_previous_data(case: &Case) {
    let data_type = case.sync.data_type;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(case.authorization)(case.lasting)).await;
        assert_complete(case, &sync(&app, company_id, data_type).await);
        let before = records(&app, company_id, data_type).await;
        assert_eq!(before.len(), case.sync.records, "{}", case.key);
        let mut answers = (case.pages.prelude)(&fake);
        if case.pages.cut == Cut::SecondPage {
            answers.push((case.pages.first)(&fake));
        }
        answers.push(Answer::json(200, case.pages.truncated));
        fake.with(|inner| inner.scripted.extend(answers));
        let operation = sync(&app, company_id, data_type).await;
        assert_eq!(operation.status, PullStatus::Failed, "{}", case.key);
        assert_says(
            case,
            &message_of(&operation),
            &["cannot read", case.pages.truncated_says],
        );
        assert_eq!(
            records(&app, company_id, data_type).await,
            before,
            "{}",
            case.key
        );
    }
}

/// The first page with its first record's `field` of the wrong type: the
/// sync completes without that record, and the pull operation names it
/// (`issues`: its id, the field, why), never what it holds.
pub async fn a_record_the_connector_cannot_read_costs_that_record(case: &Case) {
    let data_type = case.sync.data_type;
    let pages = &case.pages;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(case.authorization)(case.lasting)).await;
        let mut first = (pages.first)(&fake);
        let mut page: Value = serde_json::from_str(&first.body).expect("a JSON first page");
        // The first of a list, or the record itself where an answer is one.
        let record = page
            .pointer_mut(pages.records_at)
            .and_then(|found| {
                if found.is_array() {
                    found.get_mut(0)
                } else {
                    Some(found)
                }
            })
            .unwrap_or_else(|| panic!("{}: a record at {}", case.key, pages.records_at));
        let id = record
            .pointer(pages.id_at)
            .map(|id| match id {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .unwrap_or_else(|| panic!("{}: an id at {}", case.key, pages.id_at));
        let field = record
            .pointer_mut(pages.field)
            .unwrap_or_else(|| panic!("{}: the record has {}", case.key, pages.field));
        *field = json!({"unexpected": ["a", "list", "in", "an", "object"]});
        first.body = page.to_string();
        let mut answers = (pages.prelude)(&fake);
        answers.push(first);
        fake.with(|inner| inner.scripted.extend(answers));
        let operation = sync(&app, company_id, data_type).await;
        let stored = records(&app, company_id, data_type).await;
        assert_complete(case, &operation);
        assert_eq!(
            stored.len(),
            case.sync.records - 1,
            "{}: every other record is stored",
            case.key
        );
        let history = json(
            app.get(&format!(
                "/companies/{company_id}/data/history?pageSize=100"
            ))
            .await,
        )
        .await;
        let reported = history["results"]
            .as_array()
            .and_then(|all| all.iter().find(|op| op["dataType"] == data_type))
            .cloned()
            .unwrap_or_else(|| panic!("{}: the operation in the history", case.key));
        let issues = reported["issues"].as_array().cloned().unwrap_or_default();
        assert_eq!(issues.len(), 1, "{}: {reported}", case.key);
        // Named by its id as tributary keeps it: a platform whose id is a URL
        // (FreeAgent) by the id the URL ends in.
        let named_id = issues[0]["recordId"].as_str().unwrap_or_default();
        assert!(
            !named_id.is_empty() && (id == named_id || id.ends_with(&format!("/{named_id}"))),
            "{}: the issue names {id}: {reported}",
            case.key
        );
        let named = issues[0]["field"].as_str().unwrap_or_default();
        let last = pages.field.rsplit('/').next().unwrap_or_default();
        assert!(
            named.contains(last),
            "{}: the issue names {last}: {reported}",
            case.key
        );
        let reason = issues[0]["reason"].as_str().unwrap_or_default();
        assert!(!reason.is_empty(), "{}: {reported}", case.key);
        assert!(
            !reason.contains("unexpected"),
            "{}: the reason never repeats what the record holds: {reason}",
            case.key
        );
    }
}

/// An authorization naming an account the platform does not know: the
/// sync fails with the platform's own words.
pub async fn an_unknown_account_fails_with_the_platforms_answer(case: &Case) {
    let unknown = case
        .unknown_account
        .as_ref()
        .expect("the case names an unknown account");
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(unknown.authorization)()).await;
        let operation = sync(&app, company_id, case.sync.data_type).await;
        assert_eq!(operation.status, PullStatus::Failed, "{}", case.key);
        assert_says(case, &message_of(&operation), unknown.says);
    }
}

/// The data types the platform lacks are refused at once with what it
/// syncs instead, nothing is asked of it, and its integration lists what
/// it syncs.
pub async fn the_data_types_it_lacks_are_refused_without_asking_the_platform(case: &Case) {
    const EVERY: [(&str, &str); 15] = [
        ("invoices", "invoices"),
        ("customers", "customers"),
        ("orders", "orders"),
        ("bankAccounts", "bank accounts"),
        ("bankTransactions", "bank transactions"),
        ("accounts", "accounts"),
        ("suppliers", "suppliers"),
        ("taxRates", "tax rates"),
        ("bills", "bills"),
        ("payments", "payments"),
        ("billPayments", "bill payments"),
        ("creditNotes", "credit notes"),
        ("items", "items"),
        ("companyInfo", "company info"),
        ("journalEntries", "journal entries"),
    ];
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(case.authorization)(case.lasting)).await;
        let integration = json(app.get(&format!("/integrations/{}", case.key)).await).await;
        assert_eq!(
            integration["dataTypes"],
            json!(case.syncs),
            "{}: {integration}",
            case.key
        );
        let mut refused = 0;
        for (data_type, noun) in EVERY {
            if case.syncs.contains(&data_type) {
                continue;
            }
            refused += 1;
            let queued = app
                .post_json(
                    &format!("/companies/{company_id}/data/queue/{data_type}"),
                    &json!(null),
                )
                .await;
            assert_eq!(queued.status(), 202, "{}", case.key);
            let queued = json(queued).await;
            assert_eq!(
                queued[0]["status"], "NotSupported",
                "{}: {queued}",
                case.key
            );
            assert_eq!(
                queued[0]["errorMessage"],
                format!(
                    "{} has no {noun}; it syncs {}.",
                    case.name,
                    case.syncs.join(", ")
                ),
                "{}",
                case.key
            );
        }
        if refused > 0 {
            crate::sync::settled(&app.client, company_id).await;
        }
        assert!(
            fake.calls().is_empty(),
            "{}: nothing asked of the platform",
            case.key
        );
    }
}
