//! The device data guards keep mapped, recorded as the runtime's mappings ("roots"), so that
//! - a preload the runtime would refuse by ending the process (a range that partly overlaps a
//!   mapping, or encloses one: libomptarget 19's "explicit extension") is an `Error` instead;
//! - a `Preload` of data already on the device (inside a root) is copied in again (an update
//!   mapper), since nothing proves the host left it alone: the guard that copied it in may have
//!   been leaked (`mem::forget` is safe), its borrow ended, the data changed or freed and its
//!   memory reused. The runtime alone would find it present and copy nothing. The `Preload`s
//!   of a root hold one runtime reference together; a `PreloadMut` maps through the runtime
//!   each time (it copies ALWAYS, both ways), one reference each. Sharing a live guard's device
//!   copy without a copy goes through its views (`Preload::slice`), which borrow the guard.
//! - roots that lie inside data the program lends `&mut` can only be leaked guards' (a live
//!   guard would borrow the data): a `PreloadMut` or a `&mut T` launch argument that encloses
//!   them releases them first ([`discard_leaked`]), and [`reclaim`] does so for any data.
//!
//! Every runtime call on a root is made with the root marked busy: a guard of overlapping data
//! on another thread waits for that call rather than racing it, so the runtime's reference
//! count and the record agree whenever the record is consulted. A launch's plain `&T`/`&mut T`
//! arguments, which it maps and releases within itself (through the runtime, or on a GPU in
//! memory of its own), hold their roots busy for its length ([`LaunchHold`]); new ones are
//! roots of the launch's own until it returns.
//! Plain `&T` arguments may overlap each other, which the runtime cannot map as they come
//! ([`plan_launch`]): the library maps each group of them as one range, held by the launch.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::intrinsics::preload_kind;
use crate::{Error, memory};

mod plan;
pub(crate) use plan::{LaunchPlan, plan_launch};

/// `(device, start, end)` of a root.
type Key = (i64, usize, usize);

/// One runtime mapping that live guards hold.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Root {
    /// `(start, end)` of each `Preload` inside it that has not been dropped (live or leaked);
    /// while there is one, they hold one runtime reference together.
    reads: Vec<(usize, usize)>,
    /// Live `PreloadMut`s inside it, one runtime reference each.
    writers: usize,
    /// Runtime calls on it that have not returned yet.
    busy: usize,
    /// Its last reference is being released.
    releasing: bool,
}

impl Root {
    /// The runtime references the root's guards hold: one for the readers together, one per
    /// writer.
    fn references(&self) -> usize {
        usize::from(!self.reads.is_empty()) + self.writers
    }
}

/// What a guard's preload or release does after the record is updated.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing: the record counted the guard's release against a reference other guards hold.
    Counted,
    /// Call the runtime's mapper, then [`settle`] with this.
    Runtime(Settle),
    /// Copy the guard's data in (an update mapper: the data is present, but the host may have
    /// changed it since it was copied), then [`settle`].
    Refresh(Settle),
    /// Both: the begin mapper (the readers' reference), then the copy in, then [`settle`].
    MapRefresh(Settle),
}

/// What the record learns once the runtime call of a [`Step::Runtime`] has returned.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settle {
    /// The guard is not in the record (the record and the guards disagree): nothing to learn.
    Unrecorded,
    /// One runtime call on this root returned.
    Done(Key),
    /// The root's last reference is gone.
    Released(Key),
}

/// The roots of every device. A leaked guard's root stays, as its mapping does in the runtime.
#[derive(Debug, Default)]
struct Registry {
    roots: BTreeMap<Key, Root>,
    /// What each running launch holds ([`LaunchHold`]), by its number.
    launches: BTreeMap<u64, Launch>,
    /// The number of the next launch that holds roots (0: none).
    next_launch: u64,
}

/// What a running launch holds: the roots of its plain arguments (`true`: the launch's own,
/// new data), and the ranges the library mapped for it ([`LaunchPlan::joined`]), on `device`
/// (as the launch names it).
#[derive(Debug)]
struct Launch {
    held: Vec<(Key, bool)>,
    joined: Vec<(*const u8, usize)>,
    device: i64,
}

// SAFETY: the addresses are only handed back to the runtime, by the thread that mapped them.
unsafe impl Send for Launch {}

/// Where a range stands against the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Inside this root: the runtime finds it present and allocates nothing.
    Present(Key),
    /// Disjoint from all of them: the runtime allocates it.
    New,
    /// It overlaps a root another thread is mapping or releasing: wait for that.
    Busy,
}

impl Registry {
    /// Where `start..start + bytes` on `device` stands, or [`Error::OverlapsMapped`] when the
    /// runtime cannot map it (it partly overlaps a root, or encloses one).
    fn standing(&self, device: i64, start: usize, bytes: usize) -> Result<Standing, Error> {
        let end = start + bytes;
        let mut inside = None;
        let mut outside = false;
        // Roots are disjoint: walking down from the last one starting before `end`, the first
        // that ends at or before `start` closes the search.
        let candidates = self.roots.range((device, 0, 0)..(device, end, 0)).rev();
        for (&key, root) in candidates.take_while(|&(&(_, _, e), _)| e > start) {
            if root.busy > 0 || root.releasing {
                return Ok(Standing::Busy);
            }
            if key.1 <= start && end <= key.2 {
                inside = Some(key);
            } else {
                outside = true;
            }
        }
        match (inside, outside) {
            (_, true) => Err(Error::OverlapsMapped { bytes, kernel: None }),
            (Some(key), false) => Ok(Standing::Present(key)),
            (None, false) => Ok(Standing::New),
        }
    }

    /// The record's side of a guard's preload; `None`: wait and try again. `room` refuses new
    /// data the device cannot hold.
    fn acquire(
        &mut self,
        device: i64,
        start: usize,
        bytes: usize,
        write: bool,
        room: impl FnOnce(usize) -> Result<(), Error>,
    ) -> Result<Option<Step>, Error> {
        let key = match self.standing(device, start, bytes)? {
            Standing::Busy => return Ok(None),
            Standing::New => {
                room(bytes)?;
                let key = (device, start, start + bytes);
                let root = Root {
                    reads: if write { Vec::new() } else { vec![(start, start + bytes)] },
                    writers: usize::from(write),
                    busy: 1,
                    releasing: false,
                };
                self.roots.insert(key, root);
                return Ok(Some(Step::Runtime(Settle::Done(key))));
            }
            Standing::Present(key) => key,
        };
        let root = self.roots.get_mut(&key).expect("standing found it");
        let end = start + bytes;
        if write {
            root.writers += 1;
            root.busy += 1;
            return Ok(Some(Step::Runtime(Settle::Done(key))));
        }
        // Copied in again, whoever else holds it; where only `PreloadMut`s do, the readers take
        // their own reference first.
        let step = if root.reads.is_empty() {
            Step::MapRefresh(Settle::Done(key))
        } else {
            Step::Refresh(Settle::Done(key))
        };
        root.busy += 1;
        root.reads.push((start, end));
        Ok(Some(step))
    }

    /// The record's side of a guard's release; `None`: wait and try again.
    fn release(&mut self, device: i64, start: usize, bytes: usize, write: bool) -> Option<Step> {
        let end = start + bytes;
        let found = self
            .roots
            .range_mut((device, 0, 0)..(device, end, 0))
            .next_back()
            .filter(|&(&(_, s, e), _)| s <= start && end <= e);
        let Some((&key, root)) = found else {
            // Not recorded (the record and the guards disagree): the runtime decides.
            return Some(Step::Runtime(Settle::Unrecorded));
        };
        if root.busy > 0 || root.releasing {
            return None;
        }
        if write {
            root.writers = root.writers.saturating_sub(1);
        } else {
            if let Some(i) = root.reads.iter().position(|&r| r == (start, end)) {
                root.reads.swap_remove(i);
            }
            if !root.reads.is_empty() {
                return Some(Step::Counted);
            }
        }
        Some(Step::Runtime(if root.reads.is_empty() && root.writers == 0 {
            root.releasing = true;
            Settle::Released(key)
        } else {
            root.busy += 1;
            Settle::Done(key)
        }))
    }

    /// The roots on `device` (`None`: on every device) that lie inside `start..end`, data the
    /// caller lends `&mut`, so that no live guard can hold them: marked releasing, each with
    /// the runtime references its (leaked) guards hold. `None`: one is busy, wait and try again.
    fn take_leaked(
        &mut self,
        device: Option<i64>,
        start: usize,
        end: usize,
    ) -> Option<Vec<(Key, usize)>> {
        let inside =
            |&(d, s, e): &Key| device.is_none_or(|device| d == device) && start <= s && e <= end;
        let leaked: Vec<Key> = self.roots.keys().copied().filter(inside).collect();
        if leaked.iter().any(|key| self.roots[key].busy > 0 || self.roots[key].releasing) {
            return None;
        }
        Some(
            leaked
                .into_iter()
                .map(|key| {
                    let root = self.roots.get_mut(&key).expect("just found");
                    root.releasing = true;
                    (key, root.references())
                })
                .collect(),
        )
    }

    fn settle(&mut self, settle: Settle) {
        match settle {
            Settle::Unrecorded => {}
            Settle::Done(key) => {
                if let Some(root) = self.roots.get_mut(&key) {
                    root.busy = root.busy.saturating_sub(1);
                }
            }
            Settle::Released(key) => {
                self.roots.remove(&key);
            }
        }
    }

    /// The roots of the ranges a launch maps ([`LaunchPlan`]), checked as a preload is and
    /// marked busy for the launch: the runtime maps them and releases them within it. New
    /// ranges become roots of the launch's own (`true`). `room` refuses the new bytes together;
    /// `None`: wait and try again.
    fn hold_launch(
        &mut self,
        device: i64,
        plan: &LaunchPlan,
        room: impl FnOnce(usize) -> Result<(), Error>,
    ) -> Result<Option<Vec<(Key, bool)>>, Error> {
        let mut new = 0usize;
        let mut held = Vec::new();
        for &(start, end, _) in &plan.ranges {
            match self.standing(device, start, end - start)? {
                Standing::Busy => return Ok(None),
                Standing::New => {
                    new = new.saturating_add(end - start);
                    held.push(((device, start, end), true));
                }
                Standing::Present(key) => held.push((key, false)),
            }
        }
        room(new)?;
        for &(key, own) in &held {
            if own {
                self.roots.insert(key, Root { busy: 1, ..Root::default() });
            } else {
                self.roots.get_mut(&key).expect("standing found it").busy += 1;
            }
        }
        Ok(Some(held))
    }

    /// The launch that [`hold_launch`](Self::hold_launch) marked returned: its own roots are
    /// gone (the runtime released them), the others are no longer busy.
    fn release_launch(&mut self, held: &[(Key, bool)]) {
        for &(key, own) in held {
            if own {
                self.roots.remove(&key);
            } else if let Some(root) = self.roots.get_mut(&key) {
                root.busy = root.busy.saturating_sub(1);
            }
        }
    }
}

static REGISTRY: Mutex<Registry> =
    Mutex::new(Registry { roots: BTreeMap::new(), launches: BTreeMap::new(), next_launch: 1 });
/// Signalled whenever a busy root settles.
static SETTLED: Condvar = Condvar::new();

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `step` on the record until it no longer asks to wait for another thread's runtime call.
fn until_settled<R>(mut step: impl FnMut(&mut Registry) -> Option<R>) -> R {
    let mut registry = registry();
    loop {
        if let Some(r) = step(&mut registry) {
            return r;
        }
        registry = SETTLED.wait(registry).unwrap_or_else(|e| e.into_inner());
    }
}

/// The device a range is recorded under: -1 (the default) as the default device's number, so
/// that `preload` and `Device::preload` on the default device see each other's ranges.
fn device_key(device: i64) -> i64 {
    crate::rt::resolve_device(device).unwrap_or(device)
}

/// Records a guard's range `bytes` at `data` on `device` (`write`: a `PreloadMut`), or refuses
/// one the runtime cannot map: it must lie inside a root (the runtime finds it present) or be
/// disjoint from all of them, and new data must fit in the device's memory
/// ([`memory::check_room`]). A `PreloadMut` that encloses roots releases them first: only
/// leaked guards can hold data inside a `&mut` borrow ([`discard_leaked`]).
///
/// # Safety
/// For a `PreloadMut` (`write`), the data must be borrowed `&mut` by the guard being made, and
/// no kernel may still use it.
pub(crate) unsafe fn acquire(
    device: i64,
    data: *const u8,
    bytes: usize,
    write: bool,
) -> Result<Step, Error> {
    let device = device_key(device);
    let start = data as usize;
    let room = |bytes| memory::check_room(device, bytes);
    let acquire = || {
        until_settled(|registry| registry.acquire(device, start, bytes, write, room).transpose())
    };
    match acquire() {
        Err(e @ Error::OverlapsMapped { .. }) if write => {
            // SAFETY: lent `&mut` (the caller's contract).
            if unsafe { discard_leaked(Some(device), data, bytes) }? == 0 {
                return Err(e);
            }
            acquire()
        }
        step => step,
    }
}

/// Forgets one guard's range: the guard is being released.
pub(crate) fn release(device: i64, start: usize, bytes: usize, write: bool) -> Step {
    let device = device_key(device);
    until_settled(|registry| registry.release(device, start, bytes, write))
}

/// Tells the record that the runtime call of a [`Step::Runtime`] returned.
pub(crate) fn settle(settle: Settle) {
    if settle != Settle::Unrecorded {
        registry().settle(settle);
        SETTLED.notify_all();
    }
}

/// Releases the roots that lie inside the `bytes` at `data` on `device` (`None`: on every
/// device), with every runtime reference their guards hold, and says how many there were.
/// Kernels still queued on the library's streams finish first (a leaked guard's kernel may be
/// one of them).
///
/// # Safety
/// The data must be lent `&mut` by the caller for the length of the call: then no live guard
/// holds any of it, and the roots inside it are leaked guards' (`mem::forget`), whose device
/// copies nothing can reach any more.
pub(crate) unsafe fn discard_leaked(
    device: Option<i64>,
    data: *const u8,
    bytes: usize,
) -> Result<usize, Error> {
    let start = data as usize;
    if !registry().roots.keys().any(|&(_, s, e)| start <= s && e <= start + bytes) {
        return Ok(0);
    }
    match device {
        Some(device) => crate::stream::synchronize_pending(device)?,
        None => crate::stream::synchronize()?,
    }
    let leaked = until_settled(|registry| registry.take_leaked(device, start, start + bytes));
    for &(key @ (device, root_start, root_end), references) in &leaked {
        // The root's address, within the caller's borrow.
        let root = data.wrapping_add(root_start - start);
        for _ in 0..references {
            // SAFETY: a mapping of data the caller lends; no guard can release it any more, and
            // no kernel uses it (synchronised above). The readers' kind copies nothing back.
            unsafe {
                release_around::<{ preload_kind::READ }>(
                    device,
                    root,
                    (root_end - root_start) as i64,
                )
            };
        }
        settle(Settle::Released(key));
    }
    Ok(leaked.len())
}

/// The roots a running launch holds ([`hold_launch`]), by its number in the record (0: none);
/// dropping it releases them. A number rather than the list, so that a hold of nothing has no
/// drop glue left once inlined.
#[must_use]
pub struct LaunchHold(u64);

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

// The marker calls of a launch's shared range, one function per kind: the lowering needs each
// kind as a constant operand, and two calls in the branches of one function would be merged
// into one call of a selected kind.

/// The begin mapper of `bytes` at `data`, mapped around a launch: the range that overlapping
/// `&T` arguments share ([`hold_launch`]).
///
/// # Safety
/// The data must stay borrowed until [`release_around`].
#[inline(never)]
unsafe fn map_around<const KIND: i64>(device: i64, data: *const u8, bytes: i64) {
    // SAFETY: per the caller.
    unsafe { crate::intrinsics::preload(device, data, bytes, KIND) };
}

/// The end mapper of data mapped by [`map_around`].
///
/// # Safety
/// The data must have been mapped by [`map_around`], and no kernel may still use it.
#[inline(never)]
unsafe fn release_around<const KIND: i64>(device: i64, data: *const u8, bytes: i64) {
    // SAFETY: per the caller.
    unsafe { crate::intrinsics::release(device, data, bytes, KIND) };
}

#[cfg(test)]
mod tests {
    use super::*;

    const READ: bool = false;
    const WRITE: bool = true;

    fn room(_: usize) -> Result<(), Error> {
        Ok(())
    }

    fn acquire(r: &mut Registry, start: usize, bytes: usize, write: bool) -> Step {
        r.acquire(0, start, bytes, write, room).unwrap().expect("nothing is busy")
    }

    /// Maps and settles, as a guard's preload does.
    fn preload(r: &mut Registry, start: usize, bytes: usize, write: bool) -> Step {
        let step = acquire(r, start, bytes, write);
        if let Step::Runtime(s) | Step::Refresh(s) | Step::MapRefresh(s) = step {
            r.settle(s);
        }
        step
    }

    fn drop_guard(r: &mut Registry, start: usize, bytes: usize, write: bool) -> Step {
        let step = r.release(0, start, bytes, write).expect("nothing is busy");
        if let Step::Runtime(s) = step {
            r.settle(s);
        }
        step
    }

    #[test]
    fn nested_preloads_copy_in_again_and_the_last_releases() {
        let mut r = Registry::default();
        assert_eq!(preload(&mut r, 100, 50, READ), Step::Runtime(Settle::Done((0, 100, 150))));
        // The same data, or data inside it: no new mapping, but copied in again (the first
        // guard may have been leaked, and the data changed since).
        assert_eq!(preload(&mut r, 100, 50, READ), Step::Refresh(Settle::Done((0, 100, 150))));
        assert_eq!(preload(&mut r, 110, 10, READ), Step::Refresh(Settle::Done((0, 100, 150))));
        // The first guard goes first; the others still hold the runtime's reference.
        assert_eq!(drop_guard(&mut r, 100, 50, READ), Step::Counted);
        assert_eq!(drop_guard(&mut r, 110, 10, READ), Step::Counted);
        assert_eq!(
            drop_guard(&mut r, 100, 50, READ),
            Step::Runtime(Settle::Released((0, 100, 150)))
        );
        assert!(r.roots.is_empty());
    }

    #[test]
    fn leaked_roots_inside_lent_data_are_taken_whole() {
        let mut r = Registry::default();
        // Leaked: a `Preload` of 100..150 (shared by a second), a `PreloadMut` of 200..210, and
        // on another device 120..130.
        let _ = preload(&mut r, 100, 50, READ);
        let _ = preload(&mut r, 110, 10, READ);
        let _ = preload(&mut r, 200, 10, WRITE);
        let _ = r.acquire(1, 120, 10, READ, room).unwrap().map(|s| match s {
            Step::Runtime(s) => r.settle(s),
            _ => unreachable!(),
        });
        // A `&mut` of 0..300 on device 0: both of its roots, with each one's references.
        let mut taken = r.take_leaked(Some(0), 0, 300).expect("nothing busy");
        taken.sort();
        assert_eq!(taken, [((0, 100, 150), 1), ((0, 200, 210), 1)]);
        // Marked releasing until settled: guards of the data wait meanwhile.
        assert_eq!(r.acquire(0, 100, 8, READ, room).unwrap(), None);
        for (key, _) in taken {
            r.settle(Settle::Released(key));
        }
        assert_eq!(r.roots.keys().collect::<Vec<_>>(), [&(1, 120, 130)]);
        // On every device: a root reaching outside the lent data stays, the other device's goes.
        let _ = preload(&mut r, 100, 50, READ);
        assert_eq!(r.take_leaked(None, 110, 300), Some(vec![((1, 120, 130), 1)]));
        r.settle(Settle::Released((1, 120, 130)));
        assert_eq!(r.take_leaked(None, 0, 300), Some(vec![((0, 100, 150), 1)]));
        // A busy root is waited for.
        let mut r = Registry::default();
        let Step::Runtime(_) = acquire(&mut r, 0, 64, WRITE) else { panic!() };
        assert_eq!(r.take_leaked(None, 0, 64), None);
    }

    #[test]
    fn preload_mut_maps_through_the_runtime_every_time() {
        let mut r = Registry::default();
        // A root a leaked `Preload` keeps: a `PreloadMut` of it copies, both ways.
        assert!(matches!(preload(&mut r, 0, 64, READ), Step::Runtime(Settle::Done(_))));
        assert_eq!(preload(&mut r, 0, 64, WRITE), Step::Runtime(Settle::Done((0, 0, 64))));
        assert_eq!(drop_guard(&mut r, 0, 64, WRITE), Step::Runtime(Settle::Done((0, 0, 64))));
        assert_eq!(r.roots[&(0, 0, 64)], Root { reads: vec![(0, 64)], ..Root::default() });
        // A root of `PreloadMut`s alone: the first `Preload` takes the readers' reference.
        assert!(matches!(preload(&mut r, 100, 8, WRITE), Step::Runtime(Settle::Done(_))));
        // It copies its data in again: no guard held it, so the host may have changed it.
        assert_eq!(preload(&mut r, 100, 4, READ), Step::MapRefresh(Settle::Done((0, 100, 108))));
        assert_eq!(preload(&mut r, 104, 4, READ), Step::Refresh(Settle::Done((0, 100, 108))));
        assert_eq!(preload(&mut r, 104, 2, READ), Step::Refresh(Settle::Done((0, 100, 108))));
        assert_eq!(drop_guard(&mut r, 104, 2, READ), Step::Counted);
        assert_eq!(drop_guard(&mut r, 100, 4, READ), Step::Counted);
        // The readers' reference goes; the `PreloadMut` keeps the root.
        assert_eq!(drop_guard(&mut r, 104, 4, READ), Step::Runtime(Settle::Done((0, 100, 108))));
        assert_eq!(
            drop_guard(&mut r, 100, 8, WRITE),
            Step::Runtime(Settle::Released((0, 100, 108)))
        );
        assert_eq!(r.roots.len(), 1);
    }

    #[test]
    fn overlaps_are_refused_and_devices_are_apart() {
        let mut r = Registry::default();
        let _ = preload(&mut r, 10, 10, READ);
        let _ = preload(&mut r, 30, 10, READ);
        for (start, bytes) in [(0, 100), (15, 10), (5, 7), (19, 12), (0, 11)] {
            let e = r.acquire(0, start, bytes, READ, room);
            assert!(matches!(e, Err(Error::OverlapsMapped { .. })), "{start}+{bytes}: {e:?}");
        }
        assert!(matches!(preload(&mut r, 20, 10, READ), Step::Runtime(Settle::Done(_))));
        assert!(matches!(preload(&mut r, 0, 10, READ), Step::Runtime(Settle::Done(_))));
        // Another device's record is its own.
        let other = r.acquire(1, 0, 100, READ, room).unwrap();
        assert!(matches!(other, Some(Step::Runtime(Settle::Done((1, 0, 100))))));
    }

    #[test]
    fn busy_roots_make_overlapping_guards_wait() {
        let mut r = Registry::default();
        // Being mapped: guards of the same data wait for the copy, not just for the record.
        let Step::Runtime(mapped) = acquire(&mut r, 0, 64, READ) else { panic!() };
        assert_eq!(r.acquire(0, 8, 8, READ, room).unwrap(), None);
        assert_eq!(r.acquire(0, 32, 64, READ, room).unwrap(), None);
        assert_eq!(r.hold_launch(0, &plan(&[(8, 8, READ)]), room).unwrap(), None);
        r.settle(mapped);
        let Step::Refresh(refreshed) = acquire(&mut r, 8, 8, READ) else { panic!() };
        r.settle(refreshed);
        let _ = drop_guard(&mut r, 8, 8, READ);
        // Being released: a new mapping of overlapping data waits until it is gone.
        let Some(Step::Runtime(released)) = r.release(0, 0, 64, READ) else { panic!() };
        assert_eq!(r.acquire(0, 0, 128, READ, room).unwrap(), None);
        r.settle(released);
        assert!(matches!(acquire(&mut r, 0, 128, READ), Step::Runtime(Settle::Done(_))));
    }

    #[test]
    fn runtime_calls_on_a_root_are_one_at_a_time() {
        let mut r = Registry::default();
        let _ = preload(&mut r, 0, 64, READ);
        assert_eq!(preload(&mut r, 0, 32, READ), Step::Refresh(Settle::Done((0, 0, 64))));
        // A `PreloadMut` of another part of it (a struct's other field) is being mapped: the
        // readers' releases wait for that call.
        let Step::Runtime(writer) = acquire(&mut r, 32, 32, WRITE) else { panic!() };
        assert_eq!(r.release(0, 0, 64, READ), None);
        r.settle(writer);
        assert_eq!(drop_guard(&mut r, 0, 64, READ), Step::Counted);
        // The readers' reference is being released: the writer's release, the last one, waits.
        let Some(Step::Runtime(readers)) = r.release(0, 0, 32, READ) else { panic!() };
        assert_eq!(readers, Settle::Done((0, 0, 64)));
        assert_eq!(r.release(0, 32, 32, WRITE), None);
        r.settle(readers);
        assert_eq!(drop_guard(&mut r, 32, 32, WRITE), Step::Runtime(Settle::Released((0, 0, 64))));
        assert!(r.roots.is_empty());
    }

    #[test]
    fn new_data_needs_room_and_present_data_does_not() {
        let mut r = Registry::default();
        let full = |bytes| Err(Error::OutOfMemory { bytes, available: 0 });
        assert!(matches!(r.acquire(0, 0, 64, READ, full), Err(Error::OutOfMemory { .. })));
        assert!(r.roots.is_empty(), "a refused preload leaves no record");
        let _ = preload(&mut r, 0, 64, READ);
        let present = r.acquire(0, 0, 32, READ, full).unwrap();
        assert_eq!(present, Some(Step::Refresh(Settle::Done((0, 0, 64)))));
        r.settle(Settle::Done((0, 0, 64)));
        assert!(matches!(r.acquire(0, 0, 32, WRITE, full).unwrap(), Some(Step::Runtime(_))));
    }

    /// The plan of plain arguments `(start, bytes)`, all `&T` but those marked `WRITE`.
    fn plan(arguments: &[(usize, usize, bool)]) -> LaunchPlan {
        plan_launch(arguments).unwrap()
    }

    #[test]
    fn launch_arguments_against_roots() {
        let mut r = Registry::default();
        let _ = preload(&mut r, 100, 100, READ);
        // Present, new, and new overlapping each other (one range, counted once, held once).
        let mut new = 0;
        let p = plan(&[(120, 10, READ), (0, 50, READ), (10, 20, READ), (40, 20, READ)]);
        let held = r.hold_launch(0, &p, |b| {
            new = b;
            Ok(())
        });
        let held = held.unwrap().unwrap();
        assert_eq!(new, 60);
        assert_eq!(held, [((0, 0, 60), true), ((0, 100, 200), false)]);
        // While the launch runs, guards of its data wait; its release frees them.
        assert_eq!(r.acquire(0, 110, 10, READ, room).unwrap(), None);
        assert_eq!(r.acquire(0, 0, 8, READ, room).unwrap(), None);
        assert_eq!(r.acquire(0, 55, 8, READ, room).unwrap(), None);
        assert_eq!(r.release(0, 100, 100, READ), None);
        r.release_launch(&held);
        assert_eq!(r.roots.len(), 1);
        assert_eq!(r.roots[&(0, 100, 200)].busy, 0);
        // Enclosing or partly overlapping preloaded data, alone or as a group: refused.
        for arguments in [
            &[(50, 100, READ)][..],
            &[(0, 300, READ)],
            &[(90, 20, READ), (80, 15, READ)],
            &[(110, 10, READ), (150, 100, READ)],
        ] {
            let e = r.hold_launch(0, &plan(arguments), room);
            assert!(matches!(e, Err(Error::OverlapsMapped { .. })), "{arguments:?}: {e:?}");
        }
        // A group inside preloaded data is present.
        let p = plan(&[(110, 10, READ), (115, 20, READ)]);
        let held = r.hold_launch(0, &p, room).unwrap().unwrap();
        assert_eq!(held, [((0, 100, 200), false)]);
        r.release_launch(&held);
        let full = |bytes| Err(Error::OutOfMemory { bytes, available: 0 });
        let e = r.hold_launch(0, &plan(&[(0, 8, READ)]), full);
        assert!(matches!(e, Err(Error::OutOfMemory { .. })));
        assert_eq!(r.roots.len(), 1, "a refused launch holds nothing");
    }
}
