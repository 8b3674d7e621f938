//! `Region`: upstream's safe way to give each thread of a launch its own part of a `&mut`
//! buffer. A region is a slice bound to a [`PartitioningStrategy`], which says which part each
//! thread reaches; a kernel takes it as a parameter (`r: Region<'_, f32, Linear1D>`) and each
//! thread asks for its part with [`Region::get_mut`], which needs no `unsafe` and cannot race.
//!
//! The launch maps a region as a `&mut [T]` (in, and back out); `&mut PreloadMut<[T]>` and
//! `&mut PresentSliceMut<T>` go to a `Region` parameter too, already on the device. Before
//! anything is copied the launch asks the strategy's [`check_launch`] whether its parts stay
//! disjoint over the launch's grid, and a refusal is [`Error::Partition`](crate::Error), where
//! upstream panics.
//!
//! [`check_launch`]: PartitioningStrategy::check_launch

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// Why a partitioning strategy refuses a launch ([`PartitioningStrategy::check_launch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchError {
    message: &'static str,
}

impl LaunchError {
    /// A refusal saying `message`.
    pub const fn new(message: &'static str) -> Self {
        LaunchError { message }
    }

    /// What the strategy said.
    pub fn message(&self) -> &'static str {
        self.message
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl std::error::Error for LaunchError {}

/// How the threads of a launch share a [`Region`]: which part of it each thread reaches.
///
/// # Safety
/// `get` and `get_mut` hand out parts within the `len` elements they are given, whatever the
/// calling thread's indices and whatever `len` is (a region is also used outside any launch:
/// on the host, or made in a kernel), checking bounds themselves. For every launch geometry
/// `check_launch` accepts, the parts `get_mut` hands two different threads are disjoint, and
/// the part `get` hands a thread is disjoint from every other thread's `get_mut` part: then no
/// thread reads what another writes, and `Region` is safe. A strategy that accepts a launch
/// whose threads would share a part is unsound.
pub unsafe trait PartitioningStrategy {
    /// What [`Region::get`] hands a thread.
    type View<'a, T: 'a>;
    /// What [`Region::get_mut`] hands a thread.
    type ViewMut<'a, T: 'a>;

    /// The calling thread's index into the region (its first element, for most strategies).
    fn index() -> usize;

    /// The calling thread's read-only part of the `len` elements at `ptr`, if it has one.
    ///
    /// # Safety
    /// `ptr` and `len` describe a live slice; within a launch, one that `check_launch`
    /// accepted.
    unsafe fn get<'a, T>(ptr: NonNull<T>, len: usize) -> Option<Self::View<'a, T>>;

    /// The calling thread's part of the `len` elements at `ptr`, if it has one.
    ///
    /// # Safety
    /// As [`get`](PartitioningStrategy::get), and the slice is borrowed mutably.
    unsafe fn get_mut<'a, T>(ptr: NonNull<T>, len: usize) -> Option<Self::ViewMut<'a, T>>;

    /// Whether a launch of `grid` blocks of `block` threads (along x, y and z) over a region of
    /// `len` elements keeps the threads' parts disjoint. The launch calls it before anything is
    /// copied, for every region argument.
    fn check_launch(len: usize, grid: [u32; 3], block: [u32; 3]) -> Result<(), LaunchError>;
}

/// The data a [`Region`] is made from: a mutable slice or array.
#[derive(Debug)]
pub struct RawRegion<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> From<&'a mut [T]> for RawRegion<'a, T> {
    fn from(data: &'a mut [T]) -> Self {
        RawRegion { len: data.len(), ptr: NonNull::from(data).cast(), _borrow: PhantomData }
    }
}

impl<'a, T, const N: usize> From<&'a mut [T; N]> for RawRegion<'a, T> {
    fn from(data: &'a mut [T; N]) -> Self {
        RawRegion::from(&mut data[..])
    }
}

/// A mutable slice bound to a [`PartitioningStrategy`]: in a kernel, each thread reaches its
/// own part of it, safely ([`get_mut`](Region::get_mut)).
pub struct Region<'a, T, S: PartitioningStrategy> {
    ptr: NonNull<T>,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
    _strategy: PhantomData<fn() -> S>,
}

impl<'a, T, S: PartitioningStrategy> Region<'a, T, S> {
    /// A region over `data`, a `&mut [T]` or `&mut [T; N]`.
    pub fn new<D: Into<RawRegion<'a, T>>>(data: D) -> Self {
        let raw = data.into();
        Region { ptr: raw.ptr, len: raw.len, _borrow: PhantomData, _strategy: PhantomData }
    }

    /// A kernel's region parameter, from its slots.
    ///
    /// # Safety
    /// `ptr` and `len` describe a slice that the launch lends the kernel mutably, and the
    /// launch's geometry passed `S::check_launch`.
    #[inline(always)]
    pub(crate) unsafe fn from_raw_parts(ptr: NonNull<T>, len: usize) -> Self {
        Region { ptr, len, _borrow: PhantomData, _strategy: PhantomData }
    }

    /// The calling thread's read-only part, if it has one (outside a kernel: the part of the
    /// one thread of a one-block launch).
    #[inline(always)]
    pub fn get(&self) -> Option<S::View<'_, T>> {
        // SAFETY: the region is a live slice; in a kernel, the launch checked the geometry.
        unsafe { S::get(self.ptr, self.len) }
    }

    /// The calling thread's part, if it has one.
    #[inline(always)]
    pub fn get_mut(&mut self) -> Option<S::ViewMut<'_, T>> {
        // SAFETY: as in `get`, and `&mut self` keeps the thread's other views away.
        unsafe { S::get_mut(self.ptr, self.len) }
    }

    /// Whether a launch of this geometry may take the region: the strategy's
    /// [`check_launch`](PartitioningStrategy::check_launch), which every launch calls.
    pub fn check_launch(&self, grid: [u32; 3], block: [u32; 3]) -> Result<(), LaunchError> {
        S::check_launch(self.len, grid, block)
    }

    /// The same region, for a shorter borrow: a region passed to one launch is moved into it,
    /// so a loop of launches passes `region.reborrow()`.
    pub fn reborrow(&mut self) -> Region<'_, T, S> {
        Region { ptr: self.ptr, len: self.len, _borrow: PhantomData, _strategy: PhantomData }
    }

    /// Elements in the region.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first element's address, for the launch.
    #[cfg(not(offload_device))]
    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }
}

impl<T, S: PartitioningStrategy> fmt::Debug for Region<'_, T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Region").field("len", &self.len).finish_non_exhaustive()
    }
}

/// One element per thread along x: thread `global_id_x()` gets element `global_id_x()`. Only
/// launches along x are accepted (a second thread with the same x would share its element).
#[derive(Debug, Clone, Copy)]
pub struct Linear1D;

// SAFETY: along x alone, global x indices are distinct, and so are the elements.
unsafe impl PartitioningStrategy for Linear1D {
    type View<'a, T: 'a> = &'a T;
    type ViewMut<'a, T: 'a> = &'a mut T;

    #[inline(always)]
    fn index() -> usize {
        crate::gpu::global_id_x()
    }

    #[inline(always)]
    unsafe fn get<'a, T>(ptr: NonNull<T>, len: usize) -> Option<&'a T> {
        let i = Self::index();
        // SAFETY: `i < len`, in the caller's live slice.
        (i < len).then(|| unsafe { &*ptr.as_ptr().add(i) })
    }

    #[inline(always)]
    unsafe fn get_mut<'a, T>(ptr: NonNull<T>, len: usize) -> Option<&'a mut T> {
        let i = Self::index();
        // SAFETY: as in `get`; no other thread has index `i` (`check_launch`).
        (i < len).then(|| unsafe { &mut *ptr.as_ptr().add(i) })
    }

    fn check_launch(_len: usize, grid: [u32; 3], block: [u32; 3]) -> Result<(), LaunchError> {
        if grid[1..] != [1, 1] || block[1..] != [1, 1] {
            return Err(LaunchError::new(
                "Linear1D gives each thread the element of its x index, so the launch must be \
                 along x alone (grid and block of [n, 1, 1]); use Linear2D for a 2D launch",
            ));
        }
        Ok(())
    }
}

/// One element per thread of a 2D launch over rows of `W` elements: thread (x, y) gets element
/// `y * W + x`. The launch must have at most `W` threads along x, and be flat along z.
#[derive(Debug, Clone, Copy)]
pub struct Linear2D<const W: usize>;

impl<const W: usize> Linear2D<W> {
    /// The calling thread's element, if it has one: `y * W + x`, for `x` below `W` and an
    /// index that neither overflows nor reaches `len`.
    #[inline(always)]
    fn cell(len: usize) -> Option<usize> {
        let (x, y) = (crate::gpu::global_id_x(), crate::gpu::global_id_y());
        let i = y.checked_mul(W)?.checked_add(x)?;
        (x < W && i < len).then_some(i)
    }
}

// SAFETY: with x below `W`, z flat and no overflow (`cell`), (x, y) -> y * W + x is
// one-to-one.
unsafe impl<const W: usize> PartitioningStrategy for Linear2D<W> {
    type View<'a, T: 'a> = &'a T;
    type ViewMut<'a, T: 'a> = &'a mut T;

    #[inline(always)]
    fn index() -> usize {
        crate::gpu::global_id_y().wrapping_mul(W).wrapping_add(crate::gpu::global_id_x())
    }

    #[inline(always)]
    unsafe fn get<'a, T>(ptr: NonNull<T>, len: usize) -> Option<&'a T> {
        let i = Self::cell(len)?;
        // SAFETY: `i < len`, in the caller's live slice.
        Some(unsafe { &*ptr.as_ptr().add(i) })
    }

    #[inline(always)]
    unsafe fn get_mut<'a, T>(ptr: NonNull<T>, len: usize) -> Option<&'a mut T> {
        let i = Self::cell(len)?;
        // SAFETY: as in `get`; no other thread has index `i` (`check_launch`).
        Some(unsafe { &mut *ptr.as_ptr().add(i) })
    }

    fn check_launch(_len: usize, grid: [u32; 3], block: [u32; 3]) -> Result<(), LaunchError> {
        if W == 0 {
            return Err(LaunchError::new("Linear2D's rows must have at least one element"));
        }
        if grid[2] != 1 || block[2] != 1 {
            return Err(LaunchError::new(
                "Linear2D partitions along x and y: the launch must be flat along z",
            ));
        }
        // Threads at x >= W get nothing (`get_mut` checks x), so a wider grid is fine; the
        // indices of the others are distinct.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear1d_refuses_launches_beyond_x() {
        assert!(Linear1D::check_launch(8, [2, 1, 1], [4, 1, 1]).is_ok());
        assert!(Linear1D::check_launch(8, [2, 2, 1], [4, 1, 1]).is_err());
        assert!(Linear1D::check_launch(8, [2, 1, 1], [4, 1, 2]).is_err());
    }

    #[test]
    fn linear2d_refuses_launches_along_z() {
        assert!(Linear2D::<4>::check_launch(8, [2, 2, 1], [4, 4, 1]).is_ok());
        assert!(Linear2D::<4>::check_launch(8, [1, 1, 2], [4, 4, 1]).is_err());
        assert!(Linear2D::<0>::check_launch(8, [1, 1, 1], [1, 1, 1]).is_err());
    }

    #[test]
    fn outside_a_kernel_the_one_thread_gets_the_first_element() {
        let mut data = [1u32, 2, 3];
        let mut region = Region::<u32, Linear1D>::new(&mut data);
        *region.get_mut().unwrap() = 7;
        assert_eq!(region.reborrow().get().copied(), Some(7));
        assert_eq!((region.len(), region.is_empty()), (3, false));
        assert_eq!(data, [7, 2, 3]);
    }
}
