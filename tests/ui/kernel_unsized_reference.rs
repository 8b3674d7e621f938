//! A slice parameter has a length slot only where the kernel's signature writes `&[T]` out: a
//! type alias naming a slice, or other unsized data, is refused at the parameter with what to
//! write instead (before, the device image's build failed inside the macro's expansion).
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

type Row = [f32];

#[offload::kernel]
pub fn through_alias(
    row: &mut Row,
    //~^ ERROR a kernel's `&T` or `&mut T` parameter must be sized data, or a slice written out as `&[T]`: here `T` is `[f32]`
    text: &str,
    //~^ ERROR here `T` is `str`
    written_out: &[f32],
    one: &mut f32,
) {
    let _ = (row, text, written_out, one);
}

fn main() {}
