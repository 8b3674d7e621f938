//! Read-only parameters: each pointer parameter of a kernel that the kernel only reads gets
//! `noalias`, which with `readonly` makes LLVM load it through the read-only data cache
//! (`ld.global.nc`).

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::values::FunctionValue;

/// The pointer parameters of kernel `f` that it only reads (`readonly`, or `readnone`: never
/// accessed). Every pointer parameter of an `#[offload::kernel]` entry is a Rust reference: one
/// the kernel reads alone is either a shared borrow, which nothing writes during the launch, or a
/// mutable one, which no other parameter aliases; either way `noalias` holds.
pub(super) fn read_only_pointers(f: FunctionValue<'_>) -> Vec<u32> {
    let readonly = Attribute::get_named_enum_kind_id("readonly");
    let readnone = Attribute::get_named_enum_kind_id("readnone");
    let noalias = Attribute::get_named_enum_kind_id("noalias");
    (0..f.count_params())
        .filter(|&i| {
            f.get_nth_param(i).is_some_and(|p| p.is_pointer_value())
                && f.get_enum_attribute(AttributeLoc::Param(i), noalias).is_none()
                && f.get_enum_attribute(AttributeLoc::Param(i), readonly)
                    .or_else(|| f.get_enum_attribute(AttributeLoc::Param(i), readnone))
                    .is_some()
        })
        .collect()
}
