//! Square's catalog items: every item variation an item of ours, over two
//! searched pages, then only what was modified since.

use serde_json::{Value, json};

use client::types::{PullStatus, QueueDataTypeDataType};

use super::super::ledger_reads::columns;
use super::super::scenarios::changes::PLATFORM_DATE;
use super::super::{latest, options_for, sync};
use super::{PAGE, by, connected, fake, list};
use crate::helpers::{TestApp, backends};

/// Each variation of each `ITEM` is an item: named by its item (and its
/// own name when the item has several), its SKU, a booked service as a
/// service, tracked stock as inventory, archived with its item, sold at its
/// fixed price (a variable price has none, a variation that cannot be sold
/// no sales side), never bought; two pages by Square's cursor. A second
/// sync searches what was modified after the first began (`begin_time`:
/// Square's own time less five minutes).
#[tokio::test]
async fn square_catalog_item_variations_sync_as_items_then_only_those_modified_since() {
    for backend in backends() {
        let fake = fake().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7 * 86_400).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Items).await;
        let operation = latest(&operations, "items");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let items = list(&app, company_id, "items").await;
        let row = |cells: [&str; 8]| cells.map(str::to_owned).to_vec();
        assert_eq!(
            columns(
                &items,
                &[
                    "/itemId",
                    "/code",
                    "/name",
                    "/type",
                    "/status",
                    "/sales/unitPrice",
                    "/purchases",
                    "/sourceModifiedDate",
                ]
            ),
            [
                row([
                    "FHYBVIA6NVBCSOVETA62WEA4",
                    "BEANS-1KG",
                    "Coffee Beans 1 kg",
                    "Inventory",
                    "Active",
                    "24.00",
                    "-",
                    "2026-09-20T10:00:00.000000Z"
                ]),
                row([
                    "JNZ7ZPOJ2DH4Z4P7V4T6GZQ4",
                    "-",
                    "Cupping Class",
                    "Service",
                    "Active",
                    "45.00",
                    "-",
                    "2026-09-15T12:00:00.000000Z"
                ]),
                row([
                    "RW5GHXDVP3XGJVSYTIXYOZQM",
                    "-",
                    "Harbor Mug - Display",
                    "NonInventory",
                    "Archived",
                    "-",
                    "-",
                    "2026-08-02T08:00:00.000000Z"
                ]),
                row([
                    "M7B2RMWM4SWXKZVWMXRCM7JX",
                    "MUG",
                    "Harbor Mug - Regular",
                    "NonInventory",
                    "Archived",
                    "-",
                    "-",
                    "2026-08-02T08:00:00.000000Z"
                ]),
                row([
                    "XVLBN7DU6JTWHJTG5F265B43",
                    "TEA-BLK-L",
                    "Tea - Black - Large",
                    "NonInventory",
                    "Active",
                    "2.25",
                    "-",
                    "2026-10-03T09:00:00.000000Z"
                ]),
                row([
                    "5GSZPX6EU7MM75S57OONG3V5",
                    "TEA-BLK-R",
                    "Tea - Black - Regular",
                    "NonInventory",
                    "Active",
                    "1.50",
                    "-",
                    "2026-10-02T15:41:32.337000Z"
                ]),
            ]
        );
        // Sold at a price set at the sale; the display piece is not sold.
        let variable = by(&items, "itemId", "M7B2RMWM4SWXKZVWMXRCM7JX");
        assert_eq!(variable["sales"]["unitPrice"], Value::Null);
        assert!(variable["sales"].is_object());
        let display = by(&items, "itemId", "RW5GHXDVP3XGJVSYTIXYOZQM");
        assert_eq!(display["sales"], Value::Null);
        assert_eq!(display["quantityOnHand"], Value::Null);

        let searches = |from: usize| -> Vec<Value> {
            fake.calls()[from..]
                .iter()
                .filter(|call| call.path == "/v2/catalog/search")
                .map(|call| {
                    assert_eq!(call.method, "POST");
                    serde_json::from_str(&call.body).expect("a JSON search")
                })
                .collect()
        };
        assert_eq!(
            searches(0),
            [
                json!({"object_types": ["ITEM"], "limit": 2}),
                json!({"object_types": ["ITEM"], "limit": 2, "cursor": "cat-cursor-2"}),
            ]
        );

        let before = fake.calls().len();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Items).await;
        let second = latest(&operations, "items");
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(
            second.fetch_mode,
            Some(client::types::FetchMode::Incremental)
        );
        let begin = "2026-11-27T08:55:00Z";
        assert_eq!(
            searches(before),
            [
                json!({"object_types": ["ITEM"], "limit": 2, "begin_time": begin}),
                json!({"object_types": ["ITEM"], "limit": 2, "begin_time": begin, "cursor": "cat-cursor-2"}),
            ]
        );
        assert_eq!(list(&app, company_id, "items").await, items);
    }
}
