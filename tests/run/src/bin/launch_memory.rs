//! Many synchronous launches with plain arguments of mixed sizes give back all the memory they
//! take: every launch's results are right, and the device memory in use does not grow. On a GPU
//! the launches' memory comes from the library's pool, which keeps up to 64 MiB of it mapped,
//! so the GPU's free memory after the launches is within that (and the driver's granularity) of
//! its level before them; on the host plugin, whose device memory is host memory, the resident
//! memory of the second half of the launches adds nothing to what the first half reached. Under
//! compute-sanitizer (`OFFLOAD_SANITIZER` set) the memory levels are the tool's as much as ours
//! and are not judged.
//! Each launch copies x and y in and y out.
//@ run: 4000 => h2d=8000 d2h=4000

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

/// The most the library's pool keeps, and slack for the driver's granularity.
const POOL_KEEPS: usize = 64 << 20;
const SLACK: usize = 8 << 20;

#[path = "../resident.rs"]
mod resident;
use resident::resident_kib;

fn main() -> Result<(), offload::Error> {
    let launches: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 1 << 14;
    let xs = vec![1.0f32; n];
    let mut ys = vec![0.0f32; n];
    // What each element should have: the number of launches that covered it.
    let mut covered = vec![0u32; n];
    let device = offload::Device::default_device().unwrap();
    let mut launch = |i: usize| -> Result<(), offload::Error> {
        let len = 1 + (i * 7919) % n;
        let start = i % 7;
        let end = len.max(start + 1);
        let blocks = (end - start).div_ceil(128) as u32;
        offload::launch!(
            kernels::saxpy,
            blocks,
            128,
            (1.0f32, &xs[start..end], &mut ys[start..end])
        )?;
        covered[start..end].iter_mut().for_each(|c| *c += 1);
        Ok(())
    };
    launch(0)?; // the device's start-up, outside the measure
    let gpu = device.memory();
    (1..launches / 2).try_for_each(&mut launch)?;
    let before = resident_kib();
    (launches / 2..launches).try_for_each(&mut launch)?;
    let after = resident_kib();
    for (i, (y, c)) in ys.iter().zip(&covered).enumerate() {
        assert_eq!(*y, *c as f32, "y[{i}]");
    }
    if let Ok(tool) = std::env::var("OFFLOAD_SANITIZER") {
        println!("ok: {launches} launches; memory not judged under {tool}");
        return Ok(());
    }
    assert!(after <= before + 2048, "resident memory grew from {before} KiB to {after} KiB");
    let mut memory = String::from("device memory is host memory here");
    if let Some(start) = gpu {
        let end = device.memory().unwrap();
        assert!(
            end.free + POOL_KEEPS + SLACK >= start.free,
            "GPU free memory fell from {} to {} bytes over the launches",
            start.free,
            end.free
        );
        memory = format!(
            "GPU free memory {} MiB before, {} MiB after",
            start.free >> 20,
            end.free >> 20
        );
    }
    println!(
        "ok: {launches} launches, resident after half {before} KiB, at the end {after} KiB; {memory}"
    );
    Ok(())
}
