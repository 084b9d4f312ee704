//! Whether a staged list moves into `record` in two halves at once
//! (PostgreSQL), and where it is split: decided by the list's exact count
//! near the threshold, so the same list always moves the same way.

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use tributary::data::DataType;
use tributary::store::publish::PARALLEL_AT_ROWS;
use uuid::Uuid;

use crate::helpers::{Backend, TestApp, backends};

/// Stages `rows` invoices of `connection_id`'s `generation`, with the sort
/// keys `0000001` to `rows` (zero-padded, so they sort as numbers).
async fn stage(app: &TestApp, connection_id: Uuid, generation: i64, rows: u64) {
    app.db
        .execute_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "INSERT INTO record_staging \
               (connection_id, data_type, generation, record_id, company_id, sort_key, filter_value, body) \
             SELECT $1, 'invoices', $2, 'inv-' || i, $3, lpad(i::text, 7, '0'), 'PAID', '{}' \
             FROM generate_series(1, $4::bigint) AS i",
            [
                connection_id.into(),
                generation.into(),
                Uuid::new_v4().into(),
                (rows as i64).into(),
            ],
        ))
        .await
        .expect("staged");
}

/// Where `split_point` splits `connection_id`'s staged `generation`.
async fn split(app: &TestApp, connection_id: Uuid, generation: i64) -> Option<String> {
    tributary::store::split_point(&app.db, connection_id, DataType::INVOICES, generation)
        .await
        .expect("split")
}

#[tokio::test]
async fn a_list_moves_in_halves_from_exactly_the_threshold_on_split_where_its_first_half_is_55_percent()
 {
    // SQLite moves every list whole, in the swap: `split_point` is
    // PostgreSQL's alone.
    for backend in backends() {
        if backend != Backend::Postgres {
            continue;
        }
        let app = TestApp::spawn(backend).await;
        let connection_id = Uuid::new_v4();
        stage(&app, connection_id, 1, PARALLEL_AT_ROWS - 1).await;
        stage(&app, connection_id, 2, PARALLEL_AT_ROWS).await;
        stage(&app, connection_id, 3, 4 * PARALLEL_AT_ROWS + 1).await;
        // Every time: a sample of 1% of the pages once decided it about as
        // often one way as the other near the threshold.
        for _ in 0..5 {
            assert_eq!(
                split(&app, connection_id, 1).await,
                None,
                "one row short of the threshold: moved whole"
            );
            // Invoices list the latest issue date first: the first half is
            // the 55% of rows with the highest keys, above the 45th
            // percentile.
            assert_eq!(
                split(&app, connection_id, 2).await.as_deref(),
                Some(format!("{:07}", PARALLEL_AT_ROWS * 45 / 100).as_str()),
                "at the threshold: in halves, split exactly"
            );
        }
        // Longer lists are split at a sample's percentile (or, when the
        // sample takes no page of them, at the exact one).
        let at = split(&app, connection_id, 3).await;
        assert!(at.is_some(), "a long list moves in halves");
        assert_eq!(
            split(&app, Uuid::new_v4(), 1).await,
            None,
            "nothing staged: nothing to split"
        );
    }
}
