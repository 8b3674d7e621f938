//! Device selection: a preload through `Device::preload_mut` and a `launch!(on device, ...)`
//! pass the chosen device's number to the begin mapper and the kernel launch, where the default
//! launches pass -1; the end mapper gets the number the guard keeps, the one its preload
//! checked (a value, not the default's -1).
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

#[offload::kernel]
pub fn increment(y: &mut [u32]) {
    let _ = y;
}

// CHECK-LABEL: define {{.*}} @launch_on(ptr
// CHECK: [[ID:%.+]] = load i32, ptr %device, align 4
// CHECK-NEXT: [[DEVICE:%.+]] = sext i32 [[ID]] to i64
// CHECK: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 [[DEVICE]], i32 1,
// CHECK: call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 [[DEVICE]], i32 2, i32 128, ptr @.increment.region_id, ptr %kernel_args)
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 %{{[^,]+}}, i32 1,
#[unsafe(no_mangle)]
pub fn launch_on(device: &offload::Device, v: &mut [u32; 256]) -> Result<(), offload::Error> {
    let mut dv = device.preload_mut(&mut v[..])?;
    offload::launch!(on device, increment, 2, 128, (&mut dv,))
}
