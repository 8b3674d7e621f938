//! A launch of a `Region` argument: mapped as a `&mut [T]` is, in two slots (the address, TO
//! and FROM around the launch, ALWAYS; the length, a literal), as upstream maps a region like a
//! slice; and its strategy's `check_launch` is asked before the library sees the slots.
//!
//! - the region: begin TO|ALWAYS (5), kernel TARGET_PARAM (32), end FROM|ALWAYS (6);
//! - the geometry and the length: LITERAL|IMPLICIT (768) around, with TARGET_PARAM (800) in the
//!   kernel.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use offload::Region;
use offload::region::Linear1D;

// CHECK: @.offload_maptypes.bump.kernel = private unnamed_addr constant [3 x i64] [i64 800, i64 32, i64 800]
// CHECK: @.offload_maptypes.bump.begin = private unnamed_addr constant [3 x i64] [i64 768, i64 5, i64 768]
// CHECK: @.offload_maptypes.bump.end = private unnamed_addr constant [3 x i64] [i64 768, i64 6, i64 768]

#[offload::kernel]
pub fn bump(mut region: Region<'_, f32, Linear1D>) {
    if let Some(x) = region.get_mut() {
        *x += 1.0;
    }
}

// The strategy is asked, with the region's length and the launch's grid and block, before the
// slots are checked and mapped.
// CHECK-LABEL: define void @launch_region(ptr
// CHECK-NOT: check_mapped_slots
// CHECK: call { ptr, i64 } @{{.*}}Linear1D{{.*}}check_launch(i64 noundef %xs.1,
// CHECK: call void @{{.*}}check_mapped_slots
// CHECK: call void @__tgt_target_data_begin_mapper
// CHECK: call i32 @__tgt_target_kernel
// CHECK: call void @__tgt_target_data_end_mapper
#[unsafe(no_mangle)]
pub fn launch_region(xs: &mut [f32], grid: [u32; 3]) -> Result<(), offload::Error> {
    offload::launch!(bump, grid, [256, 1, 1], (Region::<f32, Linear1D>::new(xs),))
}
