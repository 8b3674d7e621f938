//! The map types of each phase, from the kinds the library passes to the markers.
//!
//! A launch is split as upstream does: the begin mapper carries the copy-in bits, the kernel
//! `TARGET_PARAM` (plus `LITERAL|IMPLICIT` for scalars), the end mapper the copy-out bits.

use offload_abi::intrinsics::{arg_kind, preload_kind, update_direction};

use crate::abi::map_type::*;

/// Map types of one kernel parameter slot in the three phases of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotMapTypes {
    pub(crate) begin: i64,
    pub(crate) kernel: i64,
    pub(crate) end: i64,
}

/// The split for one launch slot, or `None` for an unknown kind.
pub(crate) fn launch_slot(kind: i64) -> Option<SlotMapTypes> {
    let split = |begin, kernel, end| Some(SlotMapTypes { begin, kernel, end });
    match kind {
        // Scalars keep LITERAL in every phase: the mappers skip them, and the runtime never
        // reads the value bits as an address.
        arg_kind::LITERAL => {
            split(LITERAL | IMPLICIT, LITERAL | IMPLICIT | TARGET_PARAM, LITERAL | IMPLICIT)
        }
        // ALWAYS: a launch's own borrow is the only valid mapping of this memory, so the copies
        // must happen even where the runtime still holds a mapping a leaked guard left behind
        // (its reference count would otherwise skip them). Without a leak the count is zero
        // at both ends anyway, and ALWAYS costs nothing.
        arg_kind::MAP_TO => split(TO | ALWAYS, TARGET_PARAM, NONE),
        arg_kind::MAP_TO_FROM => split(TO | ALWAYS, TARGET_PARAM, FROM | ALWAYS),
        // Already mapped by a live guard: no copy in any phase.
        arg_kind::PRESENT => split(NONE, TARGET_PARAM, NONE),
        _ => None,
    }
}

/// Whether a launch with these slot kinds needs begin/end mappers at all.
pub(crate) fn launch_needs_mappers(kinds: &[i64]) -> bool {
    kinds.iter().any(|&k| k == arg_kind::MAP_TO || k == arg_kind::MAP_TO_FROM)
}

/// Map type of a preload's begin mapper. A `Preload` shares a present copy (two preloads of
/// the same data copy it once); a `PreloadMut` holds the only borrow of its memory, so it
/// copies ALWAYS, even over a mapping a leaked guard left behind.
pub(crate) fn preload_begin(kind: i64) -> Option<i64> {
    match kind {
        preload_kind::READ => Some(TO),
        preload_kind::READ_WRITE => Some(TO | ALWAYS),
        _ => None,
    }
}

/// Map type of a release's end ("return") mapper: FROM copies a `PreloadMut` back, ALWAYS for
/// the same reason as its begin.
pub(crate) fn release_end(kind: i64) -> Option<i64> {
    match kind {
        preload_kind::READ => Some(NONE),
        preload_kind::READ_WRITE => Some(FROM | ALWAYS),
        _ => None,
    }
}

/// Map type of an update: FROM copies the device data back, TO pushes the host data.
pub(crate) fn update(direction: i64) -> Option<i64> {
    match direction {
        update_direction::FROM_DEVICE => Some(FROM),
        update_direction::TO_DEVICE => Some(TO),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutable_reference_is_split_to_from() {
        let s = launch_slot(arg_kind::MAP_TO_FROM).unwrap();
        assert_eq!((s.begin, s.kernel, s.end), (TO | ALWAYS, TARGET_PARAM, FROM | ALWAYS));
    }

    #[test]
    fn present_data_is_never_copied() {
        let s = launch_slot(arg_kind::PRESENT).unwrap();
        for phase in [s.begin, s.kernel, s.end] {
            assert_eq!(phase & (TO | FROM | ALWAYS), 0);
        }
        assert!(!launch_needs_mappers(&[arg_kind::LITERAL, arg_kind::PRESENT]));
        assert!(launch_needs_mappers(&[arg_kind::PRESENT, arg_kind::MAP_TO]));
    }

    #[test]
    fn scalars_are_literal_in_every_phase() {
        let s = launch_slot(arg_kind::LITERAL).unwrap();
        for phase in [s.begin, s.kernel, s.end] {
            assert_ne!(phase & LITERAL, 0);
        }
        assert_eq!(s.kernel & TARGET_PARAM, TARGET_PARAM);
    }

    #[test]
    fn unknown_kinds_are_refused() {
        assert_eq!(launch_slot(7), None);
        assert_eq!(preload_begin(9), None);
        assert_eq!(release_end(-1), None);
    }

    #[test]
    fn updates_copy_one_way() {
        assert_eq!(update(update_direction::FROM_DEVICE), Some(FROM));
        assert_eq!(update(update_direction::TO_DEVICE), Some(TO));
        assert_eq!(update(2), None);
    }

    #[test]
    fn only_preload_mut_copies_back() {
        assert_eq!(release_end(preload_kind::READ), Some(NONE));
        assert_eq!(release_end(preload_kind::READ_WRITE), Some(FROM | ALWAYS));
        assert_eq!(preload_begin(preload_kind::READ), Some(TO));
        assert_eq!(preload_begin(preload_kind::READ_WRITE), Some(TO | ALWAYS));
    }
}
