//! A launch's geometry, as the host program hands it to the kernels' entry points: compiled
//! into the program and into the device images alike, which must agree on it.

/// A launch's shape, checked: blocks in the grid and threads in a block, along x, y and z, and
/// the bytes of shared memory each block gets.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
}

impl Geometry {
    /// Blocks in all (below 2^31, checked): the runtime's number of teams.
    #[inline(always)]
    pub fn blocks(&self) -> i32 {
        (self.grid[0] * self.grid[1] * self.grid[2]) as i32
    }

    /// Threads in a block (at most 1024, checked): the runtime's thread limit.
    #[inline(always)]
    pub fn threads(&self) -> i32 {
        (self.block[0] * self.block[1] * self.block[2]) as i32
    }

    /// The hidden geometry slot of a launch of this geometry ([`geometry_slot`]): along x,
    /// constants; along y or z, this geometry's address, which must outlive the launch.
    #[inline(always)]
    pub fn slot(&self) -> *const u8 {
        geometry_slot(self)
    }

    /// Whether libomptarget 19's own launch can make it: along x only, without shared memory.
    #[inline(always)]
    pub fn is_linear(&self) -> bool {
        self.grid[1] == 1
            && self.grid[2] == 1
            && self.block[1] == 1
            && self.block[2] == 1
            && self.shared == 0
    }
}

/// Set in the geometry slot of a launch along y or z, or with shared memory: the rest is the
/// address of its [`Geometry`].
const GEOMETRY_AT: u64 = 1 << 63;

/// The hidden first slot of every kernel: the geometry the host-offload image loops over. A
/// launch along x without shared memory holds it in the slot (threads per block in the high
/// half, blocks in the low one), so that it is a constant; another holds the address of
/// `geometry` with the top bit set, which the image reads while the (synchronous) launch lasts.
/// The nvptx entries ignore it.
#[inline(always)]
pub(crate) fn geometry_slot(geometry: &Geometry) -> *const u8 {
    if geometry.is_linear() {
        let word = (geometry.block[0] as u64) << 32 | geometry.grid[0] as u64;
        return core::ptr::without_provenance(word as usize);
    }
    let at = (geometry as *const Geometry).expose_provenance() as u64;
    core::ptr::without_provenance((at | GEOMETRY_AT) as usize)
}

/// The geometry a slot of [`geometry_slot`] names.
///
/// # Safety
/// `slot` must be what `geometry_slot` made of a geometry that is still alive.
#[cfg(not(target_arch = "nvptx64"))]
#[inline]
pub(crate) unsafe fn geometry_in(slot: u64) -> Geometry {
    if slot & GEOMETRY_AT == 0 {
        let (grid, block) = (slot as u32, (slot >> 32) as u32);
        return Geometry { grid: [grid, 1, 1], block: [block, 1, 1], shared: 0 };
    }
    let at = core::ptr::with_exposed_provenance::<Geometry>((slot & !GEOMETRY_AT) as usize);
    // SAFETY: the caller's.
    unsafe { *at }
}
