//! The stacks of kernel threads that run as coroutines in the host-offload image: their size,
//! `OFFLOAD_HOST_STACK`, those kept between launches, and a message naming the size where a
//! kernel thread overflows one, instead of a bare segmentation fault.
//!
//! Each stack has a guard page below it (corosensei's `DefaultStack`), listed in a fixed table
//! while the stack is mapped. A handler of SIGSEGV and SIGBUS, installed with the first stack,
//! looks the faulting address up in the table: a guard page there is a kernel thread's overflow,
//! reported with the size and how to change it, and the process aborts, as on Rust's own
//! report of a stack overflow. Any other fault goes to the handler that was there before (Rust's,
//! which reports the overflow of a system thread's stack), or ends the process as the default
//! does. The handler runs on the thread's alternate signal stack: each system thread that runs
//! coroutines gets one where it has none (the image's copy of std gives its threads none).

use core::cell::Cell;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use corosensei::stack::{DefaultStack, StackPointer};

/// The stack of a kernel thread where `OFFLOAD_HOST_STACK` is not set.
const DEFAULT_SIZE: usize = 1 << 20;
/// The smallest `OFFLOAD_HOST_STACK` taken: a kernel thread runs the library's code too.
const MIN_SIZE: usize = 64 << 10;

/// Guard pages (their lowest address) of the stacks mapped now; 0 is a free slot. Stacks past
/// the table's size overflow with the bare fault.
static GUARDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
const SLOTS: usize = 1 << 14;
/// Where the search for a free slot starts: the slots in use stay packed at the low end.
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// One past the highest slot ever used: a fault's look-up reads no further.
static USED: AtomicUsize = AtomicUsize::new(0);
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// The handlers of SIGSEGV and SIGBUS before ours.
static PREVIOUS: [OnceLock<Previous>; 2] = [OnceLock::new(), OnceLock::new()];
/// What the handler writes, made before it is installed (a handler must not allocate).
static MESSAGE: OnceLock<String> = OnceLock::new();

/// A handler of a signal, as `sigaction` gave it.
struct Previous(libc::sigaction);

// SAFETY: plain data (an address, a mask, flags).
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

/// Bytes of a kernel thread's stack: `OFFLOAD_HOST_STACK` (bytes, or with `K`, `M` or `G`),
/// read once, else 1 MiB.
fn size() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        let Ok(value) = std::env::var("OFFLOAD_HOST_STACK") else { return DEFAULT_SIZE };
        match parse_size(&value) {
            Some(bytes) if bytes >= MIN_SIZE => bytes,
            _ => {
                eprintln!(
                    "offload: warning: OFFLOAD_HOST_STACK={value:?} is not a stack size of at least 64K (bytes, or a number with K, M or G); using 1M"
                );
                DEFAULT_SIZE
            }
        }
    })
}

/// `4096`, `512K`, `8M`, `1G` (binary multiples; `KiB`, `MiB`, `GiB` too) in bytes.
fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return None,
    };
    number.parse::<usize>().ok()?.checked_mul(1 << shift)
}

/// A kernel thread's stack: corosensei's, with its guard page in the table while it is mapped.
pub(super) struct Stack {
    inner: DefaultStack,
    slot: Option<usize>,
}

impl Stack {
    /// A stack of [`size`] bytes, the overflow handler installed.
    pub(crate) fn new() -> std::io::Result<Stack> {
        install();
        let inner = DefaultStack::new(size())?;
        let guard = corosensei::stack::Stack::limit(&inner).get();
        Ok(Stack { inner, slot: register(guard) })
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // Out of the table before `inner` unmaps it.
        if let Some(slot) = self.slot {
            GUARDS[slot].store(0, Ordering::Release);
            NEXT.fetch_min(slot, Ordering::Relaxed);
        }
    }
}

// SAFETY: the bounds of the stack corosensei mapped, guard page included.
unsafe impl corosensei::stack::Stack for Stack {
    #[inline]
    fn base(&self) -> StackPointer {
        self.inner.base()
    }

    #[inline]
    fn limit(&self) -> StackPointer {
        self.inner.limit()
    }
}

/// Puts `guard` in a free slot of the table; `None` where it is full.
fn register(guard: usize) -> Option<usize> {
    let start = NEXT.load(Ordering::Relaxed) % SLOTS;
    let slot = (0..SLOTS).map(|i| (start + i) % SLOTS).find(|&slot| {
        GUARDS[slot].compare_exchange(0, guard, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    })?;
    NEXT.store(slot + 1, Ordering::Relaxed);
    USED.fetch_max(slot + 1, Ordering::AcqRel);
    Some(slot)
}

/// Whether `address` lies in the guard page of a stack in the table.
fn in_guard(address: usize) -> bool {
    let page = PAGE.load(Ordering::Relaxed);
    GUARDS[..USED.load(Ordering::Acquire)].iter().any(|g| {
        let guard = g.load(Ordering::Acquire);
        guard != 0 && address >= guard && address - guard < page
    })
}

/// The system's page size.
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

/// Installs the handler of SIGSEGV and SIGBUS, once.
fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        PAGE.store(page_size(), Ordering::Relaxed);
        let kib = size() >> 10;
        let _ = MESSAGE.set(format!(
            "offload: error: a kernel thread overflowed its stack of {kib} KiB in the host-offload \
             image (keep large arrays out of kernel locals, or set OFFLOAD_HOST_STACK to more, \
             e.g. OFFLOAD_HOST_STACK={}M)\n",
            (kib >> 10).max(1) * 8
        ));
        for (i, signal) in [libc::SIGSEGV, libc::SIGBUS].into_iter().enumerate() {
            // SAFETY: `sigaction` installs ours, whose flags match its signature, and gives
            // the handler it replaces in the same call: one another thread installs meanwhile
            // is not lost. (Until the previous one is stored, a fault takes the default action.)
            unsafe {
                let mut action: libc::sigaction = core::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = core::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    let _ = PREVIOUS[i].set(Previous(old));
                }
            }
        }
    });
}

/// The handler: a kernel thread's overflow is reported, anything else goes on as before.
extern "C" fn on_fault(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel hands a valid `info` to an SA_SIGINFO handler.
    let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // A signal another process or `raise` sent (`si_code` <= 0) carries no faulting address.
    if code > 0 && in_guard(address) {
        let message = MESSAGE
            .get()
            .map_or("offload: error: a kernel thread overflowed its stack\n", String::as_str);
        // SAFETY: write and abort are async-signal-safe; the message is not freed meanwhile.
        unsafe {
            libc::write(2, message.as_ptr().cast(), message.len());
            libc::abort();
        }
    }
    let index = usize::from(signal == libc::SIGBUS);
    let previous = PREVIOUS[index].get().map(|p| &p.0);
    let handler = previous.map_or(libc::SIG_DFL, |p| p.sa_sigaction);
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // Ignored where it was sent; a fault, which cannot be ignored, ends the process.
        if handler == libc::SIG_DFL || code > 0 {
            // SAFETY: called from the handler of `signal`.
            unsafe { default_action(signal, code) };
        }
        return;
    }
    let Some(previous) = previous else { return };
    // The previous handler, called as the kernel would call it: with its mask, reset first
    // where it asked for that (SA_RESETHAND: its return then lets the fault end the process),
    // the signal left open to it where it asked (SA_NODEFER).
    // SAFETY: sigaction, pthread_sigmask and the call of a handler installed for this signal
    // with these flags (which say its signature) are what the kernel would do.
    unsafe {
        if previous.sa_flags & libc::SA_RESETHAND != 0 {
            reset_to_default(signal);
        }
        let mut mask = previous.sa_mask;
        let mut before: libc::sigset_t = core::mem::zeroed();
        if previous.sa_flags & libc::SA_NODEFER == 0 {
            libc::sigaddset(&mut mask, signal);
        } else {
            libc::sigdelset(&mut mask, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &mask, &mut before);
        if previous.sa_flags & libc::SA_NODEFER != 0 {
            let mut open: libc::sigset_t = core::mem::zeroed();
            libc::sigemptyset(&mut open);
            libc::sigaddset(&mut open, signal);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &open, core::ptr::null_mut());
        }
        if previous.sa_flags & libc::SA_SIGINFO != 0 {
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                core::mem::transmute(handler);
            handler(signal, info, context);
        } else {
            let handler: extern "C" fn(libc::c_int) = core::mem::transmute(handler);
            handler(signal);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, core::ptr::null_mut());
    }
}

/// The signal's default action: a fault comes again on return and ends the process; a signal
/// that was sent is sent again, to arrive once the handler returns.
///
/// # Safety
/// Called from the handler of `signal`.
unsafe fn default_action(signal: libc::c_int, code: libc::c_int) {
    // SAFETY: per the caller; raise is async-signal-safe.
    unsafe {
        reset_to_default(signal);
        if code <= 0 {
            libc::raise(signal);
        }
    }
}

/// Makes the default action `signal`'s.
///
/// # Safety
/// Called from the handler of `signal` (sigaction is async-signal-safe).
unsafe fn reset_to_default(signal: libc::c_int) {
    // SAFETY: an action of zeroes but its handler, SIG_DFL.
    unsafe {
        let mut action: libc::sigaction = core::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(signal, &action, core::ptr::null_mut());
    }
}

/// An alternate signal stack this library mapped for its thread, unmapped when the thread ends.
struct AltStack {
    map: *mut libc::c_void,
    len: usize,
    /// The inaccessible page at the mapping's start, below the stack.
    guard: usize,
}

impl Drop for AltStack {
    fn drop(&mut self) {
        // SAFETY: disables the thread's alternate stack only where it is still ours, then
        // unmaps what `give_altstack` mapped; where the thread runs on it (it ends from a
        // signal handler), it is left mapped.
        unsafe {
            let mut current: libc::stack_t = core::mem::zeroed();
            if libc::sigaltstack(core::ptr::null(), &mut current) != 0
                || current.ss_flags & libc::SS_ONSTACK != 0
            {
                return;
            }
            if current.ss_sp == self.map.wrapping_byte_add(self.guard) {
                let off = libc::stack_t {
                    ss_sp: core::ptr::null_mut(),
                    ss_flags: libc::SS_DISABLE,
                    ss_size: 0,
                };
                libc::sigaltstack(&off, core::ptr::null_mut());
            }
            libc::munmap(self.map, self.len);
        }
    }
}

/// Bytes of an alternate signal stack this library maps: the handler, or Rust's after it.
const ALT_STACK: usize = 64 << 10;

/// Gives this system thread an alternate signal stack where it has none, so that the overflow
/// of a coroutine's stack can be reported; once per thread.
pub(super) fn give_altstack() {
    thread_local! {
        static CHECKED: Cell<bool> = const { Cell::new(false) };
        static OURS: Cell<Option<AltStack>> = const { Cell::new(None) };
    }
    if CHECKED.get() {
        return;
    }
    CHECKED.set(true);
    // SAFETY: reads the thread's alternate stack; where there is none, maps one (left
    // inaccessible where the mapping fails) and installs it for this thread alone.
    unsafe {
        let mut current: libc::stack_t = core::mem::zeroed();
        if libc::sigaltstack(core::ptr::null(), &mut current) != 0
            || current.ss_flags & libc::SS_DISABLE == 0
        {
            return;
        }
        // A guard page below it, as below every stack: a handler that overflows it faults.
        let guard = page_size();
        let len = ALT_STACK + guard;
        let map = libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if map == libc::MAP_FAILED {
            return;
        }
        let sp = map.wrapping_byte_add(guard);
        let stack = libc::stack_t { ss_sp: sp, ss_flags: 0, ss_size: ALT_STACK };
        if libc::mprotect(sp, ALT_STACK, libc::PROT_READ | libc::PROT_WRITE) != 0
            || libc::sigaltstack(&stack, core::ptr::null_mut()) != 0
        {
            libc::munmap(map, len);
            return;
        }
        OURS.set(Some(AltStack { map, len, guard }));
    }
}

/// Stacks kept between launches, at most this many.
const KEPT_STACKS: usize = 2048;

/// Stacks for threads of blocks at once mapped at the most, over the process (a stack for each
/// thread of each block whose threads run at once): each stack is two of the process's memory
/// mappings (its guard page), of which Linux allows 65530 by default.
pub(super) const MAX_STACKS: usize = 8192;

/// Stacks for the coroutines of one system thread's blocks, taken from those kept between
/// launches (mapping a stack is a system call) and given back when dropped.
pub(super) struct Stacks(pub(super) Vec<Stack>);

static KEPT: std::sync::Mutex<Vec<Stack>> = std::sync::Mutex::new(Vec::new());

impl Stacks {
    pub(super) fn take(n: usize) -> Stacks {
        let mut kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let from = kept.len().saturating_sub(n);
        let mut stacks = kept.split_off(from);
        drop(kept);
        while stacks.len() < n {
            match Stack::new() {
                Ok(stack) => stacks.push(stack),
                Err(e) => panic!(
                    "offload: the host-offload image could not map a stack for a thread of a \
                     block ({e}): launch smaller blocks, or set OFFLOAD_HOST_THREADS or \
                     OFFLOAD_HOST_STACK lower"
                ),
            }
        }
        Stacks(stacks)
    }
}

impl Drop for Stacks {
    fn drop(&mut self) {
        let mut kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let room = KEPT_STACKS.saturating_sub(kept.len());
        kept.extend(self.0.drain(..).take(room));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_bytes_or_binary_multiples() {
        assert_eq!(parse_size("65536"), Some(65536));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size(" 8m "), Some(8 << 20));
        assert_eq!(parse_size("2MiB"), Some(2 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("8 M"), Some(8 << 20));
        assert_eq!(parse_size("M"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("1.5M"), None);
        assert_eq!(parse_size("8T"), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    #[test]
    fn a_thread_without_an_alternate_stack_gets_one() {
        // A thread of this test binary has one from std: it is turned off first.
        std::thread::spawn(|| {
            // SAFETY: turns this thread's alternate stack off, then reads it.
            unsafe {
                let off = libc::stack_t {
                    ss_sp: core::ptr::null_mut(),
                    ss_flags: libc::SS_DISABLE,
                    ss_size: 0,
                };
                assert_eq!(libc::sigaltstack(&off, core::ptr::null_mut()), 0);
                give_altstack();
                let mut now: libc::stack_t = core::mem::zeroed();
                assert_eq!(libc::sigaltstack(core::ptr::null(), &mut now), 0);
                assert_eq!(now.ss_flags & libc::SS_DISABLE, 0);
                assert_eq!(now.ss_size, ALT_STACK);
                // Once per thread: the same one after a second call.
                give_altstack();
                let mut again: libc::stack_t = core::mem::zeroed();
                libc::sigaltstack(core::ptr::null(), &mut again);
                assert_eq!(again.ss_sp, now.ss_sp);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_stack_is_in_the_table_while_it_is_mapped() {
        let stack = Stack::new().expect("a stack");
        let guard = corosensei::stack::Stack::limit(&stack).get();
        assert!(in_guard(guard));
        assert!(in_guard(guard + PAGE.load(Ordering::Relaxed) - 1));
        assert!(!in_guard(guard + PAGE.load(Ordering::Relaxed)));
        drop(stack);
        assert!(!in_guard(guard));
    }
}
