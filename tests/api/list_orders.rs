//! A queried list's whole order, remembered for its pages
//! (`sync::list_orders`): after a resync that carried its keys over
//! (PostgreSQL), carried over from the previous generation's remembered
//! order and the resync's changed rows instead of read again from every
//! record; whichever way, exactly the list's matching records in its order.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::connections::new_company;
use crate::helpers::{TestApp, answer, for_each_database_with};
use crate::keys_built::with_metrics;
use crate::queries::{encoded, walk, whole_list};
use crate::sync::{authorized_sandbox, reauthorize, sync_invoices};

/// How many invoice lists had their whole order found `way` (`keyed`,
/// `carried` or `read`), by the app's `/metrics`.
async fn orders_found(app: &TestApp, way: &str) -> u64 {
    let labels = [("data_type", "invoices"), ("way", way)];
    crate::metrics::counter(app, "tributary_list_orders_total", &labels).await
}

/// A record's text at `field` (a dotted path), if any.
fn text<'a>(record: &'a Value, field: &str) -> Option<&'a str> {
    field
        .split('.')
        .try_fold(record, |value, part| value.get(part))?
        .as_str()
}

/// A query, the field it compares, the text compared, and whether the
/// field's text must be that text (`=`) or only contain it (`~`).
type Case<'a> = (String, &'a str, &'a str, bool);

/// Walks each query's pages (25 a page, by `_links.next`) and checks them
/// against the whole list filtered here: the same invoices in the same
/// order, and the stated total.
async fn assert_queries_select(app: &TestApp, company_id: Uuid, queries: &[Case<'_>]) {
    let listed = whole_list(app, company_id).await;
    for (query, field, compared, whole) in queries {
        let holds = |value: &str| match whole {
            true => value == *compared,
            false => value.contains(compared),
        };
        let expected: Vec<&str> = listed
            .iter()
            .filter(|record| text(record, field).is_some_and(holds))
            .filter_map(|record| text(record, "invoiceId"))
            .collect();
        let parameters = format!("query={}", encoded(query));
        let first = format!("/companies/{company_id}/data/invoices?pageSize=25&{parameters}");
        let (records, total) = walk(app, &first, &parameters).await;
        let found: Vec<&str> = records
            .iter()
            .filter_map(|record| text(record, "invoiceId"))
            .collect();
        assert_eq!(found, expected, "{query}");
        assert_eq!(total, expected.len() as u64, "{query}");
    }
}

#[tokio::test]
async fn a_resync_that_carried_its_keys_carries_remembered_query_orders_over() {
    // Queries on fields without keys are answered from every record's
    // JSON, once per generation. After a resync whose keys were carried
    // over, the order remembered for the previous generation is carried
    // over instead: its places moved, and the resync's changed rows tested
    // against the query. An amendment rewrites an invoice's note, so
    // amended invoices join the first query and leave the second; invoices
    // deleted at the platform stay in the list, flagged; new ones join.
    // A query on declared fields is answered from the keys, carried or not.
    // A walk pinned to the previous generation goes on reading it.
    for_each_database_with(with_metrics, async |app: &TestApp| {
        let postgres = app.db.get_database_backend() == sea_orm::DbBackend::Postgres;
        let company_id = new_company(app, "Orders Carried Ltd").await;
        let authorization = |count: u64, changed: u64| {
            json!({
                "organizationId": "sbx-orders", "accessToken": "tok", "seed": 31,
                "invoiceCount": count, "changedInvoiceCount": changed,
                "orderCount": 0, "bankTransactionCount": 0,
            })
        };
        let connection_id = authorized_sandbox(app, company_id, authorization(400, 0)).await;
        sync_invoices(app, company_id).await;
        let listed = whole_list(app, company_id).await;
        let customer = text(&listed[0], "customerRef.id").expect("a customer");
        let queries = [
            ("note~Amended".to_owned(), "note", "Amended", false),
            ("note~Thank".to_owned(), "note", "Thank", false),
            // Invoices 400 to 420: the one deleted and the new ones.
            (
                "invoiceNumber~INV-0004".to_owned(),
                "invoiceNumber",
                "INV-0004",
                false,
            ),
            // A declared field: answered from the keys every time.
            (
                format!("customerRef.id={customer}"),
                "customerRef.id",
                customer,
                true,
            ),
        ];
        assert_queries_select(app, company_id, &queries).await;
        assert_eq!(orders_found(app, "read").await, 3, "read from the records");
        assert_eq!(orders_found(app, "keyed").await, 1, "from the keys");

        // Forty amended and five deleted at the platform; then the
        // amendments undone and twenty-five new.
        for (round, (count, changed)) in [(395, 40), (420, 0)].into_iter().enumerate() {
            // A walk begun before the resync: its next link is pinned to
            // the generation it began in.
            let first = format!(
                "/companies/{company_id}/data/invoices?pageSize=25&query={}",
                encoded("note~Thank")
            );
            let (_, page_one) = answer(app, &first).await;
            let next = page_one["_links"]["next"]["href"]
                .as_str()
                .expect("a second page")
                .to_owned();
            let (_, pinned_before) = answer(app, &next).await;
            reauthorize(
                app,
                company_id,
                connection_id,
                authorization(count, changed),
            )
            .await;
            sync_invoices(app, company_id).await;
            assert_queries_select(app, company_id, &queries).await;
            let generations = round as u64 + 2;
            let carried = if postgres { 3 * (generations - 1) } else { 0 };
            assert_eq!(orders_found(app, "carried").await, carried, "round {round}");
            let read = 3 * generations - carried;
            assert_eq!(orders_found(app, "read").await, read, "round {round}");
            assert_eq!(
                orders_found(app, "keyed").await,
                generations,
                "round {round}"
            );
            // The walk begun before goes on in the generation it began in.
            let (status, pinned_after) = answer(app, &next).await;
            assert_eq!(status, 200, "{pinned_after}");
            assert_eq!(
                pinned_after["results"], pinned_before["results"],
                "round {round}"
            );
            assert_eq!(pinned_after["totalResults"], pinned_before["totalResults"]);
        }
    })
    .await;
}
