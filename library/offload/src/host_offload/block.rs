use corosensei::CoroutineResult;

use super::stack::{MAX_STACKS, Stack, Stacks};
use crate::gpu::imp::Wait;
use crate::gpu::warp::WARP_SIZE;
use crate::gpu::warp_imp::Warp;

/// What one system thread needs to run blocks in turn: a stack for the coroutine that runs
/// blocks' threads one after another, more for the threads of a block that wait for each
/// other, and the exchanges of the block's warps.
pub(super) struct InTurn {
    /// The stack of the coroutine of the threads in turn, and those for threads at once.
    pub(super) stacks: Stacks,
    /// How many of `stacks` are for threads at once: counted in [`HELD`].
    counted: usize,
    warps: Vec<Warp>,
    /// Whether a block's threads have run at once since the warps were cleared.
    used: bool,
}

/// Stacks for threads at once that the system threads running blocks hold, over the process
/// (`InTurn::counted` of each), kept within [`MAX_STACKS`]: with the room they wait for.
static HELD: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

impl Drop for InTurn {
    fn drop(&mut self) {
        let mut held = HELD.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *held -= self.counted;
        HELD.1.notify_all();
    }
}

impl InTurn {
    pub(super) fn new(members: usize) -> InTurn {
        // Where a kernel thread overflows its stack, the report runs on this one.
        super::stack::give_altstack();
        InTurn {
            stacks: Stacks::take(1),
            counted: 0,
            warps: vec![Warp::default(); members.div_ceil(WARP_SIZE)],
            used: false,
        }
    }

    /// Makes `stacks` (without the one in use by the threads in turn) `need` long, within
    /// [`MAX_STACKS`] over the process. Where there is no room, this thread gives back the
    /// stacks it holds and waits for room for all it needs: every thread that holds stacks
    /// either runs a block, which ends, or waits holding none, so the room comes.
    pub(super) fn grow(&mut self, need: usize) {
        let more = need.saturating_sub(self.stacks.0.len());
        if more == 0 {
            return;
        }
        let mut held = HELD.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if *held + more > MAX_STACKS {
            *held -= self.counted;
            self.counted = 0;
            HELD.1.notify_all();
            while *held > 0 && *held + need > MAX_STACKS {
                held = HELD.1.wait(held).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            drop(core::mem::replace(&mut self.stacks, Stacks(Vec::new())));
        }
        let more = need - self.stacks.0.len();
        *held += more;
        self.counted += more;
        drop(held);
        self.stacks.0.append(&mut Stacks::take(more).0);
    }

    /// Runs the blocks `take` hands out, of `block` threads each, after `enter` has set each
    /// one's index and memory, and says whether the threads of any of them waited for each
    /// other.
    ///
    /// The threads run one after another in CUDA's order, block after block, all in one
    /// coroutine, as plain calls. The first thread of a block that waits (at `sync_threads` or
    /// a warp operation) suspends that coroutine; the threads of its block before it have
    /// ended (a GPU's barrier does not wait for threads that have exited). That thread goes on
    /// in the coroutine it was in, and the block's later threads each in a coroutine of its
    /// own, all at once ([`run_block_at_once`]); the next blocks start in turn in a new
    /// coroutine.
    pub(super) fn run(
        &mut self,
        block: [usize; 3],
        take: &dyn Fn() -> Option<usize>,
        enter: impl Fn(usize),
        body: impl Fn(),
    ) -> bool {
        let mut any = false;
        loop {
            if self.used {
                self.warps.fill(Warp::default());
                self.used = false;
            }
            // A thread that waits at a warp operation has put in its warp's exchange first.
            crate::gpu::warp_imp::set_warps(self.warps.as_mut_ptr(), self.warps.len());
            let waited = core::cell::Cell::new(false);
            let in_turn = || {
                while let Some(i) = take() {
                    enter(i);
                    for z in 0..block[2] {
                        for y in 0..block[1] {
                            for x in 0..block[0] {
                                crate::gpu::imp::set_thread([x, y, z]);
                                body();
                                // The thread that waited has gone on alone from its wait: the
                                // rest of its block have run as coroutines of their own.
                                if waited.get() {
                                    return;
                                }
                            }
                        }
                    }
                }
            };
            let stack = self.stacks.0.pop().expect("a stack for the blocks' threads in turn");
            let mut thread = start_thread(stack, &in_turn);
            let result = thread.resume(());
            crate::gpu::imp::set_yielder(core::ptr::null());
            let CoroutineResult::Yield(wait) = result else {
                // Every block handed out has run.
                self.stacks.0.push(thread.into_stack());
                crate::gpu::warp_imp::set_warps(core::ptr::null_mut(), 0);
                return any;
            };
            waited.set(true);
            (self.used, any) = (true, true);
            let linear = crate::gpu::imp::linear_thread();
            let members = block.iter().product::<usize>();
            // A stack for each thread after it.
            self.grow(members - linear - 1);
            let rest = block_threads(block).enumerate().skip(linear);
            // `thread` borrows `in_turn`, which outlives it here: the block's threads all end
            // in `run_block_at_once`, or unwind with its panic.
            run_block_at_once(&mut self.stacks, &mut self.warps, rest, Some((thread, wait)), &body);
        }
    }
}

/// The threads of a block of `block` threads, x fastest.
fn block_threads(block: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    (0..block[2])
        .flat_map(move |z| (0..block[1]).flat_map(move |y| (0..block[0]).map(move |x| [x, y, z])))
}

/// Runs its closure when dropped.
pub(super) struct OnDrop<F: FnMut()>(pub(super) F);

impl<F: FnMut()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)()
    }
}

/// Emulated threads of blocks that run in turn, or one emulated thread of a block whose threads
/// run at once: a coroutine on the system thread that runs the block, which waits ([`Wait`]) by
/// suspending.
type Thread = corosensei::Coroutine<(), Wait, (), Stack>;

/// A thread that runs `body` on `stack`, not started.
fn start_thread(stack: Stack, body: &impl Fn()) -> Thread {
    let start = move |yielder: &crate::gpu::imp::Yielder, ()| {
        crate::gpu::imp::set_yielder(yielder);
        body();
    };
    // SAFETY: what `start` borrows (`body`) outlives the thread: every caller drives it to its
    // end, or drops it (unwinding it), before `body` goes.
    unsafe { corosensei::Coroutine::with_stack_unchecked(stack, start) }
}

/// Runs one block whose threads must run at once (one of them waits for the others in
/// `sync_threads` or a warp operation): each thread is a coroutine on this system thread, with
/// the index of the block set and its own set before each resume. `threads` are the block's threads not yet ended, with their linear indices;
/// `first`, where given, is the first of them, started already and waiting.
///
/// The threads are resumed in turn, in CUDA's order; each runs until it waits ([`Wait`]) or
/// ends. Then those that can go on are let go: the threads at `sync_threads` once every thread
/// of the block that has not ended is there (as PTX's `bar.sync`, a thread that returned early
/// does not hold the others), and the threads of a warp at a warp operation once every thread
/// of that warp that has not ended is at it. Threads that wait where nothing can let them go
/// (some of a warp at a warp operation while others are at `sync_threads`, which a GPU would
/// not finish either) end the launch with a panic naming them.
pub(super) fn run_block_at_once(
    stacks: &mut Stacks,
    warps: &mut [Warp],
    threads: impl Iterator<Item = (usize, [usize; 3])>,
    first: Option<(Thread, Wait)>,
    body: impl Fn(),
) {
    /// A thread of the block: its index, its warp, where it waits (`None`: it may run).
    struct Member {
        index: [usize; 3],
        warp: usize,
        waits: Option<Wait>,
        thread: Thread,
    }

    // A first thread started already has put in its warp's exchange.
    if first.is_none() {
        warps.fill(Warp::default());
    }
    crate::gpu::warp_imp::set_warps(warps.as_mut_ptr(), warps.len());
    // Cleared however this returns: a thread's panic comes out of its `resume`.
    let _reset = OnDrop(|| {
        crate::gpu::imp::set_yielder(core::ptr::null());
        crate::gpu::warp_imp::set_warps(core::ptr::null_mut(), 0);
    });
    let body = &body;
    let mut first = first;
    let mut running: Vec<Member> = threads
        .map(|(linear, index)| {
            let (thread, waits) = match first.take() {
                Some((thread, wait)) => (thread, Some(wait)),
                None => {
                    let stack = stacks.0.pop().expect("a stack for every thread of the block");
                    (start_thread(stack, body), None)
                }
            };
            Member { index, warp: linear / WARP_SIZE, waits, thread }
        })
        .collect();
    let mut ended = Vec::with_capacity(running.len());
    let mut warp_waits = vec![(0usize, 0usize); warps.len()];
    while !running.is_empty() {
        for member in running.iter_mut().filter(|m| m.waits.is_none()) {
            crate::gpu::imp::set_thread(member.index);
            let result = member.thread.resume(());
            crate::gpu::imp::set_yielder(core::ptr::null());
            if let CoroutineResult::Yield(wait) = result {
                member.waits = Some(wait);
            }
        }
        // Those that ended are out, and their stacks kept for the next block.
        ended.extend(running.extract_if(.., |m| m.thread.done()).map(|m| m.thread));
        // Who may go on: a warp all at a warp operation, or the block all at its barrier.
        // (threads that have not ended, those at a warp operation) of each warp. The lanes of
        // a warp let go together are at the same operation: each was let go from the one
        // before with the others, and a lane that waits at sync_threads holds its warp.
        warp_waits.fill((0, 0));
        for m in &running {
            warp_waits[m.warp].0 += 1;
            warp_waits[m.warp].1 += usize::from(m.waits == Some(Wait::Warp));
        }
        let block_ready = running.iter().all(|m| m.waits == Some(Wait::Block));
        let mut released = false;
        for m in &mut running {
            let (members, waiting) = warp_waits[m.warp];
            let go = match m.waits {
                Some(Wait::Block) => block_ready,
                Some(Wait::Warp) => waiting == members,
                None => false,
            };
            if go {
                m.waits = None;
                released = true;
            }
        }
        if !released && !running.is_empty() {
            // The first few of the threads that wait at `wait`, and how many more.
            let at = |wait: Wait| {
                let waiting: Vec<_> = running.iter().filter(|m| m.waits == Some(wait)).collect();
                let named = waiting.iter().take(8).map(|m| format!("{:?}", m.index));
                let mut list = named.collect::<Vec<_>>().join(" ");
                if waiting.len() > 8 {
                    list += &format!(" and {} more", waiting.len() - 8);
                }
                list
            };
            panic!(
                "offload: in the host-offload image the threads of a block wait where none can \
                 go on: at sync_threads {}; at a warp operation {} (every thread of a warp must \
                 reach each warp operation, and every thread of a block each sync_threads)",
                at(Wait::Block),
                at(Wait::Warp)
            );
        }
    }
    stacks.0.extend(ended.into_iter().map(Thread::into_stack));
}
