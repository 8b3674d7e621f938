//! The ranges live guards keep mapped, so that a preload the runtime would refuse by ending the
//! process (a range that partly overlaps a mapping, or encloses one: libomptarget 19's "explicit
//! extension") is an `Error` instead.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::Error;

/// `(device, start, end) -> guards` of every range a guard mapped and has not released. A
/// leaked guard's range stays, as its mapping does in the runtime.
static LIVE: Mutex<BTreeMap<(i64, usize, usize), usize>> = Mutex::new(BTreeMap::new());

/// Records a guard's range `start..start + bytes` on `device`, or refuses one the runtime
/// cannot map: it must lie inside a live range (the runtime finds it present) or be disjoint
/// from all of them.
pub(crate) fn acquire(device: i64, start: usize, bytes: usize) -> Result<(), Error> {
    let end = start + bytes;
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut overlaps = false;
    let mut inside = false;
    for &(_, s, e) in live.range((device, 0, 0)..(device, end, 0)).map(|(k, _)| k) {
        if e > start {
            overlaps = true;
            inside |= s <= start && end <= e;
        }
    }
    if overlaps && !inside {
        return Err(Error::OverlapsMapped { bytes });
    }
    *live.entry((device, start, end)).or_insert(0) += 1;
    Ok(())
}

/// Forgets one guard's range: the guard released it.
pub(crate) fn release(device: i64, start: usize, bytes: usize) {
    let key = (device, start, start + bytes);
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = live.get_mut(&key) {
        *n -= 1;
        if *n == 0 {
            live.remove(&key);
        }
    }
}
