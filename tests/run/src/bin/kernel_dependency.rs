//! Kernels using a dependency of the package (`kernel-dependencies`): the particles of the
//! `support` crate advanced on the device by its `step`, with the feature the program enables
//! for it (`damped`), agree with the same steps on the host. One copy in, one out.
//@ run: 3 => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use support::Particle;

fn main() -> Result<(), offload::Error> {
    let steps: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let start: Vec<Particle> =
        (0..1000).map(|i| Particle { x: i as f32, v: (i % 7) as f32 - 3.0 }).collect();
    let mut device = start.clone();
    {
        let mut particles = offload::preload_mut(&mut device[..]);
        for _ in 0..steps {
            offload::launch!(kernels::advance, 4, 256, (0.25f32, &mut particles))?;
        }
    }
    let mut host = start;
    for p in &mut host {
        for _ in 0..steps {
            support::step(p, 0.25);
        }
    }
    assert_eq!(support::DAMPING, 0.5, "the program's feature did not reach the support crate");
    assert_eq!(device, host, "the kernels' steps differ from the program's");
    println!("ok: {} particles, {steps} steps", device.len());
    Ok(())
}
