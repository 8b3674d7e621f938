//! The plan of a launch's plain `&T`/`&mut T` arguments: which it maps one by one, and which
//! overlapping `&T` arguments the library maps as one range first.

use crate::Error;

/// How a launch maps the data of its plain `&T`/`&mut T` arguments.
///
/// The runtime's begin mapper maps its entries in the arguments' order and ends the process on
/// an entry that encloses, or partly overlaps, one mapped before it ("explicit extension not
/// allowed"), so it cannot map `(&xs[..10], &xs[..])`, nor `(&xs[..60], &xs[40..])` in either
/// order, although Rust lets shared references overlap. Each group of overlapping `&T`
/// arguments is therefore mapped by the library, before the launch, as the one range that
/// covers them (copied in once), and the launch's mappers map nothing of their own for them
/// (size 0): the runtime finds each argument's address inside that range. An argument that
/// overlaps no other is mapped by the launch, as before. A `&mut T` argument overlapping
/// another cannot come from safe code (the borrows would conflict) and is refused.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct LaunchPlan {
    /// `(start, end)` of each range the launch maps, disjoint, in ascending order, with whether
    /// it is a group of several arguments (mapped by the library).
    pub(super) ranges: Vec<(usize, usize, bool)>,
    /// For each argument, in order: whether it lies in a group.
    pub(crate) in_group: Vec<bool>,
    /// `(start, end)` of each `&mut T` argument: data the launch lends `&mut`.
    pub(super) writes: Vec<(usize, usize)>,
}

impl LaunchPlan {
    /// Whether the library maps any range itself.
    pub(crate) fn joins(&self) -> bool {
        self.ranges.iter().any(|&(_, _, group)| group)
    }
}

/// [`LaunchPlan`] of the plain arguments `(start, bytes, write)` of one launch, in order (each
/// non-empty), or [`Error::OverlapsMapped`] for a `&mut T` argument that overlaps another.
pub(crate) fn plan_launch(arguments: &[(usize, usize, bool)]) -> Result<LaunchPlan, Error> {
    // By start, the longest first: an argument then overlaps the group before it, or none.
    let mut order: Vec<usize> = (0..arguments.len()).collect();
    order.sort_by_key(|&i| (arguments[i].0, core::cmp::Reverse(arguments[i].1)));
    // `(start, end, write, members)` of each group, and each argument's group.
    let mut groups: Vec<(usize, usize, bool, usize)> = Vec::new();
    let mut group_of = vec![0; arguments.len()];
    for i in order {
        let (start, bytes, write) = arguments[i];
        let end = start + bytes;
        match groups.last_mut() {
            Some(group) if start < group.1 => {
                if write || group.2 {
                    return Err(Error::OverlapsMapped { bytes, kernel: None });
                }
                group.1 = group.1.max(end);
                group.3 += 1;
            }
            _ => groups.push((start, end, write, 1)),
        }
        group_of[i] = groups.len() - 1;
    }
    Ok(LaunchPlan {
        in_group: group_of.iter().map(|&g| groups[g].3 > 1).collect(),
        writes: groups.iter().filter(|g| g.2).map(|&(s, e, _, _)| (s, e)).collect(),
        ranges: groups.into_iter().map(|(s, e, _, members)| (s, e, members > 1)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const READ: bool = false;
    const WRITE: bool = true;

    /// The plan of plain arguments `(start, bytes)`, all `&T` but those marked `WRITE`.
    fn plan(arguments: &[(usize, usize, bool)]) -> LaunchPlan {
        plan_launch(arguments).unwrap()
    }

    #[test]
    fn overlapping_shared_arguments_are_mapped_as_one_range() {
        // Disjoint (or touching) arguments: each maps alone, as the launch passes them.
        let p = plan(&[(0, 40, READ), (40, 8, WRITE), (100, 4, READ)]);
        assert_eq!(p.ranges, [(0, 40, false), (40, 48, false), (100, 104, false)]);
        assert_eq!(p.in_group, [false, false, false]);
        assert!(!p.joins());
        // One inside another, in either order, and the same data twice: one range.
        for arguments in [
            &[(0, 40, READ), (0, 400, READ)][..],
            &[(0, 400, READ), (0, 40, READ)],
            &[(0, 400, READ), (0, 400, READ)],
            &[(80, 40, READ), (0, 400, READ)],
        ] {
            let p = plan(arguments);
            assert_eq!(p.ranges, [(0, 400, true)], "{arguments:?}");
            assert_eq!(p.in_group, [true, true]);
            assert!(p.joins());
        }
        // Partly overlapping, in either order, chained through a third, beside a `&mut`.
        let p = plan(&[(160, 240, READ), (500, 8, WRITE), (0, 240, READ), (380, 40, READ)]);
        assert_eq!(p.ranges, [(0, 420, true), (500, 508, false)]);
        assert_eq!(p.in_group, [true, false, true, true]);
        assert_eq!(p.writes, [(500, 508)]);
        // A `&mut` overlapping anything (only unsafe code can make one) is refused.
        for arguments in [
            &[(0, 40, WRITE), (0, 400, READ)][..],
            &[(0, 400, READ), (10, 4, WRITE)],
            &[(0, 8, WRITE), (0, 8, WRITE)],
        ] {
            let e = plan_launch(arguments);
            assert!(matches!(e, Err(Error::OverlapsMapped { .. })), "{arguments:?}: {e:?}");
        }
    }
}
