//! Many preload/drop cycles of mixed sizes leave nothing behind: afterwards no range is still
//! mapped (the runtime's table is empty of them), and the host memory in use stops growing: the
//! second half of the cycles adds nothing to what the first half reached (the allocator's high
//! water mark for the mixed sizes, a few MiB on the host plugin, whose device memory is host
//! memory). On a GPU, the device's free memory is measured too: after the cycles it is back at
//! its level before them (within the driver's and the runtime's pools). Under compute-sanitizer
//! (`OFFLOAD_SANITIZER` set) the memory levels are the tool's as much as ours and are not judged;
//! the table still must be empty.
//! Every cycle copies in, and the mutable ones back (plus one warm-up copy in).
//@ run: 100000 => h2d=100001 d2h=50000

#[path = "../resident.rs"]
mod resident;
use resident::resident_kib;

/// Slack for the runtime's pool of small device buffers, which it keeps for reuse, and the
/// driver's allocation granularity.
const POOL_SLACK: usize = 8 << 20;

fn main() {
    let cycles: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let mut data = vec![0u64; 1 << 16];
    drop(offload::preload(&data[..1])); // the runtime's start-up, outside the measure
    let gpu = offload::Device::default_device().unwrap().memory();
    let mut cycle = |i: usize| {
        let len = 1 + (i * 7919) % data.len();
        if i.is_multiple_of(2) {
            drop(offload::preload(&data[..len]));
        } else {
            drop(offload::preload_mut(&mut data[i % 3..len.max(i % 3 + 1)]));
        }
    };
    (0..cycles / 2).for_each(&mut cycle);
    let before = resident_kib();
    (cycles / 2..cycles).for_each(&mut cycle);
    let after = resident_kib();
    for len in [1, 100, 1 << 15, 1 << 16] {
        let p = data[..len].as_ptr() as *const core::ffi::c_void;
        // SAFETY: a lookup in the runtime's table.
        let present = unsafe { offload::sys::omp_target_is_present(p, 0) };
        assert_eq!(present, 0, "a range of {len} elements is still mapped");
    }
    if let Ok(tool) = std::env::var("OFFLOAD_SANITIZER") {
        println!("ok: {cycles} cycles, the table empty; memory not judged under {tool}");
        return;
    }
    // 50,000 cycles leaking 40 bytes each would add 2 MiB; the allocator's own drift over the
    // second half stays near 1 MiB.
    assert!(after <= before + 2048, "resident memory grew from {before} KiB to {after} KiB");
    let mut device = String::from("device memory is host memory here");
    if let Some(start) = gpu {
        let end = offload::Device::default_device().unwrap().memory().unwrap();
        assert!(
            end.free + POOL_SLACK >= start.free,
            "GPU free memory fell from {} to {} bytes over the cycles",
            start.free,
            end.free
        );
        device = format!(
            "GPU free memory {} MiB before, {} MiB after",
            start.free >> 20,
            end.free >> 20
        );
    }
    println!(
        "ok: {cycles} cycles, resident after half {before} KiB, at the end {after} KiB; {device}"
    );
}
