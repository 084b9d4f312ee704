//! A first sync's keys gathered as its rows are staged, so that publishing
//! them needs no read-back of every stored record's JSON (3-4 s of a
//! million-invoice first sync): each staged row's declared values, sort key
//! and id, kept in the order staged; at the swap the rows are ranked as the
//! list orders them (the ordinals the swap gives them) and the values
//! renumbered by rank.
//!
//! Only rows that all passed through [`StagedKeys::add`] qualify: a first
//! sync (no previous copies to keep, so every record's `modifiedDate` is the
//! swap's time) on PostgreSQL, whose `COPY` tells a record staged twice (the
//! run then drops its [`Gatherer`]). A body that does not read, a gatherer
//! whose thread failed, or a count that differs from the rows published is
//! read back as before.

use std::sync::Arc;

use crate::data::DataType;
use crate::data::Direction;
use crate::data::fields::Field;
use crate::data::records::{Row, modified_date_suffix};
use crate::timestamp::Timestamp;

use super::gathered::Gathered;
use super::{declared, values};
use crate::store::staging::COPY_LANES;

/// The field every record has, stamped by the swap.
const MODIFIED_DATE: &str = "modifiedDate";

/// What stands in for a staged body's cut-off `modifiedDate` so the body
/// reads as JSON again: a property no declared field names.
const CLOSING: &str = "\"\":0}";

/// The declared values of the rows staged so far, in the order staged.
#[derive(Debug)]
pub struct StagedKeys {
    fields: Vec<&'static Field>,
    gathered: Vec<Gathered>,
    direction: Direction,
    /// Every row's sort key then id, one after the other.
    text: Vec<u8>,
    /// Where each row's sort key ends and its id ends, in `text`.
    ends: Vec<(u32, u32)>,
    /// Whether a row could not be read (or counted): the keys are read back.
    spoiled: bool,
    /// A staged body with its JSON closed again.
    buffer: String,
}

/// A page batch's rows as staged, lane by lane.
pub type Lanes = [Vec<Row>; COPY_LANES];

/// A [`StagedKeys`] filled on a thread of its own, as batches are staged.
/// Its own thread keeps the values it holds for the whole sync apart from
/// the pages' short-lived buffers: gathered on the blocking pool's threads,
/// among those buffers, they left the process 70 MB larger at its peak
/// (320 MB in a million-invoice first sync, against 250 MB without them).
pub struct Gatherer {
    batches: tokio::sync::mpsc::Sender<Arc<Lanes>>,
    thread: std::thread::JoinHandle<StagedKeys>,
}

impl Gatherer {
    /// Starts gathering the keys of a list of `data_type`; `None` when it
    /// declares none (or no thread could start: the keys are then read back).
    pub fn start(data_type: DataType) -> Option<Self> {
        let mut keys = StagedKeys::new(data_type)?;
        // At most two batches wait for the thread: the staging waits for it
        // rather than holding more pages.
        let (batches, mut received) = tokio::sync::mpsc::channel::<Arc<Lanes>>(2);
        let thread = std::thread::Builder::new()
            .name("staged-keys".to_owned())
            .spawn(move || {
                while let Some(lanes) = received.blocking_recv() {
                    for rows in lanes.iter() {
                        keys.add(rows);
                    }
                }
                keys
            })
            .ok()?;
        Some(Self { batches, thread })
    }

    /// Where batches go, to send one without holding the gatherer.
    pub fn sender(&self) -> tokio::sync::mpsc::Sender<Arc<Lanes>> {
        self.batches.clone()
    }

    /// Every batch sent is gathered: the keys so far (`None` if the thread
    /// failed).
    pub async fn finish(self) -> Option<StagedKeys> {
        let Self { batches, thread } = self;
        drop(batches);
        tokio::task::spawn_blocking(move || thread.join().ok())
            .await
            .ok()
            .flatten()
    }
}

/// The keys a first sync's rows hold, by declared field, ready to write.
pub struct Ranked {
    /// Each declared field with its values, by the rows' ordinals.
    pub fields: Vec<(&'static Field, Gathered)>,
}

impl StagedKeys {
    /// Nothing staged yet of a list of `data_type`; `None` when the data
    /// type declares no keys.
    pub fn new(data_type: DataType) -> Option<Self> {
        let fields = declared(data_type);
        if fields.is_empty() {
            return None;
        }
        let gathered = fields
            .iter()
            .map(|field| Gathered::new(&field.kind))
            .collect();
        Some(Self {
            fields,
            gathered,
            direction: data_type.spec().order,
            text: Vec::new(),
            ends: Vec::new(),
            spoiled: false,
            buffer: String::new(),
        })
    }

    /// Gathers a batch of staged rows (each record once in it). A body is
    /// staged without its `modifiedDate` (`without_modified_date`), which
    /// the swap adds: it is read closed by [`CLOSING`] instead.
    pub fn add(&mut self, rows: &[Row]) {
        if self.spoiled {
            return;
        }
        for row in rows {
            let Ok(index) = u32::try_from(self.ends.len() + 1) else {
                return self.spoil();
            };
            self.buffer.clear();
            self.buffer.push_str(&row.body);
            self.buffer.push_str(CLOSING);
            let Ok(found) = values::extract(&self.buffer, &self.fields) else {
                return self.spoil();
            };
            for (field, value) in self.gathered.iter_mut().zip(found) {
                if let Some(value) = value {
                    field.add(index, &value);
                }
            }
            self.text.extend_from_slice(row.sort_key.as_bytes());
            let sort_key_end = self.text.len();
            self.text.extend_from_slice(row.id.as_bytes());
            let (Ok(sort_key_end), Ok(id_end)) =
                (u32::try_from(sort_key_end), u32::try_from(self.text.len()))
            else {
                return self.spoil();
            };
            self.ends.push((sort_key_end, id_end));
        }
    }

    /// A row could not be gathered: the keys are to be read back, and
    /// nothing more is kept.
    fn spoil(&mut self) {
        self.spoiled = true;
        self.gathered.clear();
        self.text = Vec::new();
        self.ends = Vec::new();
    }

    /// The sort key and id of the row staged `index`th (from 0).
    fn place(&self, index: usize) -> (&[u8], &[u8]) {
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1].1 as usize,
        };
        let (sort_key_end, id_end) = self.ends[index];
        (
            &self.text[start..sort_key_end as usize],
            &self.text[sort_key_end as usize..id_end as usize],
        )
    }

    /// The values by ordinal, where the swap published exactly the
    /// `published` rows gathered, each `modifiedDate` being `at`; `None`
    /// otherwise (then the keys are read back).
    pub fn ranked(self, published: u64, at: Timestamp) -> Option<Ranked> {
        if self.spoiled || self.ends.len() as u64 != published {
            return None;
        }
        // The list's order, as the swap numbers it: the sort key in the
        // list's direction, then the id, both by byte (`COLLATE "C"`).
        let mut order: Vec<u32> = (0..u32::try_from(self.ends.len()).ok()?).collect();
        order.sort_unstable_by(|a, b| {
            self.direction
                .compare(self.place(*a as usize), self.place(*b as usize))
        });
        let mut ordinal_of = vec![0u32; order.len()];
        for (rank, index) in order.iter().enumerate() {
            ordinal_of[*index as usize] = u32::try_from(rank + 1).ok()?;
        }
        let stamped = format!("{{{}", modified_date_suffix(at));
        let mut fields = Vec::with_capacity(self.fields.len());
        for (field, gathered) in self.fields.iter().zip(self.gathered) {
            let gathered = if field.name == MODIFIED_DATE {
                let mut every = Gathered::new(&field.kind);
                let found = values::extract(&stamped, &[*field]).ok()?;
                if let Some(Some(value)) = found.first() {
                    for ordinal in 1..=u32::try_from(published).ok()? {
                        every.add(ordinal, value);
                    }
                }
                every
            } else {
                gathered.renumbered(&ordinal_of)
            };
            fields.push((*field, gathered));
        }
        Some(Ranked { fields })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::records::without_modified_date;

    /// An invoice's stored JSON, then as staged.
    fn invoice(index: u32, at: Timestamp) -> (Row, String) {
        let stored = format!(
            "{{\"invoiceId\":\"inv-{index}\",\"customerRef\":{{\"id\":\"c{}\"}},\"issueDate\":\"2026-0{}-01\",\
             \"totalAmount\":{}.{},\"status\":\"{}\",{}",
            index % 7,
            1 + index % 9,
            index % 13,
            index % 10,
            ["Paid", "Submitted", "Void"][index as usize % 3],
            modified_date_suffix(at)
        );
        let row = Row {
            id: format!("inv-{index}"),
            // Ties on the sort key, broken by the id.
            sort_key: format!("2026-0{}-01", 1 + index % 9),
            filter_value: None,
            body: without_modified_date(stored.clone()),
        };
        (row, stored)
    }

    #[test]
    fn ranked_keys_are_those_of_the_rows_numbered_in_the_lists_order() {
        let at = Timestamp(Timestamp::now());
        for direction in [Direction::Descending, Direction::Ascending] {
            let mut staged = StagedKeys::new(DataType::INVOICES).expect("invoices have keys");
            staged.direction = direction;
            // Staged in an order unlike the list's, in two batches.
            let rows: Vec<(Row, String)> = (0..200).map(|i| invoice((i * 37) % 200, at)).collect();
            let (first, second) = rows.split_at(120);
            let batch = |part: &[(Row, String)]| -> Vec<Row> {
                part.iter().map(|(row, _)| row.clone()).collect()
            };
            staged.add(&batch(first));
            staged.add(&batch(second));
            let fields = staged.fields.clone();

            // What reading the stored records back in list order gives.
            let mut listed = rows.clone();
            listed.sort_by(|(a, _), (b, _)| {
                let by_key = match direction {
                    Direction::Ascending => a.sort_key.cmp(&b.sort_key),
                    Direction::Descending => b.sort_key.cmp(&a.sort_key),
                };
                by_key.then_with(|| a.id.cmp(&b.id))
            });
            let mut expected: Vec<Gathered> = fields
                .iter()
                .map(|field| Gathered::new(&field.kind))
                .collect();
            for (ordinal, (_, stored)) in (1..).zip(&listed) {
                let found = values::extract(stored, &fields).expect("JSON");
                for (gathered, value) in expected.iter_mut().zip(found) {
                    if let Some(value) = value {
                        gathered.add(ordinal, &value);
                    }
                }
            }

            let ranked = staged.ranked(200, at).expect("every row staged once");
            for ((field, gathered), expected) in ranked.fields.into_iter().zip(expected) {
                assert_eq!(gathered.sorted(), expected.sorted(), "{}", field.name);
            }
        }
    }

    #[test]
    fn a_spoiled_gathering_or_another_count_is_read_back() {
        let at = Timestamp(Timestamp::now());
        let mut staged = StagedKeys::new(DataType::INVOICES).expect("keys");
        staged.add(&[invoice(1, at).0, invoice(2, at).0]);
        staged.spoil();
        assert!(staged.ranked(2, at).is_none());
        let mut staged = StagedKeys::new(DataType::INVOICES).expect("keys");
        staged.add(&[invoice(1, at).0, invoice(2, at).0]);
        assert!(staged.ranked(3, at).is_none());
    }
}
