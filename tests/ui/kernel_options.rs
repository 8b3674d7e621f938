//! `#[offload::kernel(...)]` takes `launch_bounds = N` or `(X, Y)` / `(X, Y, Z)`, at most 1024
//! threads in all and 64 along z, `min_blocks = N` (1 to 32, with `launch_bounds`) and
//! `fp_contract`, each once: anything else is refused at the option.

#[offload::kernel(launch_bounds = 0)]
//~^ ERROR `launch_bounds` is the most threads a block of this kernel has
pub fn none(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(launch_bounds = (64, 32))]
//~^ ERROR `launch_bounds` is the most threads a block of this kernel has
pub fn too_many(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(launch_bounds = (8, 8, 128))]
//~^ ERROR `launch_bounds` is the most threads a block of this kernel has
pub fn too_deep(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(launch_bounds = BLOCK)]
//~^ ERROR a launch bound is an integer literal
pub fn named(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(fp_contract, fp_contract)]
//~^ ERROR `fp_contract` is given twice
pub fn twice(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(inline)]
//~^ ERROR unknown kernel option
pub fn unknown(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(min_blocks = 2)]
//~^ ERROR `min_blocks` needs `launch_bounds`
pub fn resident(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(launch_bounds = 128, min_blocks = 64)]
//~^ ERROR `min_blocks` is how many blocks of the kernel a multiprocessor should hold at once
pub fn too_resident(y: &mut [f32]) {
    let _ = y;
}

#[offload::kernel(launch_bounds = (32, 8), min_blocks = 2, fp_contract)]
pub fn fine(y: &mut [f32]) {
    let _ = y;
}

const BLOCK: u32 = 256;

fn main() {}
