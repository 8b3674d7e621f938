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
    assert_eq!(drop_guard(&mut r, 100, 50, READ), Step::Runtime(Settle::Released((0, 100, 150))));
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
    assert_eq!(drop_guard(&mut r, 100, 8, WRITE), Step::Runtime(Settle::Released((0, 100, 108))));
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
