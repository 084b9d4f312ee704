//! One pull operation's run, step by step: [`Run::prepare`] (the
//! connection, its connector, fresh tokens), [`Run::fetch_mode`] (the whole
//! list or what changed, [`fetch_mode`]), [`Run::stage`] (every page, each
//! batch in fenced transactions, [`write`]; a first sync's keys gathered
//! meanwhile, [`keys`]; then what the platform did not send readable,
//! [`missing`]), [`Run::publish`] (the swap, [`publish`]; or, when the run
//! changed nothing, [`Run::keep_previous`]) and [`Run::clean_up`] (what
//! readers no longer see).

mod fetch_mode;
mod keys;
mod layered;
mod missing;
mod publish;
mod write;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sea_orm::{ActiveEnum, ConnectionTrait, DatabaseTransaction, DbBackend, TransactionTrait};

use entity::pull_operation;

use super::Engine;
use super::ending::RunError;
use super::tokens::Tokens;
use crate::companies;
use crate::connections::credentials;
use crate::connections::{self, ConnectionStatus};
use crate::data::DataType;
use crate::data::records::Row;
use crate::error::Problem;
use crate::oauth_clients;
use crate::platforms;
use crate::platforms::connector::Limits;
use crate::platforms::connector::{Page, Since};
use crate::platforms::kit::http::{CallGate, paced, platform_time};
use crate::store::{self, Generations, Staging};
use crate::sync::operations::issues::Issues;
use crate::sync::operations::lease;
use crate::sync::pacing;
use crate::sync::refresh;
use crate::sync::watermarks::Published;
use crate::timestamp::Timestamp;
use fetch_mode::Mode;
use missing::Seen;
use publish::Compare;

/// A batch of pages fetched and turned into rows ([`Run::fill`]).
struct Filled {
    /// Each record once, as last sent.
    rows: Vec<Row>,
    /// How many records the platform sent.
    records: i64,
    /// How many records the platform says its list holds, when it says.
    total: Option<u64>,
    /// Where the next page starts, `None` after the last.
    next: Option<String>,
    /// Whether the pages are the platform's whole list.
    whole_list: bool,
    /// Where the platform resumes its changes, said by the last page.
    resume: Option<String>,
    /// Records the pages say the platform deleted.
    removed: Vec<String>,
}

/// What [`Run::stage`] fetched.
struct Staged {
    /// How many records the platform sent.
    fetched: i64,
    /// Whether they are its whole list.
    whole_list: bool,
    /// Where the platform resumes its changes next time, when it says.
    resume: Option<String>,
    /// Records the platform says it deleted.
    removed: Vec<String>,
}

/// A claimed operation being run by `worker`.
pub(super) struct Run<'a> {
    pub engine: &'a Engine,
    pub worker: &'a str,
    pub operation: &'a pull_operation::Model,
    pub data_type: DataType,
    pub lease_lost: &'a AtomicBool,
    /// The records the connector could not read so far.
    pub issues: std::sync::Mutex<Issues>,
    /// A first sync's keys, gathered as its rows are staged (PostgreSQL):
    /// taken by the swap ([`store::keys::StagedKeys`]).
    pub keys: std::sync::Mutex<Option<store::keys::Gatherer>>,
}

/// What a run needs once prepared.
struct Prepared<'a> {
    tokens: Tokens<'a>,
    staging: Staging,
    /// What its platform calls go through: the platform's limits.
    gate: Arc<dyn CallGate>,
    /// The generation readers saw when the run began (layered or not):
    /// what the records it does not bring back are read from, and what
    /// whether it changed anything is compared with. `None` before the
    /// first sync.
    compared: Option<store::Visible>,
}

/// How long each step took, for the log.
#[derive(Default)]
struct Timings {
    fetching: Duration,
    /// Writing pages into the staging table (overlapping the fetches).
    writing: Duration,
    staging: Duration,
    publishing: Duration,
}

impl Run<'_> {
    /// Fetches every page, staging each under this worker's lease, then
    /// swaps. `staged` names the generation being written while there is
    /// one to discard if the run fails.
    pub async fn sync(&self, staged: &mut Option<i64>) -> Result<(), RunError> {
        let connection = connections::for_sync(&self.engine.db, self.operation.connection_id)
            .await?
            .ok_or_else(|| RunError::Cancelled("The connection was deleted.".to_owned()))?;
        let mut prepared = self.prepare(&connection).await?;
        *staged = Some(prepared.staging.generation);
        if prepared.staging.previous.is_none()
            && self.engine.db.get_database_backend() == DbBackend::Postgres
        {
            self.keep_keys(store::keys::Gatherer::start(self.data_type));
        }
        let mode = self.fetch_mode(&prepared.tokens, prepared.staging).await?;
        let mut timings = Timings::default();
        let started = Instant::now();
        let began = Timestamp::now();
        let gate = Arc::clone(&prepared.gate);
        let (staged_pages, platform_began) = paced(
            gate,
            platform_time(self.stage(&mut prepared, &mode, &mut timings)),
        )
        .await;
        let Staged {
            fetched,
            whole_list,
            resume,
            removed,
        } = staged_pages?;
        let issues = self.issues();
        issues.check(fetched as u64).map_err(RunError::Failed)?;
        let staging = prepared.staging;
        let compared = prepared.compared.as_ref();
        self.flag_removed(staging, compared, &removed, fetched)
            .await?;
        // Changes that change nothing (the overlap's records again, or a
        // quiet platform) keep the previous generation; after an incremental
        // fetch that is known before its unchanged records are staged again.
        let incremental = matches!(mode, Mode::Incremental { .. });
        let mut kept = if incremental {
            self.unchanged(staging, compared, Compare::Changes).await?
        } else {
            None
        };
        if kept.is_none() {
            let seen = self
                .stage_unsent(staging, compared, &issues, fetched, whole_list, &mode)
                .await?;
            if !incremental && whole_list {
                kept = match seen {
                    Seen::AChange => None,
                    Seen::NoChange(kept) => Some(kept),
                    Seen::NotCompared => {
                        self.unchanged(staging, compared, Compare::WholeList)
                            .await?
                    }
                };
            }
        }
        timings.staging = started.elapsed();
        let started = Instant::now();
        let watermark = Published {
            fetch_began: platform_began.unwrap_or(began),
            full_at: None,
            cursor: resume,
        };
        let (published, keys) = match kept {
            Some(kept) => {
                let rows = self
                    .keep_previous(staging, kept, &issues, watermark, &mode)
                    .await?;
                (rows, Duration::ZERO)
            }
            None => {
                self.publish(staging, compared, &issues, watermark, &mode)
                    .await?
            }
        };
        *staged = None;
        timings.publishing = started.elapsed();
        let started = Instant::now();
        match kept {
            Some(kept) => self.clean_up_kept(staging, kept.staged).await,
            None => self.clean_up(staging, published).await,
        }
        tracing::info!(
            pull_operation_id = %self.operation.id,
            data_type = self.data_type.name(),
            records = published,
            unchanged = kept.is_some(),
            fetch_mode = ?mode.recorded(),
            unreadable = issues.count(),
            fetch_ms = timings.fetching.as_millis() as u64,
            staging_ms = timings.staging.as_millis() as u64,
            write_ms = timings.writing.as_millis() as u64,
            publish_ms = timings.publishing.as_millis() as u64,
            keys_ms = keys.as_millis() as u64,
            cleanup_ms = started.elapsed().as_millis() as u64,
            "pull operation complete"
        );
        Ok(())
    }

    /// The records the connector could not read so far.
    pub fn issues(&self) -> Issues {
        self.issues
            .lock()
            .map(|issues| issues.clone())
            .unwrap_or_default()
    }

    /// Checks the connection can sync, opens its credentials with fresh
    /// tokens, and clears what abandoned runs left staged.
    async fn prepare<'c>(
        &self,
        connection: &'c entity::connection::Model,
    ) -> Result<Prepared<'c>, RunError>
    where
        Self: 'c,
    {
        let db = &self.engine.db;
        if connection.status != ConnectionStatus::Linked {
            return Err(RunError::Cancelled(format!(
                "The connection is {} now; authorize it again and queue a new sync.",
                connection.status.to_value()
            )));
        }
        let platform = platforms::find(&connection.platform_key).ok_or_else(|| {
            RunError::Failed(Problem::new(format!(
                "Unknown platform {:?}.",
                connection.platform_key
            )))
        })?;
        let connector = self
            .engine
            .connectors
            .get(&connection.platform_key)
            .ok_or_else(|| {
                RunError::Failed(Problem::new(format!(
                    "Syncing from {} is not available yet: tributary has no connector for it.",
                    platform.name
                )))
            })?;
        let credentials::Opened {
            body: credentials,
            organization_id,
            ..
        } = credentials::read(db, &self.engine.keyring, connection.id)
            .await
            .map_err(|error| {
                RunError::Failed(Problem::new(format!(
                    "The stored authorization cannot be read: {error}."
                )))
            })?
            .ok_or_else(|| {
                RunError::Cancelled("The connection has no stored authorization.".to_owned())
            })?;
        let tenant_client_id = companies::owner(db, connection.company_id)
            .await?
            .ok_or_else(|| RunError::Cancelled("The company was deleted.".to_owned()))?;
        let gate = self
            .gate(
                connection,
                platform,
                tenant_client_id,
                &organization_id,
                connector.limits(),
            )
            .await?;
        let mut tokens = Tokens::new(
            refresh::Subject {
                connection_id: connection.id,
                tenant_client_id,
                platform_key: &connection.platform_key,
            },
            connector,
            credentials,
        );
        tokens
            .refresh(self.engine, refresh::Need::IfExpiring)
            .await?;

        let compared = store::current(db, connection.id, self.data_type).await?;
        let current = compared.as_ref().map_or(0, |visible| visible.generation);
        // Leftovers of abandoned attempts (never published) go first; then
        // this run takes its generation's number.
        let txn = self.fenced(0, 0).await?;
        store::clear_staging(&txn, connection.id, self.data_type, None).await?;
        store::delete_generations(
            &txn,
            connection.id,
            self.data_type,
            Generations::Above(current),
        )
        .await?;
        let generation = store::take_generation(&txn, connection.id, self.data_type).await?;
        txn.commit().await?;
        // A layered generation stores only its changes: the swap compares
        // with its base, a full generation, so that a layer it publishes
        // holds every change since (finding the layer's own copies first:
        // `Publishing::previous_layer`); what the run did not bring back is
        // read from the layer as readers see it (`compared`).
        let previous = compared.as_ref().map(store::Visible::full_generation);
        let staging = Staging {
            connection_id: connection.id,
            company_id: connection.company_id,
            generation,
            previous,
            modified: Timestamp::now(),
        };
        Ok(Prepared {
            tokens,
            staging,
            gate,
            compared,
        })
    }

    /// The gate the connection's platform calls go through: its platform's
    /// `limits` for its OAuth application and `organization`.
    async fn gate(
        &self,
        connection: &entity::connection::Model,
        platform: &platforms::Platform,
        tenant_client_id: uuid::Uuid,
        organization: &str,
        limits: Limits,
    ) -> Result<Arc<dyn CallGate>, RunError> {
        let db = &self.engine.db;
        let application =
            oauth_clients::application_of(db, tenant_client_id, &connection.platform_key)
                .await?
                .unwrap_or_else(|| format!("tributary-client:{tenant_client_id}"));
        let subject = pacing::Subject {
            platform_key: &connection.platform_key,
            platform: platform.name,
            application: &application,
            organization,
        };
        Ok(pacing::gate(db, subject, limits))
    }

    /// Fetches and stages every page (returning how many records were
    /// fetched, and whether they are the platform's whole list); stops
    /// between two pages when the lease is lost or the process is stopping.
    /// Pages are fetched while the ones before are written, and staged in
    /// batches of what arrived meanwhile (up to [`store::STAGE_BATCH_ROWS`]
    /// rows): the platform (or the sandbox's generator) and the database work
    /// at the same time; a slow platform has each page written (and its
    /// progress recorded) as it comes, and a fast one a million records in
    /// about two hundred transactions, not a thousand.
    async fn stage(
        &self,
        prepared: &mut Prepared<'_>,
        mode: &Mode,
        timings: &mut Timings,
    ) -> Result<Staged, RunError> {
        let staging = prepared.staging;
        let since = mode.since();
        let mut fetched: i64 = 0;
        let mut removed = Vec::new();
        let idle = AtomicBool::new(true);
        let mut filled = self
            .fill(
                &mut prepared.tokens,
                staging,
                since.clone(),
                None,
                &idle,
                timings,
            )
            .await?;
        loop {
            fetched += filled.records;
            removed.append(&mut filled.removed);
            let progress = match filled.total {
                Some(total) if total > 0 => ((fetched as u64 * 100) / total).min(99) as i32,
                _ => 0,
            };
            idle.store(false, Ordering::SeqCst);
            let write = async {
                let started = Instant::now();
                let written = self.write(staging, filled.rows, fetched, progress).await;
                idle.store(true, Ordering::SeqCst);
                written.map(|()| started.elapsed())
            };
            let Some(cursor) = filled.next else {
                timings.writing += write.await?;
                return Ok(Staged {
                    fetched,
                    whole_list: filled.whole_list,
                    resume: filled.resume,
                    removed,
                });
            };
            let mut fetching = Timings::default();
            let (written, next) = tokio::join!(
                write,
                self.fill(
                    &mut prepared.tokens,
                    staging,
                    since.clone(),
                    Some(cursor),
                    &idle,
                    &mut fetching
                )
            );
            timings.writing += written?;
            timings.fetching += fetching.fetching;
            filled = next?;
        }
    }

    /// Fetches pages from `cursor` (the first page when `None`; of what
    /// changed since `since` when given) and turns them into staged rows,
    /// until the list ends, or the writer is `idle` (its batch written), or
    /// they hold [`store::STAGE_BATCH_ROWS`] rows.
    async fn fill(
        &self,
        tokens: &mut Tokens<'_>,
        staging: Staging,
        since: Option<Since>,
        mut cursor: Option<String>,
        idle: &AtomicBool,
        timings: &mut Timings,
    ) -> Result<Filled, RunError> {
        let internal = |error: crate::error::Error| RunError::Internal(error.to_string());
        let mut batch = store::Batch::default();
        let mut records = 0;
        let mut removed_so_far = Vec::new();
        loop {
            let Page {
                records: page,
                next,
                total,
                whole_list,
                issues,
                resume,
                mut removed,
            } = self.fetch(tokens, since.clone(), cursor, timings).await?;
            removed_so_far.append(&mut removed);
            if !issues.is_empty() {
                self.issues
                    .lock()
                    .map_err(|_| RunError::Internal("the issues' lock was poisoned".to_owned()))?
                    .add_page(page.len(), issues)
                    .map_err(RunError::Failed)?;
            }
            // Staging keys rows by the records' own type: a page of another
            // type would land in another data type's generation.
            if page.data_type() != self.data_type {
                return Err(RunError::Internal(format!(
                    "the connector answered {} to a sync of {}",
                    page.data_type().name(),
                    self.data_type.name()
                )));
            }
            records += page.len() as i64;
            // Writing a page's JSON is milliseconds of CPU: on a blocking
            // thread, while this task goes on feeding the `COPY` of the
            // batch before (which had waited for it: 10 s of 33 at a
            // million records).
            let rows = tokio::task::spawn_blocking(move || staging.rows(&page))
                .await
                .map_err(|error| RunError::Internal(error.to_string()))?
                .map_err(internal)?;
            batch.add(rows);
            if next.is_none()
                || idle.load(Ordering::SeqCst)
                || batch.len() >= store::STAGE_BATCH_ROWS
            {
                return Ok(Filled {
                    rows: batch.into_rows(),
                    records,
                    total,
                    next,
                    whole_list,
                    resume,
                    removed: removed_so_far,
                });
            }
            cursor = next;
        }
    }

    /// Fetches one page, unless the lease is lost or the process is stopping.
    async fn fetch(
        &self,
        tokens: &mut Tokens<'_>,
        since: Option<Since>,
        cursor: Option<String>,
        timings: &mut Timings,
    ) -> Result<Page, RunError> {
        if self.lease_lost.load(Ordering::SeqCst) {
            return Err(RunError::LeaseLost);
        }
        if self.engine.stopping() {
            return Err(RunError::Interrupted);
        }
        let started = Instant::now();
        let page = tokens
            .fetch(self.engine, self.data_type, since, cursor)
            .await?;
        timings.fetching += started.elapsed();
        Ok(page)
    }

    /// A transaction that starts by re-asserting this worker's lease (and
    /// recording progress); `LeaseLost` if another worker owns the operation.
    async fn fenced(&self, fetched: i64, progress: i32) -> Result<DatabaseTransaction, RunError> {
        let txn = self.engine.db.begin().await?;
        if txn.get_database_backend() == DbBackend::Postgres {
            // A staged page need not reach the disk before the next one is
            // fetched: after a crash the run restarts and discards its
            // staging anyway (unlogged on PostgreSQL). The swap stays durable.
            txn.execute_unprepared("SET LOCAL synchronous_commit = off")
                .await?;
        }
        if !lease::hold(&txn, self.operation.id, self.worker, fetched, progress).await? {
            return Err(RunError::LeaseLost);
        }
        Ok(txn)
    }
}
