//! Property test of the lowering: random sequences of preloads, releases, updates and launches
//! (of random kernels, argument kinds, constant and run-time sizes, on the default or a given
//! device) always lower to a module that verifies, with exactly one runtime call for each
//! marker as the map types require and no marker left; a marker with a kind the library never
//! emits is an error, never a crash. Bounded: 256 cases (about a second).

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use offload_abi::intrinsics::{arg_kind, preload_kind, update_direction};
use offload_codegen::{Config, Image};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Preload { kind: i64, size: Size },
    Release { kind: i64, size: Size },
    Update { direction: i64, size: Size },
    Launch { kernel: u8, slots: Vec<(i64, Size)> },
}

#[derive(Debug, Clone, Copy)]
enum Size {
    Constant(u16),
    RunTime,
}

fn size() -> impl Strategy<Value = Size> {
    prop_oneof![any::<u16>().prop_map(Size::Constant), Just(Size::RunTime)]
}

fn op() -> impl Strategy<Value = Op> {
    let preload_kinds = prop_oneof![Just(preload_kind::READ), Just(preload_kind::READ_WRITE)];
    let directions =
        prop_oneof![Just(update_direction::FROM_DEVICE), Just(update_direction::TO_DEVICE)];
    let slot_kinds = prop_oneof![
        Just(arg_kind::LITERAL),
        Just(arg_kind::MAP_TO),
        Just(arg_kind::MAP_TO_FROM),
        Just(arg_kind::PRESENT)
    ];
    prop_oneof![
        (preload_kinds.clone(), size()).prop_map(|(kind, size)| Op::Preload { kind, size }),
        (preload_kinds, size()).prop_map(|(kind, size)| Op::Release { kind, size }),
        (directions, size()).prop_map(|(direction, size)| Op::Update { direction, size }),
        (0u8..3, prop::collection::vec((slot_kinds, size()), 0..6))
            .prop_map(|(kernel, slots)| Op::Launch { kernel, slots }),
    ]
}

/// Gives every launch of a kernel the arity of its first launch (one marker declaration per
/// kernel), padding with literal slots or dropping the extra ones.
fn normalise(mut ops: Vec<Op>) -> Vec<Op> {
    let mut arity = std::collections::BTreeMap::new();
    for op in &mut ops {
        if let Op::Launch { kernel, slots } = op {
            let n = *arity.entry(*kernel).or_insert(slots.len());
            slots.resize(n, (arg_kind::LITERAL, Size::Constant(8)));
        }
    }
    ops
}

fn size_operand(size: Size) -> String {
    match size {
        Size::Constant(n) => n.to_string(),
        Size::RunTime => "%n".into(),
    }
}

/// The module: one function running the ops in order, on the default device or on `%dev`.
fn program(ops: &[Op], on_device: bool) -> String {
    let device = if on_device { "%dev" } else { "-1" };
    let mut decls = String::from(
        "declare void @__rust_offload_preload(i64, ptr, i64, i64)\n\
         declare void @__rust_offload_release(i64, ptr, i64, i64)\n\
         declare void @__rust_offload_update(i64, ptr, i64, i64)\n",
    );
    let mut body = String::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Preload { kind, size } | Op::Release { kind, size } => {
                let name = if matches!(op, Op::Preload { .. }) { "preload" } else { "release" };
                body += &format!(
                    "  call void @__rust_offload_{name}(i64 {device}, ptr %p, i64 {}, i64 {kind})\n",
                    size_operand(*size)
                );
            }
            Op::Update { direction, size } => {
                body += &format!(
                    "  call void @__rust_offload_update(i64 {device}, ptr %p, i64 {}, i64 {direction})\n",
                    size_operand(*size)
                );
            }
            Op::Launch { kernel, slots } => {
                let mut operands = format!("i64 {device}, i32 4, i32 32");
                let mut types = String::from("i64, i32, i32");
                for &(kind, size) in slots {
                    let value =
                        if kind == arg_kind::LITERAL { "inttoptr (i64 7 to ptr)" } else { "%p" };
                    operands += &format!(", i64 {kind}, ptr {value}, i64 {}", size_operand(size));
                    types += ", i64, ptr, i64";
                }
                if !decls.contains(&format!("launch.k{kernel}\"(")) {
                    decls +=
                        &format!("declare i32 @\"__rust_offload_launch.k{kernel}\"({types})\n");
                }
                body += &format!(
                    "  %r{i} = call i32 @\"__rust_offload_launch.k{kernel}\"({operands})\n"
                );
            }
        }
    }
    format!("{decls}\ndefine void @f(ptr %p, i64 %n, i64 %dev) {{\nentry:\n{body}  ret void\n}}\n")
}

/// Calls of `callee` in the lowered text (every runtime call passes the location first).
fn calls(ir: &str, callee: &str) -> usize {
    ir.matches(&format!("@{callee}(ptr @.offload.loc")).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_lower_to_valid_ir(ops in prop::collection::vec(op(), 0..24), on_device in any::<bool>(), abi_current in any::<bool>(), split in any::<bool>()) {
        let ops = normalise(ops);
        let text = program(&ops, on_device);
        let cx = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "random.ll");
        let module = cx.create_module_from_ir(buffer).expect("the generated IR parses");
        let config = Config {
            abi: if abi_current { offload_codegen::RuntimeAbi::Current } else { offload_codegen::RuntimeAbi::Llvm19 },
            images: vec![Image { triple: "x86_64-unknown-linux-gnu".into(), bytes: vec![0x7f, b'E', b'L', b'F'] }],
            cuda_ptx: None,
        };
        // Whole program, or one unit and the program's glue linked in (as offload-ld does).
        let report = if split {
            offload_codegen::lower_split(&cx, &module, &config).expect("lowering succeeds").report
        } else {
            offload_codegen::lower(&cx, &module, &config).expect("lowering succeeds")
        };
        module.verify().expect("the lowered module verifies");
        let ir = module.print_to_string().to_string();
        prop_assert!(!ir.contains("call void @__rust_offload_") && !ir.contains("call i32 @\"__rust_offload_launch"));

        let preloads = ops.iter().filter(|o| matches!(o, Op::Preload { .. })).count();
        let releases = ops.iter().filter(|o| matches!(o, Op::Release { .. })).count();
        let updates = ops.iter().filter(|o| matches!(o, Op::Update { .. })).count();
        let launches: Vec<&Op> = ops.iter().filter(|o| matches!(o, Op::Launch { .. })).collect();
        // A launch calls the mappers only when one of its slots is mapped around it.
        let mapped = launches
            .iter()
            .filter(|o| match o {
                Op::Launch { slots, .. } => slots.iter().any(|(k, _)| *k == arg_kind::MAP_TO || *k == arg_kind::MAP_TO_FROM),
                _ => false,
            })
            .count();
        prop_assert_eq!((report.preloads, report.releases, report.updates, report.launches), (preloads, releases, updates, launches.len()));
        // A unit calls the glue's `<name>.offload_rt`, which forwards to the runtime.
        let callee = |name: &str| if split { format!("{name}.offload_rt") } else { name.to_owned() };
        prop_assert_eq!(calls(&ir, &callee("__tgt_target_data_begin_mapper")), preloads + mapped);
        prop_assert_eq!(calls(&ir, &callee("__tgt_target_data_end_mapper")), releases + mapped);
        prop_assert_eq!(calls(&ir, &callee("__tgt_target_data_update_mapper")), updates);
        prop_assert_eq!(calls(&ir, &callee("__tgt_target_kernel")), launches.len());
        // Every kernel launched has its region id and its offload entry, once.
        for kernel in &report.kernels {
            let region_id = if split {
                format!("@__offload_region_id.{kernel} = hidden constant i8 0")
            } else {
                format!("@.{kernel}.region_id = internal constant i8 0")
            };
            prop_assert_eq!(ir.matches(&region_id).count(), 1);
            prop_assert_eq!(ir.matches(&format!("@.offloading.entry.{kernel} = ")).count(), 1);
        }
    }

    #[test]
    fn kinds_the_library_never_emits_are_errors(kind in any::<i64>().prop_filter("not a kind", |k| !(0..=3).contains(k))) {
        let text = format!(
            "declare void @__rust_offload_preload(i64, ptr, i64, i64)\n\
             declare i32 @\"__rust_offload_launch.k\"(i64, i32, i32, i64, ptr, i64)\n\
             define void @f(ptr %p) {{\n  call void @__rust_offload_preload(i64 -1, ptr %p, i64 4, i64 {kind})\n  \
             %r = call i32 @\"__rust_offload_launch.k\"(i64 -1, i32 1, i32 1, i64 {kind}, ptr %p, i64 4)\n  ret void\n}}\n"
        );
        let cx = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "bad.ll");
        let module = cx.create_module_from_ir(buffer).expect("the generated IR parses");
        let error = offload_codegen::lower(&cx, &module, &Config::default()).expect_err("an unknown kind is refused");
        let message = format!("{error:#}");
        prop_assert!(message.contains("unknown"), "{}", message);
    }
}
