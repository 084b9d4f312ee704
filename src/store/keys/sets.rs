//! Sets of ordinals (ascending, without repeats) and what a query makes of
//! them: `&&` intersects, `||` unites, `!=` is the complement of `=`.

/// The ordinals of a list's records that match something, ascending.
pub type Ordinals = Vec<u32>;

/// The ordinals of several parts of one field's keys (disjoint: each
/// record holds one value), together and ascending.
pub fn gather(parts: Vec<Ordinals>) -> Ordinals {
    let mut all: Ordinals = parts.into_iter().flatten().collect();
    all.sort_unstable();
    all
}

/// What every one of `sets` holds.
pub fn intersect(mut sets: Vec<Ordinals>) -> Ordinals {
    sets.sort_by_key(Vec::len);
    let mut sets = sets.into_iter();
    let Some(mut kept) = sets.next() else {
        return Ordinals::new();
    };
    for other in sets {
        let mut at = 0;
        kept.retain(|ordinal| {
            while at < other.len() && other[at] < *ordinal {
                at += 1;
            }
            at < other.len() && other[at] == *ordinal
        });
    }
    kept
}

/// What at least one of `sets` holds.
pub fn unite(sets: Vec<Ordinals>) -> Ordinals {
    let mut all = gather(sets);
    all.dedup();
    all
}

/// The ordinals from 1 to `count` that `set` lacks.
pub fn complement(set: &[u32], count: u32) -> Ordinals {
    let mut missing = Vec::with_capacity((count as usize).saturating_sub(set.len()));
    let mut at = 0;
    for ordinal in 1..=count {
        if at < set.len() && set[at] == ordinal {
            at += 1;
        } else {
            missing.push(ordinal);
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_combine_as_and_or_and_not_do() {
        assert_eq!(
            intersect(vec![
                vec![1, 3, 5, 7, 9],
                vec![3, 4, 5, 9],
                vec![2, 3, 9, 10]
            ]),
            vec![3, 9]
        );
        assert_eq!(intersect(vec![vec![1, 2], vec![]]), Vec::<u32>::new());
        assert_eq!(unite(vec![vec![5, 9], vec![1, 5], vec![]]), vec![1, 5, 9]);
        assert_eq!(gather(vec![vec![4, 8], vec![1, 6]]), vec![1, 4, 6, 8]);
        assert_eq!(complement(&[2, 3, 5], 6), vec![1, 4, 6]);
        assert_eq!(complement(&[], 2), vec![1, 2]);
    }
}
