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

mod hold;
mod plan;
pub(crate) use hold::LaunchHold;
pub(crate) use hold::hold_launch;
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
mod tests;
