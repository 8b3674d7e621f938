//! The device data live guards keep mapped, recorded as the runtime's mappings ("roots"), so
//! that
//! - a preload the runtime would refuse by ending the process (a range that partly overlaps a
//!   mapping, or encloses one: libomptarget 19's "explicit extension") is an `Error` instead;
//! - a `Preload` of data already on the device (inside a root that live `Preload`s hold) is
//!   counted here and costs no runtime call. libomptarget 19 would take a stream, wait there for
//!   the event of the root's first copy and synchronise it, on every such mapping; the
//!   `Preload`s of a root hold one runtime reference together instead. Data inside a root that
//!   no live `Preload` holds is copied in again by an update (the runtime would find it present
//!   and copy nothing, although the host may have changed it: another field of a struct whose
//!   `Preload` is gone). A `PreloadMut` still maps through the runtime each time: it copies
//!   ALWAYS, both ways.
//!
//! Every runtime call on a root is made with the root marked busy: a guard of overlapping data
//! on another thread waits for that call rather than racing it, so the runtime's reference
//! count and the record agree whenever the record is consulted. A launch's plain `&T`/`&mut T`
//! arguments, which the runtime maps and releases within the launch, hold their roots busy
//! for its length ([`LaunchHold`]); new ones are roots of the launch's own until it returns.
//! Plain `&T` arguments may overlap each other, which the runtime cannot map as they come
//! ([`plan_launch`]): the library maps each group of them as one range, held by the launch.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::intrinsics::preload_kind;
use crate::{Error, memory};

/// `(device, start, end)` of a root.
type Key = (i64, usize, usize);

/// One runtime mapping that live guards hold.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Root {
    /// `(start, end)` of each live `Preload` inside it; while there is one, they hold one runtime
    /// reference together. Their data cannot have changed on the host since it was copied in.
    reads: Vec<(usize, usize)>,
    /// Live `PreloadMut`s inside it, one runtime reference each.
    writers: usize,
    /// Runtime calls on it that have not returned yet.
    busy: usize,
    /// Its last reference is being released.
    releasing: bool,
}

impl Root {
    /// Whether `start..end` lies inside a live `Preload`'s data: a `Preload` of it is counted
    /// against the readers' reference ([`Step::Counted`]), whose device copy is current.
    fn read_covers(&self, start: usize, end: usize) -> bool {
        self.reads.iter().any(|&(s, e)| s <= start && end <= e)
    }
}

/// What a guard's preload or release does after the record is updated.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing: the record counted the guard against a reference the runtime already holds.
    Counted,
    /// Call the runtime's mapper, then [`settle`] with this.
    Runtime(Settle),
    /// Copy the guard's data in (an update mapper: the data is present, but no live `Preload`
    /// holds it, so the host may have changed it since), then [`settle`].
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
    ranges: Vec<(usize, usize, bool)>,
    /// For each argument, in order: whether it lies in a group.
    pub(crate) in_group: Vec<bool>,
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
        ranges: groups.into_iter().map(|(s, e, _, members)| (s, e, members > 1)).collect(),
    })
}

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

    /// The root a guard's preload would be counted against ([`Step::Counted`]) as the record
    /// stands: a `Preload` inside a live `Preload`'s data, on a root no runtime call is busy with.
    fn counting_root(&self, device: i64, start: usize, bytes: usize, write: bool) -> Option<Key> {
        match self.standing(device, start, bytes) {
            Ok(Standing::Present(key))
                if !write && self.roots[&key].read_covers(start, start + bytes) =>
            {
                Some(key)
            }
            _ => None,
        }
    }

    /// Whether [`Self::counting_root`] finds one.
    #[cfg(test)]
    fn counts(&self, device: i64, start: usize, bytes: usize, write: bool) -> bool {
        self.counting_root(device, start, bytes, write).is_some()
    }

    /// [`try_count`]'s side: records the range where it is counted, as `acquire` would.
    fn try_count(&mut self, device: i64, start: usize, bytes: usize, write: bool) -> bool {
        let Some(key) = self.counting_root(device, start, bytes, write) else { return false };
        // One more reader of the root, no runtime call.
        self.roots
            .get_mut(&key)
            .expect("counting_root found it")
            .reads
            .push((start, start + bytes));
        true
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
        let step = if root.read_covers(start, end) {
            // Inside a live `Preload`'s data: the device copy is current.
            Step::Counted
        } else if root.reads.is_empty() {
            // Only `PreloadMut`s hold the root: the readers take their own reference, and this
            // data, which no guard held, is copied in again.
            Step::MapRefresh(Settle::Done(key))
        } else {
            Step::Refresh(Settle::Done(key))
        };
        if step != Step::Counted {
            root.busy += 1;
        }
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

/// Records a guard's range `start..start + bytes` on `device` (`write`: a `PreloadMut`), or
/// refuses one the runtime cannot map: it must lie inside a root (the runtime finds it
/// present) or be disjoint from all of them, and new data must fit in the device's memory
/// ([`memory::check_room`]).
pub(crate) fn acquire(device: i64, start: usize, bytes: usize, write: bool) -> Result<Step, Error> {
    let device = device_key(device);
    let room = |bytes| memory::check_room(device, bytes);
    until_settled(|registry| registry.acquire(device, start, bytes, write, room).transpose())
}

/// Counts this guard's range at once where [`acquire`] would count it without a runtime call
/// (a `Preload` inside a live `Preload`'s data, on a root no runtime call is busy with), and
/// says so; `false`: nothing is recorded, and [`acquire`] decides.
pub(crate) fn try_count(device: i64, start: usize, bytes: usize, write: bool) -> bool {
    let device = device_key(device);
    registry().try_count(device, start, bytes, write)
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
        unsafe {
            crate::stream::release_around::<{ preload_kind::READ }>(
                launch.device,
                data,
                bytes as i64,
            )
        };
    }
    registry().release_launch(&launch.held);
    SETTLED.notify_all();
}

/// Checks the ranges a launch maps around itself ([`plan_launch`]) as [`acquire`] checks a
/// preload: every range inside a root or disjoint from all, and the new ones fitting in the
/// device's memory together. The roots involved stay busy until the returned hold is dropped,
/// after the launch: the runtime maps and releases them within it, and a guard of overlapping
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
    let hold = until_settled(|registry| {
        let held = match registry.hold_launch(key, plan, room) {
            Ok(Some(held)) => held,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let number = registry.next_launch;
        registry.next_launch += 1;
        registry.launches.insert(number, Launch { held, joined: joined.clone(), device });
        Some(Ok(LaunchHold(number)))
    })?;
    for &(data, bytes) in &joined {
        // SAFETY: borrowed until the hold is dropped (the caller's contract); the hold releases
        // it, and its root is busy meanwhile.
        unsafe {
            crate::stream::map_around::<{ preload_kind::READ_WRITE }>(device, data, bytes as i64)
        };
    }
    Ok(hold)
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
    fn nested_preloads_are_counted_and_the_last_releases() {
        let mut r = Registry::default();
        assert_eq!(preload(&mut r, 100, 50, READ), Step::Runtime(Settle::Done((0, 100, 150))));
        // The same data, or data inside it: no runtime call either way.
        assert_eq!(preload(&mut r, 100, 50, READ), Step::Counted);
        assert_eq!(preload(&mut r, 110, 10, READ), Step::Counted);
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
    fn what_would_be_counted_is_known_before() {
        let mut r = Registry::default();
        assert!(!r.counts(0, 100, 50, READ), "new data");
        assert_eq!(preload(&mut r, 100, 50, READ), Step::Runtime(Settle::Done((0, 100, 150))));
        assert!(r.counts(0, 110, 10, READ));
        assert!(r.counts(0, 100, 50, READ));
        assert!(!r.counts(0, 110, 10, WRITE), "a PreloadMut maps through the runtime");
        assert!(!r.counts(0, 90, 20, READ), "an overlap is refused, not counted");
        assert!(!r.counts(1, 110, 10, READ), "another device");
        // A root that only a PreloadMut holds: its data is copied in again.
        assert_eq!(preload(&mut r, 200, 50, WRITE), Step::Runtime(Settle::Done((0, 200, 250))));
        assert!(!r.counts(0, 210, 10, READ));
        // A root a runtime call is busy with is waited for, not counted.
        let step = acquire(&mut r, 100, 50, WRITE);
        assert!(!r.counts(0, 110, 10, READ));
        if let Step::Runtime(s) = step {
            r.settle(s);
        }
        assert!(r.counts(0, 110, 10, READ));
        // Every look agrees with what acquire then does.
        for (start, bytes, write) in [(110, 10, READ), (120, 5, WRITE), (300, 8, READ)] {
            let counts = r.counts(0, start, bytes, write);
            assert_eq!(counts, preload(&mut r, start, bytes, write) == Step::Counted);
        }
        // try_count records what it counts, as acquire would: the guard's drop is counted too,
        // and the root's last reader releases it.
        let mut r = Registry::default();
        assert!(!r.try_count(0, 100, 50, READ), "new data is acquire's");
        assert_eq!(preload(&mut r, 100, 50, READ), Step::Runtime(Settle::Done((0, 100, 150))));
        assert!(r.try_count(0, 110, 10, READ));
        assert!(!r.try_count(0, 110, 10, WRITE));
        assert_eq!(drop_guard(&mut r, 110, 10, READ), Step::Counted);
        assert_eq!(
            drop_guard(&mut r, 100, 50, READ),
            Step::Runtime(Settle::Released((0, 100, 150)))
        );
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
        assert_eq!(preload(&mut r, 104, 2, READ), Step::Counted);
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
        assert_eq!(acquire(&mut r, 8, 8, READ), Step::Counted);
        let _ = drop_guard(&mut r, 8, 8, READ);
        // Being released: a new mapping of overlapping data waits until it is gone.
        let Some(Step::Runtime(released)) = r.release(0, 0, 64, READ) else { panic!() };
        assert_eq!(r.acquire(0, 0, 128, READ, room).unwrap(), None);
        r.settle(released);
        assert!(matches!(acquire(&mut r, 0, 128, READ), Step::Runtime(Settle::Done(_))));
    }

    #[test]
    fn data_no_live_preload_holds_is_copied_in_again() {
        let mut r = Registry::default();
        // `preload(&s)`, `preload(&s.a)`, drop the first: `s.b` is free for the host to change.
        let _ = preload(&mut r, 0, 64, READ);
        assert_eq!(preload(&mut r, 0, 32, READ), Step::Counted);
        assert_eq!(drop_guard(&mut r, 0, 64, READ), Step::Counted);
        // `preload(&s.b)`: present, but copied in again; then held, so a part of it is counted.
        assert_eq!(preload(&mut r, 32, 32, READ), Step::Refresh(Settle::Done((0, 0, 64))));
        assert_eq!(preload(&mut r, 40, 8, READ), Step::Counted);
    }

    #[test]
    fn runtime_calls_on_a_root_are_one_at_a_time() {
        let mut r = Registry::default();
        let _ = preload(&mut r, 0, 64, READ);
        assert_eq!(preload(&mut r, 0, 32, READ), Step::Counted);
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
        assert_eq!(r.acquire(0, 0, 32, READ, full).unwrap(), Some(Step::Counted));
        assert!(matches!(r.acquire(0, 0, 32, WRITE, full).unwrap(), Some(Step::Runtime(_))));
    }

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
