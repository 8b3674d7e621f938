//! Shared by the run tests' program and their kernels (`kernel-dependencies` in the package's
//! manifest): the same type and the same arithmetic on both sides.

#![no_std]

/// A particle on a line.
#[derive(Clone, Copy, Debug, PartialEq, offload::DeviceCopy)]
#[repr(C)]
pub struct Particle {
    pub x: f32,
    pub v: f32,
}

/// Damping of the velocity per step, where the `damped` feature is on.
#[cfg(feature = "damped")]
pub const DAMPING: f32 = 0.5;
#[cfg(not(feature = "damped"))]
pub const DAMPING: f32 = 1.0;

/// One step of `dt`: the position moves by the velocity, then the velocity is damped.
pub fn step(p: &mut Particle, dt: f32) {
    p.x += p.v * dt;
    p.v *= DAMPING;
}
