//! A kernel is one symbol in the device image, so it cannot be generic over types or
//! constants; lifetime parameters are erased and accepted (with their bounds).

#[offload::kernel]
pub fn scale<T>(y: &mut [T]) {
    //~^ ERROR a kernel cannot be generic over types or constants
    let _ = y;
}

#[offload::kernel]
pub fn fill<'a, const N: usize>(y: &'a mut [f32; N]) {
    //~^ ERROR a kernel cannot be generic over types or constants
    let _ = y;
}

#[offload::kernel]
pub fn bounded<'a>(y: &'a mut [f32])
where
    f32: Copy,
    //~^ ERROR a kernel's `where` clause can only bound lifetimes
{
    let _ = y;
}

#[offload::kernel]
pub fn with_lifetimes<'a, 'b: 'a>(x: &'a [f32], y: &'b mut [f32])
where
    'b: 'a,
{
    let _ = (x, y);
}

fn main() {}
