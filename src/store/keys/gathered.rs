//! One declared field's values as a generation's records are read (back
//! from the store, or as they are staged):
//! each distinct value kept once (numbers by value, so `12.5` and `12.50`
//! are one), and per record the number of its value, 4 bytes a record;
//! then the values in key order, each with its records' ordinals
//! ascending, counted into place rather than sorted.

use std::collections::HashMap;
use std::str::FromStr;

use foldhash::fast::RandomState;
use rust_decimal::Decimal;

use super::values::number;
use crate::data::fields::Kind;

/// A record without a value of the field.
const NONE: u32 = u32::MAX;

/// What one field's records hold, as far as read.
#[derive(Debug)]
pub struct Gathered {
    /// Numbers are kept by value, anything else as its text.
    numeric: bool,
    texts: HashMap<Box<str>, u32, RandomState>,
    numbers: HashMap<Decimal, u32, RandomState>,
    /// How many distinct values were seen (the next one's number).
    distinct: u32,
    /// The number of each record's value, by ordinal less one.
    of_record: Vec<u32>,
    /// Whether a value no key can hold was seen.
    unkeyable: bool,
}

/// A field's values in key order: `keys[i]` is held by the records
/// `ordinals[starts[i]..starts[i + 1]]`.
#[derive(Debug, PartialEq, Eq)]
pub struct Sorted {
    /// The keys, in byte order.
    pub keys: Vec<String>,
    /// Where each key's ordinals start, and the end.
    pub starts: Vec<usize>,
    /// The records' ordinals, grouped by key, ascending within each.
    pub ordinals: Vec<u32>,
}

impl Sorted {
    /// Each key with its records' ordinals.
    pub fn runs(&self) -> impl Iterator<Item = (&str, &[u32])> {
        self.keys.iter().enumerate().map(|(index, key)| {
            (
                key.as_str(),
                &self.ordinals[self.starts[index]..self.starts[index + 1]],
            )
        })
    }
}

impl Gathered {
    /// Nothing read yet of a field of `kind`.
    pub fn new(kind: &Kind) -> Self {
        Self {
            numeric: *kind == Kind::Number,
            texts: HashMap::default(),
            numbers: HashMap::default(),
            distinct: 0,
            of_record: Vec::new(),
            unkeyable: false,
        }
    }

    /// The field has a value no key holds: it gets no keys.
    pub fn refuse(&mut self) {
        self.unkeyable = true;
    }

    /// The record at `ordinal` (from 1) holds `value`.
    pub fn add(&mut self, ordinal: u32, value: &str) {
        if self.unkeyable {
            return;
        }
        let next = self.distinct;
        let Some(index) = (ordinal as usize).checked_sub(1) else {
            return self.refuse();
        };
        if next == NONE {
            return self.refuse();
        }
        let id = if self.numeric {
            let Some(parsed) = decimal(value) else {
                return self.refuse();
            };
            match self.numbers.get(&parsed) {
                Some(id) => *id,
                None => {
                    self.numbers.insert(parsed, next);
                    self.distinct += 1;
                    next
                }
            }
        } else {
            match self.texts.get(value) {
                Some(id) => *id,
                None => {
                    self.texts.insert(value.into(), next);
                    self.distinct += 1;
                    next
                }
            }
        };
        if self.of_record.len() <= index {
            self.of_record.resize(index + 1, NONE);
        }
        self.of_record[index] = id;
    }

    /// The same values, each record moved from its place `p` (from 1) to
    /// `ordinal_of[p - 1]`.
    pub fn renumbered(mut self, ordinal_of: &[u32]) -> Self {
        let mut of_record = vec![NONE; ordinal_of.len()];
        for (index, id) in self.of_record.iter().enumerate() {
            match ordinal_of.get(index) {
                Some(ordinal) if *ordinal > 0 => of_record[*ordinal as usize - 1] = *id,
                _ if *id == NONE => {}
                // A value of a record not placed: not this list's keys.
                _ => self.unkeyable = true,
            }
        }
        self.of_record = of_record;
        self
    }

    /// The values in key order with their records; `None` when the field
    /// gets no keys.
    pub fn sorted(self) -> Option<Sorted> {
        if self.unkeyable {
            return None;
        }
        let Self {
            texts,
            numbers,
            of_record,
            ..
        } = self;
        let mut keyed: Vec<(String, usize)> = Vec::with_capacity(texts.len() + numbers.len());
        for (text, id) in texts {
            keyed.push((text.into_string(), id as usize));
        }
        for (value, id) in numbers {
            keyed.push((number(&value.to_string())?, id as usize));
        }
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rank = vec![0usize; keyed.len()];
        for (position, (_, id)) in keyed.iter().enumerate() {
            rank[*id] = position;
        }
        // Count each key's records, then place them in ordinal order.
        let mut starts = vec![0usize; keyed.len() + 1];
        for id in of_record.iter().filter(|id| **id != NONE) {
            starts[rank[*id as usize] + 1] += 1;
        }
        for index in 1..starts.len() {
            starts[index] += starts[index - 1];
        }
        let mut next = starts.clone();
        let mut ordinals = vec![0u32; starts[keyed.len()]];
        for (index, id) in of_record.iter().enumerate() {
            if *id == NONE {
                continue;
            }
            let slot = &mut next[rank[*id as usize]];
            ordinals[*slot] = u32::try_from(index + 1).ok()?;
            *slot += 1;
        }
        Some(Sorted {
            keys: keyed.into_iter().map(|(key, _)| key).collect(),
            starts,
            ordinals,
        })
    }
}

/// A decimal (`12.50`, `-3`, `1e3`) by value, normalized so that equal
/// numbers are one; `None` when it is not one rust_decimal holds.
fn decimal(text: &str) -> Option<Decimal> {
    Decimal::from_str(text)
        .or_else(|_| Decimal::from_scientific(text))
        .ok()
        .map(|value| value.normalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_kept_once_and_come_back_in_key_order_with_their_records() {
        let mut gathered = Gathered::new(&Kind::Text);
        for (ordinal, value) in [(1, "b"), (2, "a"), (4, "b"), (5, "c"), (6, "a")] {
            gathered.add(ordinal, value);
        }
        let sorted = gathered.sorted().expect("keyable");
        assert_eq!(
            sorted.runs().collect::<Vec<_>>(),
            vec![("a", &[2, 6][..]), ("b", &[1, 4][..]), ("c", &[5][..])]
        );

        let mut numbers = Gathered::new(&Kind::Number);
        for (ordinal, value) in [(1, "12.50"), (2, "-3"), (3, "12.5"), (4, "1e3"), (5, "0.5")] {
            numbers.add(ordinal, value);
        }
        let sorted = numbers.sorted().expect("keyable");
        let values: Vec<&[u32]> = sorted.runs().map(|(_, ordinals)| ordinals).collect();
        assert_eq!(values, vec![&[2][..], &[5], &[1, 3], &[4]]);
        assert_eq!(sorted.keys[2], number("12.5").expect("a decimal"));

        let mut refused = Gathered::new(&Kind::Number);
        refused.add(1, "12");
        refused.add(2, "twelve");
        assert_eq!(refused.sorted(), None);
    }
}
