//! Upstream's intrinsic forms (`core::intrinsics::offload` and its two companions), over this
//! crate's launch and devices: `offload::intrinsics` re-exports them.

use crate::launch::{Dim, Launch, SharedBytes};
use crate::{Device, Error};

/// Launches `kernel` (a function marked `#[offload::kernel]`, named as a value) with `args`, a
/// tuple of its arguments as `launch!` takes them: upstream's `core::intrinsics::offload`.
/// `device_id` -1 is the default device. Returns once the kernel has finished, or the
/// [`Error`] that stopped the launch (upstream's returns the kernel's `()`).
pub fn offload<K: Launch<A>, A>(
    kernel: fn() -> K,
    workgroup_dim: [u32; 3],
    thread_dim: [u32; 3],
    dyn_cache: u32,
    device_id: i32,
    args: A,
) -> Result<(), Error> {
    if device_id < -1 {
        return Err(Error::NegativeDevice { id: device_id.into() });
    }
    kernel().launch(
        device_id.into(),
        Dim::from(workgroup_dim),
        Dim::from(thread_dim),
        SharedBytes::from(dyn_cache),
        args,
    )
}

/// The runtime's devices, numbered from 0 (upstream's `offload_get_num_devices`): the GPUs,
/// then the host-offload plugin's devices (see [`Device::count`]).
pub fn offload_get_num_devices() -> i32 {
    i32::try_from(Device::count()).unwrap_or(i32::MAX)
}

/// Waits until every kernel launched asynchronously (`launch_async!`) has finished, on every
/// GPU: upstream's `offload_sync`, as [`synchronize`](crate::synchronize). Synchronous launches
/// have finished when they return.
pub fn offload_sync() -> Result<(), Error> {
    crate::synchronize()
}
