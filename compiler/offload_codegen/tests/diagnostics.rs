//! The lowering's diagnostics: a marker call it cannot read fails the lowering with a message
//! that names the marker, what is wrong with it and the function calling it.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use offload_codegen::{Config, Report};

/// Lowers the module `ir` with the default configuration.
fn lower(ir: &str) -> anyhow::Result<Report> {
    let cx = Context::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test.ll");
    let module = cx.create_module_from_ir(buffer).expect("the test's IR parses");
    offload_codegen::lower(&cx, &module, &Config::default())
}

/// The lowering's error message, which the test expects.
fn error(ir: &str) -> String {
    match lower(ir) {
        Ok(report) => panic!("the lowering accepted the module: {report:?}"),
        Err(e) => format!("{e:#}"),
    }
}

fn assert_contains(message: &str, expected: &str) {
    assert!(message.contains(expected), "expected `{expected}` in:\n{message}");
}

#[test]
fn unknown_intrinsic() {
    let message = error(
        r#"
        declare void @__rust_offload_bogus()

        define void @calls_bogus() {
          call void @__rust_offload_bogus()
          ret void
        }
        "#,
    );
    assert_contains(&message, "offload lowering failed");
    assert_contains(&message, "unknown offload intrinsic `__rust_offload_bogus`");
    assert_contains(
        &message,
        "__rust_offload_preload, __rust_offload_release, __rust_offload_update, __rust_offload_launch.<kernel>",
    );
    assert_contains(&message, "in `calls_bogus`");
}

#[test]
fn non_constant_preload_kind() {
    let message = error(
        r#"
        declare void @__rust_offload_preload(i64, ptr, i64, i64)

        define void @preload_any(ptr %p, i64 %kind) {
          call void @__rust_offload_preload(i64 -1, ptr %p, i64 16, i64 %kind)
          ret void
        }
        "#,
    );
    assert_contains(&message, "`__rust_offload_preload`: the kind operand must be a constant");
    assert_contains(&message, "in `preload_any`");
}

#[test]
fn non_constant_launch_slot_kind() {
    let message = error(
        r#"
        declare i32 @__rust_offload_launch.saxpy(i64, i32, i32, i64, ptr, i64)

        define i32 @launch_any(ptr %p, i64 %kind) {
          %rc = call i32 @__rust_offload_launch.saxpy(i64 -1, i32 1, i32 1, i64 %kind, ptr %p, i64 8)
          ret i32 %rc
        }
        "#,
    );
    assert_contains(
        &message,
        "`__rust_offload_launch.saxpy`: the kind of slot 0 operand must be a constant",
    );
    assert_contains(&message, "in `launch_any`");
}

#[test]
fn wrong_preload_operand_count() {
    let message = error(
        r#"
        declare void @__rust_offload_release(i64, ptr, i64)

        define void @short_release(ptr %p) {
          call void @__rust_offload_release(i64 -1, ptr %p, i64 16)
          ret void
        }
        "#,
    );
    assert_contains(
        &message,
        "`__rust_offload_release` takes 4 operands (device, ptr, size, kind), found 3",
    );
    assert_contains(&message, "in `short_release`");
}

#[test]
fn wrong_launch_operand_count() {
    let message = error(
        r#"
        declare i32 @__rust_offload_launch.saxpy(i64, i32, i32, i64, ptr)

        define i32 @half_slot(ptr %p) {
          %rc = call i32 @__rust_offload_launch.saxpy(i64 -1, i32 1, i32 1, i64 1, ptr %p)
          ret i32 %rc
        }
        "#,
    );
    assert_contains(
        &message,
        "`__rust_offload_launch.saxpy` takes (device, grid, block) and then (kind, value, size) triples, found 5 operands",
    );
    assert_contains(&message, "in `half_slot`");
}

#[test]
fn unknown_constant_kind() {
    let message = error(
        r#"
        declare void @__rust_offload_preload(i64, ptr, i64, i64)

        define void @preload_seven(ptr %p) {
          call void @__rust_offload_preload(i64 -1, ptr %p, i64 16, i64 7)
          ret void
        }
        "#,
    );
    assert_contains(&message, "unknown preload kind 7 in `preload_seven`");
}

#[test]
fn every_unreadable_call_is_reported() {
    let message = error(
        r#"
        declare void @__rust_offload_bogus()
        declare void @__rust_offload_preload(i64, ptr, i64, i64)

        define void @first() {
          call void @__rust_offload_bogus()
          ret void
        }

        define void @second(ptr %p, i64 %kind) {
          call void @__rust_offload_preload(i64 -1, ptr %p, i64 16, i64 %kind)
          ret void
        }
        "#,
    );
    assert_contains(&message, "unknown offload intrinsic `__rust_offload_bogus` (");
    assert_contains(&message, ") in `first`");
    assert_contains(&message, "must be a constant (it comes from an associated const) in `second`");
}

#[test]
fn a_module_without_markers_is_left_alone() {
    let report = lower(
        r#"
        define i32 @answer() {
          ret i32 42
        }
        "#,
    )
    .expect("nothing to lower");
    assert_eq!(report, Report::default());
}

#[test]
fn invoked_marker_is_refused() {
    let message = error(
        r#"
        declare void @__rust_offload_preload(i64, ptr, i64, i64)
        declare i32 @__gxx_personality_v0(...)

        define void @preload_invoked(ptr %p) personality ptr @__gxx_personality_v0 {
        entry:
          invoke void @__rust_offload_preload(i64 -1, ptr %p, i64 16, i64 0)
            to label %ok unwind label %cleanup
        ok:
          ret void
        cleanup:
          %lp = landingpad { ptr, i32 } cleanup
          resume { ptr, i32 } %lp
        }
        "#,
    );
    assert_contains(&message, "`__rust_offload_preload` in `preload_invoked` is not a plain call");
}
