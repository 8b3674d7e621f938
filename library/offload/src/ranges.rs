//! The ranges live guards keep mapped, so that a preload the runtime would refuse by ending the
//! process (a range that partly overlaps a mapping, or encloses one: libomptarget 19's "explicit
//! extension") is an `Error` instead.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::{Error, memory};

/// `(device, start, end) -> guards` of every range a guard mapped and has not released. A
/// leaked guard's range stays, as its mapping does in the runtime.
static LIVE: Mutex<BTreeMap<(i64, usize, usize), usize>> = Mutex::new(BTreeMap::new());

/// The device a range is recorded under: -1 (the default) as the default device's number, so
/// that `preload` and `Device::preload` on the default device see each other's ranges.
fn device_key(device: i64) -> i64 {
    if device >= 0 { device } else { crate::rt::default_device().map_or(device, i64::from) }
}

/// Where a range stands against the live ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Inside a live range: the runtime finds it present and allocates nothing.
    Present,
    /// Disjoint from all of them: the runtime allocates it.
    New,
}

/// Where `start..start + bytes` on `device` stands, or [`Error::OverlapsMapped`] when the
/// runtime cannot map it (it partly overlaps a live range, or encloses one).
fn standing(
    live: &BTreeMap<(i64, usize, usize), usize>,
    device: i64,
    start: usize,
    bytes: usize,
) -> Result<Standing, Error> {
    let end = start + bytes;
    let mut overlaps = false;
    let mut inside = false;
    for &(_, s, e) in live.range((device, 0, 0)..(device, end, 0)).map(|(k, _)| k) {
        if e > start {
            overlaps = true;
            inside |= s <= start && end <= e;
        }
    }
    match (overlaps, inside) {
        (false, _) => Ok(Standing::New),
        (true, true) => Ok(Standing::Present),
        (true, false) => Err(Error::OverlapsMapped { bytes }),
    }
}

/// Records a guard's range `start..start + bytes` on `device`, or refuses one the runtime
/// cannot map: it must lie inside a live range (the runtime finds it present) or be disjoint
/// from all of them, and new data must fit in the device's memory ([`memory::check_room`]).
pub(crate) fn acquire(device: i64, start: usize, bytes: usize) -> Result<(), Error> {
    let device = device_key(device);
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if standing(&live, device, start, bytes)? == Standing::New {
        memory::check_room(device, bytes)?;
    }
    *live.entry((device, start, start + bytes)).or_insert(0) += 1;
    Ok(())
}

/// Checks the data a launch maps around itself (`(start, bytes)` of each plain `&T`/`&mut T`
/// argument, in order) as [`acquire`] checks a preload, without recording it: every range
/// inside a live one or disjoint from all, inside an earlier argument it overlaps, and the new
/// ones fitting in the device's memory together.
pub(crate) fn check_launch(
    device: i64,
    ranges: impl Iterator<Item = (usize, usize)>,
) -> Result<(), Error> {
    let device = device_key(device);
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut new = 0usize;
    // The launch maps its arguments in order: a later one must lie inside an earlier one it
    // overlaps (then it is present), or the runtime ends the process.
    let mut earlier: Vec<(usize, usize)> = Vec::new();
    for (start, bytes) in ranges {
        let end = start + bytes;
        for &(s, e) in &earlier {
            if s < end && start < e && !(s <= start && end <= e) {
                return Err(Error::OverlapsMapped { bytes });
            }
        }
        let inside_earlier = earlier.iter().any(|&(s, e)| s <= start && end <= e);
        earlier.push((start, end));
        if standing(&live, device, start, bytes)? == Standing::New && !inside_earlier {
            new = new.saturating_add(bytes);
        }
    }
    drop(live);
    memory::check_room(device, new)
}

/// Forgets one guard's range: the guard released it.
pub(crate) fn release(device: i64, start: usize, bytes: usize) {
    let device = device_key(device);
    let key = (device, start, start + bytes);
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = live.get_mut(&key) {
        *n -= 1;
        if *n == 0 {
            live.remove(&key);
        }
    }
}
