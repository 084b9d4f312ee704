//! Writing a batch of staged rows: by `COPY` in lanes on PostgreSQL (each
//! in a fenced transaction of its own, the batch also handed to the keys'
//! gatherer, [`super::keys`]), by upserting statements where a lane repeats
//! a record and on SQLite.

use std::sync::Arc;

use sea_orm::DbBackend;

use super::super::ending::RunError;
use super::Run;
use crate::data::DataType;
use crate::data::records::Row;
use crate::store::{self, Copied, Staging};
use crate::sync::operations::lease;

impl Run<'_> {
    /// Stages a batch of rows. On PostgreSQL by `COPY`, the rows dealt into
    /// [`store::COPY_LANES`] lanes that stage at once, each in a fenced
    /// transaction of its own (the first lane's records the progress so far);
    /// a lane whose rows repeat a record an earlier page staged, and every
    /// page on SQLite, by upserting statements in a fenced transaction.
    pub(super) async fn write(
        &self,
        staging: Staging,
        rows: Vec<Row>,
        fetched: i64,
        progress: i32,
    ) -> Result<(), RunError> {
        let internal = |error: crate::error::Error| RunError::Internal(error.to_string());
        let data_type = self.data_type;
        let upsert = |rows: Vec<Row>| async move {
            let txn = self.fenced(fetched, progress).await?;
            store::stage(&txn, staging, data_type, &rows)
                .await
                .map_err(internal)?;
            txn.commit().await?;
            Ok::<(), RunError>(())
        };
        if self.engine.db.get_database_backend() != DbBackend::Postgres {
            return upsert(rows).await;
        }
        let lanes = Arc::new(store::into_lanes(rows));
        let copies = lanes.iter().enumerate().map(|(lane, rows)| {
            let progress = (lane == 0).then_some((fetched, progress));
            self.copy(staging, data_type, rows, progress)
        });
        let (copied, ()) = tokio::join!(
            futures_util::future::join_all(copies),
            self.gather_keys(Arc::clone(&lanes))
        );
        for (rows, copied) in lanes.iter().zip(copied) {
            if copied? == Copied::AlreadyStaged {
                // The lane's rows replace copies staged before: the keys
                // gathered no longer describe what is staged, and the swap
                // reads them back.
                self.keep_keys(None);
                upsert(rows.clone()).await?;
            }
        }
        Ok(())
    }

    /// [`store::copy`] of one lane in a transaction of its own, on a
    /// connection of SeaORM's pool (SeaORM has no `COPY`), fenced by
    /// [`lease::hold_on`] recording `progress` (records fetched, percent), or,
    /// for the other lanes, by [`lease::share_on`], which does not queue
    /// behind it. A lane without rows and without progress to record is
    /// nothing to do.
    async fn copy(
        &self,
        staging: Staging,
        data_type: DataType,
        rows: &[Row],
        progress: Option<(i64, i32)>,
    ) -> Result<Copied, RunError> {
        if rows.is_empty() && progress.is_none() {
            return Ok(Copied::Staged);
        }
        let pool = self.engine.db.get_postgres_connection_pool();
        let internal = |error: sea_orm::sqlx::Error| RunError::Internal(error.to_string());
        let mut txn = pool.begin().await.map_err(internal)?;
        sea_orm::sqlx::query("SET LOCAL synchronous_commit = off")
            .execute(&mut *txn)
            .await
            .map_err(internal)?;
        let (operation, worker) = (self.operation.id, self.worker);
        let held = match progress {
            Some((fetched, progress)) => {
                lease::hold_on(&mut txn, operation, worker, fetched, progress).await
            }
            None => lease::share_on(&mut txn, operation, worker).await,
        }
        .map_err(internal)?;
        if !held {
            return Err(RunError::LeaseLost);
        }
        let copied = store::copy(&mut txn, staging, data_type, rows)
            .await
            .map_err(internal)?;
        match copied {
            Copied::Staged => txn.commit().await.map_err(internal)?,
            Copied::AlreadyStaged => txn.rollback().await.map_err(internal)?,
        }
        Ok(copied)
    }
}
