//! Pages that hold still: every list's `_links` pin the generations the
//! page was read from (`snapshot`), so a client walking a list while a
//! newer sync completes reads exactly the snapshot it started on, through
//! one connection's list, several connections' and a queried one; an
//! expired snapshot answers 410 and a foreign or forged one 400.

use std::time::Duration;

use serde_json::{Value, json};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tributary::paging::Snapshot;
use tributary::sync::engine::EngineConfig;

use crate::connections::new_company;
use crate::helpers::{AppOptions, TestApp, answer, backends, for_each_database};
use crate::sync::{authorized_sandbox, reauthorize, sync_and_settle};

/// One synthetic organization whose data the seed chooses (a connection
/// keeps its organization: a resync with another seed is the same one
/// changed).
fn sandbox(seed: u64, invoice_count: u64) -> Value {
    json!({
        "organizationId": "sbx-pin", "accessToken": "tok",
        "invoiceCount": invoice_count, "orderCount": 0, "bankTransactionCount": 0,
        "seed": seed,
    })
}

/// The whole list at `path` as it is now, in one page.
async fn whole(app: &TestApp, path: &str) -> Vec<Value> {
    let separator = if path.contains('?') { '&' } else { '?' };
    let (status, page) = answer(app, &format!("{path}{separator}pageSize=5000")).await;
    assert_eq!(status, 200, "{page}");
    page["results"].as_array().expect("results").clone()
}

/// Reads `first`, then follows `_links.next` for `before` more pages, runs
/// `meanwhile`, and follows the rest: the records read, in order, and the
/// pages read.
async fn walk_around(
    app: &TestApp,
    first: &str,
    before: usize,
    meanwhile: impl AsyncFnOnce(),
) -> (Vec<Value>, usize) {
    let mut records = Vec::new();
    let mut next = Some(first.to_owned());
    let mut pages = 0;
    let mut meanwhile = Some(meanwhile);
    while let Some(path) = next {
        if pages == before + 1
            && let Some(meanwhile) = meanwhile.take()
        {
            meanwhile().await;
        }
        let (status, page) = answer(app, &path).await;
        assert_eq!(status, 200, "{path}: {page}");
        let current = page["_links"]["current"]["href"].as_str().expect("current");
        assert!(current.contains("snapshot="), "{current}");
        records.extend(page["results"].as_array().expect("results").iter().cloned());
        next = page["_links"]["next"]["href"].as_str().map(str::to_owned);
        pages += 1;
    }
    (records, pages)
}

#[tokio::test]
async fn a_walk_of_30_pages_across_a_completed_resync_reads_the_snapshot_it_started_on() {
    for_each_database(async |app| {
        // One connection (its pages by ordinal), and two (merged).
        let one = new_company(app, "Held Still Ltd").await;
        let alone = authorized_sandbox(app, one, sandbox(1, 300)).await;
        let two = new_company(app, "Held Still Twice Ltd").await;
        let first_of_two = authorized_sandbox(app, two, sandbox(2, 150)).await;
        authorized_sandbox(app, two, sandbox(3, 150)).await;
        sync_and_settle(app, one).await;
        sync_and_settle(app, two).await;

        for (company_id, connection_id, seed) in [(one, alone, 11), (two, first_of_two, 12)] {
            let list = format!("/companies/{company_id}/data/invoices");
            let before = whole(app, &list).await;
            assert_eq!(before.len(), 300);
            let (walked, pages) = walk_around(app, &format!("{list}?pageSize=10"), 9, async || {
                reauthorize(app, company_id, connection_id, sandbox(seed, 240)).await;
                sync_and_settle(app, company_id).await;
            })
            .await;
            assert_eq!(pages, 30);
            let after = whole(app, &list).await;
            assert_ne!(after, before, "the resync changed the newest data");
            assert_eq!(
                walked, before,
                "the walk saw only the snapshot it started on"
            );
        }

        // Deep pages of two connections are read by the merged order of the
        // pinned generations (past the first rows merged by prefix): a walk
        // of 1,200 invoices holds still across a resync there too.
        let deep = new_company(app, "Held Still Deep Ltd").await;
        let deep_first = authorized_sandbox(app, deep, sandbox(5, 600)).await;
        authorized_sandbox(app, deep, sandbox(6, 600)).await;
        sync_and_settle(app, deep).await;
        let list = format!("/companies/{deep}/data/invoices");
        let before = whole(app, &list).await;
        let (walked, pages) = walk_around(app, &format!("{list}?pageSize=100"), 9, async || {
            reauthorize(app, deep, deep_first, sandbox(13, 500)).await;
            sync_and_settle(app, deep).await;
        })
        .await;
        assert_eq!(pages, 12);
        assert_ne!(
            whole(app, &list).await,
            before,
            "the resync changed the newest data"
        );
        assert_eq!(
            walked, before,
            "the deep walk saw only the snapshot it started on"
        );

        // A queried walk (its cursor pinned with it) holds still too.
        let list = format!("/companies/{one}/data/invoices");
        let queried = format!("{list}?query=amountDue%3E0");
        let before = whole(app, &queried).await;
        assert!(before.len() > 20, "{}", before.len());
        let (walked, _) = walk_around(app, &format!("{queried}&pageSize=10"), 1, async || {
            reauthorize(app, one, alone, sandbox(21, 200)).await;
            sync_and_settle(app, one).await;
        })
        .await;
        assert_eq!(walked, before);
        assert_ne!(whole(app, &queried).await, before);

        // The replaced generation's rows outlast the run's cleanup (read
        // again and again after the sync, its page stays whole); a second
        // newer sync ends the oldest walk (a list keeps the data it last
        // replaced, no older).
        let (status, page) = answer(app, &format!("{list}?pageSize=10")).await;
        assert_eq!(status, 200);
        let next = page["_links"]["next"]["href"]
            .as_str()
            .expect("next")
            .to_owned();
        let (_, second_page) = answer(app, &next).await;
        reauthorize(app, one, alone, sandbox(31, 100)).await;
        sync_and_settle(app, one).await;
        for _ in 0..10 {
            let (status, again) = answer(app, &next).await;
            assert_eq!(status, 200, "{again}");
            assert_eq!(again, second_page, "the replaced generation is kept whole");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        reauthorize(app, one, alone, sandbox(32, 50)).await;
        sync_and_settle(app, one).await;
        let (status, gone) = answer(app, &next).await;
        assert_eq!(status, 410, "{gone}");
    })
    .await;
}

#[tokio::test]
async fn an_expired_snapshot_answers_410_and_a_foreign_or_forged_one_400() {
    for backend in backends() {
        let options = AppOptions {
            engine: EngineConfig {
                snapshot_retention: Duration::ZERO,
                ..AppOptions::default().engine
            },
            ..AppOptions::default()
        };
        let app = &TestApp::spawn_with(backend, options).await;
        let company_id = new_company(app, "Expiring Ltd").await;
        let connection_id = authorized_sandbox(app, company_id, sandbox(4, 30)).await;
        sync_and_settle(app, company_id).await;
        let list = format!("/companies/{company_id}/data/invoices");
        let (status, first) = answer(app, &format!("{list}?pageSize=10")).await;
        assert_eq!(status, 200);
        let next = first["_links"]["next"]["href"]
            .as_str()
            .expect("next")
            .to_owned();

        // Pinned to the current generation, a snapshot reads at any age.
        let (status, _) = answer(app, &next).await;
        assert_eq!(status, 200);

        // Another company's or data type's list: 400, naming `snapshot`.
        let other = new_company(app, "Other Ltd").await;
        let token = next
            .split("snapshot=")
            .nth(1)
            .expect("a snapshot")
            .to_owned();
        for elsewhere in [
            format!("/companies/{other}/data/invoices?snapshot={token}"),
            format!("/companies/{company_id}/data/customers?snapshot={token}"),
        ] {
            let (status, body) = answer(app, &elsewhere).await;
            assert_eq!(status, 400, "{elsewhere}: {body}");
            assert_eq!(body["validation"]["errors"][0]["itemId"], "snapshot");
        }
        // Well-formed, for this list, but naming a connection of another
        // company or a generation never published: nothing is read.
        let foreign_connection = authorized_sandbox(app, other, sandbox(6, 10)).await;
        sync_and_settle(app, other).await;
        let list_digest = Snapshot::list_digest(company_id, "invoices");
        for generations in [
            format!("{foreign_connection}:1"),
            format!("{connection_id}:99"),
        ] {
            let token = Snapshot::parse(
                &URL_SAFE_NO_PAD.encode(format!("s1|{list_digest:016x}|{generations}")),
            )
            .expect("well-formed")
            .encode();
            let (status, body) = answer(app, &format!("{list}?snapshot={token}")).await;
            assert_eq!(status, 410, "{generations}: {body}");
            assert!(body.get("results").is_none());
        }
        for forged in ["x", "a%2Fb", "czF8MDB8"] {
            let (status, body) = answer(app, &format!("{list}?snapshot={forged}")).await;
            assert_eq!(status, 400, "{forged}: {body}");
            assert_eq!(body["validation"]["errors"][0]["itemId"], "snapshot");
        }

        // A newer sync replaces the generation; with no retention, the
        // pinned links expire at once.
        reauthorize(app, company_id, connection_id, sandbox(5, 30)).await;
        sync_and_settle(app, company_id).await;
        let (status, body) = answer(app, &next).await;
        assert_eq!(status, 410, "{body}");
        assert_eq!(body["statusCode"], 410);
        assert_eq!(body["canBeRetried"], false);
        let message = body["error"].as_str().expect("a message");
        assert!(message.contains("no longer kept"), "{message}");
        assert!(message.contains(&format!("GET {list} again")), "{message}");
        // The newest data is untouched and readable.
        let (status, page) = answer(app, &list).await;
        assert_eq!(status, 200);
        assert_eq!(page["totalResults"], 30);

        // The sweep deletes the replaced generation's rows.
        let mut remaining = i64::MAX;
        for _ in 0..100 {
            remaining =
                crate::connections::count_rows(app, "record WHERE data_type = 'invoices'").await;
            if remaining == 30 + 10 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(
            remaining,
            30 + 10,
            "only the current generations' rows are left (this company's and the other's)"
        );
    }
}

#[tokio::test]
async fn a_replaced_snapshot_reads_until_its_retention_ends_then_answers_410() {
    for backend in backends() {
        let options = AppOptions {
            engine: EngineConfig {
                snapshot_retention: Duration::from_secs(5),
                ..AppOptions::default().engine
            },
            ..AppOptions::default()
        };
        let app = &TestApp::spawn_with(backend, options).await;
        let company_id = new_company(app, "Briefly Kept Ltd").await;
        let connection_id = authorized_sandbox(app, company_id, sandbox(7, 40)).await;
        sync_and_settle(app, company_id).await;
        let list = format!("/companies/{company_id}/data/invoices");
        let before = whole(app, &list).await;
        let (_, first) = answer(app, &format!("{list}?pageSize=10")).await;
        let next = first["_links"]["next"]["href"]
            .as_str()
            .expect("next")
            .to_owned();
        reauthorize(app, company_id, connection_id, sandbox(8, 40)).await;
        sync_and_settle(app, company_id).await;
        let replaced = std::time::Instant::now();
        // Within the retention, the walk goes on in its snapshot.
        let (status, second) = answer(app, &next).await;
        assert_eq!(status, 200, "{second}");
        assert!(replaced.elapsed() < Duration::from_secs(5), "read in time");
        assert_eq!(second["results"].as_array(), Some(&before[10..20].to_vec()));
        // After it, 410; the newest data reads as ever.
        tokio::time::sleep(
            Duration::from_secs(5) - replaced.elapsed() + Duration::from_millis(500),
        )
        .await;
        let (status, body) = answer(app, &next).await;
        assert_eq!(status, 410, "{body}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|error| error.contains("5 seconds")),
            "{body}"
        );
        let (status, _) = answer(app, &list).await;
        assert_eq!(status, 200);
    }
}
