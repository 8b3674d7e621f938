//! A program lowered unit by unit (`lower_unit`) and its glue (`glue`), as offload-ld compiles
//! it: what a unit leaves to the glue, and what the glue defines for the units.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use offload_codegen::{Config, Program, Unit};

fn parse<'ctx>(cx: &'ctx Context, ir: &str) -> Module<'ctx> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "unit.ll");
    let module = cx.create_module_from_ir(buffer).expect("the test's IR parses");
    module.set_triple(&inkwell::targets::TargetTriple::create("x86_64-unknown-linux-gnu"));
    module
}

fn glue<'ctx>(cx: &'ctx Context, units: &[&Unit]) -> Module<'ctx> {
    let module = parse(cx, "");
    let program = Program::new(units.iter().copied()).expect("the units agree");
    offload_codegen::glue(cx, &module, &program, &Config::default()).expect("the glue builds");
    module
}

/// The object file of `module`, as offload-ld writes it.
fn object(module: &Module<'_>, name: &str) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!("split-units-{}-{name}.o", std::process::id()));
    offload_codegen::write_object(module, 2, &path).expect("the module compiles");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// A kernel whose region id would start with `.L` (`.Lerp.region_id`, an assembler-local label
/// on ELF, which an object cannot export): unit and glue share `__offload_region_id.Lerp`.
#[test]
fn a_kernel_named_like_a_local_label_links_between_unit_and_glue() {
    let cx = Context::create();
    let unit = parse(
        &cx,
        r#"
        declare i32 @"__rust_offload_launch.Lerp"(i64, i32, i32, i64, ptr, i64)
        define void @f(ptr %p) {
          %r = call i32 @"__rust_offload_launch.Lerp"(i64 -1, i32 4, i32 32, i64 0, ptr inttoptr (i64 7 to ptr), i64 4)
          ret void
        }
        "#,
    );
    let lowered = offload_codegen::lower_unit(&cx, &unit, Default::default()).unwrap();
    assert_eq!(lowered.report.kernels, ["Lerp"]);
    assert!(contains(&object(&unit, "lerp-unit"), "__offload_region_id.Lerp"));
    let glue = glue(&cx, &[&lowered]);
    let ir = glue.print_to_string().to_string();
    assert!(ir.contains("@__offload_region_id.Lerp = hidden constant i8 0"), "{ir}");
    assert!(contains(&object(&glue, "lerp-glue"), "__offload_region_id.Lerp"));
}

/// A function under a runtime function's name that one unit defines is the program's own: the
/// glue forwards another unit's calls to it, and the loader never looks it up in the runtime.
#[test]
fn a_runtime_named_function_of_the_program_is_not_bound_to_the_runtime() {
    let cx = Context::create();
    let library = parse(
        &cx,
        r#"
        define void @__offload_load_runtime(ptr %names, ptr %table, i64 %n, i64 %bytes) {
          ret void
        }
        define i32 @omp_helper() {
          ret i32 1
        }
        "#,
    );
    let user = parse(
        &cx,
        r#"
        declare i32 @omp_helper()
        declare i32 @omp_get_num_devices()
        declare void @omp_by_value(ptr byval([4 x i64]))
        declare i32 @omp_variadic(i32, ...)
        define i32 @user() {
          %a = call i32 @omp_helper()
          %b = call i32 @omp_get_num_devices()
          call void @omp_by_value(ptr byval([4 x i64]) null)
          %c = call i32 (i32, ...) @omp_variadic(i32 1)
          ret i32 %b
        }
        "#,
    );
    let library_unit = offload_codegen::lower_unit(&cx, &library, Default::default()).unwrap();
    let user_unit = offload_codegen::lower_unit(&cx, &user, Default::default()).unwrap();
    assert!(library_unit.defines_loader);
    assert_eq!(library_unit.defines_runtime_named, ["omp_helper"]);
    let called: Vec<&str> = user_unit.runtime.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(called, ["omp_helper", "omp_get_num_devices"]);

    // The unit calls the glue's functions, except those passed in memory or variadic.
    let user_ir = user.print_to_string().to_string();
    assert!(user_ir.contains("call i32 @omp_helper.offload_rt()"), "{user_ir}");
    assert!(user_ir.contains("call i32 @omp_get_num_devices.offload_rt()"), "{user_ir}");
    assert!(user_ir.contains("call void @omp_by_value(ptr byval"), "{user_ir}");
    assert!(user_ir.contains("@omp_variadic(i32 1)"), "{user_ir}");

    let glue = glue(&cx, &[&library_unit, &user_unit]);
    let ir = glue.print_to_string().to_string();
    let helper = ir.split("define hidden i32 @omp_helper.offload_rt()").nth(1).expect(&ir);
    assert!(helper.split('}').next().unwrap().contains("tail call i32 @omp_helper()"), "{ir}");
    let devices =
        ir.split("define hidden i32 @omp_get_num_devices.offload_rt()").nth(1).expect(&ir);
    assert!(devices.split('}').next().unwrap().contains("@.offload_rt.table"), "{ir}");
    assert!(!ir.contains("c\"omp_helper\\00\""), "the loader must not look it up: {ir}");
    assert!(ir.contains("c\"omp_get_num_devices\\00\""), "{ir}");
}

/// Two units that declare one runtime function with different types cannot be glued.
#[test]
fn units_that_disagree_on_a_runtime_function_are_refused() {
    let cx = Context::create();
    let a = parse(
        &cx,
        "declare i32 @omp_f(i32)\ndefine i32 @a() {\n  %r = call i32 @omp_f(i32 1)\n  ret i32 %r\n}\n",
    );
    let b = parse(
        &cx,
        "declare i64 @omp_f(i64)\ndefine i64 @b() {\n  %r = call i64 @omp_f(i64 1)\n  ret i64 %r\n}\n",
    );
    let a = offload_codegen::lower_unit(&cx, &a, Default::default()).unwrap();
    let b = offload_codegen::lower_unit(&cx, &b, Default::default()).unwrap();
    let error = Program::new([&a, &b]).unwrap_err().to_string();
    assert!(error.contains("units declare `omp_f` differently"), "{error}");
}
