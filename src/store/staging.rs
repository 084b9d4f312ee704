//! Writing a running sync's pages into `record_staging`, under the
//! generation it will publish: by `COPY` on PostgreSQL ([`copy`]), by
//! upserting statements otherwise ([`stage`]).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::sqlx::PgConnection;
use sea_orm::{ConnectionTrait, DbBackend, EntityTrait, Set, Statement};
use serde::Serialize;
use uuid::Uuid;

use entity::record_staging;

use crate::data::records::{Row, Stamp, without_modified_date};
use crate::data::{DataType, Records};
use crate::error::Error;
use crate::timestamp::Timestamp;

/// Rows per insert statement on SQLite (8 values a row, well under its limit).
const INSERT_BATCH: usize = 500;

/// Where a page of staged rows belongs.
#[derive(Debug, Clone, Copy)]
pub struct Staging {
    /// The connection synced.
    pub connection_id: Uuid,
    /// Its company.
    pub company_id: Uuid,
    /// The generation being written.
    pub generation: i64,
    /// The full generation the swap compares with, `None` before the first
    /// sync: the one readers saw when the run started, or the base of the
    /// layer they saw (the run reads what it does not bring back from the
    /// layer itself: [`super::deletions`]).
    pub previous: Option<i64>,
    /// When the run started: the time a record found deleted is flagged at
    /// (the swap stamps every changed record with its own time).
    pub modified: DateTime<Utc>,
}

impl Staging {
    /// A page's records as staged rows, their JSON without its
    /// `modifiedDate` (the swap adds it: `without_modified_date`). A record
    /// the platform sent twice in the page is kept once, as last sent
    /// ([`Records::rows`]).
    pub fn rows(&self, records: &Records) -> Result<Vec<Row>, Error> {
        let stamp = Stamp {
            connection_id: self.connection_id,
            modified: Timestamp(self.modified),
        };
        let mut rows = records.rows(&stamp).map_err(Error::internal)?;
        for row in &mut rows {
            row.body = without_modified_date(std::mem::take(&mut row.body));
        }
        Ok(rows)
    }
}

/// Writes one page of rows (of `data_type`) into the staging table,
/// replacing a row an earlier page staged under the same id: the record
/// as last sent wins.
///
/// On PostgreSQL the page goes as one JSON parameter that the server
/// expands with `json_to_recordset`: one short statement per page instead
/// of eight bound values per row ([`copy`] is faster still, but cannot
/// replace a row).
pub async fn stage(
    db: &impl ConnectionTrait,
    staging: Staging,
    data_type: DataType,
    rows: &[Row],
) -> Result<(), Error> {
    if rows.is_empty() {
        return Ok(());
    }
    if db.get_database_backend() == DbBackend::Postgres {
        return stage_as_json(db, staging, data_type, rows).await;
    }
    for batch in rows.chunks(INSERT_BATCH) {
        let models = batch.iter().map(|row| record_staging::ActiveModel {
            connection_id: Set(staging.connection_id),
            data_type: Set(data_type.name().to_owned()),
            generation: Set(staging.generation),
            record_id: Set(row.id.clone()),
            company_id: Set(staging.company_id),
            sort_key: Set(row.sort_key.clone()),
            filter_value: Set(row.filter_value.as_deref().map(str::to_owned)),
            body: Set(row.body.clone()),
        });
        record_staging::Entity::insert_many(models)
            .on_conflict(
                OnConflict::columns([
                    record_staging::Column::Generation,
                    record_staging::Column::RecordId,
                ])
                .update_columns([
                    record_staging::Column::CompanyId,
                    record_staging::Column::SortKey,
                    record_staging::Column::FilterValue,
                    record_staging::Column::Body,
                ])
                .to_owned(),
            )
            .exec(db)
            .await?;
    }
    Ok(())
}

/// A staged row as PostgreSQL's `json_to_recordset` reads it. The body goes
/// in as a string within the page's JSON: PostgreSQL then parses it once, as
/// part of the page, instead of validating every body again as `json` (the
/// serializer wrote it; it is valid).
#[derive(Serialize)]
struct JsonRow<'a> {
    record_id: &'a str,
    sort_key: &'a str,
    filter_value: Option<&'a str>,
    body: &'a str,
}

async fn stage_as_json(
    db: &impl ConnectionTrait,
    staging: Staging,
    data_type: DataType,
    rows: &[Row],
) -> Result<(), Error> {
    let page: Vec<JsonRow> = rows
        .iter()
        .map(|row| JsonRow {
            record_id: &row.id,
            sort_key: &row.sort_key,
            filter_value: row.filter_value.as_deref(),
            body: &row.body,
        })
        .collect();
    let page = serde_json::to_string(&page).map_err(Error::internal)?;
    db.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        STAGE_FROM_JSON,
        [
            staging.connection_id.into(),
            data_type.name().into(),
            staging.generation.into(),
            staging.company_id.into(),
            page.into(),
        ],
    ))
    .await?;
    Ok(())
}

/// `$1` connection, `$2` data type, `$3` generation, `$4` company, `$5` the rows.
const STAGE_FROM_JSON: &str = "INSERT INTO record_staging (connection_id, data_type, generation, \
     record_id, company_id, sort_key, filter_value, body) \
     SELECT $1, $2, $3, record_id, $4, sort_key, filter_value, body \
     FROM json_to_recordset($5::json) AS page(record_id text, sort_key text, filter_value text, \
     body text) \
     ON CONFLICT (generation, record_id) DO UPDATE SET \
     company_id = excluded.company_id, sort_key = excluded.sort_key, \
     filter_value = excluded.filter_value, body = excluded.body";

/// The most rows a batch of staged pages holds: the pages a sync fetches
/// while a batch is written are written together, up to this many. A
/// transaction per page of a fast platform cost more than the rows in it
/// (12 s of `BEGIN`, fence and commit round trips per million records);
/// 10,000 left the server 30 MB larger after a million-record sync than
/// this, for 0.3 s less staging.
pub const STAGE_BATCH_ROWS: usize = 5_000;

/// The rows of several pages, each record once: as last sent, in the place
/// it was first seen (one upsert statement may not touch a row twice, and
/// one `COPY` may not write it twice).
#[derive(Debug, Default)]
pub struct Batch {
    rows: Vec<Row>,
    places: HashMap<String, usize>,
}

impl Batch {
    /// Adds a page's rows.
    pub fn add(&mut self, rows: Vec<Row>) {
        for row in rows {
            match self.places.get(&row.id) {
                Some(&place) => self.rows[place] = row,
                None => {
                    self.places.insert(row.id.clone(), self.rows.len());
                    self.rows.push(row);
                }
            }
        }
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Its rows.
    pub fn into_rows(self) -> Vec<Row> {
        self.rows
    }
}

/// How many `COPY` streams stage a page at once on PostgreSQL: one server
/// process parses and stores a stream, and with one stream that process was
/// the whole of a large sync's staging (12 s of 13 at a million invoices).
pub const COPY_LANES: usize = 2;

/// A page's rows dealt into [`COPY_LANES`] lanes by a hash of their ids, so
/// that every copy of a record, on whichever page it comes, goes down the
/// same lane: each lane stages its pages in order, and a record sent twice
/// is staged as last sent.
pub fn into_lanes(rows: Vec<Row>) -> [Vec<Row>; COPY_LANES] {
    let mut lanes: [Vec<Row>; COPY_LANES] = Default::default();
    for row in rows {
        lanes[lane_of(&row.id)].push(row);
    }
    lanes
}

/// The lane of a record id: FNV-1a over its bytes, which spreads ids that
/// differ only in their last characters.
fn lane_of(id: &str) -> usize {
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (hash % COPY_LANES as u64) as usize
}

/// What [`copy`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copied {
    /// Every row is staged.
    Staged,
    /// A row's id was staged by an earlier page, which `COPY` cannot
    /// replace: nothing of the page is staged, the transaction is aborted,
    /// and the page must go through [`stage`] instead.
    AlreadyStaged,
}

/// PostgreSQL: writes one page of rows into the staging table with
/// `COPY … FROM STDIN` in the binary format, inside the transaction open on
/// `connection`. The rows travel as they are (no JSON around them, no
/// escaping, nothing for the server to parse but lengths), which makes a
/// large sync's staging several times cheaper than statements, over TLS
/// too. A platform that sends a record again on a later page (one that
/// changed while we paged) makes the whole `COPY` fail on the primary key;
/// that is [`Copied::AlreadyStaged`], and rare.
pub async fn copy(
    connection: &mut PgConnection,
    staging: Staging,
    data_type: DataType,
    rows: &[Row],
) -> Result<Copied, sea_orm::sqlx::Error> {
    if rows.is_empty() {
        return Ok(Copied::Staged);
    }
    let data = binary_copy(staging, data_type, rows);
    let mut copy_in = connection.copy_in_raw(COPY_STAGING).await?;
    let mut sent = Ok(());
    // In messages of `COPY_MESSAGE_BYTES`: the connection's write buffer
    // grows to the largest message it sends and keeps that size, on every
    // connection of the pool (whole batches kept 100 MB after a sync).
    for message in data.chunks(COPY_MESSAGE_BYTES) {
        sent = copy_in.send(message).await.map(|_| ());
        if sent.is_err() {
            break;
        }
    }
    let sent = match sent {
        Ok(()) => copy_in.finish().await.map(|_| ()),
        Err(error) => Err(error),
    };
    match sent {
        Ok(()) => Ok(Copied::Staged),
        Err(sea_orm::sqlx::Error::Database(error)) if error.is_unique_violation() => {
            Ok(Copied::AlreadyStaged)
        }
        Err(error) => Err(error),
    }
}

/// The most bytes of a `COPY` sent in one message.
const COPY_MESSAGE_BYTES: usize = 256 * 1024;

const COPY_STAGING: &str = "COPY record_staging (connection_id, data_type, generation, record_id, \
     company_id, sort_key, filter_value, body) FROM STDIN (FORMAT binary)";

/// The page in PostgreSQL's binary `COPY` format: a signature, then per row
/// its field count and each field as a length and its bytes (`-1` for
/// NULL), then `-1`.
fn binary_copy(staging: Staging, data_type: DataType, rows: &[Row]) -> Vec<u8> {
    const FIELDS: i16 = 8;
    let size: usize = rows
        .iter()
        .map(|row| 100 + row.id.len() + row.sort_key.len() + row.body.len())
        .sum();
    let mut data = Vec::with_capacity(19 + size + 2);
    data.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    data.extend_from_slice(&0_i32.to_be_bytes()); // flags: no OIDs
    data.extend_from_slice(&0_i32.to_be_bytes()); // no header extension
    let field = |data: &mut Vec<u8>, bytes: &[u8]| {
        // A field longer than 2 GiB cannot be a record of ours: the
        // platform's response would not have been read.
        let length = i32::try_from(bytes.len()).unwrap_or(i32::MAX);
        data.extend_from_slice(&length.to_be_bytes());
        data.extend_from_slice(bytes);
    };
    for row in rows {
        data.extend_from_slice(&FIELDS.to_be_bytes());
        field(&mut data, staging.connection_id.as_bytes());
        field(&mut data, data_type.name().as_bytes());
        field(&mut data, &staging.generation.to_be_bytes());
        field(&mut data, row.id.as_bytes());
        field(&mut data, staging.company_id.as_bytes());
        field(&mut data, row.sort_key.as_bytes());
        match &row.filter_value {
            Some(value) => field(&mut data, value.as_bytes()),
            None => data.extend_from_slice(&(-1_i32).to_be_bytes()),
        }
        field(&mut data, row.body.as_bytes());
    }
    data.extend_from_slice(&(-1_i16).to_be_bytes());
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(data: &[u8], at: &mut usize) -> Option<Vec<u8>> {
        let length = i32::from_be_bytes(data[*at..*at + 4].try_into().expect("4 bytes"));
        *at += 4;
        if length < 0 {
            return None;
        }
        let bytes = data[*at..*at + length as usize].to_vec();
        *at += length as usize;
        Some(bytes)
    }

    #[test]
    fn a_batch_keeps_each_record_once_as_last_sent_where_first_seen() {
        let row = |id: &str, body: &str| Row {
            id: id.to_owned(),
            sort_key: String::new(),
            filter_value: None,
            body: body.to_owned(),
        };
        let mut batch = Batch::default();
        batch.add(vec![row("a", "a1"), row("b", "b1")]);
        batch.add(vec![row("c", "c1"), row("a", "a2")]);
        assert_eq!(batch.len(), 3);
        let rows = batch.into_rows();
        let seen: Vec<(&str, &str)> = rows
            .iter()
            .map(|row| (row.id.as_str(), row.body.as_str()))
            .collect();
        assert_eq!(seen, [("a", "a2"), ("b", "b1"), ("c", "c1")]);
    }

    #[test]
    fn lanes_split_a_page_about_evenly_and_keep_each_id_in_one_lane() {
        let row = |index: u32| Row {
            id: format!("inv-{index:07}"),
            sort_key: String::new(),
            filter_value: None,
            body: String::new(),
        };
        let lanes = into_lanes((0..1000).map(row).collect());
        let sizes: Vec<usize> = lanes.iter().map(Vec::len).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 1000);
        assert!(
            sizes.iter().all(|size| (400..=600).contains(size)),
            "{sizes:?}"
        );
        let again = into_lanes((0..1000).map(row).collect());
        for (lane, rows) in lanes.iter().enumerate() {
            let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
            let same: Vec<&str> = again[lane].iter().map(|row| row.id.as_str()).collect();
            assert_eq!(ids, same, "lane {lane}");
            assert!(rows.iter().all(|row| lane_of(&row.id) == lane));
        }
    }

    #[test]
    fn a_page_is_encoded_in_postgresql_binary_copy_format() {
        let staging = Staging {
            connection_id: Uuid::from_u128(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff),
            company_id: Uuid::from_u128(7),
            generation: 3,
            previous: Some(2),
            modified: chrono::DateTime::UNIX_EPOCH,
        };
        let rows = [
            Row {
                id: "inv-1".to_owned(),
                sort_key: "2024-01-31".to_owned(),
                filter_value: Some("Paid".into()),
                body: "{\"note\":\"tab\\there\"}".to_owned(),
            },
            Row {
                id: "inv-2".to_owned(),
                sort_key: "2024-02-01".to_owned(),
                filter_value: None,
                body: "{}".to_owned(),
            },
        ];
        let data = binary_copy(staging, DataType::INVOICES, &rows);

        assert_eq!(&data[..11], b"PGCOPY\n\xff\r\n\0");
        assert_eq!(&data[11..19], &[0; 8], "no flags, no header extension");
        let mut at = 19;
        for row in &rows {
            assert_eq!(i16::from_be_bytes([data[at], data[at + 1]]), 8);
            at += 2;
            let fields: Vec<Option<Vec<u8>>> = (0..8).map(|_| field(&data, &mut at)).collect();
            assert_eq!(
                fields[0].as_deref(),
                Some(&staging.connection_id.as_bytes()[..])
            );
            assert_eq!(fields[1].as_deref(), Some(&b"invoices"[..]));
            assert_eq!(fields[2].as_deref(), Some(&3_i64.to_be_bytes()[..]));
            assert_eq!(fields[3].as_deref(), Some(row.id.as_bytes()));
            assert_eq!(
                fields[4].as_deref(),
                Some(&staging.company_id.as_bytes()[..])
            );
            assert_eq!(fields[5].as_deref(), Some(row.sort_key.as_bytes()));
            assert_eq!(
                fields[6].as_deref(),
                row.filter_value.as_deref().map(str::as_bytes)
            );
            assert_eq!(fields[7].as_deref(), Some(row.body.as_bytes()), "unescaped");
        }
        assert_eq!(&data[at..], &(-1_i16).to_be_bytes(), "the trailer ends it");
    }
}
