//! The marker functions ("intrinsics") the offload lowering rewrites.
//!
//! Host code never calls the runtime directly for mappings and launches: it calls these
//! declarations, which have no definition anywhere. `offload_codegen` finds every call of them
//! in the whole-program bitcode and replaces it with `__tgt_*` calls and their globals; a program
//! linked without that stage fails to link, naming the missing `__rust_offload_*` symbol.
//!
//! Every value the lowering needs to see as a constant (argument kinds) is a constant operand
//! after monomorphization, at any optimisation level.

/// Name of the preload marker: `(device: i64, ptr: *const u8, size: i64, kind: i64)`.
pub const PRELOAD: &str = "__rust_offload_preload";
/// Name of the release marker (the Drop of a preload guard), same operands as [`PRELOAD`].
pub const RELEASE: &str = "__rust_offload_release";
/// Name of the update marker: `(device: i64, ptr: *const u8, size: i64, direction: i64)`, a
/// copy between the host data and its present device copy, the mapping unchanged.
pub const UPDATE: &str = "__rust_offload_update";
/// Prefix of the per-kernel launch markers: `__rust_offload_launch.<kernel symbol>`.
///
/// Operands: `(device: i64, grid_x: i32, block_x: i32, then one (kind: i64, value: ptr,
/// size: i64) triple per kernel parameter slot)`; returns the runtime's `i32` status. The size
/// of a `MAP_TO`/`MAP_TO_FROM` slot is the bytes the launch's mappers map at `value`: the
/// data's, or 0 where the library has mapped that data already for the launch (overlapping
/// `&T` arguments, mapped as one range), which the runtime then finds inside that mapping
/// without a copy, as OpenMP maps a zero-length array section.
pub const LAUNCH_PREFIX: &str = "__rust_offload_launch.";

/// What a preload or release maps: the kind operand of [`PRELOAD`] and [`RELEASE`].
pub mod preload_kind {
    /// `Preload<T>`: copied in once, released without a copy back.
    pub const READ: i64 = 0;
    /// `PreloadMut<T>`: copied in once, copied back when released.
    pub const READ_WRITE: i64 = 1;
    /// Device memory alone, no copy either way: a launch's plain `&T`/`&mut T` on a GPU, whose
    /// copies the library makes on its own stream, around the kernel.
    pub const ALLOCATE: i64 = 2;
}

/// Which way an update copies: the direction operand of [`UPDATE`].
pub mod update_direction {
    /// Device to host (`PreloadMut::sync`).
    pub const FROM_DEVICE: i64 = 0;
    /// Host to device (`PreloadMut::update`).
    pub const TO_DEVICE: i64 = 1;
}

/// How one kernel parameter slot is passed: the kind operand of a launch marker triple.
pub mod arg_kind {
    /// A scalar passed by value in the slot (`LITERAL`).
    pub const LITERAL: i64 = 0;
    /// `&T` mapped around this one launch: copied in, not copied back.
    pub const MAP_TO: i64 = 1;
    /// `&mut T` mapped around this one launch: copied in and back.
    pub const MAP_TO_FROM: i64 = 2;
    /// A `Preload`/`PreloadMut`: already on the device, passed without copies.
    pub const PRESENT: i64 = 3;

    /// Whether a slot of this kind is data the launch maps around itself (`MAP_TO`,
    /// `MAP_TO_FROM`).
    #[inline(always)]
    pub const fn mapped_by_launch(kind: i64) -> bool {
        kind == MAP_TO || kind == MAP_TO_FROM
    }
}

#[cfg(not(offload_device))]
unsafe extern "C" {
    #[link_name = "__rust_offload_preload"]
    pub(crate) fn preload(device: i64, ptr: *const u8, size: i64, kind: i64);
    #[link_name = "__rust_offload_release"]
    pub(crate) fn release(device: i64, ptr: *const u8, size: i64, kind: i64);
    #[link_name = "__rust_offload_update"]
    pub(crate) fn update(device: i64, ptr: *const u8, size: i64, direction: i64);
}
