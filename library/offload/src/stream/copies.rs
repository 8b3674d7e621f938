//! The copies the library makes on its stream: those of a synchronous launch on a GPU (the data
//! of its plain `&T`/`&mut T` arguments, in before the kernel, `&mut T` back after it, one wait
//! for all, into device memory the launch allocated for them) and a guard's updates
//! (`updates`). The runtime's own mappers would copy each argument on a stream of theirs and
//! wait for each: three waits and a stream from their pool per argument, where clang's `target`
//! region waits once.
//!
//! Where `LIBOMPTARGET_INFO` asks for the runtime's data transfers (its 0x20 bit), each copy is
//! said on stderr in the runtime's words, so that what it reports stays the whole story.

use std::sync::OnceLock;

use crate::Error;
use crate::cuda::{Api, CuStream};

/// `OMP_INFOTYPE_DATA_TRANSFER`: the bit of `LIBOMPTARGET_INFO` that has libomptarget report
/// each copy.
const INFO_DATA_TRANSFER: u32 = 0x20;

/// Which way a copy goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    ToDevice,
    ToHost,
}

/// Enqueues one copy of `bytes` between host `host` and device address `device` on `stream`,
/// in the current context.
///
/// # Safety
/// The host data must be borrowed (mutably, for [`Direction::ToHost`]) until the stream has
/// finished the copy, and `device` must be memory of the current context mapped for it.
pub(super) unsafe fn enqueue(
    api: &Api,
    stream: CuStream,
    direction: Direction,
    host: *const u8,
    device: u64,
    bytes: usize,
) -> Result<(), Error> {
    if reported() {
        let way = match direction {
            Direction::ToDevice => "from host to device",
            Direction::ToHost => "from device to host",
        };
        // One write for the whole line: the runtime's reports of other threads' copies go to
        // the same stderr at any moment, and a line cut in pieces could merge with theirs.
        let line = format!(
            "offload info: Copying data {way} on the library's stream, HstPtr={host:p}, \
             TgtPtr={device:#x}, Size={bytes}\n"
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    // SAFETY: per the caller.
    unsafe {
        match direction {
            Direction::ToDevice => api.copy_to_device(device, host, bytes, stream),
            Direction::ToHost => api.copy_to_host(host.cast_mut(), device, bytes, stream),
        }
    }
}

/// Whether `LIBOMPTARGET_INFO` asks for copies to be reported (read once).
fn reported() -> bool {
    static REPORTED: OnceLock<bool> = OnceLock::new();
    *REPORTED.get_or_init(|| {
        std::env::var("LIBOMPTARGET_INFO").ok().and_then(|v| info_bits(&v)).unwrap_or(0)
            & INFO_DATA_TRANSFER
            != 0
    })
}

/// The variable's bits as libomptarget reads them: a decimal `int` (`-1`: every bit).
fn info_bits(value: &str) -> Option<u32> {
    value.trim().parse::<i32>().ok().map(|bits| bits as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_info_variable_is_read_as_the_runtime_reads_it() {
        assert_eq!(info_bits("34"), Some(34));
        assert_eq!(info_bits(" -1"), Some(u32::MAX));
        assert_eq!(info_bits("all"), None);
        assert_ne!(info_bits("34").unwrap() & INFO_DATA_TRANSFER, 0);
        assert_eq!(info_bits("2").unwrap() & INFO_DATA_TRANSFER, 0);
    }
}
