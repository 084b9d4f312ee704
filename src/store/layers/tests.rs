//! The layer map checked against both generations sorted whole.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A record as the list orders it: by sort key, then id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    key: u32,
    id: u32,
}

/// A resync worked out the slow way: both generations sorted whole.
struct Resync {
    map: LayerMap,
    /// Base rows before each delta row, counted in the sorted base.
    anchors: Vec<u32>,
    /// Where each of the layered generation's rows is stored, in order.
    expected: Vec<(Source, u32)>,
}

impl Resync {
    /// `base` (sorted) less the records whose ids are in `gone`, with
    /// the `delta` rows (changed copies and new records) sorted in.
    fn new(base: &[Row], gone: &[u32], mut delta: Vec<Row>) -> Self {
        delta.sort();
        let hidden: Vec<u32> = (1..)
            .zip(base)
            .filter(|(_, row)| gone.contains(&row.id))
            .map(|(ordinal, _)| ordinal)
            .collect();
        let anchors: Vec<u32> = delta
            .iter()
            .map(|row| base.partition_point(|base_row| base_row < row) as u32)
            .collect();
        let mut labelled: Vec<(Row, (Source, u32))> = (1..)
            .zip(base)
            .filter(|(ordinal, _)| !hidden.contains(ordinal))
            .map(|(ordinal, row)| (*row, (Source::Base, ordinal)))
            .chain(
                (1..)
                    .zip(&delta)
                    .map(|(ordinal, row)| (*row, (Source::Delta, ordinal))),
            )
            .collect();
        labelled.sort_by_key(|(row, _)| *row);
        let map =
            LayerMap::new(base.len() as u32, hidden, anchors.clone()).expect("a consistent layer");
        Self {
            map,
            anchors,
            expected: labelled.into_iter().map(|(_, stored)| stored).collect(),
        }
    }

    fn position_of(&self, stored: (Source, u32)) -> Option<u32> {
        let index = self.expected.iter().position(|&each| each == stored)?;
        Some(index as u32 + 1)
    }

    /// The map's anchors and runs, then every lookup of it and of the same
    /// generation described by where its delta rows sit (as a resync that
    /// carried its keys describes it), against the sorted list.
    fn check(&self, rng: &mut StdRng) {
        let map = &self.map;
        for (ordinal, anchor) in (1..).zip(&self.anchors) {
            assert_eq!(map.anchor(ordinal), Some(*anchor));
        }
        assert_eq!(map.anchor(0), None);
        assert_eq!(map.anchor(map.delta_count() + 1), None);
        self.check_segments();
        assert_eq!(LayerMap::unpacked(&map.packed()).as_ref(), Some(map));
        let placed: Vec<u32> = (1..=map.delta_count())
            .filter_map(|ordinal| self.position_of((Source::Delta, ordinal)))
            .collect();
        let numbered = LayerMap::from_placed(map.base_count(), map.hidden().to_vec(), &placed)
            .expect("a consistent numbering");
        assert_eq!(numbered.segments(), map.segments());
        for each in [map, &numbered] {
            self.check_lookups(each, rng);
        }
    }

    /// Every lookup of `map` against the sorted list.
    fn check_lookups(&self, map: &LayerMap, rng: &mut StdRng) {
        let count = self.expected.len() as u32;
        assert_eq!(map.count(), count);
        assert_eq!(map.at(0), None);
        assert_eq!(map.at(count + 1), None);
        for (position, &stored) in (1..).zip(&self.expected) {
            assert_eq!(map.at(position), Some(stored), "at {position}");
        }
        for ordinal in 0..=map.base_count() + 1 {
            let expected = self.position_of((Source::Base, ordinal));
            assert_eq!(map.base_position(ordinal), expected, "base row {ordinal}");
        }
        for ordinal in 0..=map.delta_count() + 1 {
            let expected = self.position_of((Source::Delta, ordinal));
            assert_eq!(map.delta_position(ordinal), expected, "delta row {ordinal}");
        }
        let every_delta_row: Vec<u32> = (1..=map.delta_count())
            .filter_map(|ordinal| self.position_of((Source::Delta, ordinal)))
            .collect();
        assert_eq!(map.delta_positions(), every_delta_row);
        for _ in 0..20 {
            let after = rng.random_range(0..=count + 2);
            let through = rng.random_range(0..=count + 2);
            self.check_runs(map, after, through);
        }
        for after in (0..count).step_by(7) {
            self.check_runs(map, after, after + 7);
        }
        let base: Vec<u32> = (1..=map.base_count())
            .filter(|_| rng.random_bool(0.3))
            .collect();
        let delta: Vec<u32> = (1..=map.delta_count())
            .filter(|_| rng.random_bool(0.3))
            .collect();
        let mut expected: Vec<u32> = base
            .iter()
            .map(|&ordinal| (Source::Base, ordinal))
            .chain(delta.iter().map(|&ordinal| (Source::Delta, ordinal)))
            .filter_map(|stored| self.position_of(stored))
            .collect();
        expected.sort_unstable();
        assert_eq!(map.positions_of(&base, &delta), expected);
    }

    /// The runs cover every position once, each as long as it can be.
    fn check_segments(&self) {
        let segments = self.map.segments();
        let mut next = 1;
        for pair in segments.windows(2) {
            let continues =
                pair[0].source == pair[1].source && pair[0].start + pair[0].length == pair[1].start;
            assert!(!continues, "{pair:?} should be one run");
        }
        for segment in segments {
            assert_eq!(segment.position, next);
            assert!(segment.length > 0);
            next = segment.end();
        }
        assert_eq!(next, self.map.count() + 1);
        let bound = 2 * self.map.delta_count() as usize + self.map.hidden().len() + 1;
        assert!(segments.len() <= bound, "{} runs", segments.len());
    }

    /// A page's runs name exactly the rows at its positions.
    fn check_runs(&self, map: &LayerMap, after: u32, through: u32) {
        let read: Vec<(Source, u32)> = map
            .runs(after, through)
            .iter()
            .flat_map(|run| {
                (run.start..run.start + run.length).map(|ordinal| (run.source, ordinal))
            })
            .collect();
        let from = (after as usize).min(self.expected.len());
        let to = (through as usize).min(self.expected.len()).max(from);
        assert_eq!(
            read,
            self.expected[from..to],
            "positions {after}..={through}"
        );
    }
}

fn row(key: u32, id: u32) -> Row {
    Row { key, id }
}

/// `length` rows with keys drawn from `keys` values (so ties occur),
/// ids from `first_id`, sorted.
fn random_rows(rng: &mut StdRng, length: u32, keys: u32, first_id: u32) -> Vec<Row> {
    let mut rows: Vec<Row> = (first_id..first_id + length)
        .map(|id| row(rng.random_range(0..keys), id))
        .collect();
    rows.sort();
    rows
}

#[test]
fn changed_moved_dropped_and_new_records_take_their_sorted_places() {
    // Keys 10..=60 at ordinals 1..=6. Record 2 changes in place, record 4
    // moves to the front, record 5 leaves the list, record 9 is new and
    // goes last.
    let base: Vec<Row> = (1..=6).map(|id| row(id * 10, id)).collect();
    let resync = Resync::new(&base, &[2, 4, 5], vec![row(20, 2), row(5, 4), row(70, 9)]);
    let map = &resync.map;
    assert_eq!(map.count(), 6);
    assert_eq!(
        resync.expected,
        vec![
            (Source::Delta, 1), // record 4, moved
            (Source::Base, 1),
            (Source::Delta, 2), // record 2, changed in place
            (Source::Base, 3),
            (Source::Base, 6),
            (Source::Delta, 3), // record 9, new
        ]
    );
    assert_eq!(map.segments().len(), 6);
    assert_eq!(map.base_position(2), None, "replaced");
    assert_eq!(map.base_position(5), None, "left the list");
    assert_eq!(map.base_position(6), Some(5));
    assert_eq!(map.delta_position(3), Some(6));
    assert_eq!(
        map.runs(3, 5),
        vec![
            Segment {
                position: 4,
                source: Source::Base,
                start: 3,
                length: 1
            },
            Segment {
                position: 5,
                source: Source::Base,
                start: 6,
                length: 1
            },
        ]
    );
    resync.check(&mut StdRng::seed_from_u64(1));
}

#[test]
fn an_unchanged_list_is_one_run_of_its_base() {
    let map = LayerMap::new(1_000_000, vec![], vec![]).expect("consistent");
    assert_eq!(
        map.segments(),
        [Segment {
            position: 1,
            source: Source::Base,
            start: 1,
            length: 1_000_000
        }]
    );
    assert_eq!(map.at(765_432), Some((Source::Base, 765_432)));
    assert_eq!(map.runs(999_950, 1_000_100).len(), 1);
    assert_eq!(map.positions_of(&[3, 1_000_000], &[1]), vec![3, 1_000_000]);
}

#[test]
fn a_few_changes_in_a_million_cost_runs_for_them_alone() {
    // 1,000 records changed in place, spread over a million: each splits
    // the base's run once, and nothing is held per record of the list.
    let hidden: Vec<u32> = (1..=1_000).map(|each| each * 997).collect();
    let anchors: Vec<u32> = hidden.iter().map(|ordinal| ordinal - 1).collect();
    let map = LayerMap::new(1_000_000, hidden, anchors).expect("consistent");
    assert_eq!(map.count(), 1_000_000);
    assert_eq!(map.segments().len(), 2_001);
    for ordinal in [1, 996, 997, 998, 500_000, 997_000, 1_000_000] {
        let expected = if ordinal % 997 == 0 && ordinal <= 997_000 {
            (Source::Delta, ordinal / 997)
        } else {
            (Source::Base, ordinal)
        };
        assert_eq!(map.at(ordinal), Some(expected), "position {ordinal}");
    }
    // Position 900,291 (997 × 903) is a changed record.
    assert_eq!(
        map.runs(900_250, 900_350).len(),
        3,
        "a page meets the change in it"
    );
}

#[test]
fn every_random_resync_maps_as_the_whole_sorted_list() {
    for seed in 0..400 {
        let mut rng = StdRng::seed_from_u64(seed);
        let base_length = rng.random_range(0..150);
        // Few distinct keys (ties broken by id) or nearly all distinct.
        let keys = if rng.random_bool(0.5) { 5 } else { 10_000 };
        let base = random_rows(&mut rng, base_length, keys, 0);
        let share_gone = [0.0, 0.02, 0.3, 1.0][rng.random_range(0..4)];
        let mut gone = Vec::new();
        let mut delta = Vec::new();
        for each in &base {
            if rng.random_bool(share_gone) {
                gone.push(each.id);
                // Of those gone, one in three changed in place, one
                // changed its key, and one left the list.
                match rng.random_range(0..3) {
                    0 => delta.push(*each),
                    1 => delta.push(row(rng.random_range(0..keys), each.id)),
                    _ => {}
                }
            }
        }
        let added = rng.random_range(0..20);
        delta.extend(random_rows(&mut rng, added, keys, base_length));
        Resync::new(&base, &gone, delta).check(&mut rng);
    }
}

#[test]
fn records_added_only_before_or_after_the_base_are_one_run_each_side() {
    let base: Vec<Row> = (1..=50).map(|id| row(100 + id, id)).collect();
    let after = Resync::new(
        &base,
        &[],
        (51..=60).map(|id| row(1_000 + id, id)).collect(),
    );
    assert_eq!(after.map.segments().len(), 2);
    after.check(&mut StdRng::seed_from_u64(2));
    let before = Resync::new(&base, &[], (51..=60).map(|id| row(id, id)).collect());
    assert_eq!(before.map.segments().len(), 2);
    before.check(&mut StdRng::seed_from_u64(3));
    let emptied = Resync::new(&base, &(1..=50).collect::<Vec<_>>(), vec![]);
    assert_eq!(emptied.map.count(), 0);
    assert!(emptied.map.segments().is_empty());
    assert!(emptied.map.runs(0, 100).is_empty());
}

#[test]
fn an_inconsistent_layer_is_refused() {
    assert_eq!(LayerMap::new(5, vec![0], vec![]), Err(Refused::Hidden));
    assert_eq!(LayerMap::new(5, vec![6], vec![]), Err(Refused::Hidden));
    assert_eq!(LayerMap::new(5, vec![3, 2], vec![]), Err(Refused::Hidden));
    assert_eq!(LayerMap::new(5, vec![2, 2], vec![]), Err(Refused::Hidden));
    assert_eq!(LayerMap::new(5, vec![], vec![6]), Err(Refused::Anchors));
    assert_eq!(LayerMap::new(5, vec![], vec![3, 2]), Err(Refused::Anchors));
    assert_eq!(LayerMap::from_placed(5, vec![], &[7]), Err(Refused::Placed));
    assert_eq!(LayerMap::from_placed(5, vec![], &[0]), Err(Refused::Placed));
    assert_eq!(
        LayerMap::from_placed(5, vec![], &[2, 2]),
        Err(Refused::Placed)
    );
    assert_eq!(
        LayerMap::from_placed(1, vec![1, 2], &[]),
        Err(Refused::Hidden)
    );
    let packed = LayerMap::new(5, vec![2], vec![4])
        .expect("consistent")
        .packed();
    assert_eq!(packed.len(), 20);
    assert_eq!(LayerMap::unpacked(&packed[..19]), None, "cut short");
    let more_hidden_than_sent = [1, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0];
    assert_eq!(LayerMap::unpacked(&more_hidden_than_sent), None);
    let no_anchors = LayerMap::unpacked(&packed[..16]);
    assert_eq!(no_anchors.map(|map| map.delta_count()), Some(0));
    assert_eq!(LayerMap::unpacked(&packed[..8]), None, "no hidden count");
    let mut another_version = packed.clone();
    another_version[0] = 2;
    assert_eq!(LayerMap::unpacked(&another_version), None);
    let base_too_long = LayerMap::new(u32::MAX, vec![u32::MAX], vec![]);
    assert_eq!(base_too_long, Err(Refused::TooLong));
    let too_long = vec![0; 2];
    assert_eq!(
        LayerMap::new(u32::MAX - 2, vec![], too_long),
        Err(Refused::TooLong)
    );
}
