//! Every alloca the lowering adds stays in the entry block, so a preload inside a loop or in
//! one arm of an `if` never grows the stack: the argument arrays of each site are allocated once,
//! at the top of the function, and filled where the marker was. The mapper calls stay where the
//! markers were (the loop body, the arms), after the entry block, where no alloca follows.
//! (The functions are in symbol order, the order rustc emits them in.)
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

use offload::{preload, preload_mut};

// Which arm's site comes first depends on the optimiser's block order: the checks do not
// pair allocas with sites, only place all eight in the entry block and the calls after it.
// CHECK-LABEL: define void @preload_in_branches(i1
// CHECK-NEXT: start:
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK-NEXT: {{%\.offload_(ptrs|baseptrs)[0-9]*}} = alloca [1 x ptr], align 8
// CHECK: {{^[a-zA-Z0-9_.]+}}:
// CHECK-NOT: = alloca
// CHECK-DAG: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr %.offload_baseptrs{{[0-9]*}}, ptr %.offload_ptrs{{[0-9]*}}, ptr @.offload_sizes.preload_in_branches.preload.0, ptr @.offload_maptypes.preload_in_branches.preload.0.begin, ptr null, ptr null)
// CHECK-DAG: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr %.offload_baseptrs{{[0-9]*}}, ptr %.offload_ptrs{{[0-9]*}}, ptr @.offload_sizes.preload_in_branches.preload.1, ptr @.offload_maptypes.preload_in_branches.preload.1.begin, ptr null, ptr null)
// CHECK-DAG: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr %.offload_baseptrs{{[0-9]*}}, ptr %.offload_ptrs{{[0-9]*}}, ptr @.offload_sizes.preload_in_branches.release.0, ptr @.offload_maptypes.preload_in_branches.release.0.end, ptr null, ptr null)
// CHECK-DAG: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr %.offload_baseptrs{{[0-9]*}}, ptr %.offload_ptrs{{[0-9]*}}, ptr @.offload_sizes.preload_in_branches.release.1, ptr @.offload_maptypes.preload_in_branches.release.1.end, ptr null, ptr null)
// CHECK-NOT: = alloca
// CHECK: {{^}}}
#[unsafe(no_mangle)]
pub fn preload_in_branches(flag: bool, xs: &[f32; 64], ys: &mut [f32; 32]) {
    if flag {
        let x = preload(xs);
        black_box(&x);
    } else {
        let y = preload_mut(ys);
        black_box(&y);
    }
}

// CHECK-LABEL: define void @preload_in_loop(ptr
// CHECK-NEXT: start:
// CHECK-NEXT: [[PTRS_END:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE_END:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[PTRS:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8
// The entry block ends at the first label; no alloca after it.
// CHECK: {{^[a-zA-Z0-9_.]+}}:
// CHECK-NOT: = alloca
// CHECK: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr @.offload_sizes.preload_in_loop.preload.0, ptr @.offload_maptypes.preload_in_loop.preload.0.begin, ptr null, ptr null)
// CHECK-NOT: = alloca
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE_END]], ptr [[PTRS_END]], ptr @.offload_sizes.preload_in_loop.release.0, ptr @.offload_maptypes.preload_in_loop.release.0.end, ptr null, ptr null)
// CHECK-NOT: = alloca
// CHECK: {{^}}}
#[unsafe(no_mangle)]
pub fn preload_in_loop(chunks: &[[f32; 64]]) {
    for chunk in chunks {
        let x = preload(chunk);
        black_box(&x);
    }
}
