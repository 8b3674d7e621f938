//! A launch along x, y and z: the runtime's own launch (libomptarget 19 launches along x) is
//! given the grid's blocks in all and the block's threads in all, and the hidden geometry slot
//! holds the address of the geometry with the top bit set, which the host-offload image reads
//! to loop over x, y and z; the library's GPU launch gets the geometry itself.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

#[offload::kernel]
pub fn fill(y: &mut [u32]) {
    let _ = y;
}

// CHECK-LABEL: define {{.*}} @launch_cube(ptr
// The geometry slot: the address of a copy of the geometry, tagged.
// CHECK: [[AT:%.+]] = ptrtoint ptr [[SHAPE:%.+]] to i64
// CHECK-NEXT: [[TAGGED:%.+]] = or {{(disjoint )?}}i64 [[AT]], -9223372036854775808
// The library is offered the launch with the geometry (28 bytes: grid, block, shared memory).
// CHECK: {{(call|invoke)}} void @{{.*}}launch_sync(ptr {{.*}}, i64 noundef -1, ptr {{.*}}, i64 noundef 4, ptr {{.*}}dereferenceable(28) {{%[^,]+}}, ptr {{.*}}, i64 noundef 2)
// Elsewhere the runtime launches 3 * 5 * 7 = 105 blocks of 8 * 4 * 2 = 64 threads.
// CHECK: call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 -1, i32 105, i32 64, ptr @.fill.region_id, ptr %kernel_args)
#[unsafe(no_mangle)]
pub fn launch_cube(v: &mut [u32]) -> Result<(), offload::Error> {
    offload::launch!(fill, [3, 5, 7], [8, 4, 2], (&mut v[..],))
}
