//! Whether a staged list moves into `record` in two halves at once
//! (PostgreSQL), and where it is split: decided by the list's exact count
//! near the threshold, so the same list always moves the same way.

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use tributary::data::DataType;
use tributary::store::publish::PARALLEL_AT_ROWS;
use uuid::Uuid;

use crate::helpers::{Backend, TestApp, backends};

/// Stages `rows` records of `data_type` for `connection_id`'s
/// `generation`, with the sort keys `0000001` to `rows` (zero-padded, so
/// they sort as numbers).
async fn stage(
    app: &TestApp,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
    rows: u64,
) {
    app.db
        .execute_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "INSERT INTO record_staging \
               (connection_id, data_type, generation, record_id, company_id, sort_key, filter_value, body) \
             SELECT $1, $2, $3, 'rec-' || i, $4, lpad(i::text, 7, '0'), NULL, '{}' \
             FROM generate_series(1, $5::bigint) AS i",
            [
                connection_id.into(),
                data_type.name().into(),
                generation.into(),
                Uuid::new_v4().into(),
                (rows as i64).into(),
            ],
        ))
        .await
        .expect("staged");
}

/// Where `split_point` splits `connection_id`'s staged `generation`.
async fn split(
    app: &TestApp,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
) -> Option<String> {
    tributary::store::split_point(&app.db, connection_id, data_type, generation)
        .await
        .expect("split")
}

/// The sort key `percent`% of the way through `rows` ascending keys (the
/// `ceil(rows × percent / 100)`th), as [`stage`] writes it.
fn key_at(rows: u64, percent: u64) -> String {
    format!("{:07}", (rows * percent).div_ceil(100))
}

#[tokio::test]
async fn a_list_moves_in_halves_from_exactly_the_threshold_on_and_its_first_half_holds_55_percent()
{
    // SQLite moves every list whole, in the swap: `split_point` is
    // PostgreSQL's alone.
    for backend in backends() {
        if backend != Backend::Postgres {
            continue;
        }
        let app = TestApp::spawn(backend).await;
        let (invoices, customers) = (Uuid::new_v4(), Uuid::new_v4());
        let counted = 4 * PARALLEL_AT_ROWS;
        stage(&app, invoices, DataType::INVOICES, 1, PARALLEL_AT_ROWS - 1).await;
        stage(&app, invoices, DataType::INVOICES, 2, PARALLEL_AT_ROWS).await;
        stage(&app, invoices, DataType::INVOICES, 3, counted - 1).await;
        stage(&app, customers, DataType::CUSTOMERS, 4, PARALLEL_AT_ROWS).await;
        stage(&app, invoices, DataType::INVOICES, 5, counted + 1).await;

        assert_eq!(
            split(&app, invoices, DataType::INVOICES, 1).await,
            None,
            "one row short of the threshold: moved whole"
        );
        // Invoices list the latest issue date first: the first half is the
        // 55% of rows with the highest keys, above the 45th percentile.
        // Lists counted short of four times the threshold are split exactly.
        for (generation, rows) in [(2, PARALLEL_AT_ROWS), (3, counted - 1)] {
            assert_eq!(
                split(&app, invoices, DataType::INVOICES, generation).await,
                Some(key_at(rows, 45)),
                "{rows} invoices: in halves, split exactly"
            );
        }
        // Customers list by name, ascending: the first half is the lowest
        // 55%.
        assert_eq!(
            split(&app, customers, DataType::CUSTOMERS, 4).await,
            Some(key_at(PARALLEL_AT_ROWS, 55)),
            "customers: in halves, split exactly"
        );
        // A longer list is split at a sample's percentile, which is not
        // checked here (these rows lie in key order, a few pages of them
        // sampled): only that it moves in halves.
        assert!(
            split(&app, invoices, DataType::INVOICES, 5).await.is_some(),
            "a long list moves in halves"
        );
        assert_eq!(
            split(&app, Uuid::new_v4(), DataType::INVOICES, 6).await,
            None,
            "nothing staged: nothing to split"
        );
    }
}
