//! Where the library's runtime loader is linked in, the runtime's function declarations become
//! weak and lose `nonlazybind` (they bind through the PLT once the loader has loaded the
//! runtime); everything else is left alone, and without the loader nothing changes.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Linkage;

const RUNTIME_USER: &str = r#"
    declare i32 @omp_get_num_devices() nonlazybind
    declare void @__tgt_register_lib(ptr)
    declare ptr @llvm_omp_target_alloc_host(i64, i32) nonlazybind
    declare i32 @atexit(ptr) nonlazybind
    define i32 @omp_user_defined() {
      ret i32 0
    }
    define void @user() {
      %n = call i32 @omp_get_num_devices()
      call void @__tgt_register_lib(ptr null)
      %p = call ptr @llvm_omp_target_alloc_host(i64 8, i32 0)
      %a = call i32 @atexit(ptr null)
      %d = call i32 @omp_user_defined()
      ret void
    }
"#;

const LOADER: &str = r#"
    define void @__offload_load_runtime() {
      ret void
    }
"#;

/// Runs the pass over `ir` and returns whether it applied, then each named function's
/// (linkage, has nonlazybind).
fn weaken(ir: &str, names: &[&str]) -> (bool, Vec<(Linkage, bool)>) {
    let cx = Context::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test.ll");
    let module = cx.create_module_from_ir(buffer).expect("the test's IR parses");
    let applied = offload_codegen::weaken_runtime_declarations(&module);
    module.verify().expect("still valid IR");
    let kind = Attribute::get_named_enum_kind_id("nonlazybind");
    let states = names
        .iter()
        .map(|n| {
            let f = module.get_function(n).unwrap();
            (f.get_linkage(), f.get_enum_attribute(AttributeLoc::Function, kind).is_some())
        })
        .collect();
    (applied, states)
}

const NAMES: [&str; 5] = [
    "omp_get_num_devices",
    "__tgt_register_lib",
    "llvm_omp_target_alloc_host",
    "atexit",
    "omp_user_defined",
];

#[test]
fn with_the_loader_the_runtime_binds_late() {
    let (applied, states) = weaken(&format!("{RUNTIME_USER}{LOADER}"), &NAMES);
    assert!(applied);
    assert_eq!(
        states,
        [
            (Linkage::ExternalWeak, false),
            (Linkage::ExternalWeak, false),
            (Linkage::ExternalWeak, false),
            // Not the runtime's, and a definition: untouched.
            (Linkage::External, true),
            (Linkage::External, false),
        ]
    );
}

#[test]
fn without_the_loader_nothing_changes() {
    let (applied, states) = weaken(RUNTIME_USER, &NAMES);
    assert!(!applied);
    assert_eq!(
        states,
        [
            (Linkage::External, true),
            (Linkage::External, false),
            (Linkage::External, true),
            (Linkage::External, true),
            (Linkage::External, false),
        ]
    );
}
