//! Where the library's runtime loader is linked in, every call of a runtime function goes
//! through a table the loader fills: the declarations are replaced by internal trampolines, and
//! a constructor of priority 100 (before the registration's 101) hands the loader the names
//! and the table. Other functions are left alone, and without the loader nothing changes.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;

const RUNTIME_USER: &str = r#"
    declare i32 @omp_get_num_devices() nonlazybind
    declare void @__tgt_register_lib(ptr)
    declare ptr @llvm_omp_target_alloc_host(i64, i32)
    declare i32 @atexit(ptr)
    declare void @omp_by_value(ptr byval([4 x i64]))
    define i32 @omp_user_defined() {
      ret i32 0
    }
    define void @user() {
      %n = call i32 @omp_get_num_devices()
      call void @__tgt_register_lib(ptr null)
      %p = call ptr @llvm_omp_target_alloc_host(i64 8, i32 0)
      %a = call i32 @atexit(ptr null)
      %d = call i32 @omp_user_defined()
      call void @omp_by_value(ptr byval([4 x i64]) null)
      ret void
    }
"#;

const LOADER: &str = r#"
    define void @__offload_load_runtime(ptr %names, ptr %table, i64 %n, i64 %bytes) {
      ret void
    }
"#;

fn parse<'ctx>(cx: &'ctx Context, ir: &str) -> Module<'ctx> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test.ll");
    cx.create_module_from_ir(buffer).expect("the test's IR parses")
}

#[test]
fn with_the_loader_runtime_calls_go_through_its_table() {
    let cx = Context::create();
    let module = parse(&cx, &format!("{RUNTIME_USER}{LOADER}"));
    let bound = offload_codegen::bind_runtime_through_table(&module).unwrap();
    module.verify().expect("still valid IR");
    assert_eq!(bound, 3);
    let ir = module.print_to_string().to_string();
    // No runtime symbol is left for the dynamic loader; the others are untouched.
    for name in ["omp_get_num_devices", "__tgt_register_lib", "llvm_omp_target_alloc_host"] {
        assert!(module.get_function(name).is_none(), "{name} is still declared:\n{ir}");
        let trampoline = module.get_function(&format!("{name}.offload_rt")).unwrap();
        assert_eq!(trampoline.get_linkage(), inkwell::module::Linkage::Internal);
        assert!(ir.contains(&format!("c\"{name}\\00\"")), "no name string for {name}:\n{ir}");
    }
    assert!(module.get_function("atexit").is_some());
    // A parameter passed in memory is not forwarded by a trampoline: left to the loader.
    assert!(module.get_function("omp_by_value").is_some());
    assert!(ir.contains("call i32 @omp_user_defined()"), "{ir}");
    assert!(ir.contains("call i32 @omp_get_num_devices.offload_rt()"), "{ir}");
    // Three slots used of a page's 512: the loader makes the page read-only once it is filled.
    assert!(
        ir.contains("@.offload_rt.table = internal global [512 x ptr] zeroinitializer, align 4096"),
        "{ir}"
    );
    assert!(ir.contains("@.offload_rt.names = private unnamed_addr constant [3 x ptr]"), "{ir}");
    assert!(
        ir.contains(
            "call void @__offload_load_runtime(ptr @.offload_rt.names, ptr @.offload_rt.table, i64 3, i64 4096)"
        ),
        "{ir}"
    );
    // The loader's constructor runs first: priority 100.
    assert!(ir.contains("{ i32 100, ptr @.offload_rt.load, ptr null }"), "{ir}");
}

#[test]
fn without_the_loader_nothing_changes() {
    let cx = Context::create();
    let module = parse(&cx, RUNTIME_USER);
    let before = module.print_to_string().to_string();
    assert_eq!(offload_codegen::bind_runtime_through_table(&module).unwrap(), 0);
    assert_eq!(module.print_to_string().to_string(), before);
}
