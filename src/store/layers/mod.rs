//! A layered generation's order: the rows of its base it keeps, with its
//! delta's rows set among them, mapped between positions and stored
//! ordinals without ever walking the whole list (`docs/store-next.md` §2b).
//!
//! A layered generation stores only its *delta*: the rows a sync changed,
//! added or newly flagged, numbered densely `1..=|D|` in the list's order.
//! The rest it reads from a full generation, its *base* (ordinals
//! `1..=N`), less the base rows it *hides*: those its delta replaces and
//! those that left the list. Each delta row's *anchor* is the number of
//! base rows before it in the list's order, hidden ones included, so the
//! row goes right after the base row at its anchor (and before the base
//! row after it). From those two facts alone the layered generation's
//! positions are dense `1..=N - |hidden| + |D|`, which is what pages,
//! cursors, remembered orders and key ordinals already count on.
//!
//! A [`LayerMap`] keeps the hidden ordinals, the anchors and the runs of
//! consecutive positions read from one source ([`Segment`]s: at most
//! `2·|D| + |hidden| + 1`), so its memory and every lookup follow the size
//! of the change, not of the list. The same map serves a list filtered by
//! one value, over that value's filter ordinals.
//!
//! The map describes one more thing: how a resync that carried its keys over numbered its new generation from
//! the previous one (the previous generation as the base, the rows it
//! stamped as the delta: [`LayerMap::from_placed`]), kept with the
//! generation ([`renumbering`]) so that a query's remembered order is
//! carried over too.

use std::cmp::Ordering;

pub mod fences;
pub mod filtered;
pub mod pages;
pub mod planned;
pub mod renumbering;
pub mod single;
pub mod visible;
pub mod written;

/// The first word of a [`LayerMap::packed`] map: a map packed otherwise
/// (by a later release, say) does not read, and is treated as absent.
pub const PACKED_VERSION: u32 = 1;

/// Which stored rows a run of positions reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The base generation's rows, by their ordinal.
    Base,
    /// The layered generation's own rows, by their ordinal within the delta.
    Delta,
}

/// A run of the layered generation's positions read from one source:
/// positions `position..position + length` are the source's ordinals
/// `start..start + length`, in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// The run's first position in the layered generation.
    pub position: u32,
    /// Where its rows are stored.
    pub source: Source,
    /// The source ordinal at `position`.
    pub start: u32,
    /// How many positions the run covers (never 0).
    pub length: u32,
}

impl Segment {
    /// The position after the run's last.
    fn end(&self) -> u32 {
        self.position + self.length
    }

    /// The source ordinal at `position`, which the run must cover.
    fn ordinal_at(&self, position: u32) -> u32 {
        self.start + (position - self.position)
    }
}

/// Why a layer's description was refused: the caller publishes the
/// generation in full instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// A hidden ordinal is 0, beyond the base, repeated or out of order.
    #[error("the hidden base ordinals are not ascending within the base")]
    Hidden,
    /// An anchor is beyond the base, or smaller than the one before it.
    #[error("the delta's anchors do not ascend within the base")]
    Anchors,
    /// A delta row's position is 0, beyond the generation, repeated or out
    /// of order.
    #[error("the delta's positions are not ascending within the generation")]
    Placed,
    /// The layered generation would hold more than `u32::MAX` rows.
    #[error("the layered generation would be too long")]
    TooLong,
    /// A record is changed twice, or both changed and dropped
    /// ([`planned::plan`]).
    #[error("a record is changed or dropped twice")]
    Repeated,
}

/// How a layered generation's positions map to its base's and its delta's
/// ordinals (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerMap {
    /// Rows in the base generation.
    base_count: u32,
    /// The base ordinals the layer hides, ascending.
    hidden: Vec<u32>,
    /// `anchors[d - 1]`: how many base rows come before delta row `d`.
    anchors: Vec<u32>,
    /// The runs, in position order, covering `1..=count` without gaps.
    segments: Vec<Segment>,
    /// Rows in the layered generation.
    count: u32,
}

impl LayerMap {
    /// The map of a base of `base_count` rows, less those at the ascending
    /// ordinals `hidden`, with a delta row after each base row at `anchors`
    /// (one per delta ordinal, in delta order, so never descending).
    pub fn new(base_count: u32, hidden: Vec<u32>, anchors: Vec<u32>) -> Result<Self, Refused> {
        let hidden_ascend = hidden.windows(2).all(|pair| pair[0] < pair[1]);
        let hidden_within = hidden.first().is_none_or(|&first| first >= 1)
            && hidden.last().is_none_or(|&last| last <= base_count);
        if !hidden_ascend || !hidden_within {
            return Err(Refused::Hidden);
        }
        let anchors_ascend = anchors.windows(2).all(|pair| pair[0] <= pair[1]);
        if !anchors_ascend || anchors.last().is_some_and(|&last| last > base_count) {
            return Err(Refused::Anchors);
        }
        let count = u64::from(base_count) - hidden.len() as u64 + anchors.len() as u64;
        // Positions, ordinals and run ends are u32, one past the last
        // included: neither generation may reach `u32::MAX` rows.
        let count = u32::try_from(count)
            .ok()
            .filter(|&count| count < u32::MAX && base_count < u32::MAX)
            .ok_or(Refused::TooLong)?;
        let segments = runs_of(base_count, &hidden, &anchors);
        Ok(Self {
            base_count,
            hidden,
            anchors,
            segments,
            count,
        })
    }

    /// The map of a generation numbered in full from a base of `base_count`
    /// rows, where the base rows at the ascending ordinals `hidden` were
    /// replaced or left the list, the delta's rows sit at the ascending
    /// positions `placed`, and every other position holds the next kept
    /// base row, in order: a resync whose keys were carried over
    /// (`keys::carry`). Each delta row's anchor is then the ordinal of the
    /// last kept base row before it.
    pub fn from_placed(base_count: u32, hidden: Vec<u32>, placed: &[u32]) -> Result<Self, Refused> {
        let kept = u64::from(base_count)
            .checked_sub(hidden.len() as u64)
            .ok_or(Refused::Hidden)?;
        let count = kept + placed.len() as u64;
        let placed_ascend = placed.windows(2).all(|pair| pair[0] < pair[1]);
        let placed_within = placed.first().is_none_or(|&first| first >= 1)
            && placed.last().is_none_or(|&last| u64::from(last) <= count);
        if !placed_ascend || !placed_within {
            return Err(Refused::Placed);
        }
        let mut anchors = Vec::with_capacity(placed.len());
        // How many hidden ordinals lie before the kept row being looked for.
        let mut passed = 0;
        for (before, &position) in placed.iter().enumerate() {
            // Ascending positions: at most `before` delta rows come first.
            let kept_before = position - 1 - before as u32;
            if kept_before == 0 {
                anchors.push(0);
                continue;
            }
            while hidden
                .get(passed)
                .is_some_and(|&ordinal| ordinal <= kept_before + passed as u32)
            {
                passed += 1;
            }
            anchors.push(kept_before + passed as u32);
        }
        Self::new(base_count, hidden, anchors)
    }

    /// The map as bytes, to be kept with its generation: the format's
    /// version ([`PACKED_VERSION`]), the base's count, how many rows it
    /// hides, the hidden ordinals, then the anchors, each a 4-byte
    /// little-endian integer (8 bytes a change).
    pub fn packed(&self) -> Vec<u8> {
        let words = [PACKED_VERSION, self.base_count, self.hidden.len() as u32]
            .into_iter()
            .chain(self.hidden.iter().copied())
            .chain(self.anchors.iter().copied());
        words.flat_map(u32::to_le_bytes).collect()
    }

    /// A map [`LayerMap::packed`] wrote; `None` when `bytes` are not one.
    pub fn unpacked(bytes: &[u8]) -> Option<Self> {
        if !bytes.len().is_multiple_of(4) {
            return None;
        }
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
            .collect();
        let (&version, rest) = words.split_first()?;
        if version != PACKED_VERSION {
            return None;
        }
        let (&base_count, rest) = rest.split_first()?;
        let (&hidden_count, rest) = rest.split_first()?;
        let hidden_count = usize::try_from(hidden_count).ok()?;
        if rest.len() < hidden_count {
            return None;
        }
        let (hidden, anchors) = rest.split_at(hidden_count);
        Self::new(base_count, hidden.to_vec(), anchors.to_vec()).ok()
    }

    /// Rows in the layered generation: the base's, less the hidden, plus
    /// the delta's.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Rows in the base generation.
    pub fn base_count(&self) -> u32 {
        self.base_count
    }

    /// Rows in the delta.
    pub fn delta_count(&self) -> u32 {
        // `new` refused a delta that would not fit.
        self.anchors.len() as u32
    }

    /// The base ordinals the layer hides, ascending.
    pub fn hidden(&self) -> &[u32] {
        &self.hidden
    }

    /// Every run, in position order: what a layered generation stores
    /// besides its delta.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Where the row at `position` is stored; `None` outside `1..=count`.
    pub fn at(&self, position: u32) -> Option<(Source, u32)> {
        let segment = self.segment_at(position)?;
        Some((segment.source, segment.ordinal_at(position)))
    }

    /// The runs that positions `after + 1..=through` read, cut to that
    /// range, in order: a page of a layered generation is one ordinal range
    /// per run. Positions beyond `count` are not there.
    pub fn runs(&self, after: u32, through: u32) -> Vec<Segment> {
        let through = through.min(self.count);
        if after >= through {
            return Vec::new();
        }
        let first = self
            .segments
            .partition_point(|segment| segment.end() <= after + 1);
        self.segments[first..]
            .iter()
            .take_while(|segment| segment.position <= through)
            .map(|segment| {
                let from = segment.position.max(after + 1);
                let to = (segment.end() - 1).min(through);
                Segment {
                    position: from,
                    source: segment.source,
                    start: segment.ordinal_at(from),
                    length: to - from + 1,
                }
            })
            .collect()
    }

    /// The position of the base row at `ordinal`; `None` when the layer
    /// hides it or the base has no such row.
    pub fn base_position(&self, ordinal: u32) -> Option<u32> {
        if ordinal == 0 || ordinal > self.base_count || self.hidden.binary_search(&ordinal).is_ok()
        {
            return None;
        }
        let hidden_before = self.hidden.partition_point(|&hidden| hidden < ordinal) as u32;
        let delta_before = self.anchors.partition_point(|&anchor| anchor < ordinal) as u32;
        Some(ordinal - hidden_before + delta_before)
    }

    /// How many base rows come before delta row `ordinal`; `None` when the
    /// delta has no such row. A delta row a later layer on the same base
    /// keeps as it is keeps its anchor.
    pub fn anchor(&self, ordinal: u32) -> Option<u32> {
        let index = usize::try_from(ordinal).ok()?.checked_sub(1)?;
        self.anchors.get(index).copied()
    }

    /// The position of delta row `ordinal`; `None` when the delta has no
    /// such row.
    pub fn delta_position(&self, ordinal: u32) -> Option<u32> {
        let anchor = self.anchor(ordinal)?;
        let hidden_up_to = self.hidden.partition_point(|&hidden| hidden <= anchor) as u32;
        Some(anchor - hidden_up_to + ordinal)
    }

    /// The positions of every delta row, ascending (in delta order): where a
    /// resync's stamped rows sit in the generation it numbered.
    pub fn delta_positions(&self) -> Vec<u32> {
        (1..=self.delta_count())
            .filter_map(|ordinal| self.delta_position(ordinal))
            .collect()
    }

    /// The positions of the base rows at the ascending ordinals `base` that
    /// the layer keeps, and of the delta rows at the ascending ordinals
    /// `delta`, as one ascending list: a set of matches (a key's, say)
    /// translated from the two sources into the layered generation.
    pub fn positions_of(&self, base: &[u32], delta: &[u32]) -> Vec<u32> {
        let from_base = base
            .iter()
            .filter_map(|&ordinal| self.base_position(ordinal));
        let from_delta = delta
            .iter()
            .filter_map(|&ordinal| self.delta_position(ordinal));
        merged(from_base, from_delta)
    }

    /// The run covering `position`.
    fn segment_at(&self, position: u32) -> Option<&Segment> {
        if position == 0 || position > self.count {
            return None;
        }
        let index = self
            .segments
            .partition_point(|segment| segment.position <= position);
        self.segments.get(index.checked_sub(1)?)
    }
}

/// The runs of a base of `base_count` rows less `hidden`, with delta rows
/// after their `anchors` (both already checked by [`LayerMap::new`]).
fn runs_of(base_count: u32, hidden: &[u32], anchors: &[u32]) -> Vec<Segment> {
    let mut runs = Runs {
        segments: Vec::with_capacity(2 * anchors.len() + hidden.len() + 1),
        next_position: 1,
        hidden,
    };
    let mut next_base = 1;
    for (index, &anchor) in anchors.iter().enumerate() {
        if anchor >= next_base {
            runs.base(next_base, anchor);
            next_base = anchor + 1;
        }
        // `new` refused a delta that would not fit.
        runs.push(Source::Delta, index as u32 + 1, 1);
    }
    runs.base(next_base, base_count);
    runs.segments
}

/// The runs written so far, while [`runs_of`] walks the base once.
struct Runs<'a> {
    segments: Vec<Segment>,
    next_position: u32,
    /// The hidden ordinals the walk has not passed yet.
    hidden: &'a [u32],
}

impl Runs<'_> {
    /// The base rows `from..=to` that are not hidden, as runs.
    fn base(&mut self, mut from: u32, to: u32) {
        while from <= to {
            let passed = self.hidden.partition_point(|&hidden| hidden < from);
            self.hidden = &self.hidden[passed..];
            match self.hidden.first() {
                Some(&hidden) if hidden == from => from += 1,
                Some(&hidden) if hidden <= to => {
                    self.push(Source::Base, from, hidden - from);
                    from = hidden + 1;
                }
                _ => {
                    self.push(Source::Base, from, to - from + 1);
                    return;
                }
            }
        }
    }

    /// `length` rows of `source` from `start` at the next positions,
    /// extending the last run where they continue it.
    fn push(&mut self, source: Source, start: u32, length: u32) {
        let position = self.next_position;
        self.next_position += length;
        if let Some(last) = self.segments.last_mut()
            && last.source == source
            && last.start + last.length == start
        {
            last.length += length;
            return;
        }
        self.segments.push(Segment {
            position,
            source,
            start,
            length,
        });
    }
}

/// Two ascending sequences as one ascending list.
pub fn merged(a: impl Iterator<Item = u32>, b: impl Iterator<Item = u32>) -> Vec<u32> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut all = Vec::new();
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Greater => b.next(),
                Ordering::Less | Ordering::Equal => a.next(),
            },
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        match next {
            Some(position) => all.push(position),
            None => return all,
        }
    }
}

#[cfg(test)]
mod tests;
