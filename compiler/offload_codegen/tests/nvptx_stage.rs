//! The device stage over small NVIDIA modules written by hand, as rustc leaves a kernels crate
//! after its fat LTO: what it adds to each kernel, what it removes, and what it refuses. (The
//! ptx suite checks what the whole device build makes of real kernels.)

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use offload_codegen::nvptx::{self, DeviceReport};

const HEADER: &str = r#"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
"#;

/// Runs the device stage over `body` for `kernels`; the report and the module's IR after.
fn lower(body: &str, kernels: &[&str]) -> anyhow::Result<(DeviceReport, String)> {
    let cx = Context::create();
    let ir = format!("{HEADER}{body}");
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "kernels.ll");
    let module = cx.create_module_from_ir(buffer).expect("the test's IR parses");
    let kernels: Vec<String> = kernels.iter().map(|k| k.to_string()).collect();
    let report = nvptx::lower_device(&cx, &module, &kernels)?;
    Ok((report, module.print_to_string().to_string()))
}

fn error(body: &str, kernels: &[&str]) -> String {
    match lower(body, kernels) {
        Ok((report, _)) => panic!("the device stage accepted the module: {report:?}"),
        Err(e) => format!("{e:#}"),
    }
}

/// A kernel reading `%x` and writing `%y` and the block's shared memory.
const SAXPY: &str = r#"
declare ptr @__offload_shared_memory() #0
attributes #0 = { memory(none) }

define ptx_kernel void @saxpy(ptr readnone %dyn, i64 %geometry, i64 %a, ptr readonly %x, i64 %xn, ptr %y, i64 %yn) {
  %base = call ptr @__offload_shared_memory()
  %v = load float, ptr %x
  %w = load float, ptr %y
  %p = fmul float %v, 2.0
  %s = fadd float %p, %w
  store float %s, ptr %y
  store float %s, ptr %base
  ret void
}
"#;

#[test]
fn shared_memory_becomes_the_shared_window() {
    let (_, ir) = lower(SAXPY, &["saxpy"]).unwrap();
    assert!(
        ir.contains("@__offload_shared = external addrspace(3) global [0 x i8], align 1024"),
        "{ir}"
    );
    assert!(
        ir.contains(
            "store float %s, ptr addrspacecast (ptr addrspace(3) @__offload_shared to ptr)"
        ),
        "{ir}"
    );
    assert!(!ir.contains("__offload_shared_memory"), "the call and its declaration stay:\n{ir}");
}

#[test]
fn options_give_launch_bounds_and_contraction() {
    let attrs = r#"
@"__offload_kernel_attrs.saxpy" = constant [20 x i8] c"\00\01\00\00\20\00\00\00\08\00\00\00\01\00\00\00\01\00\00\00", align 4
@llvm.used = appending global [1 x ptr] [ptr @"__offload_kernel_attrs.saxpy"], section "llvm.metadata"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @tid(ptr %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  store i32 %t, ptr %out
  ret void
}
"#;
    let (report, ir) = lower(&format!("{SAXPY}{attrs}"), &["saxpy", "tid"]).unwrap();
    assert_eq!(report.launch_bounds, [("saxpy".to_owned(), 256, [32, 8, 1])]);
    assert_eq!(report.contracted, ["saxpy"]);
    assert!(ir.contains("\"nvvm.maxntid\"=\"32,8,1\""), "{ir}");
    assert!(ir.contains("fmul contract float") && ir.contains("fadd contract float"), "{ir}");
    // Consumed: neither the constant nor its `llvm.used` entry reaches the PTX.
    assert!(!ir.contains("__offload_kernel_attrs") && !ir.contains("llvm.used"), "{ir}");
    // A kernel without options keeps IEEE arithmetic and its registers' full ranges.
    assert!(!ir.contains("range(i32 0, 32)"), "{ir}");
}

#[test]
fn bounds_along_an_axis_range_the_thread_index() {
    let body = r#"
@"__offload_kernel_attrs.tid" = constant [20 x i8] c"\00\01\00\00\20\00\00\00\08\00\00\00\01\00\00\00\00\00\00\00", align 4
@llvm.used = appending global [1 x ptr] [ptr @"__offload_kernel_attrs.tid"], section "llvm.metadata"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()

define ptx_kernel void @tid(ptr %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %s = add i32 %t, %n
  store i32 %s, ptr %out
  ret void
}
"#;
    let (report, ir) = lower(body, &["tid"]).unwrap();
    assert!(report.contracted.is_empty());
    assert!(ir.contains("call range(i32 0, 32) i32 @llvm.nvvm.read.ptx.sreg.tid.x()"), "{ir}");
    assert!(ir.contains("call range(i32 1, 9) i32 @llvm.nvvm.read.ptx.sreg.ntid.y()"), "{ir}");
}

#[test]
fn a_kernel_the_image_lacks_is_an_error() {
    let message = error(SAXPY, &["saxpy", "missing"]);
    assert!(message.contains("the NVIDIA image defines no kernel `missing`"), "{message}");
}

#[test]
fn options_of_no_kernel_are_an_error() {
    let body = format!(
        r#"{SAXPY}
@"__offload_kernel_attrs.gone" = constant [20 x i8] zeroinitializer, align 4
"#
    );
    let message = error(&body, &["saxpy"]);
    assert!(
        message.contains("`__offload_kernel_attrs.gone` names no kernel of the image"),
        "{message}"
    );
}

#[test]
fn malformed_options_are_an_error() {
    let body = format!(
        r#"{SAXPY}
@"__offload_kernel_attrs.saxpy" = constant [3 x i8] zeroinitializer, align 4
"#
    );
    let message = error(&body, &["saxpy"]);
    assert!(message.contains("is not a [u32; 5] constant"), "{message}");
}

#[test]
fn a_defined_shared_memory_function_is_an_error() {
    let body = r#"
define ptr @__offload_shared_memory() {
  ret ptr null
}
"#;
    let message = error(body, &[]);
    assert!(message.contains("only the device stage defines it"), "{message}");
}

#[test]
fn small_loops_that_load_are_unrolled_by_four() {
    let body = r#"
define ptx_kernel void @sum(ptr readonly %x, i64 %n, i64 %stride, ptr %out) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %sum, %loop ]
  %p = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %p
  %sum = fadd float %acc, %v
  %next = add i64 %i, %stride
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  store float %sum, ptr %out
  ret void
}

define ptx_kernel void @fill(ptr %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr float, ptr %out, i64 %i
  store float 1.0, ptr %p
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"#;
    let (report, ir) = lower(body, &["sum", "fill"]).unwrap();
    // The loop that loads; not the one that only stores (LLVM unrolls that by itself).
    assert_eq!(report.unrolled, 1);
    assert!(ir.contains("!{!\"llvm.loop.unroll.count\", i32 4}"), "{ir}");
    assert_eq!(ir.matches("!llvm.loop").count(), 1, "{ir}");
}
