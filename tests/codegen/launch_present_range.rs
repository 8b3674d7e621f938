//! A launch on a range of a preloaded slice (`PreloadMut::slice_mut`): the range is present
//! data, so the kernel's map types carry no copy bits (TARGET_PARAM = 32 for the address,
//! LITERAL|IMPLICIT|TARGET_PARAM = 800 for the geometry and the length), no mapper runs around
//! the launch, and the address passed is the range's start inside the preloaded array.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

#[offload::kernel]
pub fn increment(y: &mut [u32]) {
    let _ = y;
}

// CHECK: @.offload_maptypes.increment.kernel = private unnamed_addr constant [3 x i64] [i64 800, i64 32, i64 800]
// CHECK-NOT: @.offload_maptypes.increment.begin

// CHECK-LABEL: define {{.*}} @launch_on_range(ptr
// CHECK: call void @__tgt_target_data_begin_mapper(
// The range starts 100 elements (400 bytes) into the array.
// CHECK: [[START:%.+]] = getelementptr inbounds nuw i8, ptr %v, i64 400
// CHECK-NOT: __tgt_target_data_begin_mapper
// CHECK: store ptr [[START]], ptr
// CHECK-NOT: __tgt_target_data_begin_mapper
// CHECK: call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 -1, i32 2, i32 128, ptr @.increment.region_id, ptr %kernel_args)
// CHECK-NOT: __tgt_target_data_begin_mapper
// CHECK: call void @__tgt_target_data_end_mapper(
#[unsafe(no_mangle)]
pub fn launch_on_range(v: &mut [u32; 1000]) -> Result<(), offload::Error> {
    let mut dv = offload::preload_mut(&mut v[..]);
    offload::launch!(increment, 2, 128, (&mut dv.slice_mut(100..300),))
}
