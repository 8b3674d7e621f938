//! The roots a launch holds while it runs: its plain `&T`/`&mut T` arguments' data, checked as
//! a preload is, and the ranges of overlapping `&T` arguments the library maps around it.

use super::{
    Launch, LaunchPlan, SETTLED, device_key, discard_leaked, map_around, registry, release_around,
    until_settled,
};
use crate::intrinsics::preload_kind;
use crate::{Error, memory};

/// The roots a running launch holds ([`hold_launch`]), by its number in the record (0: none);
/// dropping it releases them. A number rather than the list, so that a hold of nothing has no
/// drop glue left once inlined.
#[must_use]
pub(crate) struct LaunchHold(u64);

impl LaunchHold {
    /// A launch that maps nothing around itself holds nothing.
    pub(crate) const NONE: LaunchHold = LaunchHold(0);
}

impl Drop for LaunchHold {
    #[inline(always)]
    fn drop(&mut self) {
        if self.0 != 0 {
            release_launch(self.0);
        }
    }
}

#[cold]
#[inline(never)]
fn release_launch(number: u64) {
    let launch = registry().launches.remove(&number);
    let Some(launch) = launch else { return };
    // The ranges the library mapped for the launch go first, while their roots are busy. After
    // a kernel fault on a GPU (its stream's wait fails) they stay, as `stream::launch_sync`
    // leaves its own: the context is lost, and the runtime would end the process on them.
    let lost =
        !launch.joined.is_empty() && crate::stream::synchronize_pending(launch.device).is_err();
    for &(data, bytes) in launch.joined.iter().rev().filter(|_| !lost) {
        // SAFETY: mapped by `hold_launch` for this launch, which has returned; the data is
        // borrowed by its caller until the hold is dropped.
        unsafe { release_around::<{ preload_kind::READ }>(launch.device, data, bytes as i64) };
    }
    registry().release_launch(&launch.held);
    SETTLED.notify_all();
}

/// Checks the ranges a launch maps around itself ([`plan_launch`]) as [`acquire`] checks a
/// preload: every range inside a root or disjoint from all, and the new ones fitting in the
/// device's memory together. The roots involved stay busy until the returned hold is dropped,
/// after the launch: the launch maps and releases them within it, and a guard of overlapping
/// data on another thread waits for that rather than racing it. The groups of overlapping `&T`
/// arguments are mapped here, copied in once (`data(start)` gives the address of the argument a
/// group starts at), and released when the hold is dropped, before their roots are.
///
/// # Safety
/// The arguments' data must stay borrowed until the hold is dropped, and no kernel may still
/// use it then; `device` must be the launch's.
pub(crate) unsafe fn hold_launch(
    device: i64,
    plan: &LaunchPlan,
    data: impl Fn(usize) -> *const u8,
) -> Result<LaunchHold, Error> {
    let key = device_key(device);
    let room = |bytes| memory::check_room(key, bytes);
    let joined: Vec<(*const u8, usize)> = plan
        .ranges
        .iter()
        .filter(|&&(_, _, group)| group)
        .map(|&(start, end, _)| (data(start), end - start))
        .collect();
    let hold = || {
        until_settled(|registry| {
            let held = match registry.hold_launch(key, plan, room) {
                Ok(Some(held)) => held,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            let number = registry.next_launch;
            registry.next_launch += 1;
            registry.launches.insert(number, Launch { held, joined: joined.clone(), device });
            Some(Ok(LaunchHold(number)))
        })
    };
    let hold = match hold() {
        // A `&mut T` argument enclosing roots: they are leaked guards' (a live one would borrow
        // the data), released before the launch maps it.
        Err(e @ Error::OverlapsMapped { .. }) if !plan.writes.is_empty() => {
            let mut discarded = 0;
            for &(start, end) in &plan.writes {
                // SAFETY: a `&mut T` argument, lent for the whole launch (the caller's contract).
                discarded += unsafe { discard_leaked(Some(key), data(start), end - start) }?;
            }
            if discarded == 0 {
                return Err(e);
            }
            hold()?
        }
        hold => hold?,
    };
    for &(data, bytes) in &joined {
        // SAFETY: borrowed until the hold is dropped (the caller's contract); the hold releases
        // it, and its root is busy meanwhile.
        unsafe { map_around::<{ preload_kind::READ_WRITE }>(device, data, bytes as i64) };
    }
    Ok(hold)
}
