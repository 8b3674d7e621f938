//! The preload and release markers of kind ALLOCATE (2), which the library uses on a GPU for a
//! launch's plain `&T`/`&mut T` (it copies them itself, on its stream, around the kernel): begin
//! and end mappers of map type 0, device memory alone, no copy either way. Declared here as the
//! library declares them.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use offload::intrinsics::preload_kind;

unsafe extern "C" {
    #[link_name = "__rust_offload_preload"]
    fn preload(device: i64, ptr: *const u8, size: i64, kind: i64);
    #[link_name = "__rust_offload_release"]
    fn release(device: i64, ptr: *const u8, size: i64, kind: i64);
}

// CHECK: @.offload_sizes.allocate.preload.0 = private unnamed_addr constant [1 x i64] [i64 256]
// CHECK: @.offload_maptypes.allocate.preload.0.begin = private unnamed_addr constant [1 x i64] zeroinitializer
// CHECK: @.offload_maptypes.allocate.release.0.end = private unnamed_addr constant [1 x i64] zeroinitializer

// CHECK-LABEL: define void @allocate(ptr
// CHECK: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr {{%[^,]+}}, ptr {{%[^,]+}}, ptr @.offload_sizes.allocate.preload.0, ptr @.offload_maptypes.allocate.preload.0.begin, ptr null, ptr null)
// CHECK-NOT: call void @__tgt_target_data_update_mapper
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr {{%[^,]+}}, ptr {{%[^,]+}}, ptr @.offload_sizes.allocate.release.0, ptr @.offload_maptypes.allocate.release.0.end, ptr null, ptr null)
#[unsafe(no_mangle)]
pub fn allocate(ys: &mut [f32; 64]) {
    let ptr = ys.as_ptr().cast::<u8>();
    // SAFETY: the markers only name the range; the lowering replaces them.
    unsafe {
        preload(-1, ptr, 256, preload_kind::ALLOCATE);
        release(-1, ptr, 256, preload_kind::ALLOCATE);
    }
}
