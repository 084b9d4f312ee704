//! Where synced records live, how a sync swaps them in, and how pages are
//! read, for every data type alike (one `record` table; see `ARCHITECTURE.md`
//! for why).
//!
//! Each (connection, data type) has a current generation in
//! `data_generation`; readers see only rows of that generation. A sync
//! takes the next generation number (`record_generation`: numbered once
//! across every list, so the record tables are keyed by it and the record's
//! id), writes its rows into `record_staging` under it, a page
//! at a time (by `COPY` on PostgreSQL; [`staging`]); then they move into
//! `record` with a sorted `INSERT … SELECT` (a long list on PostgreSQL in
//! two halves at once), numbering each row densely in its list's order
//! (`ordinal`, and `filter_ordinal` within its filter value), and the
//! transaction that completes the sync points `data_generation` at the new
//! generation with its row
//! count ([`publish`], [`generations`]). Readers therefore move from the
//! previous complete data to the new complete data in one step, never
//! seeing half a sync, and page N of a connection's list is a range of
//! ordinals: its cost does not depend on N, and `totalResults` is a stored
//! count or one index lookup ([`pages`]). The swap keeps a record's
//! previous copy when only its `modifiedDate` differs, and a sync stages
//! again, flagged deleted, what it no longer finds ([`deletions`]). The
//! replaced generation is retained a while for readers whose links pinned
//! it ([`generations::pinned_generations`]); its rows, and the staging, are
//! deleted afterwards ([`cleanup`]). A sync that changed nothing keeps the
//! generation readers see instead of publishing a copy ([`unchanged`]). One record is read by its
//! id in the visible generations ([`single`]); a list narrowed by a `query`
//! or ordered by an `orderBy` is read by conditions on the stored JSON
//! ([`query`]); such a list's whole order, and that of a company's list
//! merged from several connections, can be read once per snapshot and any
//! page of it then looked up by position ([`ordered`]); a query on the
//! fields a data type declares as keys reads its matches from the keys
//! built at publish instead ([`keys`]). Many rows of one generation are
//! looked up by a unique column, each its own probe ([`lookups`]); a
//! generation stored as a base plus the layer of a sync's changes is
//! planned, written and read in [`layers`] (published only with
//! `EngineConfig::layering`, off by default).

pub mod cleanup;
pub mod deletions;
pub mod generations;
pub mod keys;
pub mod layers;
pub mod lookups;
#[cfg(feature = "naive-paging")]
pub mod naive;
pub mod ordered;
pub mod pages;
pub mod publish;
pub mod query;
pub mod single;
pub mod staging;
pub mod unchanged;

pub use cleanup::{
    Generations, clear_staging, delete_generations, delete_synced_data, drop_expired,
    reclaim_staging, truncate_staging,
};
pub use generations::{
    Visible, confirm, current, current_generation, pinned_generations, publish, take_generation,
    unreachable_rows, visible_generations,
};
pub use publish::{
    Moved, Part, Publishing, Stamped, number_staged, refresh_statistics, split_point,
};
pub use staging::{Batch, COPY_LANES, Copied, STAGE_BATCH_ROWS, Staging, copy, into_lanes, stage};
