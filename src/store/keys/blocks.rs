//! A field's keys cut into blocks: its values in value order, each with the
//! ordinals of the records holding it, [`BLOCK_SIZE`] records a block. A
//! block's entries are packed as the count of runs, each run (a value and
//! how many records hold it in this block) as a 2-byte length, the value's
//! bytes and a 4-byte count, then every ordinal as a 4-byte integer, all
//! little-endian. A value held by many records runs on over several blocks.

use std::ops::Range;

/// Records a block holds (the last block of a field fewer): a field of a
/// million records is about a thousand rows of 4-5 kB.
pub const BLOCK_SIZE: usize = 1_024;

/// A block before it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Its least value.
    pub first_value: String,
    /// Its greatest value.
    pub last_value: String,
    /// How many records it holds.
    pub size: usize,
    /// Its runs and ordinals, packed.
    pub entries: Vec<u8>,
}

/// Cuts `values` (each value with the ordinals of its records, ascending;
/// values in byte order) into blocks; `None` when a value is longer than a
/// run can say (64 kB).
pub fn cut<'a>(values: impl IntoIterator<Item = (&'a str, &'a [u32])>) -> Option<Vec<Block>> {
    let mut blocks = Vec::new();
    let mut runs: Vec<(&str, &[u32])> = Vec::new();
    let mut held = 0;
    for (value, ordinals) in values {
        u16::try_from(value.len()).ok()?;
        let mut rest = ordinals;
        while !rest.is_empty() {
            let taken = rest.len().min(BLOCK_SIZE - held);
            runs.push((value, &rest[..taken]));
            rest = &rest[taken..];
            held += taken;
            if held == BLOCK_SIZE {
                blocks.push(pack(&runs, held));
                runs.clear();
                held = 0;
            }
        }
    }
    if held > 0 {
        blocks.push(pack(&runs, held));
    }
    Some(blocks)
}

/// One block of `runs` holding `size` records.
pub fn pack(runs: &[(&str, &[u32])], size: usize) -> Block {
    let mut entries = Vec::with_capacity(4 + runs.len() * 16 + size * 4);
    entries.extend_from_slice(&(runs.len() as u32).to_le_bytes());
    for (value, ordinals) in runs {
        entries.extend_from_slice(&(value.len() as u16).to_le_bytes());
        entries.extend_from_slice(value.as_bytes());
        entries.extend_from_slice(&(ordinals.len() as u32).to_le_bytes());
    }
    for (_, ordinals) in runs {
        for ordinal in *ordinals {
            entries.extend_from_slice(&ordinal.to_le_bytes());
        }
    }
    Block {
        first_value: runs.first().map_or("", |(value, _)| value).to_owned(),
        last_value: runs.last().map_or("", |(value, _)| value).to_owned(),
        size,
        entries,
    }
}

/// A packed block read back: its runs (value and where its ordinals are)
/// and its ordinals.
#[derive(Debug)]
pub struct Unpacked<'a> {
    runs: Vec<(&'a str, Range<usize>)>,
    ordinals: Vec<u32>,
}

impl<'a> Unpacked<'a> {
    /// Reads `entries`; `None` when they are not a packed block.
    pub fn read(entries: &'a [u8]) -> Option<Self> {
        let mut at = 0;
        let mut take = |count: usize| {
            let part = entries.get(at..at + count)?;
            at += count;
            Some(part)
        };
        let run_count = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        let mut runs = Vec::with_capacity(run_count);
        let mut start = 0;
        for _ in 0..run_count {
            let length = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
            let value = std::str::from_utf8(take(length)?).ok()?;
            let count = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
            runs.push((value, start..start + count));
            start += count;
        }
        let packed = take(start * 4)?;
        if at != entries.len() {
            return None;
        }
        let ordinals = packed
            .chunks_exact(4)
            .map(|chunk| u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
            .collect();
        Some(Self { runs, ordinals })
    }

    /// Its runs in value order: each value with the ordinals of the records
    /// holding it in this block, ascending.
    pub fn runs(&self) -> impl Iterator<Item = (&'a str, &[u32])> + '_ {
        self.runs
            .iter()
            .map(|(value, range)| (*value, &self.ordinals[range.clone()]))
    }

    /// The ordinals of the records whose value `wanted` accepts, ascending
    /// within each run.
    pub fn holding<'s>(
        &'s self,
        wanted: impl Fn(&str) -> bool + 's,
    ) -> impl Iterator<Item = u32> + 's {
        self.runs
            .iter()
            .filter(move |(value, _)| wanted(value))
            .flat_map(|(_, range)| self.ordinals[range.clone()].iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_cut_into_full_blocks_and_read_back_whole() {
        let values: Vec<(String, Vec<u32>)> = vec![
            ("a".to_owned(), (1..=1000).collect()),
            ("b".to_owned(), vec![1001, 1002]),
            ("c".to_owned(), (1003..=2100).collect()),
        ];
        let blocks = cut(values
            .iter()
            .map(|(value, ordinals)| (value.as_str(), ordinals.as_slice())))
        .expect("short values");
        assert_eq!(
            blocks.iter().map(|block| block.size).collect::<Vec<_>>(),
            vec![BLOCK_SIZE, BLOCK_SIZE, 2100 - 2 * BLOCK_SIZE]
        );
        assert_eq!(
            (
                blocks[0].first_value.as_str(),
                blocks[0].last_value.as_str()
            ),
            ("a", "c")
        );
        assert_eq!(
            (
                blocks[1].first_value.as_str(),
                blocks[2].last_value.as_str()
            ),
            ("c", "c")
        );
        let read: Vec<Unpacked> = blocks
            .iter()
            .map(|block| Unpacked::read(&block.entries).expect("a packed block"))
            .collect();
        let holding = |wanted: &dyn Fn(&str) -> bool| -> Vec<u32> {
            read.iter()
                .flat_map(|block| block.holding(wanted))
                .collect()
        };
        assert_eq!(holding(&|value| value == "b"), vec![1001, 1002]);
        assert_eq!(
            holding(&|value| value == "c"),
            (1003..=2100).collect::<Vec<_>>()
        );
        assert_eq!(holding(&|_| true), (1..=2100).collect::<Vec<_>>());
        assert!(Unpacked::read(&blocks[0].entries[..10]).is_none());
        assert!(cut([("x".repeat(70_000).as_str(), &[1][..])]).is_none());
    }
}
