//! Asynchronous launches (`launch_async!`): kernels enqueued on a CUDA stream the library owns,
//! one per GPU, in the GPU's primary context (the one libomptarget's CUDA plugin uses, so the
//! device addresses of its mappings are valid there).
//!
//! Soundness rests on four facts (docs/GUIDE.md's "Asynchronous launches" has the whole argument):
//! 1. only present data (`Preload`/`PreloadMut` and their ranges) and scalars reach an
//!    asynchronous kernel (`PresentArg`), so a kernel touches device memory only, and only
//!    memory that a guard keeps mapped; the same holds of the work a vendor library enqueues
//!    on a lent stream (`foreign`: on live guards' `DevicePtr`s, per `CudaStream`'s contract),
//!    which is counted as a launch is, also when the closure that enqueues it unwinds;
//! 2. every library entry point that makes libomptarget touch a device first waits for that
//!    device's stream when a kernel may still run there ([`synchronize_pending`]): the end mapper
//!    of a guard's Drop, a preload and a synchronous launch never overlap our kernels, so a
//!    `PreloadMut` copies back the data the last kernel wrote; `sync`, `update` and their
//!    ranges copy on the stream itself (`updates`), behind the kernels, as `write_bytes` fills,
//!    and each host access to a guard's data waits first, so a copy in still reading it is done
//!    before the host writes;
//! 3. the device memory an asynchronous kernel (or a guard's queued fill, `write_bytes`) can
//!    reach is freed only by those end mappers; a leaked (`mem::forget`) guard leaves its
//!    mapping, and so the memory its kernels write, allocated for good. (A synchronous launch
//!    frees its own arguments' memory after its wait.)
//! 4. a copy in that `update` queued reads host memory until the stream reaches it. The guard's
//!    own host writes wait for it (`PreloadMut::host_settled`); a guard leaked right after ends
//!    the borrow first. From pageable memory the driver has staged the bytes before the enqueue
//!    returns; a `HostBuffer`'s pinned memory is freed only after `reclaim`'s wait. Pinned memory
//!    of other origin freed under the copy is the driver's to report, as a fault at the next wait.
//!
//! - `module`: the program's kernels as a CUDA module (PTX or cubin);
//! - `gpus`: each GPU's context, stream, memory pool and kernels;
//! - `enqueue`: the launches on a stream, and a synchronous launch's own argument memory;
//! - `copies`: that memory's copies in and back, reported as the runtime reports its own;
//! - `updates`: a guard's copies between launches (`sync`, `update`, their ranges) and its
//!   fills (`write_bytes`), in order with the kernels;
//! - `foreign`: work that vendor libraries enqueue on a stream, counted as launches are;
//! - `pending`: what may still run on each stream, and the waits.

mod copies;
mod enqueue;
mod foreign;
mod gpus;
mod module;
mod pending;
mod updates;

pub(crate) use copies::Direction;
pub use enqueue::Slot;
pub(crate) use enqueue::{launch_async, launch_sync};
pub(crate) use foreign::with_stream;
pub use gpus::cuda_module_source;
pub(crate) use gpus::{device_stream, trim_pool};
pub use module::{CudaImage, ModuleSource};
pub(crate) use pending::{exit_with, synchronize_pending, synchronize_pending_or_exit};
pub use pending::{pending_launches, synchronize};
pub(crate) use updates::{fill, update};
