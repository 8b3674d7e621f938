//! What may still run on each GPU's stream, and the waits for it.
//!
//! Pending work is tracked per GPU by two counters instead of one flag, so that threads
//! launching and waiting at once never lose a pending kernel: `LAUNCHED` counts work enqueued
//! (incremented after the driver took it), `SYNCED` the highest count a stream synchronisation
//! has covered. `SYNCED >= LAUNCHED` means nothing enqueued is still running.

use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::cuda::{Api, CuContext, CuStream};
use crate::{Error, rt};

/// GPUs the library's streams serve (CUDA ordinals below it). Launches on others go through
/// libomptarget's own launch, synchronously, and along x only (`gpus::cuda_ordinal`).
pub(super) const MAX_GPUS: usize = 64;
// `beyond_table`'s message names the number.
const _: () = assert!(MAX_GPUS == 64);

/// A GPU's stream, as the waits need it.
struct Waited {
    api: &'static Api,
    context: CuContext,
    stream: CuStream,
    /// Whether waits sleep (`Api::waits_block`).
    blocking: bool,
}

// SAFETY: driver handles may be used from any thread.
unsafe impl Send for Waited {}
unsafe impl Sync for Waited {}

static STREAMS: [OnceLock<Waited>; MAX_GPUS] = [const { OnceLock::new() }; MAX_GPUS];
static LAUNCHED: [AtomicU64; MAX_GPUS] = [const { AtomicU64::new(0) }; MAX_GPUS];
static SYNCED: [AtomicU64; MAX_GPUS] = [const { AtomicU64::new(0) }; MAX_GPUS];
/// Set by the first work enqueued on any GPU's stream (a launch of either kind): until then no
/// entry point pays more than this load.
static ANY_LAUNCHED: AtomicBool = AtomicBool::new(false);

/// One more than the highest ordinal of a GPU opened: the waits look at these GPUs only.
static OPENED: AtomicUsize = AtomicUsize::new(0);

/// GPU `ordinal`'s stream, just created, before any launch on it is counted: a wait that sees
/// the count sees the stream.
pub(super) fn opened(
    ordinal: usize,
    api: &'static Api,
    context: CuContext,
    stream: CuStream,
    blocking: bool,
) {
    let _ = STREAMS[ordinal].set(Waited { api, context, stream, blocking });
    OPENED.fetch_max(ordinal + 1, Ordering::AcqRel);
    register_exit_synchronization();
}

/// Counts work just enqueued on GPU `ordinal`'s stream: a wait that sees the count covers it.
pub(super) fn count_enqueued(ordinal: usize) {
    LAUNCHED[ordinal].fetch_add(1, Ordering::Release);
    ANY_LAUNCHED.store(true, Ordering::Release);
}

/// Waits for the kernels enqueued on GPU `ordinal`'s stream, if any may still run.
pub(super) fn synchronize_ordinal(ordinal: usize) -> Result<(), Error> {
    let launched = LAUNCHED[ordinal].load(Ordering::Acquire);
    if SYNCED[ordinal].load(Ordering::Acquire) >= launched {
        return Ok(());
    }
    // Covers every kernel counted in `launched`: each was enqueued before its count.
    wait_stream(ordinal)?;
    SYNCED[ordinal].fetch_max(launched, Ordering::AcqRel);
    Ok(())
}

/// Waits for everything enqueued on GPU `ordinal`'s stream so far, counted or not (a
/// launch's frees into the pool come after its wait); nothing where the GPU is not opened.
pub(super) fn wait_stream(ordinal: usize) -> Result<(), Error> {
    let Some(waited) = STREAMS[ordinal].get() else { return Ok(()) };
    waited.api.synchronize(waited.context, waited.stream, waited.blocking)
}

/// Waits for the library's stream of runtime device `device` (-1: the default) when an
/// asynchronous kernel may still run there. Every entry point that makes libomptarget touch a
/// device calls this first; until a kernel is launched on a GPU's stream (asynchronously, or
/// synchronously with the library's launch) it pays one atomic load and a branch (the rest is
/// out of line), and after, a look at the counters.
#[inline(always)]
pub(crate) fn synchronize_pending(device: i64) -> Result<(), Error> {
    if enqueued_any() { synchronize_device(device) } else { Ok(()) }
}

/// [`synchronize_pending`] for entry points that cannot return an error (a guard's Drop,
/// `PreloadMut::sync`/`update`): a failed synchronisation means a kernel faulted and the
/// device's data is lost, so the process ends with the driver's message, as libomptarget 19
/// itself ends it when a synchronous kernel faults. Going on would copy back garbage.
#[inline(always)]
pub(crate) fn synchronize_pending_or_exit(device: i64) {
    if enqueued_any() {
        synchronize_device_or_exit(device)
    }
}

#[cold]
#[inline(never)]
fn synchronize_device(device: i64) -> Result<(), Error> {
    // Nothing queued anywhere (the steady state between batches of asynchronous launches):
    // done without asking the runtime which device is the default.
    let pending =
        |o: usize| SYNCED[o].load(Ordering::Acquire) < LAUNCHED[o].load(Ordering::Acquire);
    if !(0..OPENED.load(Ordering::Acquire)).any(pending) {
        return Ok(());
    }
    let Ok(device) = rt::resolve_device(device) else { return Ok(()) };
    match usize::try_from(device).ok().and_then(rt::gpu_ordinal) {
        Some(ordinal) if ordinal < MAX_GPUS => synchronize_ordinal(ordinal),
        _ => Ok(()),
    }
}

#[cold]
#[inline(never)]
fn synchronize_device_or_exit(device: i64) {
    if let Err(e) = synchronize_device(device) {
        exit_with(e)
    }
}

/// Ends the process with `e`'s message: what an entry point that cannot return the error (a
/// guard's Drop, `sync`, `update`) does when the device failed, since going on would copy back
/// lost data.
#[cold]
pub(crate) fn exit_with(e: Error) -> ! {
    eprintln!("offload: error: {e}");
    std::process::abort()
}

/// Whether anything was ever enqueued on a GPU's stream (until then nothing can be pending).
#[inline(always)]
fn enqueued_any() -> bool {
    ANY_LAUNCHED.load(Ordering::Acquire)
}

/// How many asynchronous launches, guard copies and fills no synchronisation has covered yet,
/// on every GPU (0 on the host-offload plugin, where a launch runs at once). For tests of what
/// waits and what does not.
pub fn pending_launches() -> u64 {
    (0..OPENED.load(Ordering::Acquire))
        .map(|o| {
            LAUNCHED[o].load(Ordering::Acquire).saturating_sub(SYNCED[o].load(Ordering::Acquire))
        })
        .sum()
}

/// Waits until every kernel launched asynchronously, on every GPU, has finished, and the copies
/// and fills guards queued there.
pub fn synchronize() -> Result<(), Error> {
    let mut first_error = Ok(());
    for ordinal in 0..OPENED.load(Ordering::Acquire) {
        if let Err(e) = synchronize_ordinal(ordinal) {
            first_error = first_error.and(Err(e));
        }
    }
    first_error
}

/// Runs at exit, before the runtime's unregistration (registered after it, so called before
/// it): no kernel may still write memory that the runtime frees at exit.
fn register_exit_synchronization() {
    extern "C" fn at_exit() {
        if let Err(e) = synchronize() {
            // A kernel faulted and nothing waited for it before: the program's results are
            // incomplete, so it must not exit with success.
            eprintln!("offload: error: at exit: {e}");
            std::process::abort();
        }
    }
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: registers a function with the C library; it runs once at exit.
        unsafe { libc::atexit(at_exit) };
    });
}
