//! The marker functions ("intrinsics") the offload lowering rewrites.
//!
//! Host code never calls the runtime directly for mappings and launches: it calls these
//! declarations, which have no definition anywhere. `offload_codegen` finds every call of them
//! in the whole-program bitcode and replaces it with `__tgt_*` calls and their globals; a program
//! linked without that stage fails to link, naming the missing `__rust_offload_*` symbol.
//!
//! Every value the lowering needs to see as a constant (argument kinds) is a constant operand
//! after monomorphization, at any optimisation level.

pub use offload_abi::intrinsics::{
    LAUNCH_PREFIX, PRELOAD, RELEASE, UPDATE, arg_kind, preload_kind, update_direction,
};

/// Upstream's intrinsic forms: `core::intrinsics::offload` becomes
/// `offload::intrinsics::offload`.
#[cfg(not(offload_device))]
pub use crate::upstream::{offload, offload_get_num_devices, offload_sync};

// The declarations' names are literals (a `link_name` must be); each is checked against the
// contract's constant.
const _: () = assert!(offload_abi::same(PRELOAD, "__rust_offload_preload"));
const _: () = assert!(offload_abi::same(RELEASE, "__rust_offload_release"));
const _: () = assert!(offload_abi::same(UPDATE, "__rust_offload_update"));

#[cfg(not(offload_device))]
unsafe extern "C" {
    #[link_name = "__rust_offload_preload"]
    pub(crate) fn preload(device: i64, ptr: *const u8, size: i64, kind: i64);
    #[link_name = "__rust_offload_release"]
    pub(crate) fn release(device: i64, ptr: *const u8, size: i64, kind: i64);
    #[link_name = "__rust_offload_update"]
    pub(crate) fn update(device: i64, ptr: *const u8, size: i64, direction: i64);
}
